"""The one spawn-outcome walk and the one all-four-moves kernel, against the slow reference rules."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ai2048
from ai2048.engine import reference
from ai2048.engine.board import count_empty, exponents
from ai2048.engine.moves import all_moves, four_moves, move, move_reward
from ai2048.engine.rng import seed_state
from ai2048.engine.spawn import empty_cells, new_board, next_spawn, spawn_outcomes
from ai2048.rules import P_TWO, START_TILES

cell = st.one_of(st.just(0), st.integers(1, 4), st.integers(0, 15))
boards = st.one_of(st.lists(cell, min_size=16, max_size=16).map(ai2048.encode), st.integers(0, 2**64 - 1))


def _walk(b: int) -> list[tuple[int, int]]:
    out = []
    cells = empty_cells(np.uint64(b))
    while cells:
        two, four, cells = next_spawn(np.uint64(b), cells)
        out.append((int(two), int(four)))
    return out


def test_next_spawn__walks_the_empty_cells_row_major_two_before_four():
    # . 2 . .      the empty cells are 0, 2, 3 and 5..15 (row-major)
    # 4 . . .
    b = ai2048.encode([[0, 1, 0, 0], [2, 0, 0, 0], [0] * 4, [0] * 4])
    steps = _walk(b)
    assert len(steps) == 14
    assert steps[0] == (b | 1, b | 2)  # cell (0, 0)
    assert steps[1] == (b | 1 << 8, b | 2 << 8)  # cell (0, 2)
    assert steps[-1] == (b | 1 << 60, b | 2 << 60)  # cell (3, 3)
    assert _walk(0x1111_1111_1111_1111) == []


@settings(deadline=None)
@given(boards)
def test_spawn_outcomes__is_the_walk_with_the_reference_odds(b):
    got, probs = spawn_outcomes(np.uint64(b), np.float64(P_TWO))
    walked = [x for pair in _walk(b) for x in pair]
    assert got.tolist() == walked
    cells = [int(x) for x in ai2048.decode(b).reshape(-1)]
    want = reference.spawn_outcomes(cells, P_TWO)
    assert [ai2048.encode(c) for c, _ in want] == walked
    assert np.allclose(probs, [p for _, p in want])
    assert len(walked) == 2 * int(count_empty(np.uint64(b)))


@settings(deadline=None)
@given(boards)
def test_four_moves__equals_move_in_every_direction(b):
    u = np.uint64(b)
    got = four_moves(u)
    for a in range(4):
        nb, r = move(u, np.int64(a))
        assert got[a] == nb
        assert move_reward(u, np.int64(a)) == r


@settings(deadline=None, max_examples=30)
@given(st.lists(boards, min_size=0, max_size=20))
def test_all_moves__is_four_moves_on_each_board(bs):
    arr = np.array(bs, dtype=np.uint64)
    after, rew, legal = all_moves(arr)
    assert after.shape == rew.shape == legal.shape == (len(bs), 4)
    for i, b in enumerate(bs):
        for a in range(4):
            nb, r = move(np.uint64(b), np.int64(a))
            assert (after[i, a], rew[i, a], legal[i, a]) == (nb, r, nb != b)


@settings(deadline=None, max_examples=30)
@given(st.lists(boards, min_size=0, max_size=20))
def test_exponents__are_the_decoded_cells_row_major(bs):
    got = exponents(np.array(bs, dtype=np.uint64))
    assert got.dtype == np.uint8 and got.shape == (len(bs), 16)
    for i, b in enumerate(bs):
        assert got[i].tolist() == ai2048.decode(b).reshape(-1).tolist()


def test_new_board__holds_start_tiles_tiles():
    for seed in range(50):
        b = new_board(seed_state(seed), np.float64(P_TWO))
        assert 16 - int(count_empty(b)) == START_TILES
