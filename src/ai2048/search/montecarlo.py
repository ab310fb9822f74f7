"""Monte Carlo move choice (seed 002 part 3): random playouts after each first move (numba).

:func:`playout_values`: for each legal first move, ``playouts`` games continue from it (spawn,
then uniformly random legal moves to the end); a move's value is the mean final score gained,
counting its own reward. :func:`playout_values_total` spends a total budget the way the seed's
``MonteCarloGameDriver.run_game(simulation_size)`` does: every playout is a random game from the
current board, so its first move is uniform over the legal ones, and the playouts are grouped by
first move (a move no playout tried gets no value).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.moves import move
from ai2048.engine.spawn import random_legal_action, random_play, spawn


@njit(cache=True)
def playout_values(b: np.uint64, playouts: int, state: np.ndarray, p_two: float) -> np.ndarray:
    """[4] mean score of ``playouts`` random games after each action (``-inf`` where illegal)."""
    out = np.full(4, -np.inf)
    for a in range(4):
        nb, r = move(b, np.int64(a))
        if nb == b:
            continue
        total = 0.0
        for _ in range(playouts):
            start = spawn(nb, state, np.float64(p_two))
            _, score, _ = random_play(start, state, np.float64(p_two))
            total += r + score
        out[a] = total / playouts
    return out


@njit(cache=True)
def playout_values_total(b: np.uint64, total: int, state: np.ndarray, p_two: float) -> np.ndarray:
    """[4] mean score of the random games, out of ``total``, whose first move was each action
    (``-inf`` where illegal or never tried)."""
    sums = np.zeros(4)
    counts = np.zeros(4, np.int64)
    for _ in range(total):
        a, nb, r = random_legal_action(b, state)
        if a < 0:
            break
        start = spawn(nb, state, np.float64(p_two))
        _, score, _ = random_play(start, state, np.float64(p_two))
        sums[a] += r + score
        counts[a] += 1
    out = np.full(4, -np.inf)
    for a in range(4):
        if counts[a] > 0:
            out[a] = sums[a] / counts[a]
    return out
