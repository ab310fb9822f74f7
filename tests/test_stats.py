"""The one stats module: Wilson intervals and seed 004's tile table in its two forms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ai2048.stats import format_table, reach_rate, tile_table, tile_table_percent, wilson


def test_tile_table__counts_every_tile_from_the_smallest_to_the_largest():
    rows = tile_table([512, 2048, 2048, 128])
    assert [r["tile"] for r in rows] == [128, 256, 512, 1024, 2048]
    assert [r["reached"] for r in rows] == [4, 3, 3, 2, 2]
    assert [r["ended"] for r in rows] == [1, 0, 1, 0, 2]
    assert rows[1]["reach_ci"] == list(wilson(3, 4)) and rows[1]["end_ci"] == [
        0.0,
        pytest.approx(0.4899, abs=1e-4),
    ]
    assert tile_table([]) == []


def test_tile_table_percent__keeps_the_tiles_games_ended_on_in_percent():
    rows = tile_table_percent(np.array([9, 11, 11, 7]))  # 512, 2048, 2048, 128
    assert [r["tile"] for r in rows] == [128, 512, 2048]
    assert [r["reach"] for r in rows] == [100.0, 75.0, 50.0]
    assert [r["end"] for r in rows] == [25.0, 25.0, 50.0]
    lo, hi = wilson(3, 4)
    assert (rows[1]["reach_lo"], rows[1]["reach_hi"]) == (100 * lo, 100 * hi)
    assert tile_table_percent(np.array([], dtype=np.int64)) == []


@given(st.lists(st.integers(1, 15), min_size=1, max_size=60))
def test_tile_table_percent__is_tile_table_in_percent(exps):
    full = {r["tile"]: r for r in tile_table([1 << e for e in exps])}
    for r in tile_table_percent(exps):
        f = full[r["tile"]]
        assert f["ended"] > 0
        assert r["reach"] == pytest.approx(100 * f["reach_rate"])
        assert (r["reach_lo"], r["reach_hi"]) == pytest.approx(
            (100 * f["reach_ci"][0], 100 * f["reach_ci"][1])
        )
        assert r["reach"] == pytest.approx(reach_rate(exps, r["tile"]))
    assert sum(r["end"] for r in tile_table_percent(exps)) == pytest.approx(100.0)


def test_format_table__one_line_a_tile_with_the_interval():
    text = format_table(tile_table_percent([11, 11, 10, 12]))
    lines = text.splitlines()
    assert lines[0].split() == ["tile", "reach", "%", "95%", "CI", "end", "%"]
    assert lines[1].split()[:2] == ["1024", "100.0"] and lines[-1].split()[0] == "4096"
    assert reach_rate([], 2048) == 0.0
