"""LazyZero self-play training (seed 001: lowrollr/turbozero, ``_2048Trainer`` / ``_2048Collector``).

One readable loop: ``num_envs`` games are played together; every move runs a LazyZero search
(:func:`ai2048.search.lazyzero.lazy_search`) and stores (board, normalised visit counts). When a
game ends its positions get the value target log(moves left in the game), the whole game goes
into a replay memory of games, and ``minibatches_per_update`` gradient steps are taken on
minibatches drawn game-uniformly then position-uniformly, each position turned by a random
quarter turn with its policy target turned to match. Loss = ``policy_factor`` x cross-entropy
(policy logits, visit shares) + MSE(value, log moves left). An epoch is ``episodes_per_epoch``
finished games; after it the learning rate decays by ``lr_decay_gamma``, optional greedy test
games run, a metrics line is written and the run directory is checkpointed atomically.

Run directory (:mod:`ai2048.train.run`): ``config.json``, ``meta.json`` (agent "lazyzero"),
``metrics.jsonl`` (one line per epoch) and ``tb/``, ``model.pt`` (weights), ``checkpoint.pt``
(weights, optimiser, scheduler, replay, RNG, training time). ``--resume`` continues from the last
checkpoint; games in flight at that moment are replayed from fresh starts.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai2048.agents.lazyzero import NETWORK_KEYS, WEIGHTS
from ai2048.checks import check_fields, setting
from ai2048.envs.torch_env import _constants, from_boards, make_batch_env
from ai2048.nets.resnet import (
    VALUE_ACTIVATIONS,
    FusedPolicyValue,
    PolicyValueResNet,
    ResNetConfig,
    count_parameters,
)
from ai2048.search.lazyzero import SearchStopped, choose_actions, lazy_search
from ai2048.train import Trainer
from ai2048.train.config import DEVICE_HELP, TorchRunConfig
from ai2048.train.run import Counters, Loop, RunDir
from ai2048.train.torchrun import GeneratorState, TorchCheckpoint, start_torch, torch_save


@dataclass(frozen=True)
class LazyZeroConfig(TorchRunConfig):
    """LazyZero training settings; the defaults are seed 001's GPU run (``2048_gpu.yaml``)."""

    checkpoint_every: int = setting(1, "save a checkpoint every this many epochs (and at a stop)", lo=1)
    device: str = setting("auto", DEVICE_HELP)
    threads: int = setting(1, "CPU threads for torch and numba", lo=1)

    channels: int = setting(16, "residual trunk channels (seed: 16)")
    blocks: int = setting(6, "residual blocks in the trunk (seed: 6)")
    head_channels: int = setting(16, "channels of the policy and value heads' residual blocks")
    head_blocks: int = setting(3, "residual blocks in each head (seed: 3)")
    kernel_size: int = setting(3, "convolution kernel size (odd)")
    policy_fc: int = setting(32, "hidden units of the policy head's linear layer")
    value_fc: int = setting(32, "hidden units of the value head's linear layer")
    value_activation: str = setting(
        "none",
        f"value output activation, one of {VALUE_ACTIVATIONS} "
        "(seed mini/tiny: tanh0to1, which cannot fit log(moves) > 1)",
    )
    rollouts: int = setting(500, "LazyZero rollouts per move while training", lo=1)
    rollout_depth: int = setting(
        3, "moves per rollout including the root move; the leaf is scored by the value head"
    , lo=1)
    puct: float = setting(1.0, "PUCT exploration constant c", lo=0)
    temperature: float = setting(1.0, "training move choice: sample visits^(1/T); 0 = argmax", lo=0)
    test_rollouts: int = setting(500, "rollouts per move in test games and in the trained agent", lo=1)
    num_envs: int = setting(8192, "games played in parallel", lo=1)
    episodes_per_epoch: int = setting(20000, "finished self-play games per epoch", lo=1)
    epochs: int = setting(8, "epochs to train (the seed reports 80,000 episodes = 8 epochs)", lo=1)
    test_games: int = setting(1000, "greedy (T=0) test games after each epoch; 0 = none", lo=0)
    optimizer: str = setting("adamw", "'adamw' or 'sgd' (SGD uses momentum)", choices=("adamw", "sgd"))
    lr: float = setting(3e-4, "learning rate", lo=0, lo_open=True)
    momentum: float = setting(0.8, "SGD momentum", lo=0)
    weight_decay: float = setting(1e-4, "weight decay (seed c_reg)", lo=0)
    lr_decay_gamma: float = setting(1.0, "learning rate factor per epoch (ExponentialLR); 1 = constant", lo=0,
                                    hi=1, lo_open=True)
    minibatch_size: int = setting(4096, "positions per gradient step", lo=1)
    minibatches_per_update: int = setting(1, "gradient steps per finished game", lo=1)
    policy_factor: float = setting(1.0, "weight of the policy cross-entropy in the loss", lo=0)
    replay_max_games: int = setting(20000, "whole games kept in the replay memory", lo=1)
    replay_min_games: int = setting(20000, "games in memory before training starts", lo=1)
    env_backend: str = setting(
        "auto", "'torch' (tensor env, on the device), 'engine' (numba boards) or 'auto' (engine on CPU)"
    , choices=("auto", "torch", "engine"))

    def __post_init__(self) -> None:
        check_fields(self)
        self.network()
        if self.replay_min_games > self.replay_max_games:
            raise ValueError(
                f"replay_min_games ({self.replay_min_games}) exceeds replay_max_games "
                f"({self.replay_max_games}): training would never start; lower replay_min_games or raise "
                "replay_max_games"
            )

    def network(self) -> ResNetConfig:
        """The network sizes as a :class:`ResNetConfig` (checks them)."""
        return ResNetConfig(**{k: getattr(self, k) for k in NETWORK_KEYS})


_TINY = {  # 2048_tiny.yaml
    "channels": 8, "blocks": 2, "head_channels": 8, "head_blocks": 1, "rollouts": 100, "rollout_depth": 2,
    "test_rollouts": 100, "num_envs": 32, "episodes_per_epoch": 32, "epochs": 100, "test_games": 0,
    "optimizer": "sgd", "lr": 0.1, "momentum": 0.8, "weight_decay": 1e-4, "lr_decay_gamma": 0.9,
    "minibatch_size": 256, "replay_max_games": 1000, "replay_min_games": 10,
}
_MINI = {  # 2048_mini.yaml
    "channels": 16, "blocks": 6, "head_channels": 16, "head_blocks": 1, "rollouts": 300, "rollout_depth": 3,
    "test_rollouts": 300, "num_envs": 4096, "episodes_per_epoch": 5000, "epochs": 8, "test_games": 0,
    "optimizer": "sgd", "lr": 0.1, "momentum": 0.8, "weight_decay": 1e-4, "lr_decay_gamma": 0.9,
    "minibatch_size": 1024, "replay_max_games": 5000, "replay_min_games": 5000,
}
PRESETS: dict[str, dict[str, Any]] = {"tiny": _TINY, "mini": _MINI, "gpu": {}}
PRESET_HELP: dict[str, str] = {
    "tiny": "seed 001's 2048_tiny.yaml: 8-channel ResNet, 32 games, 100 rollouts of depth 2 (CPU minutes)",
    "mini": "seed 001's 2048_mini.yaml: 16 channels x 6 blocks, 4,096 games, 300 rollouts of depth 3",
    "gpu": "seed 001's full configuration (the defaults): 8,192 games, 500 rollouts of depth 3 (needs a GPU)",
}


def rotate_examples(
    states: torch.Tensor, policies: torch.Tensor, k: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn boards [B, 1, 4, 4] by ``k`` [B] clockwise quarter turns, policies [B, 4] to match.

    Clockwise action order means a quarter turn maps move ``a`` to ``(a + 1) % 4``.
    """
    rot = _constants(states.device)[0]
    b = states.shape[0]
    turned = states.reshape(b, 16).gather(1, rot[k]).view(b, 1, 4, 4)
    idx = (torch.arange(4, device=states.device)[None, :] - k[:, None]) % 4
    return turned, policies.gather(1, idx)


class GameReplay:
    """Whole games, oldest dropped first; sampled game-uniformly, then position-uniformly (seed 001)."""

    def __init__(self, max_games: int) -> None:
        self.games: deque[tuple[np.ndarray, np.ndarray, np.ndarray]] = deque(maxlen=max_games)

    def add(self, boards: np.ndarray, policies: np.ndarray) -> None:
        """A finished game: boards uint64 [L], visit shares [L, 4]; value targets log(L - t)."""
        moves_left = np.arange(len(boards), 0, -1, dtype=np.float32)
        self.games.append((boards, policies.astype(np.float32), np.log(moves_left)))

    def __len__(self) -> int:
        return len(self.games)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gi = rng.integers(0, len(self.games), n)
        boards, pols, vals = [], [], []
        for g in gi:
            b, p, v = self.games[g]
            t = rng.integers(0, len(b))
            boards.append(b[t])
            pols.append(p[t])
            vals.append(v[t])
        return np.array(boards, dtype=np.uint64), np.stack(pols), np.array(vals, dtype=np.float32)

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The games as three tensors: ``lengths`` [G], ``boards`` int64 [sum L], ``policies`` [sum L, 4]."""
        lengths = [len(g[0]) for g in self.games]
        if not lengths:
            return {"lengths": torch.zeros(0, dtype=torch.long)}
        return {
            "lengths": torch.tensor(lengths),
            "boards": torch.from_numpy(np.concatenate([g[0] for g in self.games]).view(np.int64)),
            "policies": torch.from_numpy(np.concatenate([g[1] for g in self.games])),
        }

    def load_state_dict(self, data: dict[str, torch.Tensor]) -> None:
        self.games.clear()
        lengths = data["lengths"].tolist()
        if not lengths:
            return
        boards = data["boards"].numpy().view(np.uint64)
        pols = data["policies"].numpy()
        start = 0
        for n in lengths:
            self.add(boards[start:start + n].copy(), pols[start:start + n].copy())
            start += n


def _epoch_summary(games: list[dict[str, float]]) -> dict[str, float]:
    moves = np.array([g["moves"] for g in games], dtype=np.float64)
    tiles = np.array([g["high_tile"] for g in games], dtype=np.float64)
    scores = np.array([g["score"] for g in games], dtype=np.float64)
    return {
        "games": len(games),
        "moves_mean": float(moves.mean()),
        "moves_max": float(moves.max()),
        "score_mean": float(scores.mean()),
        "high_tile_mean": float(tiles.mean()),
        "high_tile_log2_mean": float(np.log2(tiles).mean()),
        "high_tile_max": float(tiles.max()),
        "reach_1024": float((tiles >= 1024).mean()),
        "reach_2048": float((tiles >= 2048).mean()),
        "reach_4096": float((tiles >= 4096).mean()),
    }


class StoppedInTestGames(Exception):
    """A stop request arrived during an epoch's test games (see :func:`play_test`)."""


def train_step(
    cfg: LazyZeroConfig, model: PolicyValueResNet, opt: torch.optim.Optimizer, replay: GameReplay,
    rng: np.random.Generator, device: torch.device,
) -> tuple[float, float, float, float]:
    """One gradient step on a rotated minibatch from the replay of games; returns (loss, policy loss,
    value loss, policy accuracy)."""
    boards, pols, vals = replay.sample(cfg.minibatch_size, rng)
    x = from_boards(boards, device)
    k = torch.from_numpy(rng.integers(0, 4, len(boards))).to(device)
    x, target = rotate_examples(x, torch.from_numpy(pols).to(device), k)
    v_target = torch.from_numpy(vals).to(device)
    model.train()
    logits, v = model(x)
    policy_loss = -(target * torch.log_softmax(logits, 1)).sum(1).mean()
    value_loss = torch.nn.functional.mse_loss(v, v_target)
    loss = cfg.policy_factor * policy_loss + value_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    acc = (logits.argmax(1) == target.argmax(1)).float().mean()
    return loss.item(), policy_loss.item(), value_loss.item(), acc.item()


def play_test(cfg: LazyZeroConfig, fused: FusedPolicyValue, epoch: int, device: torch.device,
              stop: Callable[[], bool] | None = None) -> dict[str, float]:
    """``test_games`` greedy games with ``test_rollouts`` after epoch ``epoch`` (seed 001's test batch).

    ``stop`` is asked before every move and every rollout: a test batch can take minutes, and
    Ctrl-C or SIGTERM must act within seconds, so a stop raises :class:`StoppedInTestGames` (the
    epoch is then recorded without its test).
    """
    env = make_batch_env(cfg.env_backend, cfg.test_games, device, seed=cfg.seed + 10**6 + epoch)
    gen = torch.Generator(device=device).manual_seed(cfg.seed + epoch)
    while not bool(env.terminated.all()):
        if stop is not None and stop():
            raise StoppedInTestGames
        legal = env.legal_actions()
        try:
            visits, _ = lazy_search(env, fused, rollouts=cfg.test_rollouts, depth=cfg.rollout_depth,
                                    puct=cfg.puct, generator=gen, stop=stop)
        except SearchStopped:
            raise StoppedInTestGames from None
        env.step(choose_actions(visits, legal, 0.0, gen))
    finals = zip(env.moves.tolist(), env.scores.tolist(), env.high_tiles().tolist(), strict=True)
    games = [
        {"moves": float(m), "score": float(s), "high_tile": float(2 ** int(t))} for m, s, t in finals
    ]
    return {f"test_{k}": v for k, v in _epoch_summary(games).items()}


@contextlib.contextmanager
def _out_of_memory_is_a_setting(cfg: LazyZeroConfig) -> Iterator[None]:
    """Within ``with``: the device running out of memory is reported as the settings that caused it."""
    try:
        yield
    except torch.OutOfMemoryError as e:
        raise ValueError(
            f"the batch does not fit in {cfg.device} memory (num_envs={cfg.num_envs}, "
            f"minibatch_size={cfg.minibatch_size}); lower them with --set"
        ) from e


def run(config: LazyZeroConfig, out: Path, resume: bool = False, opened: RunDir | None = None) -> Path:
    """Train LazyZero into run directory ``out`` (``resume``: continue from its checkpoint)."""
    if not isinstance(config, LazyZeroConfig):
        raise TypeError(f"config must be a LazyZeroConfig, got {type(config).__name__}")
    out, cfg = Path(out), config
    resumed, device, _ = start_torch(out, cfg, TRAINER, resume, opened)
    import numba

    numba.set_num_threads(max(1, min(cfg.threads, getattr(numba.config, "NUMBA_NUM_THREADS", 1))))
    model = PolicyValueResNet(cfg.network()).to(device)
    opt: torch.optim.Optimizer
    if cfg.optimizer == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum,
                              weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=cfg.lr_decay_gamma)
    replay = GameReplay(cfg.replay_max_games)
    generator = torch.Generator(device=device).manual_seed(cfg.seed)
    c = Counters(epoch=0, episodes_in_epoch=0, episodes_total=0, elapsed=0.0)
    loop = Loop(
        out, cfg, TRAINER, resumed, total=cfg.epochs, counters=c, step="epoch", games="episodes_total",
        progress=("episodes_in_epoch",), unit="epoch", bar_games=cfg.epochs * cfg.episodes_per_epoch,
        first_save="meta", info=lambda: {"parameters": count_parameters(model)},
        files=lambda: torch_save(out / WEIGHTS, model.state_dict()),  # what the lazyzero agent loads
        checkpoint=TorchCheckpoint({}, "LazyZero checkpoint (it may be truncated or corrupt)", device),
    )
    loop.track(c, model=model, optimizer=opt, scheduler=sched, replay=replay,
               generator=GeneratorState(generator))
    # the minibatch sampler is not saved: a resumed run draws from a stream named by its games so far
    rng = np.random.default_rng([cfg.seed, c["episodes_total"]] if resumed else cfg.seed)
    # games in flight at the checkpoint are not saved: a resumed run starts fresh ones
    env = make_batch_env(cfg.env_backend, cfg.num_envs, device, seed=cfg.seed + 7919 * c["episodes_total"])
    n = cfg.num_envs
    ep_boards: list[list[int]] = [[] for _ in range(n)]
    ep_pols: list[list[np.ndarray]] = [[] for _ in range(n)]
    games: list[dict[str, float]] = []  # the epoch's finished games
    losses: list[tuple[float, float, float, float]] = []  # the epoch's gradient steps
    fused = FusedPolicyValue(model)
    epoch_start, epoch_moves = time.monotonic(), 0
    with loop, _out_of_memory_is_a_setting(cfg):  # Ctrl-C or SIGTERM: save at the next move and stop
        try:
            while loop.running():
                legal = env.legal_actions()
                before = generator.get_state()
                try:
                    visits, _ = lazy_search(env, fused, rollouts=cfg.rollouts, depth=cfg.rollout_depth,
                                            puct=cfg.puct, generator=generator, stop=lambda: loop.stopping)
                except SearchStopped:  # Ctrl-C or SIGTERM within a move: the move is not made
                    generator.set_state(before)
                    continue  # loop.running() sees the request: save and stop
                shares = (visits / visits.sum(1, keepdim=True).clamp(min=1)).cpu().numpy()
                for i, b in enumerate(env.boards()):
                    ep_boards[i].append(int(b))
                    ep_pols[i].append(shares[i])
                env.step(choose_actions(visits, legal, cfg.temperature, generator))
                epoch_moves += n
                done = env.terminated.cpu().numpy()
                trained = False
                if done.any():
                    moves, scores = env.moves.tolist(), env.scores.tolist()
                    tiles = env.high_tiles().tolist()
                    for i in np.flatnonzero(done).tolist():
                        replay.add(np.array(ep_boards[i], dtype=np.uint64), np.stack(ep_pols[i]))
                        ep_boards[i], ep_pols[i] = [], []
                        games.append({"moves": moves[i], "score": scores[i], "high_tile": 2 ** tiles[i]})
                        c["episodes_in_epoch"] += 1
                        c["episodes_total"] += 1
                        loop.bar.update(1)
                        if len(replay) >= cfg.replay_min_games:
                            for _ in range(cfg.minibatches_per_update):
                                losses.append(train_step(cfg, model, opt, replay, rng, device))
                            trained = True
                    env.reset_terminated()
                    last = games[-20:]
                    loop.bar.set_postfix(moves=f"{np.mean([g['moves'] for g in last]):.0f}",
                                         tile=f"{np.mean([g['high_tile'] for g in last]):.0f}",
                                         loss=f"{losses[-1][0]:.3f}" if losses else "-")
                if trained:
                    fused = FusedPolicyValue(model)
                if c["episodes_in_epoch"] < cfg.episodes_per_epoch:
                    continue
                # the epoch ends: its record (and test games), the learning rate's decay, a checkpoint
                now = time.monotonic()
                seconds, epoch_start = now - epoch_start, now
                record: dict[str, Any] = {"epoch": c["epoch"] + 1, "lr": opt.param_groups[0]["lr"]}
                summary = _epoch_summary(games)
                record.update(epoch_games=summary.pop("games"), **summary)
                if losses:
                    arr = np.array(losses)
                    record.update(loss=float(arr[:, 0].mean()), policy_loss=float(arr[:, 1].mean()),
                                  value_loss=float(arr[:, 2].mean()), policy_accuracy=float(arr[:, 3].mean()),
                                  gradient_steps=len(losses))
                record.update(epoch_seconds=seconds, moves_per_s=epoch_moves / max(seconds, 1e-9))
                epoch_moves = 0
                if cfg.test_games:
                    try:
                        record.update(play_test(cfg, fused, c["epoch"], device, stop=lambda: loop.stopping))
                    except StoppedInTestGames:  # Ctrl-C or SIGTERM in the test games: keep the epoch
                        record["test_stopped"] = True
                with warnings.catch_warnings():  # an epoch may end before the first gradient step
                    warnings.simplefilter("ignore", UserWarning)
                    sched.step()
                c["epoch"] += 1
                c["episodes_in_epoch"] = 0
                games, losses = [], []
                loop.log(record)
                loop.checkpoint()
        except KeyboardInterrupt:  # a second Ctrl-C: save the last completed state all the same
            loop.status = "interrupted"
    return loop.finish()


def config_from_dict(values: dict[str, Any]) -> LazyZeroConfig:
    """A LazyZeroConfig from a dict, naming unknown keys (used by tests and tools)."""
    known = {f.name for f in fields(LazyZeroConfig)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown lazyzero config key(s) {unknown}; valid: {sorted(known)}")
    return LazyZeroConfig(**values)


TRAINER = Trainer(
    "lazyzero",
    "LazyZero self-play (seed 001): PUCT root + policy rollouts, ResNet policy/value",
    LazyZeroConfig,
    run,
    PRESETS,
    preset_help=PRESET_HELP,
    resumable=tuple(f.name for f in fields(LazyZeroConfig) if f.name not in NETWORK_KEYS),
)
