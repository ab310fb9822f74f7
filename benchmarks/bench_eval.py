"""Evaluation speed: moves/s per core of whole games in numba (``evaluate``'s fast path) beside the
Python loop (``play_game``: one ``agent.act`` per move), measured in the same run.

Agents: an n-tuple network at 1 ply (``--run``, a run directory of ``ai2048 train ntuple``) and
expectimax at depth 2 (the nneonneo heuristic). Per-core figures are moves per second of thread CPU
time in one thread (on a shared machine: the speed of the core the work actually got); the
two-thread figure is ``evaluate(..., workers=2)`` in wall time with the cores it got. The games are
``game_seeds(seed, n)``, the same for both paths (the fast path plays the same moves). Target for
n-tuple 1-ply: moporgic/TDL2048+ (C++) tests at 1.48-2.64 M moves/s on one thread.

    python benchmarks/bench_eval.py --run RUN [--games 2000] [--baseline-seconds 10]
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from ai2048 import load_agent, make_agent
from ai2048.bench.evaluation import fast_rate, loop_rate
from ai2048.evaluate import evaluate


def two_threads(
    agent: Any, games: int, seed: int, max_moves: int | None = None
) -> tuple[float, float, float]:
    """(moves/s wall, wall seconds, cores got) of ``evaluate(workers=2)`` on the fast path."""
    evaluate(agent, games=2, seed=seed + 1, workers=2, progress=False, max_moves=5)
    c0 = time.process_time()
    res = evaluate(agent, games=games, seed=seed, workers=2, progress=False, max_moves=max_moves)
    cores = (time.process_time() - c0) / res.wall_seconds
    return sum(r["moves"] for r in res.records) / res.wall_seconds, res.wall_seconds, cores


def report(name: str, fast: tuple[float, int, float], loop: tuple[float, int],
           wall: tuple[float, float, float]) -> None:
    print(f"{name}:")
    print(f"  fast path, 1 thread   {fast[0] / 1e6:8.3f} M moves/s per core  ({fast[1]:,} moves; "
          f"{fast[2] / 1e6:.3f} M/s wall)")
    print(f"  Python loop, 1 thread {loop[0] / 1e6:8.3f} M moves/s per core  ({loop[1]:,} moves)")
    print(f"  ratio                 {fast[0] / loop[0]:8.1f}x")
    print(
        f"  fast path, 2 threads  {wall[0] / 1e6:8.3f} M moves/s wall  ({wall[1]:.1f} s, {wall[2]:.2f} cores "
        "got)"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", required=True, help="run directory of `ai2048 train ntuple` (e.g. a 4x6 network)")
    p.add_argument("--games", type=int, default=2000, help="n-tuple games timed on the fast path")
    p.add_argument(
        "--expectimax-games", type=int, default=40, help="expectimax games timed (each to --max-moves)"
    )
    p.add_argument("--max-moves", type=int, default=2000, help="moves per expectimax game")
    p.add_argument(
        "--baseline-seconds", type=float, default=10.0, help="CPU seconds of each Python-loop baseline"
    )
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")

    agent = load_agent(a.run)
    report(f"n-tuple 1-ply ({agent.net.patterns})", fast_rate(agent, a.games, a.seed),
           loop_rate(agent, a.baseline_seconds, a.seed), two_threads(agent, a.games, a.seed))

    ex = make_agent("expectimax", depth=2)
    mm = a.max_moves
    report("expectimax depth 2 (nneonneo heuristic)", fast_rate(ex, a.expectimax_games, a.seed, mm),
           loop_rate(ex, a.baseline_seconds, a.seed, mm), two_threads(ex, a.expectimax_games, a.seed, mm))


if __name__ == "__main__":
    main()
