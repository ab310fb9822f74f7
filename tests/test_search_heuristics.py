"""Known answers for the search heuristics: seed 003's worked values and nneonneo's row table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048 import from_tiles
from ai2048.search.heuristics import (
    NNEONNEO_PUBLISHED,
    SEED003_UTILITY_WEIGHTS,
    SEED003_WEIGHTS,
    NneonneoWeights,
    nneonneo_eval,
    nneonneo_table,
    seed003_components,
    seed003_eval,
    seed003_h,
    seed003_utility,
    seed003_utility_components,
)

VECTORS = Path(__file__).parent / "data" / "seed_vectors.json"
BOARDS = json.loads(VECTORS.read_text())["heuristic_vectors"]["boards"]
NAMES = [b["name"] for b in BOARDS]


@pytest.mark.parametrize("case", BOARDS, ids=NAMES)
def test_seed003_components__match_the_seed_vectors(case: dict) -> None:
    b = np.uint64(from_tiles(case["board_values_rowmajor"]))
    want = case["seed003_expectimax_parker"]
    comp = seed003_components(b)
    keys = ["max_log2", "free", "adjacent_equal", "edges", "gradient"]
    assert list(comp) == [want["components"][k] for k in keys]
    assert seed003_h(b, SEED003_WEIGHTS) == pytest.approx(want["evaluation"], abs=1e-9)


@pytest.mark.parametrize("name,value", [("seed003_example1", -33.0), ("seed003_example2", -17.0)])
def test_seed003_components__reproduce_the_texts_worked_values(name: str, value: float) -> None:
    case = BOARDS[NAMES.index(name)]
    mx, free, adj, _, grad = seed003_components(np.uint64(from_tiles(case["board_values_rowmajor"])))
    assert mx + free + adj - (grad - 1) == value


@pytest.mark.parametrize("case", BOARDS, ids=NAMES)
def test_seed003_utility__matches_the_seed_vectors(case: dict) -> None:
    b = np.uint64(from_tiles(case["board_values_rowmajor"]))
    want = case["seed003_minimax_utility"]
    smooth, mono, empty, max4 = seed003_utility_components(b)
    assert (smooth, mono, empty) == (want["smoothness_raw"], want["monotonicity_raw"], want["empty"])
    assert max4 == pytest.approx(want["max4tile_raw"], abs=1e-12)
    assert seed003_utility(b, (SEED003_UTILITY_WEIGHTS,)) == pytest.approx(want["utility"], abs=1e-9)


def test_seed003_eval__is_the_mean_over_a_two_in_each_empty_cell() -> None:
    #   2 .   values; the after-state's two empty cells each get a 2
    #   . 4 ... (rest full of alternating 8/16)
    tiles = [2, 0, 8, 16, 0, 4, 16, 8, 8, 16, 8, 16, 16, 8, 16, 8]
    b = from_tiles(tiles)
    kids = [from_tiles(tiles[:i] + [2] + tiles[i + 1 :]) for i in (1, 4)]
    want = np.mean([seed003_h(np.uint64(k), SEED003_WEIGHTS) for k in kids])
    assert seed003_eval(np.uint64(b), (SEED003_WEIGHTS,)) == pytest.approx(want)


def _row_score(line: list[int], w: NneonneoWeights) -> float:
    """nneonneo/2048-ai's row heuristic, transcribed loop for loop from its C++ (the oracle)."""
    total = sum(r**w.sum_power for r in line)
    empty = sum(1 for r in line if r == 0)
    merges = 0
    prev = 0
    counter = 0
    for r in line:
        if r == 0:
            continue
        if prev == r:
            counter += 1
        elif counter > 0:
            merges += 1 + counter
            counter = 0
        prev = r
    if counter > 0:
        merges += 1 + counter
    left = right = 0.0
    for i in range(1, 4):
        if line[i - 1] > line[i]:
            left += line[i - 1] ** w.mono_power - line[i] ** w.mono_power
        else:
            right += line[i] ** w.mono_power - line[i - 1] ** w.mono_power
    return w.lost + w.empty * empty + w.merges * merges - w.monotonicity * min(left, right) - w.sum * total


def test_nneonneo_table__known_rows_with_nneonneos_constants() -> None:
    t = nneonneo_table(NNEONNEO_PUBLISHED)
    assert t[0x0000] == 200000 + 4 * 270  # four empty cells
    assert t[0x1111] == 200000 + 4 * 700 - 11 * 4  # four 2s: one run of 4 -> 4 merges
    assert t[0x0021] == 200000 + 2 * 270 + 0 - 47 * (2**4 - 1) - 11 * (1 + 2**3.5)  # [2 4 . .]


def test_nneonneo_table__defaults_are_the_tuned_weights() -> None:
    w = NneonneoWeights()
    assert w != NNEONNEO_PUBLISHED
    assert nneonneo_table()[0x0000] == np.float32(w.lost + 4 * w.empty)


DEFAULT_TABLE = nneonneo_table()
CUSTOM = NneonneoWeights(empty=100.0, merges=10.0)
CUSTOM_TABLE = nneonneo_table(CUSTOM)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=4, max_size=4))
def test_nneonneo_table__equals_the_transcribed_loop(line: list[int]) -> None:
    row = line[0] | line[1] << 4 | line[2] << 8 | line[3] << 12
    assert DEFAULT_TABLE[row] == pytest.approx(_row_score(line, NneonneoWeights()), rel=1e-6)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_nneonneo_eval__sums_rows_and_columns(cells: list[int]) -> None:
    w, table = CUSTOM, CUSTOM_TABLE
    b = sum(e << (4 * i) for i, e in enumerate(cells))
    grid = np.array(cells).reshape(4, 4)
    want = sum(_row_score(list(r), w) for r in grid) + sum(_row_score(list(c), w) for c in grid.T)
    assert nneonneo_eval(np.uint64(b), (table,)) == pytest.approx(want, rel=1e-6)
