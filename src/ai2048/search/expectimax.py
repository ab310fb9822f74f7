"""Expectimax over 2048's move-then-spawn tree (numba), with a pluggable leaf evaluator.

Tree: a max node tries every legal move; the after-state is a chance node that places a 2
(probability ``p_two``) or a 4 in each empty cell, uniformly. **Depth** counts units of
(max layer + chance layer), as in seed 003: the chance node of the last unit is not expanded but
valued by the evaluator. So depth 1 plays greedily on evaluator values, depth 2 is
max-chance-max. Depth ``D`` is the n-tuple literature's "D-ply", which counts move layers
(ziap/2048-tdl's ``-d 2`` is "3 ply", TDL2048+'s and Guei et al. 2022's "N-ply" search N moves),
and nneonneo/2048-ai's ``depth_limit = D`` is depth ``D + 1`` here.

Evaluator contract (the seam for heuristics, n-tuple networks and value nets)
--------------------------------------------------------------------------------
An evaluator is any numba ``@njit`` function ``evaluate(board: uint64, data: tuple) -> float64``
giving the value of an **after-state** (the board after a move, before the spawn). ``data`` is an
arbitrary tuple of arrays the evaluator needs (weights, index tables), passed through the search
untouched, so weights can change without recompiling. The search value of a move is
``reward_weight * reward + value(after-state)``: use ``reward_weight=1`` for evaluators that
estimate future score (n-tuple TD, value nets) and ``0`` for heuristics (nneonneo). A position
with no legal move is worth ``0``. ``build_search(evaluate)`` returns a factory of
:class:`Expectimax` searches bound to that evaluator: :mod:`ai2048.search.specialise` compiles the
kernels below once per evaluator with the evaluator inlined (cached on disk for the package's own
evaluators; a few seconds once per process for others).

Speed: chance nodes whose cumulative probability falls below ``prob_cutoff`` are valued by the
evaluator (nneonneo's CPROB_THRESH_BASE = 1e-4), and an array transposition table keyed by
(after-state, remaining depth) is shared by every subtree of one move decision. A hit needs the
same remaining depth, so with ``prob_cutoff=0`` the table never changes a value.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from ai2048 import checks
from ai2048.engine.board import NIBBLE, count_empty
from ai2048.engine.intrinsics import prefetch
from ai2048.engine.moves import four_moves, move_reward
from ai2048.engine.spawn import empty_cells, next_spawn
from ai2048.rules import P_TWO
from ai2048.search.specialise import is_jitted, specialise, unbound_evaluator

EVALUATE: Callable[..., float] = unbound_evaluator
"""The leaf evaluator the kernel templates call; :func:`kernels` binds it per evaluator."""

_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)

# stats layout (int64[8]): nodes (moves tried), node limit (0 = none), aborted flag,
# TT generation, TT hits, leaf evaluations, 64 - log2(TT size)
NODES, LIMIT, ABORTED, GEN, HITS, LEAVES, SHIFT = range(7)


@njit(cache=True)
def distinct_tiles(b: np.uint64) -> int:
    """Number of different non-empty tile values on the board."""
    seen = 0
    while b:
        e = b & NIBBLE
        if e:
            seen |= 1 << int(e)
        b >>= np.uint64(4)
    n = 0
    while seen:
        n += seen & 1
        seen >>= 1
    return n


def _chance(  # kernel template: compiled per evaluator by ``kernels`` (EVALUATE is bound there)
    data: tuple,
    b: np.uint64,
    k: int,
    cprob: float,
    p_two: float,
    cutoff: float,
    rw: float,
    tt: np.ndarray,
    tt_f: np.ndarray,
    stats: np.ndarray,
) -> float:
    """Value of after-state ``b`` with ``k`` (max + chance) units below it; ``k == 0``: the evaluator."""
    if k <= 0 or cprob < cutoff:
        stats[LEAVES] += 1
        return EVALUATE(b, data)
    if stats[LIMIT] > 0 and stats[NODES] > stats[LIMIT]:
        stats[ABORTED] = 1
        return 0.0
    use_tt = tt.shape[0] > 0
    idx = np.int64(0)
    tag = np.uint64((stats[GEN] << 6) | k)
    shift = np.uint64(stats[SHIFT])
    if use_tt:
        idx = np.int64((b * _HASH_MUL) >> shift)
        if tt[idx, 0] == b and tt[idx, 2] == tag:
            stats[HITS] += 1
            return tt_f[idx, 1]
    n = count_empty(b)
    if n == 0:
        stats[LEAVES] += 1
        return EVALUATE(b, data)
    p_four = 1.0 - p_two
    total = 0.0
    leaves = 0
    cells = empty_cells(b)
    while cells:
        two, four, cells = next_spawn(b, cells)
        for tile in range(2):
            p = p_two if tile == 0 else p_four
            if p <= 0.0:
                continue
            child = two if tile == 0 else four
            cp = cprob * p / n
            leaf = k == 1 or cp < cutoff
            m0, m1, m2, m3 = four_moves(child)
            stats[NODES] += 4
            if use_tt and not leaf:
                # the children will probe the table: start loading their slots now
                prefetch(tt, np.int64((m0 * _HASH_MUL) >> shift))
                prefetch(tt, np.int64((m1 * _HASH_MUL) >> shift))
                prefetch(tt, np.int64((m2 * _HASH_MUL) >> shift))
                prefetch(tt, np.int64((m3 * _HASH_MUL) >> shift))
            best = -np.inf
            for a in range(4):
                nb = m0 if a == 0 else m1 if a == 1 else m2 if a == 2 else m3
                if nb == child:
                    continue
                if leaf:  # no call frame, no array reference counting
                    v = EVALUATE(nb, data)
                    leaves += 1
                else:
                    v = _chance(data, nb, k - 1, cp, p_two, cutoff, rw, tt, tt_f, stats)
                if rw != 0.0:
                    v += rw * np.float64(move_reward(child, np.int64(a)))
                if v > best:
                    best = v
            if best == -np.inf:
                best = 0.0
            total += p * best
    value = total / n
    stats[LEAVES] += leaves
    if use_tt and stats[ABORTED] == 0:
        tt[idx, 0] = b
        tt_f[idx, 1] = value
        tt[idx, 2] = tag
    return value


def root_values(
    data: tuple,
    b: np.uint64,
    depth: int,
    p_two: float,
    cutoff: float,
    rw: float,
    tt: np.ndarray,
    tt_f: np.ndarray,
    stats: np.ndarray,
) -> np.ndarray:
    """[4] float64 value of each action at ``depth`` (``-inf`` where the action is illegal)."""
    out = np.full(4, -np.inf)  # kernel template, see ``kernels``
    after = four_moves(b)
    for a in range(4):
        nb = after[a]
        stats[NODES] += 1
        if nb != b:
            out[a] = rw * move_reward(b, np.int64(a)) + _chance(
                data, nb, depth - 1, 1.0, p_two, cutoff, rw, tt, tt_f, stats
            )
    return out


def kernels(evaluate: Callable[..., float]) -> Any:
    """The compiled ``root_values(data, board, depth, p_two, cutoff, rw, tt..., stats)`` for ``evaluate``."""
    return specialise("expectimax", {"_chance": _chance, "root_values": root_values}, evaluate)["root_values"]


def check_depth(depth: Any, name: str = "depth") -> int:
    """``depth`` as an int in 1..60 (1 = one move layer, greedy on the evaluator), else a clear error."""
    return checks.whole(name, depth, 1, 60, why="1 = one move layer, greedy on the evaluator")


@dataclass
class SearchResult:
    """What one move decision found: values [4] (-inf = illegal), depth reached, nodes, seconds."""

    values: np.ndarray
    depth: int
    nodes: int
    seconds: float


class Expectimax:
    """An expectimax search bound to one evaluator; holds the transposition table and counters.

    Args:
        evaluate: numba ``@njit`` ``(board uint64, data tuple) -> float64`` after-state value.
        data: the tuple passed to ``evaluate``.
        p_two: probability of a 2 in chance nodes (1.0 = 2s only, seed 003).
        prob_cutoff: chance nodes reached with a smaller cumulative probability are leaves.
        reward_weight: weight of the move reward added to after-state values (0 for heuristics).
        tt_bits: log2 of the transposition table size (0 = no table).
        root_hook: numba ``@njit`` ``(board uint64, data tuple) -> None`` called before each search
            with the board searched from (e.g. the n-tuple kernels' ``set_root_gap``, which fixes
            how ``evaluate`` reads every board of that search); it may write only ``data[-1]``, an
            array that each thread playing whole games gets a copy of (:meth:`thread_data`); None:
            nothing.
    """

    def __init__(
        self,
        evaluate: Callable[..., float],
        data: tuple,
        *,
        p_two: float = P_TWO,
        prob_cutoff: float = 1e-4,
        reward_weight: float = 0.0,
        tt_bits: int = 20,
        root_hook: Callable[..., None] | None = None,
    ) -> None:
        if not is_jitted(evaluate):
            raise TypeError("evaluate must be a numba @njit function (board uint64, data tuple) -> float64")
        if root_hook is not None and not is_jitted(root_hook):
            raise TypeError("root_hook must be a numba @njit function (board uint64, data tuple) -> None")
        if not isinstance(data, tuple):
            raise TypeError(f"data must be a tuple of arrays, got {type(data).__name__}")
        prob_cutoff = checks.number("prob_cutoff", prob_cutoff, 0.0, 1.0, hi_open=True,
                                    why="0 = no pruning, default 1e-4")
        tt_bits = checks.whole("tt_bits", tt_bits, 0, 28, why="0 = no transposition table")
        self.evaluate = evaluate
        self.data = data
        self.p_two = checks.probability("p_two", p_two, zero=False)
        self.prob_cutoff = float(prob_cutoff)
        self.reward_weight = float(reward_weight)
        self.tt_bits = int(tt_bits)
        self.root_hook = root_hook
        self._rate = 0.0  # nodes per second seen so far, for time budgets
        self._alloc()

    def thread_data(self) -> tuple:
        """``data`` for one more thread searching at the same time: the same arrays, but its own copy
        of the root hook's state (``data[-1]``), so one thread's root does not change another's."""
        if self.root_hook is None:
            return self.data
        return (*self.data[:-1], self.data[-1].copy())

    def _alloc(self) -> None:
        size = (1 << self.tt_bits) if self.tt_bits else 0
        # [S, 4] one 32-byte entry per slot, so a probe touches one cache line:
        # (after-state board, value as float64 bits, generation << 6 | remaining depth, unused)
        self.tt = np.zeros((size, 4), dtype=np.uint64)
        self.tt_f = self.tt.view(np.float64)  # [S, 4] the same memory, read as float64
        self.stats = np.zeros(8, dtype=np.int64)
        self.stats[SHIFT] = 64 - self.tt_bits
        self._root = kernels(self.evaluate)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for k in ("tt", "tt_f", "stats", "_root"):
            state.pop(k)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._alloc()

    def _learn_rate(self, nodes: int, seconds: float) -> None:
        """Track nodes/s for time budgets (small searches count for less; 5 M/s until measured)."""
        if self._rate == 0:
            self._rate = 5e6
        if seconds > 0 and nodes > 0:
            w = min(1.0, seconds / 0.01)
            self._rate = (1 - 0.5 * w) * self._rate + 0.5 * w * (nodes / seconds)

    def values(self, board: int, depth: int, node_limit: int = 0) -> tuple[np.ndarray, bool]:
        """Values [4] of each move at fixed ``depth`` and whether the node limit stopped the search."""
        if self.root_hook is not None:
            self.root_hook(np.uint64(board), self.data)
        st = self.stats
        st[GEN] += 1
        st[ABORTED] = 0
        st[LIMIT] = (st[NODES] + node_limit) if node_limit > 0 else 0
        vals = self._root(
            self.data,
            np.uint64(board),
            int(depth),
            self.p_two,
            self.prob_cutoff,
            self.reward_weight,
            self.tt,
            self.tt_f,
            st,
        )
        return vals, bool(st[ABORTED])

    def search(self, board: int, depth: int | None = None, time_budget: float | None = None,
               max_depth: int = 20) -> SearchResult:
        """Search at a fixed ``depth``, or deepen 1, 2, ... while ``time_budget`` seconds last.

        With a time budget the deepest completed depth wins; a depth that would overrun the budget
        is stopped by a node limit estimated from the measured nodes/s.
        """
        t0 = time.perf_counter()
        n0 = int(self.stats[NODES])
        if time_budget is None:
            if depth is None:
                raise ValueError("give a depth or a time_budget")
            vals, _ = self.values(board, depth)
            return SearchResult(vals, depth, int(self.stats[NODES]) - n0, time.perf_counter() - t0)
        best = None
        reached = 0
        for d in range(1, max_depth + 1):
            left = time_budget - (time.perf_counter() - t0)
            if left <= 0 and best is not None:
                break
            limit = int(self._rate * left) if best is not None else 0
            if best is not None and limit < 1:
                break
            s0, c0 = int(self.stats[NODES]), time.perf_counter()
            vals, aborted = self.values(board, d, node_limit=limit)
            self._learn_rate(int(self.stats[NODES]) - s0, time.perf_counter() - c0)
            if aborted:
                break
            best, reached = vals, d
            if not np.isfinite(vals).any() or (int(self.stats[NODES]) - s0) == 0:
                break
        assert best is not None
        return SearchResult(best, reached, int(self.stats[NODES]) - n0, time.perf_counter() - t0)


def build_search(evaluate: Callable[..., float], **settings: Any) -> Callable[..., Expectimax]:
    """A factory of :class:`Expectimax` searches bound to ``evaluate``: ``build_search(ev)(data)``.

    >>> from ai2048.search.heuristics import nneonneo_eval, nneonneo_table
    >>> search = build_search(nneonneo_eval, prob_cutoff=1e-3)((nneonneo_table(),))
    """

    def make(data: tuple, **more: Any) -> Expectimax:
        return Expectimax(evaluate, data, **{**settings, **more})

    return make


def adaptive_depth(board: int, offset: int = 1, min_depth: int = 2, max_depth: int = 12) -> int:
    """nneonneo's depth rule: ``max(3, distinct tiles - 2)`` chance layers, i.e. ``distinct - 1`` here.

    ``offset`` shifts it (0 = nneonneo's rule, 1 = one unit shallower, ...), clamped to
    ``[min_depth, max_depth]``.
    """
    d = max(4, int(distinct_tiles(np.uint64(board))) - 1) - offset
    return int(min(max(d, min_depth), max_depth))


__all__ = [
    "Expectimax",
    "SearchResult",
    "adaptive_depth",
    "build_search",
    "check_depth",
    "distinct_tiles",
    "kernels",
]
