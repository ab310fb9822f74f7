"""Bounded endgame tables (a sum cap, pruning): exact against a brute force that applies the same
bounds, never above the exact table, equal to it where no bound binds, and named by their bounds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _tables_reference import brute_force
from ai2048.tables import store
from ai2048.tables.build import build
from ai2048.tables.formations import Formation, TableSpec

# The free cells are the bottom-right 2x3 block; the anchor (1, 1) sits above its goal cell (2, 1).
TINY = Formation("tiny", fixed=(0, 1, 2, 3, 4, 5, 6, 7, 8, 12), anchor=5, goals=(9,))
EXACT = TableSpec(TINY, 4, 2 ** 12)
LARGE = [13, 12, 11, 10, 9, 4, 8, 7, 6, 5]  # distinct, the anchor (cell 5) holds the target 16

BOUNDED = {
    "capped": TableSpec(TINY, 4, 20),
    "pruned": TableSpec(TINY, 4, 2 ** 12, small_sum=8, large_from=3),
    "both": TableSpec(TINY, 4, 24, small_sum=10, large_from=3),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounded")
    for spec in (EXACT, *BOUNDED.values()):
        build(spec, d)
    return d


def _values(table: store.Table) -> dict[int, float]:
    return dict(zip(table.keys.tolist(), np.asarray(table.values, np.float64).tolist(), strict=True))


@pytest.mark.parametrize("kind", list(BOUNDED))
def test_bounded_table__is_exact_against_brute_force_with_the_same_bounds(built, kind):
    spec = BOUNDED[kind]
    table = store.load(spec, built, verify=True)
    ref = brute_force(spec, LARGE)
    want = np.array([ref(int(k)) for k in table.keys])
    np.testing.assert_allclose(np.asarray(table.values, np.float64), want, atol=2e-6)


@pytest.mark.parametrize("kind", list(BOUNDED))
def test_bounded_table__never_exceeds_the_exact_table_and_binds_somewhere(built, kind):
    exact = _values(store.load(EXACT, built))
    table = store.load(BOUNDED[kind], built)
    got = _values(table)
    assert got.keys() <= exact.keys()  # a bounded table's positions are the exact table's
    assert len(got) < len(exact)
    assert all(v <= exact[k] + 1e-6 for k, v in got.items())
    assert any(v < exact[k] - 1e-4 for k, v in got.items())
    assert float(table.values[0]) < exact[int(table.keys[0])]  # from the empty region too


def test_bound_that_cannot_bind__gives_the_exact_table(built, tmp_path):
    exact = store.load(EXACT, built)
    top = int(np.nonzero(np.diff(exact.offsets))[0].max())  # the highest layer holding positions
    loose = TableSpec(TINY, 4, 2 * top)  # a cap at the top layer's sum cannot bind
    table = store.load(loose, build(loose, tmp_path).parent)
    assert loose.max_sum < EXACT.max_sum
    np.testing.assert_array_equal(table.keys, exact.keys)
    np.testing.assert_array_equal(table.values, exact.values)


def test_bounds_are_the_tables_identity(built):
    spec = BOUNDED["both"]
    assert (EXACT.name, BOUNDED["capped"].name, BOUNDED["pruned"].name, spec.name) == (
        "tiny-16", "tiny-16-s20", "tiny-16-p", "tiny-16-s24-p")
    meta = json.loads((built / spec.name / store.META).read_text())
    assert meta["spec"]["max_sum"] == 24
    assert (meta["spec"]["small_sum"], meta["spec"]["large_from"]) == (10, 3)
    assert "small_sum" not in EXACT.describe()  # the exact tables keep the identity they were built with
    # a table of other bounds under the same name is refused, naming the rebuild
    other = TableSpec(TINY, 4, 24, small_sum=12, large_from=3)
    assert other.name == spec.name
    with pytest.raises(store.TableError, match="rebuild it"):
        store.load(other, built)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"max_sum": 8}, r"table max_sum=8 must be a whole number >= 16"),
    ({"max_sum": 2 ** 12, "small_sum": 8}, r"small_sum and large_from together"),
    ({"max_sum": 2 ** 12, "small_sum": 8, "large_from": 4}, r"table large_from=4 must be .* 2\.\.3"),
    ({"max_sum": 2 ** 12, "small_sum": 4, "large_from": 3}, r"table small_sum=4 must be .* >= 8"),
    ({"max_sum": float("nan")}, r"table max_sum=nan must be a whole number"),
])
def test_bad_bounds__are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TableSpec(TINY, 4, **kwargs)


def test_a_cap_that_binds_but_is_not_in_the_name__is_refused(tmp_path):
    spec = TableSpec(TINY, 4, 32)  # twice the target: not named, yet six free cells reach sums past 32
    assert not spec.capped and spec.name == "tiny-16"
    with pytest.raises(ValueError, match=r"max_sum 32 bound its enumeration.*below 32"):
        build(spec, tmp_path)
    assert not (tmp_path / "tiny-16" / store.META).exists()
