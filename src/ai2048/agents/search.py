"""Search agents: ``expectimax`` (any evaluator), ``minimax`` (seed 003) and ``montecarlo`` (seed 002).

Thin wrappers over the numba kernels in :mod:`ai2048.search`; each checks its config, keeps its
search state (transposition table, node counters) and answers ``act``, ``explain`` and ``reset``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.agents.base import BaseAgent
from ai2048.agents.seed_actions import best_in_order, check_order
from ai2048.agents.simple import named, playable
from ai2048.engine.rng import seed_state
from ai2048.rules import P_TWO, Action
from ai2048.search.expectimax import Expectimax, adaptive_depth, check_depth
from ai2048.search.heuristics import (
    NNEONNEO_PUBLISHED,
    SEED003_UTILITY_WEIGHTS,
    SEED003_WEIGHTS,
    NneonneoWeights,
    nneonneo_eval,
    nneonneo_table,
    seed003_eval,
    seed003_utility,
)
from ai2048.search.minimax import Minimax
from ai2048.search.montecarlo import MAX_PLAYOUTS, MAX_PLAYOUTS_TOTAL, playout_values, playout_values_total

HEURISTICS = ("nneonneo", "seed003")


NNEONNEO_WEIGHT_SETS = {"tuned": NneonneoWeights(), "published": NNEONNEO_PUBLISHED}
"""Named weight sets of the nneonneo heuristic: this project's tuned defaults, nneonneo's constants."""


def heuristic_evaluator(
    name: str, weights: dict[str, float] | str | None = None
) -> tuple[Callable[..., float], tuple]:
    """(evaluate, data) of a built-in heuristic: "nneonneo" or "seed003".

    ``weights``: for "nneonneo" a dict of :class:`NneonneoWeights` fields (the rest keep the tuned
    defaults) or a set's name, "tuned" or "published" (nneonneo's constants); for "seed003" a dict
    of its five weights.
    """
    if isinstance(weights, str):
        if name != "nneonneo" or weights not in NNEONNEO_WEIGHT_SETS:
            raise ValueError(
                f"unknown weight set {weights!r} for heuristic {name!r}; named sets exist for "
                f"'nneonneo' only: {', '.join(NNEONNEO_WEIGHT_SETS)} (or give a dict of weights)"
            )
        weights = NNEONNEO_WEIGHT_SETS[weights].as_dict()
    if name == "nneonneo":
        try:
            w = NneonneoWeights(**(weights or {}))
        except TypeError as e:
            raise ValueError(
                f"bad nneonneo weights {weights}: {e}; keys: {list(NneonneoWeights().as_dict())}"
            ) from e
        return nneonneo_eval, (nneonneo_table(w),)
    if name == "seed003":
        if weights:
            keys = ("max_log2", "free", "adjacent_equal", "edges", "gradient")
            unknown = set(weights) - set(keys)
            if unknown:
                raise ValueError(f"bad seed003 weights {sorted(unknown)}; keys: {list(keys)}")
            arr = np.array([float(weights.get(k, d)) for k, d in zip(keys, SEED003_WEIGHTS, strict=False)])
        else:
            arr = SEED003_WEIGHTS.copy()
        return seed003_eval, (arr,)
    raise ValueError(f"unknown heuristic {name!r}; use one of {', '.join(HEURISTICS)} or pass evaluator=")


class ExpectimaxAgent(BaseAgent):
    """Expectimax with a transposition table and probability pruning over any after-state evaluator.

    Args:
        depth: units of (move + spawn) searched, an int >= 1, or "adaptive" (nneonneo's rule from
            the number of distinct tiles, minus ``depth_offset``, clamped to ``[min_depth, max_depth]``).
        time_budget: seconds per move; deepens 1, 2, ... up to ``max_depth`` (overrides ``depth``).
        heuristic: built-in evaluator, "nneonneo" (default) or "seed003".
        weights: heuristic weights (nneonneo: a dict of lost, empty, merges, monotonicity,
            mono_power, sum, sum_power over the tuned defaults, or "published" for nneonneo's
            constants; seed003: max_log2, free, adjacent_equal, edges, gradient).
        p_two: probability of a 2 in chance nodes; 1.0 searches 2s only (seed 003).
        prob_cutoff: chance nodes below this cumulative probability are leaves (0 = exact search).
        tt_bits: log2 of the transposition-table size (0 turns it off).
        depth_offset, min_depth, max_depth: the adaptive rule's shift and bounds.
        evaluator, data: a custom numba after-state evaluator and its data tuple (see
            ``ai2048.search.expectimax``); they replace ``heuristic``.
        reward_weight: weight of move rewards added to values; default 0 for heuristics, 1 for a
            custom evaluator (value = expected future score).
        order: tie-break order between equal values (a seed number or "clockwise").
    """

    def __init__(
        self,
        depth: int | str = "adaptive",
        time_budget: float | None = None,
        heuristic: str = "nneonneo",
        weights: dict[str, float] | str | None = None,
        p_two: float = P_TWO,
        prob_cutoff: float = 1e-4,
        tt_bits: int = 20,
        depth_offset: int = 1,
        min_depth: int = 2,
        max_depth: int = 8,
        evaluator: Callable[..., float] | None = None,
        data: tuple | None = None,
        reward_weight: float | None = None,
        order: str = "003",
    ) -> None:
        if depth != "adaptive":
            check_depth(depth)
        self.depth = depth
        self.min_depth = check_depth(min_depth, "min_depth")
        self.max_depth = check_depth(max_depth, "max_depth")
        if self.min_depth > self.max_depth:
            raise ValueError(f"min_depth={min_depth} is larger than max_depth={max_depth}")
        if not isinstance(depth_offset, int) or isinstance(depth_offset, bool):
            raise TypeError(f"depth_offset must be an integer, got {depth_offset!r}")
        self.depth_offset = depth_offset
        if time_budget is not None and (isinstance(time_budget, bool) or not float(time_budget) > 0):
            raise ValueError(f"time_budget={time_budget} must be a positive number of seconds (or None)")
        self.time_budget = None if time_budget is None else float(time_budget)
        if evaluator is None:
            if data is not None:
                raise ValueError("data= is only used with evaluator=; built-in heuristics take weights=")
            evaluator, data = heuristic_evaluator(heuristic, weights)
            rw = 0.0 if reward_weight is None else reward_weight
        else:
            if data is None:
                data = ()
            rw = 1.0 if reward_weight is None else reward_weight
        self.order = check_order(order)
        self.search = Expectimax(
            evaluator, data, p_two=checks.probability("p_two", p_two, zero=False), prob_cutoff=prob_cutoff,
            reward_weight=float(rw), tt_bits=tt_bits,
        )
        self.last_depth = 0

    def depth_for(self, board: int) -> int:
        """The depth this agent searches ``board`` at (time budgets aside)."""
        if self.depth == "adaptive":
            return adaptive_depth(board, self.depth_offset, self.min_depth, self.max_depth)
        return int(self.depth)

    def values(self, board: int) -> np.ndarray:
        """[4] search value of each action (``-inf`` where illegal)."""
        b = int(playable(board))
        if self.time_budget is not None:
            res = self.search.search(b, time_budget=self.time_budget, max_depth=self.max_depth)
        else:
            res = self.search.search(b, depth=self.depth_for(b))
        self.last_depth = res.depth
        return res.values

    def act(self, board: int) -> Action:
        return best_in_order(self.values(board), self.order)

    def explain(self, board: int) -> dict[str, float]:
        return named(self.values(board))

    def game_kernel(self) -> Any:
        """Whole games in numba (the same moves as ``act``); None with a time budget (timing decides)."""
        if self.time_budget is not None:
            return None
        from ai2048.search.games import expectimax_kernel

        depth = 0 if self.depth == "adaptive" else int(self.depth)
        return expectimax_kernel(
            self.search, depth, self.order, self.depth_offset, self.min_depth, self.max_depth
        )

    @property
    def nodes(self) -> int:
        """Moves tried by the search so far (the nodes of nodes/s)."""
        return int(self.search.stats[0])


def seed003_expectimax(
    depth: int = 2, p_two: float = P_TWO, prob_cutoff: float = 0.0, tt_bits: int = 20, order: str = "003"
) -> ExpectimaxAgent:
    """Seed 003's expectimax: depth 2, its five-term heuristic, chance nodes over 2s and 4s.

    The seed's text places "a 2 or a 4"; its code (ParkerD559's) ignores 4s: ``p_two=1.0``.
    """
    return ExpectimaxAgent(depth=depth, heuristic="seed003", p_two=p_two, prob_cutoff=prob_cutoff,
                           tt_bits=tt_bits, order=order)


class MinimaxAgent(BaseAgent):
    """Seed 003's minimax: the spawn as an adversary, optional alpha-beta, depth and/or time limit.

    Args:
        depth: moves searched ahead (the placements between them are the adversary's; the last
            move's after-state is scored); with ``time_limit`` the deepest allowed (None = no cap).
            Default 4: deeper worst-case searches played worse here (docs/search.md).
        time_limit: seconds per move (seed: 0.2); deepens 1, 2, ... within it. None = fixed depth.
        node_budget: nodes (moves tried) per move, over every depth searched: deepens 1, 2, ... within
            it, alone (``time_limit=None``) or with the time limit; unlike a time limit it stops at the
            same node on any machine. None = no node budget.
        prune: alpha-beta pruning (the same move as without it under every tie order, fewer nodes).
        fours: the adversary also places 4s (the seed places 2s only).
        weights: seed 003 utility weights [smoothness, monotonicity, ln-empty, max4tile].
        order: tie-break order (a seed number or "clockwise").
    """

    def __init__(
        self,
        depth: int | None = 4,
        time_limit: float | None = 0.2,
        prune: bool = True,
        fours: bool = False,
        weights: list[float] | None = None,
        order: str = "003",
        node_budget: int | None = None,
    ) -> None:
        if depth is not None:
            check_depth(depth)
        if time_limit is not None and (isinstance(time_limit, bool) or not float(time_limit) > 0):
            raise ValueError(f"time_limit={time_limit} must be a positive number of seconds (or None)")
        if node_budget is not None and (isinstance(node_budget, bool) or not isinstance(node_budget, int)
                                        or node_budget < 1):
            raise ValueError(f"node_budget={node_budget!r} must be an integer >= 1 (or None)")
        if depth is None and time_limit is None and node_budget is None:
            raise ValueError("minimax needs a depth, a time_limit or a node_budget (or a depth with either)")
        w = np.array(weights if weights is not None else SEED003_UTILITY_WEIGHTS, dtype=np.float64)
        if w.shape != (4,):
            raise ValueError(
                f"weights must be 4 numbers (smoothness, monotonicity, ln-empty, max4tile), got {weights}"
            )
        self.depth = depth
        self.time_limit = None if time_limit is None else float(time_limit)
        self.node_budget = node_budget
        self.order = check_order(order)
        self.search = Minimax(seed003_utility, (w,), prune=prune, fours=fours, order=self.order)
        self.last_depth = 0

    def values(self, board: int) -> np.ndarray:
        vals, self.last_depth = self.search.search(int(playable(board)), self.depth, self.time_limit,
                                                   self.node_budget)
        return vals

    def game_kernel(self) -> Any:
        """Whole games in numba at a fixed depth (the same moves as ``act``); None with a time limit or
        a node budget (the deepening runs in Python)."""
        if self.time_limit is not None or self.node_budget is not None or self.depth is None:
            return None
        from ai2048.search.games import minimax_kernel

        return minimax_kernel(self.search, self.depth, self.order)

    def act(self, board: int) -> Action:
        return best_in_order(self.values(board), self.order)

    def explain(self, board: int) -> dict[str, float]:
        return named(self.values(board))


class MonteCarloAgent(BaseAgent):
    """Seed 002 part 3: random playouts after the legal first moves; the best mean score wins.

    Args:
        playouts: random playouts per legal first move (1..100,000).
        playouts_total: instead, the seed's budget (its ``simulation_size``): this many playouts in
            all, each a random game from the board, grouped by first move, so about a quarter of
            ``playouts`` per move on an open board; None (default) uses ``playouts``.
        p_two: spawn odds inside the playouts.
        seed: seed of the playouts' random stream (``reset(seed)`` reseeds).
        order: tie-break order (seed 002: w, a, s, d).
    """

    def __init__(self, playouts: int = 50, playouts_total: int | None = None, p_two: float = P_TWO,
                 seed: int | None = None, order: str = "002") -> None:
        for key, value, most in (("playouts", playouts, MAX_PLAYOUTS),
                                 ("playouts_total", playouts_total, MAX_PLAYOUTS_TOTAL)):
            if value is None and key == "playouts_total":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise ValueError(f"{key}={value!r} must be an integer in 1..{most:,} (random games per "
                                 "decision: more would take minutes a move)")
        self.playouts = playouts
        self.playouts_total = playouts_total
        self.p_two = checks.probability("p_two", p_two, zero=False)
        self.order = check_order(order)
        self._state = seed_state(checks.seed("seed", seed))  # seed_state masks a negative seed to 64 bits

    def reset(self, seed: int | None = None) -> None:
        self._state = seed_state(checks.seed("seed", seed))

    def values(self, board: int) -> np.ndarray:
        if self.playouts_total is not None:
            return playout_values_total(playable(board), int(self.playouts_total), self._state, self.p_two)
        return playout_values(playable(board), int(self.playouts), self._state, self.p_two)

    def act(self, board: int) -> Action:
        return best_in_order(self.values(board), self.order)

    def explain(self, board: int) -> dict[str, float]:
        return named(self.values(board))


__all__ = [
    "ExpectimaxAgent",
    "MinimaxAgent",
    "MonteCarloAgent",
    "heuristic_evaluator",
    "seed003_expectimax",
]

