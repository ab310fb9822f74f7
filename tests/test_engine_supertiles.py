"""Tiles past 32768 (rules version 1): the exact position (board + supers) against the slow reference
that holds exact exponents, known answers in every direction, and the planning view's promise."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048.board_io import check_position, exact_encode, exact_from_tiles, exact_tiles, render_text
from ai2048.engine import reference
from ai2048.engine.moves import legal_bits
from ai2048.engine.supertiles import (
    exact_cells,
    exact_legal_bits,
    exact_max_exponent,
    exact_move,
    exact_tile_sum,
    pack_cells,
    planning_view,
    view_and_forced,
)
from ai2048.game import Game, IllegalMoveError
from ai2048.rules import CAPPED_RULES, Action

# Exact boards crowded with large tiles (so tiles of 32768 and more meet), at most one 131072.
big = st.one_of(st.just(0), st.integers(1, 3), st.integers(13, 16), st.integers(0, 16))
exact16 = st.lists(big, min_size=16, max_size=16).flatmap(
    lambda c: st.one_of(st.just(c), st.integers(0, 15).map(lambda i: c[:i] + [17] + c[i + 1:])))


def _pos(cells: list[int]) -> tuple[np.uint64, np.int64]:
    b, s = exact_encode(cells)
    return np.uint64(b), np.int64(s)


@settings(deadline=None, max_examples=300)
@given(exact16)
def test_exact_move__equals_the_exact_reference_in_all_directions(cells):
    b, s = _pos(cells)
    assert exact_cells(b, s).tolist() == cells
    for a in Action:
        nb, ns, r = exact_move(b, s, np.int64(a))
        want, reward = reference.move(cells, int(a))
        assert exact_cells(np.uint64(nb), np.int64(ns)).tolist() == want and int(r) == reward
    assert [bool(int(exact_legal_bits(b, s)) >> a & 1) for a in range(4)] == reference.legal_mask(cells)
    assert int(exact_max_exponent(b, s)) == max(cells)
    assert int(exact_tile_sum(b, s)) == sum(1 << e for e in cells if e)


@settings(deadline=None, max_examples=300)
@given(exact16)
def test_planning_view__every_move_it_allows_is_legal_and_forced_only_when_it_has_none(cells):
    b, s = _pos(cells)
    view = np.uint64(planning_view(b, s))
    exact = int(exact_legal_bits(b, s))
    assert int(legal_bits(view)) & ~exact == 0  # the view never allows a move the game refuses
    tops = sum(e >= 15 for e in cells)
    if tops < 2:
        assert view == b
    shown, forced = view_and_forced(b, s)
    assert int(shown) == int(view)
    if forced >= 0:  # the view has no move while the game has: the game's first legal move
        assert int(legal_bits(view)) == 0 and exact >> int(forced) & 1
        assert exact & ((1 << int(forced)) - 1) == 0
    else:  # the agent is asked: it has a move to choose, or the game is over
        assert int(legal_bits(view)) != 0 or exact == 0


def test_planning_view__two_32768s_show_as_16384s_so_merging_them_scores() -> None:
    b, s = exact_from_tiles([32768, 32768, 0, 0] + [65536] + [0] * 11)
    view = int(planning_view(np.uint64(b), np.int64(s)))
    assert view & 0xFF == 0xEE and (view >> 16) & 0xF == 0xF  # the 65536 stays a wall
    b2, s2 = exact_from_tiles([32768, 32768, 16384, 0] + [0] * 12)
    assert int(planning_view(np.uint64(b2), np.int64(s2))) == b2  # a real 16384 beside: shown as they are


@pytest.mark.parametrize(("action", "cells", "merged"), [
    (Action.LEFT, (0, 1), 0), (Action.RIGHT, (0, 1), 3), (Action.UP, (0, 4), 0), (Action.DOWN, (0, 4), 12)])
def test_game__two_32768s_merge_into_65536_in_every_direction(action, cells, merged) -> None:
    tiles = [0] * 16
    for c in cells:
        tiles[c] = 32768
    b, s = exact_from_tiles(tiles)
    g = Game(seed=3, board=b, supers=s)
    assert g.step(action) == 65536 and g.score == 65536 and g.max_tile == 65536
    assert int(g.tiles.reshape(16)[merged]) == 65536 and int((g.tiles >= 32768).sum()) == 1
    assert (g.tiles > 0).sum() == 2  # the 65536 and the spawned tile


def test_game__65536s_merge_into_131072_and_unequal_large_tiles_stay_walls() -> None:
    b, s = exact_from_tiles([65536, 65536, 32768, 0] + [0] * 12)
    g = Game(seed=1, board=b, supers=s)
    assert g.step(Action.LEFT) == 131072
    assert g.tiles[0, :2].tolist() == [131072, 32768] and g.max_tile == 131072
    assert Action.LEFT not in g.legal_actions() or (g.tiles[0] == 0).any()
    row = exact_from_tiles([32768, 32768, 32768, 0] + [0] * 12)
    h = Game(seed=2, board=row[0], supers=row[1])
    assert h.step(Action.LEFT) == 65536 and h.tiles[0, :3].tolist() == [65536, 32768, 0]


def test_game__a_full_board_with_two_equal_large_neighbours_is_not_over_but_capped_it_is() -> None:
    tiles = [32768, 32768, 2, 4, 4, 2, 4, 2, 2, 4, 2, 4, 4, 2, 4, 2]
    b, s = exact_from_tiles(tiles)
    g = Game(seed=0, board=b, supers=s)
    assert not g.is_over and g.legal_actions() == [Action.RIGHT, Action.LEFT]
    view, forced = g.to_play()
    assert forced == -1 and view & 0xFF == 0xEE
    capped = Game(seed=0, board=b, rules=CAPPED_RULES)
    assert capped.is_over
    with pytest.raises(IllegalMoveError):
        capped.step(Action.LEFT)
    assert g.step(Action.LEFT) == 65536 and g.max_tile == 65536


def test_game__a_spawn_keeps_the_large_tiles_exact_values_in_their_cells() -> None:
    b, s = exact_from_tiles([65536, 0, 0, 0, 131072] + [0] * 11)
    g = Game(seed=5, board=b, supers=s)
    g.step(Action.RIGHT)
    assert g.tiles[0, 3] == 65536 and g.tiles[1, 3] == 131072 and int(g.tiles.sum()) in (196610, 196612)
    assert "131072" in str(g) and "65536" in render_text(g.board, g.supers)


def test_exact_encode__round_trips_and_packs_32768s_with_no_record() -> None:
    b, s = exact_from_tiles([32768] + [0] * 15)
    assert s == 0 and b == 0xF
    cells = [17, 16, 15, 14] + [0] * 12
    b, s = exact_encode(cells)
    assert exact_cells(np.uint64(b), np.int64(s)).tolist() == cells
    assert pack_cells(np.array(cells, np.int64)) == (np.uint64(b), np.int64(s))
    assert exact_tiles(b, s)[0].tolist() == [131072, 65536, 32768, 16384]


@pytest.mark.parametrize(("call", "match"), [
    (lambda: exact_encode([18] + [0] * 15), "exponent 18 at cell 0 .* outside 0..17"),
    (lambda: exact_from_tiles([262144] + [0] * 15), "262144 at cell 0 .* power of two in 2..131072"),
    (lambda: exact_encode([17, 0, 0, 17] + [0] * 12), "second 131072 at cell 3 .* cannot coexist"),
    (lambda: check_position(0x1, 1), "supers records a 65536 at cell 0 .* holds 2 there"),
    (lambda: check_position(0xF, 3), "exponent 18 at cell 0"),
    (lambda: check_position(0xF, -1), "outside 0..2\\*\\*32-1"),
    (lambda: check_position(0xF, 1.0), "supers must be an int"),
    (lambda: Game(seed=0, board=0xF, supers=1, rules=CAPPED_RULES), "rules version 0 does not have"),
    (lambda: Game(seed=0, rules=2), "rules=2 is not a rules version"),
    (lambda: Game(seed=0, supers=1), "supers needs a board"),
])
def test_bad_positions__are_refused_naming_the_cell(call, match) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_game_kernel__plays_past_32768_as_the_python_loop_does() -> None:
    """The whole-game numba loop (``search.games.play_batch``) with ``exact``: the greedy agent's kernel
    sees two 32768s as 16384s, merges them and plays on, move for move as ``act`` on ``Game.to_play``."""
    from ai2048.agents.base import make_agent
    from ai2048.engine.spawn import spawn
    from ai2048.evaluate import kernel as evaluate_fast
    from ai2048.search.games import end_rule_args

    agent = make_agent("greedy")
    kernel = evaluate_fast.kernel_of(agent)
    assert kernel is not None
    start, supers0 = exact_from_tiles([65536, 32768, 0, 32768, 2, 4, 8, 2] + [0] * 8)
    boards, scores, moves, status, nacts, acts = evaluate_fast._buffers(1, 40)
    boards[0] = start
    supers = np.array([supers0], np.int64)
    states = np.array([11], np.uint64)
    kernel.play(kernel.context(None), boards, states.copy(), scores, moves, status, acts, nacts, 40, 0.9,
                np.zeros(1, np.int64), *end_rule_args(None, False), supers, True)
    b, s, st_, score = np.uint64(start), np.int64(supers0), states.copy(), 0
    for a in acts[0, : nacts[0]]:
        view, forced = view_and_forced(b, s)
        assert int(forced if forced >= 0 else agent.act(int(view))) == int(a)
        nb, ns, r = exact_move(b, s, np.int64(a))
        b, s, score = np.uint64(spawn(np.uint64(nb), st_, 0.9)), np.int64(ns), score + int(r)
    assert (int(boards[0]), int(supers[0]), int(scores[0])) == (int(b), int(s), score)
    assert int(exact_max_exponent(b, s)) == 17 and score >= 65536 + 131072  # merged twice: 65536, 131072


def test_record__a_game_past_32768_keeps_its_exact_tiles_and_a_version_0_record_replays_capped(tmp_path):
    from ai2048.records import GameRecord, record_game

    start, _ = exact_from_tiles([32768, 32768] + [0] * 14)
    rec = GameRecord(seed=1, actions=[int(Action.LEFT)], spawns=[(15, 1)], scores=[65536], start_board=start)
    assert rec.final_supers == 1 and rec.max_tile == 65536
    back = GameRecord.from_dict(rec.to_dict())
    assert back.final_supers == 1 and back.max_tile == 65536 and back.to_dict()["final_supers"] == 1
    played = record_game(make_greedy(), seed=4, max_moves=30)
    old = GameRecord.from_dict({**played.to_dict(), "rules_version": CAPPED_RULES})
    assert old.replay().scores.tolist()[-1] == played.final_score  # version 0 replays as played
    with pytest.raises(ValueError, match="rules version 7"):
        GameRecord.from_dict({**played.to_dict(), "rules_version": 7}).replay()
    bad = {**played.to_dict(), "final_supers": 4}
    with pytest.raises(ValueError, match="final_supers 0x4"):
        GameRecord.from_dict(bad).replay()


def make_greedy():
    from ai2048.agents.base import make_agent

    return make_agent("greedy")


def test_to_play__forces_the_merge_the_view_cannot_show() -> None:
    """Two 32768s beside a real 16384 are not shown as 16384s; on a board where their merge is the only
    move, every game loop plays the game's first legal move without asking the agent."""
    tiles = [32768, 32768, 16384, 2, 2, 4, 2, 4, 4, 2, 4, 2, 2, 4, 2, 4]
    b, s = exact_from_tiles(tiles)
    g = Game(seed=0, board=b, supers=s)
    view, forced = g.to_play()
    assert view == b and forced == int(Action.RIGHT) and g.legal_actions() == [Action.RIGHT, Action.LEFT]
    assert g.step(forced) == 65536 and g.max_tile == 65536
