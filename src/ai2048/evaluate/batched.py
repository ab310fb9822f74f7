"""Games in flight: many games, one batched search per move.

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

from ai2048 import checks
from ai2048.evaluate.core import Rules
from ai2048.evaluate.local import LiveGame, Outcome, worker_setup


def batched_stream(agent: Any, name: str, todo: Iterable[tuple[int, int]], rules: Rules) -> Iterator[Outcome]:
    """Play the games ``todo`` = [(index, seed)] (any iterable: a slot that frees up takes the next),
    ``agent.games_in_flight`` at a time; yield (index, record, error).

    A game ends by ``rules`` as in :func:`ai2048.evaluate.local.play` (each is a
    :class:`~ai2048.evaluate.local.LiveGame`); a finished game's slot takes the next game. A refused
    move yields an error naming the agent, the move and the board (as ``play``) and stops.
    """
    in_flight = checks.whole("games_in_flight", getattr(agent, "games_in_flight", 1), 1,
                             why=f"of agent {name!r}")
    missing = [m for m in ("act_batch", "reset_slot") if not callable(getattr(agent, m, None))]
    if missing:
        raise TypeError(f"agent {name!r} sets games_in_flight but has no {' or '.join(missing)}; "
                        "play it one game at a time (games_in_flight=1)")
    games = iter(todo)
    slots: dict[int, tuple[int, LiveGame]] = {}  # slot -> (game index, game)

    def fill() -> None:
        for k in range(in_flight):
            if k not in slots:
                task = next(games, None)
                if task is None:
                    return
                i, s = task
                agent.reset_slot(k, s)
                slots[k] = (i, LiveGame(s, rules))

    fill()
    while slots:
        keys = np.array(sorted(slots), dtype=np.int64)
        plays = [slots[int(k)][1].game.to_play() for k in keys]
        boards = np.array([view for view, _ in plays], dtype=np.uint64)
        t0 = time.perf_counter()
        actions = [f if f >= 0 else a for (_, f), a in zip(plays, agent.act_batch(boards, keys), strict=True)]
        share = (time.perf_counter() - t0) / len(keys)
        for k, a in zip(keys, actions, strict=True):
            index, live = slots[int(k)]
            err = live.step(a, name)
            if err is not None:
                yield index, None, err
                return
            live.seconds += share
            if live.over:
                del slots[int(k)]
                yield index, live.record(), None
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


def _batched_worker(agent: Any, name: str, todo: list[tuple[int, int]], rules: Rules,
                    parent: int, counter: Any, results: Any) -> None:
    """A worker process: play games in flight from the shared counter, send each to ``results``.

    Messages: ``("game", (index, record, error))`` per game, then ``("done", None)``; an exception
    the agent raises is sent as ``("raise", exc)`` (re-raised by the evaluating process).
    """
    worker_setup(parent)
    try:
        for item in batched_stream(agent, name, _claimed(counter, todo), rules):
            results.put(("game", item))
        results.put(("done", None))
    except Exception as e:  # the agent's own error: the evaluating process raises it, as one process would
        try:
            pickle.dumps(e)
        except Exception:
            e = RuntimeError(f"{type(e).__name__}: {e}")
        results.put(("raise", e))


def pooled_batched_stream(
    agent: Any, name: str, todo: list[tuple[int, int]], rules: Rules, workers: int, ctx: Any,
) -> Iterator[Outcome]:
    """:func:`batched_stream` in ``workers`` processes (of multiprocessing context ``ctx``), each
    with ``agent.games_in_flight`` games in flight; yield (index, record, error) as games finish.

    The workers are
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
