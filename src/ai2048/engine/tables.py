"""Row tables: the result and reward of sliding every possible 16-bit row, built once.

A row of four nibbles has 65,536 values, so a move is four table lookups (nneonneo/2048-ai).
Each table holds ``row XOR moved_row``, already spread to where it applies: ``*_ROW`` tables act on
a row in place, ``*_COL`` tables on a column (nibble r of the entry lands at bit 16*r), so vertical
moves need one transpose and no transpose back.

``[1 1 1 1] -> [2 2 0 0]`` (exponents, moving left), reward 8. ``[15 15 0 0]`` does not merge:
32768 is the largest tile a nibble holds.

The tables are built with numpy, all 65,536 rows at once, when this module is imported: a few
milliseconds, where a numba builder first had to load its compiled code (most of the CPU time
of ``import ai2048``).
"""

from __future__ import annotations

import numpy as np

from ai2048.rules import MAX_EXPONENT

_ROWS = np.arange(65536, dtype=np.int64)


def _slide_left(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Slide every 16-bit row of ``rows`` towards column 0: (new rows, rewards, sums of the merged
    tiles' exponents). The tiles are packed to the left, then each pair of equal neighbours below
    32768 merges, left to right, each tile at most once (rules.py)."""
    cells = (rows[:, None] >> (4 * np.arange(4))) & 0xF
    packed = np.take_along_axis(cells, np.argsort(cells == 0, axis=1, kind="stable"), axis=1)
    packed = np.concatenate([packed, np.zeros((rows.size, 4), np.int64)], axis=1)  # reads past the end see 0
    at = np.arange(rows.size)
    i = np.zeros(rows.size, np.int64)
    out = np.zeros(rows.size, np.int64)
    reward = np.zeros(rows.size, np.int64)
    log_reward = np.zeros(rows.size, np.int64)
    for k in range(4):
        e = packed[at, i]
        merge = (e != 0) & (packed[at, i + 1] == e) & (e < MAX_EXPONENT)
        tile = np.where(merge, e + 1, e)
        out |= tile << (4 * k)
        reward += np.where(merge, np.int64(1) << tile, 0)
        log_reward += np.where(merge, tile, 0)
        i += np.where(merge, 2, 1)
    return out, reward, log_reward


def _reverse_row(rows: np.ndarray) -> np.ndarray:
    return ((rows & 0xF) << 12) | (((rows >> 4) & 0xF) << 8) | (((rows >> 8) & 0xF) << 4) | (rows >> 12)


def _unpack_col(rows: np.ndarray) -> np.ndarray:
    """Nibble r of each row moved to bit 16*r (a row laid down as a column)."""
    r = rows.astype(np.uint64)
    return (
        (r & np.uint64(0xF))
        | ((r & np.uint64(0xF0)) << np.uint64(12))
        | ((r & np.uint64(0xF00)) << np.uint64(24))
        | ((r & np.uint64(0xF000)) << np.uint64(36))
    )


def build_tables() -> tuple[np.ndarray, ...]:
    """(left_row, right_row, up_col, down_col) XOR tables, (left, right) reward tables and
    (left, right) log-reward tables (sum of the merged tiles' exponents, seed 000's log reward)."""
    res, rew, lg = _slide_left(_ROWS)
    rres, rrew, rlg = _slide_left(_reverse_row(_ROWS))
    rres = _reverse_row(rres)
    left, right = _ROWS ^ res, _ROWS ^ rres
    return (
        left.astype(np.uint64), right.astype(np.uint64), _unpack_col(left), _unpack_col(right),
        rew.astype(np.uint32), rrew.astype(np.uint32), lg.astype(np.uint8), rlg.astype(np.uint8),
    )


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
for _t in (
    LEFT_ROW, RIGHT_ROW, UP_COL, DOWN_COL, LEFT_REWARD, RIGHT_REWARD, LEFT_LOG_REWARD, RIGHT_LOG_REWARD
):
    _t.setflags(write=False)
