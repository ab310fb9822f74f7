"""Torch networks. The deep RL seeds' nets (000, 002, 003) are built by name from a spec.

A spec ``{"name": ..., **kwargs}`` is stored in every checkpoint, so a run directory rebuilds
its own network and a checkpoint from another network is refused with the difference named.
This package imports torch: nothing outside the torch trainers and agents imports it.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from ai2048.nets.base import SeedNet
from ai2048.nets.seed000 import (
    BigConvolutionalNetwork,
    ConvolutionalNetwork,
    DQN3Ls128,
    DQN4Ls256BN,
    DQN5LsBN,
    FcQNet,
    SmallQNet,
    onehot_planes,
)
from ai2048.nets.seed002 import PolicyMLP
from ai2048.nets.seed003 import Seed003Net

NETS: dict[str, type[SeedNet]] = {
    "conv": ConvolutionalNetwork,
    "bigconv": BigConvolutionalNetwork,
    "fc": FcQNet,
    "small_qnet": SmallQNet,
    "dqn_3ls_128": DQN3Ls128,
    "dqn_4ls_256_bn": DQN4Ls256BN,
    "dqn_5ls_bn": DQN5LsBN,
    "seed003": Seed003Net,
    "policy": PolicyMLP,
}

__all__ = [
    "NETS",
    "BigConvolutionalNetwork",
    "ConvolutionalNetwork",
    "DQN3Ls128",
    "DQN4Ls256BN",
    "DQN5LsBN",
    "FcQNet",
    "PolicyMLP",
    "Seed003Net",
    "SeedNet",
    "SmallQNet",
    "build_net",
    "count_params",
    "onehot_planes",
]


def build_net(spec: dict[str, Any]) -> SeedNet:
    """Build the network a spec names; unknown names or keyword arguments raise ValueError."""
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in NETS:
        raise ValueError(f"unknown network {name!r}; available: {', '.join(NETS)}")
    try:
        return NETS[name](**spec)
    except TypeError as e:
        raise ValueError(f"bad arguments for network {name!r}: {e}") from e


def count_params(net: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in net.parameters() if p.requires_grad)
