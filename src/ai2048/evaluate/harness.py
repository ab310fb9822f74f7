"""Play N games with any agent and summarise them: ``evaluate(agent, games=N, seed=S, workers=W)``.

Game ``i`` of an evaluation with seed ``S`` plays from :func:`ai2048.evaluate.core.game_seeds`'s seed
``i``, so the same ``S`` gives every agent the same games whatever the path or the number of workers.
Stochastic agents are ``reset(game_seed)`` before each game. The games are played under one checked
:class:`~ai2048.evaluate.core.Rules`, handed to the path that suits the agent: an agent with
``game_kernel()`` plays whole games inside numba, in ``workers`` threads
(:mod:`ai2048.evaluate.kernel`: the same games, moves and records); an agent with games in flight
(``games_in_flight`` > 1, ``act_batch``) plays a batch of games per search, in each of ``workers``
processes (:mod:`ai2048.evaluate.batched`); other agents' games run one at a time, in this process
or in worker processes, or as Ray tasks (:mod:`ai2048.evaluate.local`). A progress bar shows the
games as they finish. Ctrl-C (or SIGTERM) stops and keeps the finished games; an agent that returns
an illegal move stops the run with an :class:`~ai2048.evaluate.result.EvalError` that names the agent
and the board and carries the result so far.

Every rule is played by every path: the numba kernels play the end rules too
(:func:`ai2048.search.games.ends_early`), so the rules keep the fast path.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from ai2048 import checks
from ai2048.agents.base import make_agent
from ai2048.evaluate.core import Rules, check_agent_fits, check_workers, game_seeds
from ai2048.evaluate.local import local_stream, pool_context, ray_stream
from ai2048.evaluate.result import EvalError, EvalResult
from ai2048.game import Game
from ai2048.rules import P_TWO, RULES_VERSION


def _agent_and_name(agent: Any, config: dict[str, Any] | None) -> tuple[Any, str, dict[str, Any]]:
    if isinstance(agent, str):
        cfg = dict(config or {})
        return make_agent(agent, **cfg), agent, cfg
    if config:
        raise ValueError("config= is only used when the agent is given by name")
    if not hasattr(agent, "act"):
        raise TypeError(f"agent must be a registered name or have act(board), got {type(agent).__name__}")
    return agent, getattr(agent, "name", type(agent).__name__), dict(getattr(agent, "config", {}) or {})


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
    rules: int = RULES_VERSION,
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
        progress: show progress with the running mean score (:func:`ai2048.progress.progress_bar`: a
            bar on a terminal, a plain line each tenth of the games or 30 s in a file or pipe).
        config: the agent's config when ``agent`` is a name.
        p_two: spawn odds of the games.
        max_moves: stop each game after this many moves (None = play to the end).
        goal_tile: stop a game when a tile reaches this value (seeds 000 and 003: 2048); None = never.
        end_on_full_board: stop a game when the board is full even if merges remain, or holds a
            32768 (seed 004's ``end()``); kernel-backed agents play either rule in numba.
        illegal_move: ``reject`` (an agent's move that changes nothing stops the run) or ``penalty``
            (seed 004: it costs 1 point and a tile still spawns; needs ``end_on_full_board``).
        rules: the rules version: 1 (default) plays tiles past 32768, 0 the capped rules, where two
            32768s do not merge (:data:`ai2048.rules.RULES_VERSIONS`).
        backend: "local" (processes on this machine) or "ray" (one task per game on a Ray cluster,
            results streamed back; needs the ``ray`` extra).
        address: the Ray cluster address (None: start or join a local one).
        done: finished game records by index (``eval --resume``): kept, and only the other games are
            played, with the same per-game seeds.
        on_game: called with each newly finished game's record as it arrives (``eval --out`` streams
            them to disk, :mod:`ai2048.evaluate.stream`).
    """
    games = checks.whole("games", games, 1)
    workers = check_workers(workers)
    seed = checks.whole("seed", seed, 0)
    how = Rules(p_two=p_two, max_moves=max_moves, goal_tile=goal_tile, end_on_full_board=end_on_full_board,
                illegal_move=illegal_move, rules=rules)
    if backend not in ("local", "ray"):
        raise ValueError(f"backend={backend!r}: use 'local' or 'ray'")
    ag, name, cfg = _agent_and_name(agent, config)
    check_agent_fits(getattr(ag, "illegal_action", None), how.illegal_move)  # before any game
    result = EvalResult(agent=name, config=cfg, seed=seed, games_requested=games, p_two=how.p_two,
                        max_moves=how.max_moves, goal_tile=how.goal_tile,
                        end_on_full_board=how.end_on_full_board, illegal_move=how.illegal_move,
                        rules_version=how.rules, workers=workers)
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
    stream: Any = None
    try:
        if progress:
            from ai2048.progress import progress_bar

            bar = progress_bar(total=games, initial=len(by_index), desc=f"eval {name}", unit="game",
                               dynamic_ncols=True)
        stream = _stream(ag, name, todo, how, workers, kernel, backend, address)
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
        if close is not None:  # a stream's workers end now, not when it is garbage collected
            close()
        if bar is not None:
            bar.close()
    result.records = [by_index[i] for i in sorted(by_index)]
    result.wall_seconds = time.perf_counter() - t0
    if result.error is not None:
        raise EvalError(result.error, result)
    return result


def _stream(agent: Any, name: str, todo: list[tuple[int, int]], rules: Rules, workers: int, kernel: Any,
            backend: str, address: str | None) -> Any:
    """The path that plays ``todo`` = [(index, seed)] with this agent: an iterator of (index, record,
    error) as games finish."""
    if backend == "ray":
        return ray_stream(agent, name, todo, rules, address)
    if kernel is not None:  # whole games in numba
        from ai2048.evaluate.kernel import kernel_stream

        return kernel_stream(kernel, name, todo, rules, workers)
    if getattr(agent, "games_in_flight", 1) > 1:
        # games in flight: one batched search per move for all of a process's games; with several
        # workers each process batches its games (one game at a time each lost the batching)
        from ai2048.evaluate.batched import batched_stream, pooled_batched_stream

        if workers == 1 or len(todo) < 2:
            return batched_stream(agent, name, todo, rules)
        # the agent was loaded (_load): forked workers inherit its compiled code
        return pooled_batched_stream(agent, name, todo, rules, workers, pool_context())
    return local_stream(agent, name, todo, rules, workers)


def _game_kernel(agent: Any) -> Any:
    """The agent's whole-game numba kernel when it has one (:mod:`ai2048.evaluate.kernel`), else None."""
    if getattr(agent, "game_kernel", None) is None:
        return None
    from ai2048.evaluate.kernel import kernel_of

    return kernel_of(agent)


def _load(agent: Any, kernel: Any, p_two: float) -> float:
    """Load (or compile) what the agent plays with before the clock starts; returns the seconds taken.

    A kernel-backed agent's game loop is loaded by one call with no games; any other agent chooses
    one move in this process, so its first game is not charged with loading its numba code (and
    forked workers inherit it instead of compiling it again). An agent that fails on that move
    fails again, with the board named, in its first game.
    """
    t0 = time.perf_counter()
    if kernel is not None:
        from ai2048.evaluate.kernel import load_kernel

        load_kernel(kernel, p_two)
    else:
        with contextlib.suppress(Exception):
            agent.act(Game(seed=0, p_two=p_two).board)
    return time.perf_counter() - t0
