"""The text env ``ai2048/TextGame2048-v0`` and its answer reader: the Gymnasium contract, the answers read
and refused (a table), the invalid-answer rule, the text = the engine's board, same seed same game."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import ai2048
from ai2048.board_io import exact_encode, exact_from_tiles, exact_tiles, render_text, to_tiles
from ai2048.envs import ENV_ID, TEXT_ENV_ID, TEXT_ENV_IDS
from ai2048.envs.text import board_grid, board_text, describe, describe_board
from ai2048.envs.text_actions import AnswerError, parse_move
from ai2048.rules import ACTION_NAMES, Action

ROW_2222 = ai2048.encode([1, 1, 1, 1] + [0] * 12)  # the top row: only up changes nothing


def make(**kw):
    return gym.make(TEXT_ENV_ID, **kw).unwrapped


@pytest.mark.parametrize("obs_format", ["text", "json"])
def test_text_env__passes_check_env(obs_format):
    check_env(make(obs_format=obs_format, render_mode="ansi"), skip_render_check=False)


U, R, D, L = Action.UP, Action.RIGHT, Action.DOWN, Action.LEFT


@pytest.mark.parametrize(("answer", "move"), [
    ("up", U), ("LEFT", L), ("Right", R), ("d", D), ("  down.\n", D), ("**Left**", L), ("'up'", U),
    ("`right`", R), ("[down]", D), ("up!", U), ("←", L), ("⬆️", U), ("ＵＰ", U), ("le\u200bft", L),
    ("Move: up", U), ("move: L", L), ("MOVE = down", D), ("Action: RIGHT", R), ("final answer: left", L),
    ("I will move up", U), ("The answer is: **down**", D), ("move right", R),
    ("Left is blocked, so up is tempting. Move: left, no wait: Move: down", D),
    ("Thinking about it...\nmerging the 4s matters.\n\nright", R),
    ("<think>left or up?</think><answer>up</answer>", U), ("<move> left </move>", L),
    ('{"move": "up"}', U), ('{"action": "LEFT"}', L), ('{"direction": "d"}', D),
    ('```json\n{"move": "right"}\n```', R),
    ('{"name": "move", "arguments": {"direction": "down"}}', D),
    ('{"name": "move", "arguments": "{\\"direction\\": \\"left\\"}"}', L),
    ('{"type": "function", "function": {"name": "move", "arguments": {"move": "up"}}}', U),
])
def test_parse_move__reads_the_ways_models_write_a_move(answer, move):
    assert parse_move(answer) is move


@pytest.mark.parametrize(("answer", "why"), [
    ("", "no move found"), ("jump", "no move found"), ("upward", "no move found"), ("remove up", "no move"),
    ("u\u0440", "no move found"),  # Cyrillic er, a homoglyph of p
    ("up\x00", "control character U+0000"), ("\x1b[2Jup", "control character U+001B"),
    ("up\ud800", "lone surrogate U+D800"), ("x" * 4097, "4097 characters long; at most 4096"),
    ('{"move": 0}', "names no move"), ('{"move": "jump"}', "names no move"),
    ('{"name": "move"}', "names no move"),
    ("[" * 2000 + "]" * 2000, "no move found"), ("{" * 3000, "no move found"),
])
def test_parse_move__refuses_with_a_reason(answer, why):
    with pytest.raises(AnswerError, match=re.escape(why)):
        parse_move(answer)


@pytest.mark.parametrize("answer", [b"up", 0, None, Action.UP])
def test_parse_move__non_text_is_a_type_error(answer):
    with pytest.raises(TypeError, match="must be text"):
        parse_move(answer)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_parse_move__any_text_gives_a_move_or_an_answer_error(text):
    try:
        assert parse_move(text) in Action
    except AnswerError as e:
        assert str(e).isascii()  # the message quotes the answer with escapes: safe in any log or prompt


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(list(Action)), st.sampled_from(["{}", "{}.", " {} ", "Move: {}", "**{}**", '"{}"']),
       st.booleans(), st.booleans())
def test_parse_move__wrapped_names_and_letters_in_any_case(action, wrap, letter, upper):
    word = ACTION_NAMES[action][0] if letter else ACTION_NAMES[action]
    assert parse_move(wrap.format(word.upper() if upper else word)) is action


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_board_text__is_render_text_and_grid_is_to_tiles(cells):
    board = ai2048.encode(cells)
    assert board_text(board, max(cells)) == render_text(board)
    assert board_grid(board) == to_tiles(board).tolist()


def test_reset__text_and_json_observations_describe_the_board():
    env = make()
    obs, info = env.reset(seed=5, options={"board": ROW_2222})
    assert obs == describe(ROW_2222, 1, 0, 0, 0b1110)
    assert obs.splitlines()[1] == "   2    2    2    2" and obs.endswith("legal moves: right, down, left")
    assert info["legal_moves"] == ("right", "down", "left")
    assert info["invalid"] is None and info["invalid_count"] == 0
    obs, info = make(obs_format="json").reset(seed=5, options={"board": ROW_2222})
    state = json.loads(obs)
    assert state == {"board": to_tiles(ROW_2222).tolist(), "score": 0, "moves": 0, "max_tile": 2,
                     "legal_moves": ["right", "down", "left"]}


def test_step__plays_the_same_game_as_the_gymnasium_env():
    text, plain = make(), gym.make(ENV_ID).unwrapped
    _, ti = text.reset(seed=11)
    _, pi = plain.reset(seed=11)
    phrasing = ["{}", "Move: {}", '{{"move": "{}"}}', "**{}**"]
    for i in range(400):
        a = int(np.flatnonzero(pi["action_mask"])[i % int(pi["action_mask"].sum())])
        tobs, tr, tterm, _, ti = text.step(phrasing[i % 4].format(ACTION_NAMES[a]))
        _, pr, pterm, _, pi = plain.step(a)
        assert (ti["board"], ti["score"], tr, tterm) == (pi["board"], pi["score"], pr, pterm)
        assert ti["move"] == ACTION_NAMES[a]
        assert tobs.startswith(f"score {pi['score']}  moves {pi['moves']}\n")
        if pterm:
            assert ti["ended_by"] == "game_over" and "none (game over)" in tobs
            break
    else:
        pytest.fail("the game did not end in 400 moves")


def _invalid_run(env, answers):
    env.reset(seed=0, options={"board": ROW_2222})
    return [env.step(a) for a in answers]


def test_invalid__default_allows_three_in_a_row_and_the_fourth_ends():
    steps = _invalid_run(make(), ["jump", "up", "Move: up", "???"])
    assert [s[2] for s in steps] == [False, False, False, True]
    assert [s[4]["invalid_count"] for s in steps] == [1, 2, 3, 4]
    assert [s[4]["invalid_kind"] for s in steps] == ["unparsable", "illegal", "illegal", "unparsable"]
    assert all(s[4]["board"] == ROW_2222 and s[4]["moves"] == 0 and s[1] == 0.0 for s in steps)
    assert steps[1][4]["illegal"]
    assert steps[1][4]["invalid"] == "up does not move any tile; legal moves: right, down, left"
    assert "Try again (3 more invalid answers end the game)" in steps[0][0]
    assert "(1 more invalid answer ends the game)" in steps[2][0]
    assert steps[3][4]["ended_by"] == "invalid" and "too many invalid answers" in steps[3][0]


def test_invalid__a_valid_move_resets_the_count():
    steps = _invalid_run(make(max_invalid=1), ["jump", "left", "jump", "x"])
    assert [s[4]["invalid_count"] for s in steps] == [1, 0, 1, 2]
    assert [s[2] for s in steps] == [False, False, False, True]


def test_invalid__end_at_first_and_penalty_without_end():
    (obs, r, term, _, info), = _invalid_run(make(max_invalid=0, invalid_penalty=2), ["up"])
    assert term and r == -2.0 and info["ended_by"] == "invalid"
    steps = _invalid_run(make(max_invalid=None, invalid_penalty=0.5), ["nope"] * 50)
    assert not any(s[2] for s in steps) and {s[1] for s in steps} == {-0.5}
    assert steps[-1][0].endswith("Try again.") and steps[-1][4]["invalid_count"] == 50


def test_invalid__non_text_action_is_a_type_error_and_changes_nothing():
    env = make()
    env.reset(seed=0, options={"board": ROW_2222})
    with pytest.raises(TypeError, match="must be text"):
        env.step(3)
    assert env.invalid_count == 0 and env.board == ROW_2222


def test_seeds__same_seed_same_text_episode():
    def run(seed):
        env = make()
        obs, info = env.reset(seed=seed)
        out = [obs]
        for i in range(60):
            legal = info["legal_moves"]
            obs, _, done, _, info = env.step(legal[i % len(legal)])
            out.append(obs)
            if done:
                break
        return out

    assert run(3) == run(3) and run(3) != run(4)


@pytest.mark.parametrize(("kw", "match"), [
    ({"obs_mode": "onehot"}, "not options of the text env"), ({"illegal_action": "raise"}, "not options"),
    ({"obs_format": "xml"}, "obs_format='xml' is not one of text, json"),
    ({"max_invalid": -1}, "max_invalid=-1 must be"), ({"max_invalid": 1.5}, "max_invalid=1.5 must be"),
    ({"invalid_penalty": float("nan")}, "invalid_penalty=nan must be a finite number >= 0"),
    ({"invalid_penalty": -1}, "invalid_penalty=-1 must be"), ({"max_chars": 0}, "max_chars=0 must be"),
    ({"p_two": 2.0}, r"p_two=2.0 must be a finite number in \[0, 1\]"),
])
def test_options__bad_values_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        make(**kw)


def test_options__game_options_pass_to_the_engine():
    env = make(goal_tile=4, reward_mode="moves")
    env.reset(seed=0, options={"board": ROW_2222})
    _, r, term, _, info = env.step("left")
    assert r == 1.0 and term and info["ended_by"] == "end_rule" and info["max_tile"] == 4


def test_docs__the_text_env_and_model_examples_run(capsys):
    """docs/llm.md's text env example, and its OpenAI-compatible loop with a stand-in client that answers
    the first legal move the way a chat model would (no network)."""
    from types import SimpleNamespace

    from test_api_docs import ROOT, _python_blocks

    blocks = _python_blocks((ROOT / "docs" / "llm.md").read_text())
    env_block = next(b for b in blocks if 'env.step("Move: left")' in b)
    model_block = next(b for b in blocks if "def play_with_model" in b)
    namespace: dict = {}
    exec(compile(env_block, "docs/llm.md", "exec"), namespace)
    assert namespace["info"]["invalid"].startswith("no move found in 'jump'")
    assert "legal moves: " in capsys.readouterr().out

    asked = []

    class Completions:
        def create(self, model, messages):
            asked.append((model, messages))
            legal = messages[-1]["content"].split("legal moves: ")[1].split("\n")[0].split(", ")
            return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(
                content=f"Let me think. Merging pays.\nFinal answer: **{legal[0]}**"))])

    client = SimpleNamespace(chat=SimpleNamespace(completions=Completions()))
    exec(compile(model_block, "docs/llm.md", "exec"), namespace)
    score, max_tile, ended_by = namespace["play_with_model"](client, "stand-in", seed=4)
    assert ended_by == "game_over" and score > 0 and max_tile >= 64
    assert asked[0][0] == "stand-in" and asked[0][1][0]["content"] == namespace["INSTRUCTIONS"]


def test_reset__a_grid_is_tile_values_as_every_observation_shows_them():
    """The board an observation shows resets to the same position (it was read as exponents)."""
    env = make(obs_format="json")
    obs, _ = env.reset(seed=7)
    for _ in range(5):
        obs, *_ = env.step(json.loads(obs)["legal_moves"][0])
    shown = json.loads(obs)["board"]
    again, info = make(obs_format="json").reset(seed=0, options={"board": shown})
    assert json.loads(again)["board"] == shown and info["board"] == env.board
    flat = [v for row in shown for v in row]
    assert make().reset(options={"board": flat})[1]["board"] == env.board
    assert make().reset(options={"board": env.board})[1]["board"] == env.board  # a packed board: as is


@pytest.mark.parametrize(("grid", "match"), [
    ([[3, 0, 0, 0]] + [[0] * 4] * 3,
     r"tile value 3 at cell 0 \(row 0, column 0\) is not a power of two.*grid as tile values"),
    ([[1, 1, 0, 0]] + [[0] * 4] * 3, "tile value 1 at cell 0 .* is not a power of two"),
    ([[262144, 0, 0, 0]] + [[0] * 4] * 3, "tile value 262144 at cell 0"),
    ([[2, 0, 0]] * 4, "16 entries or shape"),
])
def test_reset__a_grid_that_is_not_tile_values_is_refused(grid, match):
    with pytest.raises(ValueError, match=match):
        make().reset(options={"board": grid})


def test_reset__a_board_with_no_legal_move_ends_the_episode_at_once():
    stuck = [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]]
    env = make(max_invalid=0, invalid_penalty=5.0)
    obs, info = env.reset(options={"board": stuck})
    assert info["ended_by"] == "game_over" and not info["legal_moves"] and "Game over" in obs
    obs, reward, terminated, truncated, info = env.step("left")
    assert (reward, terminated, truncated, info["ended_by"]) == (0.0, True, False, "game_over")
    assert info["invalid_count"] == 0 and info["board"] == ai2048.from_tiles(stuck)


# --- rules version 1: tiles past 32768 (65536, 131072) -------------------------------------------------


def test_text_env__reads_and_shows_tiles_up_to_131072_and_merges_them():
    env = make()
    grid = [[65536, 65536, 0, 0], [32768, 0, 0, 0], [0] * 4, [0] * 4]
    obs, info = env.reset(seed=2, options={"board": grid})
    b, s = exact_from_tiles(grid)
    assert (info["board"], info["supers"], info["max_tile"]) == (b, s, 65536)
    assert obs.splitlines()[1:3] == ["65536 65536     .     .", "32768     .     .     ."]
    assert obs.splitlines()[1:5] == render_text(b, s).splitlines()
    obs, r, term, _, info = env.step("Move: left")
    assert r == 131072 and not term and info["max_tile"] == 131072
    assert obs.splitlines()[1].split()[0] == "131072"
    state = json.loads(make(obs_format="json").reset(options={"board": grid})[0])
    assert state["board"] == exact_tiles(b, s).tolist() and state["max_tile"] == 65536


def test_text_env__packed_board_with_supers_and_the_capped_id():
    b, s = exact_from_tiles([32768, 32768] + [0] * 14)
    obs, info = make().reset(options={"board": b, "supers": s})
    assert "left" in info["legal_moves"]
    assert gym.make(TEXT_ENV_IDS[0]).unwrapped.options.rules == 0 and TEXT_ENV_ID.endswith("-v1")
    capped = gym.make(TEXT_ENV_IDS[0]).unwrapped
    _, info = capped.reset(options={"board": b})
    assert "left" not in info["legal_moves"] and info.get("capped") is True
    with pytest.raises(ValueError, match="rules version 0"):
        capped.reset(options={"board": [[65536, 0, 0, 0]] + [[0] * 4] * 3})


@pytest.mark.parametrize(
    "grid, match",
    [
        ([262144] + [0] * 15,
         r"tile value 262144 at cell 0 \(row 0, column 0\) is not a power of two in 2..131072"),
        ([131072, 131072] + [0] * 14, r"second 131072 at cell 1 \(row 0, column 1\)"),
        ([3] + [0] * 15, "tile value 3 at cell 0"),
    ],
)
def test_text_env__bad_tile_grids_name_the_cell(grid, match):
    env = make()
    with pytest.raises(ValueError, match=match):
        env.reset(options={"board": grid})


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2, 13, 14, 15, 16, 17]), min_size=16, max_size=16).filter(
    lambda c: c.count(17) <= 1))
def test_board_text__is_render_text_on_exact_positions(cells):
    b, s = exact_encode(cells)
    assert board_text(b, max(cells), s) == render_text(b, s)
    assert board_grid(b, s) == exact_tiles(b, s).tolist()
    assert describe_board(b, supers=s).splitlines()[1:5] == render_text(b, s).splitlines()
