"""Seed 003's Q-network (CS541 "Solving the game of 2048 with AI", section V), in both readings.

The seed's Keras table is 16 → Dense 128 → LeakyReLU(0.001) → Dropout(0.125) → Dense 32 →
LeakyReLU → Dense 8 → LeakyReLU → Dense 1 (6,577 parameters), yet its text says the output is
"a vector of size 4 ... Q value after taking 4 different actions". Both readings are here:

- ``outputs=4`` ("q"): Q(s, ·) over the four moves of the board (6,604 parameters);
- ``outputs=1`` ("v"): V of an after-state; a move is scored by its reward plus the value of
  the board it leaves (6,577 parameters, the table exactly).

Input: the 16 exponents scaled by 1/15 (the seed feeds "all tiles value"; raw tile values up to
32768 would swamp the LeakyReLU layers, so ai2048 uses their log2).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ai2048.nets.base import SeedNet


class Seed003Net(SeedNet):
    """16 → 128 → 32 → 8 → ``outputs`` with LeakyReLU(``slope``) and Dropout(``dropout``) after the first
    layer."""

    def __init__(
        self,
        outputs: int = 4,
        hidden: tuple[int, ...] = (128, 32, 8),
        slope: float = 0.001,
        dropout: float = 0.125,
    ) -> None:
        super().__init__()
        if outputs not in (1, 4):
            raise ValueError(f"outputs must be 4 (Q over moves) or 1 (after-state value), got {outputs}")
        layers: list[nn.Module] = []
        size = 16
        for i, h in enumerate(hidden):
            layers += [nn.Linear(size, h), nn.LeakyReLU(slope)]
            if i == 0 and dropout > 0:
                layers.append(nn.Dropout(dropout))
            size = h
        layers.append(nn.Linear(size, outputs))
        self.net = nn.Sequential(*layers)
        self.outputs = outputs

    def encode(self, exps: np.ndarray) -> torch.Tensor:
        """[B, 16] exponents -> [B, 16] float32 exponents / 15."""
        return torch.from_numpy(np.asarray(exps, dtype=np.float32) / 15.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, 16] -> [B, outputs]."""
        return self.net(x)
