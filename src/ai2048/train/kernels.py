"""Two numba helpers the torch trainers still import from here (no torch here).

Stepping and restarting games is :class:`ai2048.envs.batch.GameBatch` (the one batch core in
:mod:`ai2048.engine.batch`); these two read boards without playing them. Serial on purpose:
trainer batches are small, and numba's OpenMP layer is not fork-safe.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import NIBBLE
from ai2048.engine.moves import move


@njit(cache=True)
def all_moves(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[N] boards -> (after-states [N, 4] uint64, rewards [N, 4] int64, legal [N, 4] bool)."""
    n = boards.shape[0]
    after = np.empty((n, 4), dtype=np.uint64)
    rew = np.empty((n, 4), dtype=np.int64)
    legal = np.empty((n, 4), dtype=np.bool_)
    for i in range(n):
        for a in range(4):
            nb, r = move(boards[i], np.int64(a))
            after[i, a] = nb
            rew[i, a] = r
            legal[i, a] = nb != boards[i]
    return after, rew, legal


@njit(cache=True)
def exponents(boards: np.ndarray) -> np.ndarray:
    """[N] boards -> [N, 16] uint8 exponents, row-major (0 = empty)."""
    n = boards.shape[0]
    out = np.empty((n, 16), dtype=np.uint8)
    for i in range(n):
        b = boards[i]
        for c in range(16):
            out[i, c] = (b >> np.uint64(4 * c)) & NIBBLE
    return out
