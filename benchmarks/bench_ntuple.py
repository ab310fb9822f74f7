"""N-tuple TD training: speed (moves/s per core, 1 and 2 workers) and peak memory, beside baselines.

**Speed** (default). Each setting trains ``--games`` games from an empty network with the
trainer's own kernels (``ai2048.ntuple.hogwild.train_chunk``, the loop of ``ai2048 train
ntuple``): 4x6 after-state TD(0) α = 0.1 and TC α = 1.0, backward and online updates, on 1 and
2 Hogwild workers. TC keeps its weights and accumulators as records (``Network.tc_arrays``;
``--tc-layout separate`` for three arrays). Figures are moves per CPU-second of the whole process
(all its threads), so a shared machine changes them less than wall-clock ones; a *move* is one
action played, as TDL2048+ counts its "ops". The tables are allocated and zeroed before the clock
starts. Baselines measured in the same run:

* the same algorithm in numpy (vectorised features, one Python step per move);
* moporgic/TDL2048+ (C++) when ``--tdl2048 PATH`` (or ``$TDL2048``) names its binary, built by
  you (this script never builds it): the same number of games with the matching options
  (``-tt backward`` for backward TD; its default mode for online TD; ``-a 1.0 coherence`` for TC;
  ``-p 2`` for two threads). Its CPU time is taken from the kernel (``getrusage``) less the CPU
  of the same command training one game (its start-up: allocating and zeroing its tables, 0.3 to
  1.8 CPU-s here), so both sides count the training loop only. Each of ``--repeat`` rounds runs
  ours then TDL2048+ (alternating which goes first), so both see the same load; the table gives
  medians and the ratio of the medians.

**A/B of two kernel versions** (``--against FILE``): a generated kernels module of another
revision (``$AI2048_CACHE``/``~/.cache/ai2048/ntuple/kernels_<key>.py``, written by any run of that
revision) is loaded beside this revision's, and each setting trains the same games with both,
``--repeat`` rounds alternating which goes first; equal move counts show that both learned the
same. Moves per CPU-second of each, and the ratio this revision / the other.

**What two Hogwild workers share** (``--sharing``): TD(0) backward, ``--games`` games a run, four
ways: one worker; two on one table (the trainer); two with a table each (nothing learned is
shared); two on one table with their RNG states 64 bytes apart (the trainer's sit in one cache
line). ``--pretrain N`` first trains N games and starts every run from those weights. Moves per
wall and per CPU-second, medians of ``--repeat`` rounds in alternating order.

**Memory** (``--memory``). Runs ``ai2048 train ntuple`` (one worker, ``--games`` games,
checkpoints every chunk) for 4x6, 5x6 and 8x6, plain and TC, and reports each process's peak
resident set (``ru_maxrss``) and its resident set after the first and the last chunk (growth).

    python benchmarks/bench_ntuple.py [--games 3000] [--repeat 3] [--tdl2048 /path/to/2048]
    python benchmarks/bench_ntuple.py --against ~/.cache/ai2048/ntuple/kernels_<key>.py [--repeat 4]
    python benchmarks/bench_ntuple.py --sharing [--pretrain 20000] [--repeat 4]
    python benchmarks/bench_ntuple.py --memory [--games 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import numpy as np

from ai2048 import engine
from ai2048.engine.rng import seed_state
from ai2048.ntuple.codegen import DEFAULT_RULES, import_generated
from ai2048.ntuple.hogwild import train_chunk
from ai2048.ntuple.network import Network
from ai2048.ntuple.patterns import isomorphic_patterns, parse_patterns

SETTINGS = (  # name, online, tc, alpha, TDL2048+ options
    ("TD(0) backward", False, False, 0.1, ["-a", "0.1", "-tt", "backward"]),
    ("TD(0) online", True, False, 0.1, ["-a", "0.1"]),
    ("TC backward", False, True, 1.0, ["-a", "1.0", "coherence", "-tt", "backward"]),
    ("TC online", True, True, 1.0, ["-a", "1.0", "coherence"]),
)


_RECORDS: dict[str, Network] = {}


def tables(net: Network, tc: bool, layout: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Zeroed (w, E, A) for a run: ``net``'s weights, with TC state as separate arrays, or a second
    network of the same patterns holding TC records (views of one [table, 3] array)."""
    if tc and layout == "records":
        if net.patterns not in _RECORDS:
            _RECORDS[net.patterns] = Network(net.patterns)
            _RECORDS[net.patterns].tc_arrays()
        net = _RECORDS[net.patterns]
        e, a = net.tc_arrays()
    elif tc:
        e, a = np.zeros(net.w.size, np.float32), np.zeros(net.w.size, np.float32)
    else:
        e = a = np.zeros(1, np.float32)
    net.w[:] = 0.0
    e[:] = 0.0
    a[:] = 0.0
    return net.w, e, a


def train(
    net: Network, games: int, workers: int, seed: int, online: bool, tc: bool, alpha: float,
    layout: str = "records",
) -> tuple[float, int, float]:
    """Train ``games`` games on ``workers`` threads: (wall seconds, moves, CPU seconds of the process)."""
    w, e, a = tables(net, tc, layout)
    counts = np.array([games // workers + (i < games % workers) for i in range(workers)], dtype=np.int64)
    states = np.array([seed_state(seed + i)[0] for i in range(workers)], dtype=np.uint64)
    buf_b = np.zeros((workers, 1 << 18), np.uint64)
    buf_r = np.zeros((workers, 1 << 18), np.int64)
    pools = np.zeros((workers, 8), np.uint64)
    score, tile, moves = (np.zeros(games, np.int64) for _ in range(3))
    t0, c0 = time.perf_counter(), time.process_time()
    train_chunk(
        net.k, counts, w, e, a, np.ones(1, np.int64), net.runs, net.nruns, net.tbase, net.stage_arr,
        0, online, tc, False, alpha / net.features, 0.0, 0.9, states, buf_b, buf_r, pools,
        np.zeros(workers, np.int64), 15, 0.0, score, tile, moves, np.zeros(games, np.bool_),
    )
    return time.perf_counter() - t0, int(moves.sum()), time.process_time() - c0


def tdl2048(binary: str, games: int, threads: int, options: list[str]) -> tuple[float, int, float]:
    """Run TDL2048+ training ``games`` 4x6 games: (wall seconds, moves, CPU seconds of the child);
    moves are not read for one game (its start-up run, too short for a speed line)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = [binary, "-n", "4x6patt", "-t", f"1x{games}", *options, "-p", str(threads), "-%", "none"]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir(), check=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if games == 1:
        return wall, 0, cpu
    m = re.search(r"^\s*001/001\s+(\d+)ms\s+([\d.]+)ops", res.stdout, re.MULTILINE)
    if m is None:
        raise RuntimeError(f"cannot read TDL2048+'s speed from its output:\n{res.stdout[-2000:]}")
    ms, ops = int(m.group(1)), float(m.group(2))
    return wall, round(ops * ms / 1000.0), cpu


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


def speed(args: argparse.Namespace) -> None:
    net = Network(args.patterns)
    binary = args.tdl2048 or os.environ.get("TDL2048")
    if binary and args.patterns != "4x6":
        sys.exit("--tdl2048 compares the 4x6 network only")
    for _, online, tc, alpha, _ in SETTINGS:  # compile or load every setting's kernels first
        t0 = time.perf_counter()
        train(net, 1, 1, 0, online, tc, alpha, args.tc_layout)
        dt = time.perf_counter() - t0
        print(f"kernels online={online} tc={tc}: {dt:.1f} s (compile or cache load)", flush=True)
    NumpyTD(net).play(0.5, 6)  # (the engine's moves compile or load on their first call)
    base_dt, base_mv = NumpyTD(net).play(args.baseline_seconds, 7)
    base = base_mv / base_dt
    print(f"numpy baseline (same algorithm): {base / 1e3:.1f} k moves per CPU-second")
    print(
        f"each setting: {args.games} games from an empty network, {args.repeat} round(s); "
        f"TC layout {args.tc_layout}"
    )
    print("M moves per CPU-second of the process, median of the rounds (TDL2048+: less its start-up CPU)")
    head = f"{'setting':<30}{'wall M/s':>9}{'M/CPU-s':>9}{'x numpy':>8}"
    if binary:
        head += f"{'TDL2048+ M/CPU-s':>18}{'x TDL2048+':>11}{'  ratio per round':<20}"
    print(head, flush=True)
    for name, online, tc, alpha, opts in SETTINGS:
        startup = {}
        for workers in (1, 2):
            ours: list[tuple[float, float]] = []
            theirs: list[float] = []
            for r in range(args.repeat):
                for who in ("ours", "theirs") if r % 2 == 0 else ("theirs", "ours"):
                    if who == "ours":
                        seed = 100 + workers + 10 * r
                        dt, mv, cpu = train(net, args.games, workers, seed, online, tc, alpha, args.tc_layout)
                        ours.append((mv / dt, mv / cpu))
                    elif binary:
                        if workers not in startup:  # its start-up: one game with the same options
                            startup[workers] = tdl2048(binary, 1, workers, opts)[2]
                        _, tmv, tcpu = tdl2048(binary, args.games, workers, opts)
                        theirs.append(tmv / max(tcpu - startup[workers], 1e-9))
            wall = statistics.median(x for x, _ in ours)
            per_cpu = statistics.median(y for _, y in ours)
            line = f"{args.patterns} {name}, {workers} worker(s)"
            line = f"{line:<30}{wall / 1e6:>9.2f}{per_cpu / 1e6:>9.2f}{per_cpu / base:>8.0f}"
            if binary:
                t_med = statistics.median(theirs)
                rounds = " ".join(f"{o[1] / t:.2f}" for o, t in zip(ours, theirs, strict=True))
                line += f"{t_med / 1e6:>18.2f}{per_cpu / t_med:>11.2f}  {rounds}"
            print(line, flush=True)


class CompiledInRules:
    """A kernels module of a revision that compiled its rule variant in (no ``rules`` argument): its
    ``train_worker`` called without the trailing ``rules``, which are the default ones here."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.__file__ = module.__file__

    def train_worker(self, *args: object) -> None:
        assert args[-1] == DEFAULT_RULES, "the other revision's module plays the default rules only"
        self.module.train_worker(*args[:-1])


def load_kernels(path: str) -> ModuleType | CompiledInRules:
    """Another revision's generated kernels module from its file (its numba cache is reused)."""
    file = Path(path).expanduser()
    if not file.is_file() or not file.stem.startswith("kernels_"):
        sys.exit(f"--against {path}: not a generated kernels file (~/.cache/ai2048/ntuple/kernels_<key>.py)")
    module = import_generated(file)
    if "rules" not in inspect.signature(module.train_worker.py_func).parameters:
        return CompiledInRules(module)
    return module


def against(args: argparse.Namespace) -> None:
    """This revision's kernels (``new``) against another revision's module (``old``), same games."""
    net = Network(args.patterns)
    kernels = {"new": net.k, "old": load_kernels(args.against)}
    print(f"new: {net.k.__file__}\nold: {kernels['old'].__file__}")
    for _, online, tc, alpha, _ in SETTINGS:  # compile or load every setting's kernels first
        for k in kernels.values():
            net.k = k
            train(net, 1, 1, 0, online, tc, alpha, args.tc_layout)
    print(f"each setting: {args.games} games from an empty network, {args.repeat} round(s), 1 worker")
    print(f"{'setting':<30}{'old M/CPU-s':>12}{'new M/CPU-s':>12}{'new/old':>9}  per round (moves equal)")
    for name, online, tc, alpha, _ in SETTINGS:
        per: dict[str, list[float]] = {"old": [], "new": []}
        moves: dict[str, list[int]] = {"old": [], "new": []}
        for r in range(args.repeat):
            for who in ("old", "new") if r % 2 == 0 else ("new", "old"):
                net.k = kernels[who]
                _, mv, cpu = train(net, args.games, 1, 100 + 10 * r, online, tc, alpha, args.tc_layout)
                per[who].append(mv / cpu)
                moves[who].append(mv)
        o, n = statistics.median(per["old"]), statistics.median(per["new"])
        rounds = " ".join(f"{b / a:.2f}" for a, b in zip(per["old"], per["new"], strict=True))
        same = "yes" if moves["old"] == moves["new"] else "NO"
        line = f"{args.patterns + ' ' + name:<30}{o / 1e6:>12.3f}{n / 1e6:>12.3f}{n / o:>9.3f}"
        print(f"{line}  {rounds} ({same})", flush=True)


def sharing_run(
    net: Network, w0: np.ndarray | None, games: int, mode: str, seed: int
) -> tuple[float, float, int]:
    """One TD(0) backward run of ``--sharing``: (M moves per wall second, per CPU-second, moves)."""
    n = 1 if mode == "one" else 2
    tabs = [net.w] if mode != "private" else [net.w, np.empty_like(net.w)]
    for t in tabs:
        t[:] = 0.0 if w0 is None else w0
    e = np.zeros(1, np.float32)
    step = 8 if mode == "apart" else 1  # RNG states 64 bytes apart, or adjacent as the trainer's
    states = np.zeros(16, np.uint64)
    for i in range(n):
        states[i * step] = seed_state(seed + i)[0]
    buf_b, buf_r = np.zeros((n, 1 << 18), np.uint64), np.zeros((n, 1 << 18), np.int64)
    pools, pool_n = np.zeros((n, 8), np.uint64), np.zeros(16, np.int64)
    outs = [[np.zeros(games, t) for t in (np.int64, np.int64, np.int64, np.bool_)] for _ in range(n)]

    def worker(i: int) -> None:
        o = outs[i]
        net.k.train_worker(
            games // n, tabs[min(i, len(tabs) - 1)], e, e, np.ones(1, np.int64), net.runs, net.nruns,
            net.tbase, net.stage_arr, 0, False, False, False, 0.1 / net.features, 0.0, 0.9,
            states[i * step : i * step + 1], buf_b[i], buf_r[i], pools[i], pool_n[i * 8 : i * 8 + 1], 15, 0.0,
            o[0], o[1], o[2], o[3], 0, 0.5, np.zeros(games, np.int64), 0, DEFAULT_RULES,
        )

    t0, c0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(n) as pool:
        list(pool.map(worker, range(n)))
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    moves = sum(int(o[2].sum()) for o in outs)
    return moves / dt / 1e6, moves / cpu / 1e6, moves


def sharing(args: argparse.Namespace) -> None:
    """Where two Hogwild workers lose time: the shared table, the RNG states' cache line, or neither."""
    net = Network(args.patterns)
    sharing_run(net, None, 2, "one", 1)  # compile or load
    w0 = None
    if args.pretrain:
        sharing_run(net, None, args.pretrain, "one", 7)
        w0 = net.w.copy()
    modes = ("one", "shared", "private", "apart")
    start = "an empty network" if w0 is None else f"the network of {args.pretrain} games"
    print(f"TD(0) backward, {args.games} games a run, from {start}")
    got: dict[str, list[tuple[float, float, int]]] = {m: [] for m in modes}
    for r in range(args.repeat):
        for m in modes if r % 2 == 0 else modes[::-1]:
            got[m].append(sharing_run(net, w0, args.games, m, 100 + r))
    print(f"{'run':<40}{'wall M/s':>9}{'M/CPU-s':>9}{'x one':>7}")
    one = statistics.median(x[1] for x in got["one"])
    names = {"one": "1 worker", "shared": "2 workers, one table (the trainer)",
             "private": "2 workers, a table each", "apart": "2 workers, one table, RNG lines apart"}
    for m in modes:
        wall, cpu = statistics.median(x[0] for x in got[m]), statistics.median(x[1] for x in got[m])
        print(f"{names[m]:<40}{wall:>9.3f}{cpu:>9.3f}{cpu / one:>7.2f}", flush=True)


def _rss_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024
    return 0


def memory(args: argparse.Namespace) -> None:
    chunk = max(1, args.games // 4)
    print(f"ai2048 train ntuple, 1 worker, {args.games} games, a checkpoint every {chunk} games (MiB)")
    print("(kernels are compiled or loaded before the tables are allocated; run twice for cached kernels)")
    print(f"{'setting':<10}{'tables':>8}{'peak RSS':>10}{'1st chunk':>15}{'last chunk':>12}{'seconds':>9}")
    for patterns in ("4x6", "5x6", "8x6"):
        for tc in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                cmd = [
                    sys.executable, "-c",
                    "import sys; from ai2048.cli import main; sys.exit(main(sys.argv[1:]))",
                    "train", "ntuple", "--patterns", patterns, "--games", str(args.games),
                    "--chunk", str(chunk), "--checkpoint-every", str(chunk), "--workers", "1",
                    "--out", f"{tmp}/run",
                ] + (["--tc", "true", "--alpha", "1.0"] if tc else [])
                t0 = time.perf_counter()
                proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                metrics = Path(tmp) / "run" / "metrics.jsonl"
                samples: list[tuple[int, int]] = []  # (chunks logged, RSS)
                while True:
                    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                    if pid:
                        break
                    with contextlib.suppress(OSError, ValueError):  # the run may be writing metrics.jsonl
                        logged = len(metrics.read_text().splitlines()) if metrics.exists() else 0
                        samples.append((logged, _rss_mib(proc.pid)))
                    time.sleep(0.05)
                proc.returncode = os.waitstatus_to_exitcode(status)
                if proc.returncode:
                    raise RuntimeError(f"{' '.join(cmd)} failed with exit code {proc.returncode}")
                live = [(n, r) for n, r in samples if n >= 1 and r > 0]  # (a finished process has no VmRSS)
                first = [r for n, r in live if n == live[0][0]] if live else [0]
                last = [r for n, r in live if n == live[-1][0]] if live else [0]
                tables = _table_mib(patterns) * (3 if tc else 1)
                print(
                    f"{patterns + (' TC' if tc else ''):<10}{tables:>8}{usage.ru_maxrss // 1024:>10}"
                    f"{max(first):>15}{max(last):>12}{time.perf_counter() - t0:>9.0f}",
                    flush=True,
                )


def _table_mib(patterns: str) -> int:
    """MiB of one weight table of ``patterns`` (float32)."""
    return sum(16 ** len(t) for t in parse_patterns(patterns)) * 4 // 2**20


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--patterns", default="4x6")
    p.add_argument("--games", type=int, default=3000, help="games trained per setting")
    p.add_argument("--baseline-seconds", type=float, default=10.0)
    p.add_argument("--repeat", type=int, default=1, help="rounds per setting, ours and TDL2048+ alternating")
    p.add_argument("--tc-layout", choices=("records", "separate"), default="records",
                   help="TC state as (w, E, A) records (one cache line a feature) or three separate arrays")
    p.add_argument("--tdl2048", default="", help="path of a TDL2048+ binary (or $TDL2048) to run beside ours")
    p.add_argument("--memory", action="store_true", help="report peak RSS of training runs instead of speed")
    p.add_argument("--sharing", action="store_true", help="what two Hogwild workers share (TD(0) backward)")
    p.add_argument("--pretrain", type=int, default=0, help="--sharing: games trained before the runs")
    p.add_argument("--against", default="", metavar="FILE",
                   help="A/B this revision's kernels against another revision's generated kernels file")
    args = p.parse_args()
    if args.repeat < 1 or args.games < 1:
        p.error("--repeat and --games must be >= 1")
    if args.memory:
        memory(args)
    elif args.against:
        against(args)
    elif args.sharing:
        sharing(args)
    else:
        speed(args)


if __name__ == "__main__":
    main()
