"""Shipped trained networks: compact, checksummed files with their model cards.

    import ai2048.models as models
    models.names()                           # what this install ships, e.g. ['4x6-tc-lambda']
    agent = models.make("4x6-tc-lambda", depth=2)  # an Agent, as make_agent("ntuple", model=..., depth=2)

``ai2048 models`` lists them with their headline figures; ``ai2048 models pack`` makes one from a
training run (:mod:`ai2048.models.pack`). The format is :mod:`ai2048.models.compact`; the folder
is ``$AI2048_MODELS`` if set (:mod:`ai2048.models.store`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai2048.models.card import check_name, headline, markdown
from ai2048.models.compact import ModelFileError
from ai2048.models.store import (
    ENV,
    NoShippedModelError,
    UnknownModelError,
    card,
    default_name,
    load,
    models_dir,
    names,
)


def make(name: str | None = None, *, directory: str | Path | None = None, **settings: Any) -> Any:
    """The ``ntuple`` agent playing shipped network ``name`` (default: the default network).

    ``settings`` are the agent's (``depth=2``, ``downgrade=True``, ...), as for
    ``make_agent("ntuple", ...)``.
    """
    from ai2048.agents import make_agent  # the agents sit above this package; imported when used

    if directory is not None:
        settings["models_dir"] = str(directory)
    return make_agent("ntuple", model=name, **settings)


__all__ = [
    "ENV",
    "ModelFileError",
    "NoShippedModelError",
    "UnknownModelError",
    "card",
    "check_name",
    "default_name",
    "headline",
    "load",
    "make",
    "markdown",
    "models_dir",
    "names",
]
