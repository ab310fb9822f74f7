"""``Game2048VectorEnv``: N games stepped together by one numba kernel call (:class:`GameBatch`).

Registered as the ``vector_entry_point`` of ``ai2048/Game2048-v1`` (and of ``-v0``, the capped
rules), so
``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`` returns it.
Slot i seeded with ``seed + i`` plays exactly the game a single env seeded with ``seed + i`` plays
under the same actions. Autoreset is Gymnasium's next-step mode: the step after an episode ends
starts a new game in that slot and ignores its action. The options are applied inside the batch
kernel (``ai2048.engine.batch.step_board``), the same code the single env runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ai2048 import checks
from ai2048.board_io import render_text
from ai2048.envs.batch import BatchStep, GameBatch, tile_values
from ai2048.envs.encoders import encode_obs, observation_space
from ai2048.envs.options import EnvOptions, check_env_seed, check_num_envs, position_from_option
from ai2048.envs.render import board_frame


class Game2048VectorEnv(VectorEnv):
    """``num_envs`` games of 2048 in ``uint64[N]`` boards; same options as ``Game2048Env``.

    ``infos`` holds ``action_mask`` [N, 4], ``score``, ``max_tile``, ``moves``, ``board``, ``supers``
    (the exact values of each board's tiles of 32768 or more, :mod:`ai2048.engine.supertiles`) and
    ``illegal`` [N] arrays. ``parallel`` (True, False, None = automatic) picks the kernels, see
    :class:`~ai2048.envs.batch.GameBatch`.
    """

    metadata = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 8,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        render_mode: str | None = None,
        max_episode_steps: int | None = None,
        parallel: bool | None = None,
        **options: Any,
    ) -> None:
        check_num_envs(num_envs)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is not one of ansi, rgb_array, or None")
        if max_episode_steps is not None:
            checks.whole("max_episode_steps", max_episode_steps, 1, why="or None for no cap")
        self.options = EnvOptions(**options)
        self.num_envs = n = int(num_envs)
        self.render_mode = render_mode
        self.max_episode_steps = max_episode_steps
        self.single_observation_space = observation_space(self.options.obs_mode, self.options.planes,
                                                          self.options.top_exponent)
        self.single_action_space = spaces.Discrete(4)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = spaces.MultiDiscrete(np.full(n, 4))
        self.games = GameBatch(n, self.options, cutoff=max_episode_steps, parallel=parallel, autoreset=True,
                               copies=True)
        self._illegal = np.zeros(n, dtype=bool)
        self._seeded = False

    @property
    def boards(self) -> np.ndarray:
        """A copy of the current boards, ``uint64[N]``."""
        return self.games.boards.copy()

    @property
    def supers(self) -> np.ndarray:
        """A copy of the current boards' supers, ``int64[N]`` (their tiles of 32768 or more)."""
        return self.games.supers.copy()

    @property
    def _masks(self) -> np.ndarray:
        return self.games.masks

    def _seed_states(self, seed: int | list[int | None] | None) -> None:
        """Seed every slot's stream; every seed is checked before any slot changes."""
        if seed is None or isinstance(seed, (int, np.integer, np.bool_)):  # a bool is refused by name
            first = check_env_seed(seed)
            seeds: list[int | None] = [None if first is None else first + i for i in range(self.num_envs)]
        else:
            if isinstance(seed, (str, bytes)) or not hasattr(seed, "__len__"):
                raise TypeError(f"seed must be an int, one seed per env, or None; got {seed!r}")
            seeds = [check_env_seed(s) for s in seed]  # numpy ints (np.arange) too
            if len(seeds) != self.num_envs:
                raise ValueError(
                    f"got {len(seeds)} seeds for {self.num_envs} envs; pass one int or one seed per env"
                )
        states = np.empty(self.num_envs, dtype=np.uint64)
        for i, s in enumerate(seeds):
            rng, _ = seeding.np_random(s)
            states[i] = rng.integers(0, 2**64, dtype=np.uint64)
        self.games.states[:] = states
        self._np_random, _ = seeding.np_random(seeds[0])

    def _infos(self, out: BatchStep | None = None) -> dict[str, Any]:
        """After a step, the copies its kernel wrote (``out``); after a reset, copies made here."""
        g = self.games
        if out is not None:
            return {"action_mask": out.masks, "score": out.scores, "max_tile": out.max_tile,
                    "moves": out.moves, "board": out.boards, "supers": out.supers, "illegal": out.illegal}
        return {
            "action_mask": g.masks,
            "score": g.scores.copy(),
            "max_tile": tile_values(g.max_exp),
            "moves": g.moves.copy(),
            "board": g.boards.copy(),
            "supers": g.supers.copy(),
            "illegal": self._illegal,
        }

    def _obs(self) -> np.ndarray:
        o = self.options
        return encode_obs(self.games.obs, o.obs_mode, o.planes)

    def reset(
        self, *, seed: int | list[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every slot afresh; ``options={"boards": uint64[N] or list}`` sets the positions (each
        a uint64 board or 16 / [4, 4] exact exponents 0..17), ``"supers"`` (int64 [N], with uint64
        boards) their tiles past 32768.

        Every argument is checked before any slot changes: a reset that raises leaves the games as they were.
        """
        unknown = set(options or {}) - {"boards", "supers"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; the options are 'boards' and "
                             "'supers'")
        boards = supers = None
        if options and options.get("boards") is not None:
            given = options["boards"]
            # len(5) is a TypeError, np.ndim of a list of ints and grids a ValueError (a ragged array)
            if not isinstance(given, (list, tuple, np.ndarray)) or getattr(given, "ndim", 1) == 0:
                raise TypeError(
                    f"options['boards'] must be a list or array of {self.num_envs} boards, one per env, got "
                    f"{type(given).__name__} {str(given)[:40]}; a single env takes options={{'board': ...}}"
                )
            if len(given) != self.num_envs:
                raise ValueError(f"options['boards'] has {len(given)} boards for {self.num_envs} envs")
            sup = options.get("supers")
            if sup is not None and (not isinstance(sup, (list, tuple, np.ndarray))
                                    or len(sup) != self.num_envs):
                raise ValueError(f"options['supers'] must hold {self.num_envs} integers, one per board, got "
                                 f"{str(sup)[:40]}")
            pos = [position_from_option(b, None if sup is None else sup[i], self.options.rules,
                                        f"options['boards'][{i}]") for i, b in enumerate(given)]
            boards = np.array([p[0] for p in pos], dtype=np.uint64)
            supers = np.array([p[1] for p in pos], dtype=np.int64)
        elif options and options.get("supers") is not None:
            raise ValueError("options['supers'] needs options['boards']: the supers of which boards?")
        if seed is not None or not self._seeded:
            self._seed_states(seed)
            self._seeded = True
        self.games.reset()
        if boards is not None:
            self.games.set_boards(boards, supers=supers)
        self._illegal = np.zeros(self.num_envs, dtype=bool)
        return self._obs(), self._infos()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every slot with ``actions`` [N] (ints 0..3)."""
        out = self.games.step(actions)  # the kernel also marks the slots that ended for next-step autoreset
        self._illegal = out.illegal
        return self._obs(), out.rewards, out.terminated, out.truncated, self._infos(out)

    def render(self) -> Any:
        """"ansi": every board as text; "rgb_array": one picture per board."""
        g = self.games
        if self.render_mode == "ansi":
            return "\n\n".join(
                f"env {i}  score {int(g.scores[i])}\n{render_text(g.boards[i], g.supers[i])}"
                for i in range(self.num_envs)
            )
        if self.render_mode == "rgb_array":
            return [board_frame(g.obs[i]) for i in range(self.num_envs)]
        return None
