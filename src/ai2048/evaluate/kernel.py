"""The fast path of :func:`ai2048.evaluate.evaluate`: kernel-backed agents play whole games in numba.

An agent that has ``game_kernel()`` (random, greedy, expectimax and minimax at a fixed depth or
expectimax's adaptive depth, n-tuple networks at any depth) returns a
:class:`ai2048.search.games.GameKernel`; :func:`kernel_stream` plays the evaluation's games with it
in ``workers`` threads (the kernels release the GIL) and yields ``(index, record, error)`` exactly
as the Python loop's workers do, so the records pass through the same collection code. Game ``i``
starts from the same seed and the choices are the agent's own, so the records (seed, score, moves,
max tile, final board, actions) are those of the Python loop; only ``seconds`` differs: a batch's
time shared among its games by their moves.

The kernels play every rule of :class:`~ai2048.evaluate.core.Rules`: no legal move, ``max_moves``, a
goal tile (seeds 000 and 003) and seed 004's full-board end, checked after each move and its spawn as
the Python loop checks them, so every path stops a game at the same move, and seed 004's unmasked
moves (``illegal_move="penalty"``). :func:`load_kernel` loads the game loop before an evaluation's clock
starts.

Threads take batches of games (one game first, then batches sized to about a quarter of a second)
so the progress bar moves; Ctrl-C or SIGTERM in the main thread sets a stop flag that the kernels
read at every move, and the games already finished are kept.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from ai2048.evaluate.core import SEED004_RULES_FIX, Rules, action_letters, game_record
from ai2048.evaluate.local import Outcome
from ai2048.search.games import ILLEGAL, RUNNING, end_rule_args

_BUFFER = 8192
"""Moves per game written per kernel call; a longer game is continued by another call."""
_BATCH_SECONDS = 0.25
_MAX_BATCH = 256


def kernel_of(agent: Any) -> Any:
    """The agent's :class:`~ai2048.search.games.GameKernel`, or None (then the Python loop plays).

    None also when a subclass or the instance overrides ``act`` or ``reset`` below the class that
    defines ``game_kernel``: the kernel would no longer play the agent's moves.
    """
    cls = type(agent)
    if getattr(cls, "game_kernel", None) is None:
        return None
    owner = next(c for c in cls.__mro__ if "game_kernel" in vars(c))
    for method in ("act", "reset"):
        if method in vars(agent) or getattr(cls, method, None) is not getattr(owner, method, None):
            return None
    return agent.game_kernel()


def _buffers(n: int, cap: int) -> tuple[np.ndarray, ...]:
    """(boards, scores, moves, status, nacts, acts) for ``n`` games of at most ``cap`` moves a call."""
    z = [np.zeros(n, np.uint64)] + [np.zeros(n, np.int64) for _ in range(4)]
    return (*z, np.empty((n, cap), np.uint8))


def load_args(kernel: Any, p_two: float) -> tuple[Any, ...]:
    """Arguments of ``kernel.play`` for no games, typed as :func:`play_games` calls it: the signature
    that :func:`load_kernel` makes ready (and a caller may compile ahead, as the n-tuple trainer does)."""
    boards, scores, moves, status, nacts, acts = _buffers(0, 1)
    ctx = kernel.context(0 if kernel.per_game else None)
    return (ctx, boards, np.zeros(0, np.uint64), scores, moves, status, acts, nacts, 0, p_two,
            np.zeros(1, np.int64), *end_rule_args(None, False), np.zeros(0, np.int64), True)


def load_kernel(kernel: Any, p_two: float) -> None:
    """Load (or compile) ``kernel``'s game loop by one call with no games, so that no game's time
    includes it (numba loads a cached kernel on its first call: a fraction of a second, or a
    compilation of many seconds)."""
    kernel.play(*load_args(kernel, p_two))


def illegal_choice(board: int, move: int, rules: Rules) -> str:
    """Why a kernel's game stopped at ``board`` (its ``move``-th move) and what to do: under the standard
    rules a move that changes nothing stops the run, so the message names the setting that chooses such
    moves (``illegal_action=penalty``) and how to play it (:data:`.core.SEED004_RULES_FIX`)."""
    where = f"agent kernel chose no legal move on board {board:#018x} (move {move})"
    at_fault = ("the agent's kernel is at fault: evaluate it without its kernel (a subclass overriding act) "
                "to see the choice")
    if rules.penalty:
        return f"{where}: none while moves remain, or a move number outside 0..3; {at_fault}"
    return (f"{where}: a move that changes nothing, which these games stop at (illegal_move='reject', the "
            "standard rules), or none while moves remain. An agent set to choose such moves "
            f"(illegal_action=penalty): {SEED004_RULES_FIX}; for any other agent {at_fault}")


def play_games(kernel: Any, ctx: tuple | None, seeds: list[int], rules: Rules,
               stop: np.ndarray) -> tuple[list[dict[str, Any] | None], str | None]:
    """Play the games of ``seeds`` to the end under ``rules`` with ``ctx`` (per-game kernels build
    their own); returns their records (None where stopped) and the first bad choice as an error
    message (naming the board and move, as ``play_game`` does)."""
    n = len(seeds)
    max_moves, p_two = rules.max_moves, rules.p_two
    boards, scores, moves, status, nacts, acts = _buffers(n, min(_BUFFER, max_moves or _BUFFER))
    states = np.array(seeds, dtype=np.uint64)
    chunks: list[list[bytes]] = [[] for _ in range(n)]
    limit = int(max_moves or 0)
    ends = end_rule_args(rules.goal_tile, rules.end_on_full_board, rules.illegal_move)
    supers = np.zeros(n, np.int64)
    ctxs = [kernel.context(int(s)) for s in seeds] if kernel.per_game else []
    t0 = time.perf_counter()
    while not stop[0]:
        if kernel.per_game:
            for g in np.flatnonzero(status == RUNNING).tolist():
                kernel.play(ctxs[g], boards[g : g + 1], states[g : g + 1], scores[g : g + 1],
                            moves[g : g + 1], status[g : g + 1], acts[g : g + 1], nacts[g : g + 1], limit,
                            p_two, stop, *ends, supers[g : g + 1], rules.exact)
                chunks[g].append(acts[g, : nacts[g]].tobytes())
        else:
            kernel.play(ctx, boards, states, scores, moves, status, acts, nacts, limit, p_two, stop, *ends,
                        supers, rules.exact)
            for i in range(n):
                if nacts[i]:
                    chunks[i].append(acts[i, : nacts[i]].tobytes())
        if (status != RUNNING).all():
            break
    seconds = time.perf_counter() - t0
    total = max(int(moves.sum()), 1)
    records: list[dict[str, Any] | None] = []
    error = None
    for i in range(n):
        if status[i] == RUNNING or error is not None:
            records.append(None)
            continue
        if status[i] == ILLEGAL:
            error = illegal_choice(int(boards[i]), int(moves[i]) + 1, rules)
            records.append(None)
            continue
        records.append(game_record(seeds[i], scores[i], moves[i], boards[i], seconds * int(moves[i]) / total,
                                   action_letters(b"".join(chunks[i])), int(supers[i])))
    return records, error


def kernel_stream(kernel: Any, name: str, todo: list[tuple[int, int]], rules: Rules,
                  workers: int) -> Iterator[Outcome]:
    """Yield ``(index, record, error)`` for every ``(index, seed)`` of ``todo`` as ``workers`` threads
    finish them, each game ended by ``rules`` (:func:`play_games`).

    Closing the generator (or an exception in the consumer) stops the threads at their next move.
    """
    results: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
    stop = np.zeros(1, np.int64)
    lock = threading.Lock()
    cursor = [0]
    seeds = [s for _, s in todo]

    def work() -> None:
        try:
            ctx = None if kernel.per_game else kernel.context(None)
            size = 1
            while not stop[0]:
                with lock:
                    start = cursor[0]
                    end = cursor[0] = min(start + size, len(seeds))
                if start >= end:
                    break
                t0 = time.perf_counter()
                recs, err = play_games(kernel, ctx, seeds[start:end], rules, stop)
                dt = time.perf_counter() - t0
                results.put(("games", (start, recs, err)))
                if err is not None:
                    stop[0] = 1
                size = int(min(_MAX_BATCH, max(1, size * min(4.0, _BATCH_SECONDS / max(dt, 1e-6)))))
        except BaseException as e:  # noqa: BLE001 (handed to the main thread, which raises it)
            results.put(("raise", e))
        finally:
            results.put(("done", None))

    threads = [threading.Thread(target=work, name=f"eval-{name}-{k}", daemon=True) for k in range(workers)]
    for t in threads:
        t.start()
    try:
        running = len(threads)
        while running:
            try:
                kind, payload = results.get(timeout=0.1)
            except queue.Empty:
                continue
            if kind == "done":
                running -= 1
            elif kind == "raise":
                raise payload
            else:
                start, recs, err = payload
                for j, rec in enumerate(recs):
                    if rec is not None:
                        yield todo[start + j][0], rec, None
                if err is not None:
                    yield todo[start][0], None, err
                    return
    finally:
        stop[0] = 1
        for t in threads:
            t.join()
