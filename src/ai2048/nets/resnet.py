"""Seed 001's policy-value ResNet (lowrollr/turbozero ``core/resnet.py``, ``TurboZeroResnet``).

Input ``float32 [B, 1, 4, 4]`` exponents. Input block conv(1 -> C, k x k, same, no bias) + BN +
ReLU; ``blocks`` residual blocks (conv-BN-ReLU-conv-BN + skip, ReLU); a policy head and a value
head, each ``head_blocks`` residual blocks -> flatten -> Linear(C_h*16 -> fc, no bias) -> BN1d ->
ReLU -> Linear(fc -> 4 or 1). At the seed config (16 channels, 6 blocks, heads of 3 blocks,
fc 32) this is 72,917 parameters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

VALUE_ACTIVATIONS = ("none", "tanh0to1", "tanh", "relu", "sigmoid")


@dataclass(frozen=True)
class ResNetConfig:
    """Sizes of :class:`PolicyValueResNet` (seed 001's ``ResNetConfig`` without the fixed shapes)."""

    channels: int = 16
    blocks: int = 6
    head_channels: int = 16
    head_blocks: int = 3
    kernel_size: int = 3
    policy_fc: int = 32
    value_fc: int = 32
    value_activation: str = "none"

    def __post_init__(self) -> None:
        for name in ("channels", "head_channels", "policy_fc", "value_fc", "kernel_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"network {name} must be a positive int, got {v!r}")
        for name in ("blocks", "head_blocks"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 0:
                raise ValueError(f"network {name} must be an int >= 0, got {v!r}")
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd (same padding), got {self.kernel_size}")
        if self.value_activation not in VALUE_ACTIVATIONS:
            raise ValueError(f"value_activation {self.value_activation!r} unknown; use one of {VALUE_ACTIVATIONS}")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _conv_bn(cin: int, cout: int, k: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout)]


class ResidualBlock(nn.Module):
    """conv-BN-ReLU-conv-BN, add the input, ReLU."""

    def __init__(self, channels: int, k: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*_conv_bn(channels, channels, k), nn.ReLU(), *_conv_bn(channels, channels, k))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.body(x))


class _Head(nn.Module):
    def __init__(self, cfg: ResNetConfig, fc: int, out: int) -> None:
        super().__init__()
        c, k = cfg.head_channels, cfg.kernel_size
        proj: list[nn.Module] = [] if c == cfg.channels else [*_conv_bn(cfg.channels, c, 1), nn.ReLU()]
        self.body = nn.Sequential(
            *proj,
            *[ResidualBlock(c, k) for _ in range(cfg.head_blocks)],
            nn.Flatten(),
            nn.Linear(c * 16, fc, bias=False),
            nn.BatchNorm1d(fc),
            nn.ReLU(),
            nn.Linear(fc, out),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class PolicyValueResNet(nn.Module):
    """``[B, 1, 4, 4]`` exponents -> (policy logits ``[B, 4]`` in ai2048 order, value ``[B]``)."""

    def __init__(self, cfg: ResNetConfig | None = None) -> None:
        super().__init__()
        self.cfg = cfg or ResNetConfig()
        c, k = self.cfg.channels, self.cfg.kernel_size
        self.trunk = nn.Sequential(
            *_conv_bn(1, c, k), nn.ReLU(), *[ResidualBlock(c, k) for _ in range(self.cfg.blocks)]
        )
        self.policy = _Head(self.cfg, self.cfg.policy_fc, 4)
        self.value = _Head(self.cfg, self.cfg.value_fc, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.trunk(x)
        v = self.value(h).squeeze(1)
        act = self.cfg.value_activation
        if act == "tanh0to1":
            v = (torch.tanh(v) + 1) / 2
        elif act == "tanh":
            v = torch.tanh(v)
        elif act == "relu":
            v = torch.relu(v)
        elif act == "sigmoid":
            v = torch.sigmoid(v)
        return self.policy(h), v


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (the seed's figure: 72,917 at the default config)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
