"""Seed 003's speed comparison: moves per CPU second of its agents and the CPU time of a game to 2048.

Seed 003 says expectimax plays best and minimax is the slowest. For ``reflex-seed003`` (Python loop:
it has no whole-game kernel), ``expectimax-seed003`` and ``minimax`` at depth 3 with no time limit
(whole games in numba) this prints moves per second of thread CPU time on one thread (on a shared
machine: the speed of the core the work got, little changed by the load) over ``--games`` games of
``game_seeds(--seed)``, and the mean moves to the first 2048 of the same games played to 2048, divided
by that rate: the CPU time of a game to 2048.

    python benchmarks/bench_seed003.py [--games 20] [--seed 1] [--loop-seconds 20]
"""

from __future__ import annotations

import argparse
import os

from ai2048 import make_agent
from ai2048.bench.evaluation import fast_rate, loop_rate
from ai2048.evaluate import evaluate
from ai2048.evaluate.kernel import kernel_of

AGENTS = (("reflex-seed003", {}), ("expectimax-seed003", {}), ("minimax", {"depth": 3, "time_limit": None}))
"""The agents of seed 003's comparison (docs/search.md, "Runtime per game")."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=20, help="games timed (kernels) and played to 2048")
    p.add_argument("--seed", type=int, default=1, help="evaluation seed of the games")
    p.add_argument("--loop-seconds", type=float, default=20.0,
                   help="CPU seconds of the Python loop for an agent without a kernel")
    a = p.parse_args()
    if a.games < 1 or a.loop_seconds <= 0:
        p.error("--games must be >= 1 and --loop-seconds > 0")
    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for name, cfg in AGENTS:
        agent = make_agent(name, **cfg)
        if kernel_of(agent) is not None:
            rate, moves, _ = fast_rate(agent, a.games, a.seed)
            path = "kernel"
        else:
            rate, moves = loop_rate(agent, a.loop_seconds, a.seed)
            path = "python loop"
        res = evaluate(agent, games=a.games, seed=a.seed, progress=False, goal_tile=2048)
        reached = [r for r in res.records if r["max_tile"] >= 2048]
        to2048 = sum(r["moves"] for r in reached) / max(len(reached), 1)
        game = f"{to2048:.0f} moves to 2048 -> {to2048 / rate:.3f} s of CPU a game" if reached else "no 2048"
        print(f"{name} {cfg}: {path}, {rate:,.0f} moves per CPU second ({moves:,} moves); "
              f"2048 in {len(reached)}/{a.games}, {game}", flush=True)


if __name__ == "__main__":
    main()
