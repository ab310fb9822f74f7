"""Numba loops the benchmarks time: each runs the engine kernels over realistic boards.

They live here, not in ``engine/``, because they exist only to be measured; each returns a
checksum so the compiler cannot drop the work.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.moves import move_down, move_left, move_right, move_up
from ai2048.engine.rng import rand_below
from ai2048.engine.spawn import new_board, random_legal_action, random_play, spawn


@njit(cache=True)
def collect_boards(n: np.int64, state: np.ndarray, p_two: np.float64) -> np.ndarray:
    """[n] uint64 boards met in uniformly random games: the positions a real workload sees."""
    out = np.empty(n, dtype=np.uint64)
    k = 0
    b = new_board(state, p_two)
    while k < n:
        out[k] = b
        k += 1
        a, nb, _ = random_legal_action(b, state)
        b = new_board(state, p_two) if a < 0 else spawn(nb, state, p_two)
    return out


@njit(cache=True)
def raw_moves(boards: np.ndarray, reps: np.int64) -> tuple[np.uint64, np.int64]:
    """Apply all four moves to every board ``reps`` times: 4 * reps * N moves, one thread."""
    acc = np.uint64(0)
    score = np.int64(0)
    for _ in range(reps):
        for i in range(boards.shape[0]):
            b = boards[i]
            b0, r0 = move_up(b)
            b1, r1 = move_right(b)
            b2, r2 = move_down(b)
            b3, r3 = move_left(b)
            acc ^= b0 ^ b1 ^ b2 ^ b3
            score += r0 + r1 + r2 + r3
    return acc, score


@njit(cache=True)
def random_games(starts: np.ndarray, states: np.ndarray, p_two: np.float64) -> tuple[np.int64, np.int64]:
    """Play one random game from every start on one thread: (total moves, total score)."""
    moves = np.int64(0)
    score = np.int64(0)
    for i in range(starts.shape[0]):
        _, s, m = random_play(starts[i], states[i : i + 1], p_two)
        moves += m
        score += s
    return moves, score


_LEGAL_COUNT = np.array([bin(m).count("1") for m in range(16)], dtype=np.int64)


def _legal_actions_padded(mask: int) -> list[int]:
    """The actions set in 4-bit ``mask``, in order, padded with 0 to four entries."""
    return ([a for a in range(4) if mask >> a & 1] + [0] * 4)[:4]


_KTH_LEGAL = np.array([_legal_actions_padded(m) for m in range(16)], dtype=np.int64)


@njit(cache=True)
def pick_legal(masks: np.ndarray, state: np.ndarray, out: np.ndarray) -> None:
    """A uniformly random legal action per row of ``masks`` [N, 4] into ``out`` [N] (0 if none):
    the k-th legal action, k uniform, looked up by the row's 4-bit mask."""
    for i in range(masks.shape[0]):
        m = (
            np.int64(masks[i, 0])
            | (np.int64(masks[i, 1]) << 1)
            | (np.int64(masks[i, 2]) << 2)
            | (np.int64(masks[i, 3]) << 3)
        )
        n = _LEGAL_COUNT[m]
        out[i] = _KTH_LEGAL[m, rand_below(state, n)] if n else 0
