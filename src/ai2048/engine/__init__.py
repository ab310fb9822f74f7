"""Numba kernels on ``uint64`` boards: pure functions, no I/O, no classes.

The Python API in :mod:`ai2048.game` and :mod:`ai2048.board_io` wraps them thinly.
"""

from ai2048.engine.batch import (
    batch_legal_masks,
    batch_move,
    batch_random_play,
    batch_step,
)
from ai2048.engine.board import (
    count_empty,
    max_exponent,
    mirror,
    tile_sum,
    transpose,
)
from ai2048.engine.moves import is_over, legal_bits, move
from ai2048.engine.rng import rand_float, rand_u64, seed_state
from ai2048.engine.spawn import (
    new_board,
    random_play,
    spawn,
    spawn_outcomes,
)

__all__ = [
    "batch_legal_masks",
    "batch_move",
    "batch_random_play",
    "batch_step",
    "count_empty",
    "is_over",
    "legal_bits",
    "max_exponent",
    "mirror",
    "move",
    "new_board",
    "rand_float",
    "rand_u64",
    "random_play",
    "seed_state",
    "spawn",
    "spawn_outcomes",
    "tile_sum",
    "transpose",
]
