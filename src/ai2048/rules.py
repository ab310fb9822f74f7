"""The rules of 2048 as ai2048 plays them, pinned in one place (see DESIGN.md).

Actions are clockwise, as in OpenSpiel and Jumanji. A move slides every tile towards one wall and
merges equal neighbours once per move, nearest-to-the-wall first: ``[2 2 2 2] -> [4 4 0 0]``. The
reward of a move is the sum of the merged tiles' values. A move is legal iff it changes the board;
after a legal move one tile spawns in a uniformly chosen empty cell: a 2 with probability
``P_TWO`` else a 4. Tiles go up to 131072 (2**17, the largest a 4x4 board can hold): two 32768s
merge into a 65536, and a 65536 merge scores 65536 (rules version 1). A board's cell holds an
exponent 0..15; a 15 is a tile of 32768 or more, whose exact value is kept beside the board
(:mod:`ai2048.engine.supertiles`). Rules version 0, which this package played before, stopped at
32768: two 32768 tiles did not merge; records and runs made under it replay under it.
"""

from __future__ import annotations

from enum import IntEnum

RULES_VERSION = 1
"""Bumped only when behaviour changes; the env id carries it (``ai2048/Game2048-v1``)."""

CAPPED_RULES = 0
"""Rules version 0: 32768 is the largest tile, two 32768s do not merge (``ai2048/Game2048-v0``)."""

RULES_VERSIONS = (CAPPED_RULES, RULES_VERSION)
"""Every rules version this package plays. The two agree on every position with at most one tile of
32768 (they differ only once two 32768s meet), so a network, table or pool made under either serves
both."""

P_TWO = 0.9
"""Probability that a spawned tile is a 2 (else a 4)."""

MAX_EXPONENT = 15
"""Largest exponent a board's cell (a nibble) holds: 2**15 = 32768, or under rules version 1 a tile of
32768 or more whose exact exponent is kept beside the board. The board kernels never merge two 15s."""

MAX_TILE_EXPONENT = 17
"""Largest exponent of a tile under rules version 1: 2**17 = 131072, the largest tile a 4x4 board can
hold (every smaller power of two down to 4, and a 4, fill the other 15 cells); so two 131072s cannot
coexist: building the second needs 16 cells besides the first."""

START_TILES = 2
"""Tiles placed on an empty board at the start of a game."""


class Action(IntEnum):
    """The four moves, clockwise from UP."""

    UP = 0
    RIGHT = 1
    DOWN = 2
    LEFT = 3


ACTION_NAMES = tuple(a.name.lower() for a in Action)
"""``("up", "right", "down", "left")``: an action's name in messages and JSON."""

ACTION_CHARS = "urdl"
"""One letter per action, in action order: how records and evaluation results spell a game's moves."""

SEED_ORDERS: dict[str, tuple[Action, ...]] = {
    "000": (Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT),
    "001": (Action.LEFT, Action.DOWN, Action.RIGHT, Action.UP),
    "002": (Action.UP, Action.LEFT, Action.DOWN, Action.RIGHT),
    "003": (Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT),
    "004": (Action.UP, Action.DOWN, Action.LEFT, Action.RIGHT),
    "clockwise": (Action.UP, Action.RIGHT, Action.DOWN, Action.LEFT),
}
"""Each seed's action numbering: its action index -> our Action (``SEED_ORDERS["001"][0] is Action.LEFT``)."""
