"""Formations and the tables built on them: which cells the large tiles hold, where the target must
appear, how large it is.

A *formation* fixes the large tiles in some cells (they must not move: a move that shifts one
breaks the formation); the other cells are *free*. Its *anchor* is the fixed cell holding the
smallest large tile, and the *goal cells* are the free cells beside it. A *table* is a formation
with a target exponent ``t``: it holds, for every position of small tiles (all below ``2**t``)
reachable from an empty free region, the probability that optimal play builds a ``2**t`` on a
goal cell (where one move merges it into the anchor) without breaking the formation. It applies to
any board whose anchor holds ``2**t`` and whose other fixed cells hold tiles of at least ``2**t``:
the values do not depend on which large tiles those are (macroxue/2048-ai's "lookup tables" and
game-difficulty/2048EndgameTablebase's formation tables are this idea; both are GPL-3.0 and
nothing of theirs is used here).

``442``: the top row and the two right cells of the second row hold the large tiles (a snake:
``16384 8192 4096 2048`` then ``1024 512`` leftwards), the anchor is cell (1, 2) and the goal
cells (1, 1) and (2, 2); ten free cells, game-difficulty's "442" shape turned upside down. The
shipped n-tuple network plays this snake along the top row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai2048.rules import P_TWO

FORMAT_VERSION = 1


@dataclass(frozen=True)
class Formation:
    """Cells are row-major indices ``4 * r + c`` (cell (r, c) lives at bits ``4 * (4 * r + c)``)."""

    name: str
    fixed: tuple[int, ...]
    anchor: int
    goals: tuple[int, ...]

    def __post_init__(self) -> None:
        cells = set(self.fixed)
        if len(cells) != len(self.fixed) or not cells <= set(range(16)):
            raise ValueError(f"formation {self.name}: fixed cells must be distinct cells 0..15")
        if self.anchor not in cells:
            raise ValueError(f"formation {self.name}: the anchor must be a fixed cell")
        if not self.goals or set(self.goals) & cells:
            raise ValueError(f"formation {self.name}: goal cells must be free cells")

    @property
    def free(self) -> tuple[int, ...]:
        return tuple(c for c in range(16) if c not in self.fixed)

    @property
    def fixed_mask(self) -> np.uint64:
        return _mask(self.fixed)

    @property
    def goal_mask(self) -> np.uint64:
        return _mask(self.goals)

    def describe(self) -> dict:
        return {"name": self.name, "fixed": list(self.fixed), "anchor": self.anchor,
                "goals": list(self.goals)}


def _mask(cells: tuple[int, ...]) -> np.uint64:
    m = 0
    for c in cells:
        m |= 0xF << (4 * c)
    return np.uint64(m)


@dataclass(frozen=True)
class TableSpec:
    """A formation, a target exponent and the bound on the free tiles' sum (``max_sum``; past it a
    position counts as lost, which keeps the largest tables buildable on a laptop)."""

    formation: Formation
    target: int
    max_sum: int
    p_two: float = P_TWO

    def __post_init__(self) -> None:
        if not 2 <= self.target <= 14:
            raise ValueError(f"table target exponent must be 2..14, not {self.target}")
        if self.max_sum < 2 ** self.target:
            raise ValueError(f"table max_sum must be at least the target {2 ** self.target}")

    @property
    def name(self) -> str:
        return f"{self.formation.name}-{2 ** self.target}"

    def describe(self) -> dict:
        return {
            "formation": self.formation.describe(),
            "target": self.target,
            "max_sum": self.max_sum,
            "p_two": self.p_two,
            "format": FORMAT_VERSION,
        }


F442 = Formation("442", fixed=(0, 1, 2, 3, 7, 6), anchor=6, goals=(5, 10))

# name -> (spec, positions its build counted: the memory and disk checks and `ai2048 tables` read it).
# The sum bounds are above every reachable position's (442-512's top layer sums to 1,016): all exact.
TABLES: dict[str, tuple[TableSpec, int]] = {}


def _register(spec: TableSpec, positions: int) -> None:
    TABLES[spec.name] = (spec, positions)


_register(TableSpec(F442, 5, 2 ** 12), 787_447)
_register(TableSpec(F442, 6, 2 ** 12), 4_922_910)
_register(TableSpec(F442, 7, 2 ** 12), 14_382_343)
_register(TableSpec(F442, 8, 2 ** 12), 33_933_007)
_register(TableSpec(F442, 9, 2 ** 11), 68_216_198)

DEFAULT = ("442-64", "442-128", "442-256", "442-512")
"""The tables ``ai2048 tables build`` builds and the ``endgame`` agent reads by default. ``442-32`` is
left out: building a 32 is near certain by many moves, and a table that commits the free cells to
it played worse than the network's search there (docs/tables.md, "What moved the rate")."""


def spec(name: str | TableSpec) -> TableSpec:
    """The registered table ``name`` (``ai2048 tables`` lists them); a spec is returned as it is."""
    if isinstance(name, TableSpec):
        return name
    if not isinstance(name, str):
        raise TypeError(f"a table is named by a string, got {name!r}")
    try:
        return TABLES[name][0]
    except KeyError:
        raise ValueError(f"unknown table {name!r}; known: {', '.join(TABLES)}") from None
