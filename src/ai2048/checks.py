"""The one vocabulary for checking a user's value: whole, number, probability, seed, choice, flag.

Every layer (the Python API, trainer configs, agent options, the command line, the web app) asks
"is this a whole number in range?" through these, so one value is refused in one way everywhere,
before any work starts. Each check returns the value in its plain Python type (numpy scalars such
as ``np.int64(3)`` or ``np.float32(0.5)`` are accepted where the Python type is) and raises with a
message that names the option, the value given and what it must be::

    >>> whole("depth", 0, 1, 60)
    Traceback (most recent call last):
    ...
    ValueError: depth=0 must be a whole number in 1..60

A value of the wrong type raises :class:`CheckTypeError`, which is both a ``TypeError`` (Python's
convention) and a ``ValueError`` (so a layer reporting bad settings catches one kind). ``bool`` is
never a number (``True`` would pass as 1), and NaN and infinity are never numbers unless a check
says ``finite=False`` (NaN fails every comparison, so it would slip past a range silently).

No ai2048 imports: this module sits at layer 0, below everything that checks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

SEED_MAX = (1 << 64) - 1
"""Largest seed: seeds are 64-bit (the SplitMix64 state, numpy's ``SeedSequence`` entropy)."""


class CheckTypeError(TypeError, ValueError):
    """A value of the wrong type (a string for a number, a bool for a whole number, ...)."""


def shown(value: Any, width: int = 40) -> str:
    """``value`` as an error message shows it: numbers plainly, the rest by ``repr``, at most about
    ``width`` characters (a request may send megabytes)."""
    if isinstance(value, (bool, np.bool_, int, float, np.integer, np.floating)):
        text = str(value.item() if isinstance(value, np.generic) else value)
    else:
        text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _bound(x: float) -> str:
    """A bound as a message writes it: ``100,000`` (separators from 10,000 up), ``0.5``, ``1e-04``."""
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        n = int(x)
        return f"{n:,}" if abs(n) >= 10_000 else str(n)
    return f"{x:g}"


def describe_range(lo: float | None, hi: float | None, *, whole: bool,
                   lo_open: bool = False, hi_open: bool = False) -> str:
    """``"in 1..60"``, ``">= 0"``, ``"in (0, 1]"``, ``"> 0"`` or ``""``: the range a message states."""
    if lo is not None and hi is not None:
        if whole:
            return f"in {_bound(lo)}..{_bound(hi)}"
        return f"in {'(' if lo_open else '['}{_bound(lo)}, {_bound(hi)}{')' if hi_open else ']'}"
    if lo is not None:
        return f"{'>' if lo_open else '>='} {_bound(lo)}"
    if hi is not None:
        return f"{'<' if hi_open else '<='} {_bound(hi)}"
    return ""


def _fail(name: str, value: Any, what: str, why: str, error: type[Exception] = ValueError) -> Exception:
    return error(f"{name}={shown(value)} must be {what}" + (f" ({why})" if why else ""))


def is_whole(value: Any) -> bool:
    """Whether ``value`` is an int or a numpy integer (never a bool)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value: Any) -> bool:
    """Whether ``value`` is an int, a float or a numpy number (never a bool; NaN and inf are numbers here)."""
    numeric = isinstance(value, (int, float, np.integer, np.floating))
    return numeric and not isinstance(value, (bool, np.bool_))


def whole(name: str, value: Any, lo: int | None = None, hi: int | None = None, *, why: str = "") -> int:
    """``value`` as an ``int`` in ``lo..hi`` (either bound may be None), else an error naming ``name``.

    >>> whole("games", np.int64(3), 1)
    3
    """
    what = " ".join(filter(None, ("a whole number", describe_range(lo, hi, whole=True))))
    if not is_whole(value):
        raise _fail(name, value, what, why, CheckTypeError)
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _fail(name, value, what, why)
    return v


def number(name: str, value: Any, lo: float | None = None, hi: float | None = None, *,
           lo_open: bool = False, hi_open: bool = False, finite: bool = True, why: str = "") -> float:
    """``value`` as a ``float`` in the range (``[lo, hi]``; ``lo_open``/``hi_open`` leave a bound out),
    else an error naming ``name``. NaN and infinity are refused unless ``finite=False`` (then only the
    bounds decide, and NaN, which no bound admits, is still refused where there is a bound).

    >>> number("gamma", 0.5, 0, 1)
    0.5
    """
    rng = describe_range(lo, hi, whole=False, lo_open=lo_open, hi_open=hi_open)
    what = " ".join(filter(None, ("a finite number" if finite else "a number", rng)))
    if not is_number(value):
        raise _fail(name, value, what, why, CheckTypeError)
    v = float(value)
    if finite and not math.isfinite(v):
        raise _fail(name, value, what, why or "NaN and infinity are not settings")
    low_bad = lo is not None and not (v > lo if lo_open else v >= lo)
    high_bad = hi is not None and not (v < hi if hi_open else v <= hi)
    if low_bad or high_bad:
        raise _fail(name, value, what, why)
    return v


def probability(name: str, value: Any, *, zero: bool = True, why: str = "") -> float:
    """``value`` as a float in ``[0, 1]`` (``(0, 1]`` without ``zero``), else an error naming ``name``."""
    return number(name, value, 0.0, 1.0, lo_open=not zero, why=why)


def seed(name: str, value: Any, *, optional: bool = True, hi: int | None = SEED_MAX) -> int | None:
    """``value`` as an int in ``0..hi`` (``0..2**64-1`` by default; ``hi=None``: any size), or None
    when ``optional`` (a fresh seed from OS entropy)."""
    if value is None and optional:
        return None
    top = {SEED_MAX: "2**64-1", (1 << 63) - 1: "2**63-1"}.get(hi, _bound(hi)) if hi is not None else ""
    what = f"a whole number in 0..{top}" if top else "a whole number >= 0"
    if optional:
        what += " or None"
    if not is_whole(value):
        raise _fail(name, value, what, "", CheckTypeError)
    v = int(value)
    if v < 0 or (hi is not None and v > hi):
        raise _fail(name, value, what, "")
    return v


def choice(name: str, value: Any, choices: Iterable[Any], *, why: str = "") -> Any:
    """The one of ``choices`` that ``value`` is (``np.int64(2)`` is the choice ``2``; ``"1"`` is not ``1``,
    ``True`` is not ``1``), else an error listing them."""
    options = tuple(choices)
    for c in options:
        try:
            if _same(value, c):
                return c
        except (TypeError, ValueError):  # an array compared element-wise
            break
    raise _fail(name, value, "one of " + ", ".join(map(repr, options)), why)


def _same(value: Any, c: Any) -> bool:
    """``value`` is the choice ``c``: equal and of its kind (``True`` is not ``1``, ``"1"`` not ``1``)."""
    if isinstance(value, (bool, np.bool_)) or isinstance(c, bool):
        return isinstance(value, (bool, np.bool_)) and isinstance(c, bool) and bool(value) == c
    if is_whole(value) and is_whole(c):
        return int(value) == int(c)
    return type(value) is type(c) and bool(value == c)


def flag(name: str, value: Any) -> bool:
    """``value`` if it is a bool (numpy's too): a string such as ``"no"`` is truthy and would switch an
    option on."""
    if not isinstance(value, (bool, np.bool_)):
        raise _fail(name, value, "True or False", "", CheckTypeError)
    return bool(value)


__all__ = ["SEED_MAX", "CheckTypeError", "choice", "describe_range", "flag", "is_number", "is_whole",
           "number", "probability", "seed", "shown", "whole"]
