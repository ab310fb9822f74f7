"""Speed figures of the engine and the envs, each with a ratio against a baseline measured in the
same run (so the ratio stays meaningful on a loaded machine). ``ai2048 bench`` prints them.

Every figure is the best of a few timed repeats after a warm-up call, so numba compilation (or
loading it from the cache) never counts towards steady-state speed; it is measured on its own.
Single-thread figures are timed in thread CPU time (``time.thread_time``): on a shared machine
that is the speed of the core the work actually got. Multi-core figures are wall-clock time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import numpy as np

from ai2048.bench import baselines, others
from ai2048.bench.kernels import collect_boards, pick_legal, random_games, raw_moves
from ai2048.rules import P_TWO as _P

P_TWO = np.float64(_P)


@dataclass(frozen=True)
class Figure:
    """One measured figure and the baseline it is compared with."""

    key: str
    name: str
    value: float
    unit: str
    baseline: str
    baseline_value: float
    target: str = ""
    note: str = ""

    @property
    def ratio(self) -> float:
        """``value / baseline_value`` (for times: how many times slower the baseline is)."""
        if self.unit == "s":
            return self.baseline_value / self.value if self.value else float("inf")
        return self.value / self.baseline_value if self.baseline_value else float("inf")

    def as_dict(self) -> dict:
        return {**asdict(self), "ratio": self.ratio}


def _best_rate(
    fn: Callable[[], float], seconds: float, repeats: int = 3, clock: Callable[[], float] = time.thread_time
) -> float:
    """Best ``work / elapsed`` over ``repeats`` calls of ``fn`` (it returns its work), within about
    ``seconds`` of wall time; ``clock`` is CPU time of this thread unless the work is multi-threaded."""
    fn()  # warm up: compile or load from cache, fill caches
    best = 0.0
    deadline = time.perf_counter() + seconds
    for i in range(repeats):
        t = clock()
        work = fn()
        best = max(best, work / max(clock() - t, 1e-9))
        if i and time.perf_counter() > deadline:
            break
    return best


def _wall_rate(fn: Callable[[], float], seconds: float, repeats: int = 3) -> tuple[float, float]:
    """Best wall-clock ``work / elapsed`` for multi-threaded work, and the cores it got in that run
    (process CPU seconds per wall second: below the thread count when the machine is busy)."""
    fn()
    best, got = 0.0, 0.0
    deadline = time.perf_counter() + seconds
    for i in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        work = fn()
        wall = max(time.perf_counter() - t, 1e-9)
        if work / wall > best:
            best, got = work / wall, (time.process_time() - c) / wall
        if i and time.perf_counter() > deadline:
            break
    return best, got


def _threads(n: int) -> int:
    import numba

    n = max(1, min(n, _max_threads()))
    numba.set_num_threads(n)
    return n


def _max_threads() -> int:
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)  # type: ignore[attr-defined]


def fmt_rate(x: float, unit: str) -> str:
    """``1.5e8 -> '150 M'`` style, with the unit."""
    if unit == "s":
        return f"{x:.2f} s"
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.3g} {prefix}{unit}"
    return f"{x:.3g} {unit}"


_WARM_SNIPPET = """
import time
t0 = time.perf_counter()
import numpy as np
import ai2048
from ai2048 import engine
from ai2048.bench.kernels import collect_boards, raw_moves, random_games
from ai2048.engine.batch import step_single
from ai2048.envs.batch import GameBatch, kernel_options
from ai2048.envs.options import EnvOptions
from ai2048.rules import P_TWO as P
t1 = time.perf_counter()
b = np.uint64(ai2048.encode([1, 1, 2, 0] + [0] * 12))
s = engine.seed_state(1)
engine.move(b, 3); engine.legal_bits(b); engine.spawn(b, s, P); engine.spawn_outcomes(b, P)
engine.random_play(b, s, P)
boards = collect_boards(100, s, P)
raw_moves(boards, np.int64(1))
random_games(boards[:4], np.arange(4, dtype=np.uint64), P)
engine.batch_random_play(boards[:4], np.arange(4, dtype=np.uint64), P)
step_single(b, np.int64(0), 3, s, np.float64(P), kernel_options(EnvOptions()), np.empty((4, 4), np.uint8))
for parallel in (False, True):
    g = GameBatch(4, seed=0, parallel=parallel)
    g.reset()
    g.step(np.zeros(4, np.int64))
print(t1 - t0, time.perf_counter() - t1)
"""


def _first_calls(cache_dir: str | None) -> tuple[float, float]:
    """(import seconds, first-call seconds) of the engine kernels in a fresh process."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    out = subprocess.run(
        [sys.executable, "-c", _WARM_SNIPPET], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[-2]), float(out[-1])


def compile_figure(fresh: bool = False) -> Figure:
    """Seconds to get the kernels running in a new process from numba's cache, vs compiling them."""
    _first_calls(None)  # make sure the cache is filled
    imp, cached = _first_calls(None)
    if fresh:
        with tempfile.TemporaryDirectory(prefix="ai2048-numba-") as d:
            _, compiled = _first_calls(d)
        baseline, base_value = "fresh compile", compiled
    else:
        baseline, base_value = "fresh compile (--fresh-compile)", float("nan")
    return Figure(
        "compile",
        "numba cache load",
        cached,
        "s",
        baseline,
        base_value,
        note=f"first calls of the move, spawn, random-play and env-step kernels in a new process; "
        f"import ai2048 takes {imp:.2f} s more",
    )


def realistic_boards(n: int, seed: int = 0) -> np.ndarray:
    """[n] boards from uniformly random games (seeded)."""
    from ai2048.engine.rng import seed_state

    return collect_boards(np.int64(n), seed_state(seed), P_TWO)


def raw_move_figure(boards: np.ndarray, seconds: float) -> Figure:
    """Moves/s of the table-driven kernels on one thread, all four directions of every board."""
    _threads(1)
    reps = 4
    rate = _best_rate(lambda: (raw_moves(boards, np.int64(reps)), 4 * reps * boards.shape[0])[1], seconds)
    base = _best_rate(lambda: (baselines.numpy_moves(boards), 4 * boards.shape[0])[1], seconds / 2)
    return Figure(
        "raw_moves",
        "raw moves, 1 core",
        rate,
        "moves/s",
        "numpy, same tables",
        base,
        ">= 150 M/s (nneonneo C++ ~300 M/s here)",
        f"{boards.shape[0]:,} boards from random games, 4 directions each",
    )


def reference_move_figure(boards: np.ndarray, seconds: float) -> Figure:
    """The same raw-move figure against the pure-Python reference rules."""
    _threads(1)
    rate = _best_rate(lambda: (raw_moves(boards, np.int64(1)), 4 * boards.shape[0])[1], seconds)
    cells = [[(int(b) >> (4 * i)) & 0xF for i in range(16)] for b in boards[:2000]]
    base = _best_rate(lambda: (baselines.reference_moves(cells), 4 * len(cells))[1], seconds / 2, repeats=2)
    return Figure("raw_moves_ref", "raw moves, 1 core", rate, "moves/s", "pure-Python reference", base)


def _starts(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    from ai2048.engine.spawn import new_board

    states = np.arange(seed, seed + n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    starts = np.array([new_board(states[i : i + 1], P_TWO) for i in range(n)], dtype=np.uint64)
    return starts, states


def selfplay_figures(games: int, seconds: float) -> tuple[Figure, Figure]:
    """Random self-play moves/s on one thread (vs the pure-Python rules) and on every core (vs one)."""
    from ai2048.engine.batch import batch_random_play

    starts, states = _starts(games, 1)

    def one() -> int:
        return int(random_games(starts, states.copy(), P_TWO)[0])

    _threads(1)
    rate1 = _best_rate(one, seconds)
    base = _best_rate(lambda: baselines.reference_random_play(2, 0), seconds / 2, repeats=2)
    single = Figure(
        "selfplay_1",
        "random self-play, 1 core",
        rate1,
        "moves/s",
        "pure-Python reference",
        base,
        ">= 10 M/s per core",
        "random_play: uniformly random legal move, then spawn",
    )
    cores = _threads(_max_threads())
    rate_n, got = _wall_rate(lambda: int(batch_random_play(starts, states.copy(), P_TWO)[2].sum()), seconds)
    multi = Figure(
        "selfplay_n",
        f"random self-play, {cores} cores",
        rate_n,
        "moves/s",
        "same, 1 core",
        rate1,
        "",
        f"batch_random_play (prange) over {games:,} games; wall clock, got {got:.2f} of {cores} cores",
    )
    return single, multi


def _env_loop(env, steps: int, seed: int) -> int:
    """A plain Gymnasium loop: a uniformly random legal action from ``info["action_mask"]``."""
    legal = {}
    for bits in range(16):
        mask = np.array([(bits >> a) & 1 for a in range(4)], dtype=bool)
        legal[mask.tobytes()] = [a for a in range(4) if mask[a]] or [0]
    picks = np.random.default_rng(seed).integers(0, 1 << 30, size=steps).tolist()
    _, info = env.reset(seed=seed)
    for i in range(steps):
        options = legal[info["action_mask"].tobytes()]
        _, _, terminated, truncated, info = env.step(options[picks[i] % len(options)])
        if terminated or truncated:
            _, info = env.reset()
    return steps


def gym_figure(seconds: float, reference_rate: float) -> tuple[Figure, Figure | None]:
    """``gymnasium.make("ai2048/Game2048-v0")`` stepped by a plain Python loop, vs OpenSpiel (or the
    pure-Python rules when OpenSpiel is not installed)."""
    import gymnasium as gym

    from ai2048.envs import ENV_ID

    _threads(1)
    env = gym.make(ENV_ID)
    rate = _best_rate(lambda: _env_loop(env, 100_000, 0), seconds)
    theirs = None
    if others.available("pyspiel"):
        spiel = others.openspiel_steps_per_s(seconds / 2)
        baseline, base = "OpenSpiel 2048, same loop", spiel
        theirs = Figure(
            "openspiel",
            "OpenSpiel 2048 loop",
            spiel,
            "steps/s",
            "pure-Python reference",
            reference_rate,
            "185 k/s measured here (issue)",
            "pyspiel: random legal move + sampled chance node",
        )
    else:
        baseline, base = "pure-Python reference (OpenSpiel not installed)", reference_rate
    ours = Figure(
        "gym_make",
        "gymnasium.make loop",
        rate,
        "steps/s",
        baseline,
        base,
        ">= 370 k/s (2x OpenSpiel's 185 k/s)",
        "plain Python loop, random legal action from info['action_mask'], wrappers of gym.make included",
    )
    return ours, theirs


def _vector_rate(num_envs: int, seconds: float, wall: bool) -> tuple[float, float]:
    import gymnasium as gym

    from ai2048.engine.rng import seed_state
    from ai2048.envs import ENV_ID

    venv = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point")
    actions = np.zeros(num_envs, dtype=np.int64)
    state = seed_state(0)
    _, infos = venv.reset(seed=0)
    holder = [infos]

    def run(iters: int = 100) -> int:
        infos = holder[0]
        for _ in range(iters):
            pick_legal(infos["action_mask"], state, actions)
            _, _, _, _, infos = venv.step(actions)
        holder[0] = infos
        return iters * num_envs

    rate, got = _wall_rate(run, seconds) if wall else (_best_rate(run, seconds), 1.0)
    venv.close()
    return rate, got


def vector_figures(num_envs: int, seconds: float, single_rate: float) -> list[Figure]:
    """``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` random stepping on one
    core (serial kernel, vs the ``gymnasium.make`` loop) and on every core (parallel kernel, vs one
    core in the same run), and pgx's 2048 beside them when it is installed."""
    note = "random legal actions (numba pick from infos['action_mask']), autoreset on"
    _threads(1)
    rate1, _ = _vector_rate(num_envs, seconds, wall=False)
    figs = [
        Figure(
            "make_vec_1",
            f"make_vec {num_envs} envs, 1 core",
            rate1,
            "steps/s",
            "gymnasium.make loop",
            single_rate,
            "",
            note + "; serial kernel, thread CPU time",
        )
    ]
    cores = _threads(_max_threads())
    rate_n, got = _vector_rate(num_envs, seconds, wall=True)
    figs.append(
        Figure(
            "make_vec_n",
            f"make_vec {num_envs} envs, {cores} cores",
            rate_n,
            "steps/s",
            "same, 1 core",
            rate1,
            ">= 13 M/s; >= 1.6x one core (issue 16); 10x pgx's 1.31 M/s (issue)",
            note + f"; parallel kernel, wall clock, got {got:.2f} of {cores} cores",
        )
    )
    if others.available("pgx"):
        pgx_rate = others.pgx_steps_per_s(num_envs, seconds)
        figs.append(
            Figure(
                "pgx",
                f"pgx 2048, {num_envs} envs, jax CPU",
                pgx_rate,
                "steps/s",
                f"make_vec {num_envs} envs, {cores} cores",
                rate_n,
                "1.31 M/s measured here (issue)",
                "jit(vmap(auto_reset(step))), random legal actions; wall clock",
            )
        )
    return figs


def eval_figure(run: str, games: int, seconds: float) -> Figure:
    """1-ply games of the n-tuple network in ``run`` on the fast path (whole games in numba), one
    thread, against the Python loop (``act`` per move) on the same games."""
    from ai2048.agents.base import load_agent
    from ai2048.bench.evaluation import TDL2048_TEST_MOVES_PER_S, fast_rate, loop_rate

    agent = load_agent(run)
    if not hasattr(agent, "net"):
        name = getattr(agent, "name", "?")
        raise ValueError(f"{run} is not an n-tuple run directory (its agent is {name!r})")
    fast, moves, _ = fast_rate(agent, games, 0)
    base, _ = loop_rate(agent, seconds, 0)
    lo, hi = TDL2048_TEST_MOVES_PER_S
    return Figure(
        "eval_ntuple", f"n-tuple {agent.net.patterns} 1-ply eval, 1 core", fast, "moves/s",
        "Python loop, act per move", base, f">= 1.5 M/s; TDL2048+ {lo / 1e6:.2f}-{hi / 1e6:.2f} M/s",
        note=f"{games:,} games, {moves:,} moves in thread CPU time",
    )


SECTIONS = ("compile", "moves", "selfplay", "gym", "vector", "eval")
"""Every section; ``eval`` needs an n-tuple run directory (``ntuple=``)."""


MAX_BOARDS = 1 << 26
"""Most boards in the raw-move array (512 MiB of boards; the default is 1,000,000)."""
MAX_GAMES = 1 << 24
"""Most games per self-play or evaluation measurement (one 64-bit state per game, allocated up front)."""


def run(
    sections: Iterable[str] = SECTIONS,
    *,
    seconds: float = 2.0,
    boards: int = 1_000_000,
    games: int = 2_000,
    num_envs: int = 4096,
    fresh_compile: bool = False,
    progress: Callable[[str], None] | None = None,
    ntuple: str | None = None,
) -> list[Figure]:
    """Measure the chosen sections; ``seconds`` bounds each timed measurement (best of 3).

    ``ntuple``: a run directory of ``ai2048 train ntuple``, whose network section ``eval`` plays.
    """
    sections = list(sections)
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise ValueError(f"unknown bench section(s) {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    if "eval" in sections and ntuple is None:
        raise ValueError(
            "bench section 'eval' plays an n-tuple network: give its run directory (--ntuple RUN)"
        )
    for name, value in (("seconds", seconds), ("boards", boards), ("games", games), ("num_envs", num_envs)):
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")
    for name, value, most in (("boards", boards, MAX_BOARDS), ("games", games, MAX_GAMES)):
        if value > most:  # arrays allocated up front: past this, a MemoryError traceback
            raise ValueError(
                f"{name}={value:,} must be at most {most:,} (the arrays it needs must fit in memory)")
    say = progress or (lambda _: None)
    figs: list[Figure] = []
    reference_rate = float("nan")
    gym_rate = float("nan")
    try:
        if "compile" in sections:
            say("numba compile / cache load (fresh processes)")
            figs.append(compile_figure(fresh_compile))
        if "moves" in sections:
            say(f"raw moves on {boards:,} boards")
            b = realistic_boards(boards)
            figs.append(raw_move_figure(b, seconds))
            figs.append(reference_move_figure(b[: min(boards, 200_000)], seconds / 2))
        if {"selfplay", "gym", "vector"} & set(sections):
            say(f"random self-play over {games:,} games")
            single, multi = selfplay_figures(games, seconds)
            reference_rate = single.baseline_value
            if "selfplay" in sections:
                figs += [single, multi]
        if {"gym", "vector"} & set(sections):
            say("gymnasium.make loop" + (" and OpenSpiel" if others.available("pyspiel") else ""))
            ours, theirs = gym_figure(seconds, reference_rate)
            gym_rate = ours.value
            if "gym" in sections:
                figs += [ours] + ([theirs] if theirs else [])
        if "vector" in sections:
            say(f"make_vec with {num_envs} envs" + (" and pgx" if others.available("pgx") else ""))
            figs += vector_figures(num_envs, seconds, gym_rate)
        if "eval" in sections:
            assert ntuple is not None
            say(f"n-tuple 1-ply evaluation, {games:,} games")
            figs.append(eval_figure(ntuple, games, seconds))
    finally:
        _threads(_max_threads())
    return figs


def table(figs: list[Figure]) -> list[list[str]]:
    """Rows of strings: figure, value, baseline, baseline value, ratio, target."""
    rows = [["figure", "value", "baseline", "baseline value", "ratio", "target"]]
    for f in figs:
        ratio = f"{f.ratio:,.1f}x" if np.isfinite(f.ratio) else "-"
        rows.append(
            [
                f.name,
                fmt_rate(f.value, f.unit),
                f.baseline,
                fmt_rate(f.baseline_value, f.unit) if np.isfinite(f.baseline_value) else "-",
                ratio,
                f.target,
            ]
        )
    return rows


def machine_note() -> str:
    """CPU count and load average, printed with the figures (the machine may be shared)."""
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return f"{os.cpu_count()} CPUs, load average {load}, numba threads {_max_threads()}"


def render(figs: list[Figure]) -> str:
    """The figures as a plain aligned text table (for scripts and logs)."""
    rows = table(figs)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.rjust(w) if i in (1, 3, 4) else c.ljust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{f.name}: {f.note}" for f in figs if f.note]
    return "\n".join([line.rstrip() for line in lines] + notes + [f"({machine_note()})"])
