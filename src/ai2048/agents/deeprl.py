"""Agents that play trained torch networks (``ai2048 train dqn|qnet|policy``) from their run
directories, and the move rules their trainers share with them.

Each picks the best *legal* move by its network's values; this module imports torch only when
an agent is built (the registry stores ``"module:attr"`` strings).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ai2048.agents.base import BaseAgent
from ai2048.agents.options import DEVICE, NET_THREADS, REQUIRED, SEED, WEB, WEIGHTS_RUN, agent_options, option
from ai2048.engine.board import exponents
from ai2048.engine.moves import all_moves
from ai2048.rules import ACTION_NAMES, Action

if TYPE_CHECKING:
    from ai2048.nets import SeedNet


def entropy_probabilities(q: np.ndarray, mask: np.ndarray, counts: np.ndarray, alpha: float) -> np.ndarray:
    """softmax over legal actions of Q(s,a)·β(a), β(a) = α·log(t(a)+1) (seed 000's ``entropy``).

    Non-finite logits fall back to uniform over the legal actions (the seed zeroed NaNs).
    """
    logits = np.asarray(q, dtype=np.float64) * alpha * np.log(counts + 1.0)
    p = np.zeros(4)
    z = logits[mask]
    if not np.all(np.isfinite(z)):
        p[mask] = 1.0 / mask.sum()
        return p
    z = np.exp(z - z.max())
    p[mask] = z / z.sum()
    return p


def centred_rewards(rewards: np.ndarray, legal: np.ndarray, scale: float) -> np.ndarray:
    """[N, 4] merge rewards -> mean-centred over the legal moves, scaled so the largest |r| is ``scale``.

    Illegal moves get 0; when every legal move earns the same, all get 0 (seed 003's Q-network).
    """
    r = rewards.astype(np.float64)
    n = np.maximum(legal.sum(axis=1, keepdims=True), 1)
    mean = (r * legal).sum(axis=1, keepdims=True) / n
    c = np.where(legal, r - mean, 0.0)
    span = np.abs(c).max(axis=1, keepdims=True)
    return np.where(span > 0, c / np.where(span > 0, span, 1.0) * scale, 0.0)


class _NetAgent(BaseAgent):
    kind = ""

    @agent_options
    def __init__(
        self,
        weights: str | Path = option(REQUIRED, WEIGHTS_RUN),
        device: str = option("cpu", DEVICE),
        threads: int = option(1, NET_THREADS),
    ) -> None:
        import torch

        if threads >= 1:  # 0 keeps torch's default
            torch.set_num_threads(threads)

        from ai2048.nets.files import load_model

        self._torch = torch
        self.net: SeedNet
        self.net, self.payload = load_model(weights, self.kind, device)
        self.device = next(self.net.parameters()).device
        self.config: dict[str, Any] = self.payload.get("config", {})

    def values(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[N] boards -> ([N, 4] move values, [N, 4] legal masks)."""
        raise NotImplementedError

    def _forward(self, x: Any) -> np.ndarray:
        with self._torch.no_grad():
            return self.net(x.to(self.device)).cpu().numpy().astype(np.float64)

    def act_batch(self, boards: np.ndarray) -> np.ndarray:
        b = np.asarray(boards, dtype=np.uint64).reshape(-1)
        v, legal = self.values(b)
        over = ~legal.any(axis=1)
        if over.any():
            raise ValueError(
                f"board {int(b[np.flatnonzero(over)[0]]):#x} has no legal move (the game is over)"
            )
        return np.where(legal, v, -np.inf).argmax(axis=1).astype(np.int64)

    def act(self, board: int) -> Action:
        return Action(int(self.act_batch(np.array([board], dtype=np.uint64))[0]))

    def explain(self, board: int) -> dict[str, float]:
        v, legal = self.values(np.array([board], dtype=np.uint64))
        return {ACTION_NAMES[a]: float(v[0, a]) for a in range(4) if legal[0, a]}


class DQNAgent(_NetAgent):
    """A DQN's moves: ``policy="greedy"`` plays the best legal Q; ``policy="entropy"`` samples as
    seed 000 did at test time, a ~ softmax over legal moves of Q(s,a)·α·log(t(a)+1), with the
    action counts t frozen at the end of training."""

    kind = "dqn"

    @agent_options
    def __init__(
        self,
        weights: str | Path = option(REQUIRED, WEIGHTS_RUN, help="the run directory written by `ai2048 train "
                                     "dqn`", source="seed 000 (IsacPasianotto/2048-DRL)"),
        device: str = option("cpu", DEVICE),
        threads: int = option(1, NET_THREADS),
        policy: str = option(
            "greedy", "'greedy' plays the best legal Q; 'entropy' samples softmax(Q·α·log(t+1)) over legal "
            "moves with the training's action counts t, as seed 000 tested", "choice",
            choices=("greedy", "entropy"), web=WEB,
            source="seed 000: kind_action='entropy' is stochastic at test time"),
        seed: int | None = option(None, SEED, help="seed of the 'entropy' policy's draws",
                                  source="this toolkit"),
    ) -> None:
        super().__init__(weights, device, threads)
        self.policy = policy
        self.counts = np.asarray(self.payload.get("explore_counts", [0.0] * 4), dtype=np.float64)
        self.alpha = float(self.config.get("alpha", 1.0))
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def values(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, _, legal = all_moves(boards)
        return self._forward(self.net.encode(exponents(boards))), legal

    def act_batch(self, boards: np.ndarray) -> np.ndarray:
        if self.policy == "greedy":
            return super().act_batch(boards)
        b = np.asarray(boards, dtype=np.uint64).reshape(-1)
        q, legal = self.values(b)
        if not legal.any(axis=1).all():
            raise ValueError("a board has no legal move (the game is over)")
        return np.array(
            [
                self.rng.choice(4, p=entropy_probabilities(q[i], legal[i], self.counts, self.alpha))
                for i in range(len(b))
            ],
            dtype=np.int64,
        )


class QNetAgent(_NetAgent):
    """Seed 003's Q-network: Q(s, a) (mode q) or r(a) + γ·V(after(s, a)) (mode v), best legal move."""

    kind = "qnet"

    def values(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        after, rew, legal = all_moves(boards)
        if self.config.get("mode", "q") == "q":
            return self._forward(self.net.encode(exponents(boards))), legal
        v = self._forward(self.net.encode(exponents(after.reshape(-1)))).reshape(-1, 4)
        r = centred_rewards(rew, legal, float(self.config.get("reward_scale", 50.0)))
        return r + float(self.config.get("gamma", 0.9)) * v, legal


class PolicyAgent(_NetAgent):
    """Seed 002's policy network: the most probable legal move."""

    kind = "policy"

    def values(self, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _, _, legal = all_moves(boards)
        return self._forward(self.net.encode(exponents(boards))), legal
