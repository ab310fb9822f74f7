"""``BoardBatch``: the trainers' face of :class:`~ai2048.envs.batch.GameBatch` (N games side by side).

The trainers' data collection: one kernel call moves and spawns every board (illegal actions are
refused before anything changes); finished games are reported and restarted. No torch here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ai2048 import checks
from ai2048.envs.batch import GameBatch, tile_values
from ai2048.envs.options import EnvOptions
from ai2048.rules import P_TWO


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


class BoardBatch(GameBatch):
    """N games with their own RNG streams derived from ``seed``; same seed, same games.

    The serial kernels run (trainer batches are tens to hundreds of games, and training processes
    may fork); the goal tile ends a game as terminal or, with ``goal_terminal=False``, as a cut.
    """

    def __init__(
        self,
        n: int,
        seed: int,
        p_two: float = P_TWO,
        goal_tile: int | None = None,
        goal_terminal: bool = True,
        cutoff: int | None = None,
    ) -> None:
        checks.whole("n", n, 1, why="the games played side by side")
        options = EnvOptions(illegal_action="raise", goal_tile=goal_tile, p_two=p_two)
        super().__init__(n, options, goal_terminal=goal_terminal, cutoff=cutoff, seed=seed, parallel=False)
        self.reset()

    @property
    def score(self) -> np.ndarray:
        """[N] int64 score of every game (the trainers' name for :attr:`scores`)."""
        return self.scores

    def exponents(self) -> np.ndarray:
        """[N, 16] uint8 exponents of the current boards."""
        return self.obs.reshape(self.n, 16)

    def step(self, actions: np.ndarray, hold: np.ndarray | None = None) -> Step:  # type: ignore[override]
        """Play ``actions`` [N] (legal ones: an illegal action raises, naming the game)."""
        out = super().step(np.asarray(actions, dtype=np.int64), hold)
        return Step(
            out.gains, out.log_gains, ~out.illegal, self.boards.copy(), out.masks, out.max_exp,
            out.terminated, out.terminated | out.truncated,
        )

    def restart(self, which: np.ndarray) -> list[dict[str, int]]:
        """Report the finished games in ``which`` [N] bool (score, length, max_tile) and restart them."""
        which = np.asarray(which, dtype=np.bool_)
        idx = np.flatnonzero(which)
        if idx.size == 0:
            return []
        tiles = tile_values(self.max_exp[idx])
        out = [
            {"score": int(self.scores[i]), "length": int(self.moves[i]), "max_tile": int(t)}
            for i, t in zip(idx, tiles, strict=True)
        ]
        self.reset(which)
        return out

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to continue these games exactly."""
        return {
            "boards": self.boards.copy(), "states": self.states.copy(), "score": self.scores.copy(),
            "moves": self.moves.copy(), "steps": self.steps.copy(),
        }
