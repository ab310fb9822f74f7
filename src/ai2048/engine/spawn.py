"""Spawning tiles: sample one (explicit RNG state) or enumerate every outcome exactly."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ai2048.engine.board import count_empty
from ai2048.engine.moves import move_down, move_left, move_right, move_up
from ai2048.engine.rng import rand_below, rand_float
from ai2048.rules import START_TILES

_NIBBLES = np.uint64(0x1111111111111111)


@njit(cache=True, inline="always")
def empty_cells(b: np.uint64) -> np.uint64:
    """Bit ``4*i`` set iff cell ``i`` is empty: the cells a spawn may fill, walked by :func:`next_spawn`."""
    x = b | (b >> np.uint64(1))
    return ~(x | (x >> np.uint64(2))) & _NIBBLES


@njit(cache=True, inline="always")
def next_spawn(b: np.uint64, cells: np.uint64) -> tuple[np.uint64, np.uint64, np.uint64]:
    """One step of the spawn-outcome walk: (``b`` with a 2, ``b`` with a 4 in the first cell of
    ``cells``, the cells left). The one enumeration of chance every search uses::

        cells = empty_cells(b)                   # n = count_empty(b) cells, each 1/n likely
        while cells:
            two, four, cells = next_spawn(b, cells)   # p_two and 1 - p_two (rules.P_TWO)

    Cells come in row-major order, so sums over outcomes add up in one fixed order.
    """
    s = np.uint64(trailing_zeros(cells))  # type: ignore[call-arg]
    return b | (np.uint64(1) << s), b | (np.uint64(2) << s), cells & (cells - np.uint64(1))


@njit(cache=True, inline="always")
def _kth_empty_shift(b: np.uint64, k: np.int64, n: np.int64) -> np.uint64:
    """Bit offset of the ``k``-th (from 0) empty cell in row-major order, without a loop.

    ``empty * 0x1111...`` puts in nibble i the number of empty cells at or before i; the wanted
    cell is the empty one whose count is k + 1 (nneonneo-style nibble arithmetic).
    """
    if n == 16:  # empty board: the count 16 would not fit in the last nibble
        return np.uint64(4 * k)
    empty = empty_cells(b)
    counts = empty * _NIBBLES
    y = counts ^ (np.uint64(k + 1) * _NIBBLES)
    y = y | (y >> np.uint64(1))
    hit = ~(y | (y >> np.uint64(2))) & empty
    return trailing_zeros(hit)  # type: ignore[call-arg]


@njit(cache=True, inline="always")
def spawn(b: np.uint64, state: np.ndarray, p_two: np.float64) -> np.uint64:
    """Put a 2 (prob ``p_two``) or a 4 in a uniformly chosen empty cell; full boards are returned as is."""
    n = count_empty(b)
    if n == 0:
        return b
    k = rand_below(state, n)
    e = np.uint64(1) if rand_float(state) < p_two else np.uint64(2)
    # uint64 for the nibble arithmetic even when a Python int made ``b`` an int64 (its type is kept).
    return b | (e << _kth_empty_shift(np.uint64(b), k, n))


@njit(cache=True)
def new_board(state: np.ndarray, p_two: np.float64) -> np.uint64:
    """An empty board with ``rules.START_TILES`` (two) spawned tiles."""
    b = np.uint64(0)
    for _ in range(START_TILES):
        b = spawn(b, state, p_two)
    return b


@njit(cache=True)
def spawn_outcomes(b: np.uint64, p_two: np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Every board a spawn can give with its probability: ([2*empty] uint64, [2*empty] float64).

    Order: for each empty cell in row-major order, the 2 then the 4. Empty list for a full board.
    """
    b = np.uint64(b)
    n = count_empty(b)
    boards = np.empty(2 * n, dtype=np.uint64)
    probs = np.empty(2 * n, dtype=np.float64)
    k = 0
    cells = empty_cells(b)
    while cells:
        boards[k], boards[k + 1], cells = next_spawn(b, cells)
        probs[k] = p_two / n
        probs[k + 1] = (1.0 - p_two) / n
        k += 2
    return boards, probs


@njit(cache=True, inline="always")
def random_legal_action(b: np.uint64, state: np.ndarray) -> tuple[np.int64, np.uint64, np.int64]:
    """A uniformly random legal action with its result: (action, board, reward); action -1 if over.

    The k-th legal action in action order, k uniform; all four moves stay in registers.
    """
    b0, r0 = move_up(b)
    b1, r1 = move_right(b)
    b2, r2 = move_down(b)
    b3, r3 = move_left(b)
    l0 = np.int64(b0 != b)
    l1 = np.int64(b1 != b)
    l2 = np.int64(b2 != b)
    l3 = np.int64(b3 != b)
    n = l0 + l1 + l2 + l3
    if n == 0:
        return np.int64(-1), b, np.int64(0)
    k = rand_below(state, n)
    if l0 and k == 0:
        return np.int64(0), b0, r0
    k -= l0
    if l1 and k == 0:
        return np.int64(1), b1, r1
    k -= l1
    if l2 and k == 0:
        return np.int64(2), b2, r2
    return np.int64(3), b3, r3


@njit(cache=True)
def random_play(b: np.uint64, state: np.ndarray, p_two: np.float64) -> tuple[np.uint64, np.int64, np.int64]:
    """Play uniformly random legal moves to the end: (final board, score gained, moves)."""
    score = np.int64(0)
    moves = np.int64(0)
    while True:
        a, nb, r = random_legal_action(b, state)
        if a < 0:
            return b, score, moves
        b = spawn(nb, state, p_two)
        score += r
        moves += 1

