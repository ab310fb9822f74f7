"""Games in flight for :func:`ai2048.evaluate.evaluate`: many games, one batched search per move.

An agent with ``games_in_flight > 1``, ``act_batch(boards, slots)`` and ``reset_slot(slot,
seed)`` (the LazyZero agents and the chance-node MCTS) is asked for the moves of up to
``games_in_flight`` games at once, so its network sees one batch of leaves from all of them per
call instead of one game's. :func:`batched_stream` yields ``(index, record, error)`` as games
finish, exactly as the one-game-at-a-time loop does, so the records go through the same
collection code. Game ``i`` starts from ``Game(seed_i)`` and its slot's random stream is the one
``reset(seed_i)`` gives, so each game's moves are the ones it gets when played alone (up to the
network's float rounding, which can depend on the batch size); only ``seconds`` differs: each
batched call's time is shared equally among the games it moved.

With several workers (:func:`pooled_batched_stream`) each worker process plays games in flight
the same way: the workers take the evaluation's games from one shared counter as their slots
free up, so every core searches a batch and a worker whose games end early takes more. Each game
is still played from its own seed in a freshly started slot, so the records are those of the
one-process run.
"""

from __future__ import annotations

import os
import pickle
import queue
import time
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ai2048.evaluate import ends_early
from ai2048.game import Game, IllegalMoveError
from ai2048.rules import ACTION_CHARS


class _Slot:
    """One game in flight: its index, seed, game, actions so far and time charged to it."""

    def __init__(self, index: int, seed: int, p_two: float) -> None:
        self.index, self.seed = index, seed
        self.game = Game(seed=seed, p_two=p_two)
        self.actions = bytearray()
        self.seconds = 0.0

    def record(self) -> dict[str, Any]:
        g = self.game
        return {
            "seed": int(self.seed),
            "score": int(g.score),
            "moves": int(g.moves),
            "max_tile": int(g.max_tile),
            "final_board": f"0x{g.board:016x}",
            "seconds": self.seconds,
            "actions": self.actions.decode(),
        }


def batched_stream(
    agent: Any, name: str, todo: Iterable[tuple[int, int]], p_two: float, max_moves: int | None, *,
    goal_tile: int | None = None, end_on_full_board: bool = False, illegal_move: str = "reject",
) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Play the games ``todo`` = [(index, seed)] (any iterable: a slot that frees up takes the next),
    ``agent.games_in_flight`` at a time; yield (index, record, error).

    A game ends as in :func:`ai2048.evaluate.play_game` (no legal move, ``max_moves``, ``goal_tile``,
    a full board with ``end_on_full_board``); a finished game's slot takes the next game. An illegal
    move yields an error naming the agent, the move and the board (as ``play_game``) and stops,
    unless ``illegal_move="penalty"`` (seed 004: it costs 1 point and a tile spawns).
    """
    in_flight = getattr(agent, "games_in_flight", 1)
    if isinstance(in_flight, bool) or not isinstance(in_flight, (int, np.integer)) or in_flight < 1:
        raise ValueError(f"agent {name!r} has games_in_flight={in_flight!r}; it must be a positive int")
    missing = [m for m in ("act_batch", "reset_slot") if not callable(getattr(agent, m, None))]
    if missing:
        raise TypeError(f"agent {name!r} sets games_in_flight but has no {' or '.join(missing)}; "
                        "play it one game at a time (games_in_flight=1)")
    games = iter(todo)
    penalty = illegal_move == "penalty"
    slots: dict[int, _Slot] = {}

    def fill() -> None:
        for k in range(in_flight):
            if k not in slots:
                task = next(games, None)
                if task is None:
                    return
                i, s = task
                agent.reset_slot(k, s)
                slots[k] = _Slot(i, s, p_two)

    fill()
    while slots:
        keys = np.array(sorted(slots), dtype=np.int64)
        boards = np.array([slots[int(k)].game.board for k in keys], dtype=np.uint64)
        t0 = time.perf_counter()
        actions = agent.act_batch(boards, keys)
        share = (time.perf_counter() - t0) / len(keys)
        for k, a in zip(keys, actions, strict=True):
            slot = slots[int(k)]
            g = slot.game
            board = g.board
            try:
                g.step(int(a), penalty=penalty)
            except (IllegalMoveError, ValueError, TypeError) as e:
                yield slot.index, None, (f"agent {name!r} chose {a!r} on board {board:#018x} "
                                         f"(move {g.moves + 1}): {e}")
                return
            slot.actions.append(ord(ACTION_CHARS[int(a)]))
            slot.seconds += share
            if (g.is_over or (max_moves is not None and g.moves >= max_moves)
                    or ends_early(g.board, goal_tile, end_on_full_board)):
                del slots[int(k)]
                yield slot.index, slot.record(), None
        fill()


def _claimed(counter: Any, todo: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """The games of ``todo`` that this worker takes, one at a time, from the counter shared by all."""
    while True:
        with counter.get_lock():
            k = counter.value
            counter.value = k + 1
        if k >= len(todo):
            return
        yield todo[k]


def _batched_worker(agent: Any, name: str, todo: list[tuple[int, int]], rules: dict[str, Any],
                    parent: int, counter: Any, results: Any) -> None:
    """A worker process: play games in flight from the shared counter, send each to ``results``.

    Messages: ``("game", (index, record, error))`` per game, then ``("done", None)``; an exception
    the agent raises is sent as ``("raise", exc)`` (re-raised by the evaluating process).
    """
    from ai2048.evaluate import _init_worker

    _init_worker(agent, name, rules, parent)
    try:
        for item in batched_stream(agent, name, _claimed(counter, todo), rules["p_two"], rules["max_moves"],
                                   goal_tile=rules["goal_tile"],
                                   end_on_full_board=rules["end_on_full_board"],
                                   illegal_move=rules.get("illegal_move", "reject")):
            results.put(("game", item))
        results.put(("done", None))
    except Exception as e:  # the agent's own error: the evaluating process raises it, as one process would
        try:
            pickle.dumps(e)
        except Exception:
            e = RuntimeError(f"{type(e).__name__}: {e}")
        results.put(("raise", e))


def pooled_batched_stream(
    agent: Any, name: str, todo: list[tuple[int, int]], rules: dict[str, Any], workers: int, ctx: Any,
) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """:func:`batched_stream` in ``workers`` processes (of multiprocessing context ``ctx``), each
    with ``agent.games_in_flight`` games in flight; yield (index, record, error) as games finish.

    ``rules``: ``p_two``, ``max_moves``, ``goal_tile``, ``end_on_full_board``. The workers are
    ended when the stream is closed or interrupted (Ctrl-C), and a worker that dies without a
    word (killed, out of memory) is an error naming its exit code, never a wait.
    """
    counter = ctx.Value("q", 0)
    results = ctx.Queue()
    procs = [ctx.Process(target=_batched_worker, daemon=True,
                         args=(agent, name, todo, rules, os.getpid(), counter, results))
             for _ in range(max(1, min(workers, len(todo))))]
    for p in procs:
        p.start()
    running = len(procs)
    try:
        while running:
            try:
                kind, payload = results.get(timeout=0.2)
            except queue.Empty:
                dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(f"an evaluation worker of agent {name!r} died (exit code {dead[0]}) "
                                       "before its games were finished") from None
                continue
            if kind == "game":
                yield payload
            elif kind == "done":
                running -= 1
            else:
                raise payload
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
        for p in procs:
            p.join()
        results.close()
