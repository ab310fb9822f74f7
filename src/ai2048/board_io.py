"""Conversion between boards and the shapes people use, with input checks.

Every user-facing function checks its input here and raises ``ValueError``/``TypeError`` naming
the problem, so no user mistake reaches a numba kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ai2048.engine.board import pack
from ai2048.rules import MAX_EXPONENT, MAX_TILE_EXPONENT, RULES_VERSION, RULES_VERSIONS


def check_board(board: Any) -> np.uint64:
    """Return ``board`` as ``np.uint64`` after checking it is a 64-bit board integer."""
    if isinstance(board, (bool, np.bool_)):
        raise TypeError("board must be a uint64 integer (see ai2048.encode), got a bool")
    if isinstance(board, np.ndarray):
        if board.shape != ():
            raise TypeError(
                f"board must be one uint64 integer, got an array of shape {board.shape}; "
                "use ai2048.encode(cells) to pack a grid"
            )
        board = board.item()
    if isinstance(board, np.integer):
        if board.dtype not in (np.uint64, np.int64, np.uint32, np.int32, np.uint16, np.uint8):
            raise TypeError(f"board has dtype {board.dtype}; expected uint64")
        board = int(board)
    if not isinstance(board, int):
        raise TypeError(
            f"board must be a uint64 integer (see ai2048.encode), got {type(board).__name__}"
        )
    if not 0 <= board < 1 << 64:
        raise ValueError(f"board {board} is outside 0..2**64-1; encode a grid with ai2048.encode")
    return np.uint64(board)


def check_action(action: Any) -> int:
    """Return ``action`` as an int in 0..3 (``Action`` members and integers are accepted)."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise TypeError(
            f"action must be an ai2048.Action or an int 0..3, got {type(action).__name__} {action!r}"
        )
    a = int(action)
    if not 0 <= a <= 3:
        raise ValueError(
            f"action {a} is out of range: use 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3, see ai2048.Action)"
        )
    return a


_CELL_LIMIT = 1 << 62
"""Cell values beyond this are rejected before the int64 conversion could wrap them."""


def _has_bool(values: Any) -> bool:
    """True if a nested list/tuple (or an array) holds a bool: ``[True, 0, ...]`` would pass as 1, 0, ..."""
    if isinstance(values, (bool, np.bool_)):
        return True
    if isinstance(values, np.ndarray):
        return values.dtype == np.bool_ or (values.dtype == object and any(_has_bool(v) for v in values.flat))
    if isinstance(values, (list, tuple)):
        return any(_has_bool(v) for v in values)
    return False


def _as_cells(values: Any, what: str) -> np.ndarray:
    if _has_bool(values):
        raise TypeError(f"{what} must be numbers, got dtype bool (True would count as 1)")
    try:
        arr = np.asarray(values)
    except ValueError as e:
        raise ValueError(f"{what} must be 16 numbers or a 4x4 grid, got a ragged sequence ({e})") from None
    if arr.dtype == object and arr.shape in ((16,), (4, 4)):
        for i, v in enumerate(arr.reshape(16).tolist()):
            if isinstance(v, int) and not isinstance(v, bool) and not -_CELL_LIMIT <= v <= _CELL_LIMIT:
                raise ValueError(
                    f"{what}: value {v} at cell {i} is out of range (exponents are 0..15, tile values "
                    "0..32768)"
                )
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
    ):
        raise TypeError(f"{what} must be numbers, got dtype {arr.dtype}")
    if arr.shape not in ((16,), (4, 4)):
        raise ValueError(f"{what} must have 16 entries or shape (4, 4), got shape {arr.shape}")
    flat = arr.reshape(16)
    if np.issubdtype(flat.dtype, np.floating) and not (
        np.all(np.isfinite(flat)) and np.all(flat == np.round(flat))
    ):
        raise ValueError(f"{what} must be whole numbers, got {flat.tolist()}")
    far = (flat > _CELL_LIMIT) | (flat < -_CELL_LIMIT)
    if far.any():
        i = int(np.argmax(far))
        raise ValueError(
            f"{what}: value {flat[i].item()} at cell {i} is out of range (exponents are 0..15, tile values "
            "0..32768)"
        )
    return flat.astype(np.int64)


def encode(exponents: Any) -> int:
    """Pack 16 exponents (row-major list or a [4, 4] array, 0 = empty) into a board.

    >>> hex(encode([1, 1, 1, 1] + [0] * 12))
    '0x1111'
    """
    return int(pack(_exponents(exponents, MAX_EXPONENT, "; for tile values use ai2048.from_tiles, past "
                               "32768 ai2048.board_io.exact_encode")))


def _exponents(values: Any, top: int, hint: str) -> np.ndarray:
    """The [16] exponents of ``values``, each in 0..``top``; one outside is named with its cell."""
    cells = _as_cells(values, "exponents")
    bad = (cells < 0) | (cells > top)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"exponent {int(cells[i])} at cell {i} (row {i // 4}, column {i % 4}) is outside 0..{top} "
            f"(0 = empty, {top} = {2**top}){hint}")
    return cells


def decode(board: Any) -> np.ndarray:
    """The [4, 4] uint8 exponents of a board (row 0 on top)."""
    b = int(check_board(board))
    return np.array([(b >> (4 * i)) & 0xF for i in range(16)], dtype=np.uint8).reshape(4, 4)


def _tile_exponents(values: Any, top: int, hint: str) -> np.ndarray:
    """The [16] exponents of tile values up to ``2**top``; anything else is named with its cell."""
    cells = _as_cells(values, "tile values")
    out = np.zeros(16, dtype=np.int64)
    for i, v in enumerate(cells.tolist()):
        if v == 0:
            continue
        if v < 2 or v & (v - 1) or v > 2**top:
            raise ValueError(
                f"tile value {v} at cell {i} (row {i // 4}, column {i % 4}) is not a power of two in "
                f"2..{2**top} (use 0 for an empty cell{hint})")
        out[i] = v.bit_length() - 1
    return out


def from_tiles(values: Any) -> int:
    """Pack tile values (0, 2, 4, ..., 32768; row-major list or [4, 4]) into a board."""
    return int(pack(_tile_exponents(values, MAX_EXPONENT, "; for exponents use ai2048.encode; past 32768 "
                                    "ai2048.board_io.exact_from_tiles")))


def to_tiles(board: Any) -> np.ndarray:
    """The [4, 4] int64 tile values of a board (0 = empty)."""
    e = decode(board).astype(np.int64)
    return np.where(e > 0, np.left_shift(1, e), 0)


def check_boards(boards: Any) -> np.ndarray:
    """Return ``boards`` as a C-contiguous ``uint64[N]`` array after checking dtype and shape."""
    arr = np.asarray(boards)
    if arr.ndim != 1:
        raise ValueError(f"boards must be a 1-D uint64 array [N], got shape {arr.shape}")
    if arr.dtype != np.uint64:
        raise TypeError(f"boards must have dtype uint64, got {arr.dtype}; use np.asarray(x, np.uint64)")
    return np.ascontiguousarray(arr)


def check_rules(rules: Any) -> int:
    """A rules version this package plays (``rules.RULES_VERSIONS``), as an int."""
    if isinstance(rules, (bool, np.bool_)) or not isinstance(rules, (int, np.integer)) \
            or int(rules) not in RULES_VERSIONS:
        versions = ", ".join(map(str, RULES_VERSIONS))
        raise ValueError(f"rules={rules!r} is not a rules version this ai2048 plays: use one of {versions} "
                         f"(the default, {RULES_VERSION}, plays past 32768)")
    return int(rules)


def _super_cells(supers: int) -> list[tuple[int, int]]:
    return [(i, 15 + (supers >> (2 * i) & 3)) for i in range(16) if supers >> (2 * i) & 3]


def check_position(board: Any, supers: Any = 0) -> tuple[np.uint64, int]:
    """``(board, supers)`` after checking that ``supers`` records exact values (65536 or 131072) only
    for cells that hold a 15, and that at most one 131072 is on the board (two cannot coexist)."""
    b = check_board(board)
    if isinstance(supers, (bool, np.bool_)) or not isinstance(supers, (int, np.integer)):
        raise TypeError(f"supers must be an int (2 bits a cell: exponent - 15), got {type(supers).__name__}")
    s = int(supers)
    if not 0 <= s < 1 << 32:
        raise ValueError(f"supers {s} is outside 0..2**32-1 (2 bits for each of the 16 cells)")
    big = 0
    for i, e in _super_cells(s):
        nib = int(b) >> (4 * i) & 0xF
        if nib != MAX_EXPONENT:
            raise ValueError(
                f"supers records a {1 << min(e, 62)} at cell {i} (row {i // 4}, column {i % 4}), but the "
                f"board holds {1 << nib if nib else 'nothing'} there; a tile of 32768 or more is a 15 on the "
                "board (use ai2048.exact_from_tiles to pack exact tiles)")
        if e > MAX_TILE_EXPONENT:
            raise ValueError(
                f"supers records exponent {e} at cell {i} (row {i // 4}, column {i % 4}): tiles end at "
                f"{2**MAX_TILE_EXPONENT} (exponent {MAX_TILE_EXPONENT})")
        if e == MAX_TILE_EXPONENT:
            big += 1
            if big > 1:
                raise ValueError(
                    f"a second {2**MAX_TILE_EXPONENT} at cell {i} (row {i // 4}, column {i % 4}): two cannot "
                    "coexist on a 4x4 board (the second needs 16 cells besides the first)")
    return b, s


def exact_encode(exponents: Any) -> tuple[int, int]:
    """Pack 16 exact exponents (0..17, row-major or [4, 4]) into ``(board, supers)``.

    >>> exact_encode([16, 15] + [0] * 14)
    (255, 1)
    """
    cells = _exponents(exponents, MAX_TILE_EXPONENT, "")
    board = int(pack(np.minimum(cells, MAX_EXPONENT)))
    supers = sum(int(e - MAX_EXPONENT) << (2 * i) for i, e in enumerate(cells.tolist()) if e > MAX_EXPONENT)
    check_position(board, supers)
    return board, supers


def exact_from_tiles(values: Any) -> tuple[int, int]:
    """Pack tile values (0, 2, 4, ..., 131072; row-major or [4, 4]) into ``(board, supers)``."""
    return exact_encode(_tile_exponents(values, MAX_TILE_EXPONENT, ""))


def exact_tiles(board: Any, supers: Any = 0) -> np.ndarray:
    """The [4, 4] int64 exact tile values of ``(board, supers)`` (0 = empty)."""
    b, s = check_position(board, supers)
    e = decode(b).astype(np.int64).reshape(16)
    for i, x in _super_cells(s):
        e[i] = x
    return np.where(e > 0, np.left_shift(1, e), 0).reshape(4, 4)


def render_text(board: Any, supers: Any = 0) -> str:
    """A compact, readable text board: tile values, '.' for empty, one row a line."""
    tiles = exact_tiles(board, supers)
    width = max(4, max(len(str(int(v))) for v in tiles.flat))
    lines = [" ".join(str(int(v)).rjust(width) if v else ".".rjust(width) for v in row) for row in tiles]
    return "\n".join(lines)

