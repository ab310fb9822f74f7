"""Replaying a game from its seed and actions, fast enough to replay thousands of long games.

``Game(seed)`` draws the two start tiles and then one spawn per legal move from one SplitMix64
stream, so ``seed + actions`` determine the whole game. These kernels make exactly the same calls
in the same order as :class:`ai2048.Game` (``new_board`` then ``move`` + ``spawn``), which the
tests check move for move. With ``penalty`` they replay seed 004's unmasked moves too (a move that
changes nothing costs 1 point and a tile still spawns), as ``Game.step(a, penalty=True)`` plays them.
With ``exact`` (rules version 1) they play tiles past 32768 as the game does
(:func:`~ai2048.engine.supertiles.exact_move`) and return each board's ``supers``; without it, the
capped rules of version 0 (two 32768s do not merge), as records of that version were played.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ai2048.engine.board import count_empty
from ai2048.engine.spawn import new_board, spawn
from ai2048.engine.supertiles import look_again, loop_move


@njit(cache=True)
def replay_boards(
    state: np.ndarray, p_two: np.float64, actions: np.ndarray, penalty: bool = False, exact: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.int64, np.ndarray]:
    """Play ``actions`` [n] from a fresh game on RNG ``state`` (uint64[1], advanced in place).

    Returns ``(boards [n+1] uint64, afterstates [n] uint64, scores [n+1] int64, bad, supers [n+1]
    int64)``: the board
    before each move and at the end, the board after each move before its spawn, the cumulative
    score, and ``bad`` = index of the first action that is out of range or does not change the
    board (with ``penalty``: that does not change a full board) (-1 if every action is legal), and
    the exact values of each board's tiles past 32768. Entries from ``bad`` on are left as zero.
    """
    n = actions.shape[0]
    boards = np.zeros(n + 1, dtype=np.uint64)
    after = np.zeros(n, dtype=np.uint64)
    scores = np.zeros(n + 1, dtype=np.int64)
    supers = np.zeros(n + 1, dtype=np.int64)
    b = new_board(state, p_two)
    boards[0] = b
    s = np.int64(0)
    slow = False
    score = np.int64(0)
    for i in range(n):
        a = np.int64(actions[i])
        if a < 0 or a > 3:
            return boards, after, scores, np.int64(i), supers
        nb, ns, r = loop_move(b, s, slow, a)
        if nb == b and ns == s:
            if not penalty or count_empty(b) == 0:
                return boards, after, scores, np.int64(i), supers
            r = np.int64(-1)
        after[i] = nb
        b = spawn(nb, state, p_two)
        s = ns
        slow = look_again(b, s, slow, r, exact)
        score += r
        boards[i + 1] = b
        supers[i + 1] = s
        scores[i + 1] = score
    return boards, after, scores, np.int64(-1), supers
