"""A slow deterministic agent for the eval kill-and-resume tests: greedy moves, a pause at each game's
start."""

from __future__ import annotations

import time

from ai2048.agents import BaseAgent, register
from ai2048.agents.simple import GreedyAgent


class SlowGreedyAgent(BaseAgent):
    """Plays exactly as ``greedy`` but sleeps ``pause`` seconds on the first move of every game, so a
    test can kill an evaluation between two finished games."""

    def __init__(self, pause: float = 0.3) -> None:
        self.pause = pause
        self.inner = GreedyAgent()
        self._fresh = True

    def reset(self, seed: int | None = None) -> None:
        self._fresh = True

    def act(self, board: int):  # noqa: ANN201 - an Action
        if self._fresh:
            time.sleep(self.pause)
            self._fresh = False
        return self.inner.act(board)


register("slow-greedy", "_eval_test_agents:SlowGreedyAgent", "test agent: greedy with a pause per game")
