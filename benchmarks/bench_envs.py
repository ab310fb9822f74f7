"""Env speed: a plain ``gymnasium.make`` loop and ``make_vec`` random stepping, side by side with
OpenSpiel's and pgx's 2048 when they are installed (``pip install 'ai2048[bench]'``).

Each figure is printed with its ratio against a baseline measured in the same run.
``--sweep`` instead times the batch core alone (``GameBatch.step``, random legal actions) at
several batch sizes, serial kernel (thread CPU time) against parallel kernel (wall clock), the
figures behind ``PARALLEL_MIN_GAMES``. ``--parts`` splits one ``make_vec`` step into the action
picking, the kernel call and the env's own Python around it, serial and parallel kernels
interleaved, in wall and main-thread CPU time (what cannot use a second core shows as CPU time of
the main thread).

    python benchmarks/bench_envs.py [--seconds 2] [--num-envs 4096] [--sweep | --parts]
"""

from __future__ import annotations

import argparse
import os
import time

import numba
import numpy as np

from ai2048 import bench
from ai2048.bench.kernels import pick_legal
from ai2048.engine.rng import seed_state
from ai2048.envs.batch import GameBatch


def batch_rate(n: int, parallel: bool, seconds: float) -> tuple[float, float, float]:
    """(steps/s, steps per process CPU second, cores got) of ``GameBatch.step`` on ``n`` games with
    random legal actions; steps/s is in thread CPU time for the serial kernel, wall for the parallel."""
    games = GameBatch(n, seed=0, parallel=parallel)
    games.reset()
    actions = np.zeros(n, dtype=np.int64)
    state = seed_state(1)

    def run(iters: int) -> None:
        for _ in range(iters):
            pick_legal(games.masks, state, actions)
            games.step(actions, autoreset=True)

    run(5)  # compile or load from the cache
    iters = max(1, 2_000_000 // n)
    best, per_cpu, got = 0.0, 0.0, 0.0
    end = time.perf_counter() + seconds
    while True:
        w, c, t = time.perf_counter(), time.process_time(), time.thread_time()
        run(iters)
        wall, cpu = time.perf_counter() - w, max(time.process_time() - c, 1e-9)
        rate = iters * n / (wall if parallel else max(time.thread_time() - t, 1e-9))
        if rate > best:
            best, per_cpu, got = rate, iters * n / cpu, cpu / wall
        if time.perf_counter() > end:
            return best, per_cpu, got


def sweep(seconds: float) -> None:
    """Serial against parallel at several N: the parallel wall rate needs idle cores (see "got");
    steps per process CPU second shows what the threads cost in any case."""
    threads = numba.get_num_threads()
    print(f"{'N':>7} {'serial (thread CPU)':>20} {f'parallel {threads} thr (wall)':>24} {'ratio':>6} "
          f"{'parallel per CPU-s':>19} {'cores got':>9}")
    for n in (64, 256, 1024, 4096, 16384, 65536):
        serial, _, _ = batch_rate(n, False, seconds)
        par, per_cpu, got = batch_rate(n, True, seconds)
        print(f"{n:>7} {bench.fmt_rate(serial, 'steps/s'):>20} {bench.fmt_rate(par, 'steps/s'):>24} "
              f"{par / serial:>5.2f}x {bench.fmt_rate(per_cpu, 'steps/s'):>19} {got:>9.2f}")
    print(f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs)")


def parts(n: int, rounds: int) -> None:
    """Per-step µs of each part of ``make_vec``'s random stepping at ``n`` envs: best of
    ``rounds`` rounds, the serial and parallel kernels taking turns within each round."""
    import gymnasium as gym

    from ai2048.envs import ENV_ID

    actions = np.zeros(n, dtype=np.int64)
    state = seed_state(0)
    envs = {p: gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", parallel=p)
            for p in (False, True)}
    best: dict[tuple[bool, str, str], float] = {}
    iters = max(10, 400_000 // n)
    for r in range(rounds + 1):  # round 0 compiles and warms up
        for p, venv in envs.items():
            games = venv.unwrapped.games  # type: ignore[attr-defined]
            _, infos = venv.reset(seed=r)
            acc = {k: [0.0, 0.0] for k in ("pick actions", "env.step", "of which kernel + allocation")}
            for _ in range(iters):
                w, t = time.perf_counter(), time.thread_time()
                pick_legal(infos["action_mask"], state, actions)
                w2, t2 = time.perf_counter(), time.thread_time()
                _, _, _, _, infos = venv.step(actions)
                w3, t3 = time.perf_counter(), time.thread_time()
                acc["pick actions"][0] += w2 - w
                acc["pick actions"][1] += t2 - t
                acc["env.step"][0] += w3 - w2
                acc["env.step"][1] += t3 - t2
            # the kernel call alone, as the env makes it (same batch, games carry on)
            w, t = time.perf_counter(), time.thread_time()
            for _ in range(iters):
                games.step(actions, autoreset=True, snapshot=True)
            acc["of which kernel + allocation"] = [time.perf_counter() - w, time.thread_time() - t]
            if r:
                for k, (wall, cpu) in acc.items():
                    for clock, v in (("wall", wall), ("cpu", cpu)):
                        key = (p, k, clock)
                        best[key] = min(best.get(key, np.inf), v / iters * 1e6)
    print(f"make_vec {n} envs, µs per step (best of {rounds} rounds; cpu = main thread CPU time)")
    print(f"{'part':<30} {'serial wall':>12} {'serial cpu':>11} {'parallel wall':>14} {'parallel cpu':>13}")
    for k in ("pick actions", "env.step", "of which kernel + allocation"):
        row = [best[(p, k, c)] for p in (False, True) for c in ("wall", "cpu")]
        print(f"{k:<30} {row[0]:>12.1f} {row[1]:>11.1f} {row[2]:>14.1f} {row[3]:>13.1f}")
    loop = {p: best[(p, "pick actions", "wall")] + best[(p, "env.step", "wall")] for p in (False, True)}
    print(f"whole loop: serial {n / loop[False]:.2f} M steps/s, parallel {n / loop[True]:.2f} M steps/s "
          f"({loop[False] / loop[True]:.2f}x), numba threads {numba.get_num_threads()}")
    print(f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0, help="time budget per measurement")
    p.add_argument("--num-envs", type=int, default=4096, help="envs in the make_vec measurement")
    p.add_argument("--sweep", action="store_true", help="time the batch core serial vs parallel at several N")
    p.add_argument("--parts", action="store_true", help="make_vec step by parts, serial vs parallel")
    p.add_argument("--rounds", type=int, default=5, help="rounds of --parts (best one is printed)")
    args = p.parse_args()
    if args.parts:
        parts(args.num_envs, args.rounds)
        return
    if args.sweep:
        sweep(args.seconds)
        return
    figs = bench.run(
        ["gym", "vector"], seconds=args.seconds, num_envs=args.num_envs, games=200, progress=print
    )
    print(bench.render(figs))


if __name__ == "__main__":
    main()
