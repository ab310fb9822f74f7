"""LazyZero (seed 001): network, search, training loop, agents, and the chance-node MCTS."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ai2048 import Game, encode, legal_mask  # noqa: E402
from ai2048.agents import load_agent, make_agent  # noqa: E402
from ai2048.engine import batch_move  # noqa: E402
from ai2048.envs.torch_env import EngineBatch, TorchEnv2048, from_boards, to_boards  # noqa: E402
from ai2048.nets.resnet import FusedPolicyValue, PolicyValueResNet, ResNetConfig, count_parameters  # noqa: E402
from ai2048.search.chance_mcts import chance_mcts  # noqa: E402
from ai2048.search.lazyzero import RandomRolloutEvaluator, choose_actions, lazy_search, masked_softmax  # noqa: E402
from ai2048.train.lazyzero import PRESETS, GameReplay, LazyZeroConfig, rotate_examples, run  # noqa: E402

TINY_RUN = {**PRESETS["tiny"], "num_envs": 4, "episodes_per_epoch": 4, "epochs": 1, "rollouts": 3,
            "test_rollouts": 2, "replay_min_games": 1, "minibatch_size": 16, "device": "cpu", "seed": 3}


def test_resnet__seed_config_has_72917_parameters():
    assert count_parameters(PolicyValueResNet(ResNetConfig())) == 72917


def test_resnet__configurable_sizes_change_the_count_and_shapes():
    net = PolicyValueResNet(ResNetConfig(channels=8, blocks=2, head_channels=4, head_blocks=1))
    assert count_parameters(net) != 72917
    logits, v = net(torch.zeros(5, 1, 4, 4))
    assert logits.shape == (5, 4) and v.shape == (5,)
    with pytest.raises(ValueError, match="value_activation"):
        ResNetConfig(value_activation="softplus")
    with pytest.raises(ValueError, match="kernel_size"):
        ResNetConfig(kernel_size=2)


@pytest.mark.parametrize(
    "cfg", [ResNetConfig(), ResNetConfig(channels=8, head_channels=4, head_blocks=1, value_activation="tanh")]
)
def test_fused__equals_eval_mode_network(cfg):
    torch.manual_seed(0)
    net = PolicyValueResNet(cfg)
    net.train()
    for _ in range(3):
        net(torch.randint(0, 12, (64, 1, 4, 4)).float())
    net.eval()
    x = torch.randint(0, 14, (40, 1, 4, 4)).float()
    with torch.no_grad():
        want = net(x)
    got = FusedPolicyValue(net)(x)
    torch.testing.assert_close(got[0], want[0], atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(got[1], want[1], atol=1e-4, rtol=1e-4)


def test_rotate_examples__moves_commute_with_quarter_turns():
    """move(turn(b), a + k) == turn(move(b, a)): the policy target turns with the board."""
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 5, (300, 16))
    boards = np.bitwise_or.reduce(cells.astype(np.uint64) << np.arange(0, 64, 4, dtype=np.uint64), axis=1)
    states = from_boards(boards)
    for k in range(4):
        kk = torch.full((300,), k)
        onehot = torch.eye(4)[torch.from_numpy(rng.integers(0, 4, 300))]
        turned, pol = rotate_examples(states, onehot, kk)
        a = onehot.argmax(1).numpy()
        ta = pol.argmax(1).numpy()
        assert (ta == (a + k) % 4).all()
        moved, _ = batch_move(boards, a)
        want, _ = rotate_examples(from_boards(moved), onehot, kk)
        got, _ = batch_move(to_boards(turned), ta)
        np.testing.assert_array_equal(got, to_boards(want))


def test_masked_softmax__zero_on_illegal_and_sums_to_one():
    legal = torch.tensor([[True, False, True, False], [False, False, False, False]])
    p = masked_softmax(torch.randn(2, 4), legal)
    assert (p[0, ~legal[0]] == 0).all()
    torch.testing.assert_close(p.sum(1), torch.ones(2))


def _uniform(states):
    n = states.shape[0]
    return torch.zeros(n, 4), states.reshape(n, 16).sum(1) / 100.0


@pytest.mark.parametrize("cls", [TorchEnv2048, EngineBatch])
def test_lazy_search__visits_each_legal_move_first_and_restores_the_root(cls):
    env = cls(6, seed=1)
    for _ in range(5):
        env.step(torch.randint(0, 4, (6,)))
    before, legal = env.boards(), env.legal_actions()
    visits, root_value = lazy_search(env, _uniform, rollouts=legal.sum(1).max().item() + 7, depth=3, puct=1.0,
                                     generator=torch.Generator().manual_seed(0))
    assert (env.boards() == before).all()
    assert (visits[~legal] == 0).all()
    assert ((visits >= 1) | ~legal).all()
    n_roll = legal.sum(1).max().item() + 7
    torch.testing.assert_close(visits.sum(1), torch.full((6,), float(n_roll)))
    assert root_value.shape == (6,)


def test_lazy_search__prefers_the_move_whose_leaves_score_higher():
    board = encode([1, 1, 0, 0] + [0] * 12)  # LEFT/RIGHT merge, UP is illegal

    def value(states):
        n = states.shape[0]
        empty = (states.reshape(n, 16) == 0).sum(1).float()
        return torch.zeros(n, 4), empty

    env = EngineBatch(1, seed=0)
    env.set_boards(np.array([board], dtype=np.uint64))
    gen = torch.Generator().manual_seed(1)
    visits, _ = lazy_search(env, value, rollouts=60, depth=1, puct=0.1, generator=gen)
    assert visits[0, 0] == 0  # UP illegal
    assert visits[0].argmax().item() in (1, 3)  # a merge leaves more empty cells


def test_choose_actions__argmax_at_zero_temperature_and_only_legal_moves():
    gen = torch.Generator().manual_seed(0)
    visits = torch.tensor([[1.0, 9.0, 3.0, 0.0]] * 50)
    legal = torch.tensor([[True, True, True, False]] * 50)
    assert (choose_actions(visits, legal, 0.0, gen) == 1).all()
    sampled = choose_actions(visits, legal, 1.0, gen)
    assert set(sampled.tolist()) <= {0, 1, 2} and len(set(sampled.tolist())) > 1


def test_game_replay__value_targets_are_log_moves_left():
    rep = GameReplay(2)
    rep.add(np.arange(5, dtype=np.uint64), np.full((5, 4), 0.25))
    _, _, v = rep.games[0]
    np.testing.assert_allclose(v, np.log([5, 4, 3, 2, 1]))
    rep.add(np.arange(3, dtype=np.uint64), np.full((3, 4), 0.25))
    rep.add(np.arange(2, dtype=np.uint64), np.full((2, 4), 0.25))
    assert len(rep) == 2 and len(rep.games[0][0]) == 3
    copy = GameReplay(2)
    copy.load_state_dict(rep.state_dict())
    assert [len(g[0]) for g in copy.games] == [3, 2]


def test_config__bad_values_raise_clear_errors():
    with pytest.raises(ValueError, match="replay_min_games"):
        LazyZeroConfig(replay_min_games=10, replay_max_games=5)
    with pytest.raises(ValueError, match="optimizer"):
        LazyZeroConfig(optimizer="adam")
    with pytest.raises(ValueError, match="num_envs"):
        LazyZeroConfig(num_envs=0)
    with pytest.raises(ValueError, match="channels"):
        LazyZeroConfig(channels=0)


def test_presets__seed_configs():
    assert set(PRESETS) == {"tiny", "mini", "gpu"}
    gpu = LazyZeroConfig(**PRESETS["gpu"])
    assert count_parameters(PolicyValueResNet(gpu.network())) == 72917
    assert (gpu.rollouts, gpu.rollout_depth, gpu.num_envs, gpu.minibatch_size) == (500, 3, 8192, 4096)
    tiny = LazyZeroConfig(**PRESETS["tiny"])
    tiny_sizes = (tiny.channels, tiny.blocks, tiny.rollouts, tiny.rollout_depth, tiny.num_envs)
    assert tiny_sizes == (8, 2, 100, 2, 32)


def test_run__absent_cuda_is_a_clear_error(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("CUDA is present")
    with pytest.raises(ValueError, match="CUDA"):
        run(LazyZeroConfig(**{**TINY_RUN, "device": "cuda"}), tmp_path / "r")


@pytest.mark.slow
def test_run__trains_writes_run_dir_resumes_and_agents_load(tmp_path):
    out = tmp_path / "run"
    run(LazyZeroConfig(**TINY_RUN), out)
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in lines] == [1]
    for key in ("moves_mean", "high_tile_mean", "loss", "policy_loss", "value_loss", "policy_accuracy"):
        assert math.isfinite(lines[0][key])
    meta = json.loads((out / "meta.json").read_text())
    assert meta["agent"] == "lazyzero" and meta["status"] == "completed"
    with pytest.raises(ValueError, match="already holds a run"):
        run(LazyZeroConfig(**TINY_RUN), out)
    with pytest.raises(ValueError, match="different settings: channels"):
        run(LazyZeroConfig(**{**TINY_RUN, "channels": 16, "epochs": 2}), out, resume=True)
    run(LazyZeroConfig(**{**TINY_RUN, "epochs": 2}), out, resume=True)
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["epoch"] for r in lines] == [1, 2]
    assert lines[1]["lr"] < lines[0]["lr"]

    agent = load_agent(out)
    g = Game(seed=4)
    for _ in range(20):
        a = agent.act(g.board)
        assert legal_mask(g.board)[int(a)]
        g.step(a)
    chance = make_agent("lazyzero-chance", weights=str(out), simulations=8, seed=0)
    assert legal_mask(g.board)[int(chance.act(g.board))]
    assert set(chance.explain(g.board)) <= {"up", "right", "down", "left"}


def test_run__trains_through_the_torch_env_backend(tmp_path, monkeypatch):
    """Seed 001's own design, the tensor env, drives the training and test games when asked for
    (``env_backend="torch"``; on a CPU "auto" picks the numba engine), and the run trains and plays."""
    import ai2048.train.lazyzero as trainer

    made = []

    def spy(backend, *args, **kwargs):
        env = make_batch_env(backend, *args, **kwargs)
        made.append(type(env))
        return env

    make_batch_env = trainer.make_batch_env
    monkeypatch.setattr(trainer, "make_batch_env", spy)
    out = tmp_path / "torch-env"
    small = {"num_envs": 2, "episodes_per_epoch": 2, "rollouts": 2, "test_rollouts": 1}
    run(LazyZeroConfig(**{**TINY_RUN, **small, "env_backend": "torch"}), out)
    assert made and set(made) == {TorchEnv2048}
    (line,) = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    for key in ("moves_mean", "high_tile_mean", "loss", "policy_loss", "value_loss"):
        assert math.isfinite(line[key])
    assert line["moves_mean"] > 0
    g = Game(seed=4)
    agent = load_agent(out)
    for _ in range(10):
        a = agent.act(g.board)
        assert legal_mask(g.board)[int(a)]
        g.step(a)


def test_run__resume_without_checkpoint_raises(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot resume"):
        run(LazyZeroConfig(**TINY_RUN), tmp_path / "none", resume=True)


def test_cli__train_lazyzero_tiny_budget(tmp_path):
    out = tmp_path / "cli"
    sets = [f"{k}={v}" for k, v in TINY_RUN.items() if k not in PRESETS["tiny"] or PRESETS["tiny"][k] != v]
    ai2048 = str(Path(sys.executable).parent / "ai2048")
    cmd = [ai2048, "train", "lazyzero", "--preset", "tiny", "--out", str(out)]
    for s in sets:
        cmd += ["--set", s]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    saved = json.loads((out / "config.json").read_text())
    assert saved == asdict(LazyZeroConfig(**TINY_RUN))


def test_random_rollout_agent__plays_legal_moves_and_values_playouts():
    ev = RandomRolloutEvaluator(seed=0)
    over = encode([1, 2, 1, 2, 2, 1, 2, 1] * 2)
    _, v = ev(from_boards(np.array([over, encode([1] + [0] * 15)], dtype=np.uint64)))
    assert v[0] == 0 and v[1] > math.log(5)
    agent = make_agent("lazyzero-random", rollouts=8, depth=2, seed=1)
    g = Game(seed=2)
    for _ in range(10):
        a = agent.act(g.board)
        assert legal_mask(g.board)[int(a)]
        g.step(a)


def test_chance_mcts__visits_sum_to_simulations_and_avoid_illegal_moves():
    board = encode([1, 1, 0, 0] + [0] * 12)
    visits = chance_mcts(np.array([board, board], dtype=np.uint64), _uniform, simulations=30)
    np.testing.assert_allclose(visits.sum(1), [30, 30])
    assert (visits[:, 0] == 0).all()  # UP is illegal


def test_chance_mcts__prefers_the_move_whose_leaves_score_higher():
    board = encode([1, 1, 0, 0] + [0] * 12)  # LEFT/RIGHT merge (more empty cells), DOWN does not

    def value(states):
        n = states.shape[0]
        return torch.zeros(n, 4), (states.reshape(n, 16) == 0).sum(1).float()

    visits = chance_mcts(np.array([board], dtype=np.uint64), value, simulations=60, puct=0.5)
    assert visits[0, 0] == 0
    assert visits[0].argmax() in (1, 3)


@pytest.mark.slow
def test_cli__sigterm_saves_and_the_run_resumes(tmp_path):
    """A background training job (SIGINT ignored, as under `&`) stopped by SIGTERM saves its
    state at the next move, exits cleanly, and --resume carries on from there."""
    import os
    import signal
    import time

    out = tmp_path / "bg"
    cmd = [
        str(Path(sys.executable).parent / "ai2048"), "train", "lazyzero", "--preset", "tiny",
        "--out", str(out), "--set", "num_envs=4", "--set", "episodes_per_epoch=4", "--set", "rollouts=3",
        "--set", "epochs=1000", "--set", "replay_min_games=1", "--set", "minibatch_size=16",
        "--set", "device=cpu",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.time() + 240
    while time.time() < deadline and not (out / "metrics.jsonl").is_file():
        time.sleep(0.5)
    assert (out / "metrics.jsonl").is_file(), "no epoch finished in time"
    os.kill(proc.pid, signal.SIGTERM)
    text, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "interrupted: saved after" in text + err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted"
    epochs = meta["progress"]["step"]
    assert epochs >= 1
    resumed = subprocess.run([*cmd[:3], "--out", str(out), "--resume", "--set", f"epochs={epochs + 1}"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert json.loads((out / "meta.json").read_text())["progress"]["step"] == epochs + 1
