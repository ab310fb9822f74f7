"""The terminal game: keys move, undo and hint through a headless textual pilot."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("textual", reason="textual comes with the 'ui' extra: pip install 'ai2048[ui]'")

import _ui_test_agents  # noqa: F401  (registers ui-test-greedy)
from ai2048 import Action, Game, move
from ai2048.records import GameRecord
from ai2048.ui.session import PlaySession, format_value
from ai2048.ui.terminal import board_text, make_play_app

# seed 10 starts with UP illegal, RIGHT/DOWN/LEFT legal
SEED = 10


def run_keys(session: PlaySession, keys: list[str], on_end=None):
    app = make_play_app(session, on_game_end=on_end)

    async def drive():
        async with app.run_test(size=(80, 30)) as pilot:
            for k in keys:
                await pilot.press(k)
            await pilot.pause()
            return str(app.query_one("#hint").render()), str(app.query_one("#message").render())

    return asyncio.run(drive())


@pytest.mark.parametrize(
    "keys",
    [["left", "down", "right", "up", "left"], ["a", "s", "d", "w", "a"], ["h", "j", "l", "k", "h"]],
    ids=["arrows", "wasd", "hjkl"],
)
def test_play_app__keys_move(keys: list[str]) -> None:
    s = PlaySession(seed=SEED, agent="ui-test-greedy")
    run_keys(s, keys)
    g = Game(seed=SEED)
    for a in (Action.LEFT, Action.DOWN, Action.RIGHT, Action.UP, Action.LEFT):
        if a in g.legal_actions():
            g.step(a)
    assert g.moves >= 3
    assert (s.board, s.score, s.moves) == (g.board, g.score, g.moves)


def test_play_app__illegal_key_says_so_and_changes_nothing() -> None:
    s = PlaySession(seed=SEED, agent="ui-test-greedy")
    start = s.board
    for key in ("up", "w", "k"):
        _, msg = run_keys(s, [key])
        assert "up does not move any tile" in msg
    assert s.board == start and s.moves == 0


def test_play_app__undo_restores_previous_board() -> None:
    s = PlaySession(seed=SEED, agent="ui-test-greedy")
    g = Game(seed=SEED)
    g.step(Action.LEFT)
    run_keys(s, ["left", "down", "u"])
    assert (s.board, s.score, s.moves) == (g.board, g.score, 1)
    _, msg = run_keys(s, ["u", "u"])
    assert s.moves == 0 and "nothing to undo" in msg


def test_play_app__hint_shows_agent_move_and_values() -> None:
    s = PlaySession(seed=SEED, agent="ui-test-greedy", agent_config={"bonus": 0.5})
    hint, _ = run_keys(s, ["i"])
    assert "ui-test-greedy" in hint
    assert "up" not in hint.split("(")[1]  # illegal moves get no value
    for a in (Action.RIGHT, Action.DOWN, Action.LEFT):
        assert f"{a.name.lower()} {format_value(move(s.board, a)[1] + 0.5)}" in hint
    assert s.moves == 0


def test_play_app__space_plays_the_agent_move_and_new_game_saves() -> None:
    s = PlaySession(seed=SEED, agent="ui-test-greedy")
    saved: list[GameRecord] = []

    def on_end(sess: PlaySession) -> str:
        saved.append(sess.record("play"))
        return "saved"

    run_keys(s, ["space", "space", "n"], on_end)
    assert s.moves == 0 and s.seed != SEED
    assert len(saved) == 1 and saved[0].moves == 2 and saved[0].agent == "ui-test-greedy"
    assert saved[0].replay().scores[-1] == saved[0].final_score


def test_play_app__game_over_writes_record_once() -> None:
    s = PlaySession(seed=SEED, agent="ui-test-greedy")
    while True:
        s.ai_move()
        if s.is_over:
            break
    s.undo()
    saved: list[GameRecord] = []
    last = s.hint().action.name.lower()
    def on_end(sess: PlaySession) -> str:
        saved.append(sess.record("play"))
        return "record saved"

    _, msg = run_keys(s, [last], on_end)
    assert s.is_over and "game over" in msg and "record saved" in msg
    assert len(saved) == 1 and saved[0].moves == s.moves
    run_keys(s, ["left", "q"], on_end)
    assert len(saved) == 1


def test_board_text__shows_tiles_in_rows() -> None:
    from ai2048 import from_tiles

    text = board_text(from_tiles([2, 0, 0, 2048] + [0] * 11 + [32768])).plain
    rows = [line for line in text.splitlines() if line.strip()]
    assert rows[0].split() == ["2", "2048"]
    assert rows[-1].split() == ["32768"]


def test_format_value__readable_numbers() -> None:
    assert [format_value(v) for v in (1585010.4, 4.5, -0.123456, None)] == [
        "1,585,010",
        "4.5",
        "-0.1235",
        "-",
    ]


# rules version 1: tiles past 32768, shown with their exact values
PAIR_32768 = [32768, 32768, 0, 0, 2] + [0] * 11  # LEFT merges the two into a 65536 (+65536)
FORCED = [65536, 65536, 16384, 2, 2, 4, 8, 16, 4, 8, 16, 32, 8, 16, 32, 64]
"""Full board: only the two 65536s merge, and beside a 16384 they are not shown to agents as 16384s, so
the view has no move and the game plays RIGHT unasked (Game.to_play)."""


def _at(tiles: list[int], agent: str = "ui-test-greedy") -> PlaySession:
    from ai2048.board_io import exact_from_tiles

    s = PlaySession(seed=SEED, agent=agent)
    s.start_at(*exact_from_tiles(tiles))
    return s


def test_board_text__shows_65536_and_131072_exactly_in_their_colours() -> None:
    from ai2048.board_io import exact_from_tiles
    from ai2048.ui.colors import tile_colors

    board, supers = exact_from_tiles([131072, 65536, 32768, 2] + [0] * 12)
    text = board_text(board, supers)
    rows = [line for line in text.plain.splitlines() if line.strip()]
    assert rows[0].split() == ["131072", "65536", "32768", "2"]
    styles = {str(span.style) for span in text.spans}
    for e in (15, 16, 17):
        assert f"bold {tile_colors(e)[1]} on {tile_colors(e)[0]}" in styles
    assert len({tile_colors(e)[0] for e in (15, 16, 17)}) == 3  # three tiles, three colours
    assert board_text(board).plain.split()[:3] == ["32768"] * 3  # the board's nibbles alone: 15s


def test_play_app__two_32768s_merge_on_a_key_into_65536() -> None:
    s = _at(PAIR_32768)
    app = make_play_app(s)

    async def drive():
        async with app.run_test(size=(80, 30)) as pilot:
            await pilot.press("left")
            await pilot.pause()
            return str(app.query_one("#board").render()), str(app.query_one("#status").render())

    board, status = asyncio.run(drive())
    assert (s.score, s.moves, s.max_tile) == (65536, 1, 65536)
    assert s.state()["board"][0][0] == 65536
    assert "65536" in board.split("\n")[2] and "best 65536" in " ".join(status.split())


def test_session__hint_plays_the_view_and_the_forced_move() -> None:
    s = _at([65536, 65536, 0, 0, 2] + [0] * 11)
    hint = s.hint()  # the two 65536s shown as 16384s: merging them is worth 32768 to the greedy agent
    assert hint.values == {"right": 32768.0, "down": 0.0, "left": 32768.0}
    s = _at(FORCED)
    hint = s.hint()
    assert hint.action == Action.RIGHT and hint.values == {}
    s.ai_move()
    assert (s.score, s.max_tile) == (131072, 131072) and s.state()["board"][0][1:] == [131072, 16384, 2]


def test_session__start_at_checks_the_position_and_leaves_no_record() -> None:
    s = _at(PAIR_32768)
    with pytest.raises(ValueError, match="started at a given position"):
        s.record("play")
    s.move("left")
    with pytest.raises(ValueError, match="this one has 1 moves: start a new game first"):
        s.start_at(0x1)
    s.new_game(seed=SEED)
    with pytest.raises(ValueError, match="supers records a 65536 at cell 0 .* but the board holds nothing"):
        s.start_at(0x20, 1)
    assert s.record("play").moves == 0  # a new game is the replay of its seed again
