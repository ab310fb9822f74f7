"""Exhaustive: every one of the 65,536 rows, in all four directions, against the pure-Python oracle."""

from __future__ import annotations

import numpy as np
import pytest

from ai2048.engine import reference, tables
from ai2048.engine.batch import batch_legal_masks, batch_move
from ai2048.engine.moves import legal_bits
from ai2048.rules import CAPPED_RULES, Action

ROWS = np.arange(65536, dtype=np.uint64)


def _cells(row: int) -> list[int]:
    return [(row >> (4 * c)) & 0xF for c in range(4)]


def _row(cells: list[int]) -> int:
    return sum(e << (4 * c) for c, e in enumerate(cells))


@pytest.fixture(scope="module")
def expected() -> dict[str, np.ndarray]:
    """Oracle results for every row: LEFT and RIGHT (RIGHT = reversed LEFT of the reversed row)."""
    left = np.empty(65536, dtype=np.uint64)
    right = np.empty(65536, dtype=np.uint64)
    left_rew = np.empty(65536, dtype=np.int64)
    right_rew = np.empty(65536, dtype=np.int64)
    for row in range(65536):
        cells = _cells(row)
        moved, rew = reference.slide_row_left(cells, CAPPED_RULES)  # the row tables: a 15 is a wall
        left[row], left_rew[row] = _row(moved), rew
        moved, rew = reference.slide_row_left(cells[::-1], CAPPED_RULES)
        right[row], right_rew[row] = _row(moved[::-1]), rew
    return {"left": left, "right": right, "left_rew": left_rew, "right_rew": right_rew}


def _as_row(boards: np.ndarray, r: np.ndarray) -> np.ndarray:
    return ((boards >> (16 * r).astype(np.uint64)) & np.uint64(0xFFFF)).astype(np.uint64)


def _col_to_row(boards: np.ndarray, c: np.ndarray) -> np.ndarray:
    out = np.zeros_like(boards)
    for r in range(4):
        nib = (boards >> (4 * (4 * r + c)).astype(np.uint64)) & np.uint64(0xF)
        out |= nib << np.uint64(4 * r)
    return out


def _spread_col(rows: np.ndarray, c: np.ndarray) -> np.ndarray:
    out = np.zeros_like(rows)
    for r in range(4):
        out |= ((rows >> np.uint64(4 * r)) & np.uint64(0xF)) << (4 * (4 * r + c)).astype(np.uint64)
    return out


def test_tables__every_row_left_and_right_match_reference(expected):
    assert np.array_equal(ROWS ^ tables.LEFT_ROW, expected["left"])
    assert np.array_equal(ROWS ^ tables.RIGHT_ROW, expected["right"])
    assert np.array_equal(tables.LEFT_REWARD.astype(np.int64), expected["left_rew"])
    assert np.array_equal(tables.RIGHT_REWARD.astype(np.int64), expected["right_rew"])


def test_tables__row_moves_packs_both_slides_and_the_one_reward(expected):
    """``ROW_MOVES`` (what the moves read) holds the left and right XORs and a reward that is the
    same both ways, for every row: the packing drops the right reward because it never differs."""
    packed = tables.ROW_MOVES
    assert np.array_equal(ROWS ^ (packed & np.uint64(0xFFFF)), expected["left"])
    assert np.array_equal(ROWS ^ ((packed >> np.uint64(16)) & np.uint64(0xFFFF)), expected["right"])
    assert np.array_equal(expected["left_rew"], expected["right_rew"])
    assert np.array_equal((packed >> np.uint64(32)).astype(np.int64), expected["left_rew"])


@pytest.mark.parametrize("action", [Action.LEFT, Action.RIGHT])
def test_move__every_row_in_every_row_position_matches_reference(expected, action):
    """Row value i sits in board row i % 4, so every row is tried and every position is used."""
    pos = np.arange(65536) % 4
    boards = ROWS << (16 * pos).astype(np.uint64)
    out, rew = batch_move(boards, np.full(65536, int(action), dtype=np.int64))
    key = action.name.lower()
    assert np.array_equal(_as_row(out, pos), expected[key])
    assert np.array_equal(
        out & ~(np.uint64(0xFFFF) << (16 * pos).astype(np.uint64)), np.zeros(65536, np.uint64)
    )
    assert np.array_equal(rew, expected[f"{key}_rew"])


@pytest.mark.parametrize(("action", "like"), [(Action.UP, "left"), (Action.DOWN, "right")])
def test_move__every_row_as_every_column_matches_reference(expected, action, like):
    """A column read top to bottom moves UP as a row moves LEFT (DOWN as RIGHT)."""
    col = np.arange(65536) % 4
    boards = _spread_col(ROWS, col)
    out, rew = batch_move(boards, np.full(65536, int(action), dtype=np.int64))
    assert np.array_equal(_col_to_row(out, col), expected[like])
    assert np.array_equal(
        out & ~_spread_col(np.full(65536, 0xFFFF, np.uint64), col), np.zeros(65536, np.uint64)
    )
    assert np.array_equal(rew, expected[f"{like}_rew"])


@pytest.mark.parametrize(
    ("cells", "left", "reward"),
    [
        ([1, 1, 1, 1], [2, 2, 0, 0], 8),
        ([1, 1, 2, 2], [2, 3, 0, 0], 12),
        ([2, 2, 2, 0], [3, 2, 0, 0], 8),
        ([0, 1, 0, 1], [2, 0, 0, 0], 4),
        ([1, 1, 2, 0], [2, 2, 0, 0], 4),
        ([15, 15, 0, 0], [15, 15, 0, 0], 0),
        ([14, 14, 15, 15], [15, 15, 15, 0], 32768),
    ],
)
def test_tables__drawn_rows(cells, left, reward):
    """``[2 2 2 2] -> [4 4 0 0]``, ``[2 2 4 4] -> [4 8 0 0]``, ``[4 4 4 0] -> [8 4 0 0]``; 32768s stay."""
    row = _row(cells)
    assert _cells(row ^ int(tables.LEFT_ROW[row])) == left
    assert int(tables.LEFT_REWARD[row]) == reward
    assert reference.slide_row_left(cells, CAPPED_RULES) == (left, reward)


def test_legal_bits__every_row_and_column_legal_iff_changed():
    """The bit-parallel legality test agrees with the table moves on all 65,536 lines, both ways."""
    pos = np.arange(65536) % 4
    for boards in (ROWS << (16 * pos).astype(np.uint64), _spread_col(ROWS, pos)):
        masks = batch_legal_masks(boards)
        for a in Action:
            out, _ = batch_move(boards, np.full(65536, int(a), dtype=np.int64))
            assert np.array_equal(masks[:, int(a)], out != boards), a.name


@pytest.mark.parametrize(
    ("cells", "legal"),
    [
        ([15, 15, 0, 0], "down right"),  # 32768 + 32768 does not merge
        ([15, 15, 15, 15], "down"),
        ([14, 14, 15, 15], "down left right"),
        ([0, 0, 0, 0], ""),
        ([1, 2, 3, 4], "down"),
    ],
)
def test_legal_bits__drawn_top_rows(cells, legal):
    b = np.uint64(_row(cells))
    bits = int(legal_bits(b))
    assert {a.name.lower() for a in Action if bits >> a & 1} == set(legal.split())
