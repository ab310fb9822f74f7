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


@njit(cache=True, inline="always")
def _anchor_cell(mask: np.uint64, rank: np.int64) -> np.int64:
    """The cell of the ``rank``-th wall of placement ``mask``, read row by row."""
    n = 0
    for q in range(16):
        if mask & (np.uint64(15) << np.uint64(4 * q)):
            if n == rank:
                return np.int64(q)
            n += 1
    return np.int64(-1)


@njit(cache=True)
def match(b: np.uint64, s: np.int64, places: np.ndarray, anchor_rank: np.int64) -> int:
    """The target exponent of the formation that ``b`` under symmetry ``s`` is in, or 0: in one of its
    placements (``Formation.places``; a fixed formation has one) the anchor holds ``2**t``, every other
    wall cell a larger tile, no two wall tiles alike, and every free tile is below ``2**t`` (a table
    applies to any such board, whichever the large tiles are)."""
    x = symmetry(b, s)
    for p in range(places.size):
        mask = places[p]
        if mask == 0:
            break
        anchor = _anchor_cell(mask, anchor_rank)
        t = int((x >> np.uint64(4 * anchor)) & np.uint64(15))
        if t == 0:
            continue
        seen = 0
        ok = True
        for q in range(16):
            e = int((x >> np.uint64(4 * q)) & np.uint64(15))
            if mask & (np.uint64(15) << np.uint64(4 * q)):
                if e < t or (seen >> e) & 1:
                    ok = False
                    break
                seen |= 1 << e
            elif e >= t:
                ok = False
                break
        if ok:
            return t
    return 0


@njit(cache=True, inline="always")
def _wall_tiles(x: np.uint64, mask: np.uint64) -> np.uint64:
    """The tiles of ``x`` in the cells of ``mask``, read row by row, packed one nibble each."""
    out = np.uint64(0)
    for q in range(15, -1, -1):
        if mask & (np.uint64(15) << np.uint64(4 * q)):
            out = (out << np.uint64(4)) | ((x >> np.uint64(4 * q)) & np.uint64(15))
    return out


@njit(cache=True, inline="always")
def _large_cells(x: np.uint64, t: np.int64) -> np.uint64:
    """The mask of the cells of ``x`` holding ``2**t`` or more: a matched board's walls."""
    out = np.uint64(0)
    for q in range(16):
        if np.int64((x >> np.uint64(4 * q)) & np.uint64(15)) >= t:
            out |= np.uint64(15) << np.uint64(4 * q)
    return out


@njit(cache=True, inline="always")
def _move_key(b: np.uint64, r: np.uint64, s: np.int64, base: np.uint64, rules: kernels.TableRules) -> tuple:
    """The outcome of the move that turned ``b`` into ``r`` (``kernels.ILLEGAL``, ``BROKEN``,
    ``GOAL`` or ``INSIDE``) and, for a position of the table, its key (else 0). ``base`` is the large
    tiles of ``b`` read row by row (:func:`_wall_tiles`): the formation holds where a placement of
    the walls holds the same tiles in the same order after the move."""
    if r == b:
        return kernels.ILLEGAL, np.uint64(0)
    rs = symmetry(r, s)
    for mask in (rules.fixed_mask, rules.slide1, rules.slide2, rules.slide3):
        if mask != 0 and _wall_tiles(rs, mask) == base:
            key = (rs & ~mask) | mask
            kind = kernels.classify(key, rules, mask)
            return kind, (key if kind == kernels.INSIDE else np.uint64(0))
    return kernels.BROKEN, np.uint64(0)


@njit(cache=True, inline="always")
def _base(b: np.uint64, s: np.int64, rules: kernels.TableRules) -> np.uint64:
    """The large tiles of ``b`` (in the table's formation under ``s``) read row by row."""
    x = symmetry(b, s)
    return _wall_tiles(x, _large_cells(x, rules.target))


@njit(cache=True)
def move_values(b: np.uint64, s: np.int64, rules: kernels.TableRules, keys: np.ndarray, values: np.ndarray,
                offsets: np.ndarray) -> np.ndarray:
    """The table's value of each move of ``b`` seen under symmetry ``s``: 1 for a move that builds the
    target on a goal cell, 0 for one that breaks the formation (or passes a bound of the table), the
    table's probability for one that stays in it, NaN for an illegal move or a position the table
    does not hold."""
    out = np.full(4, np.nan)
    m = four_moves(b)
    base = _base(b, s, rules)
    for a in range(4):
        kind, key = _move_key(b, m[a], s, base, rules)
        if kind == kernels.GOAL:
            out[a] = 1.0
        elif kind == kernels.BROKEN:
            out[a] = 0.0
        elif kind == kernels.INSIDE:
            k = kernels.free_sum(key) // 2
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
    base = _base(b, s, rules)
    for a in range(4):
        kind, key = _move_key(b, m[a], s, base, rules)
        out[a] = key
    return out
