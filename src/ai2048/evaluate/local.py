"""Games one at a time: in this process, in worker processes, or as Ray tasks.

:class:`LiveGame` is one game in play under :class:`~ai2048.evaluate.core.Rules` (its ``Game``,
actions and time); :func:`play_game` plays one to the end with ``agent.act``, and the games-in-flight
path (:mod:`ai2048.evaluate.batched`) steps many of them. :func:`worker_stream` is the one pool of
worker processes that plays seeded games, whatever a game is (an evaluation's, ``ai2048 pool``'s):
``fork`` where available, so compiled numba code and the built agent are inherited
(:func:`pool_context`), each worker set up by :func:`worker_setup` (Ctrl-C left to the parent, death
with it, one torch thread).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sized
from functools import partial
from typing import Any, TypeVar

from ai2048.evaluate.core import Rules, check_agent_fits, game_record
from ai2048.game import Game, IllegalMoveError
from ai2048.rules import ACTION_CHARS, P_TWO, RULES_VERSION


class LiveGame:
    """One game in play under ``rules``: its :class:`~ai2048.game.Game`, actions so far and the
    seconds charged to it."""

    def __init__(self, seed: int, rules: Rules) -> None:
        self.seed = int(seed)
        self.rules = rules
        self.game = Game(seed=seed, p_two=rules.p_two, rules=rules.rules)
        self.actions = bytearray()
        self.seconds = 0.0
        self.ended = False

    @property
    def over(self) -> bool:
        """No legal move, ``max_moves`` reached, or an end rule hit by the last move."""
        return self.ended or self.game.is_over or self.rules.capped(self.game.moves)

    def step(self, action: Any, name: str) -> str | None:
        """Play ``action``; returns None, or the error naming the agent, the move and the board when the
        move is refused (an unchanged board under ``illegal_move="reject"``, or not an action)."""
        g = self.game
        board = g.board
        try:
            g.step(action, penalty=self.rules.penalty)
        except (IllegalMoveError, ValueError, TypeError) as e:
            return f"agent {name!r} chose {action!r} on board {board:#018x} (move {g.moves + 1}): {e}"
        self.actions.append(ord(ACTION_CHARS[int(action)]))
        self.ended = self.rules.ends_early(g.board)
        return None

    def record(self) -> dict[str, Any]:
        """The game's record (:func:`~ai2048.evaluate.core.game_record`)."""
        g = self.game
        return game_record(self.seed, g.score, g.moves, g.board, self.seconds, self.actions.decode(),
                           g.supers)


def play(agent: Any, seed: int, rules: Rules, name: str) -> dict[str, Any]:
    """Play one game from ``Game(seed)`` under ``rules`` with ``agent.act`` (``reset(seed)`` first);
    returns its record. A refused move raises ValueError naming the agent, the move and the board."""
    live = LiveGame(seed, rules)
    if hasattr(agent, "reset"):
        agent.reset(seed)
    t0 = time.perf_counter()
    while not live.over:
        view, forced = live.game.to_play()
        err = live.step(forced if forced >= 0 else agent.act(view), name)
        if err is not None:
            raise ValueError(err)
    live.seconds = time.perf_counter() - t0
    return live.record()


def play_game(agent: Any, seed: int, *, p_two: float = P_TWO, max_moves: int | None = None,
              name: str | None = None, goal_tile: int | None = None,
              end_on_full_board: bool = False, illegal_move: str = "reject",
              rules: int = RULES_VERSION) -> dict[str, Any]:
    """Play one game from ``Game(seed)`` to the end (or ``max_moves``, ``goal_tile`` or a full board
    with ``end_on_full_board``); returns its record dict.

    An illegal move raises ValueError naming the agent, the move and the board; with
    ``illegal_move="penalty"`` a move that changes nothing is played (-1 point, a tile spawns). An agent
    set to choose such moves (``illegal_action="penalty"``) under other rules is refused before the game.
    """
    how = Rules(p_two=p_two, max_moves=max_moves, goal_tile=goal_tile,
                end_on_full_board=end_on_full_board, illegal_move=illegal_move, rules=rules)
    check_agent_fits(getattr(agent, "illegal_action", None), how.illegal_move)
    return play(agent, seed, how, str(name or getattr(agent, "name", type(agent).__name__)))


Outcome = tuple[int, dict[str, Any] | None, str | None]
"""What every path yields per game: (game index, its record or None, an error message or None)."""


def play_indexed(agent: Any, name: str, i: int, s: int, rules: Rules) -> Outcome:
    """Game ``i`` (seed ``s``) as an :data:`Outcome`: a refused move is its error, not an exception."""
    try:
        return i, play(agent, s, rules, name), None
    except ValueError as e:
        return i, None, str(e)


def play_task(agent: Any, task: tuple[int, int], *, name: str, rules: Rules) -> Outcome:
    """An evaluation's game ``task`` = (index, seed), as :func:`worker_stream` plays it."""
    i, s = task
    return play_indexed(agent, name, i, s, rules)


_WORKER: dict[str, Any] = {}

T = TypeVar("T")
R = TypeVar("R")


def worker_setup(parent: int | None = None) -> None:
    """Set up a worker process of seeded games: signals, death with ``parent``, one torch thread."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and stops the pool
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # pool.terminate() ends a worker quietly
    if parent is not None:
        _die_with_parent(parent)
    one_torch_thread()


def _init_pool_worker(agent: Any, play_one: Callable[[Any, Any], Any], parent: int) -> None:
    worker_setup(parent)
    _WORKER.update(agent=agent, play=play_one)


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


def _run_task(task: Any) -> Any:
    return _WORKER["play"](_WORKER["agent"], task)


def pool_context() -> Any:
    """The multiprocessing context of evaluation workers: ``fork`` where available (compiled numba
    code and the built agent are inherited), else ``spawn``."""
    return mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")


def worker_stream(agent: Any, play_one: Callable[[Any, T], R], tasks: Iterable[T], workers: int, *,
                  ordered: bool = False, progress: str | None = None) -> Generator[R, None, None]:
    """Yield ``play_one(agent, task)`` for every task: in this process with one worker, else from a pool
    of ``workers`` processes (:func:`pool_context`, each set up by :func:`worker_setup`) as the tasks
    finish, or in their order with ``ordered``; ``progress``: a progress bar's label. Closing the
    stream (``contextlib.closing``; Ctrl-C too) ends the pool; a ``kill -9`` of this process ends its
    workers too. ``play_one`` is a module-level function (or a ``functools.partial`` of one): a
    spawned worker imports it."""
    pool = None
    if workers == 1:
        results: Iterable[R] = (play_one(agent, task) for task in tasks)
    else:
        pool = pool_context().Pool(workers, initializer=_init_pool_worker,
                                   initargs=(agent, play_one, os.getpid()))
        results = (pool.imap if ordered else pool.imap_unordered)(_run_task, tasks, chunksize=1)
    if progress is not None:
        from ai2048.progress import progress_bar

        total = len(tasks) if isinstance(tasks, Sized) else None
        results = progress_bar(results, total=total, desc=progress, unit="game")
    try:
        yield from results
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def local_stream(agent: Any, name: str, todo: list[tuple[int, int]], rules: Rules,
                 workers: int) -> Iterator[Outcome]:
    """Yield an :data:`Outcome` for every ``(index, seed)`` of ``todo`` (:func:`worker_stream`)."""
    return worker_stream(agent, partial(play_task, name=name, rules=rules), todo, workers)


def ray_stream(agent: Any, name: str, todo: list[tuple[int, int]], rules: Rules,
               address: str | None) -> Iterator[Outcome]:
    """Yield an :data:`Outcome` from one Ray task per game, as the tasks finish."""
    try:
        import ray
    except ImportError as e:
        raise ImportError("--backend ray needs Ray: pip install 'ai2048[ray]' (or pip install ray)") from e
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    agent_ref = ray.put(agent)

    @ray.remote
    def task(agent: Any, i: int, s: int) -> Outcome:
        return play_indexed(agent, name, i, s, rules)

    pending = [task.remote(agent_ref, i, s) for i, s in todo]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
