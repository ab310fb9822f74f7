"""Baseline agents: ``random`` (uniform over legal moves) and ``greedy`` (best immediate reward)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ai2048 import checks, engine
from ai2048.agents.base import BaseAgent
from ai2048.agents.options import ORDER, SEED, agent_options, option
from ai2048.agents.seed_actions import best_in_order, check_order
from ai2048.board_io import check_board
from ai2048.rules import ACTION_NAMES, Action


def playable(board: int) -> np.uint64:
    """``board`` as a checked uint64 that still has a legal move, else a ValueError."""
    b = check_board(board)
    if engine.is_over(b):
        raise ValueError(
            f"board {int(b):#018x} is already over: no move is legal, so there is nothing to choose"
        )
    return b


def named(values: np.ndarray) -> dict[str, float]:
    """{move name: value} for the legal moves (``-inf`` marks an illegal one)."""
    return {ACTION_NAMES[a]: float(v) for a, v in enumerate(values) if v != -np.inf}


def immediate_rewards(b: np.uint64) -> np.ndarray:
    """[4] reward of each action, ``-inf`` where illegal."""
    out = np.full(4, -np.inf)
    for a in range(4):
        nb, r = engine.move(b, np.int64(a))
        if nb != b:
            out[a] = float(r)
    return out


class RandomAgent(BaseAgent):
    """Uniform over the legal moves; ``seed`` (or ``reset(seed)``) fixes its choices."""

    @agent_options
    def __init__(self, seed: int | None = option(None, SEED)) -> None:
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        self._rng = np.random.default_rng(checks.seed("seed", seed))

    def game_kernel(self) -> Any:
        """Whole games in numba, each drawing from ``default_rng(game seed)`` as ``reset`` makes it."""
        from ai2048.search.games import random_kernel

        return random_kernel()

    def act(self, board: int) -> Action:
        b = playable(board)
        bits = int(engine.legal_bits(b))
        legal = [a for a in range(4) if bits >> a & 1]
        return Action(legal[int(self._rng.integers(len(legal)))])


class GreedyAgent(BaseAgent):
    """The move with the largest immediate reward; ties go to the first in ``order`` (seed 004's demo).

    Its option is declared in the signature (``ai2048 agents greedy`` prints it).
    """

    @agent_options
    def __init__(
        self,
        order: str = option("004", ORDER, help="tie-break order between moves with the same immediate reward",
                            source="seed 004's demo takes the first best of up, down, left, right"),
    ) -> None:
        self.order = check_order(order)

    def act(self, board: int) -> Action:
        return best_in_order(immediate_rewards(playable(board)), self.order)

    def game_kernel(self) -> Any:
        """Whole games in numba (the same moves as ``act``)."""
        from ai2048.search.games import greedy_kernel

        return greedy_kernel(self.order)

    def explain(self, board: int) -> dict[str, float]:
        return named(immediate_rewards(playable(board)))
