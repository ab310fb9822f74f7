"""``ai2048.checks``: the one check vocabulary, against plain references and a table of bad inputs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048 import checks
from ai2048.checks import CheckTypeError

C, TE = checks, CheckTypeError

_ANY = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.integers(-(2**70), 2**70).map(lambda i: np.int64(max(min(i, 2**63 - 1), -(2**63)))),
    st.floats(width=32).map(np.float32), st.lists(st.integers(), max_size=2),
)
_BOUND = st.one_of(st.none(), st.integers(-1000, 1000))


def _outcome(f: Any, *args: Any, **kw: Any) -> Any:
    """The check's result, or the kind of error it raised."""
    try:
        return f(*args, **kw)
    except CheckTypeError:
        return "type"
    except ValueError:
        return "value"


def _whole_reference(v: Any, lo: int | None, hi: int | None) -> Any:
    if type(v) is bool or not (type(v) is int or isinstance(v, np.integer)):
        return "type"
    return int(v) if (lo is None or v >= lo) and (hi is None or v <= hi) else "value"


def _number_reference(v: Any, lo: int | None, hi: int | None, lo_open: bool) -> Any:
    if type(v) is bool or not isinstance(v, (int, float, np.integer, np.floating)):
        return "type"
    x = float(v)
    if x != x or x in (math.inf, -math.inf):
        return "value"
    if lo is not None and (x < lo or (lo_open and x == lo)):
        return "value"
    return x if hi is None or x <= hi else "value"


@settings(max_examples=300, deadline=None)
@given(_ANY, _BOUND, _BOUND)
def test_whole__agrees_with_a_plain_reference(v: Any, lo: int | None, hi: int | None) -> None:
    got = _outcome(checks.whole, "n", v, lo, hi)
    assert got == _whole_reference(v, lo, hi)
    assert type(got) in (int, str)


@settings(max_examples=300, deadline=None)
@given(_ANY, _BOUND, _BOUND, st.booleans())
def test_number__agrees_with_a_plain_reference(v: Any, lo: int | None, hi: int | None, lo_open: bool) -> None:
    got = _outcome(checks.number, "x", v, lo, hi, lo_open=lo_open)
    want = _number_reference(v, lo, hi, lo_open)
    assert got == want
    assert type(got) in (float, str)


@settings(max_examples=200, deadline=None)
@given(_ANY, st.booleans())
def test_seed__is_a_whole_number_in_64_bits_or_none(v: Any, optional: bool) -> None:
    got = _outcome(checks.seed, "seed", v, optional=optional)
    if v is None:
        assert got == (None if optional else "type")
    else:
        assert got == _whole_reference(v, 0, 2**64 - 1)


@settings(max_examples=200, deadline=None)
@given(_ANY)
def test_probability__is_a_finite_number_in_the_unit_interval(v: Any) -> None:
    assert _outcome(checks.probability, "p", v) == _number_reference(v, 0, 1, False)
    assert _outcome(checks.probability, "p", v, zero=False) == _number_reference(v, 0, 1, True)


@settings(max_examples=200, deadline=None)
@given(_ANY)
def test_flag__takes_bools_only(v: Any) -> None:
    assert _outcome(checks.flag, "f", v) == (bool(v) if isinstance(v, bool) else "type")


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: C.whole("depth", 0, 1, 60), ValueError, "depth=0 must be a whole number in 1..60"),
        (lambda: C.whole("depth", True, 1, 60), TE, "depth=True must be a whole number"),
        (lambda: C.whole("depth", 2.0, 1), TE, "depth=2.0 must be a whole number >= 1"),
        (lambda: C.whole("depth", "3"), TE, "depth='3' must be a whole number"),
        (lambda: C.whole("games", 10**6, 1, 100_000), ValueError,
         "games=1000000 must be a whole number in 1..100,000"),
        (lambda: C.whole("w", 9, hi=8, why="a thread each"), ValueError,
         r"w=9 must be a whole number <= 8 \(a thread each\)"),
        (lambda: C.number("lr", 0.0, 0, lo_open=True), ValueError, r"lr=0.0 must be a finite number > 0"),
        (lambda: C.number("lr", math.nan, 0), ValueError, "lr=nan must be a finite number >= 0 .*NaN"),
        (lambda: C.number("lr", np.float32("inf")), ValueError, "lr=inf must be a finite number"),
        (lambda: C.number("lr", np.True_), TE, "lr=True must be a finite number"),
        (lambda: C.number("lr", [1.0]), TE, r"lr=\[1.0\] must be a finite number"),
        (lambda: C.number("t", 1.0, 0, 1, hi_open=True), ValueError,
         r"t=1.0 must be a finite number in \[0, 1\)"),
        (lambda: C.number("t", -math.inf, finite=False, lo=0), ValueError, "t=-inf must be a number >= 0"),
        (lambda: C.number("t", math.nan, finite=False, hi=1), ValueError, "t=nan must be a number <= 1"),
        (lambda: C.probability("p_two", 1.5), ValueError, r"p_two=1.5 must be a finite number in \[0, 1\]"),
        (lambda: C.probability("p_two", 0, zero=False), ValueError, r"p_two=0 must be .* in \(0, 1\]"),
        (lambda: C.seed("seed", -1), ValueError, r"seed=-1 must be a whole number in 0..2\*\*64-1 or None"),
        (lambda: C.seed("seed", 2**64), ValueError, r"seed=18446744073709551616 must be"),
        (lambda: C.seed("seed", 1.0), TE, "seed=1.0 must be a whole number"),
        (lambda: C.seed("seed", None, optional=False), TE, r"seed=None must be .*2\*\*64-1$"),
        (lambda: C.seed("seed", 2**63, hi=(1 << 63) - 1), ValueError, r"0..2\*\*63-1"),
        (lambda: C.seed("seed", -1, hi=None), ValueError, "seed=-1 must be a whole number >= 0 or None"),
        (lambda: C.choice("net", "mlp", ("fc", "conv")), ValueError, "net='mlp' is not one of 'fc', 'conv'"),
        (lambda: C.choice("k", True, (1, 2)), ValueError, "k=True is not one of 1, 2"),
        (lambda: C.choice("k", "1", (1, 2)), ValueError, "k='1' is not one of 1, 2"),
        (lambda: C.choice("k", np.array([1, 2]), (1, 2)), ValueError, "is not one of 1, 2"),
        (lambda: C.flag("prune", "no"), TE, "prune='no' must be True or False"),
        (lambda: C.flag("prune", 1), TE, "prune=1 must be True or False"),
        (lambda: C.whole("n", "x" * 1000), TE, r"n='xxxx.*\.\.\. must be"),
    ],
)
def test_checks__refuse_bad_input_naming_the_option_the_value_and_the_range(
    call: Any, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message) as info:
        call()
    assert isinstance(info.value, ValueError)  # a wrong type is a ValueError too: one except for settings
    assert len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("call", "want"),
    [
        (lambda: checks.whole("n", np.int64(3), 1, 3), 3),
        (lambda: checks.whole("n", np.uint8(255)), 255),
        (lambda: checks.number("x", np.float32(0.5), 0, 1), 0.5),
        (lambda: checks.number("x", np.int32(2)), 2.0),
        (lambda: checks.number("x", math.inf, finite=False), math.inf),
        (lambda: checks.probability("p", 1), 1.0),
        (lambda: checks.seed("s", np.uint64(2**64 - 1)), 2**64 - 1),
        (lambda: checks.seed("s", 2**70, hi=None), 2**70),
        (lambda: checks.choice("k", np.int64(2), (1, 2)), 2),
        (lambda: checks.flag("f", np.False_), False),
    ],
)
def test_checks__accept_numpy_scalars_and_return_python_types(call: Any, want: Any) -> None:
    got = call()
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (5, ValueError, r"tile=5 must be a power of two in 4\.\.32768"),
        (2, ValueError, r"tile=2 must be a power of two"),
        (65536, ValueError, r"tile=65536 must be"),
        (True, TE, r"tile=True must be a power of two"),
        (2048.0, TE, r"tile=2048.0 must be"),
    ],
)
def test_tile__refuses_what_is_not_a_power_of_two_in_range(value: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        checks.tile("tile", value)
    assert checks.tile("tile", np.int64(16384)) == 16384
    assert checks.tile("tile", 1 << 20, hi=None) == 1 << 20


@dataclass(frozen=True)
class _Limits:
    workers: int = checks.setting(2, "threads", lo=1)
    budget: float = checks.setting(2.0, "seconds per request", lo=0, lo_open=True, why="seconds")
    mode: str = checks.setting("fast", "how", choices=("fast", "slow"))
    verbose: bool = checks.setting(False, "say more")
    cap: int | None = checks.setting(None, "a cap, or None", lo=0)
    widths: tuple[int, ...] = checks.setting((8, 4), "layer widths")

    def __post_init__(self) -> None:
        checks.check_fields(self)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"workers": 0}, r"workers=0 must be a whole number >= 1$"),
        ({"workers": True}, r"workers=True must be a whole number >= 1"),
        ({"budget": float("nan")}, r"budget=nan must be a finite number > 0 \(seconds\)"),
        ({"budget": 0}, r"budget=0 must be a finite number > 0 \(seconds\)"),
        ({"mode": "quick"}, r"mode='quick' is not one of 'fast', 'slow'"),
        ({"verbose": "no"}, r"verbose='no' must be True or False"),
        ({"cap": -1}, r"cap=-1 must be a whole number >= 0, or None"),
        ({"widths": (8, 2.5)}, r"widths=2.5 must be a whole number"),
        ({"widths": 8}, r"widths=8 must be a list"),
    ],
)
def test_check_fields__refuses_each_bad_field_by_name(kw: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _Limits(**kw)


def test_setting__declares_help_and_range_once() -> None:
    assert _Limits(cap=None, budget=1) == _Limits(budget=1)
    opts = checks.field_options(_Limits)
    assert opts["workers"].help == "threads" and opts["workers"].describe() == "a whole number >= 1"
    assert opts["cap"].none == "" and opts["mode"].kind == "choice" and opts["verbose"].kind == "flag"
