"""Building frozen trainer configs from presets and ``key=value`` overrides, with clear errors.

No torch here: the CLI and tests use it without loading a network library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ai2048.checks import setting

BUDGET = "duration"
"""The one name of every trainer's wall-clock budget (a config field, in seconds; 0 = none)."""

BUDGET_HELP = "wall-clock budget in seconds of training, counted across resumes (0 = none)"
"""The help text of every trainer's :data:`BUDGET` field."""


@dataclass(frozen=True)
class RunConfig:
    """The run fields every trainer's config starts with (its own fields follow); the
    :class:`~ai2048.train.run.Loop` reads them. A trainer redeclares one to give it its own default
    or help (``checkpoint_every`` counts the trainer's steps: games, epochs)."""

    seed: int = setting(0, "seed of every random source of the run (games, moves, sampling, network init)",
                        lo=0)
    duration: float = setting(0.0, BUDGET_HELP + "; training stops at whichever budget ends first", lo=0)
    checkpoint_every: int = setting(1, "save a checkpoint every this many steps", lo=1)
    progress: bool = setting(True, "show a progress bar")

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

    device: str = setting("cpu", DEVICE_HELP)
    threads: int = setting(
        1,
        "torch CPU threads (1 is fastest on a shared or busy machine; more only help large batches on "
        "idle cores)",
        lo=1,
    )
    tensorboard: bool = setting(True, "also write TensorBoard logs when tensorboard is installed")

    RESUMABLE: ClassVar[tuple[str, ...]] = (*RunConfig.RESUMABLE, "device", "threads", "tensorboard")
    """The run fields a resumed torch run may change (a trainer's ``resumable`` adds its own)."""


def config_help(cls: type) -> dict[str, str]:
    """Field name -> its one-line help (``field(metadata={"help": ...})``, as
    :func:`ai2048.checks.setting` writes it)."""
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


def diff_configs(a: Any, b: Any, ignore: tuple[str, ...] = ()) -> list[str]:
    """Names of the fields where two configs of one class differ (except ``ignore``)."""
    da, db = dataclasses.asdict(a), dataclasses.asdict(b)
    return [k for k in da if k not in ignore and da[k] != db.get(k)]
