"""``GameBatch``: N games of 2048 stepped by one kernel call; the one owner of "N boards, N RNG
states, step, restart".

The vector env, the torch env's CPU adapter (``EngineBatch``) and the trainers' game loops
(``train.games.BoardBatch``, ``train.policy.play_games``) are thin faces over it; the env options
are applied inside the kernel (:func:`ai2048.engine.batch.step_board`), which the single env calls
for its one board too. No torch and no Gymnasium here.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.engine.batch import (
    HOLD,
    ILLEGAL_NOOP,
    ILLEGAL_RAISE,
    ILLEGAL_SPAWN,
    ILLEGAL_TERMINATE,
    NO_GOAL,
    RESTART,
    REWARD_LOG2,
    REWARD_MOVES,
    REWARD_SCORE,
    STEP,
    batch_env_step,
    batch_env_step_serial,
    batch_observe,
    batch_observe_serial,
    batch_reset,
    batch_reset_serial,
    first_bad_action,
    step_options,
)
from ai2048.envs.options import EnvOptions, check_num_envs
from ai2048.game import IllegalMoveError
from ai2048.rules import MAX_TILE_EXPONENT, Action
from ai2048.threads import ThreadPicker

PARALLEL_MIN_GAMES = 1024
"""Below this many games a step is too short to share out: the serial kernel runs (see docs).
From it, the automatic choice times both kernels (:class:`ai2048.threads.ThreadPicker`)."""

_REWARD_CODES = {"score": REWARD_SCORE, "log2": REWARD_LOG2, "moves": REWARD_MOVES}
_ILLEGAL_CODES = {"noop": ILLEGAL_NOOP, "terminate": ILLEGAL_TERMINATE, "raise": ILLEGAL_RAISE,
                  "spawn": ILLEGAL_SPAWN}
_TILE_OF = np.array([0] + [1 << e for e in range(1, MAX_TILE_EXPONENT + 1)], dtype=np.int64)


def kernel_options(
    options: EnvOptions, goal_terminal: bool = True, cutoff: int | None = None, autoreset: bool = False
) -> np.ndarray:
    """``options`` as the kernels take them (:func:`ai2048.engine.batch.step_options`)."""
    return step_options(
        reward_mode=_REWARD_CODES[options.reward_mode],
        illegal_mode=_ILLEGAL_CODES[options.illegal_action],
        illegal_penalty=options.illegal_penalty,
        goal_exp=NO_GOAL if options.goal_tile is None else options.goal_exponent,
        goal_reward=options.goal_reward,
        goal_terminal=goal_terminal,
        end_on_full_board=options.end_on_full_board,
        max_steps=cutoff,
        autoreset=autoreset,
        exact=options.exact,
    )


def seed_states(seed: int | None, n: int) -> np.ndarray:
    """[n] uint64 SplitMix64 states derived from one ``seed`` (``None``: OS entropy)."""
    return np.random.SeedSequence(seed).generate_state(n, np.uint64).astype(np.uint64)


def tile_values(max_exp: np.ndarray) -> np.ndarray:
    """[N] exponents -> [N] int64 tile values (0 stays 0)."""
    return _TILE_OF.take(max_exp)


def check_supers(boards: np.ndarray, supers: Any, options: EnvOptions) -> np.ndarray:
    """``supers`` as int64 [len(boards)] after checking each position (``board_io.check_position``:
    supers only on 15-cells, at most one 131072) and that rules version 0 has none; the error names
    the game and the cell."""
    from ai2048.board_io import check_position

    arr = np.asarray(supers)
    if arr.shape != boards.shape or arr.dtype.kind not in "iu":
        raise ValueError(f"supers must be {boards.shape[0]} integers, one per board, got {arr.dtype} "
                         f"{arr.shape}")
    out = arr.astype(np.int64)
    for i in np.flatnonzero(out):
        try:
            check_position(int(boards[i]), int(out[i]))
        except ValueError as e:
            raise ValueError(f"game {i}: {e}") from None
        if not options.exact:
            raise ValueError(f"game {i}: supers={int(out[i]):#x} records tiles past 32768, which rules "
                             f"version {options.rules} does not have; use rules=1")
    return out


@dataclass(frozen=True)
class BatchStep:
    """What one step of a :class:`GameBatch` gave: arrays the batch never writes again while anyone
    else holds them (a later step reuses them only once nothing but the batch refers to them).

    ``rewards`` [N] float64 after the options; ``gains`` / ``log_gains`` [N] int64 raw score and
    log2 score gained; ``illegal``, ``terminated``, ``truncated`` [N] bool; ``masks`` [N, 4] bool,
    ``max_exp`` [N] uint8, ``empty`` [N] int64 and ``obs`` [N, 4, 4] uint8 exact exponents (0..17)
    describe the positions after the step. ``scores``, ``moves`` [N] int64, ``boards`` [N] uint64,
    ``supers`` [N] int64 and ``max_tile`` [N] int64 (tile values) are copies of the state after the
    step when the batch keeps them (``GameBatch(..., copies=True)``: the vector env's ``infos``),
    else empty.
    """

    rewards: np.ndarray
    gains: np.ndarray
    log_gains: np.ndarray
    illegal: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    masks: np.ndarray
    max_exp: np.ndarray
    empty: np.ndarray
    obs: np.ndarray
    scores: np.ndarray
    moves: np.ndarray
    boards: np.ndarray
    supers: np.ndarray
    max_tile: np.ndarray


_STEP_FIELDS = tuple(f.name for f in fields(BatchStep))
_STEP_LAYOUT = (((), np.float64), ((), np.int64), ((), np.int64), ((), np.bool_), ((), np.bool_),
                ((), np.bool_), ((4,), np.bool_), ((), np.uint8), ((), np.int64), ((4, 4), np.uint8))
_COPIES_LAYOUT = (np.int64, np.int64, np.uint64, np.int64, np.int64)


def _fresh_step(n: int, copies: int) -> BatchStep:
    """Empty output arrays for ``n`` games (``copies``: n or 0 entries in the state copies)."""
    return BatchStep(*(np.empty((n, *shape), dtype) for shape, dtype in _STEP_LAYOUT),
                     *(np.empty(copies, dtype) for dtype in _COPIES_LAYOUT))


def _reusable(recent: list[BatchStep | None]) -> BatchStep | None:
    """``recent[0]`` when nothing but the batch refers to it or to any of its arrays (a view of an
    array, or a buffer taken from it, holds a reference to it), so writing them again cannot be
    seen; else None."""
    if recent[0] is None or not hasattr(sys, "getrefcount"):  # no refcounts (PyPy): always fresh
        return None
    # One reference from the list (or the step's field, for an array), one from getrefcount's argument.
    step = recent[0]  # from here one more reference to the step (this name), none more to its arrays
    if sys.getrefcount(step) != 3 or any(sys.getrefcount(getattr(step, f)) != 2 for f in _STEP_FIELDS):
        return None
    return step


class GameBatch:
    """N games with their own SplitMix64 streams; same states and actions, same games.

    State (arrays [N], written in place by the kernels): ``boards`` uint64, ``supers`` int64 (the
    exact values of their tiles of 32768 or more, :mod:`ai2048.engine.supertiles`; 0 under rules
    version 0), ``states`` uint64 RNG states, ``scores``, ``moves`` (legal moves) and ``steps``
    (every step; ``cutoff`` counts these)
    int64, ``control`` uint8 (what the next step does per slot: ``STEP``, ``RESTART`` for
    next-step autoreset, ``HOLD``). The observation of the current boards, ``masks`` [N, 4],
    ``max_exp`` [N], ``empty`` [N] and ``obs`` [N, 4, 4], is replaced, never written, so arrays
    handed out stay as they were.

    Args:
        n: number of games.
        options: the env options (reward mode, illegal actions, goal tile, full-board end, p_two,
            rules).
        goal_terminal: a goal tile ends the game as terminal (the envs) or as a cut (``truncated``;
            trainers that bootstrap past it).
        cutoff: truncate a game after this many steps (``None``: never).
        seed: derive every game's stream from this seed (:func:`seed_states`); ``None`` leaves the
            states at 0 for the caller to set (``batch.states[:] = ...``).
        autoreset: Gymnasium's next-step autoreset inside the step kernel: a slot whose game ended
            is marked ``RESTART`` for the next step in the same pass (what :meth:`autoreset_next`
            does afterwards in numpy, one serial pass less a step).
        copies: every step also hands out copies of ``scores``, ``moves``, ``boards`` and the
            largest tiles (:class:`BatchStep`), written by the step kernel (so by every thread on
            its own chunk) instead of by numpy afterwards on one thread.
        parallel: ``True`` / ``False`` force the parallel / serial kernels; ``None`` may use the
            parallel ones from :data:`PARALLEL_MIN_GAMES` games when numba has more than one thread
            and the process more than one core, and does while its steps are timed faster than
            the serial kernel's (:class:`ai2048.threads.ThreadPicker`: on a busy machine threads
            waiting for a core make a step far slower). Processes that fork should stay serial
            (numba's OpenMP layer is not fork-safe).
    """

    def __init__(
        self,
        n: int,
        options: EnvOptions | None = None,
        *,
        goal_terminal: bool = True,
        cutoff: int | None = None,
        seed: int | None = None,
        parallel: bool | None = None,
        autoreset: bool = False,
        copies: bool = False,
    ) -> None:
        n = check_num_envs(n)
        if cutoff is not None:
            checks.whole("cutoff", cutoff, 1, why="steps per game, or None for no cutoff")
        self.n = n
        self.options = options if options is not None else EnvOptions()
        self.p_two = np.float64(self.options.p_two)
        self.goal_terminal = checks.flag("goal_terminal", goal_terminal)
        self.cutoff = None if cutoff is None else int(cutoff)
        self._picker = ThreadPicker(parallel, PARALLEL_MIN_GAMES)  # checks parallel
        self.parallel = parallel
        self.autoreset = checks.flag("autoreset", autoreset)
        self.copies = checks.flag("copies", copies)
        self._opts = kernel_options(self.options, self.goal_terminal, self.cutoff, self.autoreset)
        self._raise = self.options.illegal_action == "raise"
        self.boards = np.zeros(n, dtype=np.uint64)
        self.supers = np.zeros(n, dtype=np.int64)
        self.states = np.zeros(n, dtype=np.uint64) if seed is None else seed_states(seed, n)
        self.scores = np.zeros(n, dtype=np.int64)
        self.moves = np.zeros(n, dtype=np.int64)
        self.steps = np.zeros(n, dtype=np.int64)
        self.control = np.zeros(n, dtype=np.uint8)
        self.masks = np.zeros((n, 4), dtype=np.bool_)
        self.max_exp = np.zeros(n, dtype=np.uint8)
        self.empty = np.zeros(n, dtype=np.int64)
        self.obs = np.zeros((n, 4, 4), dtype=np.uint8)
        self._recent: list[BatchStep | None] = [None, None]  # outputs of the step before last, of the last
        self.observe()

    @property
    def goal_exp(self) -> int:
        """Exponent of the goal tile (99 when there is none)."""
        return NO_GOAL if self.options.goal_tile is None else self.options.goal_exponent

    def threads(self) -> int:
        """Chunks a reset or observe call cuts the batch into (numba's thread count), 0 for serial:
        the mode the timed steps chose."""
        return self._picker.chosen(self.n)

    def _fresh_views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Copies of the observation arrays to write into (the old ones may have been handed out)."""
        self.masks = self.masks.copy()
        self.max_exp = self.max_exp.copy()
        self.empty = self.empty.copy()
        self.obs = self.obs.copy()
        return self.masks, self.max_exp, self.empty, self.obs

    def observe(self) -> None:
        """Recompute the observation of every board (after ``boards`` was set from outside)."""
        t = self.threads()
        exact = self.options.exact
        if t:
            batch_observe(self.boards, self.supers, exact, *self._fresh_views(), t)
        else:
            batch_observe_serial(self.boards, self.supers, exact, *self._fresh_views())

    def reset(self, which: np.ndarray | None = None) -> None:
        """Start new games where ``which`` [N] bool is True (everywhere when ``None``): two spawned
        tiles from each slot's own stream, counters at 0, next step a plain step."""
        which = np.ones(self.n, dtype=np.bool_) if which is None else self._check_which(which)
        self.supers[which] = 0
        t = self.threads()
        if t:
            batch_reset(self.boards, self.states, self.p_two, which, *self._fresh_views(), t)
        else:
            batch_reset_serial(self.boards, self.states, self.p_two, which, *self._fresh_views())
        self.scores[which] = 0
        self.moves[which] = 0
        self.steps[which] = 0
        self.control[which] = STEP

    def set_boards(self, boards: np.ndarray, which: np.ndarray | None = None,
                   supers: np.ndarray | None = None) -> None:
        """Put checked ``uint64`` positions in the slots ``which`` (all when ``None``; ``boards`` then
        has N entries, else one per True slot), with their ``supers`` (int64, one per board; None: no
        tile past 32768); their counters restart at 0. Every position is checked before any slot
        changes (:func:`check_supers`)."""
        from ai2048.board_io import check_boards

        boards = check_boards(boards)
        which = np.ones(self.n, dtype=np.bool_) if which is None else self._check_which(which)
        want = int(which.sum())
        if boards.shape[0] != want:
            raise ValueError(f"got {boards.shape[0]} boards for {want} games")
        sup = np.zeros(want, dtype=np.int64) if supers is None else check_supers(boards, supers, self.options)
        self.boards[which] = boards
        self.supers[which] = sup
        self.scores[which] = 0
        self.moves[which] = 0
        self.steps[which] = 0
        self.control[which] = STEP
        self.observe()

    def _check_which(self, which: Any) -> np.ndarray:
        w = np.asarray(which)
        if w.dtype != np.bool_ or w.shape != (self.n,):
            raise ValueError(f"which must be a bool array of shape ({self.n},), got {w.dtype} {w.shape}")
        return w

    def check_actions(self, actions: Any) -> np.ndarray:
        """``actions`` as int64 [N] after checking shape, dtype, range and (under "raise") legality,
        before anything changes; the error names the first bad game."""
        a = np.asarray(actions)
        if a.shape != (self.n,):
            raise ValueError(f"actions must have shape ({self.n},), got {a.shape}")
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers 0..3, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        i, out_of_range = first_bad_action(a, self.masks, self.control, self._raise)
        if i >= 0:
            if out_of_range:
                raise ValueError(
                    f"actions must be in 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3); game {i} got {int(a[i])}"
                )
            from ai2048.board_io import render_text

            legal = ", ".join(Action(k).name for k in range(4) if self.masks[i, k]) or "none"
            raise IllegalMoveError(
                f"game {i}: {Action(int(a[i])).name} does not change the board (legal: {legal})\n"
                f"{render_text(self.boards[i])}"
            )
        return a

    def step(self, actions: Any, hold: np.ndarray | None = None) -> BatchStep:
        """Play ``actions`` [N] (0..3) in every game: slots marked ``RESTART`` start a new game
        instead, slots in ``hold`` [N] bool (finished games waiting) stay as they are; afterwards every
        slot is marked ``STEP``, or ``RESTART`` where its game ended when the batch autoresets."""
        held = None
        if hold is not None:
            held = self._check_which(hold) & (self.control == STEP)
            self.control[held] = HOLD
        try:
            a = self.check_actions(actions)
        except BaseException:  # whatever failed (a bad action, an array-like that raises, Ctrl-C), no slot
            if held is not None:  # may stay held: the next step would skip it
                self.control[held] = STEP
            raise
        # The arrays of the step before last when no one holds them any more (a caller's loop keeps
        # the last step's, drops the one before): the same memory every other step, still in cache
        # and no allocation; else fresh ones. Either way no array anyone holds is written.
        recent = self._recent
        out = _reusable(recent) or _fresh_step(self.n, self.n if self.copies else 0)
        recent[0], recent[1] = recent[1], out
        args = (self.boards, self.supers, a, self.states, self.p_two, self._opts, self.control, self.scores,
                self.moves,
                self.steps, out.rewards, out.gains, out.log_gains, out.illegal, out.terminated, out.truncated,
                out.masks, out.max_exp, out.empty, out.obs, out.scores, out.moves, out.boards, out.supers,
                out.max_tile)
        t = self._picker.threads(self.n)
        start = time.perf_counter_ns()
        if t:
            batch_env_step(*args, t)
        else:
            batch_env_step_serial(*args)
        self._picker.took(t, time.perf_counter_ns() - start, self.n)
        self.masks, self.max_exp, self.empty, self.obs = out.masks, out.max_exp, out.empty, out.obs
        return out

    def autoreset_next(self, done: np.ndarray) -> None:
        """Next-step autoreset (Gymnasium's): slots in ``done`` [N] start a new game on the next step."""
        self.control[done] = RESTART

    def over(self) -> np.ndarray:
        """[N] bool: no action is legal on the current board."""
        m = self.masks
        return ~(m[:, 0] | m[:, 1] | m[:, 2] | m[:, 3])

    def state_dict(self) -> dict[str, np.ndarray]:
        """Everything needed to continue these games exactly (observations are recomputed)."""
        keys = ("boards", "supers", "states", "scores", "moves", "steps", "control")
        return {k: getattr(self, k).copy() for k in keys}

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore :meth:`state_dict` (same N; ``steps``, ``control`` and ``supers`` default to
        ``moves``, STEP and 0 for checkpoints written before they existed)."""
        boards = np.asarray(state["boards"])
        if boards.shape != (self.n,):
            raise ValueError(f"checkpoint holds {len(boards)} games, this batch has {self.n}")
        supers = state.get("supers")
        self.supers = (np.zeros(self.n, np.int64) if supers is None
                       else check_supers(boards.astype(np.uint64), supers, self.options))
        self.boards = boards.astype(np.uint64).copy()
        self.states = np.asarray(state["states"]).astype(np.uint64).copy()
        self.scores = np.asarray(state.get("scores", state.get("score"))).astype(np.int64).copy()
        self.moves = np.asarray(state["moves"]).astype(np.int64).copy()
        self.steps = np.asarray(state.get("steps", self.moves)).astype(np.int64).copy()
        self.control = np.asarray(state.get("control", np.zeros(self.n))).astype(np.uint8).copy()
        self.observe()
