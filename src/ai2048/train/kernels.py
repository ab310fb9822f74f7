"""Numba kernels the torch trainers use to play many boards at once (no torch here).

Serial on purpose: batches here are small (tens to hundreds of boards), so threads cost more
than they save, and numba's OpenMP layer is not fork-safe (``ai2048 eval --workers N`` forks
after the agent has run).

Each game in a batch owns one SplitMix64 state (``states[i : i + 1]``), exactly as in
:mod:`ai2048.engine.batch`, so a run replays bit for bit from its seed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import NIBBLE
from ai2048.engine.moves import legal_bits, log2_reward, move
from ai2048.engine.spawn import new_board, spawn


@njit(cache=True)
def step_boards(
    boards: np.ndarray,
    actions: np.ndarray,
    states: np.ndarray,
    p_two: float,
    rewards: np.ndarray,
    log_rewards: np.ndarray,
    changed: np.ndarray,
) -> None:
    """Move + spawn every board in place.

    In: ``boards`` [N] uint64, ``actions`` [N] int64, ``states`` [N] uint64 RNG states.
    Out: ``rewards`` [N] int64 score gained, ``log_rewards`` [N] int64 (seed 000's log2 reward),
    ``changed`` [N] bool (False = illegal move: board kept, nothing spawned).
    """
    for i in range(boards.shape[0]):
        b = boards[i]
        nb, r = move(b, actions[i])
        if nb == b:
            changed[i] = False
            rewards[i] = 0
            log_rewards[i] = 0
        else:
            changed[i] = True
            rewards[i] = r
            log_rewards[i] = log2_reward(b, actions[i])
            boards[i] = spawn(nb, states[i : i + 1], np.float64(p_two))


@njit(cache=True)
def all_moves(boards: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """[N] boards -> (after-states [N, 4] uint64, rewards [N, 4] int64, legal [N, 4] bool)."""
    n = boards.shape[0]
    after = np.empty((n, 4), dtype=np.uint64)
    rew = np.empty((n, 4), dtype=np.int64)
    legal = np.empty((n, 4), dtype=np.bool_)
    for i in range(n):
        for a in range(4):
            nb, r = move(boards[i], np.int64(a))
            after[i, a] = nb
            rew[i, a] = r
            legal[i, a] = nb != boards[i]
    return after, rew, legal


@njit(cache=True)
def legal_masks(boards: np.ndarray) -> np.ndarray:
    """[N] boards -> [N, 4] bool, True where the action changes the board."""
    n = boards.shape[0]
    out = np.empty((n, 4), dtype=np.bool_)
    for i in range(n):
        bits = legal_bits(boards[i])
        for a in range(4):
            out[i, a] = (bits >> a) & 1
    return out


@njit(cache=True)
def exponents(boards: np.ndarray) -> np.ndarray:
    """[N] boards -> [N, 16] uint8 exponents, row-major (0 = empty)."""
    n = boards.shape[0]
    out = np.empty((n, 16), dtype=np.uint8)
    for i in range(n):
        b = boards[i]
        for c in range(16):
            out[i, c] = (b >> np.uint64(4 * c)) & NIBBLE
    return out


@njit(cache=True)
def reset_boards(boards: np.ndarray, states: np.ndarray, p_two: float, which: np.ndarray) -> None:
    """Start a new game (two spawned tiles) in every slot where ``which`` [N] is True."""
    for i in range(boards.shape[0]):
        if which[i]:
            boards[i] = new_board(states[i : i + 1], np.float64(p_two))
