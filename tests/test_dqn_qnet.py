"""Seed 003's Q-network trainer: centred rewards, next-best rule, prioritised replay, both readings."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048 import encode, legal_mask  # noqa: E402
from ai2048.agents import load_agent  # noqa: E402
from ai2048.agents.deeprl import centred_rewards  # noqa: E402
from ai2048.checkpoint import read_jsonl  # noqa: E402
from ai2048.nets import build_net  # noqa: E402
from ai2048.train.config import make_config  # noqa: E402
from ai2048.train.qnet import QNetConfig, first_legal_by_rank, run, td_targets  # noqa: E402
from ai2048.train.replay import PrioritizedReplay, ReplayMemory  # noqa: E402

TINY = {
    "episodes": 4,
    "num_envs": 4,
    "batch_size": 16,
    "replay_ratio": 0.2,
    "progress": False,
    "checkpoint_every": 2,
    "tensorboard": False,
}


def test_centred_rewards__mean_centred_over_legal_moves_and_scaled_to_fifty():
    r = centred_rewards(
        np.array([[0, 8, 4, 0], [4, 4, 4, 4]]), np.array([[True, True, True, False], [True] * 4]), 50.0
    )
    # legal mean 4: [-4, 4, 0] scaled by 50/4; the illegal move gets 0; equal rewards give 0
    np.testing.assert_allclose(r, [[-50, 50, 0, 0], [0, 0, 0, 0]])


def test_first_legal_by_rank__takes_the_next_best_when_the_best_does_not_move():
    scores = np.array([[9.0, 1.0, 5.0, 3.0], [9.0, 1.0, 5.0, 3.0]])
    legal = np.array([[False, True, True, True], [False, True, False, True]])
    assert first_legal_by_rank(scores, legal).tolist() == [2, 3]


def test_prioritized_replay__samples_in_proportion_to_priority_power_alpha():
    mem = PrioritizedReplay(4, alpha=1.0, eps=0.0)
    for i in range(4):
        mem.push(i, 0, 0.0, i, False, 0.9, np.ones(4, bool))
    mem.update(np.arange(4), np.array([1.0, 1.0, 2.0, 4.0]))
    idx = mem.sample(np.random.default_rng(0), 40_000)
    np.testing.assert_allclose(np.bincount(idx, minlength=4) / 40_000, [0.125, 0.125, 0.25, 0.5], atol=0.01)
    w = mem.weights(np.array([0, 3]), beta=1.0)
    np.testing.assert_allclose(w, [1.0, 0.25])


def test_replay__ring_buffer_keeps_the_newest_transitions():
    mem = ReplayMemory(3)
    for i in range(5):
        mem.push(i, 0, float(i), i, False, 0.9, np.ones(4, bool))
    assert len(mem) == 3 and sorted(mem.r.tolist()) == [2.0, 3.0, 4.0]


@pytest.mark.parametrize("mode", ["q", "v"])
def test_qnet__one_rmsprop_step_decreases_the_mse_on_a_fixed_batch(mode):
    torch.manual_seed(0)
    cfg = QNetConfig(mode=mode, dropout=0.0)
    online, target = build_net(cfg.net_spec()), build_net(cfg.net_spec()).eval()
    rng = np.random.default_rng(0)
    mem = ReplayMemory(64)
    for _ in range(64):
        b = encode(rng.integers(0, 7, 16))
        b2 = encode(rng.integers(0, 7, 16))
        mem.push(b, int(rng.integers(0, 4)), float(rng.normal() * 20), b2, False, cfg.gamma, legal_mask(b2))
    batch = mem.batch(np.arange(64))
    opt = torch.optim.RMSprop(online.parameters(), lr=1e-3, alpha=0.9)
    pred, y = td_targets(cfg, online, target, batch, torch.device("cpu"))
    before = ((pred - y) ** 2).mean()
    opt.zero_grad()
    before.backward()
    opt.step()
    pred, y = td_targets(cfg, online, target, batch, torch.device("cpu"))
    assert ((pred - y) ** 2).mean().item() < before.item()


@pytest.mark.parametrize("mode", ["q", "v"])
def test_qnet__tiny_run_in_both_readings_plays_legal_moves(tmp_path, mode):
    out = run(make_config(QNetConfig, **{**TINY, "mode": mode}), tmp_path / mode)
    recs = read_jsonl(out / "metrics.jsonl")
    assert len(recs) >= 4 and {"score", "length", "max_tile", "loss", "epsilon", "actions"} <= set(recs[-1])
    agent = load_agent(out)
    rng = np.random.default_rng(1)
    for _ in range(30):
        b = encode(rng.integers(0, 9, 16))
        if legal_mask(b).any():
            assert legal_mask(b)[int(agent.act(b))]


def test_qnet__resume_continues_exactly(tmp_path):
    full = run(make_config(QNetConfig, **{**TINY, "episodes": 6}), tmp_path / "full")
    part = run(make_config(QNetConfig, **{**TINY, "episodes": 3}), tmp_path / "part")
    run(make_config(QNetConfig, **{**TINY, "episodes": 6}), part, resume=True)
    a, b = read_jsonl(full / "metrics.jsonl"), read_jsonl(part / "metrics.jsonl")
    assert [(r["score"], r["length"]) for r in a] == [(r["score"], r["length"]) for r in b]


def test_qnet__bad_settings_are_clear_errors():
    with pytest.raises(ValueError, match="mode='both' is not one of"):
        QNetConfig(mode="both")
    with pytest.raises(ValueError, match="hidden=\\(\\) must be"):
        QNetConfig(hidden=())
    with pytest.raises(ValueError, match="QNetConfig has no key"):
        make_config(QNetConfig, momentum=0.9)


def test_qnet__cli_trains_the_v_reading(tmp_path):
    from ai2048.cli import main

    out = tmp_path / "cli"
    sets = [
        f"--set={k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in {**TINY, "mode": "v"}.items()
    ]
    assert main(["train", "qnet", *sets, "--out", str(out)]) == 0
    assert load_agent(out).config["mode"] == "v"


def test_greedy_mean_score__plays_a_fixed_game_set_by_the_best_legal_move():
    from ai2048.train.games import BoardBatch
    from ai2048.train.torchrun import greedy_mean_score

    def prefer_up_then_right(boards):
        return np.tile([4.0, 3.0, 2.0, 1.0], (len(boards), 1))

    games = BoardBatch(1, 7)  # the same game by hand
    done, score = False, 0
    while not done:
        st = games.step(np.array([int(np.flatnonzero(games.masks[0])[0])]))
        done, score = bool(st.done[0]), int(games.score[0])
    assert greedy_mean_score(prefer_up_then_right, 1, 7) == score
    three = greedy_mean_score(prefer_up_then_right, 3, 7)
    assert (
        three
        == greedy_mean_score(prefer_up_then_right, 3, 7)
        != greedy_mean_score(prefer_up_then_right, 3, 8)
    )


@pytest.mark.parametrize("mode", ["q", "v"])
def test_qnet__validation_keeps_the_best_network_and_its_agent_plays_to_that_score(tmp_path, mode):
    from ai2048.train.torchrun import VALIDATION_SEED, greedy_mean_score

    cfg = make_config(
        QNetConfig, **{**TINY, "mode": mode, "episodes": 12, "validate_every": 4, "validate_games": 6}
    )
    out = run(cfg, tmp_path / "run")
    vals = read_jsonl(out / "validation.jsonl")
    assert [v["episode"] for v in vals] == [4, 8, 12]
    assert [v["best"] for v in vals] == [max(v["score"] for v in vals[: i + 1]) for i in range(3)]
    agent = load_agent(out)
    assert agent.payload["validation"]["score"] == vals[-1]["best"]
    assert greedy_mean_score(lambda b: agent.values(b)[0], 6, cfg.seed + VALIDATION_SEED) == pytest.approx(
        vals[-1]["best"]
    )


def test_qnet__validation_resumes_exactly(tmp_path):
    cfg = {**TINY, "validate_every": 2, "validate_games": 4}
    full = run(make_config(QNetConfig, **{**cfg, "episodes": 6}), tmp_path / "full")
    part = run(make_config(QNetConfig, **{**cfg, "episodes": 3}), tmp_path / "part")
    run(make_config(QNetConfig, **{**cfg, "episodes": 6}), part, resume=True)
    assert read_jsonl(full / "validation.jsonl") == read_jsonl(part / "validation.jsonl")
    assert [(r["score"], r["length"]) for r in read_jsonl(full / "metrics.jsonl")] == [
        (r["score"], r["length"]) for r in read_jsonl(part / "metrics.jsonl")
    ]


def test_qnet__best_cpu_q_preset_is_seed003_q_with_validation_selection():
    from ai2048.train.qnet import PRESETS

    cfg = make_config(QNetConfig, PRESETS, "best_cpu_q")
    assert (cfg.mode, cfg.hidden, cfg.lr, cfg.gamma, cfg.prioritized) == ("q", (128, 32, 8), 1e-3, 0.9, True)
    assert (cfg.validate_every, cfg.validate_games, cfg.duration) == (500, 200, 2280.0)
    assert build_net(cfg.net_spec())(torch.zeros(3, 16)).shape == (3, 4)


def test_qnet__no_burst_of_gradient_steps_when_learning_starts(tmp_path):
    # Regression: gradient steps owed before learning started were all spent in one burst.
    cfg = make_config(
        QNetConfig, **{**TINY, "learn_start": 300, "replay_ratio": 0.5, "checkpoint_every": 100}
    )
    recs = read_jsonl(run(cfg, tmp_path / "run") / "metrics.jsonl")
    assert recs[-1]["grad_steps"] > 0
    for r in recs:
        assert r["grad_steps"] <= max(0, r["env_steps"] - 300 + cfg.num_envs) * cfg.replay_ratio + 1, r
