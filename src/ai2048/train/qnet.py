"""Seed 003's deep Q-learner (CS541 "Solving the game of 2048 with AI", section V), one readable loop.

The 16-128-32-8 LeakyReLU(0.001) network with Dropout(0.125), RMSprop and MSE; the reward of a
move is the value of its merges, but all four moves are simulated and their rewards mean-centred
and scaled to [−50, 50] (over the legal moves); prioritised experience replay (Schaul et al. 2016);
and "if the best move does not change the board, take the next best".

The seed's layer table ends in one output while its text needs four, so both readings run:
``mode="q"``: Q(s, ·) over the four moves, target r + γ·max_a' Q'(s', a');
``mode="v"``: V of after-states, a move scored r(a) + V(after(s, a)), target
max_a' [r(s', a') + γ·V'(after(s', a'))] (after-state learning as in Szubert & Jaśkowski 2014).
Exploration (unspecified by the seed) is ε-greedy with a linear decay. Optionally (``validate_every``)
the network that plays best on held-out validation games is the one saved for play (early stopping).
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai2048.agents.deeprl import centred_rewards
from ai2048.checkpoint import append_jsonl
from ai2048.checks import check_fields, setting
from ai2048.engine.board import exponents
from ai2048.engine.moves import all_moves
from ai2048.nets import SeedNet, build_net
from ai2048.train import Trainer
from ai2048.train.config import TorchRunConfig
from ai2048.train.games import BoardBatch
from ai2048.train.replay import PrioritizedReplay, ReplayMemory
from ai2048.train.run import Counters, Loop, RunDir
from ai2048.train.torchrun import (
    CHECKPOINT_FORMAT,
    VALIDATION_SEED,
    RngState,
    TorchCheckpoint,
    Weights,
    flushed_denormals,
    greedy_mean_score,
    save_model,
    start_torch,
)


@dataclass(frozen=True)
class QNetConfig(TorchRunConfig):
    """Every setting of a seed 003 Q-network run."""

    checkpoint_every: int = setting(100, "checkpoint every this many finished games", lo=1)

    mode: str = setting(
        "q",
        "q: Q over the 4 moves (the text); v: value of after-states (the layer table's 1 output)",
        choices=("q", "v"),
    )
    episodes: int = setting(2000, "training games to finish", lo=1)
    num_envs: int = setting(16, "games played side by side on the numba kernels", lo=1)
    replay_ratio: float = setting(0.25, "gradient steps per collected transition", lo=0)
    hidden: tuple[int, ...] = setting((128, 32, 8), "hidden layer widths (seed: 128, 32, 8)")
    slope: float = setting(0.001, "LeakyReLU negative slope (seed: 0.001)", lo=0)
    dropout: float = setting(0.125, "dropout after the first layer (seed: 0.125)", lo=0, hi=1)
    lr: float = setting(1e-3, "RMSprop learning rate", lo=0, lo_open=True)
    rms_alpha: float = setting(0.9, "RMSprop smoothing ρ (the seed's '0.9')", lo=0, hi=1)
    gamma: float = setting(0.9, "discount factor", lo=0, hi=1)
    batch_size: int = setting(256, "transitions per gradient step", lo=1)
    replay_size: int = setting(50_000, "replay capacity (transitions)", lo=1)
    learn_start: int = setting(0, "transitions stored before learning (0 = one batch)", lo=0)
    prioritized: bool = setting(True, "prioritised replay (proportional); False = uniform")
    per_alpha: float = setting(0.6, "priority exponent α", lo=0)
    per_beta: float = setting(0.4, "importance-sampling exponent β at the start, annealed to 1", lo=0, hi=1)
    per_beta_episodes: int = setting(
        2000,
        "episodes over which β anneals to 1 (fixed, so a run resumed with more episodes anneals as "
        "an uninterrupted one)",
        lo=1,
    )
    reward_scale: float = setting(50.0, "the four moves' rewards are mean-centred and scaled to ±this",
                                  lo=0, lo_open=True)
    eps_start: float = setting(1.0, "ε-greedy: ε at the start", lo=0, hi=1)
    eps_end: float = setting(0.05, "ε-greedy: final ε", lo=0, hi=1)
    eps_steps: int = setting(100_000, "ε decays linearly over this many transitions", lo=1)
    target_sync: int = setting(500, "copy the online net into the target net every this many gradient steps",
                               lo=1)
    validate_every: int = setting(
        0,
        "every this many training games, play validate_games greedy games on held-out "
        "seeds; model.pt keeps the best network (0 = off: model.pt is the last network)",
        lo=0,
    )
    validate_games: int = setting(200, "games per validation (the same fixed held-out set each time)", lo=1)

    def __post_init__(self) -> None:
        if isinstance(self.hidden, list):
            object.__setattr__(self, "hidden", tuple(self.hidden))
        check_fields(self)
        widths_ok = all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in self.hidden)
        if not self.hidden or not widths_ok:
            raise ValueError(f"hidden={self.hidden!r} must be one or more positive layer widths")

    def net_spec(self) -> dict[str, Any]:
        return {
            "name": "seed003",
            "outputs": 4 if self.mode == "q" else 1,
            "hidden": list(self.hidden),
            "slope": self.slope,
            "dropout": self.dropout,
        }


PRESETS: dict[str, dict[str, Any]] = {
    "seed003_q": {"mode": "q"},
    "seed003_v": {"mode": "v"},
    # seed003_q for 38 minutes on one core, keeping the network whose greedy play scores best on 200
    # held-out validation games, checked every 500 training games (docs/deeprl.md).
    "best_cpu_q": {
        "mode": "q",
        "episodes": 1_000_000,
        "per_beta_episodes": 1_000_000,
        "duration": 2280.0,
        "validate_every": 500,
        "validate_games": 200,
        "checkpoint_every": 1000,
    },
}

PRESET_HELP: dict[str, str] = {
    "seed003_q": "seed 003's Q-network: four outputs Q(s, a) for the four moves",
    "seed003_v": "seed 003's network read as an after-state value V(after(s, a)), one output",
    "best_cpu_q": (
        "seed003_q for 38 min on one core, keeping the network best on 200 validation games "
        "(its result: docs/deeprl.md)"
    ),
}


def first_legal_by_rank(scores: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Seed 003's rule: take the best-scored move; if it does not change the board, the next best, and
    so on."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ok = np.take_along_axis(legal, order, axis=1)
    return order[np.arange(len(order)), ok.argmax(axis=1)]


def _scores(
    net: SeedNet,
    mode: str,
    boards: np.ndarray,
    after: np.ndarray,
    r: np.ndarray,
    gamma: float,
    device: torch.device,
) -> np.ndarray:
    """[N, 4] move scores: Q(s, a) in mode q; r(a) + γ·V(after(s, a)) in mode v (no grad)."""
    with torch.no_grad():
        if mode == "q":
            return net(net.encode(exponents(boards)).to(device)).cpu().numpy()
        v = net(net.encode(exponents(after.reshape(-1))).to(device)).cpu().numpy().reshape(-1, 4)
    return r + gamma * v


def td_targets(
    cfg: QNetConfig, online: SeedNet, target: SeedNet, batch: dict[str, np.ndarray], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """(prediction, target) for a replay batch in either mode."""
    alive = torch.from_numpy(~batch["term"]).to(device).float()
    x = online.encode(exponents(batch["s"])).to(device)
    online.train()
    if cfg.mode == "q":
        pred = online(x).gather(1, torch.from_numpy(batch["a"]).to(device).view(-1, 1)).squeeze(1)
        with torch.no_grad():
            q2 = target(target.encode(exponents(batch["s2"])).to(device))
            q2 = q2.masked_fill(~torch.from_numpy(batch["m2"]).to(device), -torch.inf).max(1).values
            q2 = torch.where(torch.isfinite(q2), q2, torch.zeros_like(q2))
            y = torch.from_numpy(batch["r"]).to(device) + cfg.gamma * alive * q2
        return pred, y
    pred = online(x).squeeze(1)
    after, rew, legal = all_moves(batch["s2"])
    r2 = centred_rewards(rew, legal, cfg.reward_scale)
    best = _scores(target, "v", batch["s2"], after, r2, cfg.gamma, device)
    best = np.where(legal, best, -np.inf).max(axis=1)
    best = np.where(np.isfinite(best), best, 0.0).astype(np.float32)
    return pred, torch.from_numpy(best).to(device) * alive


def validate(
    cfg: QNetConfig, online: SeedNet, device: torch.device, best: dict[str, Any], episode: int, out: Path
) -> float:
    """Greedy mean score of ``online`` on the held-out validation games; keep its weights in ``best``
    when it beats them.

    Appends ``{"episode", "score", "best"}`` to ``validation.jsonl``. Model selection on held-out
    games, as in early stopping; the evaluation's games are never seen.
    """

    def values(boards: np.ndarray) -> np.ndarray:
        after, rew, legal = all_moves(boards)
        r = centred_rewards(rew, legal, cfg.reward_scale)
        return _scores(online, cfg.mode, boards, after, r, cfg.gamma, device)

    online.eval()
    score = greedy_mean_score(values, cfg.validate_games, cfg.seed + VALIDATION_SEED)
    if best["score"] is None or score > best["score"]:
        state = {k: v.detach().cpu().clone() for k, v in online.state_dict().items()}
        best.update(score=score, episode=episode, state=state)
    append_jsonl(out / "validation.jsonl", {"episode": episode, "score": score, "best": best["score"]})
    return score


def run(config: QNetConfig, out: Path, resume: bool = False, opened: RunDir | None = None) -> Path:
    """Train seed 003's Q-network into run directory ``out`` (resumable); returns ``out``."""
    out, cfg = Path(out), config
    resumed, device, gen = start_torch(out, cfg, TRAINER, resume, opened)
    spec = cfg.net_spec()
    online = build_net(spec).to(device)
    target: SeedNet = copy.deepcopy(online).eval()
    optimizer = torch.optim.RMSprop(online.parameters(), lr=cfg.lr, alpha=cfg.rms_alpha, foreach=True)
    memory: ReplayMemory
    if cfg.prioritized:
        memory = PrioritizedReplay(cfg.replay_size, cfg.per_alpha)
    else:
        memory = ReplayMemory(cfg.replay_size)
    games = BoardBatch(cfg.num_envs, cfg.seed)
    n = cfg.num_envs
    acc = Counters(actions=np.zeros((n, 4), dtype=np.int64), loss=np.zeros((n, 2)), eps=np.zeros(n))
    c = Counters(episodes=0, env_steps=0, grad_steps=0, credit=0.0, elapsed=0.0, validated=0)
    best = Counters(score=None, episode=0, state=None)  # the network best on the validation games

    def model() -> None:  # model.pt: the best validated network, or the last one
        played = online
        if best["state"] is not None:
            played = build_net(spec)
            played.load_state_dict(best["state"])
        validation = {k: best[k] for k in ("score", "episode")}
        save_model(out, "qnet", spec, played, {"config": dataclasses.asdict(cfg), "validation": validation})

    loop = Loop(
        out, cfg, TRAINER, resumed, total=cfg.episodes, counters=c, step="episodes",
        progress=("env_steps", "grad_steps"), files=model,
        info=lambda: {"net": spec, "validation": {k: best[k] for k in ("score", "episode")}},
        checkpoint=TorchCheckpoint({"format": CHECKPOINT_FORMAT, "trainer": "qnet", "net": spec}),
        logs={"validation.jsonl": "episode"},
    )
    loop.track(
        online=Weights(online, spec, str(out / "checkpoint.pt")), target=target, optimizer=optimizer,
        replay=memory, games=games, episode_acc=acc, counters=c, rng=RngState(gen), best=best,
        optional=("best",),  # checkpoints written before validation existed
    )
    learn_start = max(cfg.learn_start, cfg.batch_size)
    recent: list[int] = []
    with loop, flushed_denormals():
        while loop.running():
            boards = games.boards.copy()
            after, rew, legal = all_moves(boards)
            r = centred_rewards(rew, legal, cfg.reward_scale)
            online.eval()
            scores = _scores(online, cfg.mode, boards, after, r, cfg.gamma, device)
            actions = first_legal_by_rank(scores, legal)
            decay = max(0.0, 1.0 - c["env_steps"] / cfg.eps_steps)
            eps = cfg.eps_end + (cfg.eps_start - cfg.eps_end) * decay
            for j in np.flatnonzero(gen.random(n) < eps):
                actions[j] = int(gen.choice(np.flatnonzero(legal[j])))
            st = games.step(actions)
            rows = np.arange(n)
            for i in range(n):
                a = int(actions[i])
                if cfg.mode == "q":  # (s, a, centred r(a)) -> s'
                    s, reward = int(boards[i]), float(r[i, a])
                else:  # the after-state of a, no reward: its target is the next move's r + γ·V
                    s, reward = int(after[i, a]), 0.0
                memory.push(s, a, reward, int(st.boards[i]), bool(st.terminal[i]), cfg.gamma, st.masks[i])
            acc["actions"][rows, actions] += 1
            acc["eps"] += eps
            c["env_steps"] += n
            # no gradient steps are owed before learning starts (seed 000: one a move)
            if len(memory) >= learn_start:
                c["credit"] += n * cfg.replay_ratio
            while len(memory) >= learn_start and c["credit"] >= 1.0:
                c["credit"] -= 1.0
                idx = memory.sample(gen, cfg.batch_size)
                pred, y = td_targets(cfg, online, target, memory.batch(idx), device)
                err = pred - y
                if isinstance(memory, PrioritizedReplay):
                    anneal = min(1.0, c["episodes"] / cfg.per_beta_episodes)
                    beta = cfg.per_beta + (1.0 - cfg.per_beta) * anneal
                    w = torch.from_numpy(memory.weights(idx, beta)).to(device)
                    loss = (w * err**2).mean()
                    memory.update(idx, err.detach().cpu().numpy())
                else:
                    loss = (err**2).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                c["grad_steps"] += 1
                if c["grad_steps"] % cfg.target_sync == 0:
                    target.load_state_dict(online.state_dict())
                acc["loss"] += np.array([loss.item(), 1.0])
            for i, game in zip(np.flatnonzero(st.done).tolist(), games.restart(st.done), strict=True):
                c["episodes"] += 1
                recent = (recent + [game["score"]])[-100:]
                loss_i = acc["loss"][i]
                loop.log({
                    "episode": c["episodes"],
                    **game,
                    "loss": float(loss_i[0] / loss_i[1]) if loss_i[1] else None,
                    "epsilon": float(acc["eps"][i] / max(game["length"], 1)),
                    "actions": acc["actions"][i].tolist(),
                    "env_steps": c["env_steps"],
                    "grad_steps": c["grad_steps"],
                })
                acc["actions"][i], acc["loss"][i], acc["eps"][i] = 0, 0, 0
                loop.bar.update(1)
            if cfg.validate_every and c["episodes"] - c["validated"] >= cfg.validate_every:
                c["validated"] = c["episodes"]
                validate(cfg, online, device, best, int(c["episodes"]), out)
            if recent:
                loop.bar.set_postfix(mean100=f"{np.mean(recent):.0f}", eps=f"{eps:.2f}", refresh=False)
            loop.checkpoint()
    return loop.finish()

TRAINER = Trainer(
    "qnet",
    "Seed 003's 16-128-32-8 Q-network: RMSprop, MSE, centred rewards, prioritised replay (torch)",
    QNetConfig,
    run,
    PRESETS,
    preset_help=PRESET_HELP,
    resumable=(*TorchRunConfig.RESUMABLE, "episodes"),
)
