"""Building frozen trainer configs from presets and ``key=value`` overrides, with clear errors.

No torch here: the CLI and tests use it without loading a network library.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass
from typing import Any, ClassVar


def option(default: Any, help: str) -> Any:
    """A config field with its one-line ``--help`` text (``field(default=..., metadata={"help": ...})``)."""
    return dataclasses.field(default=default, metadata={"help": help})


BUDGET = "duration"
"""The one name of every trainer's wall-clock budget (a config field, in seconds; 0 = none)."""

BUDGET_HELP = "wall-clock budget in seconds of training, counted across resumes (0 = none)"
"""The help text of every trainer's :data:`BUDGET` field."""


@dataclass(frozen=True)
class RunConfig:
    """The run fields every trainer's config starts with (its own fields follow); the
    :class:`~ai2048.train.run.Loop` reads them. A trainer redeclares one to give it its own default
    or help (``checkpoint_every`` counts the trainer's steps: games, epochs)."""

    seed: int = option(0, "seed of every random source of the run (games, moves, sampling, network init)")
    duration: float = option(0.0, BUDGET_HELP + "; training stops at whichever budget ends first")
    checkpoint_every: int = option(1, "save a checkpoint every this many steps")
    progress: bool = option(True, "show a progress bar")

    RESUMABLE: ClassVar[tuple[str, ...]] = ("duration", "checkpoint_every", "progress")
    """The run fields a resumed run may change (a trainer's ``resumable`` adds its own)."""


def config_help(cls: type) -> dict[str, str]:
    """Field name -> its one-line help (``field(metadata={"help": ...})``, as :func:`option` writes it)."""
    return {f.name: f.metadata.get("help", "") for f in dataclasses.fields(cls)}


def make_config(
    cls: type,
    presets: dict[str, dict[str, Any]] | None = None,
    preset: str | None = None,
    **overrides: Any,
) -> Any:
    """``cls(**presets[preset], **overrides)``; an unknown preset or key raises ValueError listing the
    valid ones."""
    values: dict[str, Any] = {}
    if preset is not None:
        if not presets or preset not in presets:
            available = ", ".join(sorted(presets or {})) or "none"
            raise ValueError(f"unknown preset {preset!r}; available: {available}")
        values.update(presets[preset])
    values.update(overrides)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(
            f"{cls.__name__} has no key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(names))}"
        )
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for k, v in list(values.items()):
        default = fields[k].default
        if isinstance(v, list) and isinstance(default, tuple):
            values[k] = tuple(v)
    return cls(**values)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    """Raise ValueError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name}={value!r} is not one of {', '.join(map(repr, choices))}")


def check_number(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    integer: bool = False,
    low_open: bool = False,
) -> None:
    """Raise ValueError unless ``value`` is a number (an int if ``integer``) within [low, high] (or
    (low, high] if ``low_open``)."""
    ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok_type:
        raise ValueError(f"{name}={value!r} must be {'an integer' if integer else 'a number'}")
    if not math.isfinite(value):
        raise ValueError(f"{name}={value!r} must be a finite number (NaN and infinity are not settings)")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name}={value!r} must be {'>' if low_open else '>='} {low}")
    if high is not None and value > high:
        raise ValueError(f"{name}={value!r} must be <= {high}")


_FIELD_TYPES: dict[type, dict[str, Any]] = {}


def _field_types(cls: type) -> dict[str, Any]:
    """The resolved type hints of a config class (computed once per class)."""
    if cls not in _FIELD_TYPES:
        _FIELD_TYPES[cls] = typing.get_type_hints(cls)
    return _FIELD_TYPES[cls]


def check_field_types(config: Any) -> None:
    """Raise ValueError for a field whose value does not have its declared scalar type.

    ``bool`` fields take only ``True``/``False`` (``"no"`` is truthy and would switch an option on),
    ``int`` fields only integers, ``float`` fields only finite numbers (NaN fails every range
    comparison, so it would pass ``x < low`` checks silently), ``str`` fields only strings. Called
    first in every trainer config's ``__post_init__``; the range checks follow there.
    """
    hints = _field_types(type(config))
    for f in dataclasses.fields(config):
        tp, v = hints.get(f.name), getattr(config, f.name)
        if tp is bool and not isinstance(v, bool):
            raise ValueError(f"{f.name}={v!r} must be true or false")
        if tp is int:
            check_number(f.name, v, integer=True)
        elif tp is float:
            check_number(f.name, v)
        elif tp is str and not isinstance(v, str):
            raise ValueError(f"{f.name}={v!r} must be a string")
        elif typing.get_origin(tp) is tuple and not isinstance(v, tuple):
            raise ValueError(f"{f.name}={v!r} must be a list")
        elif typing.get_origin(tp) is tuple:
            args = typing.get_args(tp)
            for x in v:
                if float in args:
                    check_number(f.name, x)
                elif int in args:
                    check_number(f.name, x, integer=True)


def diff_configs(a: Any, b: Any, ignore: tuple[str, ...] = ()) -> list[str]:
    """Names of the fields where two configs of one class differ (except ``ignore``)."""
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    return [k for k in da if k not in ignore and da[k] != db.get(k)]
