"""The agents: registry, legal moves, explain, seed action orders, bad configs."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

import ai2048
from ai2048.agents import available, make_agent
from ai2048.agents.search import ExpectimaxAgent
from ai2048.agents.seed_actions import SEED_ORDERS, best_in_order, from_action, to_action
from ai2048.rules import Action

OVER = ai2048.encode([1, 2, 1, 2, 2, 1, 2, 1, 1, 2, 1, 2, 2, 1, 2, 1])
#  2 4 . .      only LEFT is illegal here... (row 0 is packed left)
#  . . . .
ONE_ROW = ai2048.encode([1, 2, 0, 0] + [0] * 12)

FAST = {
    "random": {},
    "greedy": {},
    "montecarlo": {"playouts": 3},
    "expectimax": {"depth": 2},
    "expectimax-seed003": {"depth": 1},
    "minimax": {"depth": 1, "time_limit": None},
}


def test_registry__lists_every_search_agent() -> None:
    names = available()
    for name in FAST:
        assert name in names and names[name]


@pytest.mark.parametrize("name", list(FAST))
def test_agent__plays_only_legal_moves_and_explains_them(name: str) -> None:
    agent = make_agent(name, **FAST[name])
    g = ai2048.Game(seed=7)
    agent.reset(7)
    for _ in range(30):
        if g.is_over:
            break
        legal = g.legal_actions()
        a = agent.act(g.board)
        assert a in legal
        expl = agent.explain(g.board)
        if name != "random":
            assert set(expl) == {x.name.lower() for x in legal}
        g.step(a)


@pytest.mark.parametrize("name", list(FAST))
def test_agent__refuses_a_board_that_is_over(name: str) -> None:
    with pytest.raises(ValueError, match="already over"):
        make_agent(name, **FAST[name]).act(OVER)


def test_greedy__breaks_ties_in_seed_004_order() -> None:
    # no merge anywhere: every legal move is worth 0, so the first legal one of up/down/left/right wins
    assert make_agent("greedy").act(ONE_ROW) == Action.DOWN  # UP is illegal on a top row
    assert make_agent("greedy", order="clockwise").act(ONE_ROW) == Action.RIGHT


def test_greedy__takes_the_biggest_merge() -> None:
    b = ai2048.encode([3, 3, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0])  # 8 8 / 2 / 2
    assert make_agent("greedy").explain(b)["left"] == 16.0
    assert make_agent("greedy").act(b) in (Action.LEFT, Action.RIGHT)


def test_seed_actions__convert_each_seed_order() -> None:
    assert to_action("000", 1) is Action.DOWN
    assert to_action("001", 0) is Action.LEFT and to_action("001", 3) is Action.UP
    assert [to_action("002", i) for i in range(4)] == [Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT]
    for seed in SEED_ORDERS:
        assert [from_action(seed, to_action(seed, i)) for i in range(4)] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="unknown action order"):
        to_action("999", 0)
    assert best_in_order(np.array([1.0, 2.0, 2.0, -np.inf]), SEED_ORDERS["004"]) is Action.DOWN


def test_random__same_seed_same_moves() -> None:
    def moves(seed: int) -> list[int]:
        agent = make_agent("random", seed=seed)
        g = ai2048.Game(seed=1)
        out = []
        while not g.is_over:
            out.append(int(agent.act(g.board)))
            g.step(out[-1])
        return out

    assert moves(3) == moves(3)
    assert moves(3) != moves(4)


def test_montecarlo__reset_makes_it_repeatable() -> None:
    agent = make_agent("montecarlo", playouts=4)
    b = ai2048.Game(seed=2).board
    agent.reset(5)
    first = agent.explain(b)
    agent.reset(5)
    assert agent.explain(b) == first


@pytest.mark.parametrize(
    "name,config,match",
    [
        ("expectimax", {"depth": -1}, "depth"),
        ("expectimax", {"depth": 0}, "depth"),
        ("expectimax", {"p_two": 0.0}, "p_two"),
        ("expectimax", {"p_two": 1.2}, "p_two"),
        ("expectimax", {"heuristic": "magic"}, "heuristic='magic' is not one of 'nneonneo', 'seed003'"),
        ("expectimax", {"weights": {"nope": 1.0}}, "weights"),
        ("expectimax", {"weights": "nope"}, "tuned, published"),
        (
            "expectimax",
            {"heuristic": "seed003", "weights": "published"},
            "named sets exist for 'nneonneo' only",
        ),
        ("expectimax", {"time_budget": -1.0}, "time_budget"),
        ("expectimax", {"deep": 3}, "valid keys"),
        ("minimax", {"depth": -2}, "depth"),
        ("minimax", {"depth": None, "time_limit": None}, "depth, a time_limit"),
        ("minimax", {"node_budget": 0}, "node_budget=0 must be a whole number >= 1, or None"),
        ("minimax", {"node_budget": 60.5}, "node_budget=60.5 must be a whole number"),
        ("montecarlo", {"playouts": 0}, "playouts"),
        ("montecarlo", {"p_two": -0.1}, "p_two"),
        # "no" used to switch downgrading on
        ("ntuple", {"downgrade": "no"}, "downgrade='no' must be True or False or 'none' or 'lowest'"),
        ("minimax", {"prune": "no"}, "prune='no' must be True or False"),
        ("minimax", {"fours": 1}, "fours=1 must be True or False"),
        ("nonexistent", {}, "available agents"),
    ],
)
def test_make_agent__rejects_bad_configs(name: str, config: dict, match: str) -> None:
    with pytest.raises((ValueError, TypeError), match=match):
        make_agent(name, **config)


@njit
def corner_value(b: np.uint64, data: tuple) -> float:
    """Value of an after-state: weight times the exponent in the top-left corner."""
    return data[0][0] * float(b & np.uint64(0xF))


def test_expectimax_agent__accepts_a_custom_evaluator() -> None:
    agent = ExpectimaxAgent(evaluator=corner_value, data=(np.array([1000.0]),), depth=1)
    b = ai2048.encode([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5])  # a 32 in the bottom-right
    # depth 1 = greedy on the evaluator (+ reward): only UP then LEFT... moves the 32 towards (0, 0)
    values = agent.explain(b)
    assert values["up"] == 0.0 and values["left"] == 0.0
    b2 = ai2048.encode([0, 0, 0, 5] + [0] * 12)  # the 32 top-right: LEFT brings it to the corner
    assert agent.act(b2) == Action.LEFT
    assert agent.explain(b2)["left"] == 5000.0


def test_expectimax_agent__survives_pickling_with_a_fresh_table() -> None:
    import pickle

    agent = make_agent("expectimax", depth=2)
    b = ai2048.Game(seed=3).board
    before = agent.explain(b)
    copy = pickle.loads(pickle.dumps(agent))
    assert copy.explain(b) == before
    assert copy.search.tt.shape == agent.search.tt.shape


def test_expectimax__named_weight_sets_equal_their_dicts() -> None:
    from ai2048.search.heuristics import NNEONNEO_PUBLISHED

    board = ai2048.encode([1, 2, 3, 0, 4, 5, 0, 2, 7, 0, 1, 1, 11, 10, 3, 0])
    published = make_agent("expectimax", depth=2, weights="published").explain(board)
    assert published == make_agent("expectimax", depth=2, weights=NNEONNEO_PUBLISHED.as_dict()).explain(board)
    tuned = make_agent("expectimax", depth=2).explain(board)
    assert tuned == make_agent("expectimax", depth=2, weights="tuned").explain(board)
    assert tuned != published


def test_minimax__a_node_budget_plays_the_same_game_every_time() -> None:
    """Deepening under a node budget (seed 003's search is bounded by nodes) is deterministic, unlike a
    time limit, and plays in the Python loop."""
    agent = make_agent("minimax", node_budget=300, time_limit=None, depth=None)
    assert agent.game_kernel() is None
    runs = [ai2048.evaluate(agent, games=2, seed=3, progress=False, max_moves=60).records for _ in range(2)]
    assert [r["actions"] for r in runs[0]] == [r["actions"] for r in runs[1]]
    agent.act(ai2048.encode([1, 2, 3, 0, 4, 5, 0, 2, 7, 0, 1, 1, 11, 10, 3, 0]))
    assert agent.last_depth >= 2
