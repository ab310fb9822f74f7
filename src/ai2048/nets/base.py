"""``SeedNet``: what the trainers and agents need from a network besides ``forward``."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class SeedNet(nn.Module):
    """A network that encodes its own input from exponents and names the weights its L2 term covers."""

    def encode(self, exps: np.ndarray) -> torch.Tensor:
        """[B, 16] uint8 exponents (row-major, 0 = empty) -> the network's input tensor."""
        raise NotImplementedError

    def l2_weights(self) -> list[torch.Tensor]:
        """The tensors of the L2 term: every Linear weight (seed 000's hooks covered exactly these)."""
        return [m.weight for m in self.modules() if isinstance(m, nn.Linear)]
