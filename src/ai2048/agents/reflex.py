"""Seed 003's ``ReflexAgent``: one ply, no search (ParkerD559/2048-Expectimax-AI, ``agents.py``).

Each legal move's after-state is scored ``empty cells + max tile + adjacent_equal``, where the max
tile is its *value* (not its log2: it dominates the sum, as in the seed's code) and
``adjacent_equal`` counts each equal neighbour pair twice. The best move is played; ties go to the
first of up, down, left, right (seed 003's action order; the seed's own tie order depends on the
order its ``get_actions`` scans the board).
"""

from __future__ import annotations

import numpy as np

from ai2048 import engine
from ai2048.agents.base import BaseAgent
from ai2048.agents.seed_actions import SEED_ORDERS, best_in_order
from ai2048.agents.simple import named, playable
from ai2048.rules import Action
from ai2048.search.heuristics import seed003_parts


def reflex_value(after: int) -> float:
    """Seed 003's reflex evaluation of an after-state: empty cells + max tile value + equal pairs (twice)."""
    max_log2, free, adjacent, _, _ = seed003_parts(np.uint64(after))
    return free + (2.0**max_log2 if max_log2 > 0 else 0.0) + adjacent


def reflex_values(b: np.uint64) -> np.ndarray:
    """[4] reflex value of each move's after-state, ``-inf`` where the move is illegal."""
    out = np.full(4, -np.inf)
    for a in range(4):
        nb, _ = engine.move(b, np.int64(a))
        if nb != b:
            out[a] = reflex_value(int(nb))
    return out


class ReflexAgent(BaseAgent):
    """The move whose after-state has the best reflex value (seed 003's one-ply baseline)."""

    def act(self, board: int) -> Action:
        return best_in_order(reflex_values(playable(board)), SEED_ORDERS["003"])

    def explain(self, board: int) -> dict[str, float]:
        return named(reflex_values(playable(board)))
