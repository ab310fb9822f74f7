"""Numba-parallel paths beside competing work: serial, default and threads, ratios in the same run.

For each competitor (started here, stopped afterwards) and each path, the three modes run in
interleaved bursts (so a change in the machine hits all three alike); the table gives each mode's
median steps/s, its worst burst, and both against the serial median of the same run.

Paths: ``vector`` (``gymnasium.make_vec`` with ``vectorization_mode="vector_entry_point"``, random
legal actions picked from ``infos["action_mask"]``, picker included), ``engine`` (the torch env's
CPU backend ``EngineBatch``, random legal actions, torch installed), ``rollout`` (the LazyZero
random-rollout baseline's playouts, ``RandomRolloutEvaluator``, torch installed; its rate counts
positions played out).

Competitors: ``idle``; ``nice19:K`` (K busy loops at nice 19); ``busy:K`` (K busy loops at this
process's priority; K above the core count is many runnable threads); ``numba`` (a second process
stepping 16,384 games on numba's threads, forced); ``torch`` (a thread of this process running
matrix products on torch's threads). Record the machine state with the figures: the last line
prints the load average, the core count, numba's threading layer and sched_autogroup.

    python benchmarks/bench_threads.py [--seconds 3] [--paths vector,engine,rollout]
        [--sizes 4096,16384] [--rollout-sizes 256,4096]
        [--competitors idle,nice19:1,busy:2,busy:32,numba,torch]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numba
import numpy as np

from ai2048 import bench
from ai2048.bench.kernels import pick_legal
from ai2048.engine.rng import seed_state
from ai2048.threads import ThreadPicker

MODES = {"serial": False, "default": None, "threads": True}
"""Each mode's ``parallel`` argument."""

_BUSY = "import os, sys\nos.nice(int(sys.argv[1]))\nwhile True:\n    pass\n"
_NUMBA = """import numpy as np
from ai2048.envs.batch import GameBatch
g = GameBatch(16384, seed=0, parallel=True)
g.reset()
a = np.zeros(16384, dtype=np.int64)
print("ready", flush=True)
while True:
    a[:] = g.masks.argmax(1)
    g.autoreset_next(g.step(a).terminated)
"""


Step = tuple[Callable[[], int], ThreadPicker]
"""A path's call (returns the steps it did) and the picker that chose its kernels."""


def vector_path(n: int, parallel: bool | None) -> Step:
    """One ``make_vec`` step with random legal actions; returns the steps done (``n``)."""
    import gymnasium as gym

    from ai2048.envs import ENV_ID

    venv = gym.make_vec(ENV_ID, num_envs=n, vectorization_mode="vector_entry_point", parallel=parallel)
    actions = np.zeros(n, dtype=np.int64)
    state = seed_state(0)
    infos = venv.reset(seed=0)[1]

    def step() -> int:
        nonlocal infos
        pick_legal(infos["action_mask"], state, actions)
        infos = venv.step(actions)[4]
        return n

    return step, venv.unwrapped.games._picker


def engine_path(n: int, parallel: bool | None) -> Step:
    """One ``EngineBatch`` step (the torch env's CPU backend) with random legal actions."""
    import torch

    from ai2048.envs.torch_env import EngineBatch

    env = EngineBatch(n, seed=0, parallel=parallel)
    gen = torch.Generator().manual_seed(0)

    def step() -> int:
        legal = env.legal_actions()
        w = legal.float() + (~legal.any(1, keepdim=True)).float()
        env.step(torch.multinomial(w, 1, generator=gen).squeeze(1))
        env.reset_terminated()
        return n

    return step, env.games._picker


def rollout_path(n: int, parallel: bool | None) -> Step:
    """One call of the random-rollout evaluator on ``n`` mid-game positions (each mode plays the
    same playouts: one seed); counts positions."""
    from ai2048.bench.kernels import collect_boards
    from ai2048.envs.torch_env import from_boards
    from ai2048.search.lazyzero import RandomRolloutEvaluator

    states = from_boards(collect_boards(np.int64(n), seed_state(2), np.float64(0.9)))
    evaluate = RandomRolloutEvaluator(seed=0, parallel=parallel)

    def step() -> int:
        evaluate(states)
        return n

    return step, evaluate._picker


PATHS = {"vector": vector_path, "engine": engine_path, "rollout": rollout_path}


def measure(make: Callable[[int, bool | None], Step], n: int, seconds: float
            ) -> tuple[dict[str, list[float]], float]:
    """Steps/s of every burst of each mode, the modes interleaved for ``seconds`` in all, and the
    share of the default's calls that ran on numba's threads."""
    made = {name: make(n, parallel) for name, parallel in MODES.items()}
    steps = {name: step for name, (step, _) in made.items()}
    for step in steps.values():  # compile or load from the cache, and a first timing each
        for _ in range(3):
            step()
    rates: dict[str, list[float]] = {name: [] for name in steps}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or not rates["serial"]:
        for name, step in steps.items():
            done, start = 0, time.perf_counter()
            while time.perf_counter() - start < 0.05:
                done += step()
            rates[name].append(done / (time.perf_counter() - start))
    calls = made["default"][1].calls
    return rates, calls[1] / max(sum(calls), 1)


@contextmanager
def competitor(spec: str, cores: int) -> Iterator[str]:
    """Start the competing work ``spec`` names; stop it on the way out. Yields a description."""
    kind, _, count = spec.partition(":")
    k = int(count or 1)
    procs: list[subprocess.Popen] = []
    stop = threading.Event()
    try:
        if kind == "idle":
            desc = "nothing beside"
        elif kind in ("nice19", "busy"):
            nice = 19 if kind == "nice19" else 0
            procs = [subprocess.Popen([sys.executable, "-c", _BUSY, str(nice)]) for _ in range(k)]
            desc = f"{k} busy loop{'s' * (k > 1)} at nice +{nice} relative to this one"
        elif kind == "numba":
            procs = [subprocess.Popen([sys.executable, "-c", _NUMBA], stdout=subprocess.PIPE, text=True)]
            assert procs[0].stdout is not None
            procs[0].stdout.readline()  # its kernels loaded and running
            desc = f"a second process stepping 16,384 games on {numba.config.NUMBA_NUM_THREADS} numba threads"  # type: ignore[attr-defined]
        elif kind == "torch":
            import torch

            torch.set_num_threads(cores)
            a = torch.randn(256, 256)

            def work() -> None:
                while not stop.is_set():
                    a @ a

            threading.Thread(target=work, daemon=True).start()
            desc = f"torch matrix products on {cores} torch threads in this process"
        else:
            raise SystemExit(f"unknown competitor {spec!r}: use idle, nice19:K, busy:K, numba or torch")
        time.sleep(0.5)
        yield desc
    finally:
        stop.set()
        for p in procs:
            p.kill()
            p.wait()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="time per path and size, modes interleaved")
    p.add_argument("--paths", default="vector,engine,rollout", help="comma-separated: " + ", ".join(PATHS))
    p.add_argument("--sizes", default="4096,16384", help="games per step of vector and engine")
    p.add_argument("--rollout-sizes", default="256,4096", help="positions per rollout call")
    p.add_argument("--competitors", default="idle,nice19:1,busy:2,busy:32,numba,torch",
                   help="comma-separated: idle, nice19:K, busy:K, numba, torch")
    args = p.parse_args()
    paths = args.paths.split(",")
    if unknown := [x for x in paths if x not in PATHS]:
        p.error(f"--paths: unknown {unknown}; choose from {', '.join(PATHS)}")
    try:
        sizes = [int(x) for x in args.sizes.split(",")]
        rollout_sizes = [int(x) for x in args.rollout_sizes.split(",")]
    except ValueError:
        p.error("--sizes and --rollout-sizes take comma-separated whole numbers, e.g. 4096,16384")
    if min(sizes + rollout_sizes) < 1 or not args.seconds > 0:
        p.error("sizes must be at least 1 and --seconds above 0")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    print(f"{'path':>8} {'N':>6} {'mode':>8} {'median':>15} {'worst burst':>15} {'x serial':>9} "
          f"{'worst x':>8}  (default: share of calls on threads)")
    for spec in args.competitors.split(","):
        with competitor(spec, cores) as desc:
            print(f"-- {spec}: {desc} (load average {os.getloadavg()[0]:.2f})")
            for path in paths:
                for n in rollout_sizes if path == "rollout" else sizes:
                    rates, share = measure(PATHS[path], n, args.seconds)
                    base = statistics.median(rates["serial"])
                    for mode, r in rates.items():
                        med, worst = statistics.median(r), min(r)
                        note = f"  {share:.0%}" if mode == "default" else ""
                        print(f"{path:>8} {n:>6} {mode:>8} {bench.fmt_rate(med, 'steps/s'):>15} "
                              f"{bench.fmt_rate(worst, 'steps/s'):>15} {med / base:>8.2f}x "
                              f"{worst / base:>7.2f}x{note}")
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            autogroup = f.read().strip()
    except OSError:
        autogroup = "n/a"
    wait = os.environ.get("OMP_WAIT_POLICY", "unset")
    print(f"(load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}, {cores} usable cores, "
          f"{numba.get_num_threads()} numba threads, layer {numba.threading_layer()}, "
          f"sched_autogroup_enabled {autogroup}, OMP_WAIT_POLICY {wait})")


if __name__ == "__main__":
    main()
