"""Numba kernels of the endgame tables: classify a move's result, expand a layer forward, solve a
layer backward, look a position up.

A table position is an after-state (the board right after a move, before the spawn) written as a
*key*: the formation's fixed cells hold the wall nibble ``0xF`` (a tile that never moves or
merges while the formation holds), the free cells hold the exponents of the small tiles. Layer
``k`` holds the keys whose free tiles sum to ``2 * k``: a spawn of a 2 leads to layer ``k + 1``, a
spawn of a 4 to ``k + 2``, and a move keeps the sum, so a layer's values need only the two layers
above it (game-difficulty/2048EndgameTablebase's help, section 6.2, describes this layering; the
code here is our own).

Every kernel reads what it needs of a table's spec from one record,
:class:`ai2048.tables.formations.TableRules`. A transport formation's walls may stand in other
placements too (``slide1`` ... ``slide3``); which cells a key's walls hold is read from the key itself
(:func:`walls_of`), so a key names its placement.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ai2048.engine.moves import four_moves
from ai2048.engine.spawn import empty_cells, next_spawn
from ai2048.tables.formations import TableRules

WALL = np.uint64(0xF)

# Outcomes of a move on a key (classify_move).
ILLEGAL = 0  # the board does not change
BROKEN = 1  # a fixed cell changes, a tile too large appears off the goal cells, or a bound is passed
GOAL = 2  # the target tile appears on a goal cell
INSIDE = 3  # a position of the table

MISSING = -1.0
"""A value no position has: a successor absent from its layer (:func:`spawn_value`); a distilled
table stores it for a position it does not hold (``store.distill``)."""


_NIBBLE_LOW_BITS = np.uint64(0x1111111111111111)


@njit(cache=True, inline="always")
def walls_of(key: np.uint64) -> np.uint64:
    """The mask of the nibbles of ``key`` that hold the wall ``0xF`` (a free tile is never 15: the
    targets lie below 2**15)."""
    x = key & (key >> np.uint64(1)) & (key >> np.uint64(2)) & (key >> np.uint64(3)) & _NIBBLE_LOW_BITS
    return x * np.uint64(15)


@njit(cache=True, inline="always")
def placed(walls: np.uint64, rules: TableRules) -> bool:
    """Whether ``walls`` (a mask) is one of the formation's placements: home or a slide."""
    return walls != 0 and (walls == rules.fixed_mask or walls == rules.slide1 or walls == rules.slide2
                           or walls == rules.slide3)


@njit(cache=True, inline="always")
def free_sum(key: np.uint64) -> np.int64:
    """Sum of the tile values in the free cells of ``key`` (every cell but its walls)."""
    s = np.int64(0)
    x = key & ~walls_of(key)
    while x:
        e = np.int64(x & np.uint64(15))
        if e:
            s += np.int64(1) << e
        x >>= np.uint64(4)
    return s


@njit(cache=True, inline="always")
def classify(key: np.uint64, rules: TableRules, walls: np.uint64) -> int:
    """``GOAL``, ``BROKEN`` or ``INSIDE`` for a key whose walls stand in the placement ``walls``: the
    target on a goal cell with the walls at home is the goal, even if the move made another target
    elsewhere. A position past a bound of ``rules`` (the free sum, the small tiles' sum, a large tile
    repeated) counts as broken: lost."""
    goal_mask = rules.goal_mask if walls == rules.fixed_mask else np.uint64(0)
    goal = False
    broken = False
    s = np.int64(0)
    small = np.int64(0)
    once = np.int64(0)  # bit e: a large tile 2**e is on the board
    twice = np.int64(0)  # bit e: two of them
    for q in range(16):
        bit = np.uint64(15) << np.uint64(4 * q)
        if walls & bit:
            continue
        e = np.int64((key >> np.uint64(4 * q)) & np.uint64(15))
        if e == 0:
            continue
        s += np.int64(1) << e
        if e >= rules.target:
            if e == rules.target and (goal_mask & bit):
                goal = True
            else:
                broken = True
        elif e < rules.large_from:
            small += np.int64(1) << e
        else:
            bit_e = np.int64(1) << e
            broken |= (twice & bit_e) != 0  # a third
            twice |= once & bit_e
            once |= bit_e
    if goal:  # the target beside the anchor: reached, whatever else the move made
        return GOAL
    if twice != 0 and twice != (once & -once):  # only the smallest large tile may be doubled
        broken = True
    if broken or s > 2 * rules.max_half_sum or small > 2 * rules.small_half_sum:
        return BROKEN
    return INSIDE


@njit(cache=True, inline="always")
def move_kind(b: np.uint64, r: np.uint64, rules: TableRules) -> int:
    """The outcome of the move that turned ``b`` (a key with a spawned tile) into ``r``."""
    if r == b:
        return ILLEGAL
    walls = walls_of(r)
    if not placed(walls, rules):  # a wall moved off the formation's placements: it broke
        return BROKEN
    return classify(r, rules, walls)


@njit(cache=True)
def _expand_chunk(layer: np.ndarray, lo: np.int64, hi: np.int64, rules: TableRules,
                  out2: np.ndarray, out4: np.ndarray) -> tuple:
    """Successor keys of ``layer[lo:hi]`` after a spawned 2 (``out2``) and 4 (``out4``), with a small
    direct-mapped filter that drops most repeats before the sort (a repeat that slips through is
    removed by the sort)."""
    seen = np.zeros(1 << 14, dtype=np.uint64)
    n2 = 0
    n4 = 0
    for i in range(lo, hi):
        a = layer[i]
        cells = empty_cells(a)
        while cells:
            two, four, cells = next_spawn(a, cells)
            for v in range(1, 3):
                b = two if v == 1 else four
                m = four_moves(b)
                for k in range(4):
                    r = m[k]
                    if move_kind(b, r, rules) != INSIDE:
                        continue
                    h = ((r * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(50)) & np.uint64((1 << 14) - 1)
                    if seen[h] == r:
                        continue
                    seen[h] = r
                    if v == 1:
                        out2[n2] = r
                        n2 += 1
                    else:
                        out4[n4] = r
                        n4 += 1
    return n2, n4


@njit(cache=True)
def merge_unique(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of two sorted arrays without repeats."""
    out = np.empty(a.size + b.size, dtype=np.uint64)
    i = 0
    j = 0
    n = 0
    while i < a.size or j < b.size:
        if j >= b.size or (i < a.size and a[i] < b[j]):
            x = a[i]
            i += 1
        elif i >= a.size or b[j] < a[i]:
            x = b[j]
            j += 1
        else:
            x = a[i]
            i += 1
            j += 1
        if n == 0 or out[n - 1] != x:
            out[n] = x
            n += 1
    return out[:n]


@njit(cache=True, parallel=True)
def expand_layer(layer: np.ndarray, rules: TableRules, free_cells: np.int64, chunks: np.int64) -> tuple:
    """The sorted, repeat-free successors of a sorted layer: (after a 2, after a 4).

    Each of ``chunks`` parts of the layer is expanded and sorted on its own thread, then the parts
    are merged.
    """
    n = layer.size
    per = (n + chunks - 1) // chunks
    width = free_cells * 4
    o2 = np.empty(n * width + 1, dtype=np.uint64)
    o4 = np.empty(n * width + 1, dtype=np.uint64)
    c2 = np.zeros(chunks, dtype=np.int64)
    c4 = np.zeros(chunks, dtype=np.int64)
    for p in prange(chunks):
        lo = min(n, p * per)
        hi = min(n, lo + per)
        base = lo * width
        n2, n4 = _expand_chunk(layer, lo, hi, rules, o2[base:], o4[base:])
        o2[base:base + n2].sort()
        o4[base:base + n4].sort()
        c2[p] = n2
        c4[p] = n4
    u2 = np.empty(0, dtype=np.uint64)
    u4 = np.empty(0, dtype=np.uint64)
    for p in range(chunks):
        base = (p * per if p * per < n else n) * width
        u2 = merge_unique(u2, o2[base:base + c2[p]])
        u4 = merge_unique(u4, o4[base:base + c4[p]])
    return u2, u4


@njit(cache=True, inline="always")
def find(keys: np.ndarray, lo: np.int64, hi: np.int64, key: np.uint64) -> np.int64:
    """Index of ``key`` in the sorted ``keys[lo:hi]``, or -1."""
    end = hi
    while lo < hi:
        mid = (lo + hi) >> 1
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and keys[lo] == key:
        return lo
    return np.int64(-1)


@njit(cache=True, inline="always")
def spawn_value(b: np.uint64, rules: TableRules, keys: np.ndarray, values: np.ndarray) -> float:
    """Best move's value for ``b`` (a key with a spawned tile) when its successors' layer is ``keys``
    with ``values``; ``MISSING`` when a successor is missing from the layer."""
    m = four_moves(b)
    best = 0.0
    for k in range(4):
        kind = move_kind(b, m[k], rules)
        if kind == GOAL:
            return 1.0
        if kind == INSIDE:
            j = find(keys, 0, keys.size, m[k])
            if j < 0:
                return MISSING
            v = values[j]
            if v > best:
                best = v
    return best


@njit(cache=True)
def _solve_one(a: np.uint64, keys1: np.ndarray, values1: np.ndarray, keys2: np.ndarray, values2: np.ndarray,
               rules: TableRules, p_two: float) -> float:
    total = 0.0
    empties = 0
    cells = empty_cells(a)
    while cells:
        two, four, cells = next_spawn(a, cells)
        empties += 1
        v2 = spawn_value(two, rules, keys1, values1)
        v4 = spawn_value(four, rules, keys2, values2)
        if v2 == MISSING or v4 == MISSING:
            return np.nan
        total += p_two * v2 + (1.0 - p_two) * v4
    if empties == 0:
        return np.nan
    return total / empties


@njit(cache=True, parallel=True)
def solve_layer(layer: np.ndarray, keys1: np.ndarray, values1: np.ndarray, keys2: np.ndarray,
                values2: np.ndarray, rules: TableRules, p_two: float) -> np.ndarray:
    """Values of one layer from the two above it (``keys1``: sum + 2, ``keys2``: sum + 4).

    value(key) = the average over the spawns (each empty cell alike; a 2 with ``p_two``, a 4 with
    the rest) of the best move's value, where a move that reaches the goal is worth 1, one that
    breaks the formation (or passes a bound of ``rules``) 0, and one that stays inside the table its
    successor's value. A missing successor (never, for layers the forward pass made) gives NaN.
    """
    n = layer.size
    out = np.empty(n, dtype=np.float32)
    for i in prange(n):
        out[i] = _solve_one(layer[i], keys1, values1, keys2, values2, rules, p_two)
    return out
