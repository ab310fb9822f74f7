"""The Python face: ``Game``, ``move``, ``legal_mask``, ``spawn_outcomes``, text rendering."""

from __future__ import annotations

import numpy as np
import pytest

import ai2048
from ai2048 import engine
from ai2048.engine.spawn import spawn

# Upper 0.1% points of the chi-square distribution (standard tables), for fixed-seed tests.
CHI2_999 = {1: 10.828, 7: 24.322, 15: 37.697}


def _chi2(counts: np.ndarray, expected: np.ndarray) -> float:
    return float(((counts - expected) ** 2 / expected).sum())


def _play(g: ai2048.Game, pick_seed: int, max_moves: int = 10_000) -> list[int]:
    pick = np.random.default_rng(pick_seed)
    rewards = []
    while not g.is_over and len(rewards) < max_moves:
        legal = g.legal_actions()
        rewards.append(g.step(legal[int(pick.integers(len(legal)))]))
    return rewards


def test_game__starts_with_two_tiles_of_2_or_4():
    for seed in range(50):
        cells = ai2048.decode(ai2048.Game(seed=seed).board).reshape(-1)
        assert (cells > 0).sum() == 2 and set(cells[cells > 0].tolist()) <= {1, 2}


def test_game__same_seed_same_game_different_seed_different_game():
    a, b, c = ai2048.Game(seed=5), ai2048.Game(seed=5), ai2048.Game(seed=6)
    ra, rb, rc = _play(a, 1), _play(b, 1), _play(c, 1)
    assert (a.board, a.score, a.moves, ra) == (b.board, b.score, b.moves, rb)
    assert (a.board, ra) != (c.board, rc)


def test_game__score_is_sum_of_rewards_and_moves_count_steps():
    g = ai2048.Game(seed=123)
    rewards = _play(g, 2)
    assert g.is_over and g.legal_actions() == []
    assert g.score == sum(rewards) and g.moves == len(rewards) > 0
    assert g.max_tile == 2 ** int(ai2048.decode(g.board).max())


def test_game__step_is_move_then_one_spawn():
    g = ai2048.Game(seed=9)
    for _ in range(30):
        before = g.board
        a = g.legal_actions()[0]
        moved, reward = ai2048.move(before, a)
        assert g.step(a) == reward
        diff = ai2048.decode(g.board).astype(int) - ai2048.decode(moved).astype(int)
        assert (diff != 0).sum() == 1 and diff.max() in (1, 2)
        assert ai2048.decode(moved).reshape(-1)[np.flatnonzero(diff.reshape(-1))[0]] == 0


def test_game__tile_sum_grows_by_2_or_4_per_move():
    g = ai2048.Game(seed=77)
    total = int(ai2048.to_tiles(g.board).sum())
    assert total in (4, 6, 8)
    for _ in range(200):
        if g.is_over:
            break
        g.step(g.legal_actions()[-1])
        new_total = int(ai2048.to_tiles(g.board).sum())
        assert new_total - total in (2, 4)
        total = new_total


def test_game__from_a_given_board_and_p_two():
    start = ai2048.from_tiles([2, 2, 0, 0] + [0] * 12)
    g = ai2048.Game(seed=1, board=start, p_two=0.0)
    assert g.board == start and g.max_tile == 2 and g.score == 0
    assert g.step(ai2048.Action.LEFT) == 4
    tiles = ai2048.to_tiles(g.board).reshape(-1)
    assert sorted(tiles[tiles > 0].tolist()) == [4, 4]  # p_two=0: the spawn is a 4


def test_game__legal_actions_match_legal_mask():
    g = ai2048.Game(seed=3)
    for _ in range(100):
        if g.is_over:
            break
        mask = ai2048.legal_mask(g.board)
        assert g.legal_actions() == [a for a in ai2048.Action if mask[a]]
        assert all(isinstance(a, ai2048.Action) for a in g.legal_actions())
        g.step(g.legal_actions()[0])


def test_game__str_is_a_readable_board():
    g = ai2048.Game(seed=0, board=ai2048.from_tiles([2, 4, 0, 0, 0, 2048, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32768]))
    text = str(g)
    lines = text.splitlines()
    assert lines[0] == "score 0  moves 0  max 32768"
    assert lines[1].split() == ["2", "4", ".", "."]
    assert lines[2].split() == [".", "2048", ".", "."]
    assert lines[4].split() == [".", ".", ".", "32768"]
    assert len({len(line) for line in lines[1:]}) == 1  # columns line up
    assert "score=0" in repr(g) and "0x" in repr(g)


def test_render_text__empty_and_small_boards():
    assert ai2048.render_text(0) == "\n".join(["   .    .    .    ."] * 4)
    assert ai2048.render_text(ai2048.encode([1] + [0] * 15)).splitlines()[0].split() == ["2", ".", ".", "."]


def test_game__start_tiles_are_uniform_over_cells_and_90_percent_twos():
    """Fixed seeds, so this is a deterministic check that cannot flake."""
    n = 8000
    cells = np.zeros(16)
    twos = 0
    for seed in range(n):
        e = ai2048.decode(ai2048.Game(seed=seed).board).reshape(-1)
        cells += e > 0
        twos += int((e == 1).sum())
    assert _chi2(cells, np.full(16, 2 * n / 16)) < CHI2_999[15]
    assert _chi2(np.array([twos, 2 * n - twos]), np.array([0.9, 0.1]) * 2 * n) < CHI2_999[1]
    assert abs(twos / (2 * n) - 0.9) < 0.01


@pytest.mark.parametrize("p_two", [0.9, 0.5])
def test_spawn__frequencies_match_p_two_and_uniform_empty_cells(p_two):
    board = np.uint64(ai2048.encode([1, 0, 2, 0, 0, 3, 0, 4, 5, 6, 0, 7, 8, 0, 0, 0]))
    empty = np.flatnonzero(ai2048.decode(board).reshape(-1) == 0)
    assert len(empty) == 8
    state = engine.seed_state(2024)
    n = 40_000
    where = np.zeros(16)
    twos = 0
    for _ in range(n):
        added = int(spawn(board, state, p_two)) ^ int(board)  # the one new nibble
        cell = (added.bit_length() - 1) // 4
        where[cell] += 1
        twos += added >> (4 * cell) == 1
    assert set(np.flatnonzero(where).tolist()) == set(empty.tolist())
    assert _chi2(where[empty], np.full(8, n / 8)) < CHI2_999[7]
    assert _chi2(np.array([twos, n - twos]), np.array([p_two, 1 - p_two]) * n) < CHI2_999[1]


@pytest.mark.parametrize(("p_two", "exponent"), [(1.0, 1), (0.0, 2)])
def test_spawn__p_two_at_the_ends_gives_only_one_tile(p_two, exponent):
    state = engine.seed_state(1)
    for _ in range(200):
        b = int(spawn(np.uint64(0), state, p_two))
        e = ai2048.decode(b).reshape(-1)
        assert sorted(e.tolist())[-1] == exponent and (e > 0).sum() == 1


def test_spawn_outcomes__full_board_has_none_and_p_two_splits_each_cell():
    full = ai2048.encode([1, 2] * 8)
    assert ai2048.spawn_outcomes(full) == []
    out = ai2048.spawn_outcomes(ai2048.encode([1] * 14 + [0, 0]), p_two=0.75)
    assert [p for _, p in out] == pytest.approx([0.375, 0.125, 0.375, 0.125])
    assert [ai2048.decode(b).reshape(-1)[14:].tolist() for b, _ in out] == [[1, 0], [2, 0], [0, 1], [0, 2]]
    assert all(isinstance(b, int) and isinstance(p, float) for b, p in out)


def test_move__api_returns_python_ints():
    b, r = ai2048.move(ai2048.encode([1, 1, 0, 0] + [0] * 12), ai2048.Action.RIGHT)
    assert type(b) is int and type(r) is int
    assert ai2048.decode(b)[0].tolist() == [0, 0, 0, 2] and r == 4


def test_legal_mask__is_a_fresh_bool_array():
    m = ai2048.legal_mask(ai2048.encode([1, 1, 1, 1] + [0] * 12))
    assert m.dtype == np.bool_ and m.shape == (4,) and m.tolist() == [False, True, True, True]
    m[:] = False
    assert ai2048.legal_mask(ai2048.encode([1, 1, 1, 1] + [0] * 12)).tolist() == [False, True, True, True]
