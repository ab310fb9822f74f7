"""The one reader of a torch device name, for every torch user (envs, searches, agents, trainers)."""

from __future__ import annotations

import torch

DEVICE_NAMES = "'cpu', 'cuda', 'cuda:N', 'auto'"


def resolve_device(device: str | torch.device) -> torch.device:
    """``"auto"`` -> CUDA when torch sees it, else CPU; ``"cpu"``, ``"cuda"``, ``"cuda:N"`` checked to exist.

    Raises:
        TypeError: ``device`` is neither a string nor a ``torch.device``.
        ValueError: an unknown name, or a CUDA device this machine does not have (the message
            says which names work).
    """
    if isinstance(device, torch.device):
        spec = str(device)
    elif isinstance(device, str):
        spec = device.strip().lower()
    else:
        raise TypeError(
            f"device must be a string such as 'cpu', 'cuda' or 'auto', got {type(device).__name__}"
        )
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(spec)
    except RuntimeError:
        dev = None
    if dev is None or dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device={device!r} is not one of {DEVICE_NAMES} (unknown device)")
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={device!r} was asked for but torch sees no CUDA device "
                f"(torch {torch.__version__}); use device='cpu' or device='auto'"
            )
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"device={device!r} does not exist: torch sees {torch.cuda.device_count()} CUDA device(s)"
            )
    return dev
