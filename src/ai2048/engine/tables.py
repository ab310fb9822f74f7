"""Row tables: the result and reward of sliding every possible 16-bit row, built once.

A row of four nibbles has 65,536 values, so a move is four table lookups (nneonneo/2048-ai).
``ROW_MOVES`` is the one table the moves read: entry ``r`` packs ``r XOR left(r)`` (bits 0-15),
``r XOR right(r)`` (bits 16-31) and the reward (bits 32-63), which is the same both ways: a run of
``k`` equal tiles merges ``k // 2`` pairs whichever wall it slides to. One 512 KiB table where
separate left, right, column and reward tables took 2.5 MiB, more than a core's L2 cache: the four
moves of a board read 8 of its entries (its rows and its columns). Vertical moves slide the rows
of the transposed board and transpose the change back. ``LEFT_ROW``/``RIGHT_ROW`` and the reward
tables hold the same numbers unpacked (the log rewards of seed 000 and the benchmarks' baselines).

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


def build_tables() -> tuple[np.ndarray, ...]:
    """(ROW_MOVES, left_row, right_row) XOR tables, (left, right) reward tables and (left, right)
    log-reward tables (sum of the merged tiles' exponents, seed 000's log reward)."""
    res, rew, lg = _slide_left(_ROWS)
    rres, rrew, rlg = _slide_left(_reverse_row(_ROWS))
    rres = _reverse_row(rres)
    left, right = _ROWS ^ res, _ROWS ^ rres
    packed = (left | (right << 16) | (rew << 32)).astype(np.uint64)
    return (
        packed, left.astype(np.uint64), right.astype(np.uint64),
        rew.astype(np.uint32), rrew.astype(np.uint32), lg.astype(np.uint8), rlg.astype(np.uint8),
    )


(
    ROW_MOVES,
    LEFT_ROW,
    RIGHT_ROW,
    LEFT_REWARD,
    RIGHT_REWARD,
    LEFT_LOG_REWARD,
    RIGHT_LOG_REWARD,
) = build_tables()
for _t in (ROW_MOVES, LEFT_ROW, RIGHT_ROW, LEFT_REWARD, RIGHT_REWARD, LEFT_LOG_REWARD, RIGHT_LOG_REWARD):
    _t.setflags(write=False)
