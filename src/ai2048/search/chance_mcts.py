"""Stochastic MCTS with chance nodes over after-states, as batched array programs.

Seed 001's author names what LazyZero lacks: a search that models 2048's chance. The tree
alternates decision nodes (a board before the move; children are the legal moves) and chance
nodes (the after-state a move leaves; children are the spawn outcomes, each with its exact
probability, in the order of the engine's ``spawn_outcomes``), as in Stochastic MuZero
(Antonoglou et al. 2022) and mctx's decision/chance split, but with the true game model instead
of a learned one.

One simulation = one network evaluation:

- decision node: ``a = argmax Q~(a) + c P(a) sqrt(N) / (1 + N(a))``, ``P`` = softmax of the
  policy head over legal moves, ``Q~`` = Q min-max normalised over the tree (MuZero), unvisited
  moves first (``Q~ = 1``);
- chance node: the outcome ``o`` maximising ``p(o) - N(o) / (1 + N)``, i.e. outcomes are visited
  in proportion to their probability without sampling noise;
- leaf: a new board is scored by the value head as ``m = exp(v)`` expected moves left (the net
  predicts log(moves left)); a finished game scores 0;
- backup: each move up the path adds one move, ``Q(s, a)`` = mean moves left after playing ``a``.

:func:`chance_mcts` searches ``B`` games at once. Every game's tree lives in preallocated arrays
(:class:`TreeArrays`); selection, expansion and backup are numba kernels over the whole batch,
and each simulation calls the network once on the ``B`` leaves. The arithmetic is the one of the
per-game reference :func:`chance_mcts_reference` (the first implementation, Python lists walked
in Python; kept as the test oracle and the benchmark's baseline), including its float32 priors,
so both give the same visit counts (tested).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from numba import njit

from ai2048.board_io import check_boards
from ai2048.engine import legal_bits, move, spawn_outcomes
from ai2048.engine.board import count_empty
from ai2048.engine.spawn import empty_cells, next_spawn
from ai2048.envs.torch_env import from_boards
from ai2048.nets.device import resolve_device
from ai2048.rules import P_TWO

Evaluator = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""[N, 1, 4, 4] states -> (policy logits [N, 4], value [N]); a network or a test double."""

MAX_OUTCOMES = 32
"""Spawn outcomes of one after-state: a 2 or a 4 in each of at most 16 empty cells."""


class TreeArrays:
    """``B`` search trees of at most ``N`` decision and ``M`` chance nodes, as flat arrays.

    Node 0 of every game is its root. A simulation adds at most one decision node and one chance
    node (a new chance node's outcomes are all unexplored, so the walk stops below it), so
    ``N = simulations + 1`` and ``M = max(simulations, 1)`` always suffice.
    """

    def __init__(self, batch: int, simulations: int) -> None:
        b, n, m = batch, simulations + 1, max(simulations, 1)
        self.d_board = np.zeros((b, n), np.uint64)  # [B, N] board of each decision node
        self.d_legal = np.zeros((b, n), np.int64)  # [B, N] legal-move bits
        self.d_expanded = np.zeros((b, n), np.bool_)  # [B, N] priors set (evaluated, not over)
        self.d_prior = np.zeros((b, n, 4), np.float32)  # [B, N, 4] policy priors (float32, as the net)
        self.d_n = np.zeros((b, n, 4), np.float64)  # [B, N, 4] visit counts per move
        self.d_w = np.zeros((b, n, 4), np.float64)  # [B, N, 4] sums of moves left per move
        self.d_child = np.full((b, n, 4), -1, np.int32)  # [B, N, 4] chance node of each move, -1 = none
        self.d_count = np.zeros(b, np.int32)  # [B] decision nodes in use
        self.c_len = np.zeros((b, m), np.int32)  # [B, M] spawn outcomes of each chance node
        self.c_board = np.zeros((b, m, MAX_OUTCOMES), np.uint64)  # [B, M, 32] outcome boards
        self.c_prob = np.zeros((b, m, MAX_OUTCOMES), np.float64)  # [B, M, 32] outcome probabilities
        self.c_n = np.zeros((b, m, MAX_OUTCOMES), np.float64)  # [B, M, 32] outcome visit counts
        self.c_child = np.full((b, m, MAX_OUTCOMES), -1, np.int32)  # [B, M, 32] decision node, -1 = none
        self.c_count = np.zeros(b, np.int32)  # [B] chance nodes in use
        self.q_min = np.full(b, np.inf)  # [B] smallest Q seen in each tree (MuZero normalisation)
        self.q_max = np.full(b, -np.inf)  # [B] largest Q seen
        self.path = np.zeros((b, n, 4), np.int32)  # [B, depth, (decision, action, chance, outcome)]
        self.path_len = np.zeros(b, np.int32)  # [B] steps of the current simulation's path
        self.leaf = np.zeros(b, np.int32)  # [B] decision node to evaluate this simulation
        self.leaf_board = np.zeros(b, np.uint64)  # [B] its board
        self.leaf_legal = np.zeros(b, np.int64)  # [B] its legal-move bits


@njit(cache=True)
def _init_roots(roots: np.ndarray, d_board: np.ndarray, d_legal: np.ndarray, d_count: np.ndarray,
                leaf: np.ndarray, leaf_board: np.ndarray, leaf_legal: np.ndarray) -> None:
    for g in range(roots.shape[0]):
        d_board[g, 0] = roots[g]
        d_legal[g, 0] = legal_bits(roots[g])
        d_count[g] = 1
        leaf[g] = 0
        leaf_board[g] = roots[g]
        leaf_legal[g] = d_legal[g, 0]


@njit(cache=True)
def _select(
    puct: np.float64,
    p_two: np.float64,
    d_board: np.ndarray,
    d_legal: np.ndarray,
    d_expanded: np.ndarray,
    d_prior: np.ndarray,
    d_n: np.ndarray,
    d_w: np.ndarray,
    d_child: np.ndarray,
    d_count: np.ndarray,
    c_len: np.ndarray,
    c_board: np.ndarray,
    c_prob: np.ndarray,
    c_n: np.ndarray,
    c_child: np.ndarray,
    c_count: np.ndarray,
    q_min: np.ndarray,
    q_max: np.ndarray,
    path: np.ndarray,
    path_len: np.ndarray,
    leaf: np.ndarray,
    leaf_board: np.ndarray,
    leaf_legal: np.ndarray,
) -> None:
    """Walk every game's tree from its root to the node to evaluate, creating nodes on the way."""
    c32 = np.float32(puct)
    for g in range(d_board.shape[0]):
        d = 0
        depth = 0
        span = q_max[g] - q_min[g]
        while d_expanded[g, d] and d_legal[g, d] != 0:
            nsum = d_n[g, d, 0] + d_n[g, d, 1] + d_n[g, d, 2] + d_n[g, d, 3]
            root32 = np.float32(math.sqrt(nsum + 1.0))
            best, a = -np.inf, -1
            for k in range(4):
                if (d_legal[g, d] >> k) & 1 == 0:
                    continue
                n = d_n[g, d, k]
                q = 1.0  # unvisited moves first
                if n > 0:
                    q = (d_w[g, d, k] / max(n, 1.0) - q_min[g]) / span if span > 0 else 0.5
                u = np.float32(c32 * d_prior[g, d, k]) * root32  # float32, as numpy computes it
                score = q + np.float64(u) / (1.0 + n)
                if score > best:
                    best, a = score, k
            c = d_child[g, d, a]
            if c < 0:  # a new chance node: the after-state's spawn outcomes, row-major, 2 before 4
                c = c_count[g]
                c_count[g] += 1
                after, _ = move(d_board[g, d], np.int64(a))
                e = count_empty(after)
                j = 0
                cells = empty_cells(after)
                while cells:
                    c_board[g, c, j], c_board[g, c, j + 1], cells = next_spawn(after, cells)
                    c_prob[g, c, j] = p_two / e
                    c_prob[g, c, j + 1] = (1.0 - p_two) / e
                    j += 2
                c_len[g, c] = j
                d_child[g, d, a] = c
            total = 0.0
            for j in range(c_len[g, c]):
                total += c_n[g, c, j]
            best, o = -np.inf, 0
            for j in range(c_len[g, c]):
                lag = c_prob[g, c, j] - c_n[g, c, j] / (1.0 + total)
                if lag > best:
                    best, o = lag, j
            path[g, depth, 0], path[g, depth, 1], path[g, depth, 2], path[g, depth, 3] = d, a, c, o
            depth += 1
            child = c_child[g, c, o]
            if child < 0:  # a new decision node: stop here and evaluate it
                child = d_count[g]
                d_count[g] += 1
                d_board[g, child] = c_board[g, c, o]
                d_legal[g, child] = legal_bits(c_board[g, c, o])
                c_child[g, c, o] = child
                d = child
                break
            d = child
        path_len[g] = depth
        leaf[g] = d
        leaf_board[g] = d_board[g, d]
        leaf_legal[g] = d_legal[g, d]


@njit(cache=True)
def _expand_backup(priors: np.ndarray, moves_left: np.ndarray, d_legal: np.ndarray, d_expanded: np.ndarray,
                   d_prior: np.ndarray, d_n: np.ndarray, d_w: np.ndarray, c_n: np.ndarray, q_min: np.ndarray,
                   q_max: np.ndarray, path: np.ndarray, path_len: np.ndarray, leaf: np.ndarray) -> None:
    """Set the evaluated leaves' priors and add each path's moves left (one more per step up)."""
    for g in range(leaf.shape[0]):
        d = leaf[g]
        m = 0.0
        if d_legal[g, d] != 0:
            for k in range(4):
                d_prior[g, d, k] = priors[g, k]
            d_expanded[g, d] = True
            m = moves_left[g]
        for i in range(path_len[g] - 1, -1, -1):
            pd, a, c, o = path[g, i, 0], path[g, i, 1], path[g, i, 2], path[g, i, 3]
            m += 1.0
            d_n[g, pd, a] += 1.0
            d_w[g, pd, a] += m
            c_n[g, c, o] += 1.0
            q = d_w[g, pd, a] / d_n[g, pd, a]
            q_min[g] = min(q_min[g], q)
            q_max[g] = max(q_max[g], q)


@njit(cache=True)
def legal_masks_from_bits(bits: np.ndarray) -> np.ndarray:
    """Legal-move bits [B] -> bool [B, 4]."""
    out = np.zeros((bits.shape[0], 4), np.bool_)
    for g in range(bits.shape[0]):
        for k in range(4):
            out[g, k] = (bits[g] >> k) & 1
    return out


def leaf_priors_and_values(
    logits: np.ndarray, values: np.ndarray, legal: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Softmax of float32 logits [B, 4] over legal moves, and ``exp(v)`` moves left [B] (float32 math).

    The reference's per-row numpy expressions applied to the whole batch; rows without a legal
    move (finished games) come out as garbage and are ignored by the backup.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        z = np.where(legal, logits, np.float32(-np.inf))
        p = np.exp(z - z.max(1, keepdims=True))
        p = p / p.sum(1, keepdims=True)
        m = np.exp(values).astype(np.float64)
    return p, m


def _network(evaluate: Evaluator, boards: np.ndarray, dev: torch.device) -> tuple[np.ndarray, np.ndarray]:
    logit_t, value_t = evaluate(from_boards(boards, dev))
    return logit_t.float().cpu().numpy(), value_t.float().cpu().numpy()


def chance_mcts(boards: np.ndarray, evaluate: Evaluator, *, simulations: int, puct: float = 1.25,
                p_two: float = P_TWO, device: str | torch.device = "cpu") -> np.ndarray:
    """Search every board: visit counts ``[B, 4]`` of the root moves after ``simulations`` each.

    All ``B`` trees grow together: per simulation one numba walk selects a leaf in every tree,
    the network scores the ``B`` leaves in one call, and one numba pass expands and backs up.
    """
    if isinstance(simulations, bool) or not isinstance(simulations, (int, np.integer)) or simulations < 1:
        raise ValueError(f"simulations must be an int >= 1, got {simulations!r}")
    boards = check_boards(boards)
    dev = resolve_device(device)
    t = TreeArrays(len(boards), int(simulations))
    _init_roots(boards, t.d_board, t.d_legal, t.d_count, t.leaf, t.leaf_board, t.leaf_legal)
    for sim in range(simulations + 1):
        if sim:
            _select(float(puct), float(p_two), t.d_board, t.d_legal, t.d_expanded, t.d_prior, t.d_n, t.d_w,
                    t.d_child, t.d_count, t.c_len, t.c_board, t.c_prob, t.c_n, t.c_child, t.c_count, t.q_min,
                    t.q_max, t.path, t.path_len, t.leaf, t.leaf_board, t.leaf_legal)
        logits, values = _network(evaluate, t.leaf_board, dev)
        priors, moves_left = leaf_priors_and_values(logits, values, legal_masks_from_bits(t.leaf_legal))
        _expand_backup(priors, moves_left, t.d_legal, t.d_expanded, t.d_prior, t.d_n, t.d_w, t.c_n, t.q_min,
                       t.q_max, t.path, t.path_len, t.leaf)
    return t.d_n[:, 0, :].copy()


# ---------------------------------------------------------------------------------------------
# The per-game reference: the first implementation, kept as the oracle of the batched search.


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
        logits, values = _network(evaluate, leaves, dev)
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
