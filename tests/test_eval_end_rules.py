"""``eval``/``arena`` end rules: ``--goal-tile N`` (seeds 000 and 003 stop at 2048) and
``--end-on-full-board`` (seed 004's ``end()``: a full board or a 32768 ends the game)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from ai2048 import Game
from ai2048.agents import make_agent
from ai2048.board_io import from_tiles
from ai2048.cli import main
from ai2048.engine.board import count_empty
from ai2048.evaluate import EvalResult, check_end_rules, ends_early, evaluate, game_seeds, play_game
from ai2048.evaluate import local as evaluate_local
from ai2048.evaluate.stream import GameStream


def _strip(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in ("seconds", "index")}


def _full(g: Game) -> bool:
    return int(count_empty(np.uint64(g.board))) == 0


def _first_stop(seed: int, actions: str, rule: Any) -> tuple[int, int, int]:
    """Replay a whole game and return (moves, score, board) at the first board after a move where ``rule`` "
      "holds."""
    g = Game(seed=seed)
    for ch in actions:
        g.step("urdl".index(ch))
        if rule(g):
            break
    return g.moves, g.score, g.board


@pytest.mark.parametrize(("rows", "goal", "full", "expected"), [
    ("2048 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2", 2048, False, True),
    ("4096 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2", 2048, False, True),
    ("1024 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2", 2048, False, False),
    ("2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 4", None, True, True),  # full, a merge remains: seed 004 ends it
    ("2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 4", None, False, False),
    ("2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 0", None, True, False),
    ("32768 0 0 0 / 0 0 0 0 / 0 0 0 0 / 0 0 0 2", None, True, True),  # seed 004's max_number=15
    ("2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 4", 2048, False, False),
])
def test_ends_early__known_boards(rows: str, goal: int | None, full: bool, expected: bool) -> None:
    board = from_tiles([[int(v) for v in row.split()] for row in rows.split("/")])
    assert ends_early(board, goal, full) is expected


@pytest.mark.parametrize(("goal", "full", "error"), [
    (3, False, ValueError), (2, False, ValueError), (65536, False, ValueError), (2048.0, False, TypeError),
    (True, False, TypeError), (None, "yes", TypeError), (None, 1, TypeError),
    (float("nan"), False, TypeError), (float("inf"), False, TypeError), (-2048, False, ValueError),
    (None, float("nan"), TypeError),
])
def test_check_end_rules__bad_values_name_the_problem(goal: Any, full: Any, error: type) -> None:
    with pytest.raises(error, match="goal_tile|end_on_full_board"):
        check_end_rules(goal, full)


def test_play_game__goal_tile_stops_at_the_first_move_that_reaches_it() -> None:
    agent = make_agent("greedy")
    for seed in (1, 2, 3):
        whole = play_game(agent, seed)
        cut = play_game(agent, seed, goal_tile=128)
        moves, score, board = _first_stop(seed, whole["actions"], lambda g: g.max_tile >= 128)
        assert whole["max_tile"] >= 128 and cut["max_tile"] == 128
        assert (cut["moves"], cut["score"], int(cut["final_board"], 16)) == (moves, score, board)
        assert whole["actions"].startswith(cut["actions"]) and len(cut["actions"]) == moves < whole["moves"]


def test_play_game__full_board_ends_at_the_first_full_board() -> None:
    agent = make_agent("random")
    for seed in (4, 5, 6):
        whole = play_game(agent, seed)
        cut = play_game(agent, seed, end_on_full_board=True)
        moves, score, board = _first_stop(seed, whole["actions"], _full)
        assert (cut["moves"], cut["score"], int(cut["final_board"], 16)) == (moves, score, board)
        assert cut["moves"] <= whole["moves"]


def test_evaluate__full_board_rule_reproduces_seed_004s_random_baseline() -> None:
    """INVENTORY (seed 004, computed with the seed's engine over 2000 random-legal games): stopping at
    the first full board cuts the mean length 117.7 -> 81.9 moves and the mean score 1084.5 -> 646.5."""
    full = evaluate("random", games=1000, seed=40, progress=False, end_on_full_board=True)
    whole = evaluate("random", games=1000, seed=40, progress=False)
    s, w = full.summary(), whole.summary()
    moves = np.array([r["moves"] for r in full.records], dtype=float)
    moves_se = moves.std(ddof=1) / math.sqrt(len(moves))
    # our estimate and the seed's (2000 games, about the same spread) both carry sampling error
    assert abs(s["moves_mean"] - 81.9) < 4 * moves_se * math.sqrt(1.5)
    assert abs(s["score_mean"] - 646.5) < 4 * s["score_se"] * math.sqrt(1.5)
    assert abs(w["score_mean"] - 1084.5) < 4 * w["score_se"] * math.sqrt(1.5)
    assert all(int(count_empty(np.uint64(int(r["final_board"], 16)))) == 0 for r in full.records)


# kernel-backed agents play the rules in numba (tests/test_evaluate_fast.py checks every agent)
@pytest.mark.parametrize("agent", ["greedy", "random"])
def test_evaluate__end_rules_give_play_games_records_with_any_workers(agent: str) -> None:
    for workers in (1, 2):
        res = evaluate(agent, games=6, seed=9, workers=workers, progress=False, goal_tile=64,
                       end_on_full_board=True)
        want = [_strip(play_game(make_agent(agent), s, goal_tile=64, end_on_full_board=True))
                for s in game_seeds(9, 6)]
        assert [_strip(r) for r in res.records] == want
        assert (res.goal_tile, res.end_on_full_board) == (64, True)


def test_evaluate__games_in_flight_agents_stop_by_the_same_rule() -> None:
    agent = make_agent("lazyzero-random", rollouts=2, depth=1, games_in_flight=3, seed=0)
    res = evaluate(agent, games=4, seed=3, progress=False, goal_tile=32)
    assert [r["max_tile"] for r in res.records] == [32] * 4
    for r in res.records:
        moves, _, board = _first_stop(r["seed"], r["actions"], lambda g: g.max_tile >= 32)
        assert (moves, board) == (r["moves"], int(r["final_board"], 16))


def test_eval_result__end_rules_round_trip_and_old_files_load(tmp_path) -> None:
    res = evaluate("greedy", games=2, seed=1, progress=False, goal_tile=256)
    assert "stop at 256" in res.format()
    back = EvalResult.load(res.save(tmp_path / "r.json"))
    assert (back.goal_tile, back.end_on_full_board) == (256, False)
    old = json.loads((tmp_path / "r.json").read_text())
    del old["goal_tile"], old["end_on_full_board"]
    (tmp_path / "old.json").write_text(json.dumps(old))
    back = EvalResult.load(tmp_path / "old.json")
    assert (back.goal_tile, back.end_on_full_board) == (None, False)


def test_cli_eval__goal_tile_and_full_board_end_to_end(tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(["eval", "greedy", "--games", "5", "--seed", "2", "--goal-tile", "128", "--no-progress",
                 "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["goal_tile"] == 128 and d["end_on_full_board"] is False
    assert [g["max_tile"] for g in d["games"]] == [128] * 5
    assert "(stop at 128)" in capsys.readouterr().out
    assert main(["eval", "random", "--games", "5", "--end-on-full-board", "--no-progress",
                 "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["end_on_full_board"] is True
    assert all(int(count_empty(np.uint64(int(g["final_board"], 16)))) == 0 for g in d["games"])


@pytest.mark.parametrize(("goal", "problem"), [
    ("3", "3 is not a power of two"), ("2", "2 is not a power of two"), ("65536", "65536 is not a power"),
    ("0", "0 is not a power"), ("-4", "-4 is not a power"), ("nan", "'nan' is not a whole number"),
    ("inf", "'inf' is not a whole number"), ("2048.0", "'2048.0' is not a whole number"),
    ("2e3", "'2e3' is not a whole number"), ("", "'' is not a whole number"),
    ("0x800", "'0x800' is not a whole number"),
])
@pytest.mark.parametrize("command", ["eval", "arena"])
def test_cli__bad_goal_tile_is_refused_before_any_game(command: str, goal: str, problem: str, tmp_path,
                                                       capsys) -> None:
    """Refused while the command line is read: the agent (a run directory that does not exist) is
    never built, no game is played and no --out file is written."""
    out = tmp_path / "r.json"
    with pytest.raises(SystemExit) as info:
        main([command, str(tmp_path / "no-such-run"), "--games", "1", f"--goal-tile={goal}", "--no-progress",
              "--out", str(out)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --goal-tile: {problem}" in err
    assert "power of two in 4..32768" in err and "such as 2048" in err and "leave --goal-tile out" in err
    assert "no-such-run" not in err and not out.exists() and not list(tmp_path.iterdir())


_CLI = [sys.executable, "-c", "import sys; from ai2048.cli import main; sys.exit(main())"]


BAD_END_RULES = [
    (["--goal-tile", "nan"], "'nan' is not a whole number"),
    (["--goal-tile", "1000"], "1000 is not a power of two in 4..32768"),
    (["--end-on-full-board=yes"], "--end-on-full-board: ignored explicit argument"),
]


def test_cli_eval__bad_end_rules_end_to_end_in_a_process(tmp_path) -> None:
    """The command in its own process exits 2 with the message on stderr, before any work (one process:
    the exit path is the same for every bad value, which the table below checks in this process)."""
    extra, problem = BAD_END_RULES[0]
    proc = subprocess.run([*_CLI, "eval", "greedy", "--games", "1000000",
                           "--no-progress", "--out", str(tmp_path / "r.json"), *extra],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert problem in proc.stderr and proc.stdout == ""
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("extra", "problem"), BAD_END_RULES)
def test_cli_eval__bad_end_rules_exit_2_before_any_work(extra: list[str], problem: str, tmp_path,
                                                        capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["eval", "greedy", "--games", "1000000", "--no-progress", "--out", str(tmp_path / "r.json"),
              *extra])
    assert info.value.code == 2
    out, err = capsys.readouterr()
    assert problem in err and out == "" and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_cli_eval__goal_tile_accepts_spaces_and_keeps_the_kernel(tmp_path, monkeypatch) -> None:
    """A valid value in any spacing is the tile; the greedy agent still plays in numba with it."""
    out = tmp_path / "r.json"
    with monkeypatch.context() as mp:
        mp.setattr(evaluate_local, "play", _forbidden)  # every one-game-at-a-time path plays with it
        assert main(["eval", "greedy", "--games", "3", "--goal-tile", " 64 ", "--end-on-full-board",
                     "--no-progress", "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    assert (d["goal_tile"], d["end_on_full_board"]) == (64, True)
    want = [_strip(play_game(make_agent("greedy"), s, goal_tile=64, end_on_full_board=True))
            for s in game_seeds(0, 3)]
    assert [_strip(g) for g in d["games"]] == want


def _forbidden(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the Python loop played a kernel-backed agent")


def test_cli_arena__end_rules_apply_to_every_agent(tmp_path, capsys) -> None:
    out = tmp_path / "a.json"
    assert main(["arena", "greedy", "random", "--games", "4", "--goal-tile", "64", "--no-progress",
                 "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    for r in d["results"]:
        assert r["goal_tile"] == 64
        assert all(g["max_tile"] <= 64 for g in r["games"])


def test_cli_eval__resume_refuses_other_end_rules(tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    header = {"agent": "greedy", "config": {}, "seed": 0, "p_two": 0.9, "max_moves": None,
              "games_requested": 3, "goal_tile": None, "end_on_full_board": False}
    stream = GameStream(tmp_path / "r.games.jsonl", header)
    stream.open({})
    stream.close()
    code = main(["eval", "greedy", "--games", "3", "--goal-tile", "64", "--out", str(out), "--resume",
                 "--no-progress"])
    assert code == 2 and "goal_tile: file None, now 64" in capsys.readouterr().err
    # a header from before the end rules existed means the standard rules
    old = GameStream(tmp_path / "o.games.jsonl", {"agent": "greedy", "config": {}, "seed": 0, "p_two": 0.9,
                                                  "max_moves": None, "games_requested": 3})
    old.open({})
    old.close()
    # ... and the rules of version 0 (two 32768s did not merge): resumed under them, not mixed with 1
    assert main(["eval", "greedy", "--games", "3", "--out", str(tmp_path / "o.json"), "--resume",
                 "--no-progress"]) == 2
    assert "rules_version: file 0, now 1" in capsys.readouterr().err
    assert main(["eval", "greedy", "--games", "3", "--out", str(tmp_path / "o.json"), "--resume",
                 "--no-progress", "--rules", "0"]) == 0
