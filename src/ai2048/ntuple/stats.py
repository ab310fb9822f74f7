"""Deprecated home of the n-tuple trainer's tile table: everything now lives in :mod:`ai2048.stats`.

Kept only so modules not yet switched keep importing (``train/ntuple.py``, ``ntuple/play.py``);
``tile_table`` here is :func:`ai2048.stats.tile_table_percent` (the percent form).
"""

from __future__ import annotations

from ai2048.stats import format_table, reach_rate, wilson
from ai2048.stats import tile_table_percent as tile_table

__all__ = ["format_table", "reach_rate", "tile_table", "wilson"]
