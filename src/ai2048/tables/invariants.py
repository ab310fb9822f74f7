"""What every table (built, distilled, or a layer of a build) must satisfy, checked in one pass before
it is played or assembled: a file changed on disk is refused, never read as probabilities.

- **keys** (uint64): each key has the wall nibble ``0xF`` in the cells of one of the formation's
  placements (its fixed cells, or a slide of a transport formation) and nowhere else, and free tiles
  below the target; the key at index ``i`` of block ``j`` (``keys[offsets[j]:offsets[j + 1]]``) lies in layer
  ``first_layer + j`` (its free tiles sum to twice that), and the keys of a block strictly increase
  (the lookups binary-search them).
- **values** (float32): probabilities, finite in [0, 1]; a distilled table also holds ``UNKNOWN``
  (-1) for a position the full table lacks.

One pass over the 68 M positions of ``442-512`` (816 MB) takes about 0.2 s of CPU with its pages
cached (hashing them, 0.55 s).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# a distilled table's value of a position its full table lacks (read as unknown, never played)
from ai2048.tables.kernels import MISSING as UNKNOWN
from ai2048.tables.kernels import walls_of

OK = 0
NO_WALLS = 1
LARGE_TILE = 2
WRONG_LAYER = 3
OUT_OF_ORDER = 4

KEY_PROBLEMS = {
    NO_WALLS: "does not hold its walls (the nibble 0xF) in a placement of the formation",
    LARGE_TILE: "holds a free tile as large as the target",
    WRONG_LAYER: "is not in the layer of its tile sum",
    OUT_OF_ORDER: "is not above the key before it (keys increase within a layer)",
}


def _sums16() -> np.ndarray:
    """int64 [65536]: the tile sum of four cells (a 16-bit part of a board), ``0x0012`` -> 2 + 4."""
    e = (np.arange(1 << 16)[:, None] >> (4 * np.arange(4))) & 15
    return np.where(e > 0, 1 << e, 0).sum(axis=1).astype(np.int64)


SUMS16 = _sums16()


@njit(cache=True)
def first_bad_key(keys: np.ndarray, offsets: np.ndarray, first_layer: np.int64, places: np.ndarray,
                  target: np.int64, sums16: np.ndarray) -> tuple:
    """(problem, index) of the first key that breaks the rules above, or (``OK``, -1). ``sums16`` is
    :data:`SUMS16`; a free tile of ``target`` or more shows as a carry out of a byte lane (each nibble
    plus ``16 - target``, the even and the odd nibbles apart)."""
    lanes = np.uint64(0x0F0F0F0F0F0F0F0F)
    add = np.uint64(0x0101010101010101) * np.uint64(16 - target)
    carry = np.uint64(0x1010101010101010)
    part = np.uint64(0xFFFF)
    for j in range(offsets.size - 1):
        twice = 2 * (first_layer + j)
        lo = offsets[j]
        for i in range(lo, offsets[j + 1]):
            key = keys[i]
            walls = walls_of(key)
            placed = False
            for p in range(places.size):
                placed |= walls == places[p] and walls != 0
            if not placed:
                return NO_WALLS, i
            if i > lo and key <= keys[i - 1]:
                return OUT_OF_ORDER, i
            x = key & ~walls
            if (((x & lanes) + add) | (((x >> np.uint64(4)) & lanes) + add)) & carry:
                return LARGE_TILE, i
            s = (sums16[x & part] + sums16[(x >> np.uint64(16)) & part] + sums16[(x >> np.uint64(32)) & part]
                 + sums16[x >> np.uint64(48)])
            if s != twice:
                return WRONG_LAYER, i
    return OK, np.int64(-1)


@njit(cache=True)
def first_bad_value(values: np.ndarray, unknown_ok: bool) -> np.int64:
    """The index of the first value that is not a probability (nor ``UNKNOWN`` where allowed), or -1."""
    for i in range(values.size):
        v = values[i]
        if not (v >= 0.0 and v <= 1.0) and not (unknown_ok and v == UNKNOWN):
            return np.int64(i)
    return np.int64(-1)


def key_problem(keys: np.ndarray, offsets: np.ndarray, first_layer: int, places: np.ndarray,
                target: int) -> str | None:
    """What is wrong with ``keys`` (in words, naming the index), or None; ``places`` is the formation's
    placements (``Formation.places``)."""
    code, i = first_bad_key(keys, np.asarray(offsets, dtype=np.int64), np.int64(first_layer),
                            np.asarray(places, dtype=np.uint64), np.int64(target), SUMS16)
    if code == OK:
        return None
    return f"key {int(keys[i]):#018x} at index {i:,} {KEY_PROBLEMS[int(code)]}"


def value_problem(values: np.ndarray, unknown_ok: bool = False) -> str | None:
    """What is wrong with ``values`` (in words, naming the index), or None."""
    i = int(first_bad_value(values, unknown_ok))
    if i < 0:
        return None
    allowed = " (or -1, unknown)" if unknown_ok else ""
    return f"value {float(values[i])!r} at index {i:,} is not a probability in [0, 1]{allowed}"


def offsets_problem(offsets: np.ndarray, size: int) -> str | None:
    """What is wrong with layer ``offsets`` of ``size`` positions (start at 0, never decrease, end at
    ``size``), or None."""
    if offsets.ndim != 1 or offsets.size < 2:
        return f"offsets has shape {offsets.shape}, not one entry per layer and one more"
    if offsets[0] != 0 or offsets[-1] != size:
        return f"offsets run from {int(offsets[0]):,} to {int(offsets[-1]):,}, not from 0 to {size:,}"
    if np.any(np.diff(offsets) < 0):
        return f"offsets decrease at layer {int(np.argmax(np.diff(offsets) < 0)):,}"
    return None


def table_problem(keys: np.ndarray, values: np.ndarray, offsets: np.ndarray, places: np.ndarray, target: int,
                  unknown_ok: bool = False) -> tuple[str, str] | None:
    """(the file's name, what is wrong) for arrays that break the rules above, or None."""
    problem = offsets_problem(offsets, keys.size)
    if problem:
        return "offsets.npy", problem
    problem = key_problem(keys, offsets, 0, places, target)
    if problem:
        return "keys.npy", problem
    problem = value_problem(values, unknown_ok)
    if problem:
        return "values.npy", problem
    return None
