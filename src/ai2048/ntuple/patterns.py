"""N-tuple patterns: presets, parsing, and the 8 board symmetries of each tuple.

A tuple is a list of cells (0..15, row-major: cell ``4*r + c``). A network of ``k`` tuples has
``8k`` features: each tuple read through each of the 8 symmetries of the square (4 rotations,
with and without a mirror), all 8 sharing one weight table of ``16**n`` entries (Szubert &
Jaśkowski 2014). The symmetry order is seed 004's ``find_isomorphic_pattern``, so the index
lists equal the seed's exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

PRESETS: dict[str, str] = {
    "4x6": "012345,456789,012456,45689a",
    "5x6": "012345,456789,89abcd,012456,45689a",
    "8x6": "012456,456789,012345,234569,01259a,345678,134567,01489a",
    "4x5": "01234,45678,01245,45689",
    "2x4+2x6": "0123,4567,012456,45689a",
}
"""Named pattern sets. ``4x6`` is seed 004's (K.-H. Yeh's; TDL2048+ ``4x6patt``); ``5x6`` adds
row 2-3's straight 6-tuple (TDL2048+ ``5x6patt``); ``8x6`` is Matsuzaki's 8 6-tuples (TDL2048+
``8x6patt``); ``4x5`` are the 4x6 shapes cut to 5 cells (TDL2048+ ``4x5patt/41-32``);
``2x4+2x6`` is Szubert & Jaśkowski (2014): two straight 4-tuples and two 2x3 rectangles."""

MAX_TUPLE = 7
"""Longest tuple allowed: one table of ``16**7`` float32 is already 1 GiB."""
MAX_TUPLES = 64
"""Most tuples in a pattern set: the kernels are generated unrolled, 8 features a tuple, and numba's
first compilation grows faster than the tuple count, so a weights file naming thousands of one-cell
tuples (a few KiB) would keep a process compiling for hours."""


def _rotate(cells: list[int]) -> list[int]:
    """Seed 004's ``board.rotate`` (90 degrees clockwise) applied to a list of cell labels."""
    return [cells[4 * (3 - (i % 4)) + (i // 4)] for i in range(16)]


def _mirror(cells: list[int]) -> list[int]:
    """Seed 004's ``board.mirror``: reverse every row."""
    return [cells[r + i] for r in range(0, 16, 4) for i in reversed(range(4))]


def isomorphic_patterns(pattern: Sequence[int]) -> list[list[int]]:
    """The 8 index lists of ``pattern`` in seed 004's order: rotations 0..3, then mirrored 0..3."""
    labels = list(range(16))
    out = []
    for i in range(8):
        b = _mirror(labels) if i >= 4 else list(labels)
        for _ in range(i % 4):
            b = _rotate(b)
        out.append([b[c] for c in pattern])
    return out


def parse_patterns(spec: str | Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """A preset name (``"4x6"``), hex cell strings (``"012345,456789"``) or lists of cells -> tuples.

    Raises ValueError naming the problem: unknown preset, a cell outside 0..15, a repeated cell,
    a tuple longer than :data:`MAX_TUPLE`, more than :data:`MAX_TUPLES` tuples.
    """
    if isinstance(spec, str):
        text = PRESETS.get(spec.strip(), spec)
        parts = [p for p in text.replace(" ", ",").replace("+", ",").split(",") if p]
        if not parts:
            raise ValueError(f"empty pattern spec {spec!r}; use a preset ({', '.join(PRESETS)})")
        tuples: list[tuple[int, ...]] = []
        for p in parts:
            try:
                tuples.append(tuple(int(ch, 16) for ch in p))
            except ValueError:
                raise ValueError(
                    f"unknown pattern spec {spec!r}: {p!r} is not a string of hex cells; use a preset "
                    f"({', '.join(PRESETS)}) or hex cell lists such as '012345,456789'"
                ) from None
    else:
        tuples = [tuple(int(c) for c in t) for t in spec]
        if not tuples:
            raise ValueError("no patterns given")
    if len(tuples) > MAX_TUPLES:
        raise ValueError(
            f"pattern set of {len(tuples)} tuples; at most {MAX_TUPLES} (the kernels are compiled unrolled "
            "per tuple: 512 tuples take minutes to compile)"
        )
    for t in tuples:
        if not 1 <= len(t) <= MAX_TUPLE:
            raise ValueError(f"tuple {t} has {len(t)} cells; tuples need 1..{MAX_TUPLE} cells")
        if any(not 0 <= c <= 15 for c in t):
            raise ValueError(f"tuple {t} has a cell outside 0..15")
        if len(set(t)) != len(t):
            raise ValueError(f"tuple {t} repeats a cell")
    return tuple(tuples)


def pattern_name(tuples: Sequence[Sequence[int]]) -> str:
    """Canonical text of a pattern set: hex cell strings joined by commas (``"012345,456789"``)."""
    return ",".join("".join(f"{c:x}" for c in t) for t in tuples)


def tuple_runs(tuples: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Kernel arrays for a pattern set: each tuple's index as a few mask-and-shift runs.

    A tuple's table index packs its cells' nibbles in tuple order, first cell lowest. Cells that
    follow each other on the board (``0,1,2``) form a run read with one shift and one mask, so
    ``012345`` is ``b & 0xFFFFFF`` and ``012456`` is two runs.

    Returns:
        runs: [K, MAX_TUPLE, 3] uint64 (source shift, mask, destination shift) per run
        nruns: [K] int64 runs per tuple
        tbase: [K] int64 offset of each tuple's table in a stage's weights
        table_size: weights per stage (sum of ``16**n`` over tuples)
    """
    runs = np.zeros((len(tuples), MAX_TUPLE, 3), dtype=np.uint64)
    nruns = np.zeros(len(tuples), dtype=np.int64)
    tbase = np.zeros(len(tuples), dtype=np.int64)
    size = 0
    for k, t in enumerate(tuples):
        tbase[k] = size
        size += 16 ** len(t)
        j = 0
        while j < len(t):
            m = 1
            while j + m < len(t) and t[j + m] == t[j] + m:
                m += 1
            runs[k, nruns[k]] = (4 * t[j], (1 << (4 * m)) - 1, 4 * j)
            nruns[k] += 1
            j += m
    return runs, nruns, tbase, size
