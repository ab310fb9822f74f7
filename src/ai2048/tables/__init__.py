"""Endgame tables: positions of a formation solved exactly, built once and memory-mapped.

``ai2048 tables build`` builds them (:mod:`ai2048.tables.build`), ``ai2048 tables`` lists them,
and the ``endgame`` agent plays from them (:mod:`ai2048.agents.endgame`). The kernels live in
:mod:`ai2048.tables.kernels` and :mod:`ai2048.tables.lookup`; the formations in
:mod:`ai2048.tables.formations`; files and checks in :mod:`ai2048.tables.store`.

The public names below are re-exported here and imported on first use (PEP 562 module
``__getattr__``), so ``import ai2048.tables`` or ``ai2048.tables.store`` alone compiles no numba
kernel (the web app and ``ai2048 tables`` read the folder without them). The builder function is
``ai2048.tables.build.build``: its module has the same name, so the package exports it as
``build_table``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ai2048.lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from ai2048.tables.build import BuildDamaged, BuildStopped, check_resources, estimate, requirements
    from ai2048.tables.build import build as build_table
    from ai2048.tables.formations import (
        DEFAULT,
        LARGE,
        TABLES,
        Formation,
        TableRules,
        TableSpec,
        expand,
        sets,
        spec,
    )
    from ai2048.tables.lookup import looked_up, match, move_values, symmetry
    from ai2048.tables.store import (
        ENV_VAR,
        DistilledTablesWarning,
        Table,
        TableError,
        TableNotBuilt,
        build_command,
        checked_dir,
        default_dir,
        listing,
        load,
        load_distilled,
        tables_dir,
        write_distilled,
    )

_LAZY: dict[str, tuple[str, str]] = {
    "BuildDamaged": ("build", "BuildDamaged"),
    "BuildStopped": ("build", "BuildStopped"),
    "build_table": ("build", "build"),
    "check_resources": ("build", "check_resources"),
    "requirements": ("build", "requirements"),
    "estimate": ("build", "estimate"),
    "DEFAULT": ("formations", "DEFAULT"),
    "LARGE": ("formations", "LARGE"),
    "TableRules": ("formations", "TableRules"),
    "expand": ("formations", "expand"),
    "sets": ("formations", "sets"),
    "Formation": ("formations", "Formation"),
    "TABLES": ("formations", "TABLES"),
    "TableSpec": ("formations", "TableSpec"),
    "spec": ("formations", "spec"),
    "looked_up": ("lookup", "looked_up"),
    "match": ("lookup", "match"),
    "move_values": ("lookup", "move_values"),
    "symmetry": ("lookup", "symmetry"),
    "ENV_VAR": ("store", "ENV_VAR"),
    "DistilledTablesWarning": ("store", "DistilledTablesWarning"),
    "Table": ("store", "Table"),
    "TableError": ("store", "TableError"),
    "TableNotBuilt": ("store", "TableNotBuilt"),
    "build_command": ("store", "build_command"),
    "checked_dir": ("store", "checked_dir"),
    "default_dir": ("store", "default_dir"),
    "listing": ("store", "listing"),
    "load": ("store", "load"),
    "load_distilled": ("store", "load_distilled"),
    "tables_dir": ("store", "tables_dir"),
    "write_distilled": ("store", "write_distilled"),
}
"""Public name -> (module of this package, its name there)."""

__all__ = [
    "BuildDamaged",
    "BuildStopped",
    "DEFAULT",
    "DistilledTablesWarning",
    "ENV_VAR",
    "Formation",
    "LARGE",
    "TABLES",
    "Table",
    "TableError",
    "TableNotBuilt",
    "TableRules",
    "TableSpec",
    "build_command",
    "build_table",
    "check_resources",
    "checked_dir",
    "default_dir",
    "estimate",
    "expand",
    "listing",
    "load",
    "load_distilled",
    "looked_up",
    "match",
    "move_values",
    "requirements",
    "sets",
    "spec",
    "symmetry",
    "tables_dir",
    "write_distilled",
]


__getattr__, __dir__ = exports(__name__, _LAZY)
