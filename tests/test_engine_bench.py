"""The benchmark kit: its baselines compute the same thing as the kernels, and the CLI runs end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ai2048 import bench, engine
from ai2048.bench import baselines
from ai2048.bench.kernels import collect_boards, pick_legal, random_games, raw_moves
from ai2048.cli import main


@pytest.fixture(scope="module")
def boards() -> np.ndarray:
    return collect_boards(np.int64(3000), engine.seed_state(4), np.float64(0.9))


def test_collect_boards__are_positions_of_random_games(boards):
    assert boards.shape == (3000,) and boards.dtype == np.uint64
    assert all(int(engine.count_empty(b)) < 16 for b in boards)
    assert len(np.unique(boards)) > 2500
    assert sum(bool(engine.is_over(b)) for b in boards) >= 1  # games ran to their end


def test_baselines__numpy_and_reference_compute_what_the_kernel_computes(boards):
    acc, score = raw_moves(boards, np.int64(1))
    np_acc, np_score = baselines.numpy_moves(boards)
    assert (int(np_acc), int(np_score)) == (int(acc), int(score))
    cells = [[(int(b) >> (4 * i)) & 0xF for i in range(16)] for b in boards]
    assert baselines.reference_moves(cells) == int(score)


def test_random_games__moves_equal_batch_random_play():
    states = np.arange(1, 21, dtype=np.uint64)
    starts = np.array([engine.new_board(states[i : i + 1], 0.9) for i in range(20)], dtype=np.uint64)
    moves, score = random_games(starts, states.copy(), np.float64(0.9))
    _, scores, each = engine.batch_random_play(starts, states.copy(), 0.9)
    assert (moves, score) == (each.sum(), scores.sum())


def test_reference_random_play__plays_games_to_the_end():
    assert baselines.reference_random_play(2, 0) > 100


def test_pick_legal__picks_only_legal_actions_uniformly():
    masks = np.array([[True, False, True, False]] * 4000 + [[False] * 4], dtype=bool)
    out = np.full(masks.shape[0], -1, dtype=np.int64)
    pick_legal(masks, engine.seed_state(3), out)
    assert set(out[:-1].tolist()) == {0, 2} and out[-1] == 0
    assert abs((out[:-1] == 0).mean() - 0.5) < 0.05


def test_run__rejects_unknown_sections_and_bad_budgets():
    with pytest.raises(ValueError, match="unknown bench section"):
        bench.run(["nope"])
    with pytest.raises(ValueError, match="seconds must be positive"):
        bench.run(["moves"], seconds=0)


def test_figure__ratio_and_formatting():
    f = bench.Figure("k", "name", 3e8, "moves/s", "base", 1.5e6)
    assert f.ratio == pytest.approx(200.0)
    assert bench.fmt_rate(3e8, "moves/s") == "300 Mmoves/s"
    t = bench.Figure("c", "cache", 0.5, "s", "compile", 20.0)
    assert t.ratio == pytest.approx(40.0)


def test_cli_bench__moves_and_selfplay_on_a_tiny_budget(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench",
            "--only",
            "moves",
            "--only",
            "selfplay",
            "--seconds",
            "0.05",
            "--boards",
            "2000",
            "--games",
            "20",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "raw moves, 1 core" in printed and "random self-play" in printed
    data = json.loads(out.read_text())
    keys = [f["key"] for f in data["figures"]]
    assert keys == ["raw_moves", "raw_moves_ref", "selfplay_1", "selfplay_n"]
    assert all(f["value"] > 0 and f["ratio"] > 0 for f in data["figures"])


def test_cli_bench__bad_budget_is_a_clean_error(capsys):
    assert main(["bench", "--only", "moves", "--seconds", "-1"]) == 2
    assert "seconds must be positive" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_bench__every_section_on_a_tiny_budget(tmp_path):
    out = tmp_path / "bench.json"
    code = main(
        [
            "bench",
            "--seconds",
            "0.05",
            "--boards",
            "2000",
            "--games",
            "20",
            "--num-envs",
            "64",
            "--json",
            str(out),
        ]
    )
    assert code == 0
    keys = {f["key"] for f in json.loads(out.read_text())["figures"]}
    assert {"compile", "raw_moves", "selfplay_1", "gym_make", "make_vec_1", "make_vec_n"} <= keys
