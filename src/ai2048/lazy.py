"""A package's public names imported on first use (PEP 562 module ``__getattr__``).

``ai2048.tables`` and ``ai2048.llm`` re-export their modules' public names from ``__init__`` as the
other packages do, but importing them there would load numba kernels (tables) or the OpenEnv and MCP
extras (llm) for a caller that wants one small module. So each ``__init__`` names where every public
name lives and takes its ``__getattr__`` and ``__dir__`` from :func:`exports`::

    _LAZY = {"load": ("store", "load"), "build_table": ("build", "build")}
    __getattr__, __dir__ = exports(__name__, _LAZY)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(
    package: str, where: Mapping[str, tuple[str, str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports ``name`` as attribute ``attr``
    of its module ``package.module`` for every ``name: (module, attr)`` of ``where``; a name is
    imported on first use and then kept as a plain attribute of the package."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = where[name]
        value = getattr(importlib.import_module(f"{package}.{module}"), attr)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
