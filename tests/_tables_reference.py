"""A slow reference for the endgame tables: a table's value by plain recursion over the reference
rules, with real large tiles in the fixed cells (so walls play no part) and the spec's bounds
(sum cap, pruning) applied as the spec's docstring states them. A transport formation's large tiles
may stand in any of its placements, read row by row in the same order; the goal counts at home only."""

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
    home = tuple(sorted(f.fixed))
    places = [home] + [tuple(sorted(p)) for p in f.slides]
    order = [large[f.fixed.index(q)] for q in home]  # the large tiles read row by row

    def placement(cells: list[int]) -> tuple | None:
        """The placement holding the large tiles in their order, or None (the formation broke)."""
        for p in places:
            if [cells[q] for q in p] == order:
                return p
        return None

    @functools.cache
    def value(cells: tuple) -> float:
        walls = placement(list(cells))
        free = [c for c in range(16) if c not in walls]
        empty = [c for c in free if cells[c] == 0]
        total = 0.0
        for c in empty:
            for v, p in ((1, spec.p_two), (2, 1 - spec.p_two)):
                b = list(cells)
                b[c] = v
                best = 0.0
                for a in range(4):
                    r, _ = reference.move(b, a, CAPPED_RULES)
                    if r == b:
                        continue
                    at = placement(r)
                    off = [q for q in range(16) if at is None or q not in at]
                    if at is None:
                        val = 0.0
                    elif at == home and any(r[q] == t for q in f.goals):
                        val = 1.0
                    elif any(r[q] >= t for q in off) or past_bounds(spec, [r[q] for q in off]):
                        val = 0.0
                    else:
                        val = value(tuple(r))
                    best = max(best, val)
                total += p * best
        return total / len(empty)

    def of_key(key: int) -> float:
        cells = cells_of(key)
        walls = [q for q in range(16) if cells[q] == 15]
        for q, e in zip(walls, order, strict=True):
            cells[q] = e
        return value(tuple(cells))

    return of_key
