"""Seed 002's policy network (Paige McKenzie, "Playing 2048 with AI – pt. 2", 2019).

``Sequential(Linear(16→J), ReLU, Linear(J→K), ReLU, Linear(K→4), Softmax)``; the text's J=200,
K=100 give 23,904 parameters (the repository's code used J=50). Input is the seed's
``transform(layout) = log2(max(layout, 1))/11 − 0.25``, i.e. exponent/11 − 0.25. Outputs are
move probabilities in ai2048's action order (UP, RIGHT, DOWN, LEFT).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ai2048.nets.base import SeedNet


class PolicyMLP(SeedNet):
    """16 → J → K → 4 softmax MLP (float32)."""

    def __init__(self, hidden_j: int = 200, hidden_k: int = 100) -> None:
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(16, hidden_j),
            nn.ReLU(),
            nn.Linear(hidden_j, hidden_k),
            nn.ReLU(),
            nn.Linear(hidden_k, 4),
            nn.Softmax(dim=1),
        )

    def encode(self, exps: np.ndarray) -> torch.Tensor:
        """[B, 16] exponents -> [B, 16] float32 ``exponent / 11 − 0.25`` (seed 002's transform)."""
        return torch.from_numpy(np.asarray(exps, dtype=np.float32) / 11.0 - 0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, 16] -> [B, 4] move probabilities."""
        return self.model(x)
