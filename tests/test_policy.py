"""Seed 002's policy learner: j/k weights against the seed vectors, labels, loss, runs, resume, agent."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048 import encode, legal_mask  # noqa: E402
from ai2048.agents import load_agent, make_agent  # noqa: E402
from ai2048.checkpoint import read_jsonl  # noqa: E402
from ai2048.nets import build_net  # noqa: E402
from ai2048.train.config import make_config  # noqa: E402
from ai2048.train.policy import (  # noqa: E402
    PRESETS,
    PolicyConfig,
    game_weights,
    labels,
    move_weights,
    play_games,
    run,
    training_set,
    weighted_l1,
)

VECTORS = Path(__file__).parent / "data" / "seed_vectors.json"
TINY = {
    "batch_size": 6,
    "forget_interval": 3,
    "cutoff": 30,
    "epochs": 4,
    "progress": False,
    "checkpoint_every": 2,
    "tensorboard": False,
}


def _weighting():
    return json.loads(VECTORS.read_text())["heuristic_vectors"]["seed002_weighting"]


def test_game_weights__match_seed002_vectors():
    for ex in _weighting()["game_j_examples"]:
        np.testing.assert_allclose(game_weights(np.array(ex["rank_values(scores)"])), ex["j"])


def test_move_weights__match_seed002_vectors():
    ks = _weighting()["move_k_examples"]
    np.testing.assert_allclose(move_weights("linear_move_num", 5), ks["linear_move_num"])
    np.testing.assert_allclose(move_weights("exponential_move_num", 5), ks["exponential_move_num"])
    np.testing.assert_allclose(move_weights("none", 5), ks["uniform"])
    np.testing.assert_allclose(move_weights("nonzero", 3, np.array([2, 8, 16])), [0.125, 0.5, 1.0])


def test_labels__good_games_copy_the_move_bad_games_spread_over_the_others():
    y = labels(np.array([1, 1]), np.array([True, False]))
    np.testing.assert_allclose(y, [[0, 1, 0, 0], [1 / 3, 0, 1 / 3, 1 / 3]])


def test_weighted_l1__matches_the_seed_texts_worked_example():
    yhat = torch.tensor([[0.1, 0.2, 0.6, 0.1]])
    good = weighted_l1(yhat, torch.tensor([[0.0, 1.0, 0.0, 0.0]]), torch.tensor([1.0]))
    bad = weighted_l1(yhat, torch.tensor([[1 / 3, 0.0, 1 / 3, 1 / 3]]), torch.tensor([1.0]))
    assert good.item() == pytest.approx(0.4)
    assert bad.item() == pytest.approx((0.1 - 1 / 3) * -1 / 4 * 2 + 0.2 / 4 + (0.6 - 1 / 3) / 4, abs=1e-6)
    assert weighted_l1(
        yhat, torch.tensor([[0.0, 1.0, 0.0, 0.0]]), torch.tensor([0.5])
    ).item() == pytest.approx(0.2)


def test_policy__one_adam_step_decreases_the_weighted_l1_loss():
    torch.manual_seed(0)
    cfg = PolicyConfig(**TINY)
    net = build_net(cfg.net_spec())
    games = play_games(
        net.eval(),
        20,
        seed=1,
        cutoff=30,
        random_frac=0.0,
        gen=np.random.default_rng(0),
        device=torch.device("cpu"),
    )
    x, y, w = training_set(cfg, [games])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net.train()
    before = weighted_l1(net(net.encode(x)), torch.from_numpy(y), torch.from_numpy(w))
    opt.zero_grad()
    before.backward()
    opt.step()
    after = weighted_l1(net(net.encode(x)), torch.from_numpy(y), torch.from_numpy(w))
    assert after.item() < before.item()


def test_play_games__plays_legal_moves_up_to_the_cutoff_and_is_reproducible():
    a = play_games(
        None, 8, seed=5, cutoff=12, random_frac=0.0, gen=np.random.default_rng(0), device=torch.device("cpu")
    )
    b = play_games(
        None, 8, seed=5, cutoff=12, random_frac=0.0, gen=np.random.default_rng(0), device=torch.device("cpu")
    )
    assert (a["lengths"] <= 12).all() and len(a["moves"]) == a["lengths"].sum()
    np.testing.assert_array_equal(a["scores"], b["scores"])
    for lay, mv in zip(a["layouts"], a["moves"], strict=True):
        assert legal_mask(encode(lay))[mv]


def test_training_set__game_weight_and_move_weight_reach_every_move():
    cfg = PolicyConfig(**{**TINY, "move_weight": "linear_move_num"})
    g = play_games(
        None, 5, seed=2, cutoff=10, random_frac=0.0, gen=np.random.default_rng(0), device=torch.device("cpu")
    )
    x, y, w = training_set(cfg, [g])
    j = game_weights(g["scores"].astype(float))
    order = np.argsort(g["game"], kind="stable")
    gid = g["game"][order]
    expect = np.concatenate([np.abs(j[i]) * np.linspace(0, 1, (gid == i).sum()) for i in range(5)])
    np.testing.assert_allclose(w, expect, rtol=1e-6)
    assert y.shape == (len(x), 4)


def test_policy__poc_preset_is_the_seeds_proof_of_concept():
    cfg = make_config(PolicyConfig, PRESETS, "poc")
    assert (cfg.batch_size, cfg.forget_interval, cfg.cutoff, cfg.game_weight, cfg.target_score) == (
        200,
        40,
        20,
        "scores",
        87.0,
    )
    assert (cfg.hidden_j, cfg.hidden_k) == (200, 100)


def test_policy__tiny_run_resume_and_agent(tmp_path):
    full = run(make_config(PolicyConfig, **{**TINY, "epochs": 4}), tmp_path / "full")
    part = run(make_config(PolicyConfig, **{**TINY, "epochs": 2}), tmp_path / "part")
    run(make_config(PolicyConfig, **{**TINY, "epochs": 4}), part, resume=True)
    a, b = read_jsonl(full / "metrics.jsonl"), read_jsonl(part / "metrics.jsonl")
    assert [r["epoch"] for r in a] == [1, 2, 3, 4]
    assert [(r["score"], r["loss"]) for r in a] == [
        (r["score"], pytest.approx(r["loss"], rel=1e-5)) for r in b
    ]
    agent = load_agent(full)
    b0 = encode([1, 1, 2] + [0] * 13)
    assert legal_mask(b0)[int(agent.act(b0))]
    assert np.isclose(sum(agent.explain(b0).values()), 1.0, atol=1e-5) or len(agent.explain(b0)) < 4


def test_policy__random_games_are_a_count_and_random_frac_is_checked(tmp_path):
    out = run(make_config(PolicyConfig, **{**TINY, "epochs": 1, "random_games": 3}), tmp_path / "r")
    rec = read_jsonl(out / "metrics.jsonl")[0]
    assert rec["games"] == TINY["batch_size"] + 3
    with pytest.raises(ValueError, match=r"random_frac=1.5 must be a finite number in \[0, 1\]"):
        PolicyConfig(random_frac=1.5)
    with pytest.raises(ValueError, match="game_weight='median' is not one of"):
        PolicyConfig(game_weight="median")
    with pytest.raises(ValueError, match="never ends"):
        PolicyConfig(epochs=0)


def test_policy__agent_refuses_a_run_of_another_trainer(tmp_path):
    out = run(make_config(PolicyConfig, **{**TINY, "epochs": 1}), tmp_path / "p")
    with pytest.raises(ValueError, match="holds a 'policy' model, not a 'dqn' model"):
        make_agent("dqn", weights=str(out))


def test_policy__cli_trains_with_a_preset_and_overrides(tmp_path):
    from ai2048.cli import main

    out = tmp_path / "cli"
    args = [
        "train",
        "policy",
        "--preset",
        "poc",
        "--set",
        "batch_size=8",
        "--set",
        "epochs=2",
        "--set",
        "progress=false",
        "--set",
        "tensorboard=false",
    ]
    assert main([*args, "--out", str(out)]) == 0
    assert [r["epoch"] for r in read_jsonl(out / "metrics.jsonl")] == [1, 2]
    assert main(["train", "policy", "--set", "no_such_key=1", "--out", str(tmp_path / "bad")]) == 2
