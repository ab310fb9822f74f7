"""DQN for 2048 (seed 000: Pasianotto & Paglierani 2023), one readable loop.

Replay memory, target network with a soft update θ' ← (1 − τ)θ' + τθ after every gradient step,
Huber loss plus a real L2 term λ/2·Σ‖W‖² (the seed stored λ but never applied it; its hooks
added λ·W to the Linear gradients, which this term reproduces), AdamW(amsgrad), gradient
clipping by value, legal-action masking, and the seed's three exploration rules. Options a user
would expect: double DQN (van Hasselt 2016), n-step returns, many games collected side by side
on the numba kernels, and learning under the board's 8 symmetries (``augment``).

Reward: the merged tiles' log2 ("log2", seed 000) or values ("score"), or nothing but the win
bonus ("win"); plus the seed's progressive bonus #512 + 2.5·#1024 + 6·#2048 (tiles on the board
after the step), minus a per-move penalty. Presets ``shaping1`` … ``shaping5`` are the seed's
numbered shapings; ``seed000`` is the configuration of its saved 10,000-episode agent.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ai2048.agents.deeprl import entropy_probabilities
from ai2048.checks import check_fields, setting
from ai2048.engine.board import exponents, flip, mirror, transpose
from ai2048.nets import SeedNet, build_net
from ai2048.train import Trainer
from ai2048.train.config import TorchRunConfig
from ai2048.train.games import BoardBatch
from ai2048.train.replay import NStep, ReplayMemory
from ai2048.train.run import Counters, Loop, RunDir
from ai2048.train.torchrun import (
    CHECKPOINT_FORMAT,
    RngState,
    TorchCheckpoint,
    Weights,
    flushed_denormals,
    save_model,
    soft_update,
    start_torch,
)

EXPLORATIONS = ("entropy", "lai_robbins", "torch_version", "greedy")
REWARDS = ("log2", "score", "win")
DQN_NETS = ("bigconv", "conv", "fc", "small_qnet", "dqn_3ls_128", "dqn_4ls_256_bn", "dqn_5ls_bn")
BONUS_EXPONENTS = (9, 10, 11)  # 512, 1024, 2048


@dataclass(frozen=True)
class DQNConfig(TorchRunConfig):
    """Every setting of a DQN run; defaults are ai2048's recommended CPU settings."""

    checkpoint_every: int = setting(100, "save a checkpoint every this many finished games", lo=1)
    episodes: int = setting(3000, "training games to finish", lo=1)
    num_envs: int = setting(16, "games played side by side on the numba kernels (seed 000: 1)", lo=1)
    replay_ratio: float = setting(0.125, "gradient steps per collected transition (seed 000: 1)", lo=0)
    net: str = setting(
        "bigconv",
        "Q-network: bigconv (seed's baseline), conv, fc; the seed's early fc variants small_qnet, "
        "dqn_3ls_128, dqn_4ls_256_bn, dqn_5ls_bn (fc_neurons sets small_qnet's and dqn_5ls_bn's width)",
        choices=DQN_NETS,
    )
    planes: int = setting(16, "one-hot planes (12 as in seed 000 drops tiles >= 4096)", lo=2, hi=16)
    out_channels: int = setting(0, "Conv3d channels (0 = the net's default: conv 3, bigconv 4)", lo=0)
    n_fc: int = setting(128, "width of the conv nets' fully connected layers", lo=1)
    fc_layers: int = setting(3, "fc net: number of Linear layers", lo=1)
    fc_neurons: int = setting(128, "fc net: hidden width", lo=1)
    fc_output_relu: bool = setting(True, "fc net: ReLU after the output layer, as the seed (Q >= 0)")
    batch_size: int = setting(256, "transitions per gradient step", lo=1)
    gamma: float = setting(0.99, "discount factor", lo=0, hi=1)
    lr: float = setting(1e-3, "AdamW (amsgrad) learning rate", lo=0, lo_open=True)
    lr_end: float = setting(
        0.0,
        "learning rate after lr_decay_steps (linear decay from lr; used only with lr_decay_steps > 0)",
        lo=0,
    )
    lr_decay_steps: int = setting(
        0,
        "collected transitions over which lr decays linearly to lr_end (0 = constant lr)",
        lo=0,
    )
    tau: float = setting(5e-3, "soft target update rate, applied after every gradient step", lo=0,
                         hi=1, lo_open=True)
    replay_size: int = setting(100_000, "replay memory capacity (transitions)", lo=1)
    learn_start: int = setting(0, "transitions stored before learning starts (0 = one batch, as the seed)",
                               lo=0)
    l2_reg: float = setting(
        3e-4,
        "λ of the L2 term λ/2·Σ‖W‖² over the Linear weights (seed's saved agent: 3e-4)",
        lo=0,
    )
    grad_clip: float = setting(100.0, "clip every gradient component to ±this (seed: 100; 0 = off)", lo=0)
    exploration: str = setting("entropy", "entropy, lai_robbins, torch_version (seed 000's rules) or greedy",
                               choices=EXPLORATIONS)
    eps_start: float = setting(0.8, "torch_version: ε at step 0", lo=0, hi=1)
    eps_end: float = setting(0.02, "torch_version: asymptotic ε", lo=0, hi=1)
    eps_decay: float = setting(1000.0, "torch_version: ε decays as exp(−steps/eps_decay)", lo=0)
    eta: float = setting(0.8, "lai_robbins: ε = η / (1 + ν·t(a*))", lo=0)
    nu: float = setting(0.01, "lai_robbins: ν", lo=0)
    alpha: float = setting(1.0, "entropy: β(a) = α·log(t(a) + 1); a ~ softmax over legal a of Q(s,a)·β(a)",
                           lo=0)
    reward: str = setting(
        "log2",
        "log2 (merged exponents, seed 000), score (merged values) or win (0 per move)",
        choices=REWARDS,
    )
    tile_bonus: tuple[float, float, float] = setting(
        (1.0, 2.5, 6.0),
        "per-step bonus per 512, 1024, 2048 tile on the board (seed's progressive shaping); 0,0,0 = off",
    )
    move_penalty: float = setting(0.0, "subtracted from every move's reward (seed's shaping 5: 1.5)", lo=0)
    goal_tile: int = setting(0, "end the game at this tile (seed 000: 2048); 0 = play to the end", lo=0)
    win_bonus: float = setting(
        11.0,
        "added when the goal tile is reached (seed env: 11 in log2 mode, 2048 in score mode)",
        lo=0,
    )
    goal_terminal: bool = setting(
        True,
        "treat reaching the goal tile as terminal (the seed stored it as non-terminal)",
    )
    mask_next: bool = setting(
        True,
        "max over legal actions only in the target (the seed took the max over all 4)",
    )
    double_dqn: bool = setting(True, "double DQN target: argmax by the online net, value by the target net")
    n_step: int = setting(3, "n-step returns (1 = the seed's one-step target)", lo=1)
    augment: bool = setting(
        False,
        "learn each sampled transition under a random one of the "
        "board's 8 symmetries (move and legal moves relabelled)",
    )

    def __post_init__(self) -> None:
        if isinstance(self.tile_bonus, list):
            object.__setattr__(self, "tile_bonus", tuple(self.tile_bonus))
        check_fields(self)
        if len(self.tile_bonus) != 3:
            raise ValueError(f"tile_bonus={self.tile_bonus!r} needs three weights (512, 1024, 2048)")
        if self.goal_tile and (self.goal_tile < 4 or self.goal_tile & (self.goal_tile - 1)):
            raise ValueError(f"goal_tile={self.goal_tile} must be a power of two >= 4, or 0 for none")
        if self.exploration == "torch_version" and self.eps_decay <= 0:
            raise ValueError("eps_decay must be > 0 for torch_version exploration")

    def net_spec(self) -> dict[str, Any]:
        """The network spec stored in checkpoints."""
        if self.net == "fc":
            return {
                "name": "fc",
                "planes": self.planes,
                "n_layers": self.fc_layers,
                "n_neurons": self.fc_neurons,
                "output_relu": self.fc_output_relu,
            }
        if self.net in ("small_qnet", "dqn_5ls_bn"):
            return {"name": self.net, "planes": self.planes, "n_neurons": self.fc_neurons}
        if self.net in ("dqn_3ls_128", "dqn_4ls_256_bn"):
            return {"name": self.net, "planes": self.planes}
        spec: dict[str, Any] = {"name": self.net, "planes": self.planes, "n_fc": self.n_fc}
        if self.out_channels:
            spec["out_channels"] = self.out_channels
        return spec


_SEED000: dict[str, Any] = {
    "episodes": 10_000,
    "num_envs": 1,
    "replay_ratio": 1.0,
    "net": "bigconv",
    "planes": 12,
    "batch_size": 384,
    "gamma": 0.995,
    "lr": 1e-3,
    "tau": 5e-3,
    "replay_size": 10_000,
    "l2_reg": 3e-4,
    "grad_clip": 100.0,
    "exploration": "entropy",
    "eps_start": 0.8,
    "eps_end": 0.02,
    "eps_decay": 1000.0,
    "alpha": 1.0,
    "reward": "log2",
    "tile_bonus": (1.0, 2.5, 6.0),
    "move_penalty": 0.0,
    "goal_tile": 2048,
    "win_bonus": 11.0,
    "goal_terminal": False,
    "mask_next": False,
    "double_dqn": False,
    "n_step": 1,
    "checkpoint_every": 50,
}

# ai2048's best DQN on one CPU core for 55 minutes (docs/deeprl.md): seed 000's saved-agent settings with
# its fc_QNet (16 planes, 256 wide, linear output), learning under the 8 board symmetries, a masked
# target, 16 games at once with one gradient step per 16 transitions, a 50,000-transition memory,
# play to the end, and the step size annealed 1e-3 -> 5e-5 over the ~6 M transitions of the budget.
_BEST_CPU: dict[str, Any] = {
    **_SEED000,
    "episodes": 1_000_000,
    "duration": 3300.0,
    "num_envs": 16,
    "replay_ratio": 0.0625,
    "net": "fc",
    "planes": 16,
    "fc_neurons": 256,
    "fc_output_relu": False,
    "mask_next": True,
    "augment": True,
    "replay_size": 50_000,
    "goal_tile": 0,
    "lr_end": 5e-5,
    "lr_decay_steps": 5_500_000,
    "checkpoint_every": 1000,
}

PRESETS: dict[str, dict[str, Any]] = {
    "seed000": _SEED000,
    "best_cpu": _BEST_CPU,
    # The seed's numbered reward shapings (text numbering; its code always added the bonus).
    "shaping1": {**_SEED000, "reward": "win", "tile_bonus": (0.0, 0.0, 0.0), "win_bonus": 1.0},
    "shaping2": {**_SEED000, "reward": "score", "tile_bonus": (0.0, 0.0, 0.0), "win_bonus": 2048.0},
    "shaping3": {**_SEED000, "reward": "log2", "tile_bonus": (0.0, 0.0, 0.0)},
    "shaping4": dict(_SEED000),
    "shaping5": {**_SEED000, "move_penalty": 1.5},
    # The seed's 300-episode exploration comparison.
    "explore_entropy": {**_SEED000, "episodes": 300, "exploration": "entropy"},
    "explore_lai_robbins": {**_SEED000, "episodes": 300, "exploration": "lai_robbins"},
    "explore_torch_version": {**_SEED000, "episodes": 300, "exploration": "torch_version"},
    # ConvDQN_Agent's defaults as the seed's code has them, and as its text's table gives them.
    "seed000_code_defaults": {
        **_SEED000, "net": "conv", "batch_size": 128, "gamma": 0.9995, "eps_start": 0.7, "eps_end": 0.02,
        "eps_decay": 1000.0, "tau": 5e-5, "lr": 1e-3, "l2_reg": 1e-3, "exploration": "torch_version",
        "reward": "score", "win_bonus": 2048.0,
    },
    "seed000_text_defaults": {
        **_SEED000, "net": "conv", "batch_size": 128, "gamma": 0.99, "eps_start": 1.0, "eps_end": 0.01,
        "eps_decay": 2000.0, "tau": 1e-3, "lr": 1e-3, "l2_reg": 1e-3, "exploration": "lai_robbins",
        "reward": "score", "win_bonus": 2048.0, "checkpoint_every": 10,
    },
}

PRESET_HELP: dict[str, str] = {
    "seed000": (
        "seed 000's saved 10,000-episode agent: bigconv net, 12 planes, entropy exploration, "
        "log2 reward + tile bonus"
    ),
    "best_cpu": "ai2048's best DQN on one core in 55 min: fc net, 8 symmetries, masked target, lr annealed",
    "shaping1": "seed 000 shaping (1): reward only for winning (+1 at 2048)",
    "shaping2": "seed 000 shaping (2): merged tile values, +2048 on a win",
    "shaping3": "seed 000 shaping (3): log2 of merged tiles, no tile bonus",
    "shaping4": "seed 000 shaping (4, its best): log2 reward + bonus #512 + 2.5·#1024 + 6·#2048",
    "shaping5": "seed 000 shaping (5): shaping 4 minus 1.5 a move",
    "explore_entropy": "seed 000's 300-episode exploration test: entropy-weighted softmax over Q",
    "explore_lai_robbins": (
        "seed 000's 300-episode exploration test: ε = η / (1 + ν·t(a*)) (Lai & Robbins)"
    ),
    "explore_torch_version": (
        "seed 000's 300-episode exploration test: ε decaying exponentially (PyTorch tutorial)"
    ),
    "seed000_code_defaults": (
        "ConvDQN_Agent's code defaults: conv net, γ 0.9995, ε 0.7→0.02 (torch_version), τ 5e-5, batch 128"
    ),
    "seed000_text_defaults": (
        "ConvDQN_Agent as seed 000's text lists it: γ 0.99, ε 1.0→0.01, τ 1e-3, lai_robbins, batch 128"
    ),
}


def learning_rate(cfg: DQNConfig, env_steps: int) -> float:
    """lr decayed linearly to ``lr_end`` over ``lr_decay_steps`` transitions, then held (constant when 0).

    Annealing the step size steadies the final network, which is what greedy play is judged on
    (Mnih et al. 2015 annealed ε instead; linear step-size decay is the usual SGD schedule).
    """
    if cfg.lr_decay_steps <= 0:
        return cfg.lr
    frac = min(1.0, env_steps / cfg.lr_decay_steps)
    return cfg.lr + (cfg.lr_end - cfg.lr) * frac


class Explorer:
    """Seed 000's ``select_action`` rules over a batch, applied game by game in order.

    ``counts`` is t(a), the seed's ``steps_per_action``; ``steps`` its ``steps_done``.
    - lai_robbins: a* = argmax over legal Q; t(a*) += 1; ε = η/(1 + ν·t(a*)); with probability ε a
      uniform legal action is played instead (t still credits a*, as in the seed).
    - torch_version: ε = ε_end + (ε_start − ε_end)·exp(−steps/decay); steps += 1; random legal
      action with probability ε; t(chosen) += 1.
    - entropy: β(a) = α·log(t(a) + 1); a ~ softmax over legal a of Q(s,a)·β(a); t(a) += 1
      (uniform at the start, when β = 0).
    - greedy: argmax over legal Q.
    Returns the actions and, per game, ε (for entropy: 1 − probability of the greedy action).
    """

    def __init__(self, cfg: DQNConfig, gen: np.random.Generator) -> None:
        self.cfg, self.gen = cfg, gen
        self.counts = np.zeros(4, dtype=np.float64)
        self.steps = 0

    def epsilon(self) -> float:
        """torch_version's current ε."""
        c = self.cfg
        return c.eps_end + (c.eps_start - c.eps_end) * math.exp(-self.steps / c.eps_decay)

    def select(self, q: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[N, 4] Q values and legal masks -> ([N] actions, [N] ε)."""
        n = q.shape[0]
        actions = np.empty(n, dtype=np.int64)
        eps = np.zeros(n, dtype=np.float64)
        kind, gen = self.cfg.exploration, self.gen
        for i in range(n):
            legal = np.flatnonzero(masks[i])
            greedy = int(legal[np.argmax(q[i, legal])])
            if kind == "greedy":
                actions[i] = greedy
            elif kind == "lai_robbins":
                self.counts[greedy] += 1
                self.steps += 1
                eps[i] = self.cfg.eta / (1.0 + self.cfg.nu * self.counts[greedy])
                actions[i] = gen.choice(legal) if gen.random() <= eps[i] else greedy
            elif kind == "torch_version":
                eps[i] = self.epsilon()
                self.steps += 1
                actions[i] = gen.choice(legal) if gen.random() <= eps[i] else greedy
                self.counts[actions[i]] += 1
            else:
                p = entropy_probabilities(q[i], masks[i], self.counts, self.cfg.alpha)
                self.steps += 1
                actions[i] = gen.choice(4, p=p)
                eps[i] = 1.0 - p[greedy]
                self.counts[actions[i]] += 1
        return actions, eps

    def state_dict(self) -> dict[str, Any]:
        return {"counts": self.counts.copy(), "steps": self.steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.counts = np.asarray(state["counts"], dtype=np.float64).copy()
        self.steps = int(state["steps"])


def shaped_rewards(
    cfg: DQNConfig, rewards: np.ndarray, log_rewards: np.ndarray, after_exps: np.ndarray, won: np.ndarray
) -> np.ndarray:
    """The training reward of each game's step: base + tile bonus − penalty + win bonus.

    ``after_exps`` [N, 16] are the boards after the step (with the spawned tile), as the seed counts.
    """
    by_kind = {"log2": log_rewards, "score": rewards, "win": np.zeros_like(rewards)}
    base = by_kind[cfg.reward].astype(np.float64)
    weights = zip(cfg.tile_bonus, BONUS_EXPONENTS, strict=True)
    bonus = sum(w * (after_exps == e).sum(axis=1) for w, e in weights)
    return base + bonus - cfg.move_penalty + cfg.win_bonus * won


# The board symmetries as (uint64 map, relabelling of the moves UP, RIGHT, DOWN, LEFT); each is its
# own inverse.
SYMMETRIES = (
    (flip.py_func, np.array([2, 1, 0, 3])),  # row order reversed: UP <-> DOWN
    (mirror.py_func, np.array([0, 3, 2, 1])),  # every row reversed: RIGHT <-> LEFT
    (transpose.py_func, np.array([3, 2, 1, 0])),  # (r, c) <-> (c, r): UP <-> LEFT, RIGHT <-> DOWN
)


def symmetric_batch(batch: dict[str, np.ndarray], which: np.ndarray) -> dict[str, np.ndarray]:
    """Transition i under board symmetry ``which[i]`` in 0..7 (bit 0: flip, bit 1: mirror, bit 2:
    transpose, applied in that order).

    The 8 combinations are the dihedral group of the square. s and s' are mapped, the move a is
    relabelled so that ``move(g(s), g(a)) = g(move(s, a))``, and legal(s') [B, 4] follows its moves;
    r, discount and terminal flags are unchanged (2048's rules and score are symmetric).
    """
    out = dict(batch)
    s, s2, a, m2 = batch["s"].copy(), batch["s2"].copy(), batch["a"].copy(), batch["m2"].copy()
    for bit, (board_map, moves) in enumerate(SYMMETRIES):
        sel = ((which >> bit) & 1).astype(bool)
        s[sel], s2[sel], a[sel] = board_map(s[sel]), board_map(s2[sel]), moves[a[sel]]
        m2[sel] = m2[sel][:, moves]  # new mask at moves[a] = old mask at a (moves is an involution)
    out.update(s=s, s2=s2, a=a, m2=m2)
    return out


def td_loss(
    cfg: DQNConfig, policy: SeedNet, target: SeedNet, batch: dict[str, np.ndarray], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """(Huber TD loss + λ/2·Σ‖W‖², Huber part alone) on a replay batch."""
    x = policy.encode(exponents(batch["s"])).to(device)
    x2 = policy.encode(exponents(batch["s2"])).to(device)
    a = torch.from_numpy(batch["a"]).to(device).view(-1, 1)
    r = torch.from_numpy(batch["r"]).to(device)
    disc = torch.from_numpy(batch["disc"]).to(device)
    alive = torch.from_numpy(~batch["term"]).to(device).float()
    m2 = torch.from_numpy(batch["m2"]).to(device)
    policy.train()
    q = policy(x).gather(1, a).squeeze(1)
    with torch.no_grad():
        qt = target(x2)
        if cfg.double_dqn:
            policy.eval()
            qo = policy(x2)
            policy.train()
            if cfg.mask_next:
                qo = qo.masked_fill(~m2, -torch.inf)
            q2 = qt.gather(1, qo.argmax(1, keepdim=True)).squeeze(1)
        else:
            q2 = (qt.masked_fill(~m2, -torch.inf) if cfg.mask_next else qt).max(1).values
        q2 = torch.where(torch.isfinite(q2), q2, torch.zeros_like(q2))
        y = r + disc * alive * q2
    huber = F.smooth_l1_loss(q, y)
    l2 = sum((w**2).sum() for w in policy.l2_weights())
    return huber + 0.5 * cfg.l2_reg * l2, huber


def run(config: DQNConfig, out: Path, resume: bool = False, opened: RunDir | None = None) -> Path:
    """Train a DQN into run directory ``out`` (resumable); returns ``out``."""
    out, cfg = Path(out), config
    resumed, device, gen = start_torch(out, cfg, TRAINER, resume, opened)
    spec = cfg.net_spec()
    policy = build_net(spec).to(device)
    target: SeedNet = copy.deepcopy(policy).eval()
    optimizer = torch.optim.AdamW(policy.parameters(), lr=cfg.lr, amsgrad=True, foreach=True)
    memory = ReplayMemory(cfg.replay_size)
    nstep = NStep(cfg.num_envs, cfg.n_step, cfg.gamma)
    games = BoardBatch(
        cfg.num_envs, cfg.seed, goal_tile=cfg.goal_tile or None, goal_terminal=cfg.goal_terminal
    )
    explorer = Explorer(cfg, gen)
    n = cfg.num_envs
    acc = Counters(  # per game in flight: reward, moves per action, (loss sum, count), (ε sum, count)
        reward=np.zeros(n), actions=np.zeros((n, 4), dtype=np.int64), loss=np.zeros((n, 2)),
        eps=np.zeros((n, 2)),
    )
    c = Counters(episodes=0, env_steps=0, grad_steps=0, credit=0.0, elapsed=0.0)

    def model() -> None:  # model.pt: what the dqn agent loads
        extra = {"config": dataclasses.asdict(cfg), "explore_counts": explorer.counts.tolist()}
        save_model(out, "dqn", spec, policy, extra)

    loop = Loop(
        out, cfg, TRAINER, resumed, total=cfg.episodes, counters=c, step="episodes",
        progress=("env_steps", "grad_steps"), files=model, info=lambda: {"net": spec},
        checkpoint=TorchCheckpoint({"format": CHECKPOINT_FORMAT, "trainer": "dqn", "net": spec}),
    )
    loop.track(
        policy=Weights(policy, spec, str(out / "checkpoint.pt")), target=target, optimizer=optimizer,
        replay=memory, nstep=nstep, games=games, explorer=explorer, counters=c, rng=RngState(gen),
        episode_acc=acc,
    )
    learn_start = max(cfg.learn_start, cfg.batch_size)
    recent: list[int] = []
    with loop, flushed_denormals():
        while loop.running():
            prev = games.boards.copy()
            with torch.no_grad():
                policy.eval()
                q = policy(policy.encode(games.exponents()).to(device)).cpu().numpy()
            actions, eps = explorer.select(q, games.masks)
            st = games.step(actions)
            after = exponents(st.boards)
            won = st.max_exp >= games.goal_exp
            r = shaped_rewards(cfg, st.rewards, st.log_rewards, after, won)
            for i in range(n):
                ready = nstep.push(
                    i, int(prev[i]), int(actions[i]), float(r[i]), int(st.boards[i]),
                    bool(st.terminal[i]), bool(st.done[i]), st.masks[i],
                )
                for tr in ready:
                    memory.push(*tr)
            acc["reward"] += r
            acc["actions"][np.arange(n), actions] += 1
            acc["eps"] += np.stack([eps, np.ones_like(eps)], axis=1)
            c["env_steps"] += n
            # no gradient steps are owed before learning starts (seed 000: one a move)
            if len(memory) >= learn_start:
                c["credit"] += n * cfg.replay_ratio
            while len(memory) >= learn_start and c["credit"] >= 1.0:
                c["credit"] -= 1.0
                batch = memory.batch(memory.sample(gen, cfg.batch_size))
                if cfg.augment:
                    batch = symmetric_batch(batch, gen.integers(0, 8, size=cfg.batch_size))
                loss, huber = td_loss(cfg, policy, target, batch, device)
                for group in optimizer.param_groups:
                    group["lr"] = learning_rate(cfg, int(c["env_steps"]))
                optimizer.zero_grad()
                loss.backward()
                if cfg.grad_clip > 0:
                    torch.nn.utils.clip_grad_value_(policy.parameters(), cfg.grad_clip)
                optimizer.step()
                soft_update(target, policy, cfg.tau)
                c["grad_steps"] += 1
                acc["loss"] += np.array([loss.item(), 1.0])
            for i, game in zip(np.flatnonzero(st.done).tolist(), games.restart(st.done), strict=True):
                c["episodes"] += 1
                recent = (recent + [game["score"]])[-100:]
                ep_loss, ep_eps = acc["loss"][i], acc["eps"][i]
                loop.log({
                    "episode": c["episodes"],
                    **game,
                    "reward": float(acc["reward"][i]),
                    "loss": float(ep_loss[0] / ep_loss[1]) if ep_loss[1] else None,
                    "epsilon": float(ep_eps[0] / max(ep_eps[1], 1)),
                    "actions": acc["actions"][i].tolist(),
                    "env_steps": c["env_steps"],
                    "grad_steps": c["grad_steps"],
                })
                for k in ("reward", "actions", "loss", "eps"):
                    acc[k][i] = 0
                loop.bar.update(1)
            if recent:
                loop.bar.set_postfix(mean100=f"{np.mean(recent):.0f}", steps=c["env_steps"], refresh=False)
            loop.checkpoint()
    return loop.finish()

TRAINER = Trainer(
    "dqn",
    "DQN with replay, soft target updates and seed 000's exploration rules (torch)",
    DQNConfig,
    run,
    PRESETS,
    preset_help=PRESET_HELP,
    resumable=(*TorchRunConfig.RESUMABLE, "episodes"),
)
