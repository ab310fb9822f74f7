"""Search throughput: expectimax nodes/s per core and agent moves/s, against baselines in the same run.

Agent moves/s are timed on positions sampled every N moves of one long game, so early (cheap) and
late (expensive) positions count as often as in a real game; the baseline is the same agent with
nneonneo's published weights.

Nodes are moves tried in max nodes (nneonneo/2048-ai's ``moves_evaled``). Baselines measured here:
a plain recursive pure-Python expectimax on the same boards (the ratio shows what numba buys), and
the numba search with no transposition table. Rates use process CPU time (``time.process_time``),
so "per core" figures stay meaningful on a shared, loaded machine. Run with ``NUMBA_NUM_THREADS=1``:

    python benchmarks/bench_search.py [--depth 5] [--every 100] [--game best-game.json]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import ai2048
from ai2048.records import load_record
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


def sampled_positions(every: int, record: Path | None = None, seed: int = 2) -> tuple[list[int], str]:
    """Every ``every``-th position of a saved game record, or of a game played by depth-3 expectimax."""
    if record is not None:
        rec = load_record(record)
        boards = [int(b) for b in rec.replay().boards[:-1]]
        return boards[::every], f"{record.name} ({rec.moves} moves, max tile {rec.max_tile})"
    agent = ai2048.make_agent("expectimax", depth=3)
    g = ai2048.Game(seed=seed)
    out = []
    while not g.is_over:
        if g.moves % every == 0:
            out.append(g.board)
        g.step(agent.act(g.board))
    return out, f"a depth-3 game ({g.moves} moves, max tile {g.max_tile})"


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
    p.add_argument("--every", type=int, default=100, help="sample every Nth position of the long game")
    p.add_argument("--game", type=Path, default=None,
                   help="a game record (e.g. from `ai2048 eval --record best`) to sample positions from")
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
    print(
        f"expectimax depth {args.depth}, TT 2^20, cutoff 1e-4: {rate / 1e6:.1f} M nodes/s per core ({n:,} "
        "nodes)"
    )
    print(f"  no transposition table:             {rate_no / 1e6:.1f} M nodes/s ({n_no:,} nodes, "
          f"TT saves {100 * (1 - n / n_no):.0f}% of nodes)")
    print(
        f"  pure-Python expectimax (depth 2):   {py_rate / 1e3:.1f} k nodes/s -> numba x{rate / py_rate:,.0f}"
    )
    print(f"  target 36 M nodes/s per core: {rate / 36e6:.2f}x of target")

    long_game, source = sampled_positions(args.every, args.game)
    print(f"agent speed on {len(long_game)} positions, every {args.every}th of {source}; "
          "a game's moves/s is the mean over its positions:")
    for depth in (2, 3, "adaptive"):
        rates = []
        for weights in ("published", "tuned"):
            agent = ai2048.make_agent("expectimax", depth=depth, weights=weights)
            for b in long_game:  # a first pass touches every page of the new 32 MiB table
                agent.act(b)
            n0, c0 = agent.nodes, time.process_time()
            for b in long_game:
                agent.act(b)
            cpu = time.process_time() - c0
            rates.append(len(long_game) / cpu)
            print(f"  expectimax depth={depth} weights={weights}: {rates[-1]:,.1f} moves per CPU second, "
                  f"{(agent.nodes - n0) / cpu / 1e6:.1f} M nodes/s")
        print(f"    tuned / published: {rates[1] / rates[0]:.2f}x")


if __name__ == "__main__":
    main()
