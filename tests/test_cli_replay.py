"""``ai2048 replay``: terminal replay, GIF and MP4 rendering, eval results, and clear errors."""

from __future__ import annotations

import json

import pytest

from ai2048.cli import main
from ai2048.records import GameRecord, record_game

pytest.importorskip("PIL", reason="Pillow comes with the 'plot' extra")


def cycle(board: int) -> int:
    from ai2048 import Game

    return int(Game(board=board).legal_actions()[-1])


@pytest.fixture(scope="module")
def rec_path(tmp_path_factory):
    rec = record_game(cycle, seed=5, max_moves=30, agent_name="last-legal")
    return rec.save(tmp_path_factory.mktemp("rec") / "game.json")


def test_replay__terminal_prints_final_board_and_checks(rec_path, capsys) -> None:
    rec = GameRecord.load(rec_path)
    assert main(["replay", str(rec_path), "--delay", "0"]) == 0
    out = capsys.readouterr().out
    assert f"replayed 30 moves: score {rec.final_score}, max tile {rec.max_tile}" in out
    assert str(rec.max_tile) in out


def test_replay__gif_has_one_frame_per_move_plus_start(rec_path, tmp_path) -> None:
    from PIL import Image

    out = tmp_path / "g.gif"
    assert main(["replay", str(rec_path), "--gif", str(out), "--cell", "40"]) == 0
    with Image.open(out) as im:
        assert im.n_frames == 31
        assert im.size == (4 * 40 + 5 * 4, 4 * 40 + 5 * 4 + 32)
    assert main(["replay", str(rec_path), "--gif", str(out), "--every", "10", "--cell", "40"]) == 0
    with Image.open(out) as im:
        assert im.n_frames == 4


def test_render__frame_draws_tile_colours(rec_path) -> None:
    from ai2048 import from_tiles
    from ai2048.ui.colors import hex_to_rgb, tile_colors
    from ai2048.ui.render import FrameRenderer

    r = FrameRenderer(cell=40)
    img = r.frame(from_tiles([2048] + [0] * 15), score=10, move=3)
    gap = r.gap
    corner = (gap + 3, r.header + gap + 3)  # inside tile (0, 0), away from its label
    assert img.getpixel(corner) == hex_to_rgb(tile_colors(11)[0])
    assert img.getpixel((gap + 40 + gap + 3, r.header + gap + 3)) == hex_to_rgb(tile_colors(0)[0])


def test_replay__mp4_or_clear_error(rec_path, tmp_path, capsys) -> None:
    out = tmp_path / "g.mp4"
    try:
        import imageio_ffmpeg  # noqa: F401
    except ImportError:
        assert main(["replay", str(rec_path), "--mp4", str(out)]) == 2
        assert "pip install imageio-ffmpeg" in capsys.readouterr().err
        return
    assert main(["replay", str(rec_path), "--mp4", str(out), "--cell", "40"]) == 0
    assert out.stat().st_size > 1000 and out.read_bytes()[4:8] == b"ftyp"


def test_replay__eval_result_game(tmp_path, capsys) -> None:
    from ai2048.records import actions_to_str

    games = []
    for seed in (1, 2):
        r = record_game(cycle, seed=seed, max_moves=20 + seed)
        games.append({"seed": seed, "score": r.final_score, "moves": r.moves, "max_tile": r.max_tile,
                      "actions": actions_to_str(r.actions)})
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"format": "ai2048.eval-result", "agent": "x", "p_two": 0.9, "games": games}))
    assert main(["replay", str(path), "--game", "1", "--delay", "0"]) == 0
    assert "replayed 22 moves" in capsys.readouterr().out
    assert main(["replay", str(path), "--game", "5"]) == 2
    assert "--game 5 is out of range" in capsys.readouterr().err
    games[0]["score"] += 2
    path.write_text(json.dumps({"format": "ai2048.eval-result", "agent": "x", "p_two": 0.9, "games": games}))
    assert main(["replay", str(path), "--game", "0"]) == 2
    assert "game 0 replays to score" in capsys.readouterr().err
    games[0]["score"] -= 2
    for key, value in (("max_tile", 4096), ("moves", 3), ("final_board", "0x0000000000000012")):
        edited = [{**games[0], key: value}, games[1]]  # before: only the score was compared
        path.write_text(json.dumps({"format": "ai2048.eval-result", "agent": "x", "p_two": 0.9,
                                    "games": edited}))
        assert main(["replay", str(path), "--game", "0"]) == 2
        assert f"game 0 replays to {key}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "missing.json does not exist"),
        ("{trunc", "is not valid JSON"),
        (json.dumps({"format": "something-else"}), "is not an ai2048 game record"),
    ],
)
def test_replay__bad_files_name_the_file(tmp_path, capsys, content, message) -> None:
    path = tmp_path / "missing.json"
    if content is not None:
        path.write_text(content)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert "missing.json" in err and message in err


def test_replay__tampered_record_names_file_and_move(rec_path, tmp_path, capsys) -> None:
    d = json.loads(rec_path.read_text())
    d["scores"][3] += 8
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(d))
    assert main(["replay", str(bad), "--gif", str(tmp_path / "x.gif")]) == 2
    err = capsys.readouterr().err
    assert "tampered.json does not replay at move 4" in err
    assert not (tmp_path / "x.gif").exists()


def _past_32768() -> tuple:
    """A two-move trajectory of rules version 1 (a game reaching 65536 is too long to play in a test):
    two 32768s, then the 65536 their merge made (+65536)."""
    import numpy as np

    from ai2048.board_io import exact_from_tiles
    from ai2048.records import Trajectory

    start = exact_from_tiles([32768, 32768, 0, 0, 2] + [0] * 11)
    merged = exact_from_tiles([65536, 0, 0, 2, 2] + [0] * 11)
    t = Trajectory(boards=np.array([start[0], merged[0]], np.uint64),
                   afterstates=np.array([merged[0]], np.uint64), scores=np.array([0, 65536], np.int64),
                   actions=np.array([3], np.int64), supers=np.array([start[1], merged[1]], np.int64))
    return t, merged


def test_replay__terminal_view_shows_tiles_past_32768_exactly() -> None:
    from rich.console import Console

    from ai2048.cli.replay import replay_view

    t, _ = _past_32768()
    console = Console(record=True, width=100, color_system=None)
    console.print(replay_view(t, 1, "record: x, seed 1"))
    text = console.export_text()  # the title, the status line, then the board
    assert [line.split() for line in text.splitlines()[2:] if line.strip()] == [["65536", "2"], ["2"]]
    assert "score 65,536   moves 1   best 65536   last LEFT" in text
    console.print(replay_view(t, 0, "record"))
    start = console.export_text()
    assert [line.split() for line in start.splitlines()[2:] if line.strip()] == [["32768", "32768"], ["2"]]
    assert "best 32768   start" in start


def test_render__frames_draw_tiles_past_32768_in_their_colours() -> None:
    from ai2048.board_io import exact_from_tiles
    from ai2048.ui.colors import hex_to_rgb, tile_colors
    from ai2048.ui.render import FrameRenderer, trajectory_frames

    t, (board, supers) = _past_32768()
    r = FrameRenderer(cell=40)
    corner = (r.gap + 3, r.header + r.gap + 3)  # inside tile (0, 0), away from its label
    assert r.frame(board, 65536, 1, supers=supers).getpixel(corner) == hex_to_rgb(tile_colors(16)[0])
    assert r.frame(board, 65536, 1).getpixel(corner) == hex_to_rgb(tile_colors(15)[0])  # a 15 alone: 32768
    first, last = trajectory_frames(t, r)
    assert first.getpixel(corner) == hex_to_rgb(tile_colors(15)[0])
    assert last.getpixel(corner) == hex_to_rgb(tile_colors(16)[0])
    board, supers = exact_from_tiles([131072] + [0] * 15)
    assert r.frame(board, 0, 0, supers=supers).getpixel(corner) == hex_to_rgb(tile_colors(17)[0])


@pytest.mark.parametrize(("field", "rules"), [({}, 0), ({"rules_version": 0}, 0), ({"rules_version": 1}, 1)])
def test_replay__an_eval_result_game_replays_under_its_rules(tmp_path, field, rules) -> None:
    from ai2048.cli.replay import load_any
    from ai2048.records import actions_to_str

    r = record_game(cycle, seed=3, max_moves=15)
    game = {"seed": 3, "score": r.final_score, "moves": r.moves, "max_tile": r.max_tile,
            "actions": actions_to_str(r.actions)}
    path = tmp_path / "result.json"
    path.write_text(json.dumps({"format": "ai2048.eval-result", "agent": "x", "p_two": 0.9, **field,
                                "games": [game]}))
    rec = load_any(path, 0)  # a result from before the field holds games of the capped rules
    assert rec.rules_version == rules and rec.final_score == r.final_score


def test_replay__an_eval_result_of_unknown_rules_is_refused(tmp_path, capsys) -> None:
    path = tmp_path / "result.json"
    game = {"seed": 1, "score": 0, "moves": 0, "max_tile": 4, "actions": ""}
    path.write_text(json.dumps({"format": "ai2048.eval-result", "agent": "x", "rules_version": 7,
                                "games": [game]}))
    assert main(["replay", str(path), "--delay", "0"]) == 2
    assert "rules=7 is not a rules version this ai2048 plays" in capsys.readouterr().err
