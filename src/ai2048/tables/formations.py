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

A *transport* formation (name suffix ``t``, game-difficulty's "t" tables: large tiles that may move
along their line) also lists *slides*: other cells its walls may stand in without the formation
breaking, in the same order read row by row. The goal counts only with the walls at home, so a
table's value is that of building the target *and* bringing the walls back; a position where
every move of the fixed formation would break it may still have a way out along a slide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ai2048 import checks
from ai2048.rules import P_TWO

FORMAT_VERSION = 1

NO_BOUND = np.int64(1 << 40)
"""A sum bound that never binds (``TableRules.small_half_sum`` of an unpruned table)."""

NO_LARGE = np.int64(16)
"""``TableRules.large_from`` of an unpruned table: no exponent counts as large."""

MAX_PLACES = 4
"""A formation's placements of its walls (home and its slides) at most: the kernels read four masks."""

NO_PLACE = np.uint64(0)
"""A placement mask that is no placement (the unused slots of ``TableRules``)."""


class TableRules(NamedTuple):
    """What the kernels need of a table's spec (``TableSpec.rules()`` makes it): the formation's
    masks, the target and the bounds past which a position counts as lost."""

    fixed_mask: np.uint64  # the fixed cells' nibbles (home); a key holds the wall 0xF in each
    goal_mask: np.uint64  # the goal cells' nibbles (a goal counts with the walls at home only)
    slide1: np.uint64  # the walls' other placements (a transport formation), NO_PLACE where none
    slide2: np.uint64
    slide3: np.uint64
    target: np.int64  # the target exponent
    max_half_sum: np.int64  # the free tiles sum to at most twice this
    small_half_sum: np.int64  # the tiles below ``2**large_from`` sum to at most twice this
    large_from: np.int64  # from ``2**large_from`` on each tile at most once, the smallest present twice


@dataclass(frozen=True)
class Formation:
    """Cells are row-major indices ``4 * r + c`` (cell (r, c) lives at bits ``4 * (4 * r + c)``)."""

    name: str
    fixed: tuple[int, ...]
    anchor: int
    goals: tuple[int, ...]
    slides: tuple[tuple[int, ...], ...] = ()

    def __post_init__(self) -> None:
        cells = set(self.fixed)
        if len(cells) != len(self.fixed) or not cells <= set(range(16)):
            raise ValueError(f"formation {self.name}: fixed cells must be distinct cells 0..15")
        if self.anchor not in cells:
            raise ValueError(f"formation {self.name}: the anchor must be a fixed cell")
        if not self.goals or set(self.goals) & cells:
            raise ValueError(f"formation {self.name}: goal cells must be free cells")
        if len(self.slides) > MAX_PLACES - 1:
            raise ValueError(f"formation {self.name}: at most {MAX_PLACES - 1} slides (other placements "
                             f"of the walls), got {len(self.slides)}")
        seen = {frozenset(cells)}
        for slide in self.slides:
            if len(set(slide)) != len(self.fixed) or not set(slide) <= set(range(16)):
                raise ValueError(f"formation {self.name}: a slide must place all {len(self.fixed)} walls on "
                                 f"distinct cells 0..15, got {slide}")
            if frozenset(slide) in seen:
                raise ValueError(f"formation {self.name}: slide {slide} repeats a placement")
            seen.add(frozenset(slide))

    @property
    def anchor_rank(self) -> int:
        """The anchor's place among the walls read row by row: the same in every placement."""
        return sorted(self.fixed).index(self.anchor)

    @property
    def anchors(self) -> np.ndarray:
        """int64 [MAX_PLACES]: the anchor's cell in each placement (:attr:`places`), -1 after the last."""
        out = np.full(MAX_PLACES, -1, dtype=np.int64)
        for k, cells in enumerate((self.fixed, *self.slides)):
            out[k] = sorted(cells)[self.anchor_rank]
        return out

    @property
    def places(self) -> np.ndarray:
        """uint64 [MAX_PLACES]: the walls' placements as masks, home first, ``NO_PLACE`` after the last."""
        out = np.full(MAX_PLACES, NO_PLACE, dtype=np.uint64)
        for k, cells in enumerate((self.fixed, *self.slides)):
            out[k] = _mask(cells)
        return out

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
        """The formation's identity (slides only where set, so the fixed formations keep theirs)."""
        out: dict = {"name": self.name, "fixed": list(self.fixed), "anchor": self.anchor,
                     "goals": list(self.goals)}
        if self.slides:
            out["slides"] = [list(c) for c in self.slides]
        return out


def _mask(cells: tuple[int, ...]) -> np.uint64:
    m = 0
    for c in cells:
        m |= 0xF << (4 * c)
    return np.uint64(m)


@dataclass(frozen=True)
class TableSpec:
    """A formation, a target exponent and the bounds past which a position counts as lost: they keep
    the large tables buildable here, and a bounded table's value never exceeds the exact one's
    (``tests/test_tables.py`` proves it against brute force).

    - ``max_sum``: the free tiles' sum. Below twice the target it binds and is part of the name
      (``442-512-s616``); the exact tables' bounds lie above every reachable position's.
    - ``small_sum`` and ``large_from`` (pruning, both or neither; name suffix ``-p``): tiles below
      ``2**large_from`` sum to at most ``small_sum``, and each tile from ``2**large_from`` up to the
      target appears at most once, except the smallest of them on the board, which may appear twice
      (the pair about to merge: ``256 128 64 64`` -> ``256 128 128`` -> ``256 256``).
      game-difficulty/2048EndgameTablebase's help, section 6.3, prunes its large tables so and
      reports a loss of about 0.01%.
    """

    formation: Formation
    target: int
    max_sum: int
    p_two: float = P_TWO
    small_sum: int = 0
    large_from: int = 0

    def __post_init__(self) -> None:
        checks.whole("table target exponent", self.target, 2, 14)
        checks.whole("table max_sum", self.max_sum, 2 ** self.target,
                     why="a table's free tiles must have room for its target")
        checks.probability("table p_two", self.p_two, zero=False)
        if (self.small_sum == 0) != (self.large_from == 0):
            raise ValueError("table pruning takes small_sum and large_from together (or neither)")
        if self.pruned:
            checks.whole("table large_from", self.large_from, 2, self.target - 1,
                         why="the large tiles lie below the target")
            checks.whole("table small_sum", self.small_sum, 2 ** self.large_from,
                         why="the small tiles must have room to build the smallest large tile")

    @property
    def pruned(self) -> bool:
        return self.large_from != 0

    @property
    def capped(self) -> bool:
        """Whether ``max_sum`` binds (below twice the target): part of the table's name."""
        return self.max_sum < 2 ** (self.target + 1)

    @property
    def name(self) -> str:
        cap = f"-s{self.max_sum}" if self.capped else ""
        return f"{self.formation.name}-{2 ** self.target}{cap}{'-p' if self.pruned else ''}"

    def describe(self) -> dict:
        """The table's identity, recorded in its ``table.json`` and compared at load (pruning keys
        only where set, so the exact tables keep the identity they were built with)."""
        out = {
            "formation": self.formation.describe(),
            "target": self.target,
            "max_sum": self.max_sum,
            "p_two": self.p_two,
            "format": FORMAT_VERSION,
        }
        if self.pruned:
            out.update(small_sum=self.small_sum, large_from=self.large_from)
        return out

    def rules(self) -> TableRules:
        """The record the kernels read (:class:`TableRules`)."""
        f = self.formation
        places = f.places
        return TableRules(
            np.uint64(f.fixed_mask), np.uint64(f.goal_mask), places[1], places[2], places[3],
            np.int64(self.target),
            np.int64(self.max_sum // 2),
            np.int64(self.small_sum // 2) if self.pruned else NO_BOUND,
            np.int64(self.large_from) if self.pruned else NO_LARGE,
        )


F442 = Formation("442", fixed=(0, 1, 2, 3, 7, 6), anchor=6, goals=(5, 10))
F443 = Formation("443", fixed=(0, 1, 2, 3, 7), anchor=7, goals=(6, 11))
"""Eleven free cells: the top row and (1, 3) hold the five largest tiles, the anchor is (1, 3); the
phase before ``442``, where its sixth tile is built (macroxue/2048-ai's 11-cell table fixes the same
five cells)."""

F442T = Formation("442t", fixed=(0, 1, 2, 3, 7, 6), anchor=6, goals=(5, 10),
                  slides=((0, 1, 2, 3, 6, 5), (0, 1, 2, 3, 5, 4)))
"""``442`` with transport: the second row's two large tiles (``1024 512``) may slide left along their
row and back, so a position whose only moves push them left is not lost (game-difficulty's ``442t``,
its help's "t" suffix: a 1x2 section that moves along its line)."""

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
# 442-512 bounded as game-difficulty bounds its tables (docs/tables.md, "Bounded tables"): its free sum
# capped at 616 (the target and 104 more), pruned (tiles of 32 or less sum to at most 160; 64 and more
# once each, the smallest present twice), and both.
_register(TableSpec(F442, 9, 616), 64_115_530)
_register(TableSpec(F442, 9, 2 ** 11, small_sum=160, large_from=6), 60_030_907)
_register(TableSpec(F442, 9, 616, small_sum=160, large_from=6), 59_825_915)
_register(TableSpec(F443, 8, 360), 186_712_553)
_register(TableSpec(F443, 9, 616), 440_707_282)
# 442-1024 capped likewise (the target and 104 more): past 32768 the formation's walls are one tile
# higher (32768 ... 2048), so the stage 442-512 plays before the first 32768 needs a 1024 target after it.
_register(TableSpec(F442, 10, 1128), 116_372_202)

# 442 with transport (the second row's pair may slide left and back), at the targets where the fixed
# formation gets stuck: 3.4x and 3.3x the positions of 442-256 and 442-512-s616.
_register(TableSpec(F442T, 8, 2 ** 12), 113_750_984)
_register(TableSpec(F442T, 9, 616), 212_274_719)

DEFAULT = ("442-64", "442-128", "442-256", "442-512")
"""The tables ``ai2048 tables build`` builds and the ``endgame`` agent reads by default. ``442-32`` is
left out: building a 32 is near certain by many moves, and a table that commits the free cells to
it played worse than the network's search there (docs/tables.md, "What moved the rate")."""


LARGE = ("442-64", "442-128", "442-256", "442-512-s616", "443-256-s360", "443-512-s616")
"""The large set (``ai2048 tables build large``, the agent's ``tables=large``): the ``442`` tables with
``442-512`` capped, and the 11-free-cell ``443`` tables, capped likewise; larger than the default
set (docs/tables.md gives the sizes, build time and strength)."""



def sets() -> dict[str, tuple[str, ...]]:
    """The named sets of tables: ``ai2048 tables build SET``, and the agent's ``tables`` option."""
    return {"default": DEFAULT, "large": LARGE}


def expand(names: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Table names with each set name (:func:`sets`) replaced by its tables, repeats dropped; every
    name checked (a ValueError names the unknown one and lists the known names and sets)."""
    parts = [names] if isinstance(names, str) else list(names)
    named = sets()
    out: list[str] = []
    for n in parts:
        for t in named.get(n, (n,)):
            if t not in TABLES:
                raise ValueError(f"unknown table {t!r}; known: {', '.join(TABLES)}; sets: {', '.join(named)}")
            if t not in out:
                out.append(t)
    return tuple(out)


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
