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
from ai2048.agents.options import (
    DEPTH,
    ORDER,
    P_TWO_SEARCH,
    PROB_CUTOFF,
    SEED,
    TT_BITS,
    WEB,
    agent_options,
    option,
)
from ai2048.agents.seed_actions import best_in_order, check_order
from ai2048.agents.simple import named, playable
from ai2048.engine.rng import seed_state
from ai2048.rules import P_TWO, Action
from ai2048.search.expectimax import Expectimax, adaptive_depth
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

WEB_PLAYOUTS = 2000
"""``montecarlo``'s most ``playouts`` per legal first move on the web: at most 4 x 2000 random games a
decision (``playouts_total``: the same 8000 in all)."""
_PLAYOUTS_WHY = "random games per decision: more would take minutes a move"


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

    Each option's help and values are declared once in the signature (``ai2048 agents expectimax``
    prints them); ``evaluator`` and ``data`` (a numba after-state evaluator, see
    ``ai2048.search.expectimax``) replace ``heuristic``.
    """

    @agent_options
    def __init__(
        self,
        depth: int | str = option(
            "adaptive", DEPTH, choices=("adaptive",), web=(1, 6),
            help="moves (each followed by a spawn) searched ahead: D = D-ply; 'adaptive' picks it per board "
            "from the number of distinct tiles", source="nneonneo/2048-ai (adaptive rule); seed 003 uses 2"),
        time_budget: float | None = option(
            None, "seconds per move: deepen 1, 2, ... up to max_depth while time is left (overrides depth)",
            "number", lo=0, lo_open=True, none="a fixed depth", web=(0.01, 1.0),
            source="iterative deepening, as seed 003's minimax"),
        heuristic: str = option(
            "nneonneo", "the built-in evaluation of leaf boards", "choice", choices=HEURISTICS, web=WEB,
            source="'nneonneo': nneonneo/2048-ai; 'seed003': seed 003's five-term heuristic"),
        weights: dict[str, float] | str | None = option(
            None, "heuristic weights over the defaults: a dict of fields, or a named set",
            allowed="'tuned', 'published', a dict (nneonneo: lost, empty, merges, monotonicity, mono_power, "
            "sum, sum_power; seed003: max_log2, free, adjacent_equal, edges, gradient), or None",
            source="nneonneo's published constants ('published') or this toolkit's tuned ones"),
        p_two: float = option(P_TWO, P_TWO_SEARCH),
        prob_cutoff: float = option(1e-4, PROB_CUTOFF, web=(1e-4, None)),
        tt_bits: int = option(20, TT_BITS),
        depth_offset: int = option(
            1, "with depth='adaptive': subtract this from nneonneo's depth rule", "whole", web=(-3, 3),
            why="negative searches deeper", source="this toolkit (speed/strength trade)"),
        min_depth: int = option(2, DEPTH, help="with depth='adaptive': the shallowest depth used (at most "
                                "max_depth)", source="this toolkit", web=(None, 6)),
        max_depth: int = option(8, DEPTH, help="the deepest depth: the adaptive rule's cap and time_budget's "
                                "limit", source="this toolkit", web=(None, 6), web_default=6),
        evaluator: Callable[..., float] | None = option(
            None, "Python API only: a custom numba after-state evaluator replacing the heuristic (see "
            "ai2048.search.expectimax); not settable from the command line",
            allowed="a numba @njit function, or None for the built-in heuristic", source="this toolkit"),
        data: tuple | None = option(None, "Python API only: the data tuple passed to a custom evaluator",
                                    allowed="a tuple (only with evaluator), or None", source="this toolkit"),
        reward_weight: float | None = option(
            None, "weight of the moves' rewards added to leaf values; None means 0 with a built-in heuristic "
            "and 1 with a custom evaluator (value = future score)", "number", lo=0, none="",
            web=(None, 100.0), source="this toolkit"),
        order: str = option("003", ORDER),
    ) -> None:
        self.depth = depth
        self.min_depth, self.max_depth = min_depth, max_depth
        if self.min_depth > self.max_depth:
            raise ValueError(f"min_depth={min_depth} is larger than max_depth={max_depth}")
        self.depth_offset = depth_offset
        self.time_budget = time_budget
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
        self.search = Expectimax(evaluator, data, p_two=p_two, prob_cutoff=prob_cutoff,
                                 reward_weight=float(rw), tt_bits=tt_bits)
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


@agent_options
def seed003_expectimax(
    depth: int = option(2, DEPTH, help="moves (each followed by a spawn) searched ahead: D = D-ply",
                        source="seed 003: depth 2 (2-ply)", web=(None, 3)),
    p_two: float = option(
        P_TWO, P_TWO_SEARCH, help="probability of a 2 at chance nodes",
        source="seed 003's text places a 2 or a 4; its code (ParkerD559) 2s only: p_two=1.0"),
    prob_cutoff: float = option(0.0, PROB_CUTOFF, web=WEB),
    tt_bits: int = option(20, TT_BITS),
    order: str = option("003", ORDER),
) -> ExpectimaxAgent:
    """Seed 003's expectimax: depth 2, its five-term heuristic, chance nodes over 2s and 4s.

    The seed's text places "a 2 or a 4"; its code (ParkerD559's) ignores 4s: ``p_two=1.0``.
    """
    return ExpectimaxAgent(depth=depth, heuristic="seed003", p_two=p_two, prob_cutoff=prob_cutoff,
                           tt_bits=tt_bits, order=order)


class MinimaxAgent(BaseAgent):
    """Seed 003's minimax: the spawn as an adversary, optional alpha-beta, depth and/or time limit.

    Each option's help and values are declared once in the signature (``ai2048 agents minimax``
    prints them); depth 4 is the default because deeper worst-case searches played worse here
    (docs/search.md).
    """

    @agent_options
    def __init__(
        self,
        depth: int | None = option(
            4, DEPTH, none="no cap; needs time_limit", web=(None, 5), web_none=False,
            help="moves searched ahead (the tile placements between them are the adversary's); with "
            "time_limit the deepest allowed", source="seed 003 (depth 4 plays best here: docs/search.md)"),
        # never None on the web: a fixed depth-5 search without pruning, fours on, is 4 x 112**4 leaves on
        # an open board (tens of seconds with the GIL held, docs/ui.md); a time limit bounds it
        time_limit: float | None = option(
            0.2, "seconds per move: deepen 1, 2, ... within it", "number", lo=0, lo_open=True,
            none="a fixed depth", web=(0.01, 1.0), web_none=False, source="seed 003: 0.2 s per move"),
        prune: bool = option(True, "alpha-beta pruning (the same move as without it under every tie order, "
                             "fewer nodes)", "flag", web=WEB, source="seed 003: with and without alpha-beta"),
        fours: bool = option(False, "the adversary may also place 4s", "flag", web=WEB,
                             source="seed 003 places 2s only (false)"),
        weights: list[float] | None = option(
            None, "utility weights [smoothness, monotonicity, ln-empty, max4tile]",
            allowed="a list of 4 numbers, or None for the seed's", source="seed 003's minimax utility"),
        order: str = option("003", ORDER),
        node_budget: int | None = option(
            None, "nodes (moves tried) per move over every depth: deepen 1, 2, ... within it, the same on "
            "any machine", "whole", lo=1, none="", source="seed 003's cut-off shrinks with the nodes "
            "expanded (docs/search.md)"),
    ) -> None:
        if depth is None and time_limit is None and node_budget is None:
            raise ValueError("minimax needs a depth, a time_limit or a node_budget (or a depth with either)")
        w = np.array(weights if weights is not None else SEED003_UTILITY_WEIGHTS, dtype=np.float64)
        if w.shape != (4,):
            raise ValueError(
                f"weights must be 4 numbers (smoothness, monotonicity, ln-empty, max4tile), got {weights}"
            )
        self.depth = depth
        self.time_limit = time_limit
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

    Each option's help and values are declared once in the signature (``ai2048 agents montecarlo``
    prints them).
    """

    @agent_options
    def __init__(
        self,
        playouts: int = option(
            50, "random playouts per legal first move; a move's value is their mean final score", "whole",
            lo=1, hi=MAX_PLAYOUTS, why=_PLAYOUTS_WHY, web=(None, WEB_PLAYOUTS),
            source="seed 002 part 3 (p-mckenzie/2048), budget per first move (about 4x the seed's "
            "simulation_size)"),
        playouts_total: int | None = option(
            None, "the seed's budget instead: this many playouts in all, each starting with a uniformly "
            "random legal move; moves no playout tried are not chosen", "whole", lo=1, hi=MAX_PLAYOUTS_TOTAL,
            none="playouts", why=_PLAYOUTS_WHY, web=(None, 4 * WEB_PLAYOUTS),
            source="seed 002 part 3: simulation_size (5, 20, 50, 100, 150 in its runs)"),
        p_two: float = option(P_TWO, P_TWO_SEARCH, help="probability of a 2 at the playouts' spawns",
                              source="2048 rules"),
        seed: int | None = option(None, SEED),
        order: str = option("002", ORDER, help="tie-break order between moves of equal mean",
                            source="seed 002 tries w, a, s, d"),
    ) -> None:
        self.playouts = playouts
        self.playouts_total = playouts_total
        self.p_two = p_two
        self.order = check_order(order)
        self._state = seed_state(seed)

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

