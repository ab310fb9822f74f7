"""The baselines each figure is compared with, measured in the same run: plain numpy on the same
row tables, and the pure-Python reference rules (the test oracle)."""

from __future__ import annotations

import random

import numpy as np

from ai2048.engine import reference
from ai2048.engine.board import transpose
from ai2048.engine.tables import LEFT_REWARD, LEFT_ROW, RIGHT_REWARD, RIGHT_ROW
from ai2048.rules import P_TWO

_SHIFTS = [np.uint64(16 * k) for k in range(4)]
_MASK = np.uint64(0xFFFF)


_np_transpose = transpose.py_func
"""The engine's mask-and-shift transpose run as plain numpy, vectorised over [N] boards."""


def _np_rows(b: np.ndarray, xor_table: np.ndarray, reward_table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = b.copy()
    rew = np.zeros(b.shape[0], dtype=np.int64)
    for s in _SHIFTS:
        row = ((b >> s) & _MASK).astype(np.intp)
        out ^= xor_table[row] << s
        rew += reward_table[row]
    return out, rew


def numpy_moves(boards: np.ndarray) -> tuple[np.uint64, np.int64]:
    """All four moves of every board [N] with numpy fancy indexing into the engine's row tables."""
    t = _np_transpose(boards)
    acc = np.uint64(0)
    score = np.int64(0)
    for src, xor_table, reward_table, vertical in (
        (t, LEFT_ROW, LEFT_REWARD, True),
        (boards, RIGHT_ROW, RIGHT_REWARD, False),
        (t, RIGHT_ROW, RIGHT_REWARD, True),
        (boards, LEFT_ROW, LEFT_REWARD, False),
    ):
        out, rew = _np_rows(src, xor_table, reward_table)
        if vertical:
            out = _np_transpose(out)
        acc ^= np.bitwise_xor.reduce(out)
        score += rew.sum()
    return acc, score


def reference_moves(cells: list[list[int]]) -> int:
    """All four moves of every board (lists of 16 exponents) with the pure-Python rules."""
    total = 0
    for c in cells:
        for a in range(4):
            total += reference.move(c, a)[1]
    return total


def _reference_spawn(cells: list[int], rng: random.Random) -> None:
    empty = [i for i, e in enumerate(cells) if e == 0]
    cells[rng.choice(empty)] = 1 if rng.random() < P_TWO else 2


def reference_random_play(games: int, seed: int) -> int:
    """Play ``games`` uniformly random games with the pure-Python rules; returns the moves made."""
    rng = random.Random(seed)
    moves = 0
    for _ in range(games):
        cells = [0] * 16
        _reference_spawn(cells, rng)
        _reference_spawn(cells, rng)
        while True:
            options = [m for m in (reference.move(cells, a) for a in range(4)) if m[0] != cells]
            if not options:
                break
            cells = list(rng.choice(options)[0])
            _reference_spawn(cells, rng)
            moves += 1
    return moves
