"""Games in flight for :func:`ai2048.evaluate.evaluate`: many games, one batched search per move.

An agent with ``games_in_flight > 1``, ``act_batch(boards, slots)`` and ``reset_slot(slot,
seed)`` (the LazyZero agents and the chance-node MCTS) is asked for the moves of up to
``games_in_flight`` games at once, so its network sees one batch of leaves from all of them per
call instead of one game's. :func:`batched_stream` yields ``(index, record, error)`` as games
finish, exactly as the one-game-at-a-time loop does, so the records go through the same
collection code. Game ``i`` starts from ``Game(seed_i)`` and its slot's random stream is the one
``reset(seed_i)`` gives, so each game's moves are the ones it gets when played alone (up to the
network's float rounding, which can depend on the batch size); only ``seconds`` differs: each
batched call's time is shared equally among the games it moved.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from ai2048.evaluate import ends_early
from ai2048.game import Game, IllegalMoveError
from ai2048.rules import ACTION_CHARS


class _Slot:
    """One game in flight: its index, seed, game, actions so far and time charged to it."""

    def __init__(self, index: int, seed: int, p_two: float) -> None:
        self.index, self.seed = index, seed
        self.game = Game(seed=seed, p_two=p_two)
        self.actions = bytearray()
        self.seconds = 0.0

    def record(self) -> dict[str, Any]:
        g = self.game
        return {
            "seed": int(self.seed),
            "score": int(g.score),
            "moves": int(g.moves),
            "max_tile": int(g.max_tile),
            "final_board": f"0x{g.board:016x}",
            "seconds": self.seconds,
            "actions": self.actions.decode(),
        }


def batched_stream(
    agent: Any, name: str, todo: list[tuple[int, int]], p_two: float, max_moves: int | None, *,
    goal_tile: int | None = None, end_on_full_board: bool = False, illegal_move: str = "reject",
) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Play the games ``todo`` = [(index, seed)], ``agent.games_in_flight`` at a time; yield
    (index, record, error).

    A game ends as in :func:`ai2048.evaluate.play_game` (no legal move, ``max_moves``, ``goal_tile``,
    a full board with ``end_on_full_board``); a finished game's slot takes the next game. An illegal
    move yields an error naming the agent, the move and the board (as ``play_game``) and stops,
    unless ``illegal_move="penalty"`` (seed 004: it costs 1 point and a tile spawns).
    """
    in_flight = getattr(agent, "games_in_flight", 1)
    if isinstance(in_flight, bool) or not isinstance(in_flight, (int, np.integer)) or in_flight < 1:
        raise ValueError(f"agent {name!r} has games_in_flight={in_flight!r}; it must be a positive int")
    missing = [m for m in ("act_batch", "reset_slot") if not callable(getattr(agent, m, None))]
    if missing:
        raise TypeError(f"agent {name!r} sets games_in_flight but has no {' or '.join(missing)}; "
                        "play it one game at a time (games_in_flight=1)")
    penalty = illegal_move == "penalty"
    queue = list(reversed(todo))
    slots: dict[int, _Slot] = {}

    def fill() -> None:
        for k in range(in_flight):
            if k not in slots and queue:
                i, s = queue.pop()
                agent.reset_slot(k, s)
                slots[k] = _Slot(i, s, p_two)

    fill()
    while slots:
        keys = np.array(sorted(slots), dtype=np.int64)
        boards = np.array([slots[int(k)].game.board for k in keys], dtype=np.uint64)
        t0 = time.perf_counter()
        actions = agent.act_batch(boards, keys)
        share = (time.perf_counter() - t0) / len(keys)
        for k, a in zip(keys, actions, strict=True):
            slot = slots[int(k)]
            g = slot.game
            board = g.board
            try:
                g.step(int(a), penalty=penalty)
            except (IllegalMoveError, ValueError, TypeError) as e:
                yield slot.index, None, (f"agent {name!r} chose {a!r} on board {board:#018x} "
                                         f"(move {g.moves + 1}): {e}")
                return
            slot.actions.append(ord(ACTION_CHARS[int(a)]))
            slot.seconds += share
            if (g.is_over or (max_moves is not None and g.moves >= max_moves)
                    or ends_early(g.board, goal_tile, end_on_full_board)):
                del slots[int(k)]
                yield slot.index, slot.record(), None
        fill()
