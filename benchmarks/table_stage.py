"""A table's stage played alone: from its formation with an empty free region, the table's best move
every turn (seeded random spawns), until it builds the target on a goal cell (a success) or no move
keeps any chance; the success rate beside the table's own value of the empty region.

    python benchmarks/table_stage.py 442-512-s616 --runs 400 --seed 7
    python benchmarks/table_stage.py 442t-512-s616 --runs 400 --seed 7 --dir /tmp/tables

The two agree within the interval when the table is right and its lookups read it as built; the
rate of two tables on one seed compares their stages without the rest of the game. The speed line is
table decisions per second (one core).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ai2048 import checks
from ai2048.engine.moves import four_moves
from ai2048.rules import P_TWO
from ai2048.stats import wilson
from ai2048.tables import store
from ai2048.tables.lookup import move_values


def start_board(table: store.Table) -> int:
    """The formation at home with an empty free region: distinct large tiles on the walls read row by
    row (the anchor's place holding the target), as in a game."""
    f = table.spec.formation
    t = table.spec.target
    cells = [0] * 16
    larger = iter(range(15, t, -1))
    rank = f.anchor_rank
    for i, q in enumerate(sorted(f.fixed)):
        cells[q] = t if i == rank else next(larger)
    return sum(e << (4 * q) for q, e in enumerate(cells))


def spawn(board: int, rng: np.random.Generator, p_two: float) -> int:
    empty = [q for q in range(16) if (board >> (4 * q)) & 15 == 0]
    q = empty[int(rng.integers(len(empty)))]
    return board | ((1 if rng.random() < p_two else 2) << (4 * q))


def play_stage(table: store.Table, rng: np.random.Generator) -> tuple[bool, int]:
    """(whether the run built the target on a goal cell, the decisions it took)."""
    rules = table.spec.rules()
    b = spawn(start_board(table), rng, table.spec.p_two)
    decisions = 0
    while True:
        v = move_values(np.uint64(b), np.int64(0), rules, table.keys, table.values, table.offsets)
        if not np.nanmax(v, initial=-1.0) > 0:
            return False, decisions
        a = int(np.nanargmax(v))
        decisions += 1
        if v[a] == 1.0:
            return True, decisions
        b = spawn(int(four_moves(np.uint64(b))[a]), rng, table.spec.p_two)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table", help="a built table (`ai2048 tables` lists them)")
    p.add_argument("--runs", type=int, default=400)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--dir", default=None, help="the tables folder (default: $AI2048_TABLES or the cache)")
    args = p.parse_args()
    try:
        runs = checks.whole("--runs", args.runs, 1, 10 ** 6)
        table = store.load(args.table, args.dir)
    except (ValueError, TypeError, store.TableError, store.TableNotBuilt) as e:
        p.error(str(e))
    if table.spec.p_two != P_TWO:
        p.error(f"{args.table} is solved for p_two={table.spec.p_two}; this stage spawns with its own odds")
    rng = np.random.default_rng(checks.seed("--seed", args.seed, optional=False))
    t0 = time.process_time()
    results = [play_stage(table, rng) for _ in range(runs)]
    cpu = time.process_time() - t0
    wins = sum(ok for ok, _ in results)
    lo, hi = wilson(wins, runs)
    decisions = sum(n for _, n in results)
    print(f"{table.spec.name}: the target built at home in {wins} of {runs} runs: {100 * wins / runs:.1f}% "
          f"({100 * lo:.1f}-{100 * hi:.1f}); the table's value of the empty region "
          f"{float(table.values[0]):.4f}; "
          f"{decisions / runs:.0f} decisions a run")
    print(f"speed: {decisions / cpu:,.0f} table decisions a CPU second")


if __name__ == "__main__":
    main()
