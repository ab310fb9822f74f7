"""Seed 002's history and quirks as options of ``train policy`` (issue 17): each off by default."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048.checkpoint import read_jsonl  # noqa: E402
from ai2048.train.policy import (  # noqa: E402
    PolicyConfig,
    binary_game_weights,
    game_weights,
    play_games,
    raw_values,
    run,
    training_set,
    win_split_weights,
)

TINY = PolicyConfig(batch_size=6, forget_interval=3, cutoff=30, epochs=4, progress=False, checkpoint_every=2,
                    tensorboard=False, hidden_j=8, hidden_k=8)


def _games(n: int = 6, cutoff: int = 40, seed: int = 2) -> dict[str, np.ndarray]:
    return play_games(None, n, seed=seed, cutoff=cutoff, random_frac=0.0, gen=np.random.default_rng(0),
                      device=torch.device("cpu"))


def test_binary_game_weights__plus_one_above_the_median_minus_one_at_or_below() -> None:
    np.testing.assert_array_equal(binary_game_weights(np.array([5, 1, 3, 4, 2])), [1, -1, -1, 1, -1])


def test_win_split_weights__won_in_half_to_one_lost_in_minus_one_to_minus_half() -> None:
    j = win_split_weights(np.array([10.0, 20.0, 30.0, 5.0, 7.0]), np.array([True, True, True, False, False]))
    np.testing.assert_allclose(j, [0.5, 0.75, 1.0, -0.5, -1.0])  # the best lost game gets -1, as in the seed
    np.testing.assert_allclose(win_split_weights(np.array([3.0, 3.0, 1.0]), np.array([True, True, False])),
                               [0.5, 0.5, -0.5])


def test_training_set__win_tile_splits_only_when_a_game_reached_it() -> None:
    g = _games(n=12, cutoff=80)
    top = int(g["max_exp"].max())
    assert (g["max_exp"] < top).any(), "every game reached the same tile: nothing to split"
    scores = g["scores"].astype(float)
    _, _, w_none = training_set(replace(TINY, win_tile=1 << (top + 1)), [g])  # nobody won: the median split
    _, _, w_plain = training_set(TINY, [g])
    np.testing.assert_array_equal(w_none, w_plain)
    _, y, w = training_set(replace(TINY, win_tile=1 << top), [g])
    j = win_split_weights(scores, g["max_exp"] >= top)
    order = np.argsort(g["game"], kind="stable")
    np.testing.assert_allclose(w, np.abs(j[g["game"][order]]), rtol=1e-6)
    good = y.max(axis=1) == 1.0
    np.testing.assert_array_equal(good, (g["max_exp"] >= top)[g["game"][order]])


def test_training_set__binary_weights_and_first_weight_only() -> None:
    g = _games()
    order = np.argsort(g["game"], kind="stable")
    _, _, w = training_set(replace(TINY, game_weight="binary"), [g])
    np.testing.assert_array_equal(w, np.ones(len(order), np.float32))
    quirk = replace(TINY, game_weight="max", seed002_first_weight_only=True)
    first, later, scores = (training_set(quirk, [g], first=True)[2], training_set(quirk, [g], first=False)[2],
                            training_set(TINY, [g])[2])
    np.testing.assert_array_equal(later, scores)  # later epochs ranked by score, whatever game_weight says
    j_max = game_weights(2.0 ** g["max_exp"])
    np.testing.assert_allclose(first, np.abs(j_max[g["game"][order]]), rtol=1e-6)


def test_raw_values__exponents_to_tile_values() -> None:
    np.testing.assert_array_equal(raw_values(np.array([[0, 1, 11, 15] + [0] * 12])),
                                  [[0, 2, 2048, 32768] + [0] * 12])


@pytest.mark.parametrize("bad", [{"win_tile": 3}, {"win_tile": 2048, "game_weight": "binary"},
                                 {"memory": 1.5}, {"memory": float("nan")}])
def test_policy_config__bad_history_options_raise(bad: dict) -> None:
    with pytest.raises(ValueError):
        replace(TINY, **bad)


def test_run__memory_keeps_a_share_of_old_moves_and_resumes_exactly(tmp_path: Path) -> None:
    cfg = replace(TINY, memory=0.5)
    full = run(cfg, tmp_path / "full")
    recs = read_jsonl(full / "metrics.jsonl")
    moves = [round(r["length"] * cfg.batch_size) for r in recs]  # the new batch's moves (no random games)
    train = [r["train_moves"] for r in recs]
    assert train[0] == moves[0]
    assert all(train[k] == int(train[k - 1] * 0.5) + moves[k] for k in range(1, len(recs)))
    part = run(replace(cfg, epochs=2), tmp_path / "part")
    run(cfg, part, resume=True)
    strip = [{k: v for k, v in r.items() if k != "time"} for r in read_jsonl(part / "metrics.jsonl")]
    assert strip == [{k: v for k, v in r.items() if k != "time"} for r in recs]


@pytest.mark.parametrize("quirk", [False, True])
def test_run__random_games_respect_cutoff_unless_the_seed_quirk_is_on(tmp_path: Path, quirk: bool) -> None:
    cfg = replace(TINY, epochs=1, cutoff=3, random_games=4, seed002_random_ignore_cutoff=quirk)
    out = run(cfg, tmp_path / "r")
    [rec] = read_jsonl(out / "metrics.jsonl")
    capped = rec["train_moves"] <= 3 * (cfg.batch_size + cfg.random_games)
    assert capped != quirk


def test_run__raw_inputs_quirk_trains_on_raw_values(tmp_path: Path) -> None:
    a = read_jsonl(run(replace(TINY, epochs=2), tmp_path / "a") / "metrics.jsonl")
    b = read_jsonl(run(replace(TINY, epochs=2, seed002_raw_inputs=True), tmp_path / "b") / "metrics.jsonl")
    assert a[0]["score"] == b[0]["score"]  # the first batch is played before any training
    assert a[0]["loss"] != b[0]["loss"]  # the loss is taken on other inputs
