"""``BoardBatch``: N games played side by side on the numba kernels, with autoreset.

The trainers' data collection: one kernel call moves and spawns every board; finished games are
reported and restarted. No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai2048.rules import P_TWO
from ai2048.train.kernels import exponents, legal_masks, reset_boards, step_boards


@dataclass
class Step:
    """What one batched step produced; arrays are [N] unless noted.

    ``boards`` are the boards after move + spawn (before any reset), ``masks`` [N, 4] their legal
    actions, ``terminal`` means no legal move (or the goal tile, when it counts as terminal),
    ``done`` = terminal or cut off (goal tile, move cutoff).
    """

    rewards: np.ndarray
    log_rewards: np.ndarray
    changed: np.ndarray
    boards: np.ndarray
    masks: np.ndarray
    max_exp: np.ndarray
    terminal: np.ndarray
    done: np.ndarray


class BoardBatch:
    """N games with their own RNG streams derived from ``seed``; same seed, same games."""

    def __init__(
        self,
        n: int,
        seed: int,
        p_two: float = P_TWO,
        goal_tile: int | None = None,
        goal_terminal: bool = True,
        cutoff: int | None = None,
    ) -> None:
        if n < 1:
            raise ValueError(f"need at least one game, got n={n}")
        self.n = n
        self.p_two = float(p_two)
        self.goal_exp = 99 if goal_tile is None else int(goal_tile).bit_length() - 1
        self.goal_terminal = goal_terminal
        self.cutoff = cutoff
        self.states = np.random.SeedSequence(seed).generate_state(n, np.uint64).astype(np.uint64)
        self.boards = np.zeros(n, dtype=np.uint64)
        self.score = np.zeros(n, dtype=np.int64)
        self.moves = np.zeros(n, dtype=np.int64)
        reset_boards(self.boards, self.states, self.p_two, np.ones(n, dtype=np.bool_))
        self.masks = legal_masks(self.boards)

    def exponents(self) -> np.ndarray:
        """[N, 16] uint8 exponents of the current boards."""
        return exponents(self.boards)

    def step(self, actions: np.ndarray) -> Step:
        """Play ``actions`` [N] (legal ones: an illegal action raises, naming the game)."""
        actions = np.asarray(actions, dtype=np.int64)
        bad = ~self.masks[np.arange(self.n), actions]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"action {int(actions[i])} is illegal in game {i} (board {int(self.boards[i]):#x})")
        rewards = np.empty(self.n, dtype=np.int64)
        log_rewards = np.empty(self.n, dtype=np.int64)
        changed = np.empty(self.n, dtype=np.bool_)
        step_boards(self.boards, actions, self.states, self.p_two, rewards, log_rewards, changed)
        self.score += rewards
        self.moves += 1
        self.masks = legal_masks(self.boards)
        max_exp = exponents(self.boards).max(axis=1)
        over = ~self.masks.any(axis=1)
        won = max_exp >= self.goal_exp
        terminal = over | (won & self.goal_terminal)
        done = over | won
        if self.cutoff is not None:
            done |= self.moves >= self.cutoff
        return Step(rewards, log_rewards, changed, self.boards.copy(), self.masks.copy(), max_exp, terminal, done)

    def restart(self, which: np.ndarray) -> list[dict[str, int]]:
        """Report the finished games in ``which`` [N] bool (score, length, max_tile) and restart them."""
        idx = np.flatnonzero(which)
        if idx.size == 0:
            return []
        max_exp = exponents(self.boards[idx]).max(axis=1)
        out = [
            {"score": int(self.score[i]), "length": int(self.moves[i]), "max_tile": 1 << int(m)}
            for i, m in zip(idx, max_exp, strict=True)
        ]
        reset_boards(self.boards, self.states, self.p_two, which)
        self.score[idx] = 0
        self.moves[idx] = 0
        self.masks[idx] = legal_masks(self.boards[idx])
        return out

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to continue these games exactly."""
        return {k: getattr(self, k).copy() for k in ("boards", "states", "score", "moves")}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore :meth:`state_dict` (the batch size must match)."""
        if len(state["boards"]) != self.n:
            raise ValueError(f"checkpoint holds {len(state['boards'])} games, the config asks for {self.n}")
        for k in ("boards", "states", "score", "moves"):
            setattr(self, k, np.asarray(state[k]).copy())
        self.masks = legal_masks(self.boards)
