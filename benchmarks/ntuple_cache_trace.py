"""Cache behaviour of 1-ply TD training on the 4x6 table, simulated from real feature indices.

    python benchmarks/ntuple_cache_trace.py [--games 2]


Plays 1-ply greedy games with the shipped 4x6-tc-ms network (strong play, long games: the regime
of a long training run; pure Python/numpy, no kernels), records per move the 32 feature indices
of each legal after-state (the move choice reads them) and of the chosen one (its TD update), and
feeds the 64-byte line addresses to exact LRU caches the size of this machine's L2 (1 MiB a core)
and L3 (32 MiB).
"""
from __future__ import annotations

import argparse
from collections import OrderedDict

import numpy as np

import ai2048.models as models
from ai2048.engine import reference
from ai2048.ntuple.patterns import isomorphic_patterns

net = models.load(models.default_name())
lists: list[list[int]] = []
bases: list[int] = []
off = 0
for tup in net.tuples:
    for iso in isomorphic_patterns(tup):
        lists.append(list(iso))
        bases.append(off)
    off += 16 ** len(tup)
cells_idx, offs = np.array(lists), np.array(bases)
shift = 4 * np.arange(cells_idx.shape[1])

def index(cells: list[int]) -> np.ndarray:
    c = np.asarray(cells)
    stage = sum(int(c.max()) >= s for s in net.stages)
    return stage * net.table + offs + (c[cells_idx] << shift).sum(1)

def spawn(cells: list[int]) -> list[int]:
    empty = [i for i, x in enumerate(cells) if x == 0]
    out = list(cells)
    out[empty[rng.integers(len(empty))]] = 1 if rng.random() < 0.9 else 2
    return out

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--games", type=int, default=2, help="greedy games of the shipped network to trace")
p.add_argument("--seed", type=int, default=5)
args = p.parse_args()
if args.games < 1:
    p.error("--games must be >= 1")
games = args.games
rng = np.random.default_rng(args.seed)
sel: list[np.ndarray] = []
upd: list[np.ndarray] = []
starts: list[int] = []
for _ in range(games):
    starts.append(len(sel))
    b = spawn(spawn([0] * 16))
    while True:
        cand = []
        for a in range(4):
            nb, r = reference.move(b, a)
            if nb != b:
                idx = index(nb)
                cand.append((r + float(net.w[idx].astype(np.float64).sum()), nb, idx))
        if not cand:
            break
        best = max(cand, key=lambda x: x[0])
        sel.append(np.concatenate([c[2] for c in cand]))
        upd.append(best[2])
        b = spawn(best[1])
print(f"{games} games, {len(sel)} moves (max tile {2 ** max(b)} in the last)", flush=True)

class LRU:
    """An exact least-recently-used cache of ``cap`` lines that counts its misses."""

    def __init__(self, cap: int) -> None:
        self.cap, self.d, self.miss = cap, OrderedDict[int, None](), 0

    def touch(self, x: int) -> None:
        if x in self.d:
            self.d.move_to_end(x)
            return
        self.miss += 1
        self.d[x] = None
        if len(self.d) > self.cap:
            self.d.popitem(last=False)

n = len(sel)
for rec in (False, True):
    for mode in ("online", "backward"):
        caches = {"L2 1 MiB": LRU(1 << 14), "L3 32 MiB": LRU(1 << 19)}
        order = []
        bounds = starts + [n]
        for g0, g1 in zip(bounds[:-1], bounds[1:], strict=True):
            for step in range(g0, g1):
                order.append(sel[step])
                if mode == "online":
                    order.append(upd[step])
            if mode == "backward":
                for step in range(g1 - 1, g0 - 1, -1):
                    order.append(upd[step])
        total = 0
        for arr in order:
            ls = (arr * (12 if rec else 4)) >> 6
            total += ls.size
            for x in ls.tolist():
                for c in caches.values():
                    c.touch(x)
        layout = "TC records 12 B" if rec else "float32 weights 4 B"
        print(f"{layout:<20} {mode:<9} line reads/move {total / n:6.1f}  "
              + "  ".join(f"{k} misses/move {c.miss / n:6.1f}" for k, c in caches.items()), flush=True)
