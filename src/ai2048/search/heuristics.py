"""Leaf evaluators for search: numba ``evaluate(board, data) -> float64`` functions.

Every evaluator here follows the search's evaluator contract (see :mod:`ai2048.search.expectimax`):
an ``@njit`` function of an after-state board and a tuple of arrays ``data``, so weights can change
without recompiling. Three families:

- ``nneonneo_eval``: the nneonneo/2048-ai (xificurk) heuristic. A 65,536-entry table scores every
  row (empty cells, merges, monotonicity, sum penalty); a board is scored as its four rows plus its
  four columns. ``nneonneo_table(...)`` builds the table from weights.
- ``seed003_h`` / ``seed003_eval``: seed 003's expectimax heuristic (ParkerD559/2048-Expectimax-AI):
  ``18.992 max_log2 + 13.959 free + 7.05 adjacent_equal + 0.967 edges - 0.682 gradient``.
  ``seed003_eval`` values an after-state as the mean of ``seed003_h`` over a 2 placed in each empty
  cell, which is exactly the seed's chance layer (2s only) below its last max layer.
- ``seed003_utility``: seed 003's minimax utility (Columbia AI-course template):
  ``0.5 smoothness + (3/e) monotonicity + (2.7/e) ln e + 4 max4tile`` with ``e = max(#empty, 1)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numba import njit

from ai2048 import checks
from ai2048.engine.board import ROW_MASK, transpose

_S16 = np.uint64(16)
_S32 = np.uint64(32)
_S48 = np.uint64(48)


@dataclass(frozen=True)
class NneonneoWeights:
    """Weights of the nneonneo/2048-ai row heuristic; the defaults are this project's tuned values.

    A row scores ``lost + empty*#empty + merges*#merges - monotonicity*min(left, right)
    - sum*Σ rank**sum_power`` with ``left/right = Σ |rank_i**mono_power - rank_j**mono_power|`` over
    the decreasing / increasing neighbour pairs. The defaults came from
    ``ai2048 tune --depth 2 --games 150 --generations 8 --population 6 --seed 1`` (see
    ``docs/search.md``); nneonneo's published constants are :data:`NNEONNEO_PUBLISHED`.
    """

    lost: float = 194652.0
    empty: float = 364.56
    merges: float = 569.49
    monotonicity: float = 52.858
    mono_power: float = 2.3957
    sum: float = 11.724
    sum_power: float = 2.5704

    def __post_init__(self) -> None:
        for k, v in asdict(self).items():
            checks.number(f"nneonneo weight {k}", v)

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


NNEONNEO_PUBLISHED = NneonneoWeights(
    lost=200000.0, empty=270.0, merges=700.0, monotonicity=47.0, mono_power=4.0, sum=11.0, sum_power=3.5
)
"""nneonneo/2048-ai's published constants (xificurk's CMA-ES tuning), for comparison with its C++."""


def nneonneo_table(weights: NneonneoWeights | None = None) -> np.ndarray:
    """[65536] float32: the heuristic score of every 16-bit row (column 0 in the lowest nibble).

    float32 (as nneonneo) halves the table's cache footprint; sums are taken in float64.
    """
    w = weights or NneonneoWeights()
    with np.errstate(over="ignore", invalid="ignore"):  # huge weights or powers: checked below
        values = _row_values(w)
    top = float(np.abs(values).max())
    if not top <= float(np.finfo(np.float32).max) / 8:  # 8 rows and columns summed; NaN fails too
        raise ValueError(
            f"nneonneo weights {w.as_dict()} give row scores of {top:.3g}, past float32's range (a search "
            "would compare infinities); use weights of ordinary size (the defaults are 2.4..194,652)"
        )
    return values.astype(np.float32)


def _row_values(w: NneonneoWeights) -> np.ndarray:
    """[65536] float64 heuristic score of every row (see :func:`nneonneo_table`)."""
    rows = np.arange(65536, dtype=np.int64)
    line = np.stack([(rows >> (4 * i)) & 0xF for i in range(4)], axis=1).astype(np.float64)  # [65536, 4]
    empty = (line == 0).sum(axis=1)
    total = (line**w.sum_power).sum(axis=1)
    # merges: a run of k equal non-zero ranks (empty cells skipped) adds k, as in nneonneo's loop
    merges = np.zeros(65536)
    prev = np.zeros(65536)
    counter = np.zeros(65536)
    for i in range(4):
        rank = line[:, i]
        nz = rank != 0
        same = nz & (prev == rank)
        counter = np.where(same, counter + 1, counter)
        close = nz & ~same & (counter > 0)
        merges = np.where(close, merges + 1 + counter, merges)
        counter = np.where(close, 0, counter)
        prev = np.where(nz, rank, prev)
    merges = merges + np.where(counter > 0, 1 + counter, 0)
    p = line**w.mono_power
    left = np.zeros(65536)
    right = np.zeros(65536)
    for i in range(1, 4):
        dec = line[:, i - 1] > line[:, i]
        left += np.where(dec, p[:, i - 1] - p[:, i], 0.0)
        right += np.where(dec, 0.0, p[:, i] - p[:, i - 1])
    return np.asarray(
        w.lost
        + w.empty * empty
        + w.merges * merges
        - w.monotonicity * np.minimum(left, right)
        - w.sum * total
    )


@njit(cache=True, inline="always")
def row_table_sum(b: np.uint64, table: np.ndarray) -> float:
    """Σ of ``table`` over the four rows and the four columns of ``b``."""
    t = transpose(b)
    return (
        np.float64(table[b & ROW_MASK])
        + np.float64(table[(b >> _S16) & ROW_MASK])
        + np.float64(table[(b >> _S32) & ROW_MASK])
        + np.float64(table[b >> _S48])
        + np.float64(table[t & ROW_MASK])
        + np.float64(table[(t >> _S16) & ROW_MASK])
        + np.float64(table[(t >> _S32) & ROW_MASK])
        + np.float64(table[t >> _S48])
    )


@njit(cache=True)
def nneonneo_eval(b: np.uint64, data: tuple) -> float:
    """nneonneo heuristic of an after-state; ``data = (nneonneo_table(weights),)``."""
    return row_table_sum(b, data[0])


@njit(cache=True, inline="always")
def _at(b: np.uint64, r: int, c: int) -> Any:
    """Exponent in cell (r, c), signed (no array: these heuristics run at every search leaf)."""
    return np.int64((b >> np.uint64(4 * (4 * r + c))) & np.uint64(0xF))


SEED003_WEIGHTS = np.array([18.992, 13.959, 7.05, 0.967, -0.682])
"""Seed 003 expectimax weights for (max_log2, free, adjacent_equal, edges, gradient)."""


@njit(cache=True)
def seed003_parts(b: np.uint64) -> tuple[float, float, float, float, float]:
    """(max_log2, free, adjacent_equal, edges, gradient) as ParkerD559's ExpectimaxAgent counts them.

    ``adjacent_equal`` counts each equal neighbour pair twice; ``edges`` adds log2 of a tile once per
    border side it touches (corners twice); ``gradient = 1 + Σ |log2 a - log2 b|`` over occupied
    4-neighbours, each pair twice. The seed's worked values: ``max + free + adjacent - (gradient - 1)``
    is -33 and -17 on its two example boards.
    """
    mx = 0
    free = 0
    adj = 0
    edges = 0
    grad = 1
    for r in range(4):
        for col in range(4):
            e = _at(b, r, col)
            if e == 0:
                free += 1
                continue
            mx = max(mx, e)
            edges += ((r == 0) + (r == 3) + (col == 0) + (col == 3)) * e
            if col < 3:  # each horizontal and vertical pair once, counted twice below
                n = _at(b, r, col + 1)
                if n != 0:
                    grad += 2 * abs(e - n)
                    adj += 2 * (n == e)
            if r < 3:
                n = _at(b, r + 1, col)
                if n != 0:
                    grad += 2 * abs(e - n)
                    adj += 2 * (n == e)
    return float(mx), float(free), float(adj), float(edges), float(grad)


def seed003_components(b: np.uint64) -> np.ndarray:
    """[5] :func:`seed003_parts` as an array."""
    return np.array(seed003_parts(np.uint64(b)))


@njit(cache=True, inline="always")
def seed003_h(b: np.uint64, weights: np.ndarray) -> float:
    """Seed 003's weighted evaluation of a board: ``weights · seed003_parts(b)``."""
    mx, free, adj, edges, grad = seed003_parts(b)
    return weights[0] * mx + weights[1] * free + weights[2] * adj + weights[3] * edges + weights[4] * grad


@njit(cache=True)
def seed003_eval(b: np.uint64, data: tuple) -> float:
    """After-state value for seed 003's expectimax: mean of ``seed003_h`` over a 2 in each empty cell.

    ``data = (SEED003_WEIGHTS,)``. This is the seed's last chance layer (2s only, 4s ignored).
    """
    w = data[0]
    total = 0.0
    n = 0
    for i in range(16):
        s = np.uint64(4 * i)
        if ((b >> s) & np.uint64(0xF)) == 0:
            total += seed003_h(b | (np.uint64(1) << s), w)
            n += 1
    if n == 0:
        return seed003_h(b, w)
    return total / n


SEED003_UTILITY_WEIGHTS = np.array([0.5, 3.0, 2.7, 4.0])
"""Seed 003 minimax weights: smoothness, monotonicity/e, ln(e)/e scale, max4tile."""


@njit(cache=True, inline="always")
def _line(b: np.uint64, axis: int, line: int, k: int) -> Any:
    """Exponent at position ``k`` of row ``line`` (axis 0) or column ``line`` (axis 1)."""
    return _at(b, line, k) if axis == 0 else _at(b, k, line)


@njit(cache=True)
def seed003_utility_parts(b: np.uint64) -> tuple[float, float, float, float]:
    """(smoothness, monotonicity, empty, max4tile) of the Columbia-template minimax utility.

    smoothness = -Σ |log2 v - log2 w| for each tile and the first occupied tile to its right and
    below; monotonicity = Σ over both axes of max(decreasing steps, increasing steps) (ovolve's
    monotonicity2, <= 0); max4tile = ln(Σ of the four largest values, ascending, times 1, 2, 4, 8).
    """
    smooth = 0.0
    empty = 0
    t1 = t2 = t3 = t4 = 0.0  # the four largest tile values, t1 largest
    for r in range(4):
        for col in range(4):
            e = _at(b, r, col)
            if e == 0:
                empty += 1
                continue
            v = 2.0**e
            if v > t1:
                t1, t2, t3, t4 = v, t1, t2, t3
            elif v > t2:
                t2, t3, t4 = v, t2, t3
            elif v > t3:
                t3, t4 = v, t3
            elif v > t4:
                t4 = v
            for k in range(col + 1, 4):  # first occupied to the right
                n = _at(b, r, k)
                if n != 0:
                    smooth -= abs(e - n)
                    break
            for k in range(r + 1, 4):  # first occupied below
                n = _at(b, k, col)
                if n != 0:
                    smooth -= abs(e - n)
                    break
    mono = 0.0
    for axis in range(2):
        dec = 0.0
        inc = 0.0
        for line in range(4):
            cur = 0
            nxt = 1
            while nxt < 4:
                while nxt < 4 and _line(b, axis, line, nxt) == 0:
                    nxt += 1
                if nxt >= 4:
                    nxt -= 1
                cv = _line(b, axis, line, cur)
                nv = _line(b, axis, line, nxt)
                if cv > nv:
                    dec += nv - cv
                elif nv > cv:
                    inc += cv - nv
                cur = nxt
                nxt += 1
        mono += max(dec, inc)
    top = t4 * 1.0 + t3 * 2.0 + t2 * 4.0 + t1 * 8.0
    return smooth, mono, float(empty), (math.log(top) if top > 0 else 0.0)


def seed003_utility_components(b: np.uint64) -> np.ndarray:
    """[4] :func:`seed003_utility_parts` as an array."""
    return np.array(seed003_utility_parts(np.uint64(b)))


@njit(cache=True)
def seed003_utility(b: np.uint64, data: tuple) -> float:
    """Seed 003 minimax utility ``w0 smooth + (w1/e) mono + (w2/e) ln e + w3 max4tile``; ``data =
    (weights,)``."""
    w = data[0]
    smooth, mono, empty, max4 = seed003_utility_parts(b)
    e = max(empty, 1.0)
    return w[0] * smooth + (w[1] / e) * mono + (w[2] / e) * math.log(e) + w[3] * max4
