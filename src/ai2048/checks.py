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

import dataclasses
import math
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, overload

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


def _seed_top(hi: int) -> str:
    """A seed's largest value as messages write it: ``2**64-1``, ``2**63-1`` or the number."""
    return {SEED_MAX: "2**64-1", (1 << 63) - 1: "2**63-1"}.get(hi, _bound(hi))


@overload
def seed(name: str, value: Any, *, optional: Literal[False], hi: int | None = SEED_MAX) -> int: ...
@overload
def seed(name: str, value: Any, *, optional: bool = True, hi: int | None = SEED_MAX) -> int | None: ...
def seed(name: str, value: Any, *, optional: bool = True, hi: int | None = SEED_MAX) -> int | None:
    """``value`` as an int in ``0..hi`` (``0..2**64-1`` by default; ``hi=None``: any size), or None
    when ``optional`` (a fresh seed from OS entropy)."""
    if value is None and optional:
        return None
    what = f"a whole number in 0..{_seed_top(hi)}" if hi is not None else "a whole number >= 0"
    if optional:
        what += " or None"
    if not is_whole(value):
        raise _fail(name, value, what, "", CheckTypeError)
    v = int(value)
    if v < 0 or (hi is not None and v > hi):
        raise _fail(name, value, what, "")
    return v


def tile(name: str, value: Any, lo: int = 4, hi: int | None = 1 << 15, *, why: str = "") -> int:
    """``value`` as an int that is a power of two in ``lo..hi`` (a tile, such as 2048; ``hi=None``: no
    top), else an error naming ``name``.

    >>> tile("goal_tile", 2048)
    2048
    """
    what = f"a power of two in {lo}..{hi}" if hi is not None else f"a power of two >= {lo}"
    if not is_whole(value):
        raise _fail(name, value, what, why, CheckTypeError)
    v = int(value)
    if v < lo or (hi is not None and v > hi) or v & (v - 1):
        raise _fail(name, value, what, why)
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
    listed = ", ".join(map(repr, options))
    raise ValueError(f"{name}={shown(value)} is not one of {listed}" + (f" ({why})" if why else ""))


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


KINDS = ("whole", "number", "seed", "choice", "flag", "text", "any")
"""What an :class:`Option` holds; ``any`` is checked by its owner (a path, a dict of weights, ...)."""


@dataclass(frozen=True)
class Option:
    """One option, declared once beside the factory or config that takes it: its one line of help,
    where it comes from, the values it takes (checked here, with the vocabulary above) and the
    narrower range the web app allows. The default is the factory's (its signature) or the config
    field's.

    Attributes:
        help: what the option does, one line (``--help``, ``ai2048 agents NAME``, the web page).
        kind: one of :data:`KINDS`.
        lo, hi, lo_open, hi_open: the range of a ``whole``/``number`` (``hi`` of a ``seed``).
        choices: a ``choice``'s values; for a ``whole``/``number``/``flag``, words taken as well
            (``"adaptive"``).
        none: None is taken, meaning this (``""``: no words); None (the default) refuses None.
        source: the seed or paper it comes from.
        allowed: the values in words, for a ``kind="any"`` option (its owner checks it).
        why: why the range is what it is, added to an error message (``"0 = no table"``).
        web: the web app's range, ``(lo, hi)`` (``None`` in either place: the declared bound);
            ``None`` here keeps the option off the web.
        web_none: whether the web takes None (default: as declared).
        web_choices: the web's choices (of a ``choice``) or words (of the others); default: as declared.
        web_default: the web's value where a request gives none (default: the factory's).
    """

    help: str
    kind: str = "any"
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[Any, ...] = ()
    none: str | None = None
    source: str = ""
    allowed: str = ""
    why: str = ""
    web: tuple[float | None, float | None] | None = None
    web_none: bool | None = None
    web_choices: tuple[Any, ...] | None = None
    web_default: Any = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Option kind={self.kind!r} is not one of {', '.join(KINDS)}")
        if self.kind == "any" and not self.allowed:
            raise ValueError("an Option of kind 'any' says its values in words: give allowed=...")

    def describe(self) -> str:
        """The values it takes, in words: ``"a whole number >= 1 or 'adaptive'"``."""
        whole = self.kind == "whole"
        rng = describe_range(self.lo, self.hi, whole=whole, lo_open=self.lo_open, hi_open=self.hi_open)
        if self.kind in ("whole", "number"):
            text = " ".join(filter(None, ("a whole number" if whole else "a finite number", rng)))
        elif self.kind == "seed":
            text = f"a whole number in 0..{_seed_top(SEED_MAX if self.hi is None else int(self.hi))}"
        elif self.kind == "choice":
            text = "one of " + ", ".join(map(repr, self.choices))
        elif self.kind == "flag":
            text = "True or False"
        elif self.kind == "text":
            text = "text"
        else:
            return self.allowed
        if self.kind in ("whole", "number", "flag"):
            text += "".join(f" or {w!r}" for w in self.choices)
        if self.none is not None:
            text += ", or None" + (f" ({self.none})" if self.none else "")
        return text

    def check(self, name: str, value: Any) -> Any:
        """``value`` checked (in its Python type), else an error naming ``name``, the value and
        :meth:`describe`."""
        if value is None and self.none is not None:
            return None
        if self.kind in ("whole", "number", "flag") and isinstance(value, str) and value in self.choices:
            return value
        try:
            return self._check(name, value)
        except ValueError as e:
            if self.kind == "seed" or (self.none is None and not (self.choices and self.kind != "choice")):
                raise
            why = f" ({self.why})" if self.why else ""
            raise type(e)(f"{name}={shown(value)} must be {self.describe()}{why}") from None

    def _check(self, name: str, value: Any) -> Any:
        if self.kind == "whole":
            lo, hi = (None if b is None else int(b) for b in (self.lo, self.hi))
            return whole(name, value, lo, hi, why=self.why)
        if self.kind == "number":
            return number(name, value, self.lo, self.hi, lo_open=self.lo_open, hi_open=self.hi_open,
                          why=self.why)
        if self.kind == "seed":  # seed's own words ("... or None"), as everywhere a seed is checked
            top = SEED_MAX if self.hi is None else int(self.hi)
            return seed(name, value, optional=self.none is not None, hi=top)
        if self.kind == "choice":
            return choice(name, value, self.choices, why=self.why)
        if self.kind == "flag":
            return flag(name, value)
        if self.kind == "text" and not isinstance(value, str):
            raise _fail(name, value, "text", "", CheckTypeError)
        return value

    def web_option(self) -> Option | None:
        """This option as the web app takes it (its narrower range and choices), or None when the web
        does not. A bound the web narrows is closed; one it keeps stays as declared."""
        if self.web is None:
            return None
        lo, lo_open = (self.lo, self.lo_open) if self.web[0] is None else (self.web[0], False)
        hi, hi_open = (self.hi, self.hi_open) if self.web[1] is None else (self.web[1], False)
        none = self.none if self.web_none is None else ("" if self.web_none else None)
        choices = self.choices if self.web_choices is None else self.web_choices
        return Option(self.help, self.kind, lo, hi, lo_open, hi_open, choices, none, self.source,
                      self.allowed, self.why)

    def contains(self, other: Option) -> bool:
        """Whether every value ``other`` takes is one this option takes (the web's range inside the
        declared one)."""
        if other.kind != self.kind or (other.none is not None and self.none is None):
            return False
        if not set(other.choices) <= set(self.choices):
            return False
        if self.lo is not None and (other.lo is None or other.lo < self.lo
                                    or (self.lo_open and other.lo == self.lo and not other.lo_open)):
            return False
        return not (self.hi is not None and (other.hi is None or other.hi > self.hi
                                             or (self.hi_open and other.hi == self.hi and not other.hi_open)))


def setting(default: Any, help: str, *, lo: float | None = None, hi: float | None = None,
            lo_open: bool = False, hi_open: bool = False, choices: tuple[Any, ...] = (),
            why: str = "") -> Any:
    """A field of a settings dataclass (a trainer's config, a server's limits) declared in one place: its
    default, its one line of help and the values it takes, which :func:`check_fields` checks.

    A ``dataclasses.field`` with ``metadata["help"]`` and ``metadata["range"]``; the field's type says
    the kind (``int``: a whole number, ``float``: a finite number, ``bool``: True or False, ``str``:
    text, or one of ``choices``; ``X | None`` takes None too)::

        @dataclass(frozen=True)
        class Limits:
            workers: int = setting(2, "threads that run agents", lo=1)

            def __post_init__(self) -> None:
                check_fields(self)
    """
    rng = {"lo": lo, "hi": hi, "lo_open": lo_open, "hi_open": hi_open, "choices": tuple(choices),
           "why": why}
    return dataclasses.field(default=default, metadata={"help": help, "range": rng})


_KIND = {int: "whole", float: "number", bool: "flag", str: "text"}

_FIELD_OPTIONS: dict[type, dict[str, Option]] = {}


def field_options(cls: type) -> dict[str, Option]:
    """Each field of settings dataclass ``cls`` as an :class:`Option` (its help, kind and range), from
    its type and :func:`setting`'s declaration; computed once per class."""
    if cls not in _FIELD_OPTIONS:
        hints = typing.get_type_hints(cls)
        out = {}
        for f in dataclasses.fields(cls):
            tp, rng = hints.get(f.name), dict(f.metadata.get("range", {}))
            args = typing.get_args(tp)
            none = "" if type(None) in args else None
            if none is not None:
                tp = next(a for a in args if a is not type(None))
            kind = "choice" if rng.get("choices") and tp is str else _KIND.get(tp, "any")  # type: ignore[arg-type]
            out[f.name] = Option(f.metadata.get("help", f.name), kind, none=none, allowed="a list", **rng)
        _FIELD_OPTIONS[cls] = out
    return _FIELD_OPTIONS[cls]


def check_fields(obj: Any) -> None:
    """Raise ValueError for a field of settings dataclass ``obj`` whose value its :func:`setting` does
    not take.

    ``bool`` fields take only ``True``/``False`` (``"no"`` is truthy and would switch an option on),
    ``int`` fields only whole numbers, ``float`` fields only finite numbers (NaN fails every range
    comparison, so it would pass ``x < low`` checks silently), ``str`` fields only text (or one of their
    ``choices``), each within its declared range; a tuple's items are numbers of its item type. Called
    first in the class's ``__post_init__``; the rules between fields follow there."""
    hints = typing.get_type_hints(type(obj))
    for name, opt in field_options(type(obj)).items():
        v = getattr(obj, name)
        opt.check(name, v)
        tp = hints.get(name)
        if typing.get_origin(tp) is tuple:
            if not isinstance(v, tuple):
                raise CheckTypeError(f"{name}={shown(v)} must be a list")
            args = typing.get_args(tp)
            for x in v:
                if float in args:
                    number(name, x)
                elif int in args:
                    whole(name, x)


__all__ = ["KINDS", "SEED_MAX", "CheckTypeError", "Option", "check_fields", "choice", "describe_range",
           "field_options", "flag", "is_number", "is_whole", "number", "probability", "seed", "setting",
           "shown", "tile", "whole"]
