"""The options shared by the single and the vector env, checked once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.envs.encoders import check_obs_mode
from ai2048.rules import MAX_EXPONENT, P_TWO

REWARD_MODES = ("score", "log2", "moves")
ILLEGAL_MODES = ("noop", "terminate", "raise", "spawn")
MAX_NUM_ENVS = 1 << 24
"""Most games one batched env holds: about 2 GB of boards, observations and counters at this size."""


def check_num_envs(num_envs: Any) -> int:
    """``num_envs`` as an int in 1..MAX_NUM_ENVS, else an error saying the bound (not a MemoryError later)."""
    return checks.whole("num_envs", num_envs, 1, MAX_NUM_ENVS, why="one batched env's memory bound")


def check_env_seed(seed: Any) -> int | None:
    """A ``reset`` seed as a Python int >= 0 (numpy integers too, as from ``np.arange``), or None; a bool,
    a float or a negative number raises here, naming the seed (Gymnasium's seeding takes Python ints only)."""
    return checks.seed("seed", seed, hi=None)


@dataclass(frozen=True)
class EnvOptions:
    """What varies between the seeds' environments.

    Attributes:
        obs_mode: "exponents" ([4, 4] uint8), "onehot" ([planes, 4, 4]) or "tiles" (raw values).
        planes: one-hot planes; 16 covers every tile, 12 reproduces seed 000.
        reward_mode: "score" (merged values), "log2" (merged exponents, seed 000) or "moves" (1 per
            legal move, seed 001).
        illegal_action: "noop" (reward -penalty, no spawn, ``info["illegal"]``), "terminate", "raise",
            or "spawn" (seed 004's unmasked moves: reward -penalty and a tile still spawns where a cell
            is empty, counted as a move; seed 004 is ``illegal_penalty=1.0`` with ``end_on_full_board``).
        illegal_penalty: subtracted from the reward of an illegal action.
        goal_tile: end the episode when a tile reaches this value (seed 000 stops at 2048); None = never.
        goal_reward: added to the reward when the goal tile is reached (seed 000: 2048, or 11 in log2 mode).
        end_on_full_board: seed 004's quirk: end when the board is full even if merges remain.
        p_two: probability that a spawned tile is a 2.
    """

    obs_mode: str = "exponents"
    planes: int = 16
    reward_mode: str = "score"
    illegal_action: str = "noop"
    illegal_penalty: float = 0.0
    goal_tile: int | None = None
    goal_reward: float = 0.0
    end_on_full_board: bool = False
    p_two: float = P_TWO

    def __post_init__(self) -> None:
        check_obs_mode(self.obs_mode, self.planes)
        checks.choice("reward_mode", self.reward_mode, REWARD_MODES)
        checks.choice("illegal_action", self.illegal_action, ILLEGAL_MODES)
        for name in ("illegal_penalty", "goal_reward"):  # numpy numbers too (np.float32(1.0) was refused)
            object.__setattr__(self, name, checks.number(name, getattr(self, name)))
        if self.goal_tile is not None:
            g = self.goal_tile
            if not checks.is_whole(g) or g < 4 or g & (g - 1) or g > 2**MAX_EXPONENT:
                raise ValueError(
                    f"goal_tile={g!r} must be a power of two in 4..{2**MAX_EXPONENT} (e.g. 2048), or None"
                )
        object.__setattr__(self, "end_on_full_board", checks.flag("end_on_full_board",
                                                                    self.end_on_full_board))
        object.__setattr__(self, "p_two", checks.probability("p_two", self.p_two))

    @property
    def goal_exponent(self) -> int:
        """Exponent of the goal tile, or 99 when there is none."""
        return 99 if self.goal_tile is None else int(self.goal_tile).bit_length() - 1


def board_from_option(value: Any) -> int:
    """``reset(options={"board": ...})`` accepts a uint64 board or 16 / [4, 4] exponents."""
    from ai2048.board_io import check_board, encode

    if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.shape != ()):
        return encode(value)
    return int(check_board(value))
