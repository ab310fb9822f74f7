"""Import optional UI libraries with an error that says which extra installs them."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str = "ui") -> ModuleType:
    """``importlib.import_module(module)``, or ImportError naming the pip command that adds it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        raise ImportError(
            f"{top} is not installed; it comes with the '{extra}' extra: pip install 'ai2048[{extra}]'"
        ) from e
