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
def _match_at(x: np.uint64, mask: np.uint64, anchor: np.int64) -> int:
    """:func:`match` in one placement: the walls in the cells of ``mask``, the anchor in ``anchor``."""
    t = int((x >> np.uint64(4 * anchor)) & np.uint64(15))
    if t == 0:
        return 0
    seen = 0
    for q in range(16):
        e = int((x >> np.uint64(4 * q)) & np.uint64(15))
        if mask & (np.uint64(15) << np.uint64(4 * q)):
            if e < t or (seen >> e) & 1:
                return 0
            seen |= 1 << e
        elif e >= t:
            return 0
    return t


@njit(cache=True)
def match(b: np.uint64, s: np.int64, places: np.ndarray, anchors: np.ndarray) -> int:
    """The target exponent of the formation that ``b`` under symmetry ``s`` is in, or 0: in one of its
    placements (``Formation.places``, with the anchor's cell in each in ``Formation.anchors``; a fixed
    formation has one) the anchor holds ``2**t``, every other wall cell a larger tile, no two wall
    tiles alike, and every free tile is below ``2**t`` (a table applies to any such board, whichever
    the large tiles are)."""
    x = symmetry(b, s)
    t = _match_at(x, places[0], anchors[0])
    p = 1
    while t == 0 and p < places.size and places[p] != 0:
        t = _match_at(x, places[p], anchors[p])
        p += 1
    return t


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
def _inside(rs: np.uint64, mask: np.uint64, rules: kernels.TableRules) -> tuple:
    """The outcome and key of ``rs`` (a board after a move) with the walls in placement ``mask``."""
    key = (rs & ~mask) | mask
    kind = kernels.classify(key, rules, mask)
    return kind, (key if kind == kernels.INSIDE else np.uint64(0))


@njit(cache=True, inline="always")
def _move_key(b: np.uint64, r: np.uint64, s: np.int64, home: np.uint64, at_home: bool, base: np.uint64,
              rules: kernels.TableRules) -> tuple:
    """The outcome of the move that turned ``b`` into ``r`` (``kernels.ILLEGAL``, ``BROKEN``,
    ``GOAL`` or ``INSIDE``) and, for a position of the table, its key (else 0). The formation holds
    where a placement of the walls holds the same large tiles in the same order after the move
    (:func:`_before`): with ``b``'s walls at home, the home cells unchanged (``home``); else, and for
    the slides, the tiles read row by row (``base``)."""
    if r == b:
        return kernels.ILLEGAL, np.uint64(0)
    rs = symmetry(r, s)
    fixed = rules.fixed_mask
    if ((rs & fixed) == home) if at_home else (_wall_tiles(rs, fixed) == base):
        return _inside(rs, fixed, rules)
    for mask in (rules.slide1, rules.slide2, rules.slide3):
        if mask != 0 and _wall_tiles(rs, mask) == base:
            return _inside(rs, mask, rules)
    return kernels.BROKEN, np.uint64(0)


@njit(cache=True, inline="always")
def _before(b: np.uint64, s: np.int64, rules: kernels.TableRules) -> tuple:
    """Of ``b`` (in the table's formation under ``s``): its home cells' tiles, whether its walls stand at
    home, and its large tiles read row by row (a fixed formation's board is at home: no reading)."""
    x = symmetry(b, s)
    if rules.slide1 == 0:
        return x & rules.fixed_mask, True, np.uint64(0)
    walls = _large_cells(x, rules.target)
    return x & rules.fixed_mask, walls == rules.fixed_mask, _wall_tiles(x, walls)


@njit(cache=True)
def move_values(b: np.uint64, s: np.int64, rules: kernels.TableRules, keys: np.ndarray, values: np.ndarray,
                offsets: np.ndarray) -> np.ndarray:
    """The table's value of each move of ``b`` seen under symmetry ``s``: 1 for a move that builds the
    target on a goal cell, 0 for one that breaks the formation (or passes a bound of the table), the
    table's probability for one that stays in it, NaN for an illegal move or a position the table
    does not hold."""
    out = np.full(4, np.nan)
    m = four_moves(b)
    home, at_home, base = _before(b, s, rules)
    for a in range(4):
        kind, key = _move_key(b, m[a], s, home, at_home, base, rules)
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
    home, at_home, base = _before(b, s, rules)
    for a in range(4):
        kind, key = _move_key(b, m[a], s, home, at_home, base, rules)
        out[a] = key
    return out
