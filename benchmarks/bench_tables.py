"""Endgame tables: build speed (positions per second) and lookup speed (decisions per second), each
beside a baseline measured in the same run.

    python benchmarks/bench_tables.py --dir /tmp/tables-bench            # builds 442-64 there
    python benchmarks/bench_tables.py --dir DIR --table 442-128 --positions 20000

Build: the table is built from scratch (``--force``), its positions per wall second printed beside
the same layers enumerated by a plain-Python loop for ``--python-seconds`` (the baseline). Lookup:
``EndgameAgent.table_values`` on boards in the table's formation, beside the shipped network's
2-ply search on the same boards (what the agent plays outside the tables).
"""

from __future__ import annotations

import argparse
import random
import time

from ai2048.agents.endgame import EndgameAgent
from ai2048.engine import reference
from ai2048.tables import formations, store
from ai2048.tables.build import build


def python_positions_per_second(table: formations.TableSpec, seconds: float) -> float:
    """The forward enumeration in plain Python (the reference rules), for ``seconds``."""
    f = table.formation
    start = [15 if q in f.fixed else 0 for q in range(16)]
    layer, seen, done = [tuple(start)], {tuple(start)}, 0
    t0 = time.perf_counter()
    while layer and time.perf_counter() - t0 < seconds:
        nxt = []
        for cells in layer:
            for c in f.free:
                if cells[c]:
                    continue
                for v in (1, 2):
                    b = list(cells)
                    b[c] = v
                    for a in range(4):
                        r, _ = reference.move(b, a)
                        if r == b or any(r[q] != 15 for q in f.fixed):
                            continue
                        if max(r[q] for q in f.free) >= table.target:
                            continue
                        t = tuple(r)
                        if t not in seen:
                            seen.add(t)
                            nxt.append(t)
            done += 1
        layer = nxt
    return done / (time.perf_counter() - t0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True, help="folder to build the table in (it is rebuilt)")
    p.add_argument("--table", default="442-64")
    p.add_argument("--positions", type=int, default=20000, help="boards timed for the lookups")
    p.add_argument("--python-seconds", type=float, default=10.0)
    a = p.parse_args()
    table = formations.spec(a.table)

    build(a.table, a.dir)  # compile the kernels outside the clock
    t0 = time.perf_counter()
    folder = build(a.table, a.dir, force=True)
    wall = time.perf_counter() - t0
    n = store.read_meta(folder)["positions"]
    py = python_positions_per_second(table, a.python_seconds)
    print(f"build {a.table}: {n:,} positions in {wall:.1f} s wall = {n / wall:,.0f} positions/s "
          f"(plain Python enumeration alone: {py:,.0f}/s, {n / wall / py:,.0f}x)")

    agent = EndgameAgent(tables=a.table, tables_dir=a.dir, depth=2)
    t = agent.tables[0]
    rng = random.Random(0)
    boards = []
    for i in rng.sample(range(t.keys.size), a.positions):
        cells = [(int(t.keys[i]) >> (4 * q)) & 15 for q in range(16)]
        large = rng.sample(range(table.target + 1, 16), len(t.spec.formation.fixed) - 1)
        for q in t.spec.formation.fixed:
            cells[q] = table.target if q == t.spec.formation.anchor else large.pop()
        boards.append(sum(e << (4 * q) for q, e in enumerate(cells)))
    agent.table_values(boards[0])
    agent.search.act(boards[0])
    t0 = time.perf_counter()
    for b in boards:
        agent.table_values(b)
    lookup = len(boards) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for b in boards:
        agent.search.act(b)
    search = len(boards) / (time.perf_counter() - t0)
    print(f"lookup: {lookup:,.0f} decisions/s (8 symmetries, every move's value); the network's 2-ply search "
          f"on the same boards: {search:,.0f}/s ({lookup / search:.1f}x)")
    print(f"start value of {a.table} (empty free region): {float(t.values[0]):.4f}")


if __name__ == "__main__":
    main()
