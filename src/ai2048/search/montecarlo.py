"""Monte Carlo move choice (seed 002 part 3): random playouts after each first move (numba).

:func:`playout_values`: for each legal first move, ``playouts`` games continue from it (spawn,
then uniformly random legal moves to the end); a move's value is the mean final score gained,
counting its own reward. :func:`playout_values_total` spends a total budget the way the seed's
``MonteCarloGameDriver.run_game(simulation_size)`` does: every playout is a random game from the
current board, so its first move is uniform over the legal ones, and the playouts are grouped by
first move (a move no playout tried gets no value). Both run in short kernel calls, so Ctrl-C
stops a decision within milliseconds, and both are bounded (:data:`MAX_PLAYOUTS`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.moves import move
from ai2048.engine.spawn import random_legal_action, random_play, spawn

MAX_PLAYOUTS = 100_000
"""Most ``playouts`` per legal first move: 4 x 100,000 random games, seconds a decision (a request
for 10**12 never finished a move)."""
MAX_PLAYOUTS_TOTAL = 4 * MAX_PLAYOUTS
"""Most ``playouts_total``: the same most random games a decision as :data:`MAX_PLAYOUTS` on an open board."""
CHUNK = 256
"""Playouts per kernel call: the kernels hold the GIL, so Ctrl-C is seen between calls (milliseconds)."""


@njit(cache=True)
def _playout_sum(nb: np.uint64, r: float, playouts: int, state: np.ndarray, p_two: float) -> float:
    """Sum of ``r`` plus the final score of ``playouts`` random games from afterstate ``nb``."""
    total = 0.0
    for _ in range(playouts):
        start = spawn(nb, state, np.float64(p_two))
        _, score, _ = random_play(start, state, np.float64(p_two))
        total += r + score
    return total


@njit(cache=True)
def _add_random_games(b: np.uint64, n: int, state: np.ndarray, p_two: float, sums: np.ndarray,
                      counts: np.ndarray) -> bool:
    """Play ``n`` random games from ``b``, adding each one's score to ``sums``/``counts`` of its first
    move; False when ``b`` has no legal move."""
    for _ in range(n):
        a, nb, r = random_legal_action(b, state)
        if a < 0:
            return False
        start = spawn(nb, state, np.float64(p_two))
        _, score, _ = random_play(start, state, np.float64(p_two))
        sums[a] += r + score
        counts[a] += 1
    return True


def playout_values(b: np.uint64, playouts: int, state: np.ndarray, p_two: float) -> np.ndarray:
    """[4] mean score of ``playouts`` random games after each action (``-inf`` where illegal).

    Played in kernel calls of :data:`CHUNK` playouts, in the same order and from the same random
    stream as one loop (the sums are of whole numbers, so exact), so a long decision stays
    interruptible.
    """
    out = np.full(4, -np.inf)
    for a in range(4):
        nb, r = move(np.uint64(b), np.int64(a))
        if nb == b:
            continue
        total = 0.0
        for done in range(0, playouts, CHUNK):
            total += _playout_sum(nb, float(r), min(CHUNK, playouts - done), state, p_two)
        out[a] = total / playouts
    return out


def playout_values_total(b: np.uint64, total: int, state: np.ndarray, p_two: float) -> np.ndarray:
    """[4] mean score of the random games, out of ``total``, whose first move was each action
    (``-inf`` where illegal or never tried); in interruptible kernel calls, as :func:`playout_values`."""
    sums = np.zeros(4)
    counts = np.zeros(4, np.int64)
    for done in range(0, total, CHUNK):
        if not _add_random_games(np.uint64(b), min(CHUNK, total - done), state, p_two, sums, counts):
            break
    out = np.full(4, -np.inf)
    for a in range(4):
        if counts[a] > 0:
            out[a] = sums[a] / counts[a]
    return out
