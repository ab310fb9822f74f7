"""Seed 002's mini-game curriculum (its ``game_type``, network.py at 512f57a) as ``train policy``'s
``curriculum`` option: the schedule, the start layouts, the mini games, the ranking, runs and the CLI."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048 import encode, is_over  # noqa: E402
from ai2048.checkpoint import read_jsonl  # noqa: E402
from ai2048.train.policy import (  # noqa: E402
    CURRICULUM_FIRST,
    PolicyConfig,
    epoch_weights,
    game_weights,
    iterative_next,
    play_games,
    random_next_top,
    random_start,
    run,
    training_set,
    win_split_weights,
)

TINY = PolicyConfig(batch_size=4, forget_interval=3, epochs=5, progress=False, checkpoint_every=2,
                    tensorboard=False, hidden_j=8, hidden_k=8)
CPU = torch.device("cpu")


def test_iterative_next__the_seeds_schedule_of_goals() -> None:
    # every stage won: start tiles 8, 16, ..., 1024 (goals 16 ... 2048), then a new round from 8
    exps, e = [], CURRICULUM_FIRST
    for _ in range(9):
        exps.append(e)
        e = iterative_next(e, won=True)
    assert [1 << (x + 1) for x in exps] == [16, 32, 64, 128, 256, 512, 1024, 2048, 16]
    # a failed stage (no game of curriculum_attempts batches won) starts a new round
    assert [iterative_next(x, won=False) for x in (3, 6, 10)] == [3, 3, 3]
    assert iterative_next(6, won=True) == 7


@pytest.mark.parametrize(("top", "drawn", "rate", "want"), [
    (3, 3, 0.7, 4),  # the top was drawn and more than 60% won: the top rises
    (3, 3, 0.6, 3),  # exactly 60% is not more (the seed's ``> .6``)
    (5, 4, 1.0, 5),  # only a draw of the top counts
    (10, 10, 1.0, 10),  # 1024 (goal 2048) is the last start tile
])
def test_random_next_top__rises_only_after_a_won_draw_of_the_top(top: int, drawn: int, rate: float,
                                                                 want: int) -> None:
    assert random_next_top(top, drawn, rate, 0.6) == want


@pytest.mark.parametrize("top", [3, 6, 10])
def test_random_start__one_top_tile_and_four_to_eleven_smaller_ones(top: int) -> None:
    gen = np.random.default_rng(top)
    counts, cells, values = set(), set(), set()
    for _ in range(400):
        layout = random_start(top, gen)
        assert layout.shape == (16,)
        assert (layout == top).sum() == 1
        others = layout[(layout > 0) & (layout != top)]
        assert ((others >= 1) & (others < top)).all()
        counts.add(int((layout > 0).sum()) - 1)
        cells.add(int(np.argmax(layout == top)))
        values.update(others.tolist())
        assert not is_over(encode(layout.astype(np.int64)))  # a start always has a legal move
    assert counts == set(range(4, 12))
    assert cells == set(range(16))
    assert values == set(range(1, top))


def test_random_start__rejects_a_top_outside_the_curriculum() -> None:
    with pytest.raises(ValueError, match="top_exp=11 must be in 2..10"):
        random_start(11, np.random.default_rng(0))


def test_play_games__mini_games_start_at_the_layout_and_end_at_the_goal() -> None:
    start = random_start(3, np.random.default_rng(4))
    g = play_games(None, 16, seed=5, cutoff=0, random_frac=0.0, gen=np.random.default_rng(0), device=CPU,
                   start=start, goal_exp=4)
    first = np.array([np.flatnonzero(g["game"] == i)[0] for i in range(16)])
    np.testing.assert_array_equal(g["layouts"][first], np.tile(start, (16, 1)))
    won = g["max_exp"] >= 4
    assert won.any()
    assert (g["max_exp"][won] == 4).all()  # the game ends on the move that makes the goal tile
    for i in np.flatnonzero(~won):
        assert is_over(encode(g["final"][i].astype(np.int64)))
    np.testing.assert_array_equal(np.bincount(g["game"], minlength=16), g["lengths"])


def _mini(seed: int, goal_exp: int) -> dict[str, np.ndarray]:
    start = random_start(goal_exp - 1, np.random.default_rng(seed))
    g = play_games(None, 8, seed=seed, cutoff=0, random_frac=0.0, gen=np.random.default_rng(seed), device=CPU,
                   start=start, goal_exp=goal_exp)
    g["goal_exp"] = np.array([goal_exp])
    return g


def test_epoch_weights__each_epoch_is_split_at_its_own_goal() -> None:
    a, b = _mini(1, 5), _mini(2, 7)
    cfg = replace(TINY, curriculum="mini_iterative")
    for g in (a, b):
        won = g["max_exp"] >= g["goal_exp"][0]
        want = win_split_weights(g["scores"].astype(float), won) if won.any() else game_weights(g["scores"])
        np.testing.assert_allclose(epoch_weights(cfg, [g]), want)
    # the window ranks each epoch's games among themselves, not the two epochs together
    _, _, w = training_set(cfg, [a, b])
    _, _, wa = training_set(cfg, [a])
    _, _, wb = training_set(cfg, [b])
    np.testing.assert_array_equal(w, np.concatenate([wa, wb]))
    _, _, w_full = training_set(replace(cfg, curriculum="none"), [a, b])
    assert not np.array_equal(w, w_full)


def test_run__mini_iterative_follows_the_schedule_and_resumes_exactly(tmp_path: Path) -> None:
    cfg = replace(TINY, curriculum="mini_iterative", curriculum_attempts=2, epochs=6, cutoff=100)
    recs = read_jsonl(run(cfg, tmp_path / "full") / "metrics.jsonl")
    assert (recs[0]["stage"], recs[0]["start_tile"], recs[0]["goal_tile"]) == (1, 8, 16)
    for r, nxt in zip(recs, recs[1:], strict=False):
        assert r["start_tile"] * 2 == r["goal_tile"] == 1 << (r["stage"] + CURRICULUM_FIRST)
        won = r["win_rate"] > 0
        assert nxt["goal_tile"] == (2 * r["goal_tile"] if won else 16)
        assert r["attempts"] <= cfg.curriculum_attempts if won else r["attempts"] == cfg.curriculum_attempts
    assert any(r["stage"] > 1 for r in recs)
    assert recs[-1]["games"] == sum(r["attempts"] for r in recs) * cfg.batch_size
    part = run(replace(cfg, epochs=3), tmp_path / "part")
    run(cfg, part, resume=True)
    strip = [{k: v for k, v in r.items() if k != "time"} for r in read_jsonl(part / "metrics.jsonl")]
    assert strip == [{k: v for k, v in r.items() if k != "time"} for r in recs]


def test_run__mini_random_raises_its_top_after_won_draws_of_it(tmp_path: Path) -> None:
    cfg = replace(TINY, curriculum="mini_random", epochs=8, memory=0.9, random_games=2)
    recs = read_jsonl(run(cfg, tmp_path / "r") / "metrics.jsonl")
    assert recs[0]["top_tile"] == 8
    for r, nxt in zip(recs, recs[1:], strict=False):
        assert 8 <= r["start_tile"] <= r["top_tile"] and r["goal_tile"] == 2 * r["start_tile"]
        top, drawn = r["top_tile"].bit_length() - 1, r["start_tile"].bit_length() - 1
        assert nxt["top_tile"] == 1 << random_next_top(top, drawn, r["win_rate"], cfg.curriculum_win_rate)
    assert recs[-1]["top_tile"] > 8  # random play wins the first mini games: the curriculum moves


def test_cli__train_policy_with_a_curriculum_records_its_stage(tmp_path: Path) -> None:
    from ai2048.cli import main

    out = tmp_path / "cli"
    sets = ["curriculum=mini_iterative", "batch_size=4", "epochs=3", "hidden_j=8", "progress=false",
            "tensorboard=false"]
    args = ["train", "policy", *(a for s in sets for a in ("--set", s)), "--out", str(out)]
    assert main(args) == 0
    recs = read_jsonl(out / "metrics.jsonl")
    assert [r["epoch"] for r in recs] == [1, 2, 3]
    assert recs[0]["goal_tile"] == 16
    assert all({"stage", "start_tile", "goal_tile", "win_rate", "attempts"} <= set(r) for r in recs)


@pytest.mark.parametrize(("setting", "message"), [
    ("curriculum=mini", "curriculum='mini' is not one of 'none', 'mini_iterative', 'mini_random'"),
    ("curriculum_attempts=3", "curriculum_attempts=3 applies to curriculum='mini_iterative' only"),
    ("curriculum_win_rate=0.8", "curriculum_win_rate=0.8 applies to curriculum='mini_random' only"),
])
def test_cli__bad_curriculum_settings_fail_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          setting: str, message: str) -> None:
    from ai2048.cli import main

    out = tmp_path / "bad"
    assert main(["train", "policy", "--set", setting, "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(("bad", "message"), [
    ({"curriculum": "mini_iterative", "curriculum_attempts": 0},
     "curriculum_attempts=0 must be a whole number >= 1"),
    ({"curriculum": "mini_random", "curriculum_win_rate": float("nan")}, "must be a finite number"),
    ({"curriculum": "mini_random", "curriculum_win_rate": 1.5},
     "curriculum_win_rate=1.5 must be a finite number in "),
    ({"curriculum": "mini_iterative", "win_tile": 2048}, "games are won at their goal tile"),
    ({"curriculum": "full"}, "curriculum='full' is not one of"),
])
def test_policy_config__bad_curriculum_values_raise(bad: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        replace(TINY, **bad)
