"""Replay memories on uint64 boards (tiny to store and checkpoint; encoded only when sampled). No torch."""

from __future__ import annotations

from typing import Any

import numpy as np


class ReplayMemory:
    """Ring buffer of transitions ``(s, a, r, s', terminal, discount, legal(s'))``.

    ``discount`` is γ^k for a k-step return (γ for one step); ``terminal`` zeroes the bootstrap.
    Uniform sampling as in seed 000's ``ReplayMemory``.
    """

    FIELDS: tuple[str, ...] = ("s", "a", "r", "s2", "term", "disc", "m2")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"replay capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.s = np.zeros(capacity, dtype=np.uint64)
        self.a = np.zeros(capacity, dtype=np.int64)
        self.r = np.zeros(capacity, dtype=np.float32)
        self.s2 = np.zeros(capacity, dtype=np.uint64)
        self.term = np.zeros(capacity, dtype=np.bool_)
        self.disc = np.zeros(capacity, dtype=np.float32)
        self.m2 = np.zeros((capacity, 4), dtype=np.bool_)
        self.pos = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def push(self, s: int, a: int, r: float, s2: int, term: bool, disc: float, m2: np.ndarray) -> int:
        """Store one transition; returns its slot."""
        i = self.pos
        self.s[i], self.a[i], self.r[i], self.s2[i], self.term[i], self.disc[i] = s, a, r, s2, term, disc
        self.m2[i] = m2
        self.pos = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        return i

    def sample(self, gen: np.random.Generator, batch: int) -> np.ndarray:
        """``batch`` slot indices drawn uniformly (with replacement)."""
        return gen.integers(0, self.size, size=batch)

    def batch(self, idx: np.ndarray) -> dict[str, np.ndarray]:
        return {k: getattr(self, k)[idx] for k in self.FIELDS}

    def state_dict(self) -> dict[str, Any]:
        arrays = {k: getattr(self, k)[: self.size].copy() for k in self.FIELDS}
        return {"pos": self.pos, "size": self.size, **arrays}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["size"] > self.capacity:
            raise ValueError(
                f"checkpoint replay holds {state['size']} transitions, capacity is {self.capacity}"
            )
        self.pos, self.size = int(state["pos"]), int(state["size"])
        for k in self.FIELDS:
            getattr(self, k)[: self.size] = state[k]


class PrioritizedReplay(ReplayMemory):
    """Proportional prioritised replay (Schaul et al. 2016): P(i) ∝ p_i^α, weights (N·P(i))^−β / max.

    New transitions get the largest priority seen so far, so each is replayed at least once soon.
    """

    FIELDS = (*ReplayMemory.FIELDS, "prio")

    def __init__(self, capacity: int, alpha: float = 0.6, eps: float = 1e-3) -> None:
        super().__init__(capacity)
        self.alpha, self.eps = alpha, eps
        self.prio = np.zeros(capacity, dtype=np.float64)
        self.max_prio = 1.0

    def push(self, s: int, a: int, r: float, s2: int, term: bool, disc: float, m2: np.ndarray) -> int:
        i = super().push(s, a, r, s2, term, disc, m2)
        self.prio[i] = self.max_prio
        return i

    def probabilities(self) -> np.ndarray:
        p = self.prio[: self.size] ** self.alpha
        return p / p.sum()

    def sample(self, gen: np.random.Generator, batch: int) -> np.ndarray:
        cdf = np.cumsum(self.prio[: self.size] ** self.alpha)
        u = gen.random(batch) * cdf[-1]
        return np.minimum(np.searchsorted(cdf, u, side="right"), self.size - 1)

    def weights(self, idx: np.ndarray, beta: float) -> np.ndarray:
        """Importance-sampling weights (N·P(i))^−β, normalised by their maximum."""
        p = self.probabilities()
        w = (self.size * p[idx]) ** (-beta)
        return (w / w.max()).astype(np.float32)

    def update(self, idx: np.ndarray, td_error: np.ndarray) -> None:
        """Set priorities to |δ| + ε."""
        pr = np.abs(td_error) + self.eps
        self.prio[idx] = pr
        self.max_prio = max(self.max_prio, float(pr.max()))

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "max_prio": self.max_prio}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.max_prio = float(state["max_prio"])


class NStep:
    """Per-game queues that turn 1-step transitions into n-step ones (Sutton & Barto §7.1).

    Emits ``(s_t, a_t, Σ_k γ^k r_{t+k}, s_{t+m}, terminal, γ^m)`` with m = n, or fewer at the end
    of a game (a truncated game still bootstraps from its last board).
    """

    def __init__(self, n_envs: int, n: int, gamma: float) -> None:
        self.n, self.gamma = n, gamma
        self.pending: list[list[tuple[int, int, float]]] = [[] for _ in range(n_envs)]

    def state_dict(self) -> list[list[tuple[int, int, float]]]:
        """The transitions waiting in each game's queue."""
        return self.pending

    def load_state_dict(self, state: list[list[tuple[int, int, float]]]) -> None:
        self.pending = [list(q) for q in state]

    def push(
        self, i: int, s: int, a: int, r: float, s2: int, term: bool, done: bool, m2: np.ndarray
    ) -> list[tuple[Any, ...]]:
        q = self.pending[i]
        q.append((s, a, r))
        out = []
        if len(q) == self.n or done:
            while q and (len(q) == self.n or done):
                ret = sum(self.gamma**k * rk for k, (_, _, rk) in enumerate(q))
                s0, a0, _ = q[0]
                out.append((s0, a0, ret, s2, term, self.gamma ** len(q), m2))
                q.pop(0)
        return out
