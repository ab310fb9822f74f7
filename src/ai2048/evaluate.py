"""Play N games with any agent and summarise them: ``evaluate(agent, games=N, seed=S, workers=W)``.

Game ``i`` of an evaluation with seed ``S`` uses the seed
``SeedSequence(S, spawn_key=(i,)).generate_state(1, uint64)[0]`` (see :func:`game_seeds`), so the
same ``S`` gives every agent the same games whatever the number of workers, and a game is replayed
by ``Game(seed)`` plus its recorded actions. Stochastic agents are ``reset(game_seed)`` before
each game. An agent with ``game_kernel()`` plays whole games inside numba, in ``workers`` threads
(:mod:`ai2048.evaluate_fast`: the same games, moves and records); an agent with games in flight
(``games_in_flight`` > 1, ``act_batch``) plays a batch of games per search, in each of ``workers``
processes (:mod:`ai2048.evaluate_batch`); other agents' games run one at a time in worker
processes (``fork`` where available, so compiled numba code is inherited). A progress bar
shows the games as they finish. Ctrl-C (or SIGTERM) stops and keeps the finished games; an agent
that returns an illegal move stops the run with an :class:`EvalError` that names the agent and the
board and carries the result so far.

By default a game runs until no move is legal (or ``max_moves``); ``goal_tile`` stops it when a
tile reaches that value (seeds 000 and 003 stop at 2048) and ``end_on_full_board`` when the board
is full, even if merges remain, or holds a 32768 (seed 004's ``end()``). Both are checked after
each move and its spawn, as the seeds do, by every path: the numba kernels play them too
(:func:`ai2048.search.games.ends_early`), so the rules keep the fast path. ``illegal_move="penalty"``
plays seed 004's unmasked moves: an agent may choose a move that changes nothing, which costs 1
point while a tile still spawns (with ``end_on_full_board``, as the seed plays them).

The agent's kernels are loaded (or compiled) before the clock starts: ``load_seconds`` says how
long that took, apart from the per-game times, moves/s and wall time.

The summary is seed 004's table (tile, % of games reaching it, % ending on it) with Wilson 95%
intervals, the score's mean ± standard error, median and max, moves per game, moves/s and time
per move.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.agents.base import make_agent
from ai2048.checkpoint import read_json, write_json
from ai2048.engine.board import count_empty, max_exponent
from ai2048.game import Game, IllegalMoveError
from ai2048.rules import ACTION_CHARS, MAX_EXPONENT, P_TWO, RULES_VERSION
from ai2048.stats import tile_table

RESULT_FORMAT = "ai2048.eval-result"
"""One letter per action in Action order (UP, RIGHT, DOWN, LEFT), as in :mod:`ai2048.records`."""


class EvalError(RuntimeError):
    """An evaluation stopped by a faulty agent; ``result`` holds the games finished before."""

    def __init__(self, message: str, result: EvalResult) -> None:
        super().__init__(message)
        self.result = result


def game_seeds(seed: int, games: int) -> list[int]:
    """Per-game seeds: ``SeedSequence(seed, spawn_key=(i,))`` for game ``i`` (independent of ``games``)."""
    return [
        int(np.random.SeedSequence(int(seed), spawn_key=(i,)).generate_state(1, np.uint64)[0])
        for i in range(games)
    ]


def check_end_rules(goal_tile: Any, end_on_full_board: Any) -> tuple[int | None, bool]:
    """(goal_tile, end_on_full_board) checked: a power of two in 4..32768 or None, and a bool."""
    if goal_tile is not None:
        if isinstance(goal_tile, bool) or not isinstance(goal_tile, (int, np.integer)):
            raise TypeError(f"goal_tile must be an integer tile value such as 2048, or None; "
                            f"got {goal_tile!r}")
        g = int(goal_tile)
        if g < 4 or g > 2**MAX_EXPONENT or g & (g - 1):
            raise ValueError(f"goal_tile={g} must be a power of two in 4..{2**MAX_EXPONENT} (e.g. 2048), "
                             "or None to play to the end")
        goal_tile = g
    if not isinstance(end_on_full_board, (bool, np.bool_)):
        raise TypeError(f"end_on_full_board must be True or False, got {end_on_full_board!r}")
    return goal_tile, bool(end_on_full_board)


ILLEGAL_MOVES = ("reject", "penalty")
"""What an evaluation does with an agent's move that changes nothing: ``reject`` stops the run with
an :class:`EvalError` (agents play legal moves); ``penalty`` plays it as seed 004 does (its moves
are not masked): the move costs 1 point and a tile still spawns."""


def check_illegal_move(illegal_move: Any, end_on_full_board: bool) -> str:
    """``illegal_move`` checked: one of :data:`ILLEGAL_MOVES`; ``penalty`` needs ``end_on_full_board``."""
    if illegal_move not in ILLEGAL_MOVES:
        raise ValueError(f"illegal_move={illegal_move!r}: use one of {', '.join(ILLEGAL_MOVES)}")
    if illegal_move == "penalty" and not end_on_full_board:
        raise ValueError(
            "illegal_move='penalty' needs end_on_full_board=True (seed 004 plays them together: on a full "
            "board a move that changes nothing has no cell to spawn in)"
        )
    return str(illegal_move)


def ends_early(board: int, goal_tile: int | None, end_on_full_board: bool) -> bool:
    """True when ``board`` (after a move and its spawn) ends the game by a seed's rule: a tile of at
    least ``goal_tile``, or, with ``end_on_full_board``, no empty cell or a 32768 (seed 004)."""
    if goal_tile is None and not end_on_full_board:
        return False
    b = np.uint64(board)
    top = int(max_exponent(b))
    if goal_tile is not None and top >= int(goal_tile).bit_length() - 1:
        return True
    return end_on_full_board and (int(count_empty(b)) == 0 or top >= MAX_EXPONENT)


def play_game(agent: Any, seed: int, *, p_two: float = P_TWO, max_moves: int | None = None,
              name: str | None = None, goal_tile: int | None = None,
              end_on_full_board: bool = False, illegal_move: str = "reject") -> dict[str, Any]:
    """Play one game from ``Game(seed)`` to the end (or ``max_moves``, ``goal_tile`` or a full board
    with ``end_on_full_board``); returns its record dict.

    An illegal move raises ValueError naming the agent, the move and the board; with
    ``illegal_move="penalty"`` a move that changes nothing is played (-1 point, a tile spawns).
    """
    penalty = illegal_move == "penalty"
    g = Game(seed=seed, p_two=p_two)
    if hasattr(agent, "reset"):
        agent.reset(seed)
    name = name or getattr(agent, "name", type(agent).__name__)
    actions = bytearray()
    t0 = time.perf_counter()
    while not g.is_over and (max_moves is None or g.moves < max_moves):
        board = g.board
        a = agent.act(board)
        try:
            g.step(a, penalty=penalty)
        except (IllegalMoveError, ValueError, TypeError) as e:
            raise ValueError(
                f"agent {name!r} chose {a!r} on board {board:#018x} (move {g.moves + 1}): {e}"
            ) from e
        actions.append(ord(ACTION_CHARS[int(a)]))
        if ends_early(g.board, goal_tile, end_on_full_board):
            break
    return {
        "seed": int(seed),
        "score": int(g.score),
        "moves": int(g.moves),
        "max_tile": int(g.max_tile),
        "final_board": f"0x{g.board:016x}",
        "seconds": time.perf_counter() - t0,
        "actions": actions.decode(),
    }


@dataclass
class EvalResult:
    """Every finished game (``records``, in game order) and what produced them."""

    agent: str
    config: dict[str, Any]
    seed: int
    games_requested: int
    p_two: float = P_TWO
    max_moves: int | None = None
    goal_tile: int | None = None
    end_on_full_board: bool = False
    illegal_move: str = "reject"
    records: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    error: str | None = None
    wall_seconds: float = 0.0
    load_seconds: float = 0.0
    workers: int = 1

    @property
    def games(self) -> int:
        return len(self.records)

    def tile_table(self) -> list[dict[str, Any]]:
        """Seed 004's table of the final max tiles (:func:`ai2048.stats.tile_table`)."""
        return tile_table([r["max_tile"] for r in self.records])

    def summary(self) -> dict[str, Any]:
        """Score mean ± standard error, median, max; moves per game; moves/s; ms per move; tile table.

        Times are the games' own: ``load_seconds`` (loading or compiling the agent's kernels, before
        the clock started) is apart."""
        n = self.games
        if n == 0:
            return {"games": 0}
        scores = np.array([r["score"] for r in self.records], dtype=np.float64)
        moves = np.array([r["moves"] for r in self.records], dtype=np.float64)
        secs = float(sum(r["seconds"] for r in self.records))
        total_moves = float(moves.sum())
        return {
            "games": n,
            "score_mean": float(scores.mean()),
            "score_se": float(scores.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0,
            "score_median": float(np.median(scores)),
            "score_max": int(scores.max()),
            "score_min": int(scores.min()),
            "moves_mean": float(moves.mean()),
            "moves_per_s": total_moves / secs if secs > 0 else float("inf"),
            "ms_per_move": 1000.0 * secs / total_moves if total_moves else 0.0,
            "game_seconds": secs,
            "wall_seconds": self.wall_seconds,
            "load_seconds": self.load_seconds,
            "tiles": self.tile_table(),
        }

    def format(self) -> str:
        """The summary as text: a header line, the tile table, then the score and speed lines."""
        s = self.summary()
        head = (f"{self.agent} {self.config or ''}  games {self.games}/{self.games_requested}  "
                f"seed {self.seed}")
        rules = [f"stop at {self.goal_tile}"] if self.goal_tile is not None else []
        rules += ["end on a full board"] if self.end_on_full_board else []
        rules += ["unchanged moves cost 1 and spawn"] if self.illegal_move == "penalty" else []
        if rules:
            head += f"  ({', '.join(rules)})"
        if self.interrupted:
            head += "  (interrupted)"
        if self.error:
            head += f"  (stopped: {self.error})"
        if not self.games:
            return head + "\nno finished games"
        lines = [head, f"{'tile':>6} {'reach %':>8} {'95% CI':>15} {'end %':>7} {'95% CI':>15}"]
        for row in s["tiles"]:
            lo, hi = row["reach_ci"]
            elo, ehi = row["end_ci"]
            lines.append(
                f"{row['tile']:>6} {100 * row['reach_rate']:>8.1f} {f'{100 * lo:.1f}-{100 * hi:.1f}':>15} "
                f"{100 * row['end_rate']:>7.1f} {f'{100 * elo:.1f}-{100 * ehi:.1f}':>15}"
            )
        lines.append(
            f"score {s['score_mean']:.0f} ± {s['score_se']:.0f} (median {s['score_median']:.0f}, "
            f"max {s['score_max']})  moves/game {s['moves_mean']:.0f}  {s['moves_per_s']:.1f} moves/s  "
            f"{s['ms_per_move']:.2f} ms/move  (+ {self.load_seconds:.2f} s loading the agent)"
        )
        return "\n".join(lines)

    def best_and_worst(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The records of the highest- and lowest-scoring games."""
        if not self.records:
            raise ValueError("no finished games")
        ordered = sorted(self.records, key=lambda r: r["score"])
        return ordered[-1], ordered[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RESULT_FORMAT,
            "version": 1,
            "rules_version": RULES_VERSION,
            "agent": self.agent,
            "config": self.config,
            "seed": self.seed,
            "games_requested": self.games_requested,
            "p_two": self.p_two,
            "max_moves": self.max_moves,
            "goal_tile": self.goal_tile,
            "end_on_full_board": self.end_on_full_board,
            "illegal_move": self.illegal_move,
            "interrupted": self.interrupted,
            "error": self.error,
            "wall_seconds": self.wall_seconds,
            "load_seconds": self.load_seconds,
            "workers": self.workers,
            "summary": self.summary(),
            "games": self.records,
        }

    def save(self, path: str | Path) -> Path:
        """Write the result as JSON, atomically (temp file + rename)."""
        write_json(path, self.to_dict())
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> EvalResult:
        """Read a result written by :meth:`save`; a foreign or corrupt file raises, naming it."""
        d = read_json(path, "evaluation result")
        if not isinstance(d, dict) or d.get("format") != RESULT_FORMAT:
            raise ValueError(f"{path} is not an ai2048 evaluation result (no format {RESULT_FORMAT!r})")
        try:
            return cls(
                agent=d["agent"], config=d["config"], seed=d["seed"], games_requested=d["games_requested"],
                p_two=d["p_two"], max_moves=d["max_moves"], records=list(d["games"]),
                interrupted=d["interrupted"], error=d["error"], wall_seconds=d["wall_seconds"],
                # goal_tile, end_on_full_board, illegal_move and load_seconds are absent in older results
                workers=d["workers"], goal_tile=d.get("goal_tile"),
                end_on_full_board=bool(d.get("end_on_full_board", False)),
                illegal_move=d.get("illegal_move", "reject"), load_seconds=d.get("load_seconds", 0.0),
            )
        except KeyError as e:
            raise ValueError(
                f"evaluation result {path} lacks the key {e}; it is truncated or from another tool"
            ) from e


def _agent_and_name(agent: Any, config: dict[str, Any] | None) -> tuple[Any, str, dict[str, Any]]:
    if isinstance(agent, str):
        cfg = dict(config or {})
        return make_agent(agent, **cfg), agent, cfg
    if config:
        raise ValueError("config= is only used when the agent is given by name")
    if not hasattr(agent, "act"):
        raise TypeError(f"agent must be a registered name or have act(board), got {type(agent).__name__}")
    return agent, getattr(agent, "name", type(agent).__name__), dict(getattr(agent, "config", {}) or {})


_WORKER: dict[str, Any] = {}


def _init_worker(agent: Any, name: str, rules: dict[str, Any], parent: int | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the pool
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # pool.terminate() ends a worker quietly
    if parent is not None:
        _die_with_parent(parent)
    one_torch_thread()
    _WORKER.update(agent=agent, name=name, rules=rules)


def _die_with_parent(parent: int) -> None:
    """In a worker: end with SIGTERM when the evaluating process dies (Linux), and at once if it is
    already gone. A ``kill -9`` of ``ai2048 eval --workers N`` used to leave its workers playing
    their games to the end (minutes for a slow agent) and then dying with BrokenPipeError tracebacks."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(AttributeError, OSError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)


_PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal this process gets when its parent thread dies."""


def one_torch_thread() -> None:
    """In an evaluation's worker process: torch (when loaded) runs one intra-op thread from now on.

    A forked child inherits torch's OpenMP state but not its thread pool, so the first torch op that
    the parent had run on several threads waits forever in the child (``ai2048 eval DQN_RUN --set
    threads=2 --workers 2`` hung with every worker asleep). With one thread torch never enters an
    OpenMP region (torch's DataLoader workers do the same); the workers are the parallelism (each
    plays one game, or one batch of games in flight, at a time). Agents that set threads per call are
    capped too.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return
    torch.set_num_threads(1)
    from ai2048.search.streams import cap_torch_threads

    cap_torch_threads(1)


def _run_one(task: tuple[int, int]) -> tuple[int, dict[str, Any] | None, str | None]:
    i, s = task
    try:
        rec = play_game(_WORKER["agent"], s, name=_WORKER["name"], **_WORKER["rules"])
    except ValueError as e:
        return i, None, str(e)
    return i, rec, None


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def sigterm_as_interrupt() -> Any:
    """Let SIGTERM stop an evaluation as Ctrl-C does, keeping the finished games; returns the old handler.

    A job started in the background by a non-interactive shell has SIGINT ignored, so ``kill``
    (SIGTERM) is how such a run is stopped; without this it would lose every finished game.
    Outside the main thread (where handlers cannot be set) it does nothing and returns None.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _interrupt)


MAX_WORKERS = 256
"""Most ``workers`` (a thread or a process each): ``workers=1000000`` started threads until the machine
ran out of memory, deaf to Ctrl-C."""
MAX_MOVES = 10**9
"""Largest ``max_moves``: no game lasts past 262,144 moves (each spawn adds at least 2 to a tile sum that
cannot pass 16 x 32768), so a larger cap means nothing (and 10**30 overflowed the numba kernels)."""


def check_workers(workers: Any) -> int:
    """``workers`` checked: a whole number in 1..:data:`MAX_WORKERS`."""
    return checks.whole("workers", workers, 1, MAX_WORKERS, why="a thread or process each")


def check_max_moves(max_moves: Any) -> int | None:
    """``max_moves`` checked: None (play to the end) or a whole number in 1..:data:`MAX_MOVES`."""
    if max_moves is None:
        return None
    return checks.whole("max_moves", max_moves, 1, MAX_MOVES,
                        why="no game lasts past 262,144 moves; leave it out to play every game to the end")


def evaluate(
    agent: Any,
    games: int = 100,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    *,
    config: dict[str, Any] | None = None,
    p_two: float = P_TWO,
    max_moves: int | None = None,
    goal_tile: int | None = None,
    end_on_full_board: bool = False,
    illegal_move: str = "reject",
    backend: str = "local",
    address: str | None = None,
    done: dict[int, dict[str, Any]] | None = None,
    on_game: Callable[[dict[str, Any]], None] | None = None,
) -> EvalResult:
    """Play ``games`` games with ``agent`` (an agent object or a registered name + ``config``).

    Args:
        agent: anything with ``act(board) -> Action``, or a registry name.
        games: number of games (>= 1); game ``i`` uses ``game_seeds(seed, games)[i]``.
        seed: the evaluation seed (same seed, same games for every agent).
        workers: processes playing games in parallel (1 = in this process); an agent with games in
            flight batches the games of each process.
        progress: show a progress bar (tqdm) with the running mean score.
        config: the agent's config when ``agent`` is a name.
        p_two: spawn odds of the games.
        max_moves: stop each game after this many moves (None = play to the end).
        goal_tile: stop a game when a tile reaches this value (seeds 000 and 003: 2048); None = never.
        end_on_full_board: stop a game when the board is full even if merges remain, or holds a
            32768 (seed 004's ``end()``); kernel-backed agents play either rule in numba.
        illegal_move: ``reject`` (an agent's move that changes nothing stops the run) or ``penalty``
            (seed 004: it costs 1 point and a tile still spawns; needs ``end_on_full_board``).
        backend: "local" (processes on this machine) or "ray" (one task per game on a Ray cluster,
            results streamed back; needs the ``ray`` extra).
        address: the Ray cluster address (None: start or join a local one).
        done: finished game records by index (``eval --resume``): kept, and only the other games are
            played, with the same per-game seeds.
        on_game: called with each newly finished game's record as it arrives (``eval --out`` streams
            them to disk, :mod:`ai2048.eval_stream`).
    """
    games = checks.whole("games", games, 1)
    workers = check_workers(workers)
    seed = checks.whole("seed", seed, 0)
    max_moves = check_max_moves(max_moves)
    if backend not in ("local", "ray"):
        raise ValueError(f"backend={backend!r}: use 'local' or 'ray'")
    goal_tile, end_on_full_board = check_end_rules(goal_tile, end_on_full_board)
    illegal_move = check_illegal_move(illegal_move, end_on_full_board)
    rules: dict[str, Any] = {"p_two": p_two, "max_moves": max_moves, "goal_tile": goal_tile,
                             "end_on_full_board": end_on_full_board, "illegal_move": illegal_move}
    ag, name, cfg = _agent_and_name(agent, config)
    result = EvalResult(agent=name, config=cfg, seed=seed, games_requested=games, p_two=p_two,
                        max_moves=max_moves, goal_tile=goal_tile, end_on_full_board=end_on_full_board,
                        illegal_move=illegal_move, workers=workers)
    seeds = game_seeds(seed, games)
    by_index: dict[int, dict[str, Any]] = {i: r for i, r in (done or {}).items() if i < games}
    todo = [(i, s) for i, s in enumerate(seeds) if i not in by_index]
    score_sum = sum(r["score"] for r in by_index.values())
    top = max((r["max_tile"] for r in by_index.values()), default=0)
    kernel = _game_kernel(ag) if backend == "local" else None
    if backend == "local" and todo:
        result.load_seconds = _load(ag, kernel, p_two)  # before the clock: not any game's time
    previous_sigterm = sigterm_as_interrupt()  # before the bar: once it shows, SIGTERM is handled
    bar = None
    t0 = time.perf_counter()
    pool = None
    stream: Any = None
    try:
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=games, initial=len(by_index), desc=f"eval {name}", unit="game",
                       dynamic_ncols=True)
        if backend == "ray":
            stream = _ray_stream(ag, name, todo, rules, address)
        elif kernel is not None:  # whole games in numba
            from ai2048.evaluate_fast import kernel_stream

            stream = kernel_stream(kernel, name, todo, p_two, max_moves, workers, goal_tile=goal_tile,
                                   end_on_full_board=end_on_full_board, illegal_move=illegal_move)
        elif backend == "local" and getattr(ag, "games_in_flight", 1) > 1:
            # games in flight: one batched search per move for all of a process's games; with several
            # workers each process batches its games (one game at a time each lost the batching)
            from ai2048.evaluate_batch import batched_stream, pooled_batched_stream

            if workers == 1 or len(todo) < 2:
                stream = batched_stream(ag, name, todo, p_two, max_moves, goal_tile=goal_tile,
                                        end_on_full_board=end_on_full_board, illegal_move=illegal_move)
            else:  # the agent was loaded above (_load): forked workers inherit its compiled code
                stream = pooled_batched_stream(ag, name, todo, rules, workers, _pool_context())
        elif workers == 1:
            stream = (_play_local(ag, name, i, s, rules) for i, s in todo)
        else:
            pool = _pool_context().Pool(workers, initializer=_init_worker,
                                        initargs=(ag, name, rules, os.getpid()))
            stream = pool.imap_unordered(_run_one, todo, chunksize=1)
        for i, rec, err in stream:
            if err is not None:
                result.error = err
                break
            assert rec is not None
            by_index[i] = {"index": i, **rec}
            if on_game is not None:
                on_game(by_index[i])
            if bar is not None:  # running totals: thousands of games a second come from the kernels
                score_sum += rec["score"]
                top = max(top, rec["max_tile"])
                bar.set_postfix(score=f"{score_sum / len(by_index):.0f}", max=top, refresh=False)
                bar.update(1)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
        close = getattr(stream, "close", None)
        if close is not None:  # a generator's workers end now, not when it is garbage collected
            close()
        if pool is not None:
            pool.terminate()
            pool.join()
        if bar is not None:
            bar.close()
    result.records = [by_index[i] for i in sorted(by_index)]
    result.wall_seconds = time.perf_counter() - t0
    if result.error is not None:
        raise EvalError(result.error, result)
    return result


def _play_local(agent: Any, name: str, i: int, s: int,
                rules: dict[str, Any]) -> tuple[int, dict[str, Any] | None, str | None]:
    try:
        return i, play_game(agent, s, name=name, **rules), None
    except ValueError as e:
        return i, None, str(e)


def _game_kernel(agent: Any) -> Any:
    """The agent's whole-game numba kernel when it has one (:mod:`ai2048.evaluate_fast`), else None."""
    if getattr(agent, "game_kernel", None) is None:
        return None
    from ai2048.evaluate_fast import kernel_of

    return kernel_of(agent)


def _pool_context() -> Any:
    """The multiprocessing context of evaluation workers: ``fork`` where available (compiled numba
    code and the built agent are inherited), else ``spawn``."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def _load(agent: Any, kernel: Any, p_two: float) -> float:
    """Load (or compile) what the agent plays with before the clock starts; returns the seconds taken.

    A kernel-backed agent's game loop is loaded by one call with no games; any other agent chooses
    one move in this process, so its first game is not charged with loading its numba code (and
    forked workers inherit it instead of compiling it again). An agent that fails on that move
    fails again, with the board named, in its first game.
    """
    t0 = time.perf_counter()
    if kernel is not None:
        from ai2048.evaluate_fast import load_kernel

        load_kernel(kernel, p_two)
    else:
        with contextlib.suppress(Exception):
            agent.act(Game(seed=0, p_two=p_two).board)
    return time.perf_counter() - t0


def _ray_stream(agent: Any, name: str, todo: list[tuple[int, int]], rules: dict[str, Any],
                address: str | None) -> Any:
    """Yield (index, record, error) from one Ray task per game, as the tasks finish."""
    try:
        import ray
    except ImportError as e:
        raise ImportError("--backend ray needs Ray: pip install 'ai2048[ray]' (or pip install ray)") from e
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    agent_ref = ray.put(agent)

    @ray.remote
    def task(agent: Any, i: int, s: int) -> tuple[int, dict[str, Any] | None, str | None]:
        return _play_local(agent, name, i, s, rules)

    pending = [task.remote(agent_ref, i, s) for i, s in todo]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
