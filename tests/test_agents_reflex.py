"""Seed 003's ReflexAgent against a direct re-reading of its evaluation (ParkerD559 ``agents.py``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048 import Action, Game, decode, encode, make_agent, move
from ai2048.agents.reflex import reflex_value


def slow_reflex(after: int) -> float:
    """The seed's evaluation on a {(x, y): value} board: empty + max value + equal neighbours of each tile."""
    ex = decode(after)
    state = {(x, y): (0 if ex[y, x] == 0 else 1 << int(ex[y, x])) for x in range(4) for y in range(4)}
    empty = sum(1 for v in state.values() if v == 0)
    adjacent = 0
    for (x, y), v in state.items():
        if v == 0:
            continue
        for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
            if 0 <= nx < 4 and 0 <= ny < 4 and state[nx, ny] == v:
                adjacent += 1
    return float(empty + max(state.values()) + adjacent)


boards = st.lists(st.integers(0, 12), min_size=16, max_size=16).map(encode)


@settings(max_examples=200, deadline=None)
@given(boards)
def test_reflex_value__equals_the_seeds_evaluation(b: int) -> None:
    assert reflex_value(b) == slow_reflex(b)


def test_reflex_value__known_board() -> None:
    # [2 2 . .] / [4 . . .] / rest empty: 13 empty + max 4 + the 2-2 pair counted twice
    b = encode([1, 1, 0, 0, 2] + [0] * 11)
    assert reflex_value(b) == 13 + 4 + 2


@settings(max_examples=100, deadline=None)
@given(boards)
def test_reflex_agent__plays_the_best_legal_move_first_in_seed003_order(b: int) -> None:
    g = Game(board=b)
    if g.is_over:
        return
    agent = make_agent("reflex-seed003")
    values = {a: slow_reflex(move(b, a)[0]) for a in g.legal_actions()}
    best = max(values.values())
    expected = next(a for a in (Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT) if values.get(a) == best)
    assert agent.act(b) == expected
    assert set(agent.explain(b)) == {a.name.lower() for a in values}


def test_reflex_agent__plays_whole_games() -> None:
    from ai2048 import evaluate

    res = evaluate("reflex-seed003", games=3, seed=1, workers=1)
    assert len(res.records) == 3 and all(np.isfinite(r["score"]) for r in res.records)
