"""Training throughput of the DQN trainer: env steps/s of data collection and gradient steps/s.

Collection = encode the boards, one Q-network forward, the seed's exploration rule, one batched
numba step (``BoardBatch``), n-step bookkeeping into the replay memory: exactly the trainer's
inner loop without learning. The baseline is the same loop on ONE game (seed 000's loop shape),
measured in the same run, so the ratio stays meaningful on a loaded machine. Gradient steps/s
are timed for the seed's network and batch (bigconv, 12 planes, batch 384) and for ai2048's
default (bigconv, 16 planes, batch 256, double DQN, 3-step) and for the seed's fully connected
net on 16 planes (``fc``, 256 wide, linear output) with and without learning under the board's 8
symmetries (``augment``), with the seed000 numbers as the baseline.

    python benchmarks/bench_dqn.py [--envs 1 16 64 256] [--seconds 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch

from ai2048.nets import build_net
from ai2048.train.config import make_config
from ai2048.train.dqn import PRESETS, DQNConfig, Explorer, symmetric_batch, td_loss
from ai2048.train.games import BoardBatch
from ai2048.train.replay import NStep, ReplayMemory
from ai2048.train.torchrun import soft_update


def collect_steps_per_s(cfg: DQNConfig, seconds: float) -> float:
    """Env transitions per second of the trainer's collection loop (no learning)."""
    net = build_net(cfg.net_spec()).eval()
    games = BoardBatch(cfg.num_envs, 0)
    explorer = Explorer(cfg, np.random.default_rng(0))
    memory = ReplayMemory(100_000)
    nstep = NStep(cfg.num_envs, cfg.n_step, cfg.gamma)
    steps, t0 = 0, None
    while t0 is None or time.perf_counter() - t0 < seconds:
        prev = games.boards.copy()
        with torch.no_grad():
            q = net(net.encode(games.exponents())).numpy()
        actions, _ = explorer.select(q, games.masks)
        st = games.step(actions)
        for i in range(cfg.num_envs):
            for tr in nstep.push(
                i,
                int(prev[i]),
                int(actions[i]),
                1.0,
                int(st.boards[i]),
                bool(st.terminal[i]),
                bool(st.done[i]),
                st.masks[i],
            ):
                memory.push(*tr)
        games.restart(st.done)
        if t0 is None:
            t0 = time.perf_counter()  # first step compiles the kernels
            continue
        steps += cfg.num_envs
    return steps / (time.perf_counter() - t0)


def grad_steps_per_s(cfg: DQNConfig, seconds: float) -> float:
    """Gradient steps per second: sample, (augment,) encode, Huber + L2 loss, backward, clip, AdamW, soft
    update."""
    policy = build_net(cfg.net_spec())
    target = copy.deepcopy(policy).eval()
    opt = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, amsgrad=True, foreach=True)
    gen = np.random.default_rng(0)
    memory = ReplayMemory(20_000)
    games = BoardBatch(256, 1)
    while len(memory) < memory.capacity:
        prev = games.boards.copy()
        actions = np.argmax(games.masks * gen.random((256, 4)), axis=1)
        st = games.step(actions)
        for i in range(256):
            memory.push(
                int(prev[i]),
                int(actions[i]),
                1.0,
                int(st.boards[i]),
                bool(st.terminal[i]),
                cfg.gamma,
                st.masks[i],
            )
        games.restart(st.done)
    steps, t0 = 0, None
    while t0 is None or time.perf_counter() - t0 < seconds:
        batch = memory.batch(memory.sample(gen, cfg.batch_size))
        if cfg.augment:
            batch = symmetric_batch(batch, gen.integers(0, 8, size=cfg.batch_size))
        loss, _ = td_loss(cfg, policy, target, batch, torch.device("cpu"))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy.parameters(), cfg.grad_clip)
        opt.step()
        soft_update(target, policy, cfg.tau)
        if t0 is None:
            t0 = time.perf_counter()
            continue
        steps += 1
    return steps / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", type=int, nargs="+", default=[1, 16, 64, 256])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    seed = make_config(DQNConfig, PRESETS, "seed000")
    ours = DQNConfig()
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.seconds:.0f} s per figure")
    base = None
    for n in args.envs:
        rate = collect_steps_per_s(
            make_config(DQNConfig, exploration="entropy", num_envs=n, net="bigconv"), args.seconds
        )
        base = base or rate
        print(
            f"collect  bigconv, entropy, {n:4d} games : {rate:10,.0f} env steps/s  ({rate / base:5.1f}x one "
            "game)"
        )
    g_seed = grad_steps_per_s(seed, args.seconds)
    print(
        f"learn    seed000 (bigconv/12, batch 384)  : {g_seed:10,.1f} grad steps/s  ({g_seed * 384:,.0f} "
        "samples/s, baseline)"
    )
    g_ours = grad_steps_per_s(ours, args.seconds)
    print(
        f"learn    default (bigconv/16, batch 256, double, 3-step): {g_ours:10,.1f} grad steps/s  "
        f"({g_ours * 256:,.0f} samples/s, {g_ours * 256 / (g_seed * 384):.2f}x samples/s)"
    )
    for augment in (False, True):
        fc = make_config(
            DQNConfig,
            PRESETS,
            "seed000",
            net="fc",
            planes=16,
            fc_neurons=256,
            fc_output_relu=False,
            augment=augment,
        )
        g_fc = grad_steps_per_s(fc, args.seconds)
        print(
            f"learn    seed000 with fc/16 (256 wide){', augment' if augment else ''}: {g_fc:10,.1f} grad "
            f"steps/s  ({g_fc / g_seed:.1f}x seed000)"
        )


if __name__ == "__main__":
    main()
