"""The intrinsics: prefetch compiles for the arrays the kernels pass it and changes nothing; pext
extracts bits as a bit-by-bit reference does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numba import njit

from ai2048.engine.intrinsics import HAS_PEXT, pext, prefetch


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


def _pext_reference(x: int, mask: int) -> int:
    out, j = 0, 0
    for i in range(64):
        if mask >> i & 1:
            out |= (x >> i & 1) << j
            j += 1
    return out


@njit
def _pext(x: np.uint64, mask: np.uint64) -> np.uint64:
    return pext(x, mask)


@pytest.mark.skipif(not HAS_PEXT, reason="this CPU has no BMI2 pext (the kernels use mask-and-shift runs)")
@given(st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
def test_pext__equals_bit_by_bit_reference(x: int, mask: int) -> None:
    assert int(_pext(np.uint64(x), np.uint64(mask))) == _pext_reference(x, mask)


def test_pext__known_answers() -> None:
    assert _pext_reference(0x4321, 0xF0F) == 0x31
    if HAS_PEXT:
        assert int(_pext(np.uint64(0x0FEDCBA987654321), np.uint64(0xFFF0FFF))) == 0x765321
