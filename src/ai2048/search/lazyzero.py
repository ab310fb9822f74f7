"""LazyZero search (seed 001: lowrollr/turbozero ``core/algorithms/lazy_mcts.py``).

LazyZero grows no tree. For every game in a batch, at the root only: priors ``P`` = softmax of
the policy head over legal moves; visit counts ``N(a)`` and value sums ``W(a)`` start at 0. Each
rollout picks ``a = argmax Q(a) + c P(a) sqrt(sum N + 1) / (1 + N(a))`` with ``Q = W/N`` and
``Q = 1e8`` for unvisited legal moves (so each is tried once first), plus ``1e-6`` uniform noise
to break ties, all in float32 as the seed; plays it (spawn included), then samples ``depth - 1``
moves from the policy head, and scores the end position with the value head (0 if the game is
over). ``N(a) += 1``, ``W(a) += value``; the root is restored. The move played is sampled with
probability ``N^(1/T)`` (training) or the argmax of ``N`` (play, ``T = 0``, random ties). The
network's value predicts log(moves left in the game).

Two implementations of the same search:

- :func:`lazy_search` steps a :class:`~ai2048.envs.torch_env.TorchEnv2048` or ``EngineBatch``
  with torch ops and one shared ``torch.Generator`` (the training loop's, on any device);
- :func:`lazy_search_boards` keeps the boards as ``uint64`` arrays and does the selection,
  rollout sampling, spawns and backup in numba kernels with one SplitMix64 stream per game
  (:mod:`ai2048.search.streams`), so a game's search does not depend on the other games of its
  batch; the network is still called once per rollout step on the whole batch. The playing
  agents use it.

The random-rollout baseline (seed 001's ``random_rollout_lazy_mcts``) runs the same loop with
uniform priors, uniform rollout moves, and the leaf scored by log(1 + moves of a random playout):
:class:`RandomRolloutEvaluator` for :func:`lazy_search`, ``evaluate=None`` for
:func:`lazy_search_boards` (then no network is called at all).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
import torch
from numba import njit

from ai2048 import checks
from ai2048.engine import legal_bits, move, spawn
from ai2048.engine.batch import batch_random_play, batch_random_play_serial
from ai2048.engine.rng import rand_float
from ai2048.engine.spawn import random_play
from ai2048.envs.torch_env import EngineBatch, TorchEnv2048, from_boards, to_boards
from ai2048.rules import P_TWO
from ai2048.threads import ThreadPicker

Evaluator = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""[N, 1, 4, 4] states -> (policy logits [N, 4], value [N]); a network or a baseline."""

UNVISITED_Q = 1e8
"""Seed 001's ``very_positive_value``: unvisited legal root moves are tried first."""


def masked_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Softmax over legal moves only ([N, 4]); rows with no legal move come out uniform."""
    z = logits.masked_fill(~legal, -math.inf)
    none = ~legal.any(1, keepdim=True)
    z = torch.where(none, torch.zeros_like(z), z)
    return torch.softmax(z, dim=1)


class SearchStopped(Exception):
    """:func:`lazy_search` was asked to stop (its ``stop`` said True) and abandoned the search."""


def lazy_search(
    env: TorchEnv2048 | EngineBatch,
    evaluate: Evaluator,
    *,
    rollouts: int,
    depth: int,
    puct: float,
    generator: torch.Generator,
    stop: Callable[[], bool] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run LazyZero from every game's current position: (visit counts [N, 4], root value [N]).

    ``env`` is left at the root positions it started from. Costs ``rollouts * depth + 1``
    evaluations of the whole batch. ``stop`` is asked before every rollout: True abandons the search
    with :class:`SearchStopped` (env at its roots), so a trainer stops within one rollout, not one
    move (a move of the default settings on a CPU takes minutes).
    """
    rollouts, depth = checks.whole("rollouts", rollouts, 1), checks.whole("depth", depth, 1)
    n = env.num_envs
    dev = env.device
    root = env.save()
    legal = env.legal_actions()
    logits, root_value = evaluate(env.states)
    priors = masked_softmax(logits, legal)
    visits = torch.zeros(n, 4, device=dev)
    wsum = torch.zeros(n, 4, device=dev)
    rows = torch.arange(n, device=dev)
    for _ in range(rollouts):
        if stop is not None and stop():
            raise SearchStopped
        q = torch.where(visits > 0, wsum / visits.clamp(min=1), UNVISITED_Q)
        u = q + puct * priors * torch.sqrt(visits.sum(1, keepdim=True) + 1) / (1 + visits)
        u = u + 1e-6 * torch.rand(n, 4, generator=generator, device=dev)
        a = u.masked_fill(~legal, -math.inf).argmax(1)
        env.step(a)
        for _ in range(depth - 1):
            lg, _ = evaluate(env.states)
            p = masked_softmax(lg, env.legal_actions())
            env.step(torch.multinomial(p, 1, generator=generator).squeeze(1))
        _, v = evaluate(env.states)
        v = v.masked_fill(env.terminated, 0.0)
        visits[rows, a] += 1
        wsum[rows, a] += v
        env.load(root)
    visits = visits * legal
    return visits, root_value


def choose_actions(
    visits: torch.Tensor, legal: torch.Tensor, temperature: float, generator: torch.Generator
) -> torch.Tensor:
    """Moves from visit counts [N, 4]: sample ``N^(1/T)`` if ``T > 0``, else argmax with random ties."""
    if temperature > 0:
        w = visits.clamp(min=0) ** (1.0 / temperature)
        w = torch.where(w.sum(1, keepdim=True) > 0, w, legal.float() + (~legal.any(1, keepdim=True)).float())
        return torch.multinomial(w, 1, generator=generator).squeeze(1)
    noise = torch.rand(visits.shape, generator=generator, device=visits.device)
    return (visits + 1e-3 * noise).masked_fill(~legal, -math.inf).argmax(1)


class RandomRolloutEvaluator:
    """Seed 001's random-rollout baseline: uniform policy, value log(1 + moves of a random playout).

    ``parallel``: ``True`` / ``False`` play the playouts on numba's threads / on this thread;
    ``None`` times both and plays on the faster (:class:`ai2048.threads.ThreadPicker`). The
    playouts are the same either way."""

    def __init__(
        self, seed: int | None = None, p_two: float = P_TWO, *, parallel: bool | None = None
    ) -> None:
        self._rng = np.random.SeedSequence(seed)
        self.p_two = p_two
        self._picker = ThreadPicker(parallel)

    def __call__(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = states.shape[0]
        boards = to_boards(states)
        rng = self._rng.spawn(1)[0].generate_state(n, np.uint64)
        t = self._picker.threads(n)
        start = time.perf_counter_ns()
        _, _, moves = (batch_random_play if t else batch_random_play_serial)(boards, rng, self.p_two)
        self._picker.took(t, time.perf_counter_ns() - start, n)
        value = torch.log1p(torch.from_numpy(moves).float()).to(states.device)
        return torch.zeros(n, 4, device=states.device), value


# ---------------------------------------------------------------------------------------------
# The same search on uint64 boards with numba kernels and one random stream per game.


@njit(cache=True)
def _pick_and_play(
    roots: np.ndarray,
    legal: np.ndarray,
    priors: np.ndarray,
    visits: np.ndarray,
    wsum: np.ndarray,
    puct: np.float64,
    p_two: np.float64,
    states: np.ndarray,
    cur: np.ndarray,
    act: np.ndarray,
) -> None:
    """Each game's PUCT root move (float32 arithmetic, as the torch search), played with a spawn."""
    c32 = np.float32(puct)
    one = np.float32(1.0)
    for g in range(roots.shape[0]):
        st = states[g:g + 1]
        if legal[g] == 0:  # a finished game: nothing to search
            act[g] = -1
            cur[g] = roots[g]
            continue
        root32 = np.float32(math.sqrt(visits[g, 0] + visits[g, 1] + visits[g, 2] + visits[g, 3] + one))
        best = np.float32(-np.inf)
        a = 0
        for k in range(4):
            noise = np.float32(1e-6) * np.float32(rand_float(st))
            if (legal[g] >> k) & 1 == 0:
                continue
            n = visits[g, k]
            q = wsum[g, k] / n if n > 0 else np.float32(UNVISITED_Q)
            u = q + np.float32(c32 * priors[g, k]) * root32 / (one + n) + noise
            if u > best:
                best, a = u, k
        act[g] = a
        after, _ = move(roots[g], np.int64(a))
        cur[g] = spawn(after, st, p_two)


@njit(cache=True)
def _sample_and_play(cur: np.ndarray, logits: np.ndarray, p_two: np.float64, states: np.ndarray) -> None:
    """One rollout move per unfinished game, sampled from the softmax of its legal logits, with a spawn."""
    p = np.zeros(4)
    for g in range(cur.shape[0]):
        bits = legal_bits(cur[g])
        if bits == 0:
            continue
        st = states[g:g + 1]
        top = -np.inf
        for k in range(4):
            if (bits >> k) & 1 and logits[g, k] > top:
                top = logits[g, k]
        total = 0.0
        for k in range(4):
            p[k] = math.exp(logits[g, k] - top) if (bits >> k) & 1 else 0.0
            total += p[k]
        r = rand_float(st) * total
        a = -1
        for k in range(4):
            if p[k] > 0.0:
                a = k
                r -= p[k]
                if r < 0.0:
                    break
        after, _ = move(cur[g], np.int64(a))
        cur[g] = spawn(after, st, p_two)


@njit(cache=True)
def _random_values(cur: np.ndarray, p_two: np.float64, states: np.ndarray, out: np.ndarray) -> None:
    """log(1 + moves of a uniformly random playout) from each board (the baseline's leaf value)."""
    for g in range(cur.shape[0]):
        _, _, m = random_play(cur[g], states[g:g + 1], p_two)
        out[g] = np.float32(math.log1p(m))


@njit(cache=True)
def _backup(
    cur: np.ndarray, act: np.ndarray, values: np.ndarray, visits: np.ndarray, wsum: np.ndarray
) -> None:
    for g in range(cur.shape[0]):
        a = act[g]
        if a < 0:
            continue
        v = values[g] if legal_bits(cur[g]) != 0 else np.float32(0.0)
        visits[g, a] += np.float32(1.0)
        wsum[g, a] += v


@njit(cache=True)
def batch_legal_bits(boards: np.ndarray) -> np.ndarray:
    """Legal-move bits of every board, int64 [B]."""
    out = np.empty(boards.shape[0], np.int64)
    for g in range(boards.shape[0]):
        out[g] = legal_bits(boards[g])
    return out


@njit(cache=True)
def choose_moves(
    visits: np.ndarray, legal: np.ndarray, temperature: np.float64, states: np.ndarray
) -> np.ndarray:
    """Moves from visit counts [B, 4] with each game's own stream: sample ``N^(1/T)`` if ``T > 0``
    (uniform over legal moves when no move was visited), else the most visited (``1e-3`` noise breaks ties).
    -1 where no move is legal."""
    out = np.full(visits.shape[0], -1, np.int64)
    w = np.zeros(4)
    for g in range(visits.shape[0]):
        st = states[g:g + 1]
        if legal[g] == 0:
            continue
        if temperature > 0:
            total = 0.0
            for k in range(4):
                w[k] = max(visits[g, k], 0.0) ** (1.0 / temperature) if (legal[g] >> k) & 1 else 0.0
                total += w[k]
            if total <= 0.0:
                for k in range(4):
                    w[k] = 1.0 if (legal[g] >> k) & 1 else 0.0
                    total += w[k]
            r = rand_float(st) * total
            for k in range(4):
                if w[k] > 0.0:
                    out[g] = k
                    r -= w[k]
                    if r < 0.0:
                        break
        else:
            best = -np.inf
            for k in range(4):
                s = visits[g, k] + 1e-3 * rand_float(st)
                if (legal[g] >> k) & 1 and s > best:
                    best, out[g] = s, k
    return out


def root_priors(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """float32 softmax of logits [B, 4] over the legal moves (bits [B]); uniform where none is legal."""
    mask = ((legal[:, None] >> np.arange(4)) & 1).astype(bool)
    mask[~mask.any(1)] = True
    z = np.where(mask, logits.astype(np.float32), np.float32(-np.inf))
    p = np.exp(z - z.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)).astype(np.float32)


def lazy_search_boards(boards: np.ndarray, evaluate: Evaluator | None, states: np.ndarray, *, rollouts: int,
                       depth: int, puct: float, p_two: float = P_TWO,
                       device: str | torch.device = "cpu") -> np.ndarray:
    """LazyZero from every board of ``boards`` (uint64 [B]): visit counts float32 [B, 4] (0 on illegal moves).

    ``states`` (uint64 [B]) are the games' SplitMix64 streams, advanced in place. ``evaluate``
    None is the random-rollout baseline. Costs ``rollouts * depth + 1`` network calls on the
    batch (``rollouts * (depth - 1)`` with the baseline's random playouts at the leaves).
    """
    rollouts, depth = checks.whole("rollouts", rollouts, 1), checks.whole("depth", depth, 1)
    if states.dtype != np.uint64 or states.shape != boards.shape:
        raise ValueError(
            f"states must be uint64 with the boards' shape {boards.shape}, got {states.dtype} {states.shape}"
        )
    b = len(boards)
    legal = batch_legal_bits(boards)

    def net(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert evaluate is not None
        lg, v = evaluate(from_boards(x, device))
        return lg.float().cpu().numpy(), v.float().cpu().numpy()

    zeros = np.zeros((b, 4), np.float32)
    priors = root_priors(net(boards)[0] if evaluate is not None else zeros, legal)
    visits = np.zeros((b, 4), np.float32)
    wsum = np.zeros((b, 4), np.float32)
    cur = np.zeros(b, np.uint64)
    act = np.zeros(b, np.int64)
    values = np.zeros(b, np.float32)
    for _ in range(rollouts):
        _pick_and_play(boards, legal, priors, visits, wsum, float(puct), float(p_two), states, cur, act)
        for _ in range(depth - 1):
            _sample_and_play(cur, net(cur)[0] if evaluate is not None else zeros, float(p_two), states)
        if evaluate is None:
            _random_values(cur, float(p_two), states, values)
        else:
            values = net(cur)[1]
        _backup(cur, act, values, visits, wsum)
    return visits
