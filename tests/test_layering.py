"""Arrows point down only: every import inside ``ai2048`` goes to the same or a lower layer, and no
two packages import each other (directly or round a loop).

The layer map is the one drawn in ``docs/architecture.md``; a new top-level package or module must
be placed in it here (the test fails until it is). Imports are read with :mod:`ast`, at module level
and inside functions alike (a lazy import is still an arrow), so nothing is imported or run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
README = Path(__file__).resolve().parents[1] / "README.md"

# Layer of each top-level unit of ``ai2048`` (a subpackage or a module); a unit may import only
# units of its own layer or below. "ai2048" is the package's own ``__init__`` (the public face).
LAYERS: dict[str, int] = {
    # 0: the rules, checks, file helpers, interval statistics, lazy exports: no ai2048 imports
    "rules": 0,
    "checks": 0,
    "checkpoint": 0,
    "stats": 0,
    "lazy": 0,
    # 1: numba kernels on uint64 boards, and when a parallel one runs on numba's threads
    "engine": 1,
    "threads": 1,
    # 2: checked user input and the friendly Game object over the kernels
    "board_io": 2,
    "game": 2,
    # 3: building blocks that know no agent: n-tuple networks, torch modules, environments
    "ntuple": 3,
    "nets": 3,
    "envs": 3,
    "tables": 3,
    # 4: every search, and the shipped networks (data + their cards)
    "search": 4,
    "models": 4,
    # 5: agents (the registry and one module per family)
    "agents": 5,
    # 6: playing games with any agent (every path and the games stream), and game records
    "evaluate": 6,
    "records": 6,
    # 7: learners: trainers and the heuristic tuner
    "train": 7,
    "tune": 7,
    # 8: faces: benchmarks, figures, the terminal and web UI, the doors for language-model agents
    "bench": 8,
    "plots": 8,
    "ui": 8,
    "llm": 8,  # uses ui's guards and agent limits; ui never imports it
    # 9: the command line and the package's public API
    "cli": 9,
    "ai2048": 9,
    "__main__": 9,  # python -m ai2048: the command line
}

# Known arrows that still point up, each with the work that removes it. The test below fails when
# one of them disappears, so this list cannot go stale.
PENDING: dict[tuple[str, str], str] = {
}

# Deliberate exceptions, each a documented public convenience imported lazily.
ALLOWED: dict[tuple[str, str], str] = {
    ("ai2048.models", "ai2048.agents"): (
        "models.make(NAME), README API: make_agent('ntuple', model=NAME) for a shipped network"
    ),
}


@dataclass(frozen=True)
class Arrow:
    """One import: module ``source`` imports module ``target`` (both dotted names) at ``line``."""

    source: str
    target: str
    line: int


def module_name(path: Path, src: Path) -> str:
    """``src/ai2048/search/games.py`` -> ``ai2048.search.games``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(dotted: str, src: Path) -> bool:
    base = src.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def arrows(src: Path, package: str = "ai2048") -> list[Arrow]:
    """Every import of ``package`` by a module of ``package`` under ``src``, at any depth of the code.

    Relative imports are resolved; ``from ai2048 import engine`` is an arrow to ``ai2048.engine``
    (the module), ``from ai2048.rules import P_TWO`` one to ``ai2048.rules``.
    """
    out = []
    for path in sorted((src / package).rglob("*.py")):
        source = module_name(path, src)
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = source.split(".") if is_package else source.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets = []
                for alias in node.names:
                    sub = f"{module}.{alias.name}"
                    targets.append(sub if _exists(sub, src) else module)
            else:
                continue
            out += [
                Arrow(source, t, node.lineno)
                for t in dict.fromkeys(targets)
                if t == package or t.startswith(package + ".")
            ]
    return out


def unit(module: str) -> str:
    """The layer-map unit of a dotted module: ``ai2048.search.games`` -> ``search``; ``ai2048`` ->
    ``ai2048``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def module(name: str) -> str:
    """A dotted module as itself: the key of :func:`unit_cycles` that finds loops between modules."""
    return name


def upward(found: list[Arrow], layers: dict[str, int]) -> list[Arrow]:
    """The arrows from a unit to a unit of a higher layer."""
    return [a for a in found if layers[unit(a.target)] > layers[unit(a.source)]]


def unit_cycles(found: list[Arrow], key: Callable[[str], str] = unit) -> list[list[str]]:
    """Groups of two or more units (or what ``key`` maps a module to) that import each other round a
    loop (strongly connected components)."""
    graph: dict[str, set[str]] = {}
    for a in found:
        s, t = key(a.source), key(a.target)
        graph.setdefault(s, set())
        graph.setdefault(t, set())
        if s != t:
            graph[s].add(t)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan 1972
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def _described(a: Arrow) -> str:
    return f"{a.source} (line {a.line}) imports {a.target}"


def _excused(a: Arrow) -> bool:
    return (a.source, a.target) in PENDING or (a.source, a.target) in ALLOWED


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# -- the package itself ----------------------------------------------------------------------------


def test_layering__every_unit_is_placed_in_the_layer_map():
    units = {unit(module_name(p, SRC)) for p in (SRC / "ai2048").rglob("*.py")}
    missing = sorted(units - set(LAYERS))
    assert not missing, f"place {missing} in LAYERS here and in docs/architecture.md"
    assert not sorted(set(LAYERS) - units), "LAYERS names a unit that no longer exists"


def test_layering__no_arrow_points_up():
    bad = [a for a in upward(arrows(SRC), LAYERS) if not _excused(a)]
    assert not bad, "upward imports (move the shared code down a layer):\n" + "\n".join(map(_described, bad))


def test_layering__no_two_packages_import_each_other():
    found = [a for a in arrows(SRC) if not _excused(a)]
    assert unit_cycles(found) == []


CIRCLE_FREE = ("evaluate",)
"""Packages whose modules import each other in one direction only (no module, the ``__init__``
included, imports one that imports it back, round any loop)."""


@pytest.mark.parametrize("package", CIRCLE_FREE)
def test_layering__no_two_modules_of_a_package_import_each_other(package):
    inside = f"ai2048.{package}"
    found = [a for a in arrows(SRC) if unit(a.source) == package and unit(a.target) == package]
    assert found, f"{inside} has no imports between its modules: is it still a package?"
    assert unit_cycles(found, key=module) == [], f"modules of {inside} import each other round a loop"


def test_layering__pending_and_allowed_arrows_still_exist():
    """An excuse for an arrow that is gone must go too (so the lists cannot hide a new arrow)."""
    present = {(a.source, a.target) for a in arrows(SRC)}
    stale = sorted(set(PENDING) - present) + sorted(set(ALLOWED) - present)
    assert not stale, f"remove {stale} from PENDING/ALLOWED: the import is gone"


def test_layering__the_architecture_page_draws_the_same_map():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    assert "Arrows point down only" in text
    for name in LAYERS:
        assert f"`{name}" in text, f"docs/architecture.md does not place {name!r}"



def readme_layers(text: str) -> dict[str, int]:
    """The layer of each unit as the README's ``## Layout`` block draws it: a line ``  N    units  what``
    (``engine/`` a package, ``rules.py`` a module, ``__init__.py`` the package's own ``ai2048``)."""
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 1)[1].split("```", 1)[0]
    drawn: dict[str, int] = {}
    for line in block.splitlines():
        row = re.match(r"\s+(\d)\s+((?:[\w.]+/?\s)+)\s", line)
        if row:
            for name in row.group(2).split():
                name = "ai2048" if name == "__init__.py" else name.removesuffix("/").removesuffix(".py")
                drawn[name] = int(row.group(1))
    return drawn


def test_layering__the_readme_layout_draws_the_same_map():
    assert readme_layers(README.read_text(encoding="utf-8")) == LAYERS

# -- the checker on synthetic packages --------------------------------------------------------------


def test_arrows__finds_top_level_function_level_and_relative_imports(tmp_path):
    src = _write(
        tmp_path,
        {
            "ai2048/__init__.py": "",
            "ai2048/rules.py": "P_TWO = 0.9\n",
            "ai2048/engine/__init__.py": "",
            "ai2048/engine/moves.py": "from ai2048.rules import P_TWO\n",
            "ai2048/engine/spawn.py": "def f():\n    from .moves import P_TWO\n    import ai2048.rules\n",
            "ai2048/search/__init__.py": "from .. import engine\nimport numpy\n",
        },
    )
    got = {(a.source, a.target, a.line) for a in arrows(src)}
    assert got == {
        ("ai2048.engine.moves", "ai2048.rules", 1),
        ("ai2048.engine.spawn", "ai2048.engine.moves", 2),
        ("ai2048.engine.spawn", "ai2048.rules", 3),
        ("ai2048.search", "ai2048.engine", 1),
    }


def test_upward__catches_a_synthetic_upward_import(tmp_path):
    src = _write(
        tmp_path,
        {
            "ai2048/__init__.py": "",
            "ai2048/engine/__init__.py": "",
            "ai2048/engine/moves.py": "def helper():\n    from ai2048.agents.base import make_agent\n",
            "ai2048/agents/__init__.py": "",
            "ai2048/agents/base.py": "from ai2048.engine.moves import helper\n",
        },
    )
    bad = upward(arrows(src), LAYERS)
    assert [(a.source, a.target, a.line) for a in bad] == [("ai2048.engine.moves", "ai2048.agents.base", 2)]
    with pytest.raises(KeyError):  # an unplaced unit is not silently let through
        upward([Arrow("ai2048.engine", "ai2048.newthing", 1)], LAYERS)


def test_unit_cycles__catches_a_loop_of_three_and_ignores_imports_inside_a_package(tmp_path):
    src = _write(
        tmp_path,
        {
            "ai2048/__init__.py": "",
            "ai2048/ntuple/__init__.py": "from ai2048.ntuple import a\n",
            "ai2048/ntuple/a.py": "from ai2048 import nets\n",
            "ai2048/nets/__init__.py": "import ai2048.envs\n",
            "ai2048/envs/__init__.py": "def f():\n    import ai2048.ntuple.a\n",
            "ai2048/search.py": "from ai2048 import ntuple\n",
        },
    )
    found = arrows(src)
    assert upward(found, LAYERS) == []  # all in layer 3 or from 4 down: only the loop is wrong
    assert unit_cycles(found) == [["envs", "nets", "ntuple"]]
    assert unit_cycles([a for a in found if a.source != "ai2048.envs"]) == []
    inside = [a for a in found if unit(a.source) == unit(a.target) == "ntuple"]
    assert unit_cycles(inside) == []  # one unit
    assert unit_cycles(inside + [Arrow("ai2048.ntuple.a", "ai2048.ntuple", 2)], key=module) == [
        ["ai2048.ntuple", "ai2048.ntuple.a"]]  # a module and its package's __init__ round a loop


@pytest.mark.parametrize("package", ["search", "ntuple"])
def test_all__search_and_ntuple_name_every_public_module(package):
    """``__all__`` of ``search`` and ``ntuple`` is their list of modules."""
    init = SRC / "ai2048" / package / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    names = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in n.targets)
    )
    modules = {p.stem for p in init.parent.glob("*.py") if not p.stem.startswith("_")}
    assert sorted(names) == names and set(names) == modules


def test_readme_layers__reads_units_and_catches_a_misplaced_one():
    text = "# x\n\n## Layout\n\n```\nlayer  src/ai2048/\n  1    engine/ threads.py   kernels\n" \
           "  0    rules.py __init__.py      rules\ntests/  tests\n```\n\n## Next\n"
    assert readme_layers(text) == {"engine": 1, "threads": 1, "rules": 0, "ai2048": 0}
    assert readme_layers(text) != {"engine": 1, "threads": 1, "rules": 0, "ai2048": 9}
