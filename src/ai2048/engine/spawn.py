"""Spawning tiles: sample one (explicit RNG state) or enumerate every outcome exactly."""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import NIBBLE, count_empty
from ai2048.engine.moves import move
from ai2048.engine.rng import rand_below, rand_float


@njit(cache=True, inline="always")
def spawn(b: np.uint64, state: np.ndarray, p_two: np.float64) -> np.uint64:
    """Put a 2 (prob ``p_two``) or a 4 in a uniformly chosen empty cell; full boards are returned as is."""
    n = count_empty(b)
    if n == 0:
        return b
    k = rand_below(state, n)
    e = np.uint64(1) if rand_float(state) < p_two else np.uint64(2)
    shift = np.uint64(0)
    t = b
    while True:
        if (t & NIBBLE) == 0:
            if k == 0:
                return b | (e << shift)
            k -= 1
        t >>= np.uint64(4)
        shift += np.uint64(4)


@njit(cache=True)
def new_board(state: np.ndarray, p_two: np.float64) -> np.uint64:
    """An empty board with two spawned tiles."""
    b = spawn(np.uint64(0), state, p_two)
    return spawn(b, state, p_two)


@njit(cache=True)
def spawn_outcomes(b: np.uint64, p_two: np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Every board a spawn can give with its probability: ([2*empty] uint64, [2*empty] float64).

    Order: for each empty cell in row-major order, the 2 then the 4. Empty list for a full board.
    """
    n = count_empty(b)
    boards = np.empty(2 * n, dtype=np.uint64)
    probs = np.empty(2 * n, dtype=np.float64)
    k = 0
    for i in range(16):
        s = np.uint64(4 * i)
        if ((b >> s) & NIBBLE) == 0:
            boards[k] = b | (np.uint64(1) << s)
            probs[k] = p_two / n
            boards[k + 1] = b | (np.uint64(2) << s)
            probs[k + 1] = (1.0 - p_two) / n
            k += 2
    return boards, probs


@njit(cache=True, inline="always")
def random_legal_action(b: np.uint64, state: np.ndarray) -> tuple[np.int64, np.uint64, np.int64]:
    """A uniformly random legal action with its result: (action, board, reward); action -1 if over."""
    boards = np.empty(4, dtype=np.uint64)
    rewards = np.empty(4, dtype=np.int64)
    legal = np.empty(4, dtype=np.int64)
    n = 0
    for a in range(4):
        nb, r = move(b, a)
        if nb != b:
            boards[n] = nb
            rewards[n] = r
            legal[n] = a
            n += 1
    if n == 0:
        return np.int64(-1), b, np.int64(0)
    k = rand_below(state, n)
    return legal[k], boards[k], rewards[k]


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

