"""Building frozen trainer configs from presets and ``key=value`` overrides, with clear errors.

No torch here: the CLI and tests use it without loading a network library.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from typing import Any, ClassVar

from ai2048 import checks
from ai2048.checks import CheckTypeError, Option


def option(default: Any, help: str, *, lo: float | None = None, hi: float | None = None,
           lo_open: bool = False, hi_open: bool = False, choices: tuple[Any, ...] = ()) -> Any:
    """A config field declared in one place: its default, its one-line ``--help`` text and the values it
    takes (``lo``..``hi``, ``choices``), which :func:`check_options` checks with :mod:`ai2048.checks`.

    A ``dataclasses.field`` with ``metadata["help"]`` and ``metadata["range"]``; the field's type says
    the kind (``int``: a whole number, ``float``: a finite number, ``bool``: true or false, ``str``: text,
    or one of ``choices``)."""
    rng = {"lo": lo, "hi": hi, "lo_open": lo_open, "hi_open": hi_open, "choices": tuple(choices)}
    return dataclasses.field(default=default, metadata={"help": help, "range": rng})


BUDGET = "duration"
"""The one name of every trainer's wall-clock budget (a config field, in seconds; 0 = none)."""

BUDGET_HELP = "wall-clock budget in seconds of training, counted across resumes (0 = none)"
"""The help text of every trainer's :data:`BUDGET` field."""


@dataclass(frozen=True)
class RunConfig:
    """The run fields every trainer's config starts with (its own fields follow); the
    :class:`~ai2048.train.run.Loop` reads them. A trainer redeclares one to give it its own default
    or help (``checkpoint_every`` counts the trainer's steps: games, epochs)."""

    seed: int = option(0, "seed of every random source of the run (games, moves, sampling, network init)",
                       lo=0)
    duration: float = option(0.0, BUDGET_HELP + "; training stops at whichever budget ends first", lo=0)
    checkpoint_every: int = option(1, "save a checkpoint every this many steps", lo=1)
    progress: bool = option(True, "show a progress bar")

    RESUMABLE: ClassVar[tuple[str, ...]] = ("duration", "checkpoint_every", "progress")
    """The run fields a resumed run may change (a trainer's ``resumable`` adds its own)."""


DEVICE_HELP = "cpu, cuda, cuda:N or auto (CUDA when present)"
"""The help text of every torch trainer's ``device`` field (:class:`TorchRunConfig`)."""


@dataclass(frozen=True)
class TorchRunConfig(RunConfig):
    """The run fields of every torch trainer's config, after :class:`RunConfig`'s: where the network
    runs, torch's CPU threads and TensorBoard logs (:func:`ai2048.train.torchrun.start_torch` applies
    the first two); a resumed run may change each. Declared here once, without torch (the CLI reads
    them without it); a trainer redeclares one to give it its own default or help."""

    device: str = option("cpu", DEVICE_HELP)
    threads: int = option(
        1,
        "torch CPU threads (1 is fastest on a shared or busy machine; more only help large batches on "
        "idle cores)",
        lo=1,
    )
    tensorboard: bool = option(True, "also write TensorBoard logs when tensorboard is installed")

    RESUMABLE: ClassVar[tuple[str, ...]] = (*RunConfig.RESUMABLE, "device", "threads", "tensorboard")
    """The run fields a resumed torch run may change (a trainer's ``resumable`` adds its own)."""


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


_KIND = {int: "whole", float: "number", bool: "flag", str: "text"}

_OPTIONS: dict[type, dict[str, Option]] = {}


def config_options(cls: type) -> dict[str, Option]:
    """Each field of a config class as an :class:`~ai2048.checks.Option` (its help, kind and range),
    from its type and :func:`option`'s declaration; computed once per class."""
    if cls not in _OPTIONS:
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
        _OPTIONS[cls] = out
    return _OPTIONS[cls]


def check_options(config: Any) -> None:
    """Raise ValueError for a field whose value is not one its declaration takes.

    ``bool`` fields take only ``True``/``False`` (``"no"`` is truthy and would switch an option on),
    ``int`` fields only whole numbers, ``float`` fields only finite numbers (NaN fails every range
    comparison, so it would pass ``x < low`` checks silently), ``str`` fields only text (or one of their
    ``choices``), each within the range :func:`option` declares; a list's items are numbers of its item
    type. Called first in every trainer config's ``__post_init__``; the rules between fields follow there.
    """
    hints = typing.get_type_hints(type(config))
    for name, opt in config_options(type(config)).items():
        v = getattr(config, name)
        opt.check(name, v)
        tp = hints.get(name)
        if typing.get_origin(tp) is tuple:
            if not isinstance(v, tuple):
                raise CheckTypeError(f"{name}={checks.shown(v)} must be a list")
            args = typing.get_args(tp)
            for x in v:
                if float in args:
                    checks.number(name, x)
                elif int in args:
                    checks.whole(name, x)


def diff_configs(a: Any, b: Any, ignore: tuple[str, ...] = ()) -> list[str]:
    """Names of the fields where two configs of one class differ (except ``ignore``)."""
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    return [k for k in da if k not in ignore and da[k] != db.get(k)]
