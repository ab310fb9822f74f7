"""Seed 001's policy-value ResNet (lowrollr/turbozero ``core/resnet.py``, ``TurboZeroResnet``).

Input ``float32 [B, 1, 4, 4]`` exponents. Input block conv(1 -> C, k x k, same, no bias) + BN +
ReLU; ``blocks`` residual blocks (conv-BN-ReLU-conv-BN + skip, ReLU); a policy head and a value
head, each ``head_blocks`` residual blocks -> flatten -> Linear(C_h*16 -> fc, no bias) -> BN1d ->
ReLU -> Linear(fc -> 4 or 1). At the seed config (16 channels, 6 blocks, heads of 3 blocks,
fc 32) this is 72,917 parameters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from ai2048 import checks

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
            checks.whole(f"network {name}", getattr(self, name), 1)
        for name in ("blocks", "head_blocks"):
            checks.whole(f"network {name}", getattr(self, name), 0)
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd (same padding), got {self.kernel_size}")
        if self.value_activation not in VALUE_ACTIVATIONS:
            raise ValueError(
                f"value_activation {self.value_activation!r} unknown; use one of {VALUE_ACTIVATIONS}"
            )

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _conv_bn(cin: int, cout: int, k: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout)]


class ResidualBlock(nn.Module):
    """conv-BN-ReLU-conv-BN, add the input, ReLU."""

    def __init__(self, channels: int, k: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            *_conv_bn(channels, channels, k), nn.ReLU(), *_conv_bn(channels, channels, k)
        )

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


def _dense(conv: Any, bn: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """conv + BN (eval) on a 4x4 board as one affine map on flat [C*16] vectors: (A [in, out], b [out])."""
    cin = conv.in_channels
    basis = torch.eye(cin * 16, device=conv.weight.device).view(cin * 16, cin, 4, 4)
    zero = torch.zeros(1, cin, 4, 4, device=conv.weight.device)
    bias = bn(conv(zero)).flatten(1)
    return (bn(conv(basis)).flatten(1) - bias), bias.squeeze(0)


class FusedPolicyValue(nn.Module):
    """Inference-only copy of a :class:`PolicyValueResNet` where every conv+BN is one matmul.

    On a 4x4 board a same-padded convolution is a linear map of the flattened planes, so the
    whole net becomes a short chain of ``addmm`` calls: the same outputs (to float rounding) at a
    fraction of the per-call cost of small convolutions on a CPU (seed 001's ``fuse()`` in spirit).
    Rebuild it after the weights change.
    """

    def __init__(self, model: PolicyValueResNet) -> None:
        super().__init__()
        was_training = model.training
        model.eval()
        self.cfg = model.cfg
        with torch.no_grad():
            self.trunk = self._layers(model.trunk)
            self.policy = self._layers(model.policy.body)
            self.value = self._layers(model.value.body)
        model.train(was_training)

    @staticmethod
    def _layers(seq: nn.Sequential) -> list[tuple[str, tuple[torch.Tensor, ...]]]:
        """Walk a Sequential into ("affine" | "relu" | "res", matrices) steps."""
        steps: list[tuple[str, tuple[torch.Tensor, ...]]] = []
        mods = list(seq)
        i = 0
        while i < len(mods):
            m = mods[i]
            if isinstance(m, nn.Conv2d):
                steps.append(("affine", _dense(m, mods[i + 1])))
                i += 2
                continue
            if isinstance(m, ResidualBlock):
                b = list(m.body)
                steps.append(("res", (*_dense(b[0], b[1]), *_dense(b[3], b[4]))))
            elif isinstance(m, nn.ReLU):
                steps.append(("relu", ()))
            elif isinstance(m, nn.Linear):
                w: torch.Tensor = m.weight.t()
                bias: torch.Tensor = (
                    m.bias if m.bias is not None else torch.zeros(m.out_features, device=w.device)
                )
                bn = mods[i + 1] if i + 1 < len(mods) else None
                if isinstance(bn, nn.BatchNorm1d):
                    assert bn.running_var is not None and bn.running_mean is not None
                    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
                    w = w * scale
                    bias = (bias - bn.running_mean) * scale + bn.bias
                    i += 1
                steps.append(("affine", (w.clone(), bias.clone())))
            i += 1
        return steps

    @staticmethod
    def _run(steps: list[tuple[str, tuple[torch.Tensor, ...]]], x: torch.Tensor) -> torch.Tensor:
        for kind, t in steps:
            if kind == "affine":
                x = torch.addmm(t[1], x, t[0])
            elif kind == "relu":
                x = torch.relu(x)
            else:
                h = torch.relu(torch.addmm(t[1], x, t[0]))
                x = torch.relu(x + torch.addmm(t[3], h, t[2]))
        return x

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """[B, 1, 4, 4] -> (policy logits [B, 4], value [B]), as the eval-mode ResNet."""
        with torch.no_grad():
            h = self._run(self.trunk, x.reshape(x.shape[0], 16))
            logits = self._run(self.policy, h)
            v = self._run(self.value, h).squeeze(1)
        act = self.cfg.value_activation
        if act == "tanh0to1":
            v = (torch.tanh(v) + 1) / 2
        elif act == "tanh":
            v = torch.tanh(v)
        elif act == "relu":
            v = torch.relu(v)
        elif act == "sigmoid":
            v = torch.sigmoid(v)
        return logits, v
