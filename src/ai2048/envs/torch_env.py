"""A batch of 2048 games on torch tensors, so whole batches live on a GPU (seed 001, TurboZero).

This is the project's one deliberate second copy of the rules (DESIGN.md); the tests check it
against the numba engine on boards, rewards, legal masks and spawn distributions.

The design is seed 001's (lowrollr/turbozero ``envs/_2048``):

- states are ``float32 [N, 1, 4, 4]`` exponents (0 = empty), which is also the network input;
- legal actions come from two-cell convolution masks (a tile next to an empty cell in the move's
  direction) OR-ed with "equal non-empty neighbours" along the move's axis;
- a move rotates every board so that its move is LEFT, collapses (stable sort of the non-empty
  tiles to the left), merges equal neighbours left to right, collapses again and rotates back;
- a spawn samples an empty cell uniformly and a 2 with probability ``p_two`` (else a 4) from a
  seeded ``torch.Generator``.

Beyond the seed: the score is tracked (the seed's reward was always 0), tiles go up to 131072
under rules version 1 (``rules=1``, the default: a state's cell holds the exact exponent 0..17 and
two equal tiles of 32768 or more merge, as :class:`ai2048.Game` plays them) or stop at 32768 under
version 0 (``rules=0``: two 32768s do not merge), and actions use ai2048's clockwise order (UP=0,
RIGHT=1, DOWN=2, LEFT=3). The seed's order (0=LEFT, 1=DOWN, 2=RIGHT, 3=UP) is the number of clockwise quarter
turns that make a move LEFT; :func:`quarter_turns` is the one place that converts.

Both batches also have the seed's base-``Env`` helpers (:class:`SeedEnvHelpers`):
``choose_random_legal_action``, ``random_rollout`` and ``print_state``.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import torch

from ai2048 import checks
from ai2048.board_io import check_boards, render_text
from ai2048.envs.batch import GameBatch, check_supers, seed_states
from ai2048.envs.options import EnvOptions, check_env_rules, check_env_seed, check_num_envs
from ai2048.nets.device import resolve_device
from ai2048.rules import (
    CAPPED_RULES,
    MAX_EXPONENT,
    MAX_TILE_EXPONENT,
    P_TWO,
    RULES_VERSION,
    SEED_ORDERS,
    START_TILES,
    Action,
)

_SHIFTS = np.arange(0, 64, 4, dtype=np.uint64)
_FIELDS = np.arange(0, 32, 2, dtype=np.int64)


def merge_cap(rules: int) -> int:
    """Tiles below this exponent merge with their equal: 17 under rules version 1 (a 131072 has no
    equal to meet), 15 under version 0 (two 32768s do not merge)."""
    return MAX_EXPONENT if rules == CAPPED_RULES else MAX_TILE_EXPONENT

_SEED001_INDEX = [SEED_ORDERS["001"].index(Action(a)) for a in range(4)]
"""ai2048 action -> seed 001's action id: UP=0 -> 3, RIGHT=1 -> 2, DOWN=2 -> 1, LEFT=3 -> 0."""


def check_actions(actions: Any, num_envs: int) -> None:
    """Refuse actions that are not an integer tensor ``[num_envs]``: ``.long()`` would truncate 2.7 to 2
    and turn ``True`` into 1, playing moves nobody chose."""
    if not isinstance(actions, torch.Tensor):
        raise TypeError(f"actions must be a torch tensor of ints 0..3, got {type(actions).__name__}")
    if actions.layout != torch.strided or actions.is_nested:  # a sparse tensor raised NotImplementedError
        raise TypeError(f"actions must be a dense tensor, got layout {actions.layout}"
                        f"{' (nested)' if actions.is_nested else ''}: pass actions.to_dense()")
    if actions.device.type == "meta":
        raise TypeError("actions is a tensor on the meta device, which holds no values")
    if actions.dtype.is_floating_point or actions.dtype.is_complex or actions.dtype == torch.bool:
        raise TypeError(f"actions must be integers 0..3 (e.g. torch.int64), got dtype {actions.dtype}")
    if actions.shape != (num_envs,):
        raise ValueError(f"actions must have shape [{num_envs}], got {tuple(actions.shape)}")


def quarter_turns(actions: torch.Tensor) -> torch.Tensor:
    """ai2048 actions -> clockwise quarter turns that make the move LEFT, which is seed 001's action id."""
    return _constants(actions.device)[3][actions]


def _rotation_tables() -> torch.Tensor:
    """[4, 16] gather indices: ``flat.gather(1, T[k])`` turns the boards k quarter turns clockwise."""
    grid = torch.arange(16).view(4, 4)
    tabs = [torch.rot90(grid, -k, dims=(0, 1)).reshape(16) for k in range(4)]
    return torch.stack(tabs)


@functools.cache
def _constants(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(rotation gathers [4, 16], their inverses [4, 16], collapse ranks [4], seed 001 ids [4]) on
    ``device``."""
    rot = _rotation_tables()
    unrot = torch.stack([rot[(4 - k) % 4] for k in range(4)])
    rank = torch.tensor([4.0, 3.0, 2.0, 1.0])
    return rot.to(device), unrot.to(device), rank.to(device), torch.tensor(_SEED001_INDEX).to(device)


def from_boards(boards: np.ndarray, device: str | torch.device = "cpu",
                supers: np.ndarray | None = None) -> torch.Tensor:
    """``uint64 [N]`` engine boards (with their ``supers`` int64 [N], :mod:`ai2048.engine.supertiles`;
    None: every 15 a 32768) -> ``float32 [N, 1, 4, 4]`` exact exponents on ``device``."""
    boards = check_boards(boards)
    cells = ((boards[:, None] >> _SHIFTS) & np.uint64(0xF)).astype(np.int64)
    if supers is not None:
        cells += (check_supers(boards, supers, EnvOptions())[:, None] >> _FIELDS) & 3
    return torch.from_numpy(cells.astype(np.float32)).view(-1, 1, 4, 4).to(device)


def _cells(states: torch.Tensor) -> np.ndarray:
    """[N, 16] int64 exponents of ``states`` after checking each is a whole number in 0..17 (the
    error names the game and the cell)."""
    if states.dim() != 4 or tuple(states.shape[1:]) != (1, 4, 4):
        raise ValueError(f"states must have shape [N, 1, 4, 4], got {tuple(states.shape)}")
    cells = states.detach().to("cpu", torch.float64).reshape(-1, 16).numpy()
    bad = ~((cells >= 0) & (cells <= MAX_TILE_EXPONENT) & (cells == np.round(cells)))  # NaN is bad too
    if bad.any():
        g, c = np.argwhere(bad)[0]
        raise ValueError(f"states must hold whole exponents 0..{MAX_TILE_EXPONENT} (0 = empty, "
                         f"{MAX_TILE_EXPONENT} = {2**MAX_TILE_EXPONENT}); game {g} holds {cells[g, c]} at "
                         f"cell {c} (row {c // 4}, column {c % 4})")
    return cells.astype(np.int64)


def to_positions(states: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    """``[N, 1, 4, 4]`` exact exponents (any device) -> (``uint64 [N]`` engine boards, ``int64 [N]``
    supers), each position checked (at most one 131072)."""
    cells = _cells(states)
    boards = np.bitwise_or.reduce(np.minimum(cells, MAX_EXPONENT).astype(np.uint64) << _SHIFTS, axis=1)
    supers = np.bitwise_or.reduce(np.maximum(cells - MAX_EXPONENT, 0) << _FIELDS, axis=1).astype(np.int64)
    return boards, check_supers(boards, supers, EnvOptions())


def to_boards(states: torch.Tensor) -> np.ndarray:
    """``[N, 1, 4, 4]`` exact exponents (any device) -> ``uint64 [N]`` engine boards (a tile of 32768 or
    more is a 15: :func:`to_positions` gives their exact values too)."""
    cells = _cells(states)
    return np.bitwise_or.reduce(np.minimum(cells, MAX_EXPONENT).astype(np.uint64) << _SHIFTS, axis=1)


# Seed 001's slide masks: a two-cell kernel along the move's axis whose output is positive where
# an empty cell (weight -1e5) has a tile (weight 1) on its far side. Written as the weighted sum
# of two shifted views, which is what conv2d with these kernels computes, without conv2d's
# per-call cost on small CPU batches.
_EMPTY_W, _TILE_W = -1e5, 1.0


def legal_actions(states: torch.Tensor, rules: int = RULES_VERSION) -> torch.Tensor:
    """``[N, 1, 4, 4]`` -> ``bool [N, 4]`` legal actions (UP, RIGHT, DOWN, LEFT), seed 001's way.

    A slide is possible where the seed's mask (e.g. LEFT's ``[-1e5, 1]``) gives a value > 0.5
    (an empty cell with a tile on its far side); a merge where two equal non-empty neighbours
    (below :func:`merge_cap`) share a row (LEFT/RIGHT) or a column (UP/DOWN).
    """
    cap = merge_cap(rules)
    n = states.shape[0]
    top, bottom = states[:, :, :-1, :], states[:, :, 1:, :]
    left, right = states[:, :, :, :-1], states[:, :, :, 1:]
    up = (_EMPTY_W * top + _TILE_W * bottom > 0.5).view(n, 12).any(1)
    down = (_TILE_W * top + _EMPTY_W * bottom > 0.5).view(n, 12).any(1)
    lft = (_EMPTY_W * left + _TILE_W * right > 0.5).view(n, 12).any(1)
    rgt = (_TILE_W * left + _EMPTY_W * right > 0.5).view(n, 12).any(1)
    vert = ((top == bottom) & (bottom != 0) & (bottom < cap)).view(n, 12).any(1)
    horiz = ((left == right) & (right != 0) & (right < cap)).view(n, 12).any(1)
    return torch.stack([up | vert, rgt | horiz, down | vert, lft | horiz], dim=1)


def _collapse(rows: torch.Tensor, rank: torch.Tensor) -> torch.Tensor:
    """Slide the non-empty tiles of every row ``[M, 4]`` to the left, keeping their order."""
    order = torch.argsort(rank * (rows != 0), dim=-1, descending=True, stable=True)
    return torch.gather(rows, -1, order)


def _merge_left(rows: torch.Tensor, cap: int = MAX_TILE_EXPONENT) -> tuple[torch.Tensor, torch.Tensor]:
    """``[M, 4]`` rows -> (rows moved LEFT, ``[M]`` score gained): collapse, merge, collapse.

    ``[1 1 1 1] -> [2 2 0 0]`` (exponents), reward 4 + 4; tiles of exponent ``cap`` and more do not
    merge (``[15 15 0 0]`` merges into 16 under rules version 1, stays under version 0).
    """
    rank = _constants(rows.device)[2]
    rows = _collapse(rows, rank)
    reward = torch.zeros(rows.shape[0], dtype=torch.float32, device=rows.device)
    for i in range(3):
        same = (rows[:, i] == rows[:, i + 1]) & (rows[:, i] != 0) & (rows[:, i] < cap)
        rows[:, i] += same
        rows[:, i + 1].masked_fill_(same, 0)
        reward += same * torch.exp2(rows[:, i])
    return _collapse(rows, rank), reward


def push_actions(states: torch.Tensor, actions: torch.Tensor,
                 rules: int = RULES_VERSION) -> tuple[torch.Tensor, torch.Tensor]:
    """Move every board (no spawn): ``[N, 1, 4, 4]``, ``[N]`` actions -> (new states, ``int64 [N]`` rewards)
    under ``rules``.

    Rotates each board by :func:`quarter_turns` so its move is LEFT, merges, rotates back.
    An illegal action returns the board unchanged with reward 0.
    """
    n = states.shape[0]
    k = quarter_turns(actions.long())
    rot_table, unrot_table, _, _ = _constants(states.device)
    rot, unrot = rot_table[k], unrot_table[k]
    flat = states.reshape(n, 16).gather(1, rot)
    rows, reward = _merge_left(flat.view(n * 4, 4), merge_cap(rules))
    moved = rows.view(n, 16).gather(1, unrot).view(n, 1, 4, 4)
    return moved, reward.view(n, 4).sum(1).round().long()


def spawn(
    states: torch.Tensor, which: torch.Tensor, generator: torch.Generator, p_two: float = P_TWO
) -> torch.Tensor:
    """Put one tile in a uniformly chosen empty cell of each board where ``which`` [N] is True.

    A 2 (exponent 1) with probability ``p_two``, else a 4; full boards are left as they are.
    Same as seed 001's ``torch.multinomial`` over its 32 candidate progressions, drawn here by
    inverse CDF over the empty cells so one uniform number picks the cell and one the tile.
    """
    n = states.shape[0]
    flat = states.reshape(n, 16)
    empty = flat == 0
    count = empty.sum(1)
    u = torch.rand(n, generator=generator, device=states.device)
    t = torch.rand(n, generator=generator, device=states.device)
    k = torch.minimum((u * count).long(), (count - 1).clamp(min=0))
    cell = (torch.cumsum(empty, 1) > k[:, None]).int().argmax(1)
    tile = torch.where(t < p_two, 1.0, 2.0)
    do = which & (count > 0)
    out = flat.clone()
    rows = torch.nonzero(do).squeeze(1)
    out[rows, cell[rows]] = tile[rows]
    return out.view(n, 1, 4, 4)


def stochastic_progressions(states: torch.Tensor, p_two: float = P_TWO) -> tuple[torch.Tensor, torch.Tensor]:
    """Seed 001's exact spawn outcomes: (``[N, 32, 1, 4, 4]`` boards, ``[N, 32]`` probabilities).

    Candidate ``2 * cell`` puts a 2 in ``cell`` (row-major), ``2 * cell + 1`` a 4; candidates on
    occupied cells have probability 0. Rows of a full board are all zero.
    """
    n = states.shape[0]
    flat = states.reshape(n, 16)
    empty = (flat == 0).float()
    count = empty.sum(1, keepdim=True).clamp(min=1)
    probs = torch.stack([empty * p_two, empty * (1 - p_two)], dim=2).view(n, 32) / count
    eye = torch.eye(16, device=states.device, dtype=states.dtype)
    tiles = torch.stack([eye, 2 * eye], dim=1).view(32, 16)
    boards = flat[:, None, :] + tiles[None] * (flat[:, None, :] == 0)
    return boards.view(n, 32, 1, 4, 4), probs


def action_seed(seed: int | None) -> int | None:
    """The seed of a batch's random-action generator, derived from the batch's ``seed`` (so random
    actions never replay the spawns' numbers); None stays None (OS entropy)."""
    if seed is None:
        return None
    return int(np.random.SeedSequence([int(seed), 1]).generate_state(1, np.uint64)[0])


def seed_generator(generator: torch.Generator, seed: int | None) -> None:
    """``generator`` seeded with ``seed``, or from OS entropy when it is None."""
    if seed is None:
        generator.seed()
    else:
        generator.manual_seed(seed)


class SeedEnvHelpers:
    """Seed 001's base-``Env`` helpers (turbozero ``core/env.py``) on either batch.

    ``choose_random_legal_action`` and ``random_rollout`` draw from ``action_generator``, which
    ``seed()`` seeds with :func:`action_seed` of the batch's seed: a seeded batch rolls out the same
    way every time. (They use only the interface the two batches share, read through ``env``.)
    """

    def choose_random_legal_action(self) -> torch.Tensor:
        """int64 [N]: a legal action of every game, uniformly at random (UP for a finished game, which
        leaves it as it is; the seed's ``torch.multinomial`` would fail on a row with no legal move)."""
        env: Any = self
        legal = env.legal_actions().float()
        legal[legal.sum(1) == 0, 0] = 1.0
        return torch.multinomial(legal, 1, generator=env.action_generator).flatten()

    def random_rollout(self, num_rollouts: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Play every game to its end with random legal moves, ``num_rollouts`` times from the present
        positions (restored after each rollout); returns float32 [N] (mean moves survived, mean score
        gained). The seed's version averages the terminal reward, always 0 in its 2048 env; the moves
        survived are its training reward (LazyZero's value target is their log)."""
        num_rollouts = checks.whole("num_rollouts", num_rollouts, 1)
        env: Any = self
        snap = env.save()
        moves0, scores0 = env.moves.clone(), env.scores.clone()
        moves = torch.zeros(env.num_envs, dtype=torch.float32, device=moves0.device)
        score = torch.zeros_like(moves)
        for _ in range(num_rollouts):
            while not bool(env.terminated.all()):
                env.step(self.choose_random_legal_action())
            moves += (env.moves - moves0).float()
            score += (env.scores - scores0).float()
            env.load(snap)
        return moves / num_rollouts, score / num_rollouts

    def print_state(self, last_action: int | None = None, index: int = 0,
                    file: IO[str] | None = None) -> None:
        """Print game ``index``'s board, score and moves, and the move that led to it (the seed prints
        a coloured board with an edge on the side of the last move)."""
        env: Any = self
        if not 0 <= index < env.num_envs:
            raise ValueError(f"index={index} is outside 0..{env.num_envs - 1}")
        head = f"game {index}  score {int(env.scores[index])}  moves {int(env.moves[index])}"
        if last_action is not None:
            head += f"  last move {Action(int(last_action)).name}"
        board, supers = int(env.boards()[index]), int(env.supers()[index])
        print(f"{head}\n{render_text(board, supers)}", file=file or sys.stdout)


@dataclass
class Snapshot:
    """Saved positions of a :class:`TorchEnv2048` batch (seed 001's ``save_node``)."""

    states: torch.Tensor
    scores: torch.Tensor
    moves: torch.Tensor
    terminated: torch.Tensor
    supers: torch.Tensor | None = None
    """The engine batch's supers (its states are boards); None for the tensor env (exact states)."""


class TorchEnv2048(SeedEnvHelpers):
    """N games of 2048 as tensors, stepped together (seed 001's ``_2048Env`` with scores).

    Attributes (all on ``device``): ``states`` float32 [N, 1, 4, 4] exact exponents (0..17),
    ``scores`` int64 [N], ``moves`` int64 [N] legal moves made, ``terminated`` bool [N] (no legal
    move). ``rules``: 1 (tiles up to 131072) or 0 (capped at 32768).
    """

    def __init__(
        self, num_envs: int, device: str | torch.device = "cpu", seed: int | None = None,
        p_two: float = P_TWO, rules: int = RULES_VERSION,
    ) -> None:
        check_num_envs(num_envs)
        self.rules = check_env_rules(rules)
        self.p_two = checks.probability("p_two", p_two, zero=False)  # a string or None is named
        self.num_envs = num_envs
        self.device = resolve_device(device)
        self.generator = torch.Generator(device=self.device)
        self.action_generator = torch.Generator(device=self.device)
        self.states = torch.zeros(num_envs, 1, 4, 4, device=self.device)
        self.scores = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.moves = torch.zeros(num_envs, dtype=torch.long, device=self.device)
        self.terminated = torch.zeros(num_envs, dtype=torch.bool, device=self.device)
        self.reset(seed)

    def seed(self, seed: int | None) -> None:
        """Reseed the spawn and random-action generators (``None``: from OS entropy)."""
        seed = checks.seed("seed", seed)  # int() truncated 1.5 and took "1", True and -1
        seed_generator(self.generator, seed)
        seed_generator(self.action_generator, action_seed(seed))

    def _new_games(self, which: torch.Tensor) -> None:
        self.states[which] = 0
        self.scores[which] = 0
        self.moves[which] = 0
        for _ in range(START_TILES):
            self.states = spawn(self.states, which, self.generator, self.p_two)
        self.terminated[which] = False

    def reset(self, seed: int | None = None) -> None:
        """Start N new games (two spawned tiles each); a seed makes the whole batch reproducible."""
        self.seed(seed)
        self._new_games(torch.ones(self.num_envs, dtype=torch.bool, device=self.device))

    def reset_terminated(self) -> torch.Tensor:
        """Start new games only where the game is over; returns the bool [N] mask of those slots."""
        which = self.terminated.clone()
        if bool(which.any()):
            self._new_games(which)
        return which

    def set_boards(self, boards: np.ndarray, supers: np.ndarray | None = None) -> None:
        """Load engine ``uint64 [N]`` boards with their ``supers`` (int64 [N]; None: none past 32768);
        scores and move counts restart at 0."""
        boards = check_boards(boards)
        if boards.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} boards, got {boards.shape[0]}")
        if supers is not None:
            check_supers(boards, supers, EnvOptions(rules=self.rules))
        self.states = from_boards(boards, self.device, supers)
        self.scores.zero_()
        self.moves.zero_()
        self.terminated = ~legal_actions(self.states, self.rules).any(1)

    def boards(self) -> np.ndarray:
        """The batch as engine ``uint64 [N]`` boards (a tile of 32768 or more is a 15: see :meth:`supers`)."""
        return to_boards(self.states)

    def supers(self) -> np.ndarray:
        """int64 [N]: the exact values of the boards' tiles of 32768 or more
        (:mod:`ai2048.engine.supertiles`)."""
        return to_positions(self.states)[1]

    def legal_actions(self) -> torch.Tensor:
        """bool [N, 4] legal actions in ai2048 order."""
        return legal_actions(self.states, self.rules)

    def high_tiles(self) -> torch.Tensor:
        """int64 [N] largest exponent on each board."""
        return self.states.reshape(self.num_envs, 16).amax(1).long()

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Move every board, spawn where the move was legal, update ``terminated``.

        ``actions`` int [N] (ai2048 order) -> (``int64 [N]`` rewards, ``bool [N]`` legal). An
        illegal action (or a finished game) leaves its board unchanged with reward 0.
        """
        check_actions(actions, self.num_envs)
        actions = actions.to(self.device)
        if bool(((actions < 0) | (actions > 3)).any()):
            raise ValueError("actions must be 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3)")
        moved, reward = push_actions(self.states, actions, self.rules)
        changed = (moved != self.states).reshape(self.num_envs, 16).any(1)
        reward = reward * changed
        self.states = spawn(moved, changed, self.generator, self.p_two)
        self.scores += reward
        self.moves += changed.long()
        self.terminated = ~legal_actions(self.states, self.rules).any(1)
        return reward, changed

    def save(self) -> Snapshot:
        """Snapshot every game (for search: play ahead, then :meth:`load`)."""
        return Snapshot(self.states.clone(), self.scores.clone(), self.moves.clone(), self.terminated.clone())

    def load(self, snap: Snapshot, which: torch.Tensor | None = None) -> None:
        """Restore all games, or only those where ``which`` [N] is True, from ``snap``."""
        if which is None:
            self.states = snap.states.clone()
            self.scores = snap.scores.clone()
            self.moves = snap.moves.clone()
            self.terminated = snap.terminated.clone()
            return
        self.states = torch.where(which.view(-1, 1, 1, 1), snap.states, self.states)
        self.scores = torch.where(which, snap.scores, self.scores)
        self.moves = torch.where(which, snap.moves, self.moves)
        self.terminated = torch.where(which, snap.terminated, self.terminated)


class EngineBatch(SeedEnvHelpers):
    """The :class:`TorchEnv2048` interface on the numba engine's uint64 boards (fast on CPU).

    Search and training code written against ``TorchEnv2048`` runs unchanged on either: on a GPU
    the tensor env keeps every board on the device; on a CPU the numba kernels step the boards
    (far faster: docs/engine.md) and only the network input crosses into torch. A thin adapter over
    :class:`~ai2048.envs.batch.GameBatch` (each game owns a SplitMix64 state, so a seeded batch
    replays exactly); ``scores`` and ``moves`` are int64 [N] CPU tensors sharing its counters.
    ``parallel`` picks the batch's kernels as :class:`~ai2048.envs.batch.GameBatch`'s does.
    """

    def __init__(
        self, num_envs: int, device: str | torch.device = "cpu", seed: int | None = None,
        p_two: float = P_TWO, rules: int = RULES_VERSION, *, parallel: bool | None = None,
    ) -> None:
        check_num_envs(num_envs)
        self.p_two = checks.probability("p_two", p_two, zero=False)  # a string or None is named
        self.rules = check_env_rules(rules)
        self.num_envs = num_envs
        self.device = resolve_device(device)
        self.games = GameBatch(num_envs, EnvOptions(p_two=self.p_two, rules=self.rules), parallel=parallel)
        self.action_generator = torch.Generator(device=self.device)
        self.reset(seed)

    @property
    def scores(self) -> torch.Tensor:
        """int64 [N] score of every game (CPU, shares the batch's counters)."""
        return torch.from_numpy(self.games.scores)

    @property
    def moves(self) -> torch.Tensor:
        """int64 [N] legal moves played in every game (CPU, shares the batch's counters)."""
        return torch.from_numpy(self.games.moves)

    def seed(self, seed: int | None) -> None:
        """Give every game its own RNG state derived from ``seed`` (``None``: OS entropy), and seed the
        random-action generator."""
        seed = check_env_seed(seed)
        self.games.states[:] = seed_states(seed, self.num_envs)
        seed_generator(self.action_generator, action_seed(seed))

    def reset(self, seed: int | None = None) -> None:
        """Start N new games; a seed makes the whole batch reproducible."""
        self.seed(seed)
        self.games.reset()

    def reset_terminated(self) -> torch.Tensor:
        """Start new games only where the game is over; returns the bool [N] mask of those slots."""
        which = self.games.over()
        if which.any():
            self.games.reset(which)
        return torch.from_numpy(which)

    def set_boards(self, boards: np.ndarray, supers: np.ndarray | None = None) -> None:
        """Load engine ``uint64 [N]`` boards with their ``supers`` (int64 [N]; None: none past 32768);
        scores and move counts restart at 0."""
        boards = check_boards(boards)
        if boards.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} boards, got {boards.shape[0]}")
        self.games.set_boards(boards, supers=supers)

    def boards(self) -> np.ndarray:
        """The batch as engine ``uint64 [N]`` boards (a copy; a tile of 32768 or more is a 15)."""
        return self.games.boards.copy()

    def supers(self) -> np.ndarray:
        """int64 [N]: the exact values of the boards' tiles of 32768 or more (a copy)."""
        return self.games.supers.copy()

    @property
    def states(self) -> torch.Tensor:
        """float32 [N, 1, 4, 4] exact exponents on ``device``."""
        return torch.from_numpy(self.games.obs).to(self.device, torch.float32).view(-1, 1, 4, 4)

    @property
    def terminated(self) -> torch.Tensor:
        """bool [N], True where no move is legal."""
        return torch.from_numpy(self.games.over()).to(self.device)

    def legal_actions(self) -> torch.Tensor:
        """bool [N, 4] legal actions in ai2048 order."""
        return torch.from_numpy(self.games.masks.copy()).to(self.device)

    def high_tiles(self) -> torch.Tensor:
        """int64 [N] largest exponent on each board."""
        return torch.from_numpy(self.games.max_exp.astype(np.int64))

    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Same contract as :meth:`TorchEnv2048.step`."""
        check_actions(actions, self.num_envs)
        acts = actions.detach().to("cpu", torch.int64).numpy()
        if ((acts < 0) | (acts > 3)).any():
            raise ValueError("actions must be 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3)")
        out = self.games.step(acts)
        return torch.from_numpy(out.gains).to(self.device), torch.from_numpy(~out.illegal).to(self.device)

    def save(self) -> Snapshot:
        """Snapshot every game (positions, scores, moves; the RNG runs on, so rollouts differ)."""
        g = self.games
        states = torch.from_numpy(g.boards.view(np.int64).copy())
        return Snapshot(states, self.scores.clone(), self.moves.clone(), self.terminated.clone(),
                        torch.from_numpy(g.supers.copy()))

    def load(self, snap: Snapshot, which: torch.Tensor | None = None) -> None:
        """Restore all games, or only those where ``which`` [N] is True, from ``snap``."""
        saved = snap.states.numpy().view(np.uint64)
        if which is None:
            w = np.ones(self.num_envs, dtype=np.bool_)
        else:
            w = which.to("cpu").numpy().astype(np.bool_)
        g = self.games
        sup = None if snap.supers is None else snap.supers.numpy()[w]
        g.set_boards(saved[w], w, sup)
        g.scores[w] = snap.scores.numpy()[w]
        g.moves[w] = snap.moves.numpy()[w]


def make_batch_env(
    backend: str,
    num_envs: int,
    device: str | torch.device = "cpu",
    seed: int | None = None,
    p_two: float = P_TWO,
    rules: int = RULES_VERSION,
) -> TorchEnv2048 | EngineBatch:
    """``backend`` "torch" (tensors on ``device``), "engine" (numba boards) or "auto" (engine on CPU),
    playing ``rules``."""
    dev = resolve_device(device)
    if backend == "auto":
        backend = "engine" if dev.type == "cpu" else "torch"
    if backend == "torch":
        return TorchEnv2048(num_envs, dev, seed, p_two, rules)
    if backend == "engine":
        return EngineBatch(num_envs, dev, seed, p_two, rules)
    raise ValueError(f"unknown env backend {backend!r}; use 'auto', 'torch' or 'engine'")
