"""ai2048: a fast 2048 engine, Gymnasium environments and agents that play it.

The public API, re-exported explicitly; internals live behind it.

Names are imported on first use (PEP 562 module ``__getattr__``), so ``import ai2048`` costs no
numba or Gymnasium import; ``from ai2048 import Game`` loads the engine then. The Gymnasium ids
(``ai2048/Game2048-v*``) are registered as soon as Gymnasium is imported, before or after
``import ai2048``, so ``gymnasium.make`` finds them either way.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ai2048.rules import MAX_EXPONENT, P_TWO, RULES_VERSION, Action

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from ai2048 import envs
    from ai2048.agents import load_agent, make_agent
    from ai2048.board_io import decode, encode, from_tiles, render_text, to_tiles
    from ai2048.evaluate import EvalResult, evaluate
    from ai2048.game import Game, IllegalMoveError, is_over, legal_mask, move, spawn_outcomes

__version__ = "0.1.0"

_LAZY = {
    "envs": "ai2048.envs",
    "load_agent": "ai2048.agents",
    "make_agent": "ai2048.agents",
    "decode": "ai2048.board_io",
    "encode": "ai2048.board_io",
    "from_tiles": "ai2048.board_io",
    "render_text": "ai2048.board_io",
    "to_tiles": "ai2048.board_io",
    "EvalResult": "ai2048.evaluate",
    "evaluate": "ai2048.evaluate",
    "Game": "ai2048.game",
    "IllegalMoveError": "ai2048.game",
    "is_over": "ai2048.game",
    "legal_mask": "ai2048.game",
    "move": "ai2048.game",
    "spawn_outcomes": "ai2048.game",
}

__all__ = [
    "envs",
    "MAX_EXPONENT",
    "P_TWO",
    "RULES_VERSION",
    "Action",
    "EvalResult",
    "Game",
    "IllegalMoveError",
    "decode",
    "encode",
    "evaluate",
    "from_tiles",
    "is_over",
    "legal_mask",
    "load_agent",
    "make_agent",
    "move",
    "render_text",
    "spawn_outcomes",
    "to_tiles",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use and keep it (later lookups are plain attributes)."""
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'ai2048' has no attribute {name!r}")
    module = importlib.import_module(where)
    value = module if name == "envs" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(__all__) | {"__version__"})


class _Package(ModuleType):
    """The package's module type: the import system binds a submodule to its parent when it is
    first imported, and ``ai2048.evaluate`` (the module) must not hide ``evaluate`` (the function)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and name != "envs" and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _register_envs() -> None:
    """Register the Gymnasium ids (``ai2048.envs`` does it on import)."""
    importlib.import_module("ai2048.envs")


def _register_quietly() -> None:
    """:func:`_register_envs` from inside Gymnasium's import: a failure here must not fail
    ``import gymnasium`` for code that does not use ai2048's environments, so it is a warning."""
    try:
        _register_envs()
    except Exception as e:  # noqa: BLE001 (reported, not swallowed)
        import warnings

        warnings.warn(
            f"ai2048 could not register its Gymnasium environments: {e!r}", RuntimeWarning, stacklevel=2
        )


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Import hook: once ``gymnasium`` itself has been imported, register ai2048's ids, then step aside.

    Registering needs Gymnasium, which costs more than everything else ``import ai2048`` did
    before; this keeps ``import ai2048`` light for code that never uses Gymnasium, while
    ``gymnasium.make("ai2048/Game2048-v1")`` still works in code that imported ``ai2048`` first.
    A ``gymnasium.envs`` entry point cannot do this: Gymnasium 1.0 removed the plugin loader that
    read it (1.x registers only its own ids on import), so the hook is the package's own.
    """

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> Any:
        if fullname != "gymnasium":
            return None
        spec = None
        for finder in sys.meta_path:  # whoever would find gymnasium without this hook
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _remove_hook()
            _register_quietly()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _RegisterAfterGymnasium)]


if "gymnasium" in sys.modules:
    _register_envs()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
