"""Row tables: the result and reward of sliding every possible 16-bit row, built once.

A row of four nibbles has 65,536 values, so a move is four table lookups (nneonneo/2048-ai).
Each table holds ``row XOR moved_row``, already spread to where it applies: ``*_ROW`` tables act on
a row in place, ``*_COL`` tables on a column (nibble r of the entry lands at bit 16*r), so vertical
moves need one transpose and no transpose back.

``[1 1 1 1] -> [2 2 0 0]`` (exponents, moving left), reward 8. ``[15 15 0 0]`` does not merge:
32768 is the largest tile a nibble holds.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.rules import MAX_EXPONENT


@njit(cache=True)
def _slide_left(row: np.int64) -> tuple[np.int64, np.int64, np.int64]:
    """Slide one 16-bit row towards column 0: (new row, reward, sum of merged exponents)."""
    cells = np.zeros(4, dtype=np.int64)
    n = 0
    for c in range(4):
        e = (row >> (4 * c)) & 0xF
        if e:
            cells[n] = e
            n += 1
    out = np.zeros(4, dtype=np.int64)
    reward = np.int64(0)
    log_reward = np.int64(0)
    i = 0
    k = 0
    while i < n:
        e = cells[i]
        if i + 1 < n and cells[i + 1] == e and e < MAX_EXPONENT:
            out[k] = e + 1
            reward += np.int64(1) << (e + 1)
            log_reward += e + 1
            i += 2
        else:
            out[k] = e
            i += 1
        k += 1
    res = np.int64(0)
    for c in range(4):
        res |= out[c] << (4 * c)
    return res, reward, log_reward


@njit(cache=True)
def _reverse_row(row: np.int64) -> np.int64:
    return (
        ((row & 0xF) << 12) | (((row >> 4) & 0xF) << 8) | (((row >> 8) & 0xF) << 4) | (row >> 12)
    )


@njit(cache=True)
def _unpack_col(row: np.int64) -> np.uint64:
    r = np.uint64(row)
    return (
        (r & np.uint64(0xF))
        | ((r & np.uint64(0xF0)) << np.uint64(12))
        | ((r & np.uint64(0xF00)) << np.uint64(24))
        | ((r & np.uint64(0xF000)) << np.uint64(36))
    )


@njit(cache=True)
def build_tables() -> tuple[np.ndarray, ...]:
    """(left_row, right_row, up_col, down_col) XOR tables, (left, right) reward tables and
    (left, right) log-reward tables (sum of the merged tiles' exponents, seed 000's log reward)."""
    left_row = np.zeros(65536, dtype=np.uint64)
    right_row = np.zeros(65536, dtype=np.uint64)
    up_col = np.zeros(65536, dtype=np.uint64)
    down_col = np.zeros(65536, dtype=np.uint64)
    left_rew = np.zeros(65536, dtype=np.uint32)
    right_rew = np.zeros(65536, dtype=np.uint32)
    left_log = np.zeros(65536, dtype=np.uint8)
    right_log = np.zeros(65536, dtype=np.uint8)
    for row in range(65536):
        res, rew, lg = _slide_left(row)
        rev = _reverse_row(row)
        rres, rrew, rlg = _slide_left(rev)
        rres = _reverse_row(rres)
        left_row[row] = np.uint64(row ^ res)
        right_row[row] = np.uint64(row ^ rres)
        up_col[row] = _unpack_col(row ^ res)
        down_col[row] = _unpack_col(row ^ rres)
        left_rew[row] = rew
        right_rew[row] = rrew
        left_log[row] = lg
        right_log[row] = rlg
    return left_row, right_row, up_col, down_col, left_rew, right_rew, left_log, right_log


(
    LEFT_ROW,
    RIGHT_ROW,
    UP_COL,
    DOWN_COL,
    LEFT_REWARD,
    RIGHT_REWARD,
    LEFT_LOG_REWARD,
    RIGHT_LOG_REWARD,
) = build_tables()
for _t in (LEFT_ROW, RIGHT_ROW, UP_COL, DOWN_COL, LEFT_REWARD, RIGHT_REWARD, LEFT_LOG_REWARD, RIGHT_LOG_REWARD):
    _t.setflags(write=False)
