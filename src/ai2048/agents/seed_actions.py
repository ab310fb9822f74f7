"""The seeds' action orders (``rules.SEED_ORDERS``), converted to :class:`ai2048.Action` here.

Seed 000 numbers actions up, down, left, right; seed 001 left, down, right, up; seed 002 names
keys w, a, s, d (up, left, down, right); seeds 003 and 004 use up, down, left, right. Agents that
reproduce a seed break ties between equal values in that seed's order (seed 004's greedy and
n-tuple players take the first best action of [up, down, left, right]): the search agents take an
``order`` option; the n-tuple agent and trainer a ``tie_order`` (default "clockwise", the lower
action number; ``tie_order="004"`` for seed 004).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ai2048.rules import SEED_ORDERS, Action

SEED002_KEYS = {"w": Action.UP, "a": Action.LEFT, "s": Action.DOWN, "d": Action.RIGHT}
"""Seed 002's key names."""


def check_order(order: str) -> tuple[Action, ...]:
    """The action order named ``order`` (a seed number or ``"clockwise"``), else a clear error."""
    if order not in SEED_ORDERS:
        raise ValueError(f"unknown action order {order!r}; use one of {', '.join(SEED_ORDERS)}")
    return SEED_ORDERS[order]


def to_action(seed: str, index: int) -> Action:
    """Seed ``seed``'s action number ``index`` as an :class:`Action`."""
    order = check_order(seed)
    if not 0 <= int(index) < 4:
        raise ValueError(f"seed {seed} action index {index} is outside 0..3")
    return order[int(index)]


def from_action(seed: str, action: int) -> int:
    """Our ``action`` as seed ``seed``'s action number."""
    return check_order(seed).index(Action(int(action)))


def best_in_order(values: Sequence[float] | np.ndarray, order: Sequence[Action]) -> Action:
    """The action with the largest value, ties going to the first in ``order``; ``-inf`` = illegal."""
    best = order[0]
    best_v = -np.inf
    found = False
    for a in order:
        v = float(values[int(a)])
        if v == -np.inf:
            continue
        if not found or v > best_v:
            best, best_v, found = a, v, True
    if not found:
        raise ValueError("no legal action: the game is over")
    return best
