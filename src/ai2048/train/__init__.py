"""Trainers: one readable loop per learner, each with a frozen, documented ``Config``.

``TRAINERS`` maps the name used by ``ai2048 train NAME`` to ``"module:attr"`` of a
:class:`Trainer`, imported only when used (so torch is loaded only by torch trainers).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TRAINERS: dict[str, str] = {}


@dataclass(frozen=True)
class Trainer:
    """A learner as the CLI sees it: its config class and ``run(config, out, resume, opened=None) -> run
    dir`` (``opened``: the run directory the command line opened and checked, as
    :func:`ai2048.train.run.start` takes it)."""

    name: str
    description: str
    config_cls: type
    run: Callable[..., Any]
    presets: dict[str, dict[str, Any]] | None = None
    checkpoint: str = "checkpoint.pt"
    """The file in the run directory that ``--resume`` continues from; a directory without it holds
    no progress yet, so a plain rerun may start it afresh."""
    preset_help: dict[str, str] | None = None
    """One line per preset, shown by ``ai2048 train NAME --help``."""
    resumable: tuple[str, ...] = ()
    """The config fields a ``--resume`` may change (budgets, logging, device); every other field
    must equal the saved config's."""


def get_trainer(name: str) -> Trainer:
    """Import and return the trainer registered as ``name``; unknown names list the valid ones."""
    if name not in TRAINERS:
        raise ValueError(f"unknown trainer {name!r}; available: {', '.join(sorted(TRAINERS))}")
    module, _, attr = TRAINERS[name].partition(":")
    return getattr(importlib.import_module(module), attr)
TRAINERS["lazyzero"] = "ai2048.train.lazyzero:TRAINER"
TRAINERS["dqn"] = "ai2048.train.dqn:TRAINER"
TRAINERS["qnet"] = "ai2048.train.qnet:TRAINER"
TRAINERS["policy"] = "ai2048.train.policy:TRAINER"
TRAINERS["ntuple"] = "ai2048.train.ntuple:TRAINER"
