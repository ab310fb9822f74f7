"""``Game2048VectorEnv``: N games stepped together by one parallel numba kernel.

Registered as the ``vector_entry_point`` of ``ai2048/Game2048-v0``, so
``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`` returns it.
Slot i seeded with ``seed + i`` plays exactly the game a single env seeded with ``seed + i`` plays
under the same actions. Autoreset is Gymnasium's next-step mode: the step after an episode ends
starts a new game in that slot and ignores its action.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ai2048.board_io import render_text
from ai2048.engine.batch import batch_env_step, batch_observe
from ai2048.envs.encoders import encode_obs, observation_space
from ai2048.envs.options import EnvOptions, board_from_option, check_num_envs
from ai2048.envs.render import board_frame
from ai2048.game import IllegalMoveError
from ai2048.rules import MAX_EXPONENT


class Game2048VectorEnv(VectorEnv):
    """``num_envs`` games of 2048 in ``uint64[N]`` boards; same options as ``Game2048Env``.

    ``infos`` holds ``action_mask`` [N, 4], ``score``, ``max_tile``, ``moves``, ``board`` and
    ``illegal`` [N] arrays.
    """

    metadata = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 8,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(self, num_envs: int = 1, render_mode: str | None = None, max_episode_steps: int | None = None, **options: Any) -> None:
        check_num_envs(num_envs)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not one of ansi, rgb_array, or None")
        if max_episode_steps is not None and (isinstance(max_episode_steps, (bool, np.bool_))
                                              or not isinstance(max_episode_steps, (int, np.integer))
                                              or max_episode_steps < 1):
            raise ValueError(f"max_episode_steps={max_episode_steps!r} must be a positive int or None")
        self.options = EnvOptions(**options)
        self.num_envs = n = int(num_envs)
        self.render_mode = render_mode
        self.max_episode_steps = max_episode_steps
        self.single_observation_space = observation_space(self.options.obs_mode, self.options.planes)
        self.single_action_space = spaces.Discrete(4)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = spaces.MultiDiscrete(np.full(n, 4))
        self._boards = np.zeros(n, dtype=np.uint64)
        self._states = np.zeros(n, dtype=np.uint64)
        self._scores = np.zeros(n, dtype=np.int64)
        self._moves = np.zeros(n, dtype=np.int64)
        self._steps = np.zeros(n, dtype=np.int64)
        self._restart = np.zeros(n, dtype=bool)
        self._rewards = np.zeros(n, dtype=np.int64)
        self._log_rewards = np.zeros(n, dtype=np.int64)
        self._illegal = np.zeros(n, dtype=bool)
        self._masks = np.zeros((n, 4), dtype=bool)
        self._max_exp = np.zeros(n, dtype=np.uint8)
        self._empty = np.zeros(n, dtype=np.int64)
        self._exps = np.zeros((n, 4, 4), dtype=np.uint8)
        self._seeded = False

    @property
    def boards(self) -> np.ndarray:
        """A copy of the current boards, ``uint64[N]``."""
        return self._boards.copy()

    def _seed_states(self, seed: int | list[int | None] | None) -> None:
        """Seed every slot's stream; every seed is checked before any slot changes."""
        if isinstance(seed, (bool, np.bool_)):
            raise TypeError(f"seed must be an int, one seed per env, or None; got {seed!r}")
        if seed is None or isinstance(seed, (int, np.integer)):
            seeds: list[int | None] = [None if seed is None else int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"got {len(seeds)} seeds for {self.num_envs} envs; pass one int or one seed per env")
        states = np.empty(self.num_envs, dtype=np.uint64)
        for i, s in enumerate(seeds):
            rng, _ = seeding.np_random(s)
            states[i] = rng.integers(0, 2**64, dtype=np.uint64)
        self._states[:] = states
        self._np_random, _ = seeding.np_random(seeds[0])

    def _infos(self) -> dict[str, Any]:
        m = self._max_exp.astype(np.int64)
        return {
            "action_mask": self._masks.copy(),
            "score": self._scores.copy(),
            "max_tile": np.where(m > 0, np.left_shift(1, m), 0),
            "moves": self._moves.copy(),
            "board": self._boards.copy(),
            "illegal": self._illegal.copy(),
        }

    def _obs(self) -> np.ndarray:
        o = self.options
        return encode_obs(self._exps.copy(), o.obs_mode, o.planes)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every slot afresh; ``options={"boards": uint64[N] or list}`` sets the positions.

        Every argument is checked before any slot changes: a reset that raises leaves the games as they were.
        """
        unknown = set(options or {}) - {"boards"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; the only option is 'boards'")
        boards = None
        if options and options.get("boards") is not None:
            given = options["boards"]
            if len(given) != self.num_envs:
                raise ValueError(f"options['boards'] has {len(given)} boards for {self.num_envs} envs")
            boards = np.array([board_from_option(b) for b in given], dtype=np.uint64)
        if seed is not None or not self._seeded:
            self._seed_states(seed)
            self._seeded = True
        self._restart[:] = True
        self._scores[:] = 0
        self._moves[:] = 0
        self._steps[:] = 0
        self._illegal[:] = False
        actions = np.zeros(self.num_envs, dtype=np.int64)
        self._run(actions)
        if boards is not None:
            self._boards[:] = boards
            batch_observe(self._boards, self._masks, self._max_exp, self._empty, self._exps)
        self._restart[:] = False
        return self._obs(), self._infos()

    def _run(self, actions: np.ndarray) -> None:
        batch_env_step(
            self._boards, actions, self._states, self.options.p_two, self._restart, self._scores,
            self._moves, self._rewards, self._log_rewards, self._illegal, self._masks, self._max_exp,
            self._empty, self._exps,
        )

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every slot with ``actions`` [N] (ints 0..3)."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):
            raise TypeError(f"actions must be integers 0..3, got dtype {a.dtype}")
        if a.size and (a.min() < 0 or a.max() > 3):
            raise ValueError("actions must be in 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3)")
        a = a.astype(np.int64, copy=False)
        restarted = self._restart.copy()
        self._run(a)
        o = self.options
        if o.illegal_action == "raise" and self._illegal.any():
            i = int(np.argmax(self._illegal))
            raise IllegalMoveError(f"env {i}: action {int(a[i])} does not change the board\n{render_text(self._boards[i])}")
        if o.reward_mode == "score":
            rewards = self._rewards.astype(np.float64)
        elif o.reward_mode == "log2":
            rewards = self._log_rewards.astype(np.float64)
        else:
            rewards = (~self._illegal & ~restarted).astype(np.float64)
        terminated = ~self._masks.any(axis=1)
        if o.illegal_action == "terminate":
            terminated |= self._illegal
        if o.illegal_penalty:
            rewards[self._illegal] -= o.illegal_penalty
        if o.goal_tile is not None:
            won = (self._max_exp >= o.goal_exponent) & ~self._illegal & ~restarted
            terminated |= won
            if o.goal_reward:
                rewards[won] += o.goal_reward
        if o.end_on_full_board:
            terminated |= ((self._empty == 0) | (self._max_exp >= MAX_EXPONENT)) & ~restarted
        terminated &= ~restarted
        self._steps += 1
        self._steps[restarted] = 0
        if self.max_episode_steps is not None:
            truncated = (self._steps >= self.max_episode_steps) & ~terminated & ~restarted
        else:
            truncated = np.zeros(self.num_envs, dtype=bool)
        self._restart = terminated | truncated
        return self._obs(), rewards, terminated, truncated, self._infos()

    def render(self) -> Any:
        """"ansi": every board as text; "rgb_array": one picture per board."""
        if self.render_mode == "ansi":
            return "\n\n".join(
                f"env {i}  score {int(self._scores[i])}\n{render_text(self._boards[i])}" for i in range(self.num_envs)
            )
        if self.render_mode == "rgb_array":
            return [board_frame(self._exps[i]) for i in range(self.num_envs)]
        return None
