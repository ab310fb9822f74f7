"""The friendly Python face of the engine: checked functions on boards and the ``Game`` object."""

from __future__ import annotations

from typing import Any

import numpy as np

from ai2048 import checks, engine
from ai2048.board_io import check_action, check_board, check_position, check_rules, exact_tiles, render_text
from ai2048.engine.board import count_empty
from ai2048.engine.supertiles import (
    exact_cells,
    exact_legal_bits,
    exact_max_exponent,
    exact_move,
    planning_view,
    view_and_forced,
)
from ai2048.rules import CAPPED_RULES, MAX_EXPONENT, P_TWO, RULES_VERSION, Action


class IllegalMoveError(ValueError):
    """Raised when a move that does not change the board is played on a ``Game``."""


def move(board: Any, action: Any) -> tuple[int, int]:
    """Slide ``board`` in direction ``action`` without spawning: (new board, reward).

    The move is legal iff ``new_board != board``.
    """
    b, r = engine.move(check_board(board), check_action(action))
    return int(b), int(r)


_MASKS = [np.array([(bits >> a) & 1 for a in range(4)], dtype=bool) for bits in range(16)]
for _m in _MASKS:
    _m.setflags(write=False)


def legal_mask(board: Any) -> np.ndarray:
    """[4] bool, True where the action (UP, RIGHT, DOWN, LEFT) changes the board."""
    return _MASKS[int(engine.legal_bits(check_board(board)))].copy()


def is_over(board: Any) -> bool:
    """True iff no move changes the board."""
    return bool(engine.is_over(check_board(board)))


def spawn_outcomes(board: Any, p_two: float = P_TWO) -> list[tuple[int, float]]:
    """Every (board after spawn, probability): each empty cell, the 2 then the 4 (seed 004's allpopup)."""
    boards, probs = engine.spawn_outcomes(check_board(board), checks.probability("p_two", p_two))
    return [(int(b), float(p)) for b, p in zip(boards, probs, strict=True)]


_NIBBLES = 0x1111111111111111
_BIG_MERGE = 1 << MAX_EXPONENT  # a reward this large made a tile of 32768 or more


class Game:
    """One game of 2048 with its own seeded random stream.

    Under rules version 1 (the default) tiles go past 32768: ``board`` holds a 15 for a tile of 32768
    or more and ``supers`` its exact value (:mod:`ai2048.engine.supertiles`); ``rules=0`` plays the
    capped rules of version 0, where two 32768s do not merge (records made under it replay so).

    >>> g = Game(seed=1)
    >>> reward = g.step(g.legal_actions()[0])
    >>> g.moves
    1
    """

    def __init__(self, seed: int | None = None, p_two: float = P_TWO, board: Any = None, *,
                 supers: Any = 0, rules: Any = RULES_VERSION) -> None:
        self.rules = check_rules(rules)
        self.p_two = checks.probability("p_two", p_two)
        self._rng = engine.seed_state(checks.seed("seed", seed))
        if board is None:
            if supers != 0:
                raise ValueError("supers needs a board: pass board= with its tiles of 32768 or more")
            self._set(int(engine.new_board(self._rng, self.p_two)), 0)
        else:
            self._set(*self._checked(board, supers))
        self.score = 0
        self.moves = 0

    def _set(self, board: int, supers: int) -> None:
        """Set the position and whether its moves need the exact path (two tiles of 32768 or more, or a
        value past 32768 recorded): the flag that keeps every other move on the bitboard."""
        self._board, self._supers = board, supers
        t = board & (board >> 1) & (board >> 2) & (board >> 3) & _NIBBLES  # bit 4i: cell i holds a 15
        self._exact = self.rules != CAPPED_RULES and bool(supers or t & (t - 1))

    def _checked(self, board: Any, supers: Any) -> tuple[int, int]:
        b, s = check_position(board, supers)
        if s and self.rules == CAPPED_RULES:
            raise ValueError(f"supers={s:#x} records tiles past 32768, which rules version {CAPPED_RULES} "
                             f"does not have; play them under rules={RULES_VERSION}")
        return int(b), s

    @property
    def board(self) -> int:
        """The current board as a uint64 integer (a 15 is a tile of 32768 or more: see ``supers``)."""
        return self._board

    @board.setter
    def board(self, value: Any) -> None:
        """Set the position, every 15 a 32768 (``set_position`` takes larger tiles); ``17.9``, ``-5`` or
        ``2**64 + 17`` raise here (they used to be truncated or crash later)."""
        self._set(*self._checked(value, 0))

    @property
    def supers(self) -> int:
        """The exact values of the board's 15s: 2 bits a cell, ``exponent - 15`` (0 when all are 32768s)."""
        return self._supers

    def set_position(self, board: Any, supers: Any = 0) -> None:
        """Set the exact position: ``board`` and its tiles of 32768 or more (checked, as ``Game(board=...,
        supers=...)``)."""
        self._set(*self._checked(board, supers))

    @property
    def cells(self) -> np.ndarray:
        """[16] int64 exact exponents, row-major (0 = empty; up to 17 = 131072)."""
        return exact_cells(np.uint64(self._board), np.int64(self._supers))

    @property
    def tiles(self) -> np.ndarray:
        """[4, 4] int64 exact tile values (0 = empty)."""
        return exact_tiles(self._board, self._supers)

    @property
    def view(self) -> int:
        """The board an agent plays (:func:`ai2048.engine.supertiles.planning_view`): the board, with two
        equal tiles of 32768 or more shown as 16384s, so a search plans their merge."""
        if self.rules == CAPPED_RULES:
            return self._board
        return int(planning_view(np.uint64(self._board), np.int64(self._supers)))

    def to_play(self) -> tuple[int, int]:
        """(the board an agent plays, -1), or (it, a move every game loop plays unasked): :attr:`view`,
        and the position's first legal move where the view has none
        (:func:`~ai2048.engine.supertiles.view_and_forced`: two equal tiles of 32768 or more beside a
        16384, so not shown as 16384s, and nothing else to move)."""
        if self.rules == CAPPED_RULES:
            return self._board, -1
        view, forced = view_and_forced(np.uint64(self._board), np.int64(self._supers))
        return int(view), int(forced)

    @property
    def max_tile(self) -> int:
        """Value of the largest tile (0 on an empty board)."""
        e = int(exact_max_exponent(np.uint64(self._board), np.int64(self._supers)))
        return 1 << e if e else 0

    def _legal_bits(self) -> int:
        if self.rules == CAPPED_RULES:
            return int(engine.legal_bits(np.uint64(self._board)))
        return int(exact_legal_bits(np.uint64(self._board), np.int64(self._supers)))

    @property
    def is_over(self) -> bool:
        """True iff no move changes the position."""
        return self._legal_bits() == 0

    def legal_actions(self) -> list[Action]:
        """The actions that change the position, in action order."""
        bits = self._legal_bits()
        return [Action(a) for a in range(4) if bits >> a & 1]

    def after(self, action: Any) -> tuple[int, int, int]:
        """(board, supers, reward) of ``action`` without a spawn; legal iff the position changes."""
        a = check_action(action)
        if self.rules == CAPPED_RULES:
            nb, r = engine.move(np.uint64(self._board), a)
            return int(nb), 0, int(r)
        nb, ns, r = exact_move(np.uint64(self._board), np.int64(self._supers), np.int64(a))
        return int(nb), int(ns), int(r)

    def step(self, action: Any, *, penalty: bool = False) -> int:
        """Play ``action``, spawn a tile, and return the reward; an illegal move raises.

        With ``penalty`` (seed 004's unmasked moves) a move that changes nothing is played: it
        costs 1 point (reward -1) and a tile still spawns; on a full board it raises, as there
        is no cell to spawn in.
        """
        a = check_action(action)
        b = self._board
        if self._exact:
            nb, ns, r = self.after(a)
            unchanged = nb == b and ns == self._supers
        else:  # the bitboard move is exact: at most one 32768 and no larger tile
            nb, r = engine.move(np.uint64(b), a)
            ns = 0
            unchanged = nb == b
        if unchanged:
            if penalty and int(count_empty(np.uint64(nb))) > 0:
                r = -1
            else:
                legal = ", ".join(x.name for x in self.legal_actions()) or "none (the game is over)"
                raise IllegalMoveError(
                    f"{Action(a).name} does not change the board, so it is not a legal move; legal: {legal}"
                )
        after = int(engine.spawn(np.uint64(nb), self._rng, self.p_two))
        if self._exact or r >= _BIG_MERGE:  # a tile of 32768 or more was made: look again
            self._set(after, ns)
        else:
            self._board = after
        self.score += int(r)
        self.moves += 1
        return int(r)

    def __str__(self) -> str:
        text = render_text(self._board, self._supers)
        return f"score {self.score}  moves {self.moves}  max {self.max_tile}\n{text}"

    def __repr__(self) -> str:
        sup = f", supers={self._supers:#x}" if self._supers else ""
        rules = f", rules={self.rules}" if self.rules != RULES_VERSION else ""
        return f"Game(board={self.board:#018x}{sup}, score={self.score}, moves={self.moves}{rules})"
