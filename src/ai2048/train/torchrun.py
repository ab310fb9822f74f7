"""What the torch trainers (dqn, qnet, policy) add to :mod:`ai2048.train.run`: devices, torch files.

Their run directories hold, besides the files every run has, ``checkpoint.pt`` (everything needed
to resume) and ``model.pt`` (the network spec and weights an agent loads). Both are written
atomically and read with ``weights_only=True``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ai2048.checkpoint import atomic_write
from ai2048.nets import SeedNet, build_net
from ai2048.nets.files import load_torch_file, torch_bytes
from ai2048.train.games import BoardBatch

FORMAT = 1


def resolve_device(name: str) -> torch.device:
    """``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (CUDA when present) -> a usable device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if isinstance(name, str) and name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ValueError(
                f"device={name!r} was asked for but torch sees no CUDA device "
                f"(torch {torch.__version__}); use device='cpu' or device='auto'"
            )
        dev = torch.device(name)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={name!r}: only {torch.cuda.device_count()} CUDA device(s) present")
        return dev
    raise ValueError(f"device={name!r} is not one of 'cpu', 'cuda', 'cuda:N', 'auto'")


@contextlib.contextmanager
def flushed_denormals() -> Iterator[bool]:
    """Within ``with``: denormal floats are flushed to zero (x86 FTZ/DAZ); yields whether the CPU
    can. The flag is the thread's floating-point state, so it is cleared on the way out: code that
    runs after a training run (other tests, hypothesis, numba kernels) sees IEEE arithmetic again.

    AMSGrad keeps the largest second moment, so for weights that stop getting a gradient (one-hot
    inputs of tiles never seen, whose only gradient is the L2 term) the first moment and then
    the weight shrink geometrically into the denormal range: an fc DQN held 37,942 denormal
    optimizer entries and 36,720 denormal weights after 12,000 steps. Arithmetic on denormals is
    slow on many x86 CPUs (an earlier session's fc runs fell from ~100 to ~24 gradient steps/s;
    on this project's current AMD EPYC it costs nothing); values below 1.2e-38 change no Q-value.
    """
    ok = torch.set_flush_denormal(True)
    try:
        yield ok
    finally:
        torch.set_flush_denormal(False)


def torch_save(path: Path, obj: Any) -> None:
    """``torch.save`` to ``path`` atomically (temp file + rename); numpy arrays are stored as tensors so
    that :func:`ai2048.nets.files.load_torch_file` reads the file with ``weights_only=True``."""
    data = torch_bytes(obj)
    atomic_write(path, lambda f: f.write(data))


def load_checkpoint(path: Path, trainer: str) -> dict[str, Any]:
    """Load ``checkpoint.pt`` and check it comes from ``trainer``."""
    ckpt = load_torch_file(path, "ai2048 checkpoint")
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"{path} is not an ai2048 checkpoint of format {FORMAT}")
    if ckpt.get("trainer") != trainer:
        raise ValueError(f"{path} was written by trainer {ckpt.get('trainer')!r}, not {trainer!r}")
    return ckpt


def load_weights(net: nn.Module, spec: dict[str, Any], saved_spec: dict[str, Any], state: dict[str, Any], where: str) -> None:
    """Load ``state`` into ``net``; a checkpoint of another network raises naming what differs."""
    if saved_spec != spec:
        keys = sorted(set(spec) | set(saved_spec))
        diff = ", ".join(f"{k}: checkpoint {saved_spec.get(k)!r} vs config {spec.get(k)!r}" for k in keys if saved_spec.get(k) != spec.get(k))
        raise ValueError(f"{where} holds a different network ({diff})")
    own = net.state_dict()
    missing = sorted(set(own) - set(state))
    extra = sorted(set(state) - set(own))
    shapes = [k for k in own if k in state and tuple(own[k].shape) != tuple(state[k].shape)]
    if missing or extra or shapes:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing[:5])}")
        if extra:
            parts.append(f"unexpected {', '.join(extra[:5])}")
        if shapes:
            parts.append("shape of " + ", ".join(f"{k} {tuple(state[k].shape)} != {tuple(own[k].shape)}" for k in shapes[:5]))
        raise ValueError(f"{where} does not fit network {spec.get('name')!r}: {'; '.join(parts)}")
    net.load_state_dict(state)


def save_model(out: Path, kind: str, spec: dict[str, Any], net: nn.Module, extra: dict[str, Any] | None = None) -> None:
    """Write ``model.pt``: what an agent needs to play (network spec and CPU weights)."""
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    torch_save(out / "model.pt", {"format": FORMAT, "kind": kind, "net": spec, "state_dict": state, **(extra or {})})


def load_model(run: str | Path, kind: str, device: str = "cpu") -> tuple[SeedNet, dict[str, Any]]:
    """Rebuild the network of a run directory written by trainer ``kind``; returns (net in eval mode, payload)."""
    run = Path(run)
    path = run / "model.pt" if run.is_dir() else run
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist: {run} holds no trained {kind} model yet")
    payload = load_torch_file(path, "ai2048 model file")
    if not isinstance(payload, dict) or payload.get("format") != FORMAT or "net" not in payload:
        raise ValueError(f"{path} is not an ai2048 model file of format {FORMAT}")
    if payload.get("kind") != kind:
        raise ValueError(f"{path} holds a {payload.get('kind')!r} model, not a {kind!r} model")
    net = build_net(payload["net"])
    load_weights(net, payload["net"], payload["net"], payload["state_dict"], str(path))
    dev = resolve_device(device)
    return net.to(dev).eval(), payload


def soft_update(target: nn.Module, source: nn.Module, tau: float) -> None:
    """θ' ← (1 − τ) θ' + τ θ for parameters and float buffers (BatchNorm statistics); others are copied."""
    with torch.no_grad():
        for tp, sp in zip(target.parameters(), source.parameters(), strict=True):
            tp.lerp_(sp, tau)
        for tb, sb in zip(target.buffers(), source.buffers(), strict=True):
            if tb.is_floating_point():
                tb.lerp_(sb, tau)
            else:
                tb.copy_(sb)


def rng_state(gen: np.random.Generator) -> dict[str, Any]:
    """Everything needed to continue the trainer's random streams exactly."""
    return {"numpy": gen.bit_generator.state, "torch": torch.get_rng_state()}


def set_rng_state(gen: np.random.Generator, state: dict[str, Any]) -> None:
    gen.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])


VALIDATION_SEED = 1_000_003  # validation games: BoardBatch(games, seed + this), never the training or `ai2048 eval` games


def greedy_mean_score(values: Callable[[np.ndarray], np.ndarray], games: int, seed: int) -> float:
    """Mean score of a fixed set of ``games`` games (named by ``seed``) played by the best legal move of ``values``.

    ``values`` maps [N] boards to [N, 4] move values (the agent's own rule). The games run side by
    side on the numba kernels; each slot counts its first game only. Used for model selection on
    held-out games (validation), so the evaluation's games stay untouched.
    """
    batch = BoardBatch(games, seed)
    result = np.full(games, -1.0)
    while (result < 0).any():
        v = np.asarray(values(batch.boards), dtype=np.float64)
        st = batch.step(np.where(batch.masks, v, -np.inf).argmax(axis=1))
        for i, game in zip(np.flatnonzero(st.done).tolist(), batch.restart(st.done), strict=True):
            if result[i] < 0:
                result[i] = game["score"]
    return float(result.mean())
