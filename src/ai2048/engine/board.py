"""The board: one ``uint64``, 16 nibbles, each the exponent of a tile (0 = empty).

::

    bit:   0   4   8  12        cell (r, c) lives at bits 4*(4*r + c)
         +---+---+---+---+
         | 0 | 1 | 2 | 3 |  row 0 = bits  0..15  (top row, least significant)
         | 4 | 5 | 6 | 7 |  row 1 = bits 16..31
         | 8 | 9 | a | b |  row 2 = bits 32..47
         | c | d | e | f |  row 3 = bits 48..63
         +---+---+---+---+

A row is a 16-bit integer with column 0 in its lowest nibble, which is what the row tables index.
"""

from __future__ import annotations

import numpy as np
from numba import njit

ROW_MASK = np.uint64(0xFFFF)
NIBBLE = np.uint64(0xF)


@njit(cache=True, inline="always")
def transpose(b: np.uint64) -> np.uint64:
    """Swap cell (r, c) with (c, r): two delta swaps (Knuth, TAOCP 7.1.3), the 2x2 blocks' off-diagonal
    cells then the 2x2 blocks themselves; two constants where masking each part took six."""
    t = (b ^ (b >> np.uint64(12))) & np.uint64(0x0000F0F00000F0F0)
    b = b ^ t ^ (t << np.uint64(12))
    t = (b ^ (b >> np.uint64(24))) & np.uint64(0x00000000FF00FF00)
    return b ^ t ^ (t << np.uint64(24))


_BYTE_LANES = np.uint64(0x00FF00FF00FF00FF)
_NIBBLE_LANES = np.uint64(0x0F0F0F0F0F0F0F0F)
_ROW_PAIRS = np.uint64(0x0000FFFF0000FFFF)


@njit(cache=True, inline="always")
def mirror(b: np.uint64) -> np.uint64:
    """Reverse every row: cell (r, c) goes to (r, 3 - c). The two bytes of each row swap, then
    the two nibbles of each byte."""
    x = ((b >> np.uint64(8)) & _BYTE_LANES) | ((b & _BYTE_LANES) << np.uint64(8))
    return ((x >> np.uint64(4)) & _NIBBLE_LANES) | ((x & _NIBBLE_LANES) << np.uint64(4))


@njit(cache=True, inline="always")
def flip(b: np.uint64) -> np.uint64:
    """Reverse the row order: cell (r, c) goes to (3 - r, c). A rotation by 32 bits swaps the halves,
    then the two rows of each half swap."""
    x = (b << np.uint64(32)) | (b >> np.uint64(32))
    return ((x >> np.uint64(16)) & _ROW_PAIRS) | ((x & _ROW_PAIRS) << np.uint64(16))


@njit(cache=True, inline="always")
def count_empty(b: np.uint64) -> np.int64:
    """Number of empty cells (nibbles equal to 0)."""
    x = b | ((b >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = x | (x >> np.uint64(1))
    x = ~x & np.uint64(0x1111111111111111)
    x = x + (x >> np.uint64(32))
    x = x + (x >> np.uint64(16))
    x = x + (x >> np.uint64(8))
    x = x + (x >> np.uint64(4))
    return np.int64(x & np.uint64(0xF)) if b != np.uint64(0) else np.int64(16)


_LOW_NIBBLES = np.uint64(0x0F0F0F0F0F0F0F0F)
_LANE_ONES = np.uint64(0x0101010101010101)
_LANE_CARRY = np.uint64(0x1010101010101010)


@njit(cache=True, inline="always")
def reaches(b: np.uint64, t: int) -> bool:
    """``max_exponent(b) >= t`` without a loop: the even and the odd cells spread one to a byte,
    ``16 - t`` added to every byte carries into its bit 4 iff that cell holds ``t`` or more
    (the n-tuple trainer checks it every move, where ``max_exponent``'s loop branches on
    every cell)."""
    if t <= 0:
        return True
    if t >= 16:
        return False
    add = np.uint64(16 - t) * _LANE_ONES
    lo = b & _LOW_NIBBLES
    hi = (b >> np.uint64(4)) & _LOW_NIBBLES
    return (((lo + add) | (hi + add)) & _LANE_CARRY) != np.uint64(0)


@njit(cache=True, inline="always")
def seed004_end(b: np.uint64) -> bool:
    """Seed 004's ``board.end()``: the board is full or holds a 32768 (merges may remain)."""
    return count_empty(b) == 0 or reaches(b, 15)


@njit(cache=True, inline="always")
def nibbles_to_bytes(b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """The 16 exponents as 16 bytes in two words (cells 0..7, cells 8..15; byte k = cell k on a
    little-endian machine), so a [4, 4] uint8 observation is written with two stores."""
    lo = b & np.uint64(0xFFFFFFFF)
    hi = b >> np.uint64(32)
    lo = (lo | (lo << np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    hi = (hi | (hi << np.uint64(16))) & np.uint64(0x0000FFFF0000FFFF)
    lo = (lo | (lo << np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    hi = (hi | (hi << np.uint64(8))) & np.uint64(0x00FF00FF00FF00FF)
    lo = (lo | (lo << np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    hi = (hi | (hi << np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return lo, hi


@njit(cache=True)
def max_exponent(b: np.uint64) -> np.int64:
    """Largest exponent on the board (0 for an empty board)."""
    m = np.uint64(0)
    while b:
        n = b & NIBBLE
        if n > m:
            m = n
        b >>= np.uint64(4)
    return np.int64(m)


@njit(cache=True)
def tile_sum(b: np.uint64) -> np.int64:
    """Sum of the tile values on the board."""
    s = np.int64(0)
    while b:
        n = b & NIBBLE
        if n:
            s += np.int64(1) << np.int64(n)
        b >>= np.uint64(4)
    return s


@njit(cache=True)
def unpack_into(b: np.uint64, out: np.ndarray) -> None:
    """Write the 16 exponents of ``b`` row-major into ``out`` [16] (any integer dtype)."""
    for i in range(16):
        out[i] = (b >> np.uint64(4 * i)) & NIBBLE


@njit(cache=True)
def exponents(boards: np.ndarray) -> np.ndarray:
    """[N] boards -> [N, 16] uint8 exponents, row-major (0 = empty): what the torch nets encode."""
    n = boards.shape[0]
    out = np.empty((n, 16), dtype=np.uint8)
    for i in range(n):
        unpack_into(np.uint64(boards[i]), out[i])
    return out


@njit(cache=True)
def pack(cells: np.ndarray) -> np.uint64:
    """Pack 16 row-major exponents (already validated to 0..15) into a board."""
    b = np.uint64(0)
    for i in range(16):
        b |= np.uint64(cells[i]) << np.uint64(4 * i)
    return b
