"""Minimax with optional alpha-beta pruning (seed 003): the spawn is an adversary (numba).

The max player moves; the min player places a 2 (or, with ``fours``, a 2 or a 4) in the empty
cell that is worst for max. **Depth** counts max layers: depth ``k`` searches ``k`` moves with
the ``k - 1`` placements between them, and scores the after-state of the last move (before any
tile is placed) with the evaluator, any numba ``evaluate(board: uint64, data: tuple) -> float64``
(seed 003's ``seed003_utility`` by default). That is the leaf of the seed's course template,
whose cut-off min node returns ``evaluate(grid)`` of the board it was handed, and the same
convention as :mod:`ai2048.search.expectimax`. A position with no legal move is scored by the
evaluator too (the template does so).

Alpha-beta gives the same root value and the same chosen move as plain minimax under any tie
order: the root searches its moves in the tie order, so a move whose search was cut (its value is
then only an upper bound, at most the best value found before it) comes after a move that proved
that value, and a tie goes to the earlier, proven move. The values of the moves it cut are upper
bounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.engine.moves import four_moves
from ai2048.engine.spawn import empty_cells, next_spawn
from ai2048.search.specialise import is_jitted, specialise, unbound_evaluator

EVALUATE: Callable[..., float] = unbound_evaluator
"""The leaf evaluator the kernel templates call; :func:`kernels` binds it per evaluator."""

# stats layout (int64[4]): nodes (moves tried), node limit (0 = none), aborted flag, leaves
NODES, LIMIT, ABORTED, LEAVES = range(4)


def _max_value(  # kernel template: compiled per evaluator by ``kernels`` (EVALUATE is bound there)
    data: tuple,
    b: np.uint64,
    k: int,
    alpha: float,
    beta: float,
    prune: bool,
    fours: bool,
    stats: np.ndarray,
) -> float:
    """Minimax value of before-state ``b`` with ``k >= 1`` max layers left."""
    if stats[LIMIT] > 0 and stats[NODES] > stats[LIMIT]:
        stats[ABORTED] = 1
        return 0.0
    best = -np.inf
    found = False
    after = four_moves(b)
    for a in range(4):
        nb = after[a]
        stats[NODES] += 1
        if nb == b:
            continue
        found = True
        if k == 1:
            stats[LEAVES] += 1
            v = EVALUATE(nb, data)
            if v > best:
                best = v
            if prune and best >= beta:
                return best
            continue
        lo = max(alpha, best) if prune else -np.inf
        worst = np.inf
        hi = beta
        cells = empty_cells(nb)
        while cells:
            two, four, cells = next_spawn(nb, cells)
            for tile in range(1, 3 if fours else 2):
                v = _max_value(data, two if tile == 1 else four, k - 1, lo, hi, prune, fours, stats)
                if v < worst:
                    worst = v
                if prune:
                    if worst <= lo:
                        break
                    hi = min(hi, worst)
            if prune and worst <= lo:
                break
        if worst > best:
            best = worst
        if prune and best >= beta:
            return best
    if not found:
        stats[LEAVES] += 1
        return EVALUATE(b, data)
    return best


def minimax_root(
    data: tuple,
    b: np.uint64,
    depth: int,
    prune: bool,
    fours: bool,
    stats: np.ndarray,
    order: np.ndarray,
) -> np.ndarray:
    """[4] values of each action (``-inf`` if illegal), searched in ``order`` (the tie order, int64[4]).

    With pruning, a move searched after the best so far is cut as soon as it cannot beat it
    strictly; its value is then an upper bound no larger than that best, so the first move of
    ``order`` holding the largest value is always one whose value was proven.
    """
    out = np.full(4, -np.inf)
    best = -np.inf
    after = four_moves(b)
    for a in order:
        nb = after[a]
        stats[NODES] += 1
        if nb == b:
            continue
        if depth == 1:
            stats[LEAVES] += 1
            out[a] = EVALUATE(nb, data)
            best = max(best, out[a])
            continue
        lo = best if prune else -np.inf
        worst = np.inf
        hi = np.inf
        cells = empty_cells(nb)
        while cells:
            two, four, cells = next_spawn(nb, cells)
            for tile in range(1, 3 if fours else 2):
                v = _max_value(data, two if tile == 1 else four, depth - 1, lo, hi, prune, fours, stats)
                if v < worst:
                    worst = v
                if prune:
                    if worst <= lo:
                        break
                    hi = min(hi, worst)
            if prune and worst <= lo:
                break
        out[a] = worst
        if worst > best:
            best = worst
    return out


def kernels(evaluate: Callable[..., float]) -> Any:
    """The compiled ``minimax_root(data, board, depth, prune, fours, stats, order)`` for ``evaluate``."""
    return specialise("minimax", {"_max_value": _max_value, "minimax_root": minimax_root}, evaluate)[
        "minimax_root"
    ]


class Minimax:
    """A minimax search bound to one evaluator, at a fixed depth or deepening within a time limit."""

    def __init__(self, evaluate: Callable[..., float], data: tuple, *, prune: bool = True,
                 fours: bool = False, order: Sequence[int] = (0, 1, 2, 3)) -> None:
        if not is_jitted(evaluate):
            raise TypeError("evaluate must be a numba @njit function (board uint64, data tuple) -> float64")
        if sorted(int(a) for a in order) != [0, 1, 2, 3]:
            raise ValueError(f"order must list the four actions 0..3 once each, got {list(order)}")
        self.evaluate = evaluate
        self._root = kernels(evaluate)
        self.data = data
        self.prune = checks.flag("prune", prune)  # bool("no") was True
        self.fours = checks.flag("fours", fours)
        self.order = np.array([int(a) for a in order], dtype=np.int64)
        """The tie order the root searches its moves in (pass the same order to the move choice)."""
        self.stats = np.zeros(4, dtype=np.int64)
        self._rate = 0.0

    def _learn_rate(self, nodes: int, seconds: float) -> None:
        """Track nodes/s for the time limit (small searches count for less; 1 M/s until measured)."""
        if self._rate == 0:
            self._rate = 1e6
        if seconds > 0 and nodes > 0:
            w = min(1.0, seconds / 0.01)
            self._rate = (1 - 0.5 * w) * self._rate + 0.5 * w * (nodes / seconds)

    def values(self, board: int, depth: int, node_limit: int = 0) -> tuple[np.ndarray, bool]:
        """Values [4] at ``depth`` and whether the node limit stopped the search."""
        st = self.stats
        st[ABORTED] = 0
        st[LIMIT] = (st[NODES] + node_limit) if node_limit > 0 else 0
        vals = self._root(self.data, np.uint64(board), int(depth), self.prune, self.fours, st, self.order)
        return vals, bool(st[ABORTED])

    def search(self, board: int, depth: int | None, time_limit: float | None,
               node_budget: int | None = None) -> tuple[np.ndarray, int]:
        """Values [4] and the depth reached: fixed ``depth``, or deepening 1, 2, ... up to it within
        ``time_limit`` seconds and/or ``node_budget`` nodes (moves tried, over all the depths of this
        move), keeping the deepest depth completed; depth 1 always completes.

        A node budget stops at the same node on any machine, so its games are reproducible, as seed
        003's search is bounded by the nodes it expands (its cut-off shrinks as their count grows)."""
        if time_limit is None and node_budget is None:
            assert depth is not None
            return self.values(board, depth)[0], depth
        t0 = time.perf_counter()
        start = int(self.stats[NODES])
        best: np.ndarray | None = None
        reached = 0
        d = 1
        while depth is None or d <= depth:
            limit = 0
            if best is not None:
                limits = []
                if time_limit is not None:
                    limits.append(int(self._rate * (time_limit - (time.perf_counter() - t0))))
                if node_budget is not None:
                    limits.append(node_budget - (int(self.stats[NODES]) - start))
                limit = min(limits)
                if limit < 1:
                    break
            n0, c0 = int(self.stats[NODES]), time.perf_counter()
            vals, aborted = self.values(board, d, node_limit=limit)
            self._learn_rate(int(self.stats[NODES]) - n0, time.perf_counter() - c0)
            if aborted:
                break
            best, reached = vals, d
            if d >= 40:
                break
            d += 1
        assert best is not None
        return best, reached
