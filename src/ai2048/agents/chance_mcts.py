"""Stochastic MCTS with chance nodes over after-states, driven by a LazyZero network.

Seed 001's author names what LazyZero lacks: a search that models 2048's chance. Here the tree
alternates decision nodes (a board before the move; children are the legal moves) and chance
nodes (the after-state a move leaves; children are the spawn outcomes from the engine's
``spawn_outcomes``, each with its exact probability), as in Stochastic MuZero (Antonoglou et
al. 2022) and mctx's decision/chance split, but with the true game model instead of a learned one.

One simulation = one network evaluation:

- decision node: ``a = argmax Q~(a) + c P(a) sqrt(N) / (1 + N(a))``, ``P`` = softmax of the
  policy head over legal moves, ``Q~`` = Q min-max normalised over the tree (MuZero), unvisited
  moves first (``Q~ = 1``);
- chance node: the outcome ``o`` maximising ``p(o) - N(o) / (1 + N)``, i.e. outcomes are visited
  in proportion to their probability without sampling noise;
- leaf: a new board is scored by the value head as ``m = exp(v)`` expected moves left (the net
  predicts log(moves left)); a finished game scores 0;
- backup: each move up the path adds one move, ``Q(s, a)`` = mean moves left after playing ``a``.

Games in a batch are searched together: every simulation evaluates all their leaves in one batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from ai2048.agents.base import BaseAgent
from ai2048.board_io import check_board, check_boards
from ai2048.engine import legal_bits, move, spawn_outcomes
from ai2048.envs.torch_env import from_boards, resolve_device
from ai2048.rules import ACTION_NAMES, P_TWO, Action

Evaluator = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


class _Tree:
    """One game's search tree as flat lists (decision nodes ``d_*``, chance nodes ``c_*``)."""

    def __init__(self, root: int, p_two: float) -> None:
        self.p_two = p_two
        self.d_board: list[int] = []
        self.d_legal: list[np.ndarray] = []
        self.d_prior: list[np.ndarray] = []
        self.d_n: list[np.ndarray] = []
        self.d_w: list[np.ndarray] = []
        self.d_child: list[list[int]] = []
        self.c_board: list[int] = []
        self.c_outcomes: list[np.ndarray] = []
        self.c_probs: list[np.ndarray] = []
        self.c_n: list[np.ndarray] = []
        self.c_child: list[np.ndarray] = []
        self.q_min, self.q_max = math.inf, -math.inf
        self.expanded: list[bool] = []
        self.new_decision(root)

    def new_decision(self, board: int) -> int:
        bits = int(legal_bits(np.uint64(board)))
        self.d_board.append(board)
        self.d_legal.append(np.array([(bits >> a) & 1 for a in range(4)], dtype=bool))
        self.d_prior.append(np.full(4, 0.25))
        self.d_n.append(np.zeros(4))
        self.d_w.append(np.zeros(4))
        self.d_child.append([-1, -1, -1, -1])
        self.expanded.append(False)
        return len(self.d_board) - 1

    def new_chance(self, after: int) -> int:
        boards, probs = spawn_outcomes(np.uint64(after), np.float64(self.p_two))
        self.c_board.append(after)
        self.c_outcomes.append(boards)
        self.c_probs.append(probs)
        self.c_n.append(np.zeros(len(probs)))
        self.c_child.append(np.full(len(probs), -1, dtype=np.int64))
        return len(self.c_board) - 1

    def select(self, puct: float) -> tuple[list[tuple[int, int, int, int]], int]:
        """Walk from the root to a node to evaluate: (path of (decision, action, chance, outcome), leaf)."""
        path: list[tuple[int, int, int, int]] = []
        d = 0
        while self.expanded[d] and self.d_legal[d].any():
            n, w, legal = self.d_n[d], self.d_w[d], self.d_legal[d]
            span = self.q_max - self.q_min
            q = np.where(n > 0, (w / np.maximum(n, 1) - self.q_min) / span if span > 0 else 0.5, 1.0)
            score = q + puct * self.d_prior[d] * math.sqrt(n.sum() + 1) / (1 + n)
            a = int(np.argmax(np.where(legal, score, -np.inf)))
            c = self.d_child[d][a]
            if c < 0:
                after, _ = move(np.uint64(self.d_board[d]), np.int64(a))
                c = self.new_chance(int(after))
                self.d_child[d][a] = c
            cn = self.c_n[c]
            o = int(np.argmax(self.c_probs[c] - cn / (1 + cn.sum())))
            path.append((d, a, c, o))
            child = int(self.c_child[c][o])
            if child < 0:
                child = self.new_decision(int(self.c_outcomes[c][o]))
                self.c_child[c][o] = child
                return path, child
            d = child
        return path, d

    def backup(self, path: list[tuple[int, int, int, int]], moves_left: float) -> None:
        m = moves_left
        for d, a, c, o in reversed(path):
            m += 1.0
            self.d_n[d][a] += 1
            self.d_w[d][a] += m
            self.c_n[c][o] += 1
            q = self.d_w[d][a] / self.d_n[d][a]
            self.q_min, self.q_max = min(self.q_min, q), max(self.q_max, q)


def chance_mcts(boards: np.ndarray, evaluate: Evaluator, *, simulations: int, puct: float = 1.25,
                p_two: float = P_TWO, device: str | torch.device = "cpu") -> np.ndarray:
    """Search every board: visit counts ``[N, 4]`` of the root moves after ``simulations`` each."""
    if simulations < 1:
        raise ValueError(f"simulations must be >= 1, got {simulations}")
    trees = [_Tree(int(b), p_two) for b in boards]
    dev = resolve_device(device)
    for sim in range(simulations + 1):
        picks = [t.select(puct) if sim else ([], 0) for t in trees]
        leaves = np.array([t.d_board[leaf] for t, (_, leaf) in zip(trees, picks, strict=False)], dtype=np.uint64)
        logit_t, value_t = evaluate(from_boards(leaves, dev))
        logits, values = logit_t.float().cpu().numpy(), value_t.float().cpu().numpy()
        for i, (t, (path, leaf)) in enumerate(zip(trees, picks, strict=False)):
            legal = t.d_legal[leaf]
            if legal.any():
                z = np.where(legal, logits[i], -np.inf)
                p = np.exp(z - z.max())
                t.d_prior[leaf] = p / p.sum()
                t.expanded[leaf] = True
                m = float(np.exp(values[i]))
            else:
                m = 0.0
            if path:
                t.backup(path, m)
    return np.stack([t.d_n[0] for t in trees])


class ChanceMCTSAgent(BaseAgent):
    """Plays the most visited move of :func:`chance_mcts` with a LazyZero network."""

    name = "lazyzero-chance"

    def __init__(self, evaluate: Evaluator, *, simulations: int, puct: float, device: str, seed: int | None) -> None:
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations must be a positive int, got {simulations!r}")
        if puct < 0:
            raise ValueError(f"puct must be >= 0, got {puct}")
        self.evaluate, self.simulations, self.puct = evaluate, simulations, float(puct)
        self.device = resolve_device(device)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def _visits(self, boards: np.ndarray) -> np.ndarray:
        return chance_mcts(boards, self.evaluate, simulations=self.simulations, puct=self.puct, device=self.device)

    def act_batch(self, boards: np.ndarray) -> np.ndarray:
        """[N] uint64 boards -> [N] int64 moves (most visits, random ties), all searched together."""
        boards = check_boards(boards)
        visits = self._visits(boards)
        legal = np.array([[(int(legal_bits(b)) >> a) & 1 for a in range(4)] for b in boards], dtype=bool)
        if not legal.any(1).all():
            raise ValueError("act_batch got a board with no legal move (the game is over)")
        noisy = np.where(legal, visits + 1e-3 * self.rng.random(visits.shape), -np.inf)
        return noisy.argmax(1).astype(np.int64)

    def act(self, board: int) -> Action:
        return Action(int(self.act_batch(np.array([check_board(board)], dtype=np.uint64))[0]))

    def explain(self, board: int) -> dict[str, float]:
        """Share of the root visits per legal move."""
        b = check_board(board)
        visits = self._visits(np.array([b], dtype=np.uint64))[0]
        bits = int(legal_bits(b))
        total = float(visits.sum()) or 1.0
        return {ACTION_NAMES[a]: float(visits[a]) / total for a in range(4) if (bits >> a) & 1}


def make_chance_mcts(weights: str, simulations: int = 200, puct: float = 1.25, device: str = "cpu",
                     seed: int | None = None) -> ChanceMCTSAgent:
    """Chance-node MCTS with the network of LazyZero run directory ``weights``."""
    if weights is None:
        raise ValueError("lazyzero-chance needs weights=RUN_DIR (a directory written by `ai2048 train lazyzero`)")
    from ai2048.agents.lazyzero import load_network
    from ai2048.nets.resnet import FusedPolicyValue

    model, _ = load_network(weights, device)
    return ChanceMCTSAgent(FusedPolicyValue(model), simulations=simulations, puct=puct, device=device, seed=seed)
