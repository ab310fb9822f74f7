"""Steps/s of the torch tensor env (seed 001's design) beside the numba vector kernel.

Random legal moves on N games, finished games reset. The baseline is
``ai2048.engine.batch.batch_step`` on the same N, measured in the same run, so the ratio stays
meaningful on a loaded machine. Also times ``EngineBatch`` (the same interface on numba boards)
and, when CUDA is present, the tensor env on the GPU.

    python benchmarks/bench_torch_env.py [--envs 1024 8192] [--seconds 3] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
import torch

from ai2048.engine.batch import batch_reset, batch_step
from ai2048.envs.torch_env import EngineBatch, TorchEnv2048


def numba_steps_per_s(n: int, seconds: float) -> float:
    boards = np.zeros(n, dtype=np.uint64)
    rng = np.random.SeedSequence(0).generate_state(n, np.uint64)
    out = [np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_), np.zeros((n, 4), np.bool_),
           np.zeros(n, np.uint8), np.zeros(n, np.int64), np.zeros((n, 4, 4), np.uint8)]
    batch_reset(boards, rng, 0.9, np.ones(n, dtype=np.bool_), *out[3:], numba.get_num_threads())
    gen = np.random.default_rng(0)
    batch_step(boards, gen.integers(0, 4, n), rng, 0.9, *out)  # compile outside the clock
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        pick = np.argmax(np.where(out[3], gen.random((n, 4)), -1.0), axis=1)
        batch_step(boards, pick, rng, 0.9, *out)
        done = np.asarray(~out[3].any(1), dtype=np.bool_)
        if done.any():
            batch_reset(boards, rng, 0.9, done, *out[3:], numba.get_num_threads())
        steps += n
    return steps / (time.perf_counter() - t0)


def env_steps_per_s(env: TorchEnv2048 | EngineBatch, seconds: float) -> float:
    gen = torch.Generator(device=env.device).manual_seed(0)
    n = env.num_envs

    def one() -> None:
        legal = env.legal_actions().float()
        pick = (legal * torch.rand(n, 4, generator=gen, device=env.device)).argmax(1)
        env.step(pick)
        env.reset_terminated()

    one()
    if env.device.type == "cuda":
        torch.cuda.synchronize()
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        one()
        steps += n
    if env.device.type == "cuda":
        torch.cuda.synchronize()
    return steps / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--envs", type=int, nargs="+", default=[32, 1024, 8192])
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--threads", type=int, default=1, help="torch and numba threads")
    args = p.parse_args()
    import numba

    torch.set_num_threads(args.threads)
    numba.set_num_threads(max(1, min(args.threads, getattr(numba.config, "NUMBA_NUM_THREADS", 1))))
    print(f"threads={args.threads}  (random legal moves, finished games reset)")
    print(f"{'N':>6} {'backend':<22} {'steps/s':>12} {'vs numba batch_step':>20}")
    for n in args.envs:
        base = numba_steps_per_s(n, args.seconds)
        rows = [("numba batch_step", base),
                ("EngineBatch (numba)", env_steps_per_s(EngineBatch(n, seed=0), args.seconds)),
                ("TorchEnv2048 cpu", env_steps_per_s(TorchEnv2048(n, "cpu", seed=0), args.seconds))]
        if torch.cuda.is_available():
            rows.append(("TorchEnv2048 cuda", env_steps_per_s(TorchEnv2048(n, "cuda", seed=0), args.seconds)))
        for name, rate in rows:
            print(f"{n:>6} {name:<22} {rate:>12,.0f} {rate / base:>19.3f}x")


if __name__ == "__main__":
    main()
