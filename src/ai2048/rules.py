"""The rules of 2048 as ai2048 plays them, pinned in one place (see DESIGN.md).

Actions are clockwise, as in OpenSpiel and Jumanji. A move slides every tile towards one wall and
merges equal neighbours once per move, nearest-to-the-wall first: ``[2 2 2 2] -> [4 4 0 0]``. The
reward of a move is the sum of the merged tiles' values. A move is legal iff it changes the board;
after a legal move one tile spawns in a uniformly chosen empty cell: a 2 with probability
``P_TWO`` else a 4. A cell holds an exponent 0..15 (15 = 32768); two 32768 tiles do not merge.
"""

from __future__ import annotations

from enum import IntEnum

RULES_VERSION = 0
"""Bumped only when behaviour changes; the env id carries it (``ai2048/Game2048-v0``)."""

P_TWO = 0.9
"""Probability that a spawned tile is a 2 (else a 4)."""

MAX_EXPONENT = 15
"""Largest exponent a cell holds (2**15 = 32768); two such tiles do not merge."""

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
