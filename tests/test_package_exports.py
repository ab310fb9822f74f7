"""``ai2048.tables`` and ``ai2048.llm`` export their public names from ``__init__`` as the other
packages do, on first use: importing the package loads none of its modules (no numba kernels, no
OpenEnv or MCP), and each exported name is the object its module defines."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import ai2048.llm
import ai2048.tables

SRC = Path(__file__).resolve().parents[1] / "src" / "ai2048"
EXTRAS = {"mcp_server": "mcp", "openenv_env": "openenv", "openenv_server": "openenv"}
"""Modules of ``ai2048.llm`` and the extra each needs (the ``llm`` extra)."""


def _module_all(path: Path) -> list[str]:
    """A module's ``__all__``, read without importing it."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    return []


def _loaded_after(code: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nprint(sorted(sys.modules))"], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return ast.literal_eval(out.stdout.strip().splitlines()[-1])


def test_import__tables_and_llm_load_none_of_their_modules():
    loaded = _loaded_after("import sys, ai2048.tables, ai2048.llm")
    heavy = ("ai2048.tables.", "ai2048.llm.", "numba", "mcp", "openenv")
    assert not [m for m in loaded if m.startswith(heavy)]


@pytest.mark.parametrize("package", [ai2048.tables, ai2048.llm], ids=lambda p: p.__name__)
def test_exports__all_is_sorted_and_is_the_lazy_map(package):
    assert package.__all__ == sorted(package._LAZY)
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="has no attribute 'nosuchname'"):
        package.nosuchname  # noqa: B018 (the lookup is the test)


def test_exports__tables_names_are_their_modules_objects():
    for name in ai2048.tables.__all__:
        module, attr = ai2048.tables._LAZY[name]
        defined = getattr(importlib.import_module(f"ai2048.tables.{module}"), attr)
        assert getattr(ai2048.tables, name) is defined
    from ai2048.tables import build, build_table  # the module and its builder function, both reachable

    assert build_table is build.build and build.__name__ == "ai2048.tables.build"


def test_exports__tables_covers_each_public_module_s_all():
    """Where a module of ``tables`` declares ``__all__``, every name in it is exported (``build`` as
    ``build_table``: the module has the same name)."""
    exported = {attr for _, attr in ai2048.tables._LAZY.values()}
    for path in sorted((SRC / "tables").glob("*.py")):
        missing = [n for n in _module_all(path) if n not in exported and path.stem != "__init__"]
        assert not missing, f"export {missing} of ai2048.tables.{path.stem} from ai2048/tables/__init__.py"


def test_exports__llm_is_every_module_s_all():
    declared = {}
    for path in sorted((SRC / "llm").glob("*.py")):
        declared.update({name: (path.stem, name) for name in _module_all(path)})
    assert declared and declared == ai2048.llm._LAZY


def test_exports__llm_names_are_their_modules_objects():
    for name, (module, _) in ai2048.llm._LAZY.items():
        extra = EXTRAS.get(module)
        if extra and importlib.util.find_spec(extra) is None:
            continue  # needs the llm extra, not installed here
        assert getattr(ai2048.llm, name) is getattr(importlib.import_module(f"ai2048.llm.{module}"), name)
    assert ai2048.llm.score_strategy.__module__ == "ai2048.llm.strategy"
