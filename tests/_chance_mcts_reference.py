"""The per-game chance MCTS, Python lists walked in Python: the oracle of the batched search.

The first implementation of :func:`ai2048.search.chance_mcts.chance_mcts`, kept beside the tests
(it is never used at run time): ``tests/test_lazyzero_batched.py`` checks that both give the same
visit counts, and ``benchmarks/bench_selfplay.py`` measures the batched search against it.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ai2048.engine import legal_bits, move, spawn_outcomes
from ai2048.nets.device import resolve_device
from ai2048.rules import P_TWO
from ai2048.search.chance_mcts import Evaluator, network_outputs


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


def chance_mcts_reference(boards: np.ndarray, evaluate: Evaluator, *, simulations: int, puct: float = 1.25,
                          p_two: float = P_TWO, device: str | torch.device = "cpu") -> np.ndarray:
    """The per-game chance MCTS (Python lists walked in Python): visit counts ``[B, 4]``.

    Same contract and results as :func:`chance_mcts`; kept as its test oracle and as the
    "before" figure of ``benchmarks/bench_selfplay.py``.
    """
    if simulations < 1:
        raise ValueError(f"simulations must be >= 1, got {simulations}")
    trees = [_Tree(int(b), p_two) for b in boards]
    dev = resolve_device(device)
    for sim in range(simulations + 1):
        picks = [t.select(puct) if sim else ([], 0) for t in trees]
        leaves = np.array(
            [t.d_board[leaf] for t, (_, leaf) in zip(trees, picks, strict=True)], dtype=np.uint64
        )
        logits, values = network_outputs(evaluate, leaves, dev)
        for i, (t, (path, leaf)) in enumerate(zip(trees, picks, strict=True)):
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
