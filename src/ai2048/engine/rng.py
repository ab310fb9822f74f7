"""Explicit random state for kernels: SplitMix64 on a ``uint64[1]`` array.

Kernels never touch a hidden global generator; the caller owns the state, so the same seed gives
the same game on every path (single game, env, vector env, evaluation worker).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def rand_u64(state: np.ndarray) -> np.uint64:
    """Next 64 random bits from SplitMix64 (Steele, Lea & Flood 2014); advances ``state[0]``."""
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def rand_float(state: np.ndarray) -> np.float64:
    """Uniform float in [0, 1) with 53 random bits."""
    return np.float64(rand_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def rand_below(state: np.ndarray, n: np.int64) -> np.int64:
    """Uniform integer in [0, n) by Lemire's multiply-shift on the high 32 bits."""
    r = rand_u64(state) >> np.uint64(32)
    return np.int64((r * np.uint64(n)) >> np.uint64(32))


def seed_state(seed: int | None) -> np.ndarray:
    """A fresh ``uint64[1]`` state from an integer seed (or from OS entropy when ``None``)."""
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
    return np.array([int(seed) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
