"""A slow reference for the endgame tables: a table's value by plain recursion over the reference
rules, with real large tiles in the fixed cells (so walls play no part) and the spec's bounds
(sum cap, pruning) applied as the spec's docstring states them."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable

from ai2048.engine import reference
from ai2048.rules import CAPPED_RULES
from ai2048.tables.formations import TableSpec


def cells_of(key: int) -> list[int]:
    return [(key >> (4 * q)) & 15 for q in range(16)]


def past_bounds(spec: TableSpec, free: list[int]) -> bool:
    """Whether the free tiles (exponents, 0 empty, all below the target) pass a bound of ``spec``."""
    if sum(2 ** e for e in free if e) > spec.max_sum:
        return True
    if not spec.pruned:
        return False
    if sum(2 ** e for e in free if 0 < e < spec.large_from) > spec.small_sum:
        return True
    large = Counter(e for e in free if e >= spec.large_from)
    return any(n > (2 if e == min(large) else 1) for e, n in large.items())


def brute_force(spec: TableSpec, large: list[int]) -> Callable[[int], float]:
    """P(goal) of a table key by recursion, the fixed cells holding ``large`` (in ``fixed`` order)."""
    f = spec.formation
    t = spec.target

    @functools.cache
    def value(cells: tuple) -> float:
        empty = [c for c in f.free if cells[c] == 0]
        total = 0.0
        for c in empty:
            for v, p in ((1, spec.p_two), (2, 1 - spec.p_two)):
                b = list(cells)
                b[c] = v
                best = 0.0
                for a in range(4):
                    r, _ = reference.move(b, a, CAPPED_RULES)  # a table key holds its walls as 15s
                    if r == b:
                        continue
                    if any(r[q] != b[q] for q in f.fixed):
                        val = 0.0
                    elif any(r[q] == t for q in f.goals):
                        val = 1.0
                    elif any(r[q] >= t for q in f.free) or past_bounds(spec, [r[q] for q in f.free]):
                        val = 0.0
                    else:
                        val = value(tuple(r))
                    best = max(best, val)
                total += p * best
        return total / len(empty)

    def of_key(key: int) -> float:
        cells = cells_of(key)
        for q, e in zip(f.fixed, large, strict=False):
            cells[q] = e
        return value(tuple(cells))

    return of_key
