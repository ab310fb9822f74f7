"""Figures: curves computed right from every metrics shape, eval figures written, bad input named."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="plots need matplotlib: pip install 'ai2048[plot]'")

import ai2048  # noqa: E402
from ai2048 import Game  # noqa: E402
from ai2048.cli import main  # noqa: E402
from ai2048.plots import (  # noqa: E402
    PlotInputError,
    action_distribution,
    action_shares,
    episode_curves,
    ewma,
    mean_board,
    milestone_moves,
    milestone_seconds,
    plot_arena,
    plot_paths,
    reached_tiles,
    runtime_by_tile,
    training_curves,
)
from ai2048.records import actions_to_str, record_game  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def last_legal(board: int) -> int:
    return int(Game(board=board).legal_actions()[-1])


def eval_result(agent: str, seeds: list[int]) -> dict:
    games = []
    for s in seeds:
        r = record_game(last_legal, seed=s)
        games.append(
            {
                "seed": s,
                "score": r.final_score,
                "moves": r.moves,
                "max_tile": r.max_tile,
                "final_board": f"0x{r.final_board:016x}",
                "seconds": 0.01,
                "actions": actions_to_str(r.actions),
            }
        )
    return {"format": "ai2048.eval-result", "version": 1, "agent": agent, "config": {"k": 1}, "p_two": 0.9,
            "games": games}


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("eval") / "result.json"
    p.write_text(json.dumps(eval_result("last-legal", [1, 2, 3, 4, 5, 6])))
    return p


def write_run(tmp_path, recs) -> str:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return run


def test_training_curves__per_episode_logs_are_windowed() -> None:
    recs = [{"episode": i + 1, "score": 100 * (i + 1), "max_tile": 1024 if i % 2 else 512,
             "loss": 1.0 / (i + 1), "epsilon": 0.5} for i in range(8)]
    c = training_curves(recs, window=4)
    assert c["x"].tolist() == [4, 8]
    assert c["score_mean"].tolist() == [250, 650]
    assert c["score_min"].tolist() == [100, 500] and c["score_max"].tolist() == [400, 800]
    # the tiles the run reached; 64..512 are reached by every game of every window, so only 1024 is drawn
    assert list(c["reach"]) == [1024] and c["reach"][1024].tolist() == [50, 50]
    assert np.allclose(
        c["losses"]["loss"], [np.mean([1, 1 / 2, 1 / 3, 1 / 4]), np.mean([1 / 5, 1 / 6, 1 / 7, 1 / 8])]
    )
    assert c["epsilon"].tolist() == [0.5, 0.5]


def test_training_curves__window_records_with_reach_fractions() -> None:
    recs = [{"epoch": e, "episodes": 32 * e, "games": 32, "score_mean": 10.0 * e, "reach_1024": 0.25 * e,
             "loss": 2.0, "value_loss": 1.0} for e in (1, 2)]
    c = training_curves(recs)
    assert c["xlabel"] == "episodes" and c["x"].tolist() == [32, 64]
    assert list(c["reach"]) == [1024] and c["reach"][1024].tolist() == [25.0, 50.0]
    assert set(c["losses"]) == {"loss", "value_loss"}


def test_training_curves__window_records_with_tile_tables() -> None:
    table = [{"tile": 512, "reach": 100.0}, {"tile": 1024, "reach": 80.0}, {"tile": 2048, "reach": 30.0}]
    recs = [{"games": 1000, "score_mean": 5.0, "score_min": 1, "score_max": 9, "tiles": table},
            {"games": 2000, "score_mean": 6.0, "score_min": 2, "score_max": 10, "tiles": table[:2]}]
    c = training_curves(recs)
    assert c["reach"][1024].tolist() == [80.0, 80.0]
    assert c["reach"][2048].tolist() == [30.0, 0.0]


def test_plot_run__writes_pngs(tmp_path, capsys) -> None:
    recs = [
        {"episode": i + 1, "score": i, "max_tile": 256, "loss": 0.1, "epsilon": 1 - i / 100}
        for i in range(100)
    ]
    run = write_run(tmp_path, recs)
    assert main(["plot", str(run), "--out", str(tmp_path / "fig"), "--window", "10"]) == 0
    names = sorted(p.name for p in (tmp_path / "fig").glob("*.png"))
    assert names == [
        "training_episodes.png",
        "training_epsilon.png",
        "training_loss.png",
        "training_reach.png",
        "training_score.png",
    ]
    assert all(p.read_bytes()[:8] == PNG for p in (tmp_path / "fig").glob("*.png"))
    assert "wrote" in capsys.readouterr().out


def test_milestone_moves__equal_stepping_the_game(result_file) -> None:
    res = json.loads(result_file.read_text())
    ms = milestone_moves(res)
    expected: dict[int, list[int]] = {}
    for g in res["games"]:
        game = Game(seed=g["seed"])
        seen = set()
        for i, ch in enumerate(g["actions"] + " "):
            for t in (128, 256, 512, 1024):  # from 128, as seed 003 times them
                if game.max_tile >= t and t not in seen:
                    seen.add(t)
                    expected.setdefault(t, []).append(i)
            if ch != " ":
                game.step("urdl".index(ch))
    assert {t: v for t, v in ms.items()} == expected


def test_action_shares__counts_moves_of_games_still_playing() -> None:
    x, shares = action_shares([{"actions": "uull"}, {"actions": "ur"}], bins=4)
    assert x.tolist() == [0, 1, 2, 3]
    assert shares[:, 0].tolist() == [1.0, 0.0, 0.0, 0.0]  # both games play u first
    assert shares[:, 1].tolist() == [0.5, 0.5, 0.0, 0.0]
    assert shares[:, 2].tolist() == [0.0, 0.0, 0.0, 1.0]


def test_mean_board__mean_exponent_per_cell() -> None:
    from ai2048 import encode

    a = encode([1] + [0] * 15)
    b = encode([3] + [0] * 14 + [2])
    mb = mean_board([{"final_board": f"0x{a:016x}"}, {"final_board": b}])
    assert mb[0, 0] == 2.0 and mb[3, 3] == 1.0 and mb.sum() == 3.0


def test_plot_eval__writes_every_figure(result_file, tmp_path) -> None:
    paths = plot_paths([result_file], tmp_path / "ev")
    assert sorted(p.name for p in paths) == [
        "action_share.png",
        "max_tile.png",
        "mean_board.png",
        "milestones.png",
        "moves_hist.png",
        "runtime.png",
        "score_hist.png",
        "score_vs_moves.png",
    ]
    assert all(p.read_bytes()[:8] == PNG for p in paths)


def test_plot_arena__compares_results(result_file, tmp_path) -> None:
    res = [json.loads(result_file.read_text()), eval_result("other", [7, 8])]
    paths = plot_arena(res, tmp_path)
    assert [p.name for p in paths] == ["arena_reach.png", "arena_score.png", "arena_score_hist.png",
                                       "arena_timing.png"]
    assert all(p.read_bytes()[:8] == PNG for p in paths)
    untimed = [{**r, "games": [{**g, "seconds": None} for g in r["games"]]} for r in res]
    assert "arena_timing.png" not in [p.name for p in plot_arena(untimed, tmp_path / "untimed")]


def test_runtime_by_tile_and_milestone_seconds__known_answers() -> None:
    """Seed 003's timing: mean seconds a game by the tile it ended on; median moves to a tile times the
    mean seconds a move."""
    games = [{"max_tile": 256, "seconds": 1.0, "moves": 100}, {"max_tile": 512, "seconds": 4.0, "moves": 300},
             {"max_tile": 256, "seconds": 3.0, "moves": 100}]
    assert runtime_by_tile(games) == {256: 2.0, 512: 4.0}
    per_move = 8.0 / 500
    got = milestone_seconds(games, {128: [10, 20, 60], 512: [250]})
    assert got == pytest.approx({128: 20 * per_move, 512: 250 * per_move})
    assert runtime_by_tile([{**games[0], "seconds": float("nan")}]) == {}
    assert milestone_seconds(games, {}) == {}


def test_milestone_moves__replay_seed_004_results_with_unchanged_moves() -> None:
    """A result of ``eval --illegal-move penalty`` replays with the penalty rule (unchanged moves: -1 and
    a spawn); under the standard rules the same actions do not replay."""
    g, acts, first, penalties = Game(seed=9), "", {}, 0
    while 0 in ai2048.decode(g.board) and g.moves < 2000:  # seed 004 ends at a full board
        legal = g.legal_actions()
        unchanged = [a for a in range(4) if a not in legal]
        if g.moves % 7 == 3 and unchanged:  # now and then a move that changes nothing
            a = unchanged[0]
        else:  # else the greedy move, which reaches 128 and 256
            a = max(legal, key=lambda x: ai2048.move(g.board, x)[1])
        penalties += g.step(a, penalty=True) == -1
        acts += "urdl"[a]
        for t in (128, 256):
            if g.max_tile >= t:
                first.setdefault(t, [g.moves])
    assert penalties > 0 and first
    game = {"seed": 9, "score": g.score, "moves": g.moves, "max_tile": g.max_tile,
            "final_board": f"0x{g.board:016x}", "actions": acts}
    assert milestone_moves({"games": [game], "illegal_move": "penalty"}) == first
    with pytest.raises(PlotInputError, match="does not replay"):
        milestone_moves({"games": [game]})


@pytest.mark.slow
def test_plot_arena__from_arena_file_and_from_several_results(result_file, tmp_path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps(eval_result("other", [7, 8])))
    paths = plot_paths([result_file, other], tmp_path / "ar")
    assert {"arena_reach.png", "arena_score.png"} <= {p.name for p in paths}
    assert [p.name for p in (tmp_path / "ar").glob("1-other*/max_tile.png")] == ["max_tile.png"]
    arena = tmp_path / "arena.json"
    arena.write_text(json.dumps({"format": "ai2048.arena", "results": [json.loads(result_file.read_text()),
                                                                        json.loads(other.read_text())]}))
    assert "arena_reach.png" in {p.name for p in plot_paths([arena], tmp_path / "ar2")}


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing", "nothing.json does not exist"),
        ("not-json", "is not valid JSON"),
        ("foreign", "is not an ai2048 evaluation or arena result"),
        ("no-games", "holds no games"),
        ("tampered", "game 1 replays to score"),
        ("tampered-max_tile", "game 1 replays to max_tile"),  # passed into the max-tile bars before
        ("tampered-moves", "game 1 replays to moves"),
        ("tampered-final_board", "game 1 replays to final_board"),
        ("empty-dir", "has no metrics.jsonl"),
        ("empty-log", "holds no records"),
    ],
)
def test_plot__bad_input_names_the_file(tmp_path, capsys, result_file, setup: str, message: str) -> None:
    path = tmp_path / "nothing.json"
    if setup == "not-json":
        path.write_text("{oops")
    elif setup == "foreign":
        path.write_text(json.dumps({"format": "ai2048.game-record"}))
    elif setup == "no-games":
        path.write_text(json.dumps({"format": "ai2048.eval-result", "games": []}))
    elif setup == "tampered":
        d = json.loads(result_file.read_text())
        d["games"][1]["score"] += 4
        path.write_text(json.dumps(d))
    elif setup.startswith("tampered-"):
        d = json.loads(result_file.read_text())
        key = setup.split("-")[1]
        d["games"][1][key] = "0x0000000000000012" if key == "final_board" else d["games"][1][key] * 2
        path.write_text(json.dumps(d))
    elif setup == "empty-dir":
        path = tmp_path / "run"
        path.mkdir()
    elif setup == "empty-log":
        path = tmp_path / "run"
        path.mkdir()
        (path / "metrics.jsonl").write_text("")
    assert main(["plot", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and path.name in err


def test_plot_eval__tampered_game_raises_plot_input_error(result_file, tmp_path) -> None:
    d = json.loads(result_file.read_text())
    d["games"][0]["actions"] = d["games"][0]["actions"][:-3] + "xyz"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(PlotInputError, match=r"bad\.json: game 0 does not replay"):
        plot_paths([bad], tmp_path / "o")


def test_ewma__pandas_span_semantics_and_nans_skipped() -> None:
    # pandas: Series([1, 2, 3]).ewm(span=3).mean() == [1, 5/3, 17/7]
    assert np.allclose(ewma(np.array([1.0, 2.0, 3.0]), span=3), [1.0, 5 / 3, 17 / 7])
    y = ewma(np.array([np.nan, 1.0, np.nan, 3.0]), span=3)
    assert np.isnan(y[0]) and np.allclose(y[1:], [1.0, 1.0, 3.5 / 1.5])
    with pytest.raises(ValueError, match="span"):
        ewma(np.ones(3), span=float("nan"))


def test_reached_tiles__the_largest_powers_reached() -> None:
    assert reached_tiles([300, 5000]) == [256, 512, 1024, 2048, 4096]
    assert reached_tiles([64], most=3) == [16, 32, 64]
    assert reached_tiles([8]) == [] and reached_tiles([]) == []


def test_training_curves__table_curves_skip_tiles_no_window_reached() -> None:
    table = [{"tile": 2048, "reach": 90.0}, {"tile": 4096, "reach": 40.0}, {"tile": 8192, "reach": 0.0}]
    c = training_curves([{"games": 1000, "score_mean": 1.0, "tiles": table}])
    assert list(c["reach"]) == [2048, 4096]


def test_episode_curves__seed000_series_with_ewma_after_dropping_15() -> None:
    recs = [{"episode": i + 1, "score": 10 * i, "moves": i, "max_tile": 128, "reward": 1.0, "loss": None}
            for i in range(40)]
    ep = episode_curves(recs)
    assert ep["x"][0] == 16 and len(ep["x"]) == 25
    raw, smooth = ep["score"]
    assert raw[0] == 150 and np.allclose(smooth, ewma(raw, 10))
    assert ep["length"][0][0] == 15  # "moves" stands in for "length"
    assert "loss" not in ep and set(ep) == {"x", "score", "reward", "length", "max_tile"}
    assert episode_curves([{"games": 10, "score_mean": 1.0}]) == {}


def test_action_distribution__window_shares_of_logged_counts() -> None:
    recs = [{"episode": 1, "actions": [2, 0, 0, 2]}, {"episode": 2, "actions": [0, 4, 0, 0]},
            {"episode": 3, "actions": [1, 1, 1, 1]}, {"episode": 4}]
    x, shares = action_distribution(recs, window=2)
    assert x.tolist() == [2, 3]
    assert np.allclose(shares[:, 0], [0.25, 0.5, 0, 0.25]) and np.allclose(shares[:, 1], [0.25] * 4)
    assert action_distribution([{"episode": 1}])[0].size == 0


def test_plot_run__lazyzero_run_gets_its_learning_curve(tmp_path) -> None:
    recs = [{"epoch": e, "episodes": 128 * e, "games": 128, "moves_mean": 200.0 + e, "moves_max": 400.0,
             "high_tile_mean": 256.0, "high_tile_max": 1024.0, "reach_1024": 0.1, "reach_2048": 0.0,
             "loss": 2.0 / e, "seconds": 30.0} for e in (1, 2, 3)]
    run = write_run(tmp_path, recs)
    names = {p.name for p in plot_paths([run], tmp_path / "fig")}
    assert {"lazyzero_curve.png", "training_reach.png", "training_loss.png"} <= names
    assert list(training_curves(recs)["reach"]) == [1024]  # reach_2048 is 0 everywhere: no flat line


def test_mean_board__counts_tiles_past_32768_by_their_exact_exponent() -> None:
    from ai2048.board_io import exact_from_tiles

    b, s = exact_from_tiles([131072, 65536, 32768] + [0] * 13)
    mb = mean_board([{"final_board": f"0x{b:016x}", "final_supers": s}, {"final_board": f"0x{b:016x}"}])
    assert mb[0].tolist() == [16.0, 15.5, 15.0, 0.0]  # 17 and 15, 16 and 15 (no final_supers: 32768s)


@pytest.mark.parametrize(("supers", "message"), [
    (1 << 8, "supers records a 65536 at cell 4 (row 1, column 0), but the board holds nothing there"),
    ("0x1", "supers must be an int"),
    (2 | 2 << 2, "a second 131072 at cell 1"),
])
def test_load_result__final_supers_that_do_not_fit_the_board_name_the_game(tmp_path, supers, message) -> None:
    from ai2048.board_io import exact_from_tiles
    from ai2048.plots.results import load_result

    b, _ = exact_from_tiles([32768, 32768] + [0] * 14)
    game = {"seed": 1, "score": 0, "moves": 0, "max_tile": 32768, "final_board": f"0x{b:016x}",
            "final_supers": supers}
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"format": "ai2048.eval-result", "games": [game]}))
    with pytest.raises(PlotInputError, match="r.json: game 0: final_supers") as e:
        load_result(path)
    assert message in str(e.value) and "the file is corrupt" in str(e.value)
