"""Evaluation speed: whole games in numba (``evaluate``'s fast path) against the Python loop
(``play_game``: one ``agent.act`` per move) on the same game seeds, both in thread CPU time.

Used by ``ai2048 bench --ntuple RUN`` (section ``eval``) and ``benchmarks/bench_eval.py``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ai2048.evaluate import Rules, game_seeds, play_game
from ai2048.evaluate.kernel import kernel_of, play_games

TDL2048_TEST_MOVES_PER_S = (1.48e6, 2.64e6)
"""moporgic/TDL2048+ (C++) testing a 4x6 network on one thread, in moves/s: the reference range the
``eval`` section prints (where and how measured: docs/ntuple-lab.md, "Evaluation speed")."""


def fast_rate(agent: Any, games: int, seed: int, max_moves: int | None = None) -> tuple[float, int, float]:
    """(moves per CPU second of this thread, moves, moves per wall second) of ``games`` whole games
    in numba on one thread."""
    kernel = kernel_of(agent)
    if kernel is None:
        raise ValueError(f"agent {getattr(agent, 'name', agent)!r} has no whole-game kernel")
    stop = np.zeros(1, np.int64)
    seeds = game_seeds(seed, games)
    play_games(kernel, kernel.context(None), seeds[:1], Rules(max_moves=5), stop)  # compile or load it
    t, w = time.thread_time(), time.perf_counter()
    recs, _ = play_games(kernel, kernel.context(None), seeds, Rules(max_moves=max_moves), stop)
    dt, wall = time.thread_time() - t, time.perf_counter() - w
    moves = sum(r["moves"] for r in recs if r is not None)
    return moves / max(dt, 1e-9), moves, moves / max(wall, 1e-9)


def loop_rate(agent: Any, seconds: float, seed: int, max_moves: int | None = None) -> tuple[float, int]:
    """(moves per CPU second, moves) of the Python loop over the same game seeds for about ``seconds``."""
    play_game(agent, 1, max_moves=5)
    seeds = game_seeds(seed, 20_000)
    moves = 0
    t = time.thread_time()
    for s in seeds:
        moves += play_game(agent, s, max_moves=max_moves)["moves"]
        if time.thread_time() - t > seconds:
            break
    return moves / max(time.thread_time() - t, 1e-9), moves
