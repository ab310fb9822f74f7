"""Observation encodings: exponents (default), one-hot planes (seed 000), raw tile values.

All take exponents ``[..., 4, 4]`` uint8 and keep the leading batch shape.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ai2048 import checks
from ai2048.rules import MAX_TILE_EXPONENT

OBS_MODES = ("exponents", "onehot", "tiles")
MAX_PLANES = MAX_TILE_EXPONENT + 1
"""One-hot planes that cover every tile: 18 (empty, 2, ..., 131072)."""


def check_obs_mode(obs_mode: str, planes: int) -> None:
    """Reject an unknown ``obs_mode`` or a plane count outside 2..18."""
    checks.choice("obs_mode", obs_mode, OBS_MODES)
    checks.whole("planes", planes, 2, MAX_PLANES,
                 why="16 covers every tile up to 32768, 18 every tile up to 131072; 12 reproduces seed 000")


def observation_space(obs_mode: str, planes: int = 16, top_exponent: int = MAX_TILE_EXPONENT) -> spaces.Box:
    """The space of one observation in ``obs_mode`` whose tiles reach ``2**top_exponent``."""
    if obs_mode == "exponents":
        return spaces.Box(0, top_exponent, shape=(4, 4), dtype=np.uint8)
    if obs_mode == "onehot":
        return spaces.Box(0.0, 1.0, shape=(planes, 4, 4), dtype=np.float32)
    return spaces.Box(0, 2**top_exponent, shape=(4, 4), dtype=np.int32)


def onehot(exponents: np.ndarray, planes: int = 16) -> np.ndarray:
    """``[..., 4, 4]`` -> ``[..., planes, 4, 4]`` float32: plane 0 = empty, plane i = tile 2**i.

    A tile without a plane is an all-zero cell: with ``planes=12`` tiles of 4096 and above, exactly as
    seed 000's ``_binary_tensor``; with the default 16, 65536 and 131072 (``planes=18`` shows them).
    """
    e = exponents[..., None, :, :]
    idx = np.arange(planes, dtype=np.uint8).reshape((planes, 1, 1))
    return (e == idx).astype(np.float32)


def tiles(exponents: np.ndarray) -> np.ndarray:
    """``[..., 4, 4]`` exponents -> tile values int32 (0 = empty)."""
    e = exponents.astype(np.int32)
    return np.where(e > 0, np.left_shift(1, e), 0).astype(np.int32)


def encode_obs(exponents: np.ndarray, obs_mode: str, planes: int) -> np.ndarray:
    """Turn exponents into the observation of ``obs_mode``."""
    if obs_mode == "exponents":
        return exponents
    if obs_mode == "onehot":
        return onehot(exponents, planes)
    return tiles(exponents)
