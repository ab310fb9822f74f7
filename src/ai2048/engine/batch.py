"""The single-board kernels over ``uint64[N]`` batches, in parallel with ``prange``.

Each game in a batch owns one SplitMix64 state (``states[i]``), so a batch replays exactly the
games that N single boards seeded the same way would play.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ai2048.engine.board import count_empty, max_exponent, nibbles_to_bytes
from ai2048.engine.moves import legal_bits, log2_reward, move
from ai2048.engine.spawn import new_board, random_play, spawn


@njit(cache=True, inline="always")
def _play(b: np.uint64, a: np.int64, state: np.ndarray, p_two: float) -> tuple[np.uint64, np.int64, np.int64, bool]:
    """Move and spawn if legal: (board, reward, log2 reward, illegal)."""
    nb, r = move(b, a)
    if nb == b:
        return b, np.int64(0), np.int64(0), True
    return spawn(nb, state, p_two), r, log2_reward(b, a), False


@njit(cache=True, inline="always")
def _observe(
    b: np.uint64, i: np.int64, masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray, obs_words: np.ndarray
) -> None:
    """Write slot i's legal mask, max exponent, empty count and exponents (two words a board)."""
    bits = legal_bits(b)
    for a in range(4):
        masks[i, a] = (bits >> a) & 1
    obs_words[2 * i], obs_words[2 * i + 1] = nibbles_to_bytes(b)
    max_exp[i] = max_exponent(b)
    empty[i] = count_empty(b)


@njit(cache=True, parallel=True)
def batch_move(boards: np.ndarray, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[N] boards, [N] actions -> ([N] boards, [N] rewards); no spawn."""
    n = boards.shape[0]
    out = np.empty(n, dtype=np.uint64)
    rew = np.empty(n, dtype=np.int64)
    for i in prange(n):
        out[i], rew[i] = move(boards[i], actions[i])
    return out, rew


@njit(cache=True, parallel=True)
def batch_legal_masks(boards: np.ndarray) -> np.ndarray:
    """[N] boards -> [N, 4] bool, True where the action changes the board."""
    n = boards.shape[0]
    out = np.empty((n, 4), dtype=np.bool_)
    for i in prange(n):
        bits = legal_bits(boards[i])
        for a in range(4):
            out[i, a] = (bits >> a) & 1
    return out


@njit(cache=True, parallel=True)
def batch_random_play(boards: np.ndarray, states: np.ndarray, p_two: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Play every board to the end with uniformly random legal moves: (finals, scores, moves)."""
    n = boards.shape[0]
    finals = np.empty(n, dtype=np.uint64)
    scores = np.empty(n, dtype=np.int64)
    moves = np.empty(n, dtype=np.int64)
    for i in prange(n):
        finals[i], scores[i], moves[i] = random_play(boards[i], states[i : i + 1], p_two)
    return finals, scores, moves


@njit(cache=True, parallel=True)
def batch_reset(boards: np.ndarray, states: np.ndarray, p_two: float, which: np.ndarray) -> None:
    """Start a new game (two spawned tiles) in every slot where ``which`` [N] is True."""
    for i in prange(boards.shape[0]):
        if which[i]:
            boards[i] = new_board(states[i : i + 1], p_two)


@njit(cache=True, parallel=True)
def batch_step(
    boards: np.ndarray,
    actions: np.ndarray,
    states: np.ndarray,
    p_two: float,
    rewards: np.ndarray,
    log_rewards: np.ndarray,
    illegal: np.ndarray,
    masks: np.ndarray,
    max_exp: np.ndarray,
    empty: np.ndarray,
    obs: np.ndarray,
) -> None:
    """One env step for every board, in place, fused so the batch is walked once.

    In: ``boards`` [N] uint64, ``actions`` [N] int, ``states`` [N] uint64 RNG states.
    Out: ``boards`` after move + spawn (unchanged where the action is illegal), ``rewards`` [N]
    int64 score gained, ``log_rewards`` [N] int64 (seed 000), ``illegal`` [N] bool, ``masks``
    [N, 4] bool legal actions of the new board, ``max_exp`` [N] uint8, ``empty`` [N] int64 empty
    cells, ``obs`` [N, 4, 4] uint8 exponents (C-contiguous: it is written as two words a board).
    """
    obs_words = obs.reshape(boards.shape[0] * 16).view(np.uint64)
    for i in prange(boards.shape[0]):
        b, rewards[i], log_rewards[i], illegal[i] = _play(boards[i], actions[i], states[i : i + 1], p_two)
        boards[i] = b
        _observe(b, i, masks, max_exp, empty, obs_words)


@njit(cache=True, parallel=True)
def batch_observe(boards: np.ndarray, masks: np.ndarray, max_exp: np.ndarray, empty: np.ndarray, obs: np.ndarray) -> None:
    """Fill the per-board outputs of :func:`batch_step` without moving (after a reset)."""
    obs_words = obs.reshape(boards.shape[0] * 16).view(np.uint64)
    for i in prange(boards.shape[0]):
        _observe(boards[i], i, masks, max_exp, empty, obs_words)


@njit(cache=True, parallel=True)
def batch_env_step(
    boards: np.ndarray,
    actions: np.ndarray,
    states: np.ndarray,
    p_two: float,
    restart: np.ndarray,
    scores: np.ndarray,
    moves: np.ndarray,
    rewards: np.ndarray,
    log_rewards: np.ndarray,
    illegal: np.ndarray,
    masks: np.ndarray,
    max_exp: np.ndarray,
    empty: np.ndarray,
    obs: np.ndarray,
) -> None:
    """:func:`batch_step` for the vector env, with next-step autoreset and score/move counters.

    Where ``restart[i]`` is True the action is ignored and slot i starts a new game (reward 0,
    score and moves reset), as Gymnasium's next-step autoreset prescribes. ``obs`` must be
    C-contiguous (it is written as two words a board).
    """
    obs_words = obs.reshape(boards.shape[0] * 16).view(np.uint64)
    for i in prange(boards.shape[0]):
        if restart[i]:
            b = new_board(states[i : i + 1], p_two)
            boards[i] = b
            scores[i] = 0
            moves[i] = 0
            rewards[i] = 0
            log_rewards[i] = 0
            illegal[i] = False
        else:
            b, r, log_rewards[i], illegal[i] = _play(boards[i], actions[i], states[i : i + 1], p_two)
            boards[i] = b
            rewards[i] = r
            if not illegal[i]:
                scores[i] += r
                moves[i] += 1
        _observe(b, i, masks, max_exp, empty, obs_words)
