"""Moves: ``move``, ``four_moves``, ``legal_bits``, ``is_over`` on one board, ``all_moves`` on [N] (numba).

Actions are clockwise: UP=0, RIGHT=1, DOWN=2, LEFT=3. A move is legal iff it changes the board.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import ROW_MASK, transpose
from ai2048.engine.tables import LEFT_LOG_REWARD, RIGHT_LOG_REWARD, ROW_MOVES

_S16 = np.uint64(16)
_S32 = np.uint64(32)
_S48 = np.uint64(48)
_S4 = np.uint64(4)


@njit(cache=True, inline="always")
def _slide(x: np.uint64, side: np.uint64) -> tuple[np.uint64, np.int64]:
    """Slide the four 16-bit rows of ``x`` left (``side`` 0) or right (``side`` 16) with
    ``ROW_MOVES``: (``x`` XOR the slid rows, reward)."""
    p0 = ROW_MOVES[x & ROW_MASK]
    p1 = ROW_MOVES[(x >> _S16) & ROW_MASK]
    p2 = ROW_MOVES[(x >> _S32) & ROW_MASK]
    p3 = ROW_MOVES[x >> _S48]
    d = (
        ((p0 >> side) & ROW_MASK)
        | (((p1 >> side) & ROW_MASK) << _S16)
        | (((p2 >> side) & ROW_MASK) << _S32)
        | (((p3 >> side) & ROW_MASK) << _S48)
    )
    return d, np.int64((p0 >> _S32) + (p1 >> _S32) + (p2 >> _S32) + (p3 >> _S32))


@njit(cache=True, inline="always")
def move_left(b: np.uint64) -> tuple[np.uint64, np.int64]:
    """``[2 2 2 2] -> [4 4 0 0]`` on every row; returns (board, reward)."""
    d, rew = _slide(b, np.uint64(0))
    return b ^ d, rew


@njit(cache=True, inline="always")
def move_right(b: np.uint64) -> tuple[np.uint64, np.int64]:
    """``[2 2 2 2] -> [0 0 4 4]`` on every row; returns (board, reward)."""
    d, rew = _slide(b, _S16)
    return b ^ d, rew


@njit(cache=True, inline="always")
def move_up(b: np.uint64) -> tuple[np.uint64, np.int64]:
    """Slide every column towards row 0: the transposed board's rows slide left; returns (board, reward)."""
    d, rew = _slide(transpose(b), np.uint64(0))
    return b ^ transpose(d), rew


@njit(cache=True, inline="always")
def move_down(b: np.uint64) -> tuple[np.uint64, np.int64]:
    """Slide every column towards row 3: the transposed board's rows slide right; returns (board, reward)."""
    d, rew = _slide(transpose(b), _S16)
    return b ^ transpose(d), rew


@njit(cache=True, inline="always")
def move(b: np.uint64, action: np.int64) -> tuple[np.uint64, np.int64]:
    """Apply ``action`` (0..3, not validated) to ``b``: (new board, reward). Legal iff changed."""
    if action == 0:
        return move_up(b)
    if action == 1:
        return move_right(b)
    if action == 2:
        return move_down(b)
    return move_left(b)


@njit(cache=True, inline="always")
def four_moves(b: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """The four after-states of ``b`` at once: (up, right, down, left); an action is legal iff its
    board differs from ``b``. The one all-four-moves kernel of every search (rewards: :func:`move_reward`)."""
    up, _ = move_up(b)
    right, _ = move_right(b)
    down, _ = move_down(b)
    left, _ = move_left(b)
    return up, right, down, left


@njit(cache=True, inline="always")
def _row_table_sum(b: np.uint64, action: np.int64, left: np.ndarray, right: np.ndarray) -> np.int64:
    """Sum over the four lines ``action`` slides of a per-line table (``left`` for up/left, ``right``
    else)."""
    t = transpose(b) if action == 0 or action == 2 else b
    table = left if action == 0 or action == 3 else right
    return (
        np.int64(table[t & ROW_MASK])
        + table[(t >> _S16) & ROW_MASK]
        + table[(t >> _S32) & ROW_MASK]
        + table[t >> _S48]
    )


@njit(cache=True, inline="always")
def move_reward(b: np.uint64, action: np.int64) -> np.int64:
    """The score ``action`` earns on ``b`` (sum of the merged tiles' values), without the board."""
    t = transpose(b) if action == 0 or action == 2 else b
    return _slide(t, np.uint64(0))[1]


@njit(cache=True)
def all_moves(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[N] boards -> (after-states [N, 4] uint64, rewards [N, 4] int64, legal [N, 4] bool)."""
    n = boards.shape[0]
    after = np.empty((n, 4), dtype=np.uint64)
    rew = np.empty((n, 4), dtype=np.int64)
    legal = np.empty((n, 4), dtype=np.bool_)
    for i in range(n):
        b = np.uint64(boards[i])
        m = four_moves(b)
        for a in range(4):
            after[i, a] = m[a]
            rew[i, a] = move_reward(b, np.int64(a))
            legal[i, a] = m[a] != b
    return after, rew, legal


_NIBBLES = np.uint64(0x1111111111111111)
_ROW_PAIRS = np.uint64(0x0111011101110111)  # cells (r, c) with c < 3: the left cell of a row pair
_COL_PAIRS = np.uint64(0x0000111111111111)  # cells (r, c) with r < 3: the top cell of a column pair


@njit(cache=True, inline="always")
def _occupied(b: np.uint64) -> np.uint64:
    """Bit 4*i set iff cell i is not empty."""
    x = b | (b >> np.uint64(1))
    return (x | (x >> np.uint64(2))) & _NIBBLES


@njit(cache=True, inline="always")
def legal_bits(b: np.uint64) -> np.int64:
    """Bit ``a`` is set iff action ``a`` changes the board.

    Bit-parallel over all cells, no table lookups: a line can slide towards a wall iff a tile has
    an empty cell on that side, or two equal neighbours (not 32768s, which cannot merge) can merge.
    """
    b = np.uint64(b)
    full = _occupied(b)
    empty = ~full & _NIBBLES
    top = b & (b >> np.uint64(1)) & (b >> np.uint64(2)) & (b >> np.uint64(3)) & _NIBBLES
    mergeable = full & ~top
    h_merge = ~_occupied(b ^ (b >> _S4)) & mergeable & _ROW_PAIRS
    v_merge = ~_occupied(b ^ (b >> _S16)) & mergeable & _COL_PAIRS
    left = (empty & (full >> _S4) & _ROW_PAIRS) | h_merge
    right = (full & (empty >> _S4) & _ROW_PAIRS) | h_merge
    up = (empty & (full >> _S16) & _COL_PAIRS) | v_merge
    down = (full & (empty >> _S16) & _COL_PAIRS) | v_merge
    return (
        np.int64(up != np.uint64(0))
        | (np.int64(right != np.uint64(0)) << np.int64(1))
        | (np.int64(down != np.uint64(0)) << np.int64(2))
        | (np.int64(left != np.uint64(0)) << np.int64(3))
    )


@njit(cache=True, inline="always")
def is_over(b: np.uint64) -> bool:
    """True iff no move changes the board."""
    return legal_bits(b) == 0


@njit(cache=True, inline="always")
def log2_reward(b: np.uint64, action: np.int64) -> np.int64:
    """Sum of the exponents of the tiles ``action`` creates (seed 000's log reward: 2+2 -> 2)."""
    return _row_table_sum(b, action, LEFT_LOG_REWARD, RIGHT_LOG_REWARD)
