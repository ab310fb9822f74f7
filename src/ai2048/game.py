"""The friendly Python face of the engine: checked functions on boards and the ``Game`` object."""

from __future__ import annotations

from typing import Any

import numpy as np

from ai2048 import checks, engine
from ai2048.board_io import check_action, check_board, render_text
from ai2048.engine.board import count_empty, max_exponent
from ai2048.rules import P_TWO, Action


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


class Game:
    """One game of 2048 with its own seeded random stream.

    >>> g = Game(seed=1)
    >>> reward = g.step(g.legal_actions()[0])
    >>> g.moves
    1
    """

    def __init__(self, seed: int | None = None, p_two: float = P_TWO, board: Any = None) -> None:
        self.p_two = checks.probability("p_two", p_two)
        self._rng = engine.seed_state(checks.seed("seed", seed))
        self._board = (
            int(engine.new_board(self._rng, self.p_two)) if board is None else int(check_board(board))
        )
        self.score = 0
        self.moves = 0

    @property
    def board(self) -> int:
        """The current board as a uint64 integer."""
        return self._board

    @board.setter
    def board(self, value: Any) -> None:
        """Set the position; ``17.9``, ``-5`` or ``2**64 + 17`` raise here (they used to be truncated or
        crash later)."""
        self._board = int(check_board(value))

    @property
    def max_tile(self) -> int:
        """Value of the largest tile (0 on an empty board)."""
        e = int(max_exponent(np.uint64(self.board)))
        return 1 << e if e else 0

    @property
    def is_over(self) -> bool:
        """True iff no move changes the board."""
        return bool(engine.is_over(np.uint64(self.board)))

    def legal_actions(self) -> list[Action]:
        """The actions that change the board, in action order."""
        bits = int(engine.legal_bits(np.uint64(self.board)))
        return [Action(a) for a in range(4) if bits >> a & 1]

    def step(self, action: Any, *, penalty: bool = False) -> int:
        """Play ``action``, spawn a tile, and return the reward; an illegal move raises.

        With ``penalty`` (seed 004's unmasked moves) a move that changes nothing is played: it
        costs 1 point (reward -1) and a tile still spawns; on a full board it raises, as there
        is no cell to spawn in.
        """
        a = check_action(action)
        nb, r = engine.move(np.uint64(self._board), a)
        if nb == self._board:
            if penalty and int(count_empty(np.uint64(nb))) > 0:
                r = -1
            else:
                legal = ", ".join(x.name for x in self.legal_actions()) or "none (the game is over)"
                raise IllegalMoveError(
                    f"{Action(a).name} does not change the board, so it is not a legal move; legal: {legal}"
                )
        self._board = int(engine.spawn(np.uint64(nb), self._rng, self.p_two))
        self.score += int(r)
        self.moves += 1
        return int(r)

    def __str__(self) -> str:
        return f"score {self.score}  moves {self.moves}  max {self.max_tile}\n{render_text(self.board)}"

    def __repr__(self) -> str:
        return f"Game(board={self.board:#018x}, score={self.score}, moves={self.moves})"
