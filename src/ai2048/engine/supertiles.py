"""Tiles past 32768: a board's 15-cells and the exact values kept beside it (rules version 1).

A cell is a nibble, so it holds exponents 0..15. Under rules version 1 a 15-cell is *a tile of
32768 or more*, and its exact exponent (15, 16 or 17: 32768, 65536, 131072) is kept in a second
integer, ``supers``: bits ``2i..2i+1`` of it hold ``exponent - 15`` for cell ``i`` when that cell is
a 15 (0 elsewhere). A board whose 15-cells are all 32768s has ``supers == 0``, so every board of a
game that never passes 32768 is its own exact position and the kernels that read boards (moves,
search, n-tuple networks, tables) run unchanged: in them a 15 is a wall that never merges. The
game layer merges two equal tiles of 32768 or more itself, with :func:`exact_move`. This is the
side record game-difficulty/2048EndgameTablebase keeps for its large tiles (ideas only; the code
here is ours); TDL2048+ instead widens every cell to 5 bits, which slows every move.

``exact_move`` takes the bitboard path whenever it is exact (no super value recorded and at most one
15-cell: nothing of 32768 or more can merge), so a game pays for the exact path only once two tiles
of 32768 or more are on the board. Searches plan the merge of two equal large tiles on
:func:`planning_view`, which shows them as two 16384s (game-difficulty's reading of two 32768s).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import max_exponent
from ai2048.engine.moves import legal_bits, move
from ai2048.rules import MAX_EXPONENT, MAX_TILE_EXPONENT

_NIBBLES = np.uint64(0x1111111111111111)
_TOP = np.int64(MAX_EXPONENT)

BIG_MERGE = np.int64(1) << _TOP
"""A move's reward of at least this made a tile of 32768 or more: only then can a position that did
not :func:`needs_exact` come to need it (spawns make 2s and 4s), so game loops look again only then."""


@njit(cache=True, inline="always")
def top_cells(b: np.uint64) -> np.uint64:
    """Bit ``4*i`` set iff cell ``i`` holds a 15 (32768 or more)."""
    b = np.uint64(b)
    return b & (b >> np.uint64(1)) & (b >> np.uint64(2)) & (b >> np.uint64(3)) & _NIBBLES


@njit(cache=True, inline="always")
def needs_exact(b: np.uint64, supers: np.int64) -> bool:
    """True iff the bitboard's move may differ from the exact one: a super value is recorded, or two
    or more cells hold 32768s (which merge under rules version 1)."""
    t = top_cells(b)
    return supers != 0 or (t & (t - np.uint64(1))) != np.uint64(0)


@njit(cache=True)
def exact_cells(b: np.uint64, supers: np.int64) -> np.ndarray:
    """The 16 exact exponents (row-major, 0 = empty) of ``(b, supers)``."""
    out = np.empty(16, dtype=np.int64)
    for i in range(16):
        e = np.int64((np.uint64(b) >> np.uint64(4 * i)) & np.uint64(0xF))
        if e == _TOP:
            e += (supers >> np.int64(2 * i)) & np.int64(3)
        out[i] = e
    return out


@njit(cache=True)
def pack_cells(cells: np.ndarray) -> tuple[np.uint64, np.int64]:
    """``(board, supers)`` of 16 exact exponents (0..17): the inverse of :func:`exact_cells`."""
    b = np.uint64(0)
    s = np.int64(0)
    for i in range(16):
        e = np.int64(cells[i])
        if e >= _TOP:
            b |= np.uint64(MAX_EXPONENT) << np.uint64(4 * i)
            s |= (e - _TOP) << np.int64(2 * i)
        else:
            b |= np.uint64(e) << np.uint64(4 * i)
    return b, s


@njit(cache=True, inline="always")
def _cell(action: np.int64, line: np.int64, j: np.int64) -> np.int64:
    """The cell at place ``j`` (0 = by the wall) of line ``line`` when sliding towards ``action``."""
    if action == 0:
        return 4 * j + line
    if action == 2:
        return 4 * (3 - j) + line
    if action == 3:
        return 4 * line + j
    return 4 * line + 3 - j


@njit(cache=True)
def slide_cells(cells: np.ndarray, action: np.int64) -> tuple[np.ndarray, np.int64]:
    """Slide 16 exact exponents towards ``action``'s wall: (new cells, reward). Equal neighbours merge
    once per move, nearest the wall first, up to 131072 (rules.py)."""
    out = np.zeros(16, dtype=np.int64)
    reward = np.int64(0)
    tiles = np.empty(4, dtype=np.int64)
    for line in range(4):
        n = 0
        for j in range(4):
            e = cells[_cell(action, line, j)]
            if e != 0:
                tiles[n] = e
                n += 1
        k = 0
        i = 0
        while i < n:
            e = tiles[i]
            if i + 1 < n and tiles[i + 1] == e and e < MAX_TILE_EXPONENT:
                e += 1
                reward += np.int64(1) << e
                i += 2
            else:
                i += 1
            out[_cell(action, line, k)] = e
            k += 1
    return out, reward


@njit(cache=True)
def slow_move(b: np.uint64, supers: np.int64, action: np.int64) -> tuple[np.uint64, np.int64, np.int64]:
    """:func:`exact_move` cell by cell, on the exact exponents: the path of boards that need it."""
    cells, r = slide_cells(exact_cells(b, supers), action)
    nb, ns = pack_cells(cells)
    return nb, ns, r


@njit(cache=True, inline="always")
def exact_move(b: np.uint64, supers: np.int64, action: np.int64) -> tuple[np.uint64, np.int64, np.int64]:
    """Apply ``action`` to the exact position ``(b, supers)``: (board, supers, reward); legal iff the
    board or the supers changed. The bitboard move (inlined into the caller) where it is exact
    (:func:`needs_exact`), else :func:`slow_move`."""
    if not needs_exact(b, supers):
        nb, r = move(b, action)
        return nb, np.int64(0), r
    return slow_move(b, supers, action)


@njit(cache=True, inline="always")
def loop_move(b: np.uint64, supers: np.int64, slow: bool,
              action: np.int64) -> tuple[np.uint64, np.int64, np.int64]:
    """A game loop's move: :func:`slow_move` where the loop found the position needs it (``slow``,
    from :func:`look_again`), else the bitboard move; (board, supers, reward)."""
    if slow:
        return slow_move(b, supers, action)
    nb, r = move(b, action)
    return nb, np.int64(0), r


@njit(cache=True, inline="always")
def look_again(b: np.uint64, supers: np.int64, slow: bool, reward: np.int64, exact: bool) -> bool:
    """A game loop's ``slow`` after a move of ``reward`` and its spawn reached ``(b, supers)``: looked at
    again only after a move that made a tile of 32768 or more (:data:`BIG_MERGE`) or on the slow path;
    always False under the capped rules (``exact`` False)."""
    if exact and (slow or reward >= BIG_MERGE):
        return needs_exact(b, supers)
    return slow


@njit(cache=True)
def exact_legal_bits(b: np.uint64, supers: np.int64) -> np.int64:
    """Bit ``a`` set iff action ``a`` changes the exact position: the bitboard's legal moves, and the
    merges of two equal neighbours of 32768 or more (which the bitboard, where 15 never merges, lacks)."""
    bits = legal_bits(b)
    if not needs_exact(b, supers):
        return bits
    cells = exact_cells(b, supers)
    for i in range(16):
        e = cells[i]
        if e < _TOP or e >= MAX_TILE_EXPONENT:
            continue
        if i % 4 < 3 and cells[i + 1] == e:
            bits |= 2 | 8
        if i < 12 and cells[i + 4] == e:
            bits |= 1 | 4
    return bits


@njit(cache=True)
def exact_max_exponent(b: np.uint64, supers: np.int64) -> np.int64:
    """The largest exact exponent on the board (0 when empty)."""
    m = max_exponent(b)
    if m < _TOP or supers == 0:
        return m
    return np.int64(MAX_EXPONENT) + np.int64(np.max(exact_cells(b, supers)) - _TOP)


@njit(cache=True)
def planning_view(b: np.uint64, supers: np.int64) -> np.uint64:
    """The board a search plays: ``b``, except that the two (or more) tiles of the smallest value of
    32768 or more that appears twice show as 16384s when the board holds no 16384, so merging them
    scores and searches see it (game-difficulty shows two 32768s as 16384s). Every move legal on the
    view is legal on the exact position; tiles of 32768 or more otherwise stay 15s, walls."""
    t = top_cells(b)
    if (t & (t - np.uint64(1))) == np.uint64(0):
        return b
    cells = exact_cells(b, supers)
    pair = np.int64(0)
    for e in range(MAX_EXPONENT, MAX_TILE_EXPONENT + 1):
        if np.sum(cells == e) >= 2:
            pair = np.int64(e)
            break
    if pair == 0 or np.any(cells == _TOP - 1):
        return b
    view = b
    for i in range(16):
        if cells[i] == pair:
            view ^= np.uint64(1) << np.uint64(4 * i)  # 15 -> 14
    return view


@njit(cache=True)
def exact_tile_sum(b: np.uint64, supers: np.int64) -> np.int64:
    """The sum of the tile values of the exact position."""
    cells = exact_cells(b, supers)
    s = np.int64(0)
    for i in range(16):
        if cells[i]:
            s += np.int64(1) << cells[i]
    return s


@njit(cache=True)
def view_and_forced(b: np.uint64, supers: np.int64) -> tuple[np.uint64, np.int64]:
    """(the :func:`planning_view` of ``(b, supers)``, -1), or, where the view has no legal move but the
    position has one (two equal tiles of 32768 or more beside a 16384, so not shown as 16384s), the
    view and the position's first legal move in action order, which every game loop plays unasked."""
    if not needs_exact(b, supers):
        return b, np.int64(-1)
    view = planning_view(b, supers)
    if legal_bits(view) != 0:
        return view, np.int64(-1)
    bits = exact_legal_bits(b, supers)
    for a in range(4):
        if bits >> a & 1:
            return view, np.int64(a)
    return view, np.int64(-1)
