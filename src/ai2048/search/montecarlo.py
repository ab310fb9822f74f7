"""Monte Carlo move choice (seed 002 part 3): random playouts after each first move (numba).

For each legal first move, ``playouts`` games continue from it (spawn, then uniformly random
legal moves to the end); a move's value is the mean final score gained, counting its own reward.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.moves import move
from ai2048.engine.spawn import random_play, spawn


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
