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
per-game reference in ``tests/_chance_mcts_reference.py`` (the first implementation, Python lists
walked in Python; the test oracle and the baseline of ``benchmarks/bench_selfplay.py``), including
its float32 priors, so both give the same visit counts (tested).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from numba import njit

from ai2048 import checks
from ai2048.board_io import check_boards
from ai2048.engine import legal_bits, move
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


def network_outputs(
    evaluate: Evaluator, boards: np.ndarray, dev: torch.device
) -> tuple[np.ndarray, np.ndarray]:
    """``evaluate`` on boards ``[B]`` as numpy: (policy logits ``[B, 4]``, values ``[B]``), float32."""
    logit_t, value_t = evaluate(from_boards(boards, dev))
    return logit_t.float().cpu().numpy(), value_t.float().cpu().numpy()


def chance_mcts(boards: np.ndarray, evaluate: Evaluator, *, simulations: int, puct: float = 1.25,
                p_two: float = P_TWO, device: str | torch.device = "cpu") -> np.ndarray:
    """Search every board: visit counts ``[B, 4]`` of the root moves after ``simulations`` each.

    All ``B`` trees grow together: per simulation one numba walk selects a leaf in every tree,
    the network scores the ``B`` leaves in one call, and one numba pass expands and backs up.
    """
    simulations = checks.whole("simulations", simulations, 1)
    boards = check_boards(boards)
    dev = resolve_device(device)
    t = TreeArrays(len(boards), int(simulations))
    _init_roots(boards, t.d_board, t.d_legal, t.d_count, t.leaf, t.leaf_board, t.leaf_legal)
    for sim in range(simulations + 1):
        if sim:
            _select(float(puct), float(p_two), t.d_board, t.d_legal, t.d_expanded, t.d_prior, t.d_n, t.d_w,
                    t.d_child, t.d_count, t.c_len, t.c_board, t.c_prob, t.c_n, t.c_child, t.c_count, t.q_min,
                    t.q_max, t.path, t.path_len, t.leaf, t.leaf_board, t.leaf_legal)
        logits, values = network_outputs(evaluate, t.leaf_board, dev)
        priors, moves_left = leaf_priors_and_values(logits, values, legal_masks_from_bits(t.leaf_legal))
        _expand_backup(priors, moves_left, t.d_legal, t.d_expanded, t.d_prior, t.d_n, t.d_w, t.c_n, t.q_min,
                       t.q_max, t.path, t.path_len, t.leaf)
    return t.d_n[:, 0, :].copy()
