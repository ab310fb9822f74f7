"""``Game2048Env``: the Gymnasium environment on the numba engine (one board, one kernel call a step).

The step is :func:`ai2048.engine.batch.step_single`: the batch core's per-board step with the
options applied, so the single env is the vector env's N=1 case without the arrays around it.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ai2048.board_io import check_action, render_text
from ai2048.engine.batch import observe_single, step_single
from ai2048.engine.rng import seed_state
from ai2048.engine.spawn import new_board
from ai2048.envs.batch import kernel_options
from ai2048.envs.encoders import encode_obs, observation_space
from ai2048.envs.options import EnvOptions, check_env_seed, position_from_option
from ai2048.envs.render import board_frame
from ai2048.game import IllegalMoveError
from ai2048.rules import MAX_EXPONENT, Action

_MASKS = [np.array([(bits >> a) & 1 for a in range(4)], dtype=bool) for bits in range(16)]


def _blocked_32768(b: int) -> bool:
    """True if two 32768 tiles sit side by side: they would merge but the nibble cannot hold 65536."""
    cells = [(b >> (4 * i)) & 0xF for i in range(16)]
    for r in range(4):
        for c in range(4):
            if cells[4 * r + c] == MAX_EXPONENT and (
                (c < 3 and cells[4 * r + c + 1] == MAX_EXPONENT)
                or (r < 3 and cells[4 * r + c + 4] == MAX_EXPONENT)
            ):
                return True
    return False


class Game2048Env(gym.Env):
    """2048 as a Gymnasium environment (actions UP=0, RIGHT=1, DOWN=2, LEFT=3).

    ``info`` always has ``action_mask`` [4] bool, ``score``, ``max_tile`` (exact), ``moves``,
    ``board`` (the uint64 as an int: a 15 is a tile of 32768 or more), ``supers`` (their exact
    values, :mod:`ai2048.engine.supertiles`; 0 while none is past 32768) and ``illegal``. Under
    ``rules=0`` (``ai2048/Game2048-v0``) tiles stop at 32768 and ``capped`` appears when two 32768
    tiles are adjacent (they would merge under rules version 1). ``reset(options={"board": b,
    "supers": s})`` starts from a given position. See :class:`EnvOptions` for the options;
    ``max_episode_steps`` (seed 002's cutoff) comes from ``gymnasium.make``.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 8}

    def __init__(self, render_mode: str | None = None, **options: Any) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not one of ansi, rgb_array, or None")
        self.options = EnvOptions(**options)
        self.render_mode = render_mode
        self.observation_space = observation_space(self.options.obs_mode, self.options.planes,
                                                   self.options.top_exponent)
        self.action_space = spaces.Discrete(4)
        self._p_two = np.float64(self.options.p_two)
        self._opts = kernel_options(self.options)
        self._raise = self.options.illegal_action == "raise"
        self._raw_obs = self.options.obs_mode == "exponents"
        self._exact = self.options.exact
        self._rng = seed_state(0)
        self._seeded = False
        self._board = np.uint64(0)
        self._supers = np.int64(0)
        self._bits = 0
        self._max_exp = 0
        self.score = 0
        self.moves = 0

    @property
    def board(self) -> int:
        """The current board as a uint64 integer (a 15 is a tile of 32768 or more: see ``supers``)."""
        return int(self._board)

    @property
    def supers(self) -> int:
        """The exact values of the board's 15s (:mod:`ai2048.engine.supertiles`; 0: all are 32768s)."""
        return int(self._supers)

    def _info(self, illegal: bool) -> dict[str, Any]:
        b = int(self._board)
        info = {
            "action_mask": _MASKS[self._bits].copy(),
            "score": self.score,
            "max_tile": (1 << self._max_exp) if self._max_exp else 0,
            "moves": self.moves,
            "board": b,
            "supers": int(self._supers),
            "illegal": illegal,
        }
        if not self._exact and self._max_exp == MAX_EXPONENT and _blocked_32768(b):
            info["capped"] = True
        return info

    def _obs(self, exps: np.ndarray) -> np.ndarray:
        if self._raw_obs:
            return exps
        return encode_obs(exps, self.options.obs_mode, self.options.planes)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new game (two random tiles), or from ``options["board"]`` (a uint64 board, with
        ``options["supers"]`` for its tiles past 32768, or 16 / [4, 4] exact exponents 0..17), checked
        before anything changes."""
        unknown = set(options or {}) - {"board", "supers"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; the options are 'board' and "
                             "'supers'")
        given = options.get("board") if options else None
        sup = options.get("supers") if options else None
        if given is None and sup is not None:
            raise ValueError("options['supers'] needs options['board']: the supers of which board?")
        position = None if given is None else position_from_option(given, sup, self.options.rules)
        seed = check_env_seed(seed)
        super().reset(seed=seed)
        if seed is not None or not self._seeded:
            self._rng[0] = self.np_random.integers(0, 2**64, dtype=np.uint64)
            self._seeded = True
        if position is not None:
            self._board, self._supers = np.uint64(position[0]), np.int64(position[1])
        else:
            self._board, self._supers = np.uint64(new_board(self._rng, self._p_two)), np.int64(0)
        self.score = 0
        self.moves = 0
        exps = np.empty((4, 4), dtype=np.uint8)
        bits, max_exp = observe_single(self._board, self._supers, self._exact, exps)
        self._bits = int(bits)
        self._max_exp = int(max_exp)
        return self._obs(exps), self._info(False)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Play ``action``; an illegal one is handled as ``illegal_action`` says."""
        if action.__class__ is not int or not 0 <= action <= 3:
            action = check_action(action)
        if self._raise and not self._bits >> action & 1:
            legal = ", ".join(Action(a).name for a in range(4) if self._bits >> a & 1)
            raise IllegalMoveError(
                f"{Action(action).name} does not change the board; legal actions: {legal or 'none'}"
            )
        exps = np.empty((4, 4), dtype=np.uint8)
        nb, ns, gain, reward, illegal, terminated, _, bits, max_exp = step_single(
            self._board, self._supers, action, self._rng, self._p_two, self._opts, exps
        )
        self._bits = bits
        if illegal and nb == self._board:  # nothing spawned (every mode but "spawn", or a full board)
            return self._obs(exps), reward, terminated, False, self._info(True)
        self._board = np.uint64(nb)
        self._supers = ns
        self._max_exp = max_exp
        self.score += gain
        self.moves += 1
        info = {
            "action_mask": _MASKS[bits].copy(),
            "score": self.score,
            "max_tile": 1 << max_exp,
            "moves": self.moves,
            "board": int(nb),
            "supers": int(ns),
            "illegal": illegal,
        }
        if not self._exact and max_exp == MAX_EXPONENT and _blocked_32768(int(nb)):
            info["capped"] = True
        return self._obs(exps), reward, terminated, False, info

    def render(self) -> str | np.ndarray | None:
        """"ansi": a compact text board a person or a language model can read; "rgb_array": a picture."""
        if self.render_mode == "ansi":
            return f"score {self.score}  moves {self.moves}\n{render_text(self._board, self._supers)}\n"
        if self.render_mode == "rgb_array":
            exps = np.empty((4, 4), dtype=np.uint8)
            observe_single(self._board, self._supers, self._exact, exps)
            return board_frame(exps)
        return None
