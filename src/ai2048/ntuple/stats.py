"""Seed 004's results table (tile, % reaching it, % ending on it) with Wilson 95% intervals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (as fractions in [0, 1])."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, centre - half), min(1.0, centre + half))


def tile_table(max_exponents: np.ndarray) -> list[dict[str, Any]]:
    """One row per distinct final max tile, ascending (seed 004's NUM / WIN RATE / END RATE).

    ``reach`` = % of games whose largest tile is >= the tile, ``end`` = % ending on it exactly;
    ``reach_lo``/``reach_hi`` its Wilson 95% interval in %.
    """
    e = np.asarray(max_exponents, dtype=np.int64)
    n = int(e.size)
    rows = []
    for x in np.unique(e):
        k = int((e >= x).sum())
        lo, hi = wilson(k, n)
        rows.append(
            {
                "tile": 1 << int(x),
                "reach": 100.0 * k / n,
                "reach_lo": 100.0 * lo,
                "reach_hi": 100.0 * hi,
                "end": 100.0 * int((e == x).sum()) / n,
            }
        )
    return rows


def reach_rate(max_exponents: np.ndarray, tile: int) -> float:
    """% of games whose largest tile is at least ``tile``."""
    e = np.asarray(max_exponents)
    return 100.0 * float((e >= int(tile).bit_length() - 1).mean()) if e.size else 0.0


def format_table(rows: list[dict[str, Any]]) -> str:
    """The table as text, as seed 004 prints it, with the interval added."""
    lines = [f"{'tile':>6}  {'reach %':>8}  {'95% CI':>15}  {'end %':>6}"]
    for r in rows:
        ci = f"[{r['reach_lo']:.1f}, {r['reach_hi']:.1f}]"
        lines.append(f"{r['tile']:>6}  {r['reach']:>8.1f}  {ci:>15}  {r['end']:>6.1f}")
    return "\n".join(lines)
