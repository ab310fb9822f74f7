"""Slow, obvious pure-Python rules: the test oracle, and the baseline ``ai2048 bench`` compares
the kernels with (so it ships; nothing else uses it at run time).

Boards here are lists of 16 exact exponents, row-major, 0 = empty: up to 17 (131072) under rules
version 1, where two equal tiles of 32768 or more merge; ``rules=0`` is the capped version 0, where
a 32768 (15) never merges.
"""

from __future__ import annotations

from ai2048.rules import CAPPED_RULES, MAX_EXPONENT, MAX_TILE_EXPONENT, P_TWO, RULES_VERSION


def _top(rules: int) -> int:
    """The largest exponent that a merge may still grow from under ``rules``, plus one."""
    return MAX_EXPONENT if rules == CAPPED_RULES else MAX_TILE_EXPONENT


def slide_row_left(row: list[int], rules: int = RULES_VERSION) -> tuple[list[int], int]:
    """``[1, 1, 1, 1] -> ([2, 2, 0, 0], 8)``: compact, merge the leading pair once, compact."""
    tiles = [e for e in row if e]
    out: list[int] = []
    reward = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < _top(rules):
            out.append(tiles[i] + 1)
            reward += 2 ** (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (4 - len(out)), reward


def _rows(cells: list[int]) -> list[list[int]]:
    return [cells[4 * r : 4 * r + 4] for r in range(4)]


def _cols(cells: list[int]) -> list[list[int]]:
    return [[cells[4 * r + c] for r in range(4)] for c in range(4)]


def move(cells: list[int], action: int, rules: int = RULES_VERSION) -> tuple[list[int], int]:
    """Apply action (0 up, 1 right, 2 down, 3 left): (new cells, reward)."""
    out = [0] * 16
    total = 0
    lines = _cols(cells) if action in (0, 2) else _rows(cells)
    for k, line in enumerate(lines):
        rev = action in (1, 2)
        moved, reward = slide_row_left(line[::-1] if rev else line, rules)
        if rev:
            moved = moved[::-1]
        total += reward
        for j, e in enumerate(moved):
            idx = 4 * j + k if action in (0, 2) else 4 * k + j
            out[idx] = e
    return out, total


def legal_mask(cells: list[int], rules: int = RULES_VERSION) -> list[bool]:
    """One flag per action: does it change the board?"""
    return [move(cells, a, rules)[0] != cells for a in range(4)]


def spawn_outcomes(cells: list[int], p_two: float = P_TWO) -> list[tuple[list[int], float]]:
    """Every (board, probability) a spawn can give, cell by cell, the 2 before the 4."""
    empty = [i for i, e in enumerate(cells) if e == 0]
    out = []
    for i in empty:
        for e, p in ((1, p_two), (2, 1.0 - p_two)):
            b = list(cells)
            b[i] = e
            out.append((b, p / len(empty)))
    return out
