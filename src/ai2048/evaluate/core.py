"""What every evaluation path shares: the games' seeds, the rules of a game, one game's record.

Game ``i`` of an evaluation with seed ``S`` uses the seed
``SeedSequence(S, spawn_key=(i,)).generate_state(1, uint64)[0]`` (:func:`game_seeds`), so the same
``S`` gives every agent the same games whatever the path or the number of workers, and a game is
replayed by ``Game(seed)`` plus its recorded actions.

:class:`Rules` is how a game is played and when it ends, checked once and handed to every path
(one game at a time, games in flight, whole games in numba, the games stream); :func:`game_record`
is the one record of a finished game they all write.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.board_io import check_rules
from ai2048.engine.board import count_empty, max_exponent
from ai2048.engine.supertiles import exact_max_exponent
from ai2048.rules import ACTION_CHARS, CAPPED_RULES, MAX_EXPONENT, P_TWO, RULES_VERSION

MAX_WORKERS = 256
"""Most ``workers`` (a thread or a process each): ``workers=1000000`` started threads until the machine
ran out of memory, deaf to Ctrl-C."""
MAX_MOVES = 10**9
"""Largest ``max_moves``: no game lasts past 262,144 moves (each spawn adds at least 2 to a tile sum that
cannot pass 16 x 32768), so a larger cap means nothing (and 10**30 overflowed the numba kernels)."""

ILLEGAL_MOVES = ("reject", "penalty")
"""What an evaluation does with an agent's move that changes nothing: ``reject`` stops the run with
an :class:`~ai2048.evaluate.result.EvalError` (agents play legal moves); ``penalty`` plays it as seed
004 does (its moves are not masked): the move costs 1 point and a tile still spawns."""


def game_seeds(seed: int, games: int) -> list[int]:
    """Per-game seeds: ``SeedSequence(seed, spawn_key=(i,))`` for game ``i`` (independent of ``games``)."""
    return [
        int(np.random.SeedSequence(int(seed), spawn_key=(i,)).generate_state(1, np.uint64)[0])
        for i in range(games)
    ]


def check_workers(workers: Any) -> int:
    """``workers`` checked: a whole number in 1..:data:`MAX_WORKERS`."""
    return checks.whole("workers", workers, 1, MAX_WORKERS, why="a thread or process each")


def check_max_moves(max_moves: Any) -> int | None:
    """``max_moves`` checked: None (play to the end) or a whole number in 1..:data:`MAX_MOVES`."""
    if max_moves is None:
        return None
    return checks.whole("max_moves", max_moves, 1, MAX_MOVES,
                        why="no game lasts past 262,144 moves; leave it out to play every game to the end")


def check_end_rules(goal_tile: Any, end_on_full_board: Any) -> tuple[int | None, bool]:
    """(goal_tile, end_on_full_board) checked: a power of two in 4..32768 or None, and a bool."""
    if goal_tile is not None:
        goal_tile = checks.tile("goal_tile", goal_tile, 4, 2**MAX_EXPONENT,
                                why="e.g. 2048, or None to play to the end")
    return goal_tile, checks.flag("end_on_full_board", end_on_full_board)


def check_illegal_move(illegal_move: Any, end_on_full_board: bool) -> str:
    """``illegal_move`` checked: one of :data:`ILLEGAL_MOVES`; ``penalty`` needs ``end_on_full_board``."""
    if illegal_move not in ILLEGAL_MOVES:
        raise ValueError(f"illegal_move={illegal_move!r}: use one of {', '.join(ILLEGAL_MOVES)}")
    if illegal_move == "penalty" and not end_on_full_board:
        raise ValueError(
            "illegal_move='penalty' needs end_on_full_board=True (seed 004 plays them together: on a full "
            "board a move that changes nothing has no cell to spawn in)"
        )
    return str(illegal_move)


SEED004_RULES_FIX = ("play seed 004's rules (`ai2048 eval --preset seed004-exact`, or --end-on-full-board "
                     "--illegal-move penalty; in Python end_on_full_board=True, illegal_move='penalty') "
                     "or mask the agent's moves (--set illegal_action=mask)")
"""How to play an agent that chooses moves which change nothing: under the rules that allow them, or
masked; the words every such refusal ends with."""


def check_agent_fits(illegal_action: Any, illegal_move: str) -> None:
    """An agent set to choose moves that change nothing (``illegal_action="penalty"``, seed 004's unmasked
    argmax) plays only where such a move is played (``illegal_move="penalty"``): under ``reject`` its
    first unchanged move would stop the run mid-way, so it is refused before any game, naming the fix."""
    if illegal_action == "penalty" and illegal_move != "penalty":
        raise ValueError(
            "the agent's illegal_action=penalty chooses moves that change nothing (seed 004's unmasked "
            f"argmax), and these games stop at such a move (illegal_move={illegal_move!r}, the standard "
            "rules): " + SEED004_RULES_FIX
        )


@dataclass(frozen=True)
class Rules:
    """How an evaluation's games are played and when they end; checked when made.

    A game runs until no move is legal, or ``max_moves``; ``goal_tile`` stops it when a tile reaches
    that value (seeds 000 and 003 stop at 2048) and ``end_on_full_board`` when the board is full,
    even if merges remain, or holds a 32768 (seed 004's ``end()``), both looked at after each move
    and its spawn, as the seeds do. ``illegal_move="penalty"`` plays seed 004's unmasked moves: a move
    that changes nothing costs 1 point while a tile still spawns (with ``end_on_full_board``).
    """

    p_two: float = P_TWO
    """Probability that a spawned tile is a 2."""
    max_moves: int | None = None
    """Stop each game after this many moves (None: play to the end)."""
    goal_tile: int | None = None
    """Stop a game when a tile reaches this value (None: never)."""
    end_on_full_board: bool = False
    """Stop a game at a full board or a 32768 (seed 004's ``end()``)."""
    illegal_move: str = "reject"
    """``reject`` or ``penalty`` (:data:`ILLEGAL_MOVES`)."""
    rules: int = RULES_VERSION
    """The rules version (:data:`ai2048.rules.RULES_VERSIONS`): 1 plays past 32768, 0 stops there."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", check_rules(self.rules))
        object.__setattr__(self, "max_moves", check_max_moves(self.max_moves))
        goal, full = check_end_rules(self.goal_tile, self.end_on_full_board)
        object.__setattr__(self, "goal_tile", goal)
        object.__setattr__(self, "end_on_full_board", full)
        object.__setattr__(self, "illegal_move", check_illegal_move(self.illegal_move, full))

    @property
    def exact(self) -> bool:
        """Whether tiles past 32768 are played (rules version 1), not capped (version 0)."""
        return self.rules != CAPPED_RULES

    @property
    def penalty(self) -> bool:
        """Whether a move that changes nothing is played (seed 004), not refused."""
        return self.illegal_move == "penalty"

    def ends_early(self, board: int) -> bool:
        """:func:`ends_early` under these rules."""
        return ends_early(board, self.goal_tile, self.end_on_full_board)

    def capped(self, moves: int) -> bool:
        """Whether a game of ``moves`` moves has reached ``max_moves``."""
        return self.max_moves is not None and moves >= self.max_moves


def ends_early(board: int, goal_tile: int | None, end_on_full_board: bool) -> bool:
    """True when ``board`` (after a move and its spawn) ends the game by a seed's rule: a tile of at
    least ``goal_tile``, or, with ``end_on_full_board``, no empty cell or a 32768 (seed 004)."""
    if goal_tile is None and not end_on_full_board:
        return False
    b = np.uint64(board)
    top = int(max_exponent(b))
    if goal_tile is not None and top >= int(goal_tile).bit_length() - 1:
        return True
    return end_on_full_board and (int(count_empty(b)) == 0 or top >= MAX_EXPONENT)


def action_letters(actions: bytes | bytearray) -> str:
    """Actions (bytes of action numbers 0..3) as a record's letters, one per action in Action order
    (``urdl``: UP, RIGHT, DOWN, LEFT, as in :mod:`ai2048.records`)."""
    return bytes(actions).translate(_LETTERS).decode()


_LETTERS = bytes.maketrans(bytes(range(4)), ACTION_CHARS.encode())


def game_record(seed: int, score: int, moves: int, board: int, seconds: float,
                actions: str, supers: int = 0) -> dict[str, Any]:
    """The record of one finished game, as every path writes it: its seed, score, moves, largest tile,
    final board (``0x`` and 16 hex digits), the seconds charged to it and its actions (``urdl``); and
    ``final_supers``, the exact values of its tiles past 32768 (:mod:`ai2048.engine.supertiles`), when
    it has any."""
    e = int(exact_max_exponent(np.uint64(board), np.int64(supers)))
    rec = {
        "seed": int(seed),
        "score": int(score),
        "moves": int(moves),
        "max_tile": 1 << e if e else 0,
        "final_board": f"0x{int(board):016x}",
        "seconds": float(seconds),
        "actions": actions,
    }
    if supers:
        rec["final_supers"] = int(supers)
    return rec
