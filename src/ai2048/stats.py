"""Wilson intervals and tile tables: the one place results are turned into rates.

Every table is seed 004's (tile, share of games reaching it, share ending on it) with Wilson
score intervals (Wilson 1927), built from the final largest tile of each game.
:func:`tile_table` is the full form evaluation results store (counts, fractions, both intervals,
every tile from the smallest to the largest final max tile); :func:`tile_table_percent` is the
short form training metrics and model cards print (percentages, tiles some game ended on).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

Z95 = 1.959964
"""Standard normal quantile of a two-sided 95% interval."""


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes in ``n`` trials (95% by default), as fractions.

    ``n == 0`` gives the uninformative ``(0, 1)``; ``k == 0`` and ``k == n`` give exact 0 and 1 ends.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if k == 0 else max(0.0, centre - half)
    hi = 1.0 if k == n else min(1.0, centre + half)
    return (lo, hi)


def tile_table(max_tiles: Any) -> list[dict[str, Any]]:
    """Seed 004's table from each game's final largest tile (values, [N]): one row per tile from the
    smallest to the largest, ``reached`` (max tile >= t) and ``ended`` (== t) as counts, rates
    (fractions) and Wilson 95% intervals. Empty for no games."""
    tiles = np.asarray(max_tiles, dtype=np.int64).reshape(-1)
    n = int(tiles.size)
    if n == 0:
        return []
    rows = []
    t = int(tiles.min())
    while t <= int(tiles.max()):
        reached = int((tiles >= t).sum())
        ended = int((tiles == t).sum())
        rows.append({
            "tile": t,
            "reached": reached,
            "reach_rate": reached / n,
            "reach_ci": list(wilson(reached, n)),
            "ended": ended,
            "end_rate": ended / n,
            "end_ci": list(wilson(ended, n)),
        })
        t *= 2
    return rows


def tile_table_percent(max_exponents: Any) -> list[dict[str, Any]]:
    """The short form of :func:`tile_table` from final max *exponents*: one row per tile some game
    ended on, ascending, with ``reach``, its interval ``reach_lo``/``reach_hi`` and ``end`` in %."""
    e = np.asarray(max_exponents, dtype=np.int64).reshape(-1)
    rows = tile_table(np.left_shift(1, e)) if e.size else []
    return [
        {
            "tile": r["tile"],
            "reach": 100.0 * r["reach_rate"],
            "reach_lo": 100.0 * r["reach_ci"][0],
            "reach_hi": 100.0 * r["reach_ci"][1],
            "end": 100.0 * r["end_rate"],
        }
        for r in rows
        if r["ended"] > 0
    ]


def reach_rate(max_exponents: Any, tile: int) -> float:
    """% of games whose largest tile (given as exponents) is at least ``tile``; 0 for no games."""
    e = np.asarray(max_exponents)
    return 100.0 * float((e >= int(tile).bit_length() - 1).mean()) if e.size else 0.0


def format_table(rows: list[dict[str, Any]]) -> str:
    """A :func:`tile_table_percent` table as text, as seed 004 prints it, with the interval added."""
    lines = [f"{'tile':>6}  {'reach %':>8}  {'95% CI':>15}  {'end %':>6}"]
    for r in rows:
        ci = f"[{r['reach_lo']:.1f}, {r['reach_hi']:.1f}]"
        lines.append(f"{r['tile']:>6}  {r['reach']:>8.1f}  {ci:>15}  {r['end']:>6.1f}")
    return "\n".join(lines)


__all__ = ["Z95", "format_table", "reach_rate", "tile_table", "tile_table_percent", "wilson"]
