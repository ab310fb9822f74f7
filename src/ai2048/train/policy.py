"""Seed 002's policy learner (Paige McKenzie, "Playing 2048 with AI – pt. 2", 2019), one readable loop.

Each epoch the softmax MLP plays ``batch_size`` games (moves sampled from its output over the
legal moves; a ``random_frac`` of moves uniform), plus ``random_games`` uniformly random games.
The last ``forget_interval`` epochs of games form the training set. Games are split at the
set's median of a metric: "good" games (above) get labels Y = M (the played move, one-hot),
"bad" games (below) get Y = (1 − M)/3. Game weight j ∈ [−1, 1] measures how far a game is from
the median towards the best or worst game; move weight k how much a move matters. One full-batch
Adam step on the weighted L1 loss Σ_i |j|·k·|Ŷ_i − Y_i| / 4 (mean over moves) per epoch.

Fixed seed bugs (see INVENTORY): the network trains on the same transformed inputs it plays on;
``game_weight`` applies to every epoch; ``random_games`` is a count; random games respect
``cutoff``. Each is also a named option (``seed002_raw_inputs``, ``seed002_first_weight_only``,
``seed002_random_ignore_cutoff``), off by default, and so are the options of the seed's history
(early 2020, ``pytorch_dev.ipynb`` and ``network.py`` before HEAD): ``game_weight="binary"`` (±1
around the median, its default then), ``win_tile`` (the win split of j), ``memory`` (a kept
fraction of old training data instead of the rolling window) and ``curriculum`` (its ``game_type``:
mini games from a start layout to a goal tile, ``network.py`` at 512f57a, the last version with it).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai2048.board_io import encode
from ai2048.checks import check_fields, setting
from ai2048.envs.batch import GameBatch
from ai2048.envs.options import EnvOptions
from ai2048.game import is_over
from ai2048.nets import SeedNet, build_net
from ai2048.train import Trainer
from ai2048.train.config import TorchRunConfig
from ai2048.train.run import Counters, Loop, RunDir
from ai2048.train.torchrun import (
    CHECKPOINT_FORMAT,
    RngState,
    TorchCheckpoint,
    Weights,
    flushed_denormals,
    save_model,
    start_torch,
)

GAME_WEIGHTS = ("scores", "max", "log2_max", "tile_sums", "binary")
MOVE_WEIGHTS = ("none", "nonzero", "linear_move_num", "exponential_move_num")
CURRICULA = ("none", "mini_iterative", "mini_random")
CURRICULUM_FIRST = 3
"""Exponent of the largest start tile of a curriculum's first stage (seed 002's ``max_idx_start=3``:
a start tile of 8, goal 16)."""
CURRICULUM_LAST = 10
"""Exponent of the largest start tile of a curriculum's last stage (1024, goal 2048; seed 002's
``min(10, ...)`` and ``% 11``)."""


@dataclass(frozen=True)
class PolicyConfig(TorchRunConfig):
    """Every setting of a seed 002 policy-learner run (text names; the code's ``forget_after`` is
    ``forget_interval``)."""

    checkpoint_every: int = setting(50, "checkpoint every this many epochs", lo=1)

    hidden_j: int = setting(200, "first hidden layer width J (text: 200; the seed's code: 50)", lo=1)
    hidden_k: int = setting(100, "second hidden layer width K", lo=1)
    lr: float = setting(1e-3, "Adam learning rate", lo=0, lo_open=True)
    batch_size: int = setting(10, "games the network plays per epoch", lo=1)
    forget_interval: int = setting(30, "epochs of games kept in the rolling training set", lo=1)
    game_weight: str = setting(
        "scores",
        "game metric for the median split and j: scores, max, log2_max, tile_sums; binary = j ±1 by score "
        "around the median (the seed's early default)",
        choices=GAME_WEIGHTS,
    )
    move_weight: str = setting("none", "move weight k: none, nonzero, linear_move_num, exponential_move_num",
                               choices=MOVE_WEIGHTS)
    random_frac: float = setting(0.0, "fraction of the network's moves played uniformly at random",
                                 lo=0, hi=1)
    random_games: int = setting(0, "uniformly random games added to each epoch's batch", lo=0)
    cutoff: int = setting(0, "end every game after this many moves (0 = play to the end; PoC: 20)", lo=0)
    epochs: int = setting(1000, "epochs to run (0 = until duration or target_score)", lo=0)
    target_score: float = setting(
        0.0,
        "stop once the mean network score over the last target_window epochs reaches this "
        "(0 = never; PoC: 87)",
        lo=0,
    )
    target_window: int = setting(
        1,
        "epochs averaged for target_score (seed: 1 batch; one batch of 200 games is noisy by about "
        "±1.4 points)",
        lo=1,
    )
    win_tile: int = setting(
        0,
        "seed 002's history win split: when a game in the set reached this tile, won games get j in "
        "[0.5, 1] and lost ones j in [-1, -0.5] by the metric within each group (the best loser -1, as "
        "the seed); 0 = off",
        lo=0,
    )
    memory: float = setting(
        0.0,
        "seed 002's history: train on this random fraction of the previous training moves plus the new "
        "batch (its memory=0.9) instead of the forget_interval window; 0 = the window",
        lo=0, hi=1,
    )
    curriculum: str = setting(
        "none",
        "seed 002's history mini games (its game_type): none = full games; mini_iterative = from a random "
        "layout with an 8 (and 4-11 smaller tiles) play to 16, then from the best won game's end board to "
        "32, 64, ... 2048, then a new round (a stage none of curriculum_attempts batches won also starts "
        "one); mini_random = each epoch a random layout whose largest tile is drawn from 8 up to a top "
        "tile, goal its double; the top rises (up to 1024) when it was drawn and more than "
        "curriculum_win_rate of the games won. Games end at the goal; won games get j in [0.5, 1] (the win "
        "split); each epoch's games are ranked among themselves",
        choices=CURRICULA,
    )
    curriculum_attempts: int = setting(
        10,
        "mini_iterative: batches played from one stage's start before the stage fails and a new round "
        "starts (seed: 10); only the last batch is trained on",
        lo=1,
    )
    curriculum_win_rate: float = setting(
        0.6,
        "mini_random: win fraction above which drawing the top start tile raises it (seed: 0.6; 0.8 in its "
        "first version)",
        lo=0, hi=1,
    )
    seed002_raw_inputs: bool = setting(
        False,
        "seed 002's bug: train on raw tile values while moves are chosen on log2(tile)/11 - 0.25",
    )
    seed002_first_weight_only: bool = setting(
        False,
        "seed 002's bug: game_weight ranks the first epoch's games only, later epochs rank by scores",
    )
    seed002_random_ignore_cutoff: bool = setting(
        False,
        "seed 002's bug: the random games play to the end whatever cutoff says",
    )

    def __post_init__(self) -> None:
        check_fields(self)
        if self.win_tile and (self.win_tile < 4 or self.win_tile & (self.win_tile - 1)):
            raise ValueError(f"win_tile={self.win_tile} must be a power of two >= 4, or 0 for no win split")
        if self.win_tile and self.game_weight == "binary":
            raise ValueError("win_tile splits a graded game weight; game_weight='binary' has none "
                             "(the seed ignored it too)")
        if self.curriculum != "none" and self.win_tile:
            raise ValueError(f"win_tile={self.win_tile} is for full games: curriculum={self.curriculum!r} "
                             "games are won at their goal tile and split by it (as the seed's); "
                             "set win_tile=0")
        if self.curriculum != "mini_iterative" and self.curriculum_attempts != 10:
            raise ValueError(f"curriculum_attempts={self.curriculum_attempts} applies to "
                             f"curriculum='mini_iterative' only (curriculum={self.curriculum!r}); "
                             "set curriculum=mini_iterative or drop it")
        if self.curriculum != "mini_random" and self.curriculum_win_rate != 0.6:
            raise ValueError(f"curriculum_win_rate={self.curriculum_win_rate} applies to "
                             f"curriculum='mini_random' only (curriculum={self.curriculum!r}); "
                             "set curriculum=mini_random or drop it")
        if self.epochs == 0 and self.duration == 0 and self.target_score == 0:
            raise ValueError("set at least one of epochs, duration or target_score, or the run never ends")

    def net_spec(self) -> dict[str, Any]:
        return {"name": "policy", "hidden_j": self.hidden_j, "hidden_k": self.hidden_k}


PRESETS: dict[str, dict[str, Any]] = {
    # The seed's proof of concept: train(duration=3, game_penalty_type='scores', cutoff=20,
    # batch_size=200, forget_after=40), stopping at a batch mean of 87 after 20 moves.
    "poc": {"batch_size": 200, "forget_interval": 40, "game_weight": "scores", "cutoff": 20, "epochs": 0,
            "duration": 600.0, "target_score": 87.0, "target_window": 50},
}
PRESET_HELP: dict[str, str] = {
    "poc": "seed 002's proof of concept: the first 20 moves, score-weighted games, until a batch mean of 87",
}


def game_weights(values: np.ndarray) -> np.ndarray:
    """Seed 002's j: above the median (v − med)/(max − med) ∈ (0, 1]; below (v − med)/|min − med|
    ∈ [−1, 0); 0 at the median."""
    v = np.asarray(values, dtype=np.float64)
    med = np.median(v)
    hi, lo = v.max() - med, med - v.min()
    j = np.zeros_like(v)
    up, down = v > med, v < med
    j[up] = (v[up] - med) / hi
    j[down] = (v[down] - med) / lo
    return j


def binary_game_weights(scores: np.ndarray) -> np.ndarray:
    """Seed 002's early default j (``game_penalty_type=None``, 2020-02): +1 above the median score,
    −1 at or below."""
    v = np.asarray(scores, dtype=np.float64)
    return np.where(v <= np.median(v), -1.0, 1.0)


def win_split_weights(values: np.ndarray, won: np.ndarray) -> np.ndarray:
    """Seed 002's history j when some game was won (``network.py`` at 512f57a): within the won games
    j = 0.5 + (v − min)/(max − min)/2 ∈ [0.5, 1]; within the lost ones the same, negated, so the best
    lost game gets −1 (as the seed has it); a group whose values are all equal gets ±0.5."""
    v = np.asarray(values, dtype=np.float64)
    j = np.ones_like(v)
    for flag in (True, False):
        sel = won == flag
        if not sel.any():
            continue
        sub = v[sel]
        span = sub.max() - sub.min()
        part = (sub - sub.min()) / span / 2 + 0.5 if span > 0 else np.full(sub.shape, 0.5)
        j[sel] = part if flag else -part
    return j


def move_weights(kind: str, n_moves: int, nonzero: np.ndarray | None = None) -> np.ndarray:
    """Seed 002's k for the moves of one game: none → 1, nonzero → #tiles/16, linear_move_num →
    linspace(0, 1, n), exponential_move_num → 1 − e^(−3x)."""
    if kind == "none":
        return np.ones(n_moves)
    if kind == "nonzero":
        if nonzero is None:
            raise ValueError("move weight 'nonzero' needs the tile counts")
        return np.asarray(nonzero, dtype=np.float64) / 16.0
    x = np.linspace(0.0, 1.0, n_moves)
    return x if kind == "linear_move_num" else 1.0 - np.exp(-3.0 * x)


def game_metric(kind: str, scores: np.ndarray, max_exp: np.ndarray, tile_sums: np.ndarray) -> np.ndarray:
    """The per-game value that ranks games (seed 002's ``get_rank_values``)."""
    table = {"scores": scores, "max": 2.0**max_exp, "log2_max": max_exp, "tile_sums": tile_sums}
    return table[kind].astype(np.float64)


def labels(moves: np.ndarray, good: np.ndarray) -> np.ndarray:
    """[M] moves, [M] bool -> [M, 4] targets: one-hot M for good games, (1 − M)/3 for bad ones."""
    m = np.eye(4, dtype=np.float32)[moves]
    return np.where(good[:, None], m, (1.0 - m) / 3.0).astype(np.float32)


def raw_values(exps: np.ndarray) -> np.ndarray:
    """[M, 16] exponents -> float [M, 16] raw tile values (0 empty): the inputs seed 002 trained on by
    mistake."""
    e = np.asarray(exps, dtype=np.int64)
    return np.where(e > 0, np.left_shift(1, e), 0).astype(np.float32)


def random_start(top_exp: int, gen: np.random.Generator) -> np.ndarray:
    """Seed 002's ``random_init(max_tile)``: a mini game's start layout as [16] exponents.

    The tile ``2**top_exp`` on a uniformly random cell, then 4 to 11 more tiles, each on a random
    empty cell of a random row that has one, of value ``2**e`` with ``e`` uniform in 1..top_exp − 1.
    """
    if not 2 <= top_exp <= CURRICULUM_LAST:
        raise ValueError(f"top_exp={top_exp} must be in 2..{CURRICULUM_LAST} (largest start tile 4..1024)")
    layout = np.zeros((4, 4), dtype=np.uint8)
    layout[gen.integers(4), gen.integers(4)] = top_exp
    for _ in range(int(gen.integers(4, 12))):
        row = gen.choice(np.flatnonzero((layout == 0).sum(axis=1) > 0))
        col = gen.choice(np.flatnonzero(layout[row] == 0))
        layout[row, col] = gen.integers(1, top_exp)
    return layout.reshape(16)


def iterative_next(start_exp: int, won: bool) -> int:
    """mini_iterative's next stage, as the exponent of its largest start tile (seed 002's
    ``max_idx_start``): one up after a won stage, back to the first after 1024 → 2048 (a new round),
    and to the first after a failed one."""
    return max(CURRICULUM_FIRST, (start_exp + 1) % (CURRICULUM_LAST + 1)) if won else CURRICULUM_FIRST


def random_next_top(top_exp: int, drawn_exp: int, win_rate: float, threshold: float) -> int:
    """mini_random's next top start exponent: one up (at most 1024) when the top was drawn and more
    than ``threshold`` of the games reached the goal."""
    return min(CURRICULUM_LAST, top_exp + 1) if drawn_exp == top_exp and win_rate > threshold else top_exp


def weighted_l1(probs: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """L1(w·Y, w·Ŷ) averaged over every element (seed 002's ``nn.L1Loss`` on weighted tensors),
    w = |j|·k."""
    return (w[:, None] * (probs - y)).abs().mean()


class EpochStopped(Exception):
    """A stop request (Ctrl-C or SIGTERM) arrived in the middle of an epoch, which is then abandoned."""


def play_games(net: SeedNet | None, n: int, seed: int, cutoff: int, random_frac: float,
               gen: np.random.Generator, device: torch.device, stop: Callable[[], bool] | None = None,
               start: np.ndarray | None = None,
               goal_exp: int | None = None) -> dict[str, np.ndarray]:
    """Play ``n`` games to the end (or ``cutoff`` moves), all at once; ``net=None`` plays uniformly.

    The games are a :class:`~ai2048.envs.batch.GameBatch` seeded with ``seed``; finished games
    are held while the others play on. ``stop`` is asked before every move; when it says True the
    games are abandoned with :class:`EpochStopped` (a batch of long games can take minutes, and
    Ctrl-C must act in seconds). A curriculum's mini games all begin at ``start`` ([16] exponents)
    and end on the move that makes the tile ``2**goal_exp`` (seed 002's ``early_stop``).

    Returns per move ``layouts`` [M, 16] (before the move), ``moves`` [M], ``game`` [M], and per
    game ``scores``, ``lengths``, ``max_exp``, ``tile_sums`` and ``final`` [n, 16] (the end boards).
    """
    goal = None if goal_exp is None else 1 << int(goal_exp)
    games = GameBatch(n, EnvOptions(illegal_action="raise", goal_tile=goal), cutoff=cutoff or None, seed=seed,
                      parallel=False)
    games.reset()
    if start is not None:
        games.set_boards(np.full(n, encode(np.asarray(start, dtype=np.int64)), dtype=np.uint64))
    layouts, moves, game = [], [], []
    active = ~games.over()
    while active.any():
        if stop is not None and stop():
            raise EpochStopped
        idx = np.flatnonzero(active)
        exps = games.obs[idx].reshape(idx.size, 16)
        masks = games.masks[idx]
        if net is None:
            p = masks.astype(np.float64)
        else:
            with torch.no_grad():
                p = net(net.encode(exps).to(device)).cpu().numpy().astype(np.float64)
            rand = gen.random(idx.size) < random_frac
            p[rand] = 1.0
            p *= masks
            dead = p.sum(axis=1) <= 0
            p[dead] = masks[dead]
        cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
        a = np.minimum((cdf < gen.random(idx.size)[:, None]).sum(axis=1), 3)
        a = np.where(masks[np.arange(idx.size), a], a, masks.argmax(axis=1)).astype(np.int64)
        layouts.append(exps)
        moves.append(a)
        game.append(idx)
        actions = np.zeros(n, dtype=np.int64)
        actions[idx] = a
        step = games.step(actions, hold=~active)
        active &= ~(step.terminated | step.truncated)
    final = games.obs.reshape(n, 16)
    tile_sums = np.where(final > 0, 2 ** final.astype(np.int64), 0).sum(axis=1)
    return {
        "layouts": np.concatenate(layouts) if layouts else np.zeros((0, 16), np.uint8),
        "moves": np.concatenate(moves) if moves else np.zeros(0, np.int64),
        "game": np.concatenate(game) if game else np.zeros(0, np.int64),
        "scores": games.scores.copy(),
        "lengths": games.moves.copy(),
        "max_exp": final.max(axis=1).astype(np.int64),
        "tile_sums": tile_sums,
        "final": final.copy(),
    }


def epoch_weights(cfg: PolicyConfig, window: list[dict[str, np.ndarray]], first: bool = True) -> np.ndarray:
    """j of every game held in ``window``, ranked together (``first``: as in :func:`training_set`).

    Full games are won at ``win_tile``; a curriculum's at their batch's goal (``goal_exp``), where
    the seed split every set that holds a won game.
    """
    kind = "scores" if cfg.seed002_first_weight_only and not first else cfg.game_weight
    scores = np.concatenate([b["scores"] for b in window])
    if kind == "binary":
        return binary_game_weights(scores)
    values = np.concatenate([game_metric(kind, b["scores"], b["max_exp"], b["tile_sums"]) for b in window])
    if cfg.curriculum != "none":
        won = np.concatenate([b["max_exp"] >= b["goal_exp"] for b in window])
    else:
        won = np.concatenate([b["max_exp"] for b in window]) >= (cfg.win_tile.bit_length() - 1)
    split = cfg.curriculum != "none" or cfg.win_tile
    return win_split_weights(values, won) if split and won.any() else game_weights(values)


def training_set(cfg: PolicyConfig, window: list[dict[str, np.ndarray]], first: bool = True
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(layouts [M, 16], labels [M, 4], weights |j|·k [M]) from the games held in the window.

    ``first``: the window holds the first epoch's games (``seed002_first_weight_only`` ranks later
    ones by score). A curriculum ranks each epoch's games among themselves: they share a start
    layout and a goal, which other epochs' games do not (the seed trained on one epoch's games).
    """
    if cfg.curriculum != "none":
        j_all = np.concatenate([epoch_weights(cfg, [b], first) for b in window])
    else:
        j_all = epoch_weights(cfg, window, first)
    xs, ys, ws = [], [], []
    offset = 0
    for b in window:
        ng = len(b["scores"])
        j = j_all[offset : offset + ng]
        offset += ng
        order = np.argsort(b["game"], kind="stable")  # moves grouped by game, in play order
        g = b["game"][order]
        k = np.empty(len(order))
        starts = np.searchsorted(g, np.arange(ng))
        nonzero = (b["layouts"][order] > 0).sum(axis=1)
        for gi in range(ng):
            s, e = starts[gi], (starts[gi + 1] if gi + 1 < ng else len(order))
            k[s:e] = move_weights(cfg.move_weight, e - s, nonzero[s:e])
        jm = j[g]
        xs.append(b["layouts"][order])
        ys.append(labels(b["moves"][order], jm >= 0))
        ws.append(np.abs(jm) * k)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(ws).astype(np.float32)


def play_batch(cfg: PolicyConfig, net: SeedNet, seed: int, gen: np.random.Generator, device: torch.device,
               stop: Callable[[], bool] | None = None, start: np.ndarray | None = None,
               goal_exp: int | None = None) -> dict[str, np.ndarray]:
    """The network's ``batch_size`` games and the ``random_games`` uniform ones (numbered after them)."""
    batch = play_games(net, cfg.batch_size, seed, cfg.cutoff, cfg.random_frac, gen, device, stop=stop,
                       start=start, goal_exp=goal_exp)
    if cfg.random_games:
        cutoff = 0 if cfg.seed002_random_ignore_cutoff else cfg.cutoff
        rnd = play_games(None, cfg.random_games, seed ^ 0x5EED, cutoff, 0.0, gen, device, stop=stop,
                         start=start, goal_exp=goal_exp)
        rnd["game"] = rnd["game"] + cfg.batch_size
        batch = {k: np.concatenate([batch[k], rnd[k]]) for k in batch}
    return batch


def best_won_board(cfg: PolicyConfig, batch: dict[str, np.ndarray], first: bool) -> list[int] | None:
    """mini_iterative's next start: the end board ([16] exponents) of the won game with the largest j
    (seed 002: ``final_layouts[argmax(j)]``), among those that still have a legal move; None if none.

    The seed took the argmax over every game, so under the binary j a lost game (even a dead board)
    could start the next stage; only won games are taken here.
    """
    j = epoch_weights(cfg, [batch], first)
    won = batch["max_exp"] >= batch["goal_exp"]
    for g in np.argsort(-j, kind="stable"):
        if won[g] and not is_over(encode(batch["final"][g].astype(np.int64))):
            return [int(e) for e in batch["final"][g]]
    return None


def play_epoch(cfg: PolicyConfig, net: SeedNet, epoch: int, cur: dict[str, Any], gen: np.random.Generator,
               device: torch.device, stop: Callable[[], bool] | None = None
               ) -> tuple[dict[str, np.ndarray], dict[str, Any], dict[str, Any], tuple[int, int]]:
    """One epoch's games: (the batch to train on, the curriculum's metrics, its next state, (games, moves)
    played, failed attempts included).

    Without a curriculum, one batch of full games. ``cur`` is the curriculum's state: ``top`` (the
    exponent of the largest start tile: mini_iterative's stage, mini_random's highest draw) and
    ``start`` (mini_iterative's carried start board, or None); it is returned changed, not changed
    in place, so an abandoned epoch leaves it as it was.
    """
    seed = int(np.random.SeedSequence([cfg.seed, epoch]).generate_state(1)[0])
    if cfg.curriculum == "none":
        batch = play_batch(cfg, net, seed, gen, device, stop)
        return batch, {}, cur, (len(batch["scores"]), len(batch["moves"]))
    top = int(cur["top"])
    if cfg.curriculum == "mini_random":
        drawn = int(gen.integers(CURRICULUM_FIRST, top + 1))
        batch = play_batch(cfg, net, seed, gen, device, stop, random_start(drawn, gen), drawn + 1)
        rate = float((batch["max_exp"] >= drawn + 1).mean())
        nxt: dict[str, Any] = {"top": random_next_top(top, drawn, rate, cfg.curriculum_win_rate),
                               "start": None}
        played, attempts = (len(batch["scores"]), len(batch["moves"])), 1
    else:
        drawn = top
        start = random_start(top, gen) if top == CURRICULUM_FIRST or cur["start"] is None else np.asarray(
            cur["start"], dtype=np.uint8)
        played = (0, 0)
        for attempts in range(1, cfg.curriculum_attempts + 1):
            s = seed if attempts == 1 else int(
                np.random.SeedSequence([cfg.seed, epoch, attempts]).generate_state(1)[0])
            batch = play_batch(cfg, net, s, gen, device, stop, start, top + 1)
            played = (played[0] + len(batch["scores"]), played[1] + len(batch["moves"]))
            if (batch["max_exp"] >= top + 1).any():
                break
        rate = float((batch["max_exp"] >= top + 1).mean())
        nxt = {"top": iterative_next(top, rate > 0), "start": None}
    batch["goal_exp"] = np.array([drawn + 1], dtype=np.int64)
    if cfg.curriculum == "mini_iterative" and nxt["top"] != CURRICULUM_FIRST:
        nxt["start"] = best_won_board(cfg, batch, first=epoch == 0)
        if nxt["start"] is None:  # every won game ended on a dead board: nothing to build on
            nxt["top"] = CURRICULUM_FIRST
    info: dict[str, Any] = {"stage": drawn - CURRICULUM_FIRST + 1, "start_tile": 1 << drawn,
                            "goal_tile": 1 << (drawn + 1), "win_rate": rate, "attempts": attempts}
    if cfg.curriculum == "mini_random":
        info["top_tile"] = 1 << top
    return batch, info, nxt, played


class Window(deque[dict[str, np.ndarray]]):
    """The last ``forget_interval`` epochs' games, the rolling training set (a tracked state)."""

    def state_dict(self) -> list[dict[str, np.ndarray]]:
        return list(self)

    def load_state_dict(self, state: list[dict[str, np.ndarray]]) -> None:
        self.clear()
        self.extend(state)


class Memory:
    """With ``cfg.memory``: the kept training moves ``(x, y, w)``, None before the first epoch (a
    tracked state)."""

    def __init__(self) -> None:
        self.moves: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def state_dict(self) -> list[np.ndarray] | None:
        return None if self.moves is None else list(self.moves)

    def load_state_dict(self, state: list[np.ndarray] | None) -> None:
        self.moves = None if state is None else (state[0], state[1], state[2])


def run(config: PolicyConfig, out: Path, resume: bool = False, opened: RunDir | None = None) -> Path:
    """Train seed 002's policy network into run directory ``out`` (resumable); returns ``out``."""
    out, cfg = Path(out), config
    resumed, device, gen = start_torch(out, cfg, TRAINER, resume, opened)
    spec = cfg.net_spec()
    net = build_net(spec).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=cfg.lr, foreach=True)
    window = Window(maxlen=cfg.forget_interval)
    memory = Memory()
    c = Counters(epoch=0, games=0, moves=0, elapsed=0.0, recent=[],
                 curriculum={"top": CURRICULUM_FIRST, "start": None})
    loop = Loop(
        out, cfg, TRAINER, resumed, total=cfg.epochs, counters=c, step="epoch", games="games",
        progress=("moves",), unit="epoch", info=lambda: {"net": spec},
        files=lambda: save_model(out, "policy", spec, net, {"config": dataclasses.asdict(cfg)}),
        checkpoint=TorchCheckpoint({"format": CHECKPOINT_FORMAT, "trainer": "policy", "net": spec}),
    )
    loop.track(
        net_state=Weights(net, spec, str(out / "checkpoint.pt")), optimizer=optimizer, window=window,
        memory=memory, counters=c, rng=RngState(gen), optional=("memory",),
    )
    # compile (or load) the batch kernels now: a stop asked for during a first compile would wait for it
    play_games(None, 1, cfg.seed, cfg.cutoff, 0.0, np.random.default_rng(0), device)
    with loop, flushed_denormals():
        while loop.running():
            net.eval()
            gen_state = gen.bit_generator.state
            try:
                batch, stage, c["curriculum"], played = play_epoch(cfg, net, c["epoch"], c["curriculum"], gen,
                                                                   device, stop=lambda: loop.stopping)
            except EpochStopped:
                # abandon the epoch: the checkpoint holds the state before it, so a resume replays it
                gen.bit_generator.state = gen_state
                loop.status = "interrupted"
                break
            nb = cfg.batch_size
            mean_score = float(batch["scores"][:nb].mean())
            if cfg.memory:
                # the seed's history: a random `memory` share of the old moves, weights as computed then
                x, y, w = training_set(cfg, [batch], first=c["epoch"] == 0)
                if memory.moves is not None:
                    old_moves = memory.moves
                    keep = gen.permutation(len(old_moves[0]))[: int(len(old_moves[0]) * cfg.memory)]
                    x, y, w = (np.concatenate([old[keep], new])
                               for old, new in zip(old_moves, (x, y, w), strict=True))
                memory.moves = (x, y, w)
            else:
                window.append(batch)
                x, y, w = training_set(cfg, list(window), first=c["epoch"] == 0)
            net.train()
            inputs = torch.from_numpy(raw_values(x)) if cfg.seed002_raw_inputs else net.encode(x)
            loss = weighted_l1(net(inputs.to(device)), torch.from_numpy(y).to(device),
                               torch.from_numpy(w).to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            c["epoch"] += 1
            c["games"] += played[0]
            c["moves"] += played[1]
            c["recent"] = (c["recent"] + [mean_score])[-cfg.target_window :]
            rolling = float(np.mean(c["recent"]))
            loop.log({
                "epoch": c["epoch"], "score": mean_score, "score_avg": rolling,
                "score_max": int(batch["scores"][:nb].max()), "length": float(batch["lengths"][:nb].mean()),
                "max_tile": int(2 ** batch["max_exp"][:nb].max()), "loss": loss.item(),
                "epsilon": cfg.random_frac, "actions": np.bincount(batch["moves"], minlength=4).tolist(),
                "train_moves": len(x), **stage,
            })
            loop.bar.update(1)
            loop.bar.set_postfix(score=f"{mean_score:.1f}", avg=f"{rolling:.2f}", loss=f"{loss.item():.4f}",
                                 refresh=False)
            loop.checkpoint()
            if cfg.target_score and len(c["recent"]) == cfg.target_window and rolling >= cfg.target_score:
                break
    return loop.finish()

TRAINER = Trainer(
    "policy",
    "Seed 002's softmax policy MLP trained on good/bad games with L1 (torch)",
    PolicyConfig,
    run,
    PRESETS,
    preset_help=PRESET_HELP,
    resumable=(*TorchRunConfig.RESUMABLE, "epochs", "target_score"),
)
