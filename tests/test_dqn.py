"""DQN (seed 000): exploration rules by hand, shaping values, n-step, learning step, runs, resume, errors."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048 import decode, encode, legal_mask, move  # noqa: E402
from ai2048.agents import load_agent, make_agent  # noqa: E402
from ai2048.agents.deeprl import entropy_probabilities  # noqa: E402
from ai2048.checkpoint import read_jsonl  # noqa: E402
from ai2048.engine.board import exponents  # noqa: E402
from ai2048.nets import build_net  # noqa: E402
from ai2048.nets.device import resolve_device  # noqa: E402
from ai2048.nets.files import load_weights  # noqa: E402
from ai2048.train import dqn as dqn_module  # noqa: E402
from ai2048.train import get_trainer  # noqa: E402
from ai2048.train.config import make_config  # noqa: E402
from ai2048.train.dqn import (  # noqa: E402
    PRESETS,
    DQNConfig,
    Explorer,
    learning_rate,
    run,
    shaped_rewards,
    symmetric_batch,
    td_loss,
)
from ai2048.train.replay import NStep, ReplayMemory  # noqa: E402
from ai2048.train.torchrun import flushed_denormals, soft_update  # noqa: E402

TINY = {
    "episodes": 4, "num_envs": 4, "net": "conv", "batch_size": 16, "replay_ratio": 0.1, "progress": False,
    "checkpoint_every": 2, "tensorboard": False,
}


class FakeGen:
    """Stands in for numpy's Generator: scripted ``random()`` draws; ``choice`` returns the last option."""

    def __init__(self, draws):
        self.draws = list(draws)
        self.choices = []

    def random(self):
        return self.draws.pop(0)

    def choice(self, options, p=None):
        options = np.arange(options) if np.ndim(options) == 0 else options
        self.choices.append((np.asarray(options).tolist(), None if p is None else np.asarray(p).tolist()))
        return np.asarray(options)[-1]


def _explorer(kind, draws, **kw):
    gen = FakeGen(draws)
    return Explorer(DQNConfig(exploration=kind, **kw), gen), gen


def test_explorer__lai_robbins_credits_the_greedy_action_and_uses_eta_over_one_plus_nu_t():
    ex, gen = _explorer("lai_robbins", [0.9, 0.5])
    q = np.array([[1.0, 5.0, 3.0, 2.0]])
    mask = np.array([[True, True, True, False]])
    a, eps = ex.select(q, mask)  # t(a*) = 1 -> eps = 0.8 / 1.01; draw 0.9 > eps -> greedy
    assert a[0] == 1 and eps[0] == pytest.approx(0.8 / 1.01)
    a, eps = ex.select(q, mask)  # t(a*) = 2 -> eps = 0.8 / 1.02; draw 0.5 <= eps -> random legal
    assert eps[0] == pytest.approx(0.8 / 1.02)
    assert a[0] == 2 and gen.choices[-1][0] == [0, 1, 2]
    assert ex.counts.tolist() == [0, 2, 0, 0]  # the random action is not credited (seed quirk)


def test_explorer__torch_version_decays_exponentially_from_eps_start_to_eps_end():
    ex, _ = _explorer("torch_version", [0.99] * 3, eps_start=0.8, eps_end=0.02, eps_decay=1000.0)
    mask = np.ones((1, 4), dtype=bool)
    _, eps = ex.select(np.array([[0.0, 0.0, 1.0, 0.0]]), mask)
    assert eps[0] == pytest.approx(0.8)
    ex.steps = 1000
    a, eps = ex.select(np.array([[0.0, 0.0, 1.0, 0.0]]), mask)
    assert eps[0] == pytest.approx(0.02 + 0.78 * math.exp(-1.0))
    assert a[0] == 2 and ex.counts[2] == 2


def test_explorer__entropy_is_softmax_of_q_times_alpha_log_counts_plus_one_over_legal_actions():
    counts = np.array([0.0, 1.0, 3.0, 0.0])
    legal = np.array([True, True, True, False])
    p = entropy_probabilities(np.array([1.0, 2.0, 3.0, 4.0]), legal, counts, 1.0)
    # logits 1·log1, 2·log2, 3·log4 -> weights 1, 4, 64, and the illegal action gets nothing
    np.testing.assert_allclose(p, [1 / 69, 4 / 69, 64 / 69, 0.0])


def test_explorer__entropy_starts_uniform_over_legal_actions_and_counts_the_sampled_action():
    ex, gen = _explorer("entropy", [])
    a, eps = ex.select(np.array([[9.0, 1.0, 2.0, 3.0]]), np.array([[True, False, True, True]]))
    np.testing.assert_allclose(gen.choices[0][1], [1 / 3, 0, 1 / 3, 1 / 3])
    assert a[0] == 3 and ex.counts.tolist() == [0, 0, 0, 1]
    assert eps[0] == pytest.approx(2 / 3)


def test_explorer__only_legal_actions_are_ever_chosen():
    gen = np.random.default_rng(1)
    for kind in ("entropy", "lai_robbins", "torch_version", "greedy"):
        ex = Explorer(DQNConfig(exploration=kind), gen)
        q = gen.normal(size=(200, 4)) * 10
        masks = gen.random((200, 4)) < 0.5
        masks[np.arange(200), gen.integers(0, 4, 200)] = True
        a, _ = ex.select(q, masks)
        assert masks[np.arange(200), a].all(), kind


def test_shaping__progressive_bonus_penalty_and_win_bonus():
    board = [512, 512, 1024, 2048] + [2] * 4 + [0] * 8
    exps = np.array([[0 if v == 0 else v.bit_length() - 1 for v in board]], dtype=np.uint8)

    def reward(preset: str, won: bool) -> float:
        """The shaped reward of a step that merged 8 points (log2: 3) and left ``board``."""
        cfg = make_config(DQNConfig, PRESETS, preset)
        return shaped_rewards(cfg, np.array([8]), np.array([3]), exps, np.array([won]))[0]

    assert reward("shaping5", True) == pytest.approx(3 + (2 * 1 + 2.5 + 6) - 1.5 + 11)
    assert reward("shaping2", False) == pytest.approx(8)
    assert reward("shaping1", True) == pytest.approx(1.0)
    assert reward("shaping4", False) == pytest.approx(3 + 10.5)


def test_presets__seed000_is_the_saved_agents_configuration():
    cfg = make_config(DQNConfig, PRESETS, "seed000")
    want = {
        "net": "bigconv", "planes": 12, "batch_size": 384, "gamma": 0.995, "tau": 5e-3,
        "exploration": "entropy", "reward": "log2", "l2_reg": 3e-4, "replay_size": 10_000,
        "goal_tile": 2048, "num_envs": 1, "n_step": 1, "double_dqn": False,
    }
    assert {k: getattr(cfg, k) for k in want} == want


def test_presets__best_cpu_is_seed000_with_the_fc_net_augment_and_an_annealed_step_size():
    cfg = make_config(DQNConfig, PRESETS, "best_cpu")
    want = {
        "net": "fc", "planes": 16, "fc_neurons": 256, "fc_output_relu": False, "augment": True,
        "mask_next": True, "num_envs": 16, "replay_ratio": 0.0625, "replay_size": 50_000, "goal_tile": 0,
        "duration": 3300.0, "gamma": 0.995, "batch_size": 384, "exploration": "entropy", "reward": "log2",
    }
    assert {k: getattr(cfg, k) for k in want} == want
    net = build_net(cfg.net_spec())
    assert [tuple(m.weight.shape) for m in net.layers] == [(256, 256), (256, 256), (4, 256)]
    q = net(net.encode(np.zeros((2, 16), dtype=np.uint8)))
    assert q.shape == (2, 4)
    assert learning_rate(cfg, 0) == cfg.lr and learning_rate(cfg, 10**8) == pytest.approx(5e-5)


def test_learning_rate__decays_linearly_to_lr_end_then_holds_and_is_constant_by_default():
    cfg = DQNConfig(lr=1e-3, lr_end=1e-4, lr_decay_steps=1000)
    assert [learning_rate(cfg, s) for s in (0, 500, 1000, 5000)] == pytest.approx([1e-3, 5.5e-4, 1e-4, 1e-4])
    assert learning_rate(DQNConfig(lr=2e-3), 10**9) == 2e-3
    with pytest.raises(ValueError, match="lr_decay_steps"):
        DQNConfig(lr_decay_steps=-1)


def test_dqn__the_optimiser_uses_the_annealed_learning_rate(tmp_path):
    cfg = make_config(DQNConfig, **{**TINY, "lr": 1e-3, "lr_end": 2e-4, "lr_decay_steps": 1})
    out = run(cfg, tmp_path / "run")
    ckpt = torch.load(out / "checkpoint.pt", weights_only=True)
    assert ckpt["counters"]["grad_steps"] > 0
    assert [g["lr"] for g in ckpt["optimizer"]["param_groups"]] == pytest.approx([2e-4])


def test_nstep__returns_discounted_sums_and_flushes_at_the_end_of_a_game():
    ns = NStep(1, 3, 0.5)
    m = np.ones(4, dtype=bool)
    assert ns.push(0, 10, 0, 1.0, 11, False, False, m) == []
    assert ns.push(0, 11, 1, 2.0, 12, False, False, m) == []
    (t,) = ns.push(0, 12, 2, 4.0, 13, False, False, m)
    assert t[:6] == (10, 0, 1.0 + 0.5 * 2.0 + 0.25 * 4.0, 13, False, 0.125)
    out = ns.push(0, 13, 3, 8.0, 14, True, True, m)
    assert [(s, ret, term, disc) for s, _, ret, _, term, disc, _ in out] == [
        (11, 2.0 + 0.5 * 4.0 + 0.25 * 8.0, True, 0.125),
        (12, 4.0 + 0.5 * 8.0, True, 0.25),
        (13, 8.0, True, 0.5),
    ]
    assert ns.pending == [[]]


def _random_batch(n=64, seed=0):
    rng = np.random.default_rng(seed)
    mem = ReplayMemory(n)
    for _ in range(n):
        e = rng.integers(0, 8, 16)
        b = encode(e)
        legal = legal_mask(b)
        a = int(rng.choice(np.flatnonzero(legal))) if legal.any() else 0
        e2 = rng.integers(0, 8, 16)
        b2 = encode(e2)
        mem.push(b, a, float(rng.integers(0, 5)), b2, bool(rng.random() < 0.1), 0.99, legal_mask(b2))
    return mem.batch(np.arange(n))


@pytest.mark.parametrize("double", [False, True])
def test_td_loss__one_optimisation_step_decreases_the_loss_on_a_fixed_batch(double):
    torch.manual_seed(0)
    cfg = DQNConfig(net="conv", double_dqn=double, l2_reg=1e-3)
    policy = build_net(cfg.net_spec())
    target = build_net(cfg.net_spec()).eval()
    target.load_state_dict(policy.state_dict())
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-3, amsgrad=True)
    batch = _random_batch()
    before, _ = td_loss(cfg, policy, target, batch, torch.device("cpu"))
    opt.zero_grad()
    before.backward()
    opt.step()
    after, _ = td_loss(cfg, policy, target, batch, torch.device("cpu"))
    assert after.item() < before.item()


def test_td_loss__includes_a_real_l2_term():
    torch.manual_seed(0)
    batch = _random_batch()
    cfg0, cfg1 = DQNConfig(net="conv", l2_reg=0.0), DQNConfig(net="conv", l2_reg=0.5)
    policy = build_net(cfg0.net_spec())
    target = build_net(cfg0.net_spec()).eval()
    l0, h0 = td_loss(cfg0, policy, target, batch, torch.device("cpu"))
    l1, h1 = td_loss(cfg1, policy, target, batch, torch.device("cpu"))
    l2 = sum((w**2).sum() for w in policy.l2_weights()).item()
    assert l0.item() == pytest.approx(h0.item())
    assert l1.item() - h1.item() == pytest.approx(0.25 * l2, rel=1e-4)


def test_symmetric_batch__the_eight_symmetries_map_a_drawn_board_and_relabel_its_move():
    b = encode([[1, 2, 0, 0],
                [0, 0, 0, 0],
                [0, 0, 0, 0],
                [0, 0, 0, 3]])
    batch = {
        "s": np.full(8, b, dtype=np.uint64),
        "s2": np.full(8, b, dtype=np.uint64),
        "a": np.full(8, 1),
        "m2": np.tile([True, True, False, False], (8, 1)),
    }
    out = symmetric_batch(batch, np.arange(8))
    # flip; RIGHT stays
    assert decode(out["s"][1]).tolist() == [[0, 0, 0, 3], [0, 0, 0, 0], [0, 0, 0, 0], [1, 2, 0, 0]]
    # mirror; RIGHT -> LEFT
    assert decode(out["s"][2]).tolist() == [[0, 0, 2, 1], [0, 0, 0, 0], [0, 0, 0, 0], [3, 0, 0, 0]]
    # transpose; RIGHT -> DOWN
    assert decode(out["s"][4]).tolist() == [[1, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]]
    assert out["a"].tolist() == [1, 1, 3, 3, 2, 2, 0, 0]
    assert out["m2"][4].tolist() == [False, False, True, True]  # legal UP, RIGHT -> legal LEFT, DOWN
    assert len({int(x) for x in out["s"]}) == 8  # eight different boards
    assert batch["a"].tolist() == [1] * 8  # the input is not modified


def test_symmetric_batch__every_symmetry_commutes_with_the_move_and_the_legal_mask():
    rng = np.random.default_rng(5)
    boards = np.array([encode(rng.integers(0, 7, 16)) for _ in range(40)], dtype=np.uint64)
    for a in range(4):
        s2 = np.array([move(b, a)[0] for b in boards], dtype=np.uint64)
        batch = {"s": boards, "s2": s2, "a": np.full(40, a), "m2": np.array([legal_mask(x) for x in s2])}
        which = rng.integers(0, 8, 40)
        out = symmetric_batch(batch, which)
        for i in range(40):
            assert move(out["s"][i], int(out["a"][i]))[0] == out["s2"][i], (a, which[i])
            assert legal_mask(out["s2"][i]).tolist() == out["m2"][i].tolist()


def test_dqn__augment_changes_what_is_learned_and_resumes_exactly(tmp_path):
    plain = run(make_config(DQNConfig, **TINY), tmp_path / "plain")
    full = run(make_config(DQNConfig, **{**TINY, "augment": True, "episodes": 6}), tmp_path / "full")
    part = run(make_config(DQNConfig, **{**TINY, "augment": True, "episodes": 3}), tmp_path / "part")
    run(make_config(DQNConfig, **{**TINY, "augment": True, "episodes": 6}), part, resume=True)
    a, b = read_jsonl(full / "metrics.jsonl"), read_jsonl(part / "metrics.jsonl")
    p = read_jsonl(plain / "metrics.jsonl")
    assert [r["loss"] for r in a] == pytest.approx([r["loss"] for r in b], rel=1e-5)
    assert [r["score"] for r in a] == [r["score"] for r in b]
    assert [r["loss"] for r in a[:3]] != pytest.approx([r["loss"] for r in p[:3]], rel=1e-3)


def test_soft_update__moves_target_tau_of_the_way():
    a, b = build_net({"name": "conv"}), build_net({"name": "conv"})
    wa, wb = a.fc.weight.detach().clone(), b.fc.weight.detach().clone()
    soft_update(a, b, 0.25)
    torch.testing.assert_close(a.fc.weight.detach(), 0.75 * wa + 0.25 * wb)


def test_dqn__tiny_run_writes_a_playable_run_directory(tmp_path):
    out = run(make_config(DQNConfig, **TINY), tmp_path / "run")
    recs = read_jsonl(out / "metrics.jsonl")
    assert [r["episode"] for r in recs] == list(range(1, len(recs) + 1)) and len(recs) >= 4
    for key in ("score", "length", "max_tile", "loss", "epsilon", "actions"):
        assert key in recs[-1]
    assert sum(recs[0]["actions"]) == recs[0]["length"]
    meta = json.loads((out / "meta.json").read_text())
    assert meta["agent"] == "dqn" and meta["status"] == "completed"
    agent = load_agent(out)
    rng = np.random.default_rng(3)
    for _ in range(50):
        b = encode(rng.integers(0, 10, 16))
        if legal_mask(b).any():
            assert legal_mask(b)[int(agent.act(b))]
    assert set(agent.explain(encode([1, 1] + [0] * 14))) <= {"up", "right", "down", "left"}


def test_dqn__resume_continues_exactly_as_an_uninterrupted_run(tmp_path):
    full = run(make_config(DQNConfig, **{**TINY, "episodes": 8}), tmp_path / "full")
    part = run(make_config(DQNConfig, **{**TINY, "episodes": 4}), tmp_path / "part")
    run(make_config(DQNConfig, **{**TINY, "episodes": 8}), part, resume=True)
    a, b = read_jsonl(full / "metrics.jsonl"), read_jsonl(part / "metrics.jsonl")
    games = [[(r["episode"], r["score"], r["length"]) for r in recs] for recs in (a, b)]
    assert games[0] == games[1]
    assert [r["loss"] for r in a] == pytest.approx([r["loss"] for r in b], rel=1e-5)


def test_dqn__resume_refuses_other_settings_and_missing_runs(tmp_path):
    out = run(make_config(DQNConfig, **TINY), tmp_path / "run")
    with pytest.raises(ValueError, match="different settings: net \\(saved 'conv', now 'fc'\\)"):
        run(make_config(DQNConfig, **{**TINY, "net": "fc"}), out, resume=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run(make_config(DQNConfig, **TINY), tmp_path / "nothing", resume=True)
    with pytest.raises(ValueError, match="already holds a run"):
        run(make_config(DQNConfig, **TINY), out)


def test_dqn__checkpoint_of_another_network_is_refused_naming_the_difference(tmp_path):
    net = build_net({"name": "conv", "planes": 16})
    other = build_net({"name": "bigconv", "planes": 12})
    conv16 = {"name": "conv", "planes": 16}
    with pytest.raises(ValueError, match="name: checkpoint 'bigconv' vs config 'conv'"):
        load_weights(net, conv16, {"name": "bigconv", "planes": 12}, other.state_dict(), "ckpt")
    small = build_net({"name": "conv", "planes": 12})
    with pytest.raises(ValueError, match="does not fit network 'conv': shape of fc.weight"):
        load_weights(net, conv16, conv16, small.state_dict(), "ckpt")


def test_dqn__unknown_config_key_and_bad_values_are_clear_errors():
    with pytest.raises(ValueError, match="DQNConfig has no key\\(s\\) epsilon_start; valid keys: "):
        make_config(DQNConfig, epsilon_start=0.5)
    with pytest.raises(ValueError, match="unknown preset 'seed999'"):
        make_config(DQNConfig, PRESETS, "seed999")
    with pytest.raises(ValueError, match="exploration='boltzmann' is not one of"):
        DQNConfig(exploration="boltzmann")
    with pytest.raises(ValueError, match="goal_tile=1000 must be a power of two"):
        DQNConfig(goal_tile=1000)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_dqn__asking_for_cuda_without_it_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="device='cuda' was asked for but torch sees no CUDA device"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="device='tpu' is not one of"):
        resolve_device("tpu")
    assert resolve_device("auto").type == "cpu"
    with pytest.raises(ValueError, match="no CUDA device"):
        run(make_config(DQNConfig, **{**TINY, "device": "cuda"}), tmp_path / "run")


def test_dqn__registered_as_trainer_and_agent(tmp_path):
    trainer = get_trainer("dqn")
    assert trainer.config_cls is DQNConfig and "seed000" in trainer.presets
    assert all(f.metadata.get("help") for f in dataclasses.fields(DQNConfig))
    with pytest.raises(FileNotFoundError, match="holds no trained dqn model"):
        make_agent("dqn", weights=str(tmp_path))


def test_dqn__cli_trains_and_eval_plays_the_run(tmp_path):
    from ai2048.cli import main

    out = tmp_path / "cli"
    sets = [f"--set={k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in TINY.items()]
    assert main(["train", "dqn", *sets, "--out", str(out)]) == 0
    assert (out / "model.pt").is_file()
    assert main(["train", "dqn", "--set", "episodes=6", "--out", str(out), "--resume"]) == 0
    assert read_jsonl(out / "metrics.jsonl")[-1]["episode"] >= 6
    agent = make_agent("dqn", weights=str(out))
    boards = exponents(np.array([encode([1, 1] + [0] * 14)], dtype=np.uint64))
    assert boards.shape == (1, 16)
    assert legal_mask(encode([1, 1] + [0] * 14))[int(agent.act(encode([1, 1] + [0] * 14)))]


@pytest.mark.slow
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_dqn__ctrl_c_or_sigterm_saves_a_checkpoint_and_resume_continues(tmp_path, sig):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    cfg = {**TINY, "episodes": 10_000, "checkpoint_every": 10_000}
    code = f"from ai2048.train.dqn import DQNConfig, run; run(DQNConfig(**{cfg!r}), {str(out)!r})"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (out / "metrics.jsonl").exists() and len(read_jsonl(out / "metrics.jsonl")) >= 2:
                break
            time.sleep(0.2)
        proc.send_signal(getattr(signal, sig))
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted"
    done = meta["progress"]["games"]
    assert done == len(read_jsonl(out / "metrics.jsonl")) >= 2
    run(make_config(DQNConfig, **{**cfg, "episodes": done + 2}), out, resume=True)
    assert [r["episode"] for r in read_jsonl(out / "metrics.jsonl")][: done + 2] == list(range(1, done + 3))


def test_dqn_agent__entropy_policy_samples_legal_moves_reproducibly(tmp_path):
    out = run(make_config(DQNConfig, **TINY), tmp_path / "run")
    a = make_agent("dqn", weights=str(out), policy="entropy", seed=7)
    b = make_agent("dqn", weights=str(out), policy="entropy", seed=7)
    rng = np.random.default_rng(5)
    boards = [encode(rng.integers(0, 9, 16)) for _ in range(40)]
    boards = np.array([x for x in boards if legal_mask(x).any()], dtype=np.uint64)
    acts = a.act_batch(boards)
    assert (acts == b.act_batch(boards)).all()
    assert all(legal_mask(int(x))[m] for x, m in zip(boards, acts, strict=True))
    with pytest.raises(ValueError, match="policy='softmax' is not one of"):
        make_agent("dqn", weights=str(out), policy="softmax")


def test_flushed_denormals__tiny_values_count_as_zero_inside_and_ieee_again_after():
    denormal = torch.tensor([1e-39])
    with flushed_denormals() as ok:
        if not ok:
            pytest.skip("this CPU cannot flush denormals")
        assert (denormal * 1.0).item() == 0.0
    assert (denormal * 1.0).item() != 0.0


def test_run__trains_with_denormals_flushed_and_leaves_the_process_as_it_was(tmp_path, monkeypatch):
    entered = []

    @contextlib.contextmanager
    def recording():
        with flushed_denormals() as ok:
            entered.append(ok)
            yield ok

    monkeypatch.setattr(dqn_module, "flushed_denormals", recording)
    run(make_config(DQNConfig, **{**TINY, "episodes": 1}), tmp_path / "run")
    assert len(entered) == 1
    assert (torch.tensor([1e-39]) * 1.0).item() != 0.0


def test_dqn__no_burst_of_gradient_steps_when_learning_starts(tmp_path):
    # Regression: the credit of every move before learn_start was spent at once (shaping5: 385 steps
    # at episode 3).
    cfg = make_config(DQNConfig, **{**TINY, "learn_start": 300, "replay_ratio": 0.5, "checkpoint_every": 100})
    recs = read_jsonl(run(cfg, tmp_path / "run") / "metrics.jsonl")
    assert recs[-1]["grad_steps"] > 0
    for r in recs:  # at most one step per half move once 300 transitions are stored (plus the n-step lag)
        owed = max(0, r["env_steps"] - 300 + cfg.num_envs * cfg.n_step) * cfg.replay_ratio
        assert r["grad_steps"] <= owed + 1, r
