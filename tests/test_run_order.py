"""The order the xdist workers get the test files in (tests/conftest.py): the longest from a cold
cache first, then the others by number of tests."""

from __future__ import annotations

from pathlib import Path

from conftest import HEAVY_FIRST, run_order


def test_heavy_first__names_test_files_of_this_suite() -> None:
    here = Path(__file__).parent
    assert HEAVY_FIRST and all((here / name).is_file() for name in HEAVY_FIRST)


def test_run_order__heavy_files_first_in_their_order_then_by_number_of_tests() -> None:
    first, second = HEAVY_FIRST[:2]
    nodeids = ["tests/test_a.py::t1", f"tests/{second}::s1", "tests/test_b.py::t1", "tests/test_b.py::t2[x]",
               f"tests/{first}::f1", f"tests/{first}::f2", "tests/test_c.py::t1"]
    assert run_order(nodeids) == [f"tests/{first}::f1", f"tests/{first}::f2", f"tests/{second}::s1",
                                  "tests/test_b.py::t1", "tests/test_b.py::t2[x]", "tests/test_a.py::t1",
                                  "tests/test_c.py::t1"]
