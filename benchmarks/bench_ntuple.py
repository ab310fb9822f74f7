"""N-tuple TD(0) training speed: moves/s and games/s of the 4x6 trainer kernel on 1 and 2 cores.

The kernel is ``train_chunk`` (1-ply greedy self-play, after-state TD(0), alpha = 0.1), the exact
inner loop of ``ai2048 train ntuple``, with backward updates (our default, seed 004) and online
ones (TDL2048+'s default "forward" TD(0), the mode its speed was measured in). Training speed depends on how good
the network is (longer games reach larger, more varied tiles), so the network first trains
``--warmup`` games, then each setting trains ``--games`` more. The baseline, measured in the same
run, is the same algorithm in numpy (vectorised features, one Python step per move). The target
is moporgic/TDL2048+ (C++): 2.45 M moves/s per core on this machine type.

    python benchmarks/bench_ntuple.py [--patterns 4x6] [--warmup 2000] [--games 2000]
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from ai2048 import engine
from ai2048.engine.rng import seed_state
from ai2048.ntuple.network import Network
from ai2048.ntuple.patterns import isomorphic_patterns

TDL2048_MOVES_PER_S = 2.45e6


@numba.njit(cache=True)
def _gather(w: np.ndarray, idx: np.ndarray) -> float:
    s = 0.0
    for i in idx:
        s += w[i]
    return s


def random_read_ns(size: int, reads: int = 20_000_000) -> float:
    """Nanoseconds per independent random float32 read from a table of ``size`` entries: the
    memory system's ceiling for a trainer whose every feature lookup misses the caches."""
    w = np.zeros(size, np.float32)
    idx = np.random.default_rng(0).integers(0, size, reads)
    _gather(w, idx[:10])
    t0 = time.perf_counter()
    _gather(w, idx)
    return (time.perf_counter() - t0) / reads * 1e9


def train(net: Network, games: int, workers: int, seed: int, online: bool = False) -> tuple[float, int, float]:
    """Train ``games`` games on ``workers`` threads: (wall seconds, moves, CPU seconds of all threads)."""
    numba.set_num_threads(workers)
    counts = np.array([games // workers + (k < games % workers) for k in range(workers)], dtype=np.int64)
    states = np.array([seed_state(seed + k)[0] for k in range(workers)], dtype=np.uint64)
    buf_b = np.zeros((workers, 1 << 18), np.uint64)
    buf_r = np.zeros((workers, 1 << 18), np.int64)
    pools = np.zeros((workers, 8), np.uint64)
    e = np.zeros(1, np.float32)
    out = [np.zeros(games, np.int64) for _ in range(3)]
    t0, c0 = time.perf_counter(), time.process_time()
    net.k.train_chunk(
        counts, net.w, e, e, np.ones(1, np.int64), net.runs, net.nruns, net.tbase, net.stage_arr, 0, online,
        False, False, 0.1 / net.features, 0.0, 0.9, states, buf_b, buf_r, pools, np.zeros(workers, np.int64), 15,
        0.0, *out, np.zeros(games, np.bool_),
    )
    return time.perf_counter() - t0, int(out[2].sum()), time.process_time() - c0


class NumpyTD:
    """The same after-state TD(0) with numpy: fancy-indexed features, ``np.add.at`` updates."""

    def __init__(self, net: Network) -> None:
        self.w = net.w.copy()
        lists, offs, off = [], [], 0
        for t in net.tuples:
            for iso in isomorphic_patterns(t):
                lists.append(iso)
                offs.append(off)
            off += 16 ** len(t)
        self.cells = np.array(lists)  # [F, n]
        self.shift = 4 * np.arange(self.cells.shape[1])  # [n]
        self.offs = np.array(offs)  # [F]
        self.step = 0.1 / len(lists)

    def index(self, b: int) -> np.ndarray:
        c = (np.uint64(b) >> (4 * np.arange(16, dtype=np.uint64))) & np.uint64(15)
        return self.offs + (c.astype(np.int64)[self.cells] << self.shift).sum(1)

    def value(self, b: int) -> float:
        return float(self.w[self.index(b)].astype(np.float64).sum())

    def play(self, seconds: float, seed: int) -> tuple[float, int]:
        state = seed_state(seed)
        moves, t0, c0 = 0, time.perf_counter(), time.process_time()
        while time.perf_counter() - t0 < seconds:
            b = int(engine.new_board(state, 0.9))
            path = []
            while True:
                best = None
                for a in range(4):
                    nb, r = engine.move(np.uint64(b), a)
                    if int(nb) != b:
                        v = int(r) + self.value(int(nb))
                        if best is None or v > best[0]:
                            best = (v, int(nb), int(r))
                if best is None:
                    break
                path.append((best[1], best[2]))
                b = int(engine.spawn(np.uint64(best[1]), state, 0.9))
                moves += 1
            target = 0.0
            for x, r in reversed(path):
                idx = self.index(x)
                err = target - float(self.w[idx].astype(np.float64).sum())
                np.add.at(self.w, idx, np.float32(self.step * err))
                target = r + float(self.w[idx].astype(np.float64).sum())
        return time.process_time() - c0, moves


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--patterns", default="4x6")
    p.add_argument("--warmup", type=int, default=2000, help="games trained before timing")
    p.add_argument("--games", type=int, default=2000, help="games timed per setting")
    p.add_argument("--baseline-seconds", type=float, default=10.0)
    args = p.parse_args()

    net = Network(args.patterns)
    t0 = time.perf_counter()
    train(net, 1, 1, 0)
    print(f"compile (or load from cache): {time.perf_counter() - t0:.1f} s")
    dt, mv, _ = train(net, args.warmup, 1, 1)
    print(f"warm-up: {args.warmup} games, {mv / args.warmup:.0f} moves/game, {mv / dt / 1e6:.2f} M moves/s")

    base_dt, base_mv = NumpyTD(net).play(args.baseline_seconds, 7)
    base = base_mv / base_dt
    print(f"numpy baseline (same algorithm): {base / 1e3:.1f} k moves per CPU-second")
    print("(wall-clock figures suffer from other jobs on a shared machine; per CPU-second ones much less)")

    ns = random_read_ns(net.w.size)
    reads = 5 * net.features  # four after-states scored, one updated, per move
    print(
        f"random reads of the {net.nbytes / 2**20:.0f} MiB table: {ns:.1f} ns each; at {reads} reads a move "
        f"that caps a cache-missing trainer at {1e3 / (ns * reads):.2f} M moves/s per core"
    )
    cores = min(2, getattr(numba.config, "NUMBA_NUM_THREADS", 1))
    print(
        f"{'setting':<34}{'M moves/s':>10}{'games/s':>9}{'M moves/CPU-s':>15}{'x numpy':>9}{'x TDL2048+/core':>17}"
    )
    start = net.w.copy()
    for online in (False, True):
        for workers in range(1, cores + 1):
            net.w[:] = start  # every setting trains from the same network
            dt, mv, cpu = train(net, args.games, workers, 100 + workers, online)
            per_cpu = mv / cpu
            name = f"{args.patterns} TD(0) {'online' if online else 'backward'}, {workers} core(s)"
            print(
                f"{name:<34}{mv / dt / 1e6:>10.2f}{args.games / dt:>9.0f}"
                f"{per_cpu / 1e6:>15.2f}{per_cpu / base:>9.0f}{per_cpu / TDL2048_MOVES_PER_S:>17.2f}"
            )


if __name__ == "__main__":
    main()
