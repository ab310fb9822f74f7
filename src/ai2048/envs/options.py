"""The options shared by the single and the vector env, checked once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.envs.encoders import check_obs_mode
from ai2048.rules import CAPPED_RULES, MAX_EXPONENT, MAX_TILE_EXPONENT, P_TWO, RULES_VERSION, RULES_VERSIONS

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


def check_env_rules(rules: Any) -> int:
    """``rules`` as a rules version the envs play (``rules.RULES_VERSIONS``), else an error saying both."""
    return int(checks.choice(
        "rules", rules, RULES_VERSIONS,
        why=f"{RULES_VERSION}: tiles up to {2**MAX_TILE_EXPONENT}; {CAPPED_RULES}: capped at "
            f"{2**MAX_EXPONENT}"))


@dataclass(frozen=True)
class EnvOptions:
    """What varies between the seeds' environments.

    Attributes:
        obs_mode: "exponents" ([4, 4] uint8, exact: 0..17 under rules version 1), "onehot"
            ([planes, 4, 4]) or "tiles" (raw values, up to 131072).
        planes: one-hot planes, plane i for tile 2**i (plane 0: empty); a tile without a plane is an
            all-zero cell. 16 (the default, the shape every model trained on it takes) covers every
            tile up to 32768, 18 every tile of rules version 1 (65536 and 131072 too), 12 reproduces
            seed 000.
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
        rules: 1 (the default): tiles go past 32768 up to 131072, two equal tiles of 32768 or more
            merge (``ai2048/Game2048-v1``); 0: rules version 0, capped at 32768 (``ai2048/Game2048-v0``).
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
    rules: int = RULES_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", check_env_rules(self.rules))
        check_obs_mode(self.obs_mode, self.planes)
        checks.choice("reward_mode", self.reward_mode, REWARD_MODES)
        checks.choice("illegal_action", self.illegal_action, ILLEGAL_MODES)
        for name in ("illegal_penalty", "goal_reward"):  # numpy numbers too (np.float32(1.0) was refused)
            object.__setattr__(self, name, checks.number(name, getattr(self, name)))
        if self.goal_tile is not None:
            checks.tile("goal_tile", self.goal_tile, 4, 2**self.top_exponent,
                        why=f"e.g. 2048, or None; rules version {self.rules}")
        object.__setattr__(self, "end_on_full_board", checks.flag("end_on_full_board",
                                                                    self.end_on_full_board))
        object.__setattr__(self, "p_two", checks.probability("p_two", self.p_two))

    @property
    def exact(self) -> bool:
        """Whether tiles go past 32768 (rules version 1)."""
        return self.rules != CAPPED_RULES

    @property
    def top_exponent(self) -> int:
        """The largest exponent a tile reaches under these rules (17, or 15 when capped)."""
        return MAX_TILE_EXPONENT if self.exact else MAX_EXPONENT

    @property
    def goal_exponent(self) -> int:
        """Exponent of the goal tile, or 99 when there is none."""
        return 99 if self.goal_tile is None else int(self.goal_tile).bit_length() - 1


def position_from_option(value: Any, supers: Any = None, rules: int = RULES_VERSION,
                         what: str = "options['board']") -> tuple[int, int]:
    """``reset(options={"board": ..., "supers": ...})``: (board, supers) of a uint64 board with its
    supers (:mod:`ai2048.engine.supertiles`; default 0), or of 16 / [4, 4] exact exponents (0..17;
    no supers then: the grid is exact). Checked before any play: an exponent above 17, two 131072s,
    supers on a cell that is no 15, or (rules version 0) a tile past 32768 raise, naming the cell."""
    from ai2048.board_io import check_position, exact_encode

    try:
        if isinstance(value, (list, tuple)) or (isinstance(value, np.ndarray) and value.shape != ()):
            if supers is not None:
                raise ValueError("takes no supers with a grid of exponents: a grid is exact (0..17)")
            board, s = exact_encode(value)
        else:
            packed, s = check_position(value, 0 if supers is None else supers)
            board = int(packed)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{what}: {e}") from None
    if s and rules == CAPPED_RULES:
        raise ValueError(f"{what}: holds a tile past {2**MAX_EXPONENT}, which rules version {CAPPED_RULES} "
                         f"does not have; play it under rules={RULES_VERSION}")
    return int(board), int(s)
