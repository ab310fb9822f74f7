"""What the torch trainers (dqn, qnet, policy, lazyzero) add to :mod:`ai2048.train.run`: the start of a
run on its device (:func:`start_torch`), torch files.

Their run directories hold, besides the files every run has, ``checkpoint.pt`` (everything needed
to resume) and ``model.pt`` (the network spec and weights an agent loads; LazyZero's holds the
weights only, its sizes are in ``config.json``). Both are written atomically and read with
``weights_only=True``.
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
from ai2048.nets.device import resolve_device
from ai2048.nets.files import MODEL_FORMAT, load_torch_file, load_weights, torch_bytes
from ai2048.train import Trainer
from ai2048.train.config import TorchRunConfig
from ai2048.train.games import BoardBatch
from ai2048.train.run import RunDir, start

CHECKPOINT_FORMAT = 1
"""``format`` of the ``checkpoint.pt`` files; ``model.pt`` files carry :data:`MODEL_FORMAT`."""


def start_torch(
    out: Path, config: TorchRunConfig, trainer: Trainer, resume: bool, opened: RunDir | None = None
) -> tuple[bool, torch.device, np.random.Generator]:
    """The start of every torch trainer's ``run()``: :func:`~ai2048.train.run.start` on the config's
    device, with torch's CPU threads and seed set from the config; returns (whether the run resumes,
    the device, a numpy generator seeded with ``config.seed``); ``opened`` as :func:`~ai2048.train.run.start`
    takes it.

    The device is read first, so a bad or absent one (``device="tpu"``, ``"cuda"`` without CUDA) fails
    before the run directory is touched.
    """
    device = resolve_device(config.device)
    resumed = start(out, config, trainer, resume, opened)
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    return resumed, device, np.random.default_rng(config.seed)


@contextlib.contextmanager
def flushed_denormals() -> Iterator[bool]:
    """Within ``with``: denormal floats are flushed to zero (x86 FTZ/DAZ); yields whether the CPU
    can. The flag is the thread's floating-point state, so it is cleared on the way out: code that
    runs after a training run (other tests, hypothesis, numba kernels) sees IEEE arithmetic again.

    AMSGrad keeps the largest second moment, so for weights that stop getting a gradient (one-hot
    inputs of tiles never seen, whose only gradient is the L2 term) the first moment and then
    the weight shrink geometrically into the denormal range: an fc DQN held 37,942 denormal
    optimizer entries and 36,720 denormal weights after 12,000 steps. Arithmetic on denormals is
    slow on many x86 CPUs (measurements in docs/deeprl.md); values below 1.2e-38 change no Q-value.
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
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path} is not an ai2048 checkpoint of format {CHECKPOINT_FORMAT}")
    if ckpt.get("trainer") != trainer:
        raise ValueError(f"{path} was written by trainer {ckpt.get('trainer')!r}, not {trainer!r}")
    return ckpt


class TorchCheckpoint:
    """``checkpoint.pt``: ``torch.save`` of ``{**header, **state}`` written atomically, read with
    ``weights_only=True`` (:class:`ai2048.train.run.CheckpointFile`).

    ``header`` is what the file says about itself (``format``, ``trainer``, ``net``: the network
    spec); reading checks it against the run's, so a checkpoint of another trainer or network is
    refused with what differs. Without a header (LazyZero's layout) the file is read as ``what``.
    """

    def __init__(self, header: dict[str, Any], what: str = "ai2048 checkpoint", map_location: Any = "cpu"):
        self.header, self.what, self.map_location = header, what, map_location

    def write(self, path: Path, state: dict[str, Any]) -> None:
        torch_save(path, {**self.header, **state})

    def read(self, path: Path) -> dict[str, Any]:
        if "trainer" not in self.header:
            ckpt = load_torch_file(path, self.what, self.map_location)
            if not isinstance(ckpt, dict):
                raise ValueError(f"{path} is not a {self.what}")
            return ckpt
        ckpt = load_checkpoint(path, self.header["trainer"])
        spec, saved = self.header.get("net"), ckpt.get("net")
        if spec is not None and saved != spec:
            keys = sorted(set(spec) | set(saved or {}))
            diff = ", ".join(f"{k}: checkpoint {(saved or {}).get(k)!r} vs config {spec.get(k)!r}"
                             for k in keys if (saved or {}).get(k) != spec.get(k))
            raise ValueError(f"{path} holds a different network ({diff})")
        return ckpt


class Weights:
    """A network as a tracked state whose restore checks the saved tensors' names and shapes first
    (:func:`ai2048.nets.files.check_state`), so a damaged checkpoint names what is wrong."""

    def __init__(self, net: nn.Module, spec: dict[str, Any], where: str) -> None:
        self.net, self.spec, self.where = net, spec, where

    def state_dict(self) -> dict[str, Any]:
        return self.net.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        load_weights(self.net, self.spec, self.spec, state, self.where)


class RngState:
    """The trainer's numpy generator and torch's global generator as one tracked state
    (``{"numpy", "torch"}``): restored, the random streams continue exactly."""

    def __init__(self, gen: np.random.Generator) -> None:
        self.gen = gen

    def state_dict(self) -> dict[str, Any]:
        return rng_state(self.gen)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        set_rng_state(self.gen, state)


class GeneratorState:
    """A ``torch.Generator`` as a tracked state (its ``get_state()`` tensor, restored from the CPU copy)."""

    def __init__(self, gen: torch.Generator) -> None:
        self.gen = gen

    def state_dict(self) -> torch.Tensor:
        return self.gen.get_state()

    def load_state_dict(self, state: torch.Tensor) -> None:
        self.gen.set_state(state.cpu())


def save_model(
    out: Path, kind: str, spec: dict[str, Any], net: nn.Module, extra: dict[str, Any] | None = None
) -> None:
    """Write ``model.pt``: what an agent needs to play (network spec and CPU weights)."""
    state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
    model = {"format": MODEL_FORMAT, "kind": kind, "net": spec, "state_dict": state, **(extra or {})}
    torch_save(out / "model.pt", model)


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


VALIDATION_SEED = 1_000_003
"""Validation games are ``BoardBatch(games, seed + VALIDATION_SEED)``: never the training games nor
the games of ``ai2048 eval``."""


def greedy_mean_score(values: Callable[[np.ndarray], np.ndarray], games: int, seed: int) -> float:
    """Mean score of a fixed set of ``games`` games (named by ``seed``) played by the best legal move
    of ``values``.

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
