"""Agents play on past the first 32768 and plan the merge of two: given ``Game.view`` (the two shown
as 16384s), each merges them when it can, and the evaluation plays on to the game's true end."""

from __future__ import annotations

import pytest

from ai2048.agents.base import make_agent
from ai2048.board_io import exact_from_tiles
from ai2048.evaluate import evaluate
from ai2048.game import Game

# Two 32768s apart in the top row, a 65536 below them (a wall), small tiles that merge elsewhere too.
POSITION = [32768, 0, 0, 32768,
            65536, 2, 4, 2,
            8, 4, 2, 8,
            2, 8, 16, 2]


@pytest.mark.parametrize(("name", "config"), [
    ("greedy", {}),
    ("expectimax", {"depth": 2}),
    ("ntuple", {"depth": 1}),
])
def test_agents__merge_two_32768s_shown_to_them_as_16384s(name, config) -> None:
    board, supers = exact_from_tiles(POSITION)
    g = Game(seed=2, board=board, supers=supers)
    view, forced = g.to_play()
    assert forced == -1 and view != board
    agent = make_agent(name, **config)
    assert g.step(agent.act(view)) >= 65536 and g.max_tile == 65536
    assert sorted(g.tiles.reshape(16).tolist())[-2:] == [65536, 65536]


def test_evaluate__rules_0_and_1_agree_before_32768_and_results_say_their_version() -> None:
    one = evaluate("greedy", games=4, seed=9, progress=False)
    zero = evaluate("greedy", games=4, seed=9, progress=False, rules=0)
    assert [r["actions"] for r in one.records] == [r["actions"] for r in zero.records]
    assert one.to_dict()["rules_version"] == 1 and zero.to_dict()["rules_version"] == 0
    with pytest.raises(ValueError, match="rules=3 is not a rules version"):
        evaluate("greedy", games=1, progress=False, rules=3)
