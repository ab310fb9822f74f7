"""The prefetch intrinsic compiles for the arrays the kernels pass it and changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from ai2048.engine.prefetch import prefetch


@njit
def _gather_1d(a: np.ndarray, order: np.ndarray) -> float:
    total = 0.0
    for j in range(order.size):
        if j + 4 < order.size:
            prefetch(a, order[j + 4])
        total += a[order[j]]
    return total


@njit
def _gather_rows(a: np.ndarray, order: np.ndarray) -> float:
    total = 0.0
    for j in range(order.size):
        if j + 4 < order.size:
            prefetch(a, order[j + 4])  # row order[j + 4], as the transposition table is probed
        total += a[order[j], 1]
    return total


def test_prefetch__1d_weights_and_2d_table_read_unchanged() -> None:
    rng = np.random.default_rng(0)
    weights = rng.standard_normal(1000).astype(np.float32)
    table = rng.standard_normal((256, 4))
    for a, gather, column in ((weights, _gather_1d, None), (table, _gather_rows, 1)):
        before = a.copy()
        order = rng.integers(0, a.shape[0], 500)
        picked = a[order] if column is None else a[order, column]
        assert gather(a, order) == pytest.approx(float(picked.astype(np.float64).sum()), rel=1e-9)
        assert np.array_equal(a, before)
