"""Search throughput: expectimax nodes/s per core and agent moves/s, against baselines in the same run.

Nodes are moves tried in max nodes (nneonneo/2048-ai's ``moves_evaled``). Baselines measured here:
a plain recursive pure-Python expectimax on the same boards (the ratio shows what numba buys), and
the numba search with no transposition table. Rates use process CPU time (``time.process_time``),
so "per core" figures stay meaningful on a shared, loaded machine; wall-clock moves/s is printed
too. Run with ``NUMBA_NUM_THREADS=1``:

    python benchmarks/bench_search.py [--depth 5] [--moves 300]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ai2048
from ai2048.search.expectimax import NODES, Expectimax
from ai2048.search.heuristics import NNEONNEO_PUBLISHED, nneonneo_eval, nneonneo_table


def positions(n: int, seed: int = 1) -> list[int]:
    """Boards from one game played by depth-2 expectimax: every 50th position after move 100."""
    agent = ai2048.make_agent("expectimax", depth=2)
    g = ai2048.Game(seed=seed)
    out = []
    while not g.is_over and len(out) < n:
        g.step(agent.act(g.board))
        if g.moves > 100 and g.moves % 50 == 0:
            out.append(g.board)
    return out


def python_expectimax(board: int, depth: int, table: np.ndarray, count: list[int]) -> float:
    """The obvious recursive expectimax in Python (no pruning, no table): the baseline."""
    def heur(b: int) -> float:
        t = ai2048.decode(b)
        total = 0.0
        for line in list(t) + list(t.T):
            total += float(table[int(line[0]) | int(line[1]) << 4 | int(line[2]) << 8 | int(line[3]) << 12])
        return total

    def chance(b: int, k: int) -> float:
        if k == 0:
            return heur(b)
        total = 0.0
        for child, p in ai2048.spawn_outcomes(b):
            best = 0.0
            for a in range(4):
                count[0] += 1
                nb, _ = ai2048.move(child, a)
                if nb != child:
                    best = max(best, chance(nb, k - 1))
            total += p * best
        return total

    best = -np.inf
    for a in range(4):
        count[0] += 1
        nb, _ = ai2048.move(board, a)
        if nb != board:
            best = max(best, chance(nb, depth - 1))
    return best


def bench_kernel(search: Expectimax, boards: list[int], depth: int) -> tuple[float, int]:
    n0 = int(search.stats[NODES])
    t0 = time.process_time()
    for b in boards:
        search.values(b, depth)
    dt = time.process_time() - t0
    n = int(search.stats[NODES]) - n0
    return n / dt, n


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--depth", type=int, default=5, help="search depth for nodes/s")
    p.add_argument("--boards", type=int, default=12, help="positions searched")
    p.add_argument("--moves", type=int, default=300, help="moves played for the agent's moves/s")
    args = p.parse_args()
    table = nneonneo_table(NNEONNEO_PUBLISHED)  # nneonneo's own constants: the same trees as its C++
    t0 = time.perf_counter()
    boards = positions(args.boards)
    print(f"compile + positions: {time.perf_counter() - t0:.1f} s ({len(boards)} boards)")

    tt = Expectimax(nneonneo_eval, (table,), tt_bits=20)
    no_tt = Expectimax(nneonneo_eval, (table,), tt_bits=0)
    bench_kernel(tt, boards[:1], 2)
    bench_kernel(no_tt, boards[:1], 2)
    rate, n = bench_kernel(tt, boards, args.depth)
    rate_no, n_no = bench_kernel(no_tt, boards, args.depth)
    count = [0]
    t0 = time.process_time()
    for b in boards[:2]:
        python_expectimax(b, 2, table, count)
    py_rate = count[0] / (time.process_time() - t0)
    print(f"expectimax depth {args.depth}, TT 2^20, cutoff 1e-4: {rate / 1e6:.1f} M nodes/s per core ({n:,} nodes)")
    print(f"  no transposition table:             {rate_no / 1e6:.1f} M nodes/s ({n_no:,} nodes, "
          f"TT saves {100 * (1 - n / n_no):.0f}% of nodes)")
    print(f"  pure-Python expectimax (depth 2):   {py_rate / 1e3:.1f} k nodes/s -> numba x{rate / py_rate:,.0f}")
    print(f"  target 36 M nodes/s per core: {rate / 36e6:.2f}x of target")

    for name, cfg in (("expectimax", {"depth": 2}), ("expectimax", {"depth": 3}), ("expectimax", {})):
        agent = ai2048.make_agent(name, **cfg)
        g = ai2048.Game(seed=3)
        agent.act(g.board)
        t0, c0 = time.perf_counter(), time.process_time()
        n0 = agent.nodes
        while not g.is_over and g.moves < args.moves:
            g.step(agent.act(g.board))
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"{name} {cfg or '(default: adaptive depth)'}: {g.moves / cpu:.1f} moves/s per CPU second "
              f"({g.moves / dt:.1f} wall) over {g.moves} moves, {(agent.nodes - n0) / cpu / 1e6:.1f} M nodes/s, "
              f"max tile {g.max_tile}")


if __name__ == "__main__":
    main()
