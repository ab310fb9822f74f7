"""Several inputs in one figure: short distinct labels for results, runs of any trainer overlaid,
`--label`, and the errors for bad mixes and counts (issue 17), all through `ai2048 plot`."""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="plots need matplotlib: pip install 'ai2048[plot]'")

import ai2048.plots as plots  # noqa: E402
from ai2048 import Game  # noqa: E402
from ai2048.cli import main  # noqa: E402
from ai2048.plots import agent_labels, distinct_names, training_curves  # noqa: E402
from ai2048.records import actions_to_str, record_game  # noqa: E402


@pytest.fixture
def figures(monkeypatch) -> dict[str, list[dict[str, Any]]]:
    """{png path relative to nothing: one dict per axis} of every figure `ai2048 plot` saves: legend texts,
    labelled lines, all lines, y label, y scale (read from the matplotlib figure before it is closed)."""
    seen: dict[str, list[dict[str, Any]]] = {}
    save = plots.common.save_figure

    def spy(fig: Any, out: Path, name: str) -> Path:
        axes = []
        for ax in fig.axes:
            leg = ax.get_legend()
            axes.append({
                "legend": [t.get_text() for t in leg.get_texts()] if leg else [],
                "labels": [ln.get_label() for ln in ax.get_lines() if not ln.get_label().startswith("_")],
                "lines": len(ax.get_lines()),
                "ylabel": ax.get_ylabel(),
                "yscale": ax.get_yscale(),
                "title": ax.get_title(),
                "ticks": [t.get_text() for t in ax.get_xticklabels()],
            })
        path = save(fig, out, name)
        seen[str(path)] = axes
        return path

    monkeypatch.setattr(plots.common, "save_figure", spy)
    return seen


def last_legal(board: int) -> int:
    return int(Game(board=board).legal_actions()[-1])


def first_legal(board: int) -> int:
    return int(Game(board=board).legal_actions()[0])


def result(agent: str, config: dict, policy: Any = last_legal, seeds: tuple[int, ...] = (1, 2, 3)) -> dict:
    games = []
    for s in seeds:
        r = record_game(policy, seed=s)
        games.append({"seed": s, "score": r.final_score, "moves": r.moves, "max_tile": r.max_tile,
                      "final_board": f"0x{r.final_board:016x}", "seconds": 0.01,
                      "actions": actions_to_str(r.actions)})
    return {"format": "ai2048.eval-result", "version": 1, "agent": agent, "config": config, "seed": 0,
            "p_two": 0.9, "max_moves": None, "goal_tile": None, "end_on_full_board": False, "games": games}


# --------------------------------------------------------------------------- labels


def test_distinct_names__last_parts_that_tell_paths_apart() -> None:
    assert distinct_names(["runs/a/run", "runs/b/run", "runs/c"]) == ["a/run", "b/run", "c"]
    assert distinct_names(["x/s1", "y/s2"]) == ["s1", "s2"]
    assert distinct_names(["x/s1", "x/s1", "x/./s1"]) == ["s1", "s1 #2", "s1 #3"]  # the same folder thrice


def test_agent_labels__name_plus_only_the_options_that_differ() -> None:
    long = {"depth": 2, "p_two": 0.9, "weights": {"empty": 270, "merges": 700}, "cache": True}
    rs = [
        {"agent": "expectimax", "config": dict(long)},
        {"agent": "expectimax", "config": {**long, "depth": 3}},
        {"agent": "dqn", "config": {"weights": "/data/runs/entropy/s1", "depth": 1}},
        {"agent": "dqn", "config": {"weights": "/data/runs/entropy/s2", "depth": 1}},
        {"agent": "random", "config": {}},
    ]
    assert agent_labels(rs) == ["expectimax(depth=2)", "expectimax(depth=3)", "dqn(weights=s1)",
                                "dqn(weights=s2)", "random"]
    # an agent alone keeps its bare name whatever its options (seed 000: "DQN" vs "random")
    alone = [{"agent": "dqn", "config": long}, {"agent": "random", "config": {}}]
    assert agent_labels(alone) == ["dqn", "random"]
    # an option set in one result only is shown where it is set
    assert agent_labels([{"agent": "mc", "config": {}}, {"agent": "mc", "config": {"playouts": 50}}]) == [
        "mc", "mc(playouts=50)"]
    # equal options: the evaluation settings that differ; then a number
    same = [{"agent": "greedy", "config": {}, "seed": 0, "p_two": 0.9},
            {"agent": "greedy", "config": {}, "seed": 7, "p_two": 0.9},
            {"agent": "greedy", "config": {}, "seed": 7, "p_two": 0.9}]
    assert agent_labels(same) == ["greedy [seed=0]", "greedy [seed=7]", "greedy [seed=7] #2"]


def test_plots_docstring_examples() -> None:
    r = doctest.testmod(plots.labels)
    assert r.attempted >= 2 and r.failed == 0


@pytest.fixture(scope="module")
def two_results(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("results")
    cfg = {"weights": "/home/u/runs/dqn-entropy/s1", "depth": 1, "p_two": 0.9, "batch": 64}
    a, b = d / "a.json", d / "b.json"
    a.write_text(json.dumps(result("dqn", cfg)))
    b.write_text(json.dumps(result("dqn", {**cfg, "weights": "/home/u/runs/dqn-entropy/s2"}, first_legal,
                                   (4, 5, 6, 7))))
    return a, b


def test_plot_cli__several_results_are_labelled_short_and_distinct(two_results, tmp_path, figures) -> None:
    a, b = two_results
    assert main(["plot", str(a), str(b), "--out", str(tmp_path / "f")]) == 0
    hist = figures[str(tmp_path / "f" / "arena_score_hist.png")][0]
    assert hist["legend"] == ["dqn(weights=s1) (3 games)", "dqn(weights=s2) (4 games)"]  # seed 000's overlay
    short = ["dqn(weights=s1)", "dqn(weights=s2)"]
    assert figures[str(tmp_path / "f" / "arena_reach.png")][0]["legend"] == short
    assert figures[str(tmp_path / "f" / "arena_score.png")][0]["ticks"] == short
    assert sorted(p.name for p in (tmp_path / "f").iterdir() if p.is_dir()) == [
        "0-dqn-weights-s1", "1-dqn-weights-s2"]
    title = figures[str(tmp_path / "f" / "1-dqn-weights-s2" / "max_tile.png")][0]["title"]
    assert title.startswith("dqn(weights=s2): max tile")


def test_plot_cli__label_names_the_agents_and_is_checked(two_results, tmp_path, figures, capsys) -> None:
    a, b = two_results
    out = tmp_path / "f"
    assert main(["plot", str(a), str(b), "--out", str(out), "--label", "DQN s1", "--label", "DQN s2"]) == 0
    assert figures[str(out / "arena_score_hist.png")][0]["legend"] == ["DQN s1 (3 games)", "DQN s2 (4 games)"]
    assert (out / "1-DQN-s2" / "score_hist.png").is_file()
    # a single result: the label titles its figures
    assert main(["plot", str(a), "--out", str(tmp_path / "one"), "--label", "mine"]) == 0
    assert figures[str(tmp_path / "one" / "max_tile.png")][0]["title"].startswith("mine: max tile")
    figures.clear()
    for labels, message in [
        (["only one"], "--label was given 1 time(s) for 2 agent(s): give one --label per agent"),
        (["x", "y", "z"], "--label was given 3 time(s) for 2 agent(s)"),
        (["x", " "], "--label cannot be empty"),
        (["x", "x"], "--label 'x' is given twice"),
    ]:
        argv = ["plot", str(a), str(b), "--out", str(tmp_path / "bad")]
        for lab in labels:
            argv += ["--label", lab]
        assert main(argv) == 2
        assert message in capsys.readouterr().err
    arena = tmp_path / "arena.json"
    arena.write_text(json.dumps({"format": "ai2048.arena", "results": [json.loads(a.read_text())] * 2}))
    argv = ["plot", str(arena), str(b), "--out", str(tmp_path / "bad"), "--label", "p", "--label", "q"]
    assert main(argv) == 2
    assert "for 3 agent(s) (an arena file counts each of its agents)" in capsys.readouterr().err
    assert figures == {} and not (tmp_path / "bad").exists()  # checked before any figure


# --------------------------------------------------------------------------- runs overlaid


def write_run(path: Path, recs: list[dict]) -> Path:
    path.mkdir(parents=True)
    (path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def dqn_log(seed: int, episodes: int = 60) -> list[dict]:
    """The shape `ai2048 train dqn` logs: one record per episode (qnet: the same without reward)."""
    rng = np.random.default_rng(seed)
    out = []
    for e in range(1, episodes + 1):
        tile = int(rng.choice([64, 128, 256]))
        out.append({"step": e, "games": e, "time": 0.1 * e, "episode": e,
                    "score": int(rng.integers(200, 3000)),
                    "max_tile": tile, "length": int(rng.integers(60, 300)), "reward": float(rng.normal()),
                    "loss": float(rng.uniform(0.1, 1.0)), "epsilon": max(0.05, 1 - e / 40),
                    "actions": rng.integers(0, 50, 4).tolist(), "env_steps": 100 * e, "grad_steps": 10 * e})
    return out


def ntuple_log(scale: float) -> list[dict]:
    """The shape `ai2048 train ntuple` logs: one record per chunk of games with seed 004's tile table."""
    out = []
    for k in range(1, 6):
        table = [{"tile": 256, "reach": 100.0}, {"tile": 512, "reach": min(100.0, 20.0 * k * scale)},
                 {"tile": 1024, "reach": 4.0 * k * scale}]
        out.append({"step": 100 * k, "games": 100 * k, "time": k, "score_mean": 3000.0 * k * scale,
                    "score_min": 500, "score_max": 6000 * k, "moves_mean": 300.0, "tiles": table})
    return out


def lazyzero_log() -> list[dict]:
    return [{"step": e, "games": 128 * e, "time": 30.0 * e, "epoch": e, "moves_mean": 200.0 + e,
             "moves_max": 400.0,
             "high_tile_mean": 256.0, "high_tile_max": 1024.0, "reach_1024": 0.1 * e, "reach_2048": 0.0,
             "loss": 2.0 / e} for e in (1, 2, 3)]


def policy_log() -> list[dict]:
    return [{"step": e, "games": 64 * e, "time": 5.0 * e, "epoch": e, "score": 900.0 + 10 * e,
             "score_avg": 880.0 + 12 * e, "score_max": 2000, "length": 100.0, "max_tile": 256,
             "loss": 1.0 / e,
             "epsilon": 0.1, "actions": [10, 20, 30, 40], "train_moves": 6400} for e in range(1, 9)]


def test_plot_cli__runs_of_every_trainer_overlaid_per_panel(tmp_path, figures) -> None:
    runs = [write_run(tmp_path / "a" / "run", ntuple_log(1.0)),
            write_run(tmp_path / "b" / "run", ntuple_log(0.5)),
            write_run(tmp_path / "dqn1", dqn_log(1)), write_run(tmp_path / "dqn2", dqn_log(2)),
            write_run(tmp_path / "lz", lazyzero_log()), write_run(tmp_path / "pg", policy_log())]
    out = tmp_path / "cmp"
    assert main(["plot", *map(str, runs), "--out", str(out), "--window", "10"]) == 0

    score = figures[str(out / "training_score.png")]
    assert len(score) == 1 and score[0]["legend"] == ["a/run", "b/run", "dqn1", "dqn2", "pg"]  # lz logs none
    assert score[0]["lines"] == 5

    reach = figures[str(out / "training_reach.png")]
    # one panel per tile any run shows (dqn: 128 and 256; ntuple: 512 and 1024; lazyzero: 1024)
    assert [ax["ylabel"] for ax in reach] == [f"% of games >= {t}" for t in (128, 256, 512, 1024)]
    by_tile = {ax["ylabel"].split()[-1]: ax for ax in reach}
    assert by_tile["1024"]["labels"] == ["a/run", "b/run", "dqn1", "dqn2", "lz"]  # dqn runs: 0% lines
    assert by_tile["128"]["labels"] == ["a/run", "b/run", "dqn1", "dqn2"]  # lz logs reach_1024 only
    assert reach[0]["legend"] == ["a/run", "b/run", "dqn1", "dqn2", "lz"]

    loss = figures[str(out / "training_loss.png")]
    assert len(loss) == 1 and loss[0]["labels"] == ["dqn1", "dqn2", "lz", "pg"] and loss[0]["yscale"] == "log"
    assert figures[str(out / "training_epsilon.png")][0]["labels"] == ["dqn1", "dqn2", "pg"]

    episodes = figures[str(out / "training_episodes.png")]
    assert [ax["ylabel"] for ax in episodes] == [
        "score", "reward (as trained on)", "moves per game", "max tile", "mean loss"]
    for ax in episodes:  # each run: its per-episode line (faint) and its EWMA (labelled)
        assert ax["lines"] == 4 and ax["labels"] == ["dqn1", "dqn2"]
    actions = figures[str(out / "training_actions.png")]
    assert [ax["ylabel"] for ax in actions] == ["% up", "% right", "% down", "% left"]
    assert all(ax["labels"] == ["dqn1", "dqn2", "pg"] for ax in actions)
    assert figures[str(out / "lazyzero_curve.png")][0]["labels"] == ["lz"]

    # each run's own figures, titled with its short name
    subdirs = sorted(p.name for p in out.iterdir() if p.is_dir())
    assert subdirs == ["0-a-run", "1-b-run", "2-dqn1", "3-dqn2", "4-lz", "5-pg"]
    assert figures[str(out / "0-a-run" / "training_score.png")][0]["title"] == "a/run: score per window"
    lz_titles = {ax["title"] for ax in figures[str(out / "4-lz" / "lazyzero_curve.png")]}
    assert "self-play game length" in lz_titles


def test_plot_cli__overlay_labels_and_ewma_of_two_dqn_runs(tmp_path, figures) -> None:
    a, b = write_run(tmp_path / "x" / "s1", dqn_log(3)), write_run(tmp_path / "y" / "s1", dqn_log(4))
    out = tmp_path / "o"
    assert main(["plot", str(a), str(b), "--out", str(out), "--label", "lr 1e-3", "--label", "lr 1e-4"]) == 0
    assert figures[str(out / "training_score.png")][0]["legend"] == ["lr 1e-3", "lr 1e-4"]
    ep = figures[str(out / "training_episodes.png")][0]
    assert ep["legend"] == ["lr 1e-3", "lr 1e-4"] and ep["lines"] == 4
    assert "EWMA, span 10" in ep["title"]
    assert main(["plot", str(a), str(b), "--out", str(tmp_path / "auto")]) == 0
    assert figures[str(tmp_path / "auto" / "training_score.png")][0]["legend"] == ["x/s1", "y/s1"]


def test_training_curves__dqn_reach_curves_are_only_the_tiles_reached(tmp_path, figures) -> None:
    recs = dqn_log(5)  # tiles 64, 128, 256 only
    assert list(training_curves(recs, 10)["reach"]) == [128, 256]  # 64 (and below) at 100% throughout
    run = write_run(tmp_path / "dqn", recs)
    assert main(["plot", str(run), "--out", str(tmp_path / "f"), "--window", "10"]) == 0
    assert figures[str(tmp_path / "f" / "training_reach.png")][0]["legend"] == [">= 128", ">= 256"]
    # with tiles given, exactly those: 0% for one no game reached
    forced = training_curves(recs, 10, tiles=[256, 512])["reach"]
    assert list(forced) == [256, 512] and forced[512].tolist() == [0.0] * 6


def test_plot_cli__mixing_runs_and_results_is_refused(two_results, tmp_path, capsys) -> None:
    a, _ = two_results
    run = write_run(tmp_path / "myrun", dqn_log(1))
    assert main(["plot", str(run), str(a), "--out", str(tmp_path / "f")]) == 2
    err = capsys.readouterr().err
    assert f"run directories {run}; result files {a}" in err and "in two calls" in err
    assert not (tmp_path / "f").exists()


def test_plot_cli__bad_run_among_several_stops_before_any_figure(tmp_path, figures, capsys) -> None:
    good = write_run(tmp_path / "good", dqn_log(1))
    empty = write_run(tmp_path / "empty", [])
    assert main(["plot", str(good), str(empty), "--out", str(tmp_path / "f")]) == 2
    assert "empty/metrics.jsonl holds no records" in capsys.readouterr().err
    nothing = write_run(tmp_path / "nothing", [{"step": 1, "games": 1, "time": 0.1}])
    assert main(["plot", str(good), str(nothing), "--out", str(tmp_path / "f")]) == 2
    assert "has no score, reach, loss or epsilon to plot" in capsys.readouterr().err
    assert main(["plot", str(good), str(good / "x"), "--out", str(tmp_path / "f")]) == 2
    assert "good/x does not exist" in capsys.readouterr().err
    assert figures == {}
    assert main(["plot", str(good), "--out", str(tmp_path / "g"), "--label", "a", "--label", "b"]) == 2
    assert "--label was given 2 time(s) for 1 run(s)" in capsys.readouterr().err
