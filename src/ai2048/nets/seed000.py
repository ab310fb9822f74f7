"""Seed 000's Q-networks (Pasianotto & Paglierani 2023, ``modules/architectures.py``), layer for layer.

Input: one-hot planes ``[B, 1, planes, 4, 4]`` (plane 0 = empty, plane i = tile 2**i). The seed
uses 12 planes, so tiles >= 4096 vanish; ai2048 defaults to 16. The Conv3d kernel ``(2, 4, 4)``
slides over pairs of adjacent tile-value planes (``planes - 1`` positions), so it compares
consecutive powers of two rather than neighbouring cells. Parameter counts at 12 planes:
ConvolutionalNetwork 21,741; BigConvolutionalNetwork 211,216; fc_QNet 41,732. The early
fully-connected variants of the seed's history (``Small_QNet``, ``DQN_3Ls_128``, ``DQN_4Ls_256_BN``,
``DQN_5Ls_N_neurons_BN``) are here too, on the flattened one-hot board.

The seed's L2 term was gradient hooks ``grad + l2 * W`` on the Linear weights; here
:meth:`l2_weights` lists the same tensors so the trainer adds a real ``λ/2 Σ‖W‖²`` to the loss
(identical gradient, and the loss reports it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ai2048.nets.base import SeedNet


def onehot_planes(exps: np.ndarray, planes: int) -> torch.Tensor:
    """[B, 16] uint8 exponents -> [B, planes, 4, 4] float32 one-hot (exponents >= planes: all zero)."""
    e = torch.from_numpy(np.ascontiguousarray(exps, dtype=np.uint8)).long().view(-1, 1, 4, 4)
    idx = torch.arange(planes).view(1, planes, 1, 1)
    return (e == idx).float()


class _OneHotNet(SeedNet):
    planes: int

    def encode(self, exps: np.ndarray) -> torch.Tensor:
        """[B, 16] exponents -> the network's input ``[B, 1, planes, 4, 4]``."""
        return onehot_planes(exps, self.planes).unsqueeze(1)


class ConvolutionalNetwork(_OneHotNet):
    """Conv3d(1→C, (2,4,4)) → ReLU → BatchNorm3d(C) → Linear(C·(P−1)→n_fc) → ReLU →
    Linear(n_fc→n_fc) → BatchNorm1d → ReLU → Linear(n_fc→4)."""

    def __init__(self, planes: int = 16, out_channels: int = 3, n_fc: int = 128) -> None:
        super().__init__()
        self.planes, self.out_channels = planes, out_channels
        self.conv = nn.Conv3d(1, out_channels, kernel_size=(2, 4, 4))
        self.bnc = nn.BatchNorm3d(out_channels)
        self.fc = nn.Linear((planes - 1) * out_channels, n_fc)
        self.fc2 = nn.Linear(n_fc, n_fc)
        self.bn1 = nn.BatchNorm1d(n_fc)
        self.fc3 = nn.Linear(n_fc, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, 1, P, 4, 4] -> [B, 4] action values."""
        x = self.bnc(F.relu(self.conv(x))).flatten(1)
        x = F.relu(self.fc(x))
        x = F.relu(self.bn1(self.fc2(x)))
        return self.fc3(x)


class BigConvolutionalNetwork(_OneHotNet):
    """The seed's "baseline": Conv3d(1→C, (2,4,4)) → ReLU → BatchNorm3d → Linear(→2n) → BN → ReLU →
    Linear(→4n) → BN → ReLU → Linear(→n) → BN → ReLU → Linear(→4), n = n_fc."""

    def __init__(self, planes: int = 16, out_channels: int = 4, n_fc: int = 128) -> None:
        super().__init__()
        self.planes, self.out_channels = planes, out_channels
        self.conv = nn.Conv3d(1, out_channels, kernel_size=(2, 4, 4))
        self.bnc = nn.BatchNorm3d(out_channels)
        self.fc = nn.Linear((planes - 1) * out_channels, 2 * n_fc)
        self.bn1 = nn.BatchNorm1d(2 * n_fc)
        self.fc2 = nn.Linear(2 * n_fc, 4 * n_fc)
        self.bn2 = nn.BatchNorm1d(4 * n_fc)
        self.fc3 = nn.Linear(4 * n_fc, n_fc)
        self.bn3 = nn.BatchNorm1d(n_fc)
        self.fc4 = nn.Linear(n_fc, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, 1, P, 4, 4] -> [B, 4] action values."""
        x = self.bnc(F.relu(self.conv(x))).flatten(1)
        x = F.relu(self.bn1(self.fc(x)))
        x = F.relu(self.bn2(self.fc2(x)))
        x = F.relu(self.bn3(self.fc3(x)))
        return self.fc4(x)


class FcQNet(_OneHotNet):
    """Seed 000's ``fc_QNet``: flatten → [Linear → ReLU] × n_layers (n_layers Linear layers in all).

    ``output_relu=True`` keeps the seed's ReLU after the output layer (so Q >= 0); set it False
    for a plain linear output.
    """

    def __init__(
        self, planes: int = 16, n_layers: int = 3, n_neurons: int = 128, output_relu: bool = True
    ) -> None:
        super().__init__()
        if n_layers < 2:
            raise ValueError(f"fc_QNet needs n_layers >= 2 (input and output layers), got {n_layers}")
        self.planes, self.output_relu = planes, output_relu
        sizes = [planes * 16] + [n_neurons] * (n_layers - 1) + [4]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True))

    def encode(self, exps: np.ndarray) -> torch.Tensor:
        """[B, 16] exponents -> [B, planes * 16] flattened one-hot."""
        return onehot_planes(exps, self.planes).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, planes * 16] -> [B, 4] action values."""
        x = x.flatten(1)
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1 or self.output_relu:
                x = F.relu(x)
        return x


class _FlatNet(_OneHotNet):
    """Seed 000's early fully-connected Q-networks (history commit ``22de602``): their input is the
    flattened one-hot board, ``[B, planes * 16]`` (the seed's ``n_observations = 12 * 4 * 4``)."""

    hidden: nn.ModuleList
    norms: nn.ModuleList
    out: nn.Linear

    def encode(self, exps: np.ndarray) -> torch.Tensor:
        """[B, 16] exponents -> [B, planes * 16] flattened one-hot."""
        return onehot_planes(exps, self.planes).flatten(1)

    def _stack(self, x: torch.Tensor, act: Any) -> torch.Tensor:
        x = x.flatten(1)
        for layer, norm in zip(self.hidden, self.norms, strict=True):
            x = act(norm(layer(x)))
        return self.out(x)


class SmallQNet(_FlatNet):
    """``Small_QNet``: Linear(P·16 → n) → ReLU → Linear(n → 4)."""

    def __init__(self, planes: int = 16, n_neurons: int = 128) -> None:
        super().__init__()
        self.planes = planes
        self.hidden = nn.ModuleList([nn.Linear(planes * 16, n_neurons)])
        self.norms = nn.ModuleList([nn.Identity()])
        self.out = nn.Linear(n_neurons, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, planes * 16] -> [B, 4] action values."""
        return self._stack(x, F.relu)


class DQN3Ls128(_FlatNet):
    """``DQN_3Ls_128``: Linear(P·16 → 128) → ReLU → Linear(128 → 128) → ReLU → Linear(128 → 4)."""

    def __init__(self, planes: int = 16) -> None:
        super().__init__()
        self.planes = planes
        self.hidden = nn.ModuleList([nn.Linear(planes * 16, 128), nn.Linear(128, 128)])
        self.norms = nn.ModuleList([nn.Identity(), nn.Identity()])
        self.out = nn.Linear(128, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, planes * 16] -> [B, 4] action values."""
        return self._stack(x, F.relu)


class DQN4Ls256BN(_FlatNet):
    """``DQN_4Ls_256_BN``: [Linear(→ 256) → BatchNorm1d → ReLU] × 3 → Linear(256 → 4)."""

    def __init__(self, planes: int = 16) -> None:
        super().__init__()
        self.planes = planes
        self.hidden = nn.ModuleList([nn.Linear(planes * 16, 256), nn.Linear(256, 256), nn.Linear(256, 256)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(256) for _ in range(3)])
        self.out = nn.Linear(256, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, planes * 16] -> [B, 4] action values."""
        return self._stack(x, F.relu)


class DQN5LsBN(_FlatNet):
    """``DQN_5Ls_N_neurons_BN``: [Linear(→ n) → BatchNorm1d → LeakyReLU(0.01)] × 4 → Linear(n → 4).

    The seed's class calls ``super(DQN_4Ls_256_BN, self).__init__()`` and so cannot be built at all;
    this is the network its layers describe.
    """

    def __init__(self, planes: int = 16, n_neurons: int = 256) -> None:
        super().__init__()
        self.planes = planes
        sizes = [planes * 16] + [n_neurons] * 4
        self.hidden = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:], strict=True))
        self.norms = nn.ModuleList([nn.BatchNorm1d(n_neurons) for _ in range(4)])
        self.out = nn.Linear(n_neurons, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """[B, planes * 16] -> [B, 4] action values."""
        return self._stack(x, F.leaky_relu)
