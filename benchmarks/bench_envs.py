"""Env speed: a plain ``gymnasium.make`` loop and ``make_vec`` random stepping, side by side with
OpenSpiel's and pgx's 2048 when they are installed (``pip install 'ai2048[bench]'``).

Each figure is printed with its ratio against a baseline measured in the same run.
``--sweep`` instead times the batch core alone (``GameBatch.step``, random legal actions) at
several batch sizes, serial kernel (thread CPU time) against parallel kernel (wall clock), the
figures behind ``PARALLEL_MIN_GAMES``. ``--scaling`` times ``make_vec`` end to end (the same
random-legal loop as ``ai2048 bench``) on one numba thread and on two at each size, wall clock for
both, so old and new trees can be compared in one run (``PYTHONPATH=old/src python ...``).
``--reference-batch FILE`` times the env step kernel (``batch_env_step_serial``, the vector env's
and the trainers' step, random legal actions, thread CPU time) against the same kernel of another
revision's ``src/ai2048/engine/batch.py`` (``git show REV:src/ai2048/engine/batch.py > /tmp/ref.py``),
in turns for ``--rounds`` rounds on the same games, printing each median and the ratio: the cost of a
change to the step (rules version 1's exact path) on boards with no tile past 32768.

    python benchmarks/bench_envs.py [--seconds 2] [--num-envs 4096] [--sweep | --scaling] [--sizes 1024,2048]
    python benchmarks/bench_envs.py --reference-batch /tmp/ref.py [--num-envs 4096] [--rounds 7]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import time
from types import ModuleType
from typing import Any

import numba
import numpy as np

from ai2048 import bench
from ai2048.bench.kernels import pick_legal
from ai2048.engine.rng import seed_state
from ai2048.envs.batch import GameBatch
from ai2048.rules import P_TWO


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
            out = games.step(actions)
            games.autoreset_next(out.terminated)

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


SWEEP_SIZES = (64, 256, 1024, 2048, 4096, 16384, 65536)


def sweep(seconds: float, sizes: tuple[int, ...] = SWEEP_SIZES) -> None:
    """Serial against parallel at several N: the parallel wall rate needs idle cores (see "got");
    steps per process CPU second shows what the threads cost in any case."""
    threads = numba.get_num_threads()
    print(f"{'N':>7} {'serial (thread CPU)':>20} {f'parallel {threads} thr (wall)':>24} {'ratio':>6} "
          f"{'parallel per CPU-s':>19} {'cores got':>9}")
    for n in sizes:
        serial, _, _ = batch_rate(n, False, seconds)
        par, per_cpu, got = batch_rate(n, True, seconds)
        print(f"{n:>7} {bench.fmt_rate(serial, 'steps/s'):>20} {bench.fmt_rate(par, 'steps/s'):>24} "
              f"{par / serial:>5.2f}x {bench.fmt_rate(per_cpu, 'steps/s'):>19} {got:>9.2f}")
    print(f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs)")


def vector_rate(n: int, threads: int, seconds: float) -> float:
    """Best wall-clock steps/s of ``make_vec`` with ``n`` envs on ``threads`` numba threads, random
    legal actions picked from ``infos["action_mask"]`` (picker included, as in ``ai2048 bench``)."""
    import gymnasium as gym

    from ai2048.envs import ENV_ID

    numba.set_num_threads(threads)
    venv = gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point")
    actions = np.zeros(n, dtype=np.int64)
    state = seed_state(0)
    _, infos = venv.reset(seed=0)
    for _ in range(3):  # compile or load from the cache
        pick_legal(infos["action_mask"], state, actions)
        infos = venv.step(actions)[4]
    iters, best = max(1, 400_000 // n), 0.0
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        w = time.perf_counter()
        for _ in range(iters):
            pick_legal(infos["action_mask"], state, actions)
            infos = venv.step(actions)[4]
        best = max(best, iters * n / (time.perf_counter() - w))
    venv.close()
    return best


def scaling(seconds: float, sizes: tuple[int, ...]) -> None:
    """``make_vec`` on one numba thread and on two, wall clock, at each size (needs idle cores)."""
    print(f"{'N':>7} {'1 thread':>15} {'2 threads':>15} {'ratio':>6}")
    for n in sizes:
        one, two = vector_rate(n, 1, seconds), vector_rate(n, 2, seconds)
        rates = f"{bench.fmt_rate(one, 'steps/s'):>15} {bench.fmt_rate(two, 'steps/s'):>15}"
        print(f"{n:>7} {rates} {two / one:>5.2f}x")
    print(f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs)")


def _load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("ai2048_reference_batch", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"--reference-batch {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # numba's cache finds a cached kernel's module by name
    spec.loader.exec_module(module)
    return module


class _KernelRun:
    """``n`` games stepped by one revision's ``batch_env_step_serial`` (its own arrays, same games)."""

    def __init__(self, module: Any, n: int) -> None:
        self.kernel = module.batch_env_step_serial
        self.exact = "supers" in inspect.signature(self.kernel.py_func).parameters
        self.opts = module.step_options(autoreset=True)
        self.n = n
        self.boards = np.zeros(n, np.uint64)
        self.supers = np.zeros(n, np.int64)
        self.states = np.random.SeedSequence(0).generate_state(n, np.uint64).astype(np.uint64)
        self.control = np.ones(n, np.uint8)  # RESTART: the first step deals every game
        self.counters = [np.zeros(n, np.int64) for _ in range(3)]
        self.out = [np.zeros(n, np.float64), np.zeros(n, np.int64), np.zeros(n, np.int64)] + \
            [np.zeros(n, np.bool_) for _ in range(3)] + \
            [np.zeros((n, 4), np.bool_), np.zeros(n, np.uint8), np.zeros(n, np.int64),
             np.zeros((n, 4, 4), np.uint8)]
        self.info = [np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint64),
                     np.zeros(n, np.int64), np.zeros(n, np.int64)]
        self.actions = np.zeros(n, np.int64)
        self.pick = seed_state(1)

    def steps(self, iters: int) -> float:
        """Steps per second of thread CPU time over ``iters`` steps of every game (picks included)."""
        head = (self.boards, self.supers) if self.exact else (self.boards,)
        info = self.info if self.exact else self.info[:3] + self.info[4:]
        t = time.thread_time()
        for _ in range(iters):
            pick_legal(self.out[6], self.pick, self.actions)
            self.kernel(*head, self.actions, self.states, np.float64(P_TWO), self.opts, self.control,
                        *self.counters, *self.out, *info)
        return iters * self.n / max(time.thread_time() - t, 1e-9)


def kernel_turns(reference: str, n: int, rounds: int) -> None:
    """This tree's env step kernel against ``reference``'s, in turns, ``rounds`` times (medians)."""
    from ai2048.engine import batch as this

    runs = {"this tree": _KernelRun(this, n), "reference": _KernelRun(_load(reference), n)}
    for run in runs.values():
        run.steps(3)  # compile or load from the cache, deal the games
    iters = max(1, 400_000 // n)
    rates: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            rates[name].append(run.steps(iters))
    med = {k: statistics.median(v) for k, v in rates.items()}
    for name in runs:
        print(f"{name:>10}: {bench.fmt_rate(med[name], 'steps/s')} (median of {rounds}, thread CPU, N={n}, "
              f"random legal actions, autoreset)")
    print(f"ratio this/reference: {med['this tree'] / med['reference']:.3f}x")
    print(f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0, help="time budget per measurement")
    p.add_argument("--num-envs", type=int, default=4096, help="envs in the make_vec measurement")
    p.add_argument("--sweep", action="store_true", help="time the batch core serial vs parallel at several N")
    p.add_argument("--scaling", action="store_true", help="time make_vec on 1 and 2 numba threads, several N")
    p.add_argument("--reference-batch", default=None, metavar="FILE",
                   help="another revision's src/ai2048/engine/batch.py: time its env step kernel beside "
                   "this one's")
    p.add_argument("--rounds", type=int, default=7, help="turns of --reference-batch (the median is printed)")
    p.add_argument("--sizes", default=None, help="comma-separated batch sizes of --sweep or --scaling "
                   "(default: 64,...,65536 for --sweep, 4096,16384,65536 for --scaling)")
    args = p.parse_args()
    if args.reference_batch is not None:
        if args.rounds < 1 or args.num_envs < 1:
            p.error("--rounds and --num-envs must be at least 1")
        kernel_turns(args.reference_batch, args.num_envs, args.rounds)
        return
    if args.sizes is None:
        args.sizes = "4096,16384,65536" if args.scaling else ",".join(map(str, SWEEP_SIZES))
    if args.sweep or args.scaling:
        try:
            sizes = tuple(int(x) for x in args.sizes.split(","))
        except ValueError:
            p.error(f"--sizes {args.sizes!r}: give comma-separated whole numbers, e.g. 1024,2048,4096")
        if not sizes or min(sizes) < 1:
            p.error(f"--sizes {args.sizes!r}: every size must be at least 1")
        if args.scaling and numba.config.NUMBA_NUM_THREADS < 2:  # type: ignore[attr-defined]
            p.error("--scaling needs numba to have 2 threads (NUMBA_NUM_THREADS >= 2)")
        sweep(args.seconds, sizes) if args.sweep else scaling(args.seconds, sizes)
        return
    figs = bench.run(
        ["gym", "vector"], seconds=args.seconds, num_envs=args.num_envs, games=200, progress=print
    )
    print(bench.render(figs))


if __name__ == "__main__":
    main()
