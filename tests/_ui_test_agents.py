"""A tiny deterministic agent for the UI tests: the legal move with the largest immediate reward."""

from __future__ import annotations

from ai2048 import Action, legal_mask, move
from ai2048.agents import BaseAgent, register
from ai2048.ui.limits import Float


class GreedyTestAgent(BaseAgent):
    """Best immediate reward, ties to the lowest action; ``explain`` gives each legal move's reward."""

    def __init__(self, bonus: float = 0.0) -> None:
        self.bonus = bonus

    def explain(self, board: int) -> dict[str, float]:
        mask = legal_mask(board)
        return {a.name.lower(): move(board, a)[1] + self.bonus for a in Action if mask[a]}

    def act(self, board: int) -> Action:
        values = self.explain(board)
        best = max(values.values())
        return next(a for a in Action if values.get(a.name.lower()) == best)


register("ui-test-greedy", "_ui_test_agents:GreedyTestAgent", "test agent: best immediate reward")

WEB_TEST_AGENTS = {"ui-test-greedy": {"bonus": Float(-100.0, 100.0)}}
"""The web settings the test agent accepts (``create_app(extra_agents=...)``)."""
