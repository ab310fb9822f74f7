"""One env step on one board in a single kernel call: what the Gymnasium env runs per step.

Fusing move, spawn, legal mask and observation into one call keeps the Python-side cost of a step
to one dispatch, which is what makes a plain ``gymnasium.make`` loop fast.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import NIBBLE
from ai2048.engine.moves import legal_bits, log2_reward, move
from ai2048.engine.spawn import spawn


@njit(cache=True, inline="always")
def observe(b: np.uint64, obs: np.ndarray) -> tuple[np.int64, np.int64, np.int64]:
    """Write the exponents of ``b`` into ``obs`` [4, 4]: (legal bits, max exponent, empty cells)."""
    m = np.int64(0)
    e = np.int64(0)
    for c in range(16):
        x = np.int64((b >> np.uint64(4 * c)) & NIBBLE)
        obs[c >> 2, c & 3] = x
        if x > m:
            m = x
        if x == 0:
            e += 1
    return legal_bits(b), m, e


@njit(cache=True)
def env_step(
    b: np.uint64, action: np.int64, state: np.ndarray, p_two: np.float64, obs: np.ndarray
) -> tuple[np.uint64, np.int64, np.int64, np.int64, np.int64, np.int64]:
    """Move, spawn if legal, and observe.

    Returns (board, reward, log2 reward, legal bits of the new board, max exponent, empty cells);
    ``reward`` is -1 when the action is illegal (board unchanged, nothing spawned). Writes the
    exponents of the new board into ``obs`` [4, 4] uint8.
    """
    nb, r = move(b, action)
    lr = np.int64(0)
    if nb == b:
        r = np.int64(-1)
    else:
        lr = log2_reward(b, action)
        b = spawn(nb, state, p_two)
    bits, m, e = observe(b, obs)
    return b, r, lr, bits, m, e
