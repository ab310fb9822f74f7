"""Reading a table during a game: which formation a board is in (under any of the 8 symmetries)
and the table's value of each move."""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import flip, mirror, transpose
from ai2048.engine.moves import four_moves
from ai2048.tables import kernels


@njit(cache=True, inline="always")
def symmetry(b: np.uint64, s: np.int64) -> np.uint64:
    """The board ``b`` under symmetry ``s`` (0..7): bit 0 mirrors the rows, bit 1 flips them, bit 2
    transposes first."""
    if s & 4:
        b = transpose(b)
    if s & 2:
        b = flip(b)
    if s & 1:
        b = mirror(b)
    return b


@njit(cache=True)
def match(b: np.uint64, s: np.int64, fixed_mask: np.uint64, anchor: np.int64) -> int:
    """The target exponent of the formation that ``b`` under symmetry ``s`` is in, or 0: the anchor
    holds ``2**t``, every other fixed cell a larger tile, no two fixed tiles alike, and every free
    tile is below ``2**t`` (a table applies to any such board, whichever the large tiles are)."""
    x = symmetry(b, s)
    t = int((x >> np.uint64(4 * anchor)) & np.uint64(15))
    if t == 0:
        return 0
    seen = 0
    for q in range(16):
        e = int((x >> np.uint64(4 * q)) & np.uint64(15))
        if fixed_mask & (np.uint64(15) << np.uint64(4 * q)):
            if e < t or (seen >> e) & 1:
                return 0
            seen |= 1 << e
        elif e >= t:
            return 0
    return t


@njit(cache=True, inline="always")
def _move_key(b: np.uint64, r: np.uint64, s: np.int64, base: np.uint64, rules: kernels.TableRules) -> tuple:
    """The outcome of the move that turned ``b`` into ``r`` (``kernels.ILLEGAL``, ``BROKEN``,
    ``GOAL`` or ``INSIDE``) and, for a position of the table, its key (else 0)."""
    if r == b:
        return kernels.ILLEGAL, np.uint64(0)
    rs = symmetry(r, s)
    if (rs & rules.fixed_mask) != base:
        return kernels.BROKEN, np.uint64(0)
    key = (rs & ~rules.fixed_mask) | rules.fixed_mask
    kind = kernels.classify(key, rules)
    return kind, (key if kind == kernels.INSIDE else np.uint64(0))


@njit(cache=True)
def move_values(b: np.uint64, s: np.int64, rules: kernels.TableRules, keys: np.ndarray, values: np.ndarray,
                offsets: np.ndarray) -> np.ndarray:
    """The table's value of each move of ``b`` seen under symmetry ``s``: 1 for a move that builds the
    target on a goal cell, 0 for one that breaks the formation (or passes a bound of the table), the
    table's probability for one that stays in it, NaN for an illegal move or a position the table
    does not hold."""
    out = np.full(4, np.nan)
    m = four_moves(b)
    base = symmetry(b, s) & rules.fixed_mask
    for a in range(4):
        kind, key = _move_key(b, m[a], s, base, rules)
        if kind == kernels.GOAL:
            out[a] = 1.0
        elif kind == kernels.BROKEN:
            out[a] = 0.0
        elif kind == kernels.INSIDE:
            k = kernels.free_sum(key, rules.fixed_mask) // 2
            if k + 1 < offsets.size:
                j = kernels.find(keys, offsets[k], offsets[k + 1], key)
                if j >= 0:
                    out[a] = values[j]
    return out


@njit(cache=True)
def looked_up(b: np.uint64, s: np.int64, rules: kernels.TableRules) -> np.ndarray:
    """uint64 [4]: the keys :func:`move_values` looks up for each move (0 where it looks nothing up):
    the positions a distilled table must hold for this decision (``ai2048 tables distill``)."""
    out = np.zeros(4, np.uint64)
    m = four_moves(b)
    base = symmetry(b, s) & rules.fixed_mask
    for a in range(4):
        kind, key = _move_key(b, m[a], s, base, rules)
        out[a] = key
    return out
