"""What every torch trainer needs around its loop: devices, run directories, checkpoints, metrics.

A run directory holds ``config.json``, ``meta.json`` (``"agent"`` names the agent that plays it),
``metrics.jsonl``, ``checkpoint.pt`` (everything needed to resume) and ``model.pt`` (the network
spec and weights an agent loads) and, when tensorboard is installed, ``tb/`` (TensorBoard scalars).
Every file is written atomically (the TensorBoard event files are append-only logs).
"""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import torch
from torch import nn

from ai2048.checkpoint import append_jsonl, atomic_write, read_json, read_jsonl, truncate_jsonl, write_json
from ai2048.nets import SeedNet, build_net
from ai2048.nets.files import load_torch_file, torch_bytes
from ai2048.rules import RULES_VERSION
from ai2048.train.config import diff_configs, make_config
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


def start_run(out: Path, config: Any, trainer: str, resume: bool, budget: tuple[str, ...]) -> tuple[Any, dict[str, Any] | None]:
    """Prepare ``out`` for a new run, or load its checkpoint for ``--resume``.

    Returns the config to use and the checkpoint (None for a fresh run). On resume the saved
    config is kept; only the ``budget`` fields (episodes, duration, ...) may differ, and the new
    values are taken.
    """
    out = Path(out)
    ckpt_path = out / "checkpoint.pt"
    resolve_device(config.device)  # a bad or absent device fails before the run directory is touched
    if not resume:
        if ckpt_path.exists() or (out / "metrics.jsonl").exists():
            raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / "config.json", dataclasses.asdict(config))
        return config, None
    if not out.is_dir():
        raise FileNotFoundError(f"cannot resume: {out} does not exist")
    meta = read_json(out / "meta.json", "run metadata") if (out / "meta.json").exists() else None
    if meta is None or meta.get("trainer") != trainer:
        found = "no meta.json" if meta is None else f"a {meta.get('trainer')!r} run"
        raise ValueError(f"cannot resume {out} with trainer {trainer!r}: it holds {found}")
    if not ckpt_path.is_file():
        raise FileNotFoundError(f"cannot resume: {ckpt_path} does not exist (no checkpoint was saved yet)")
    saved = make_config(type(config), **read_json(out / "config.json", "run config"))
    asked = diff_configs(type(config)(), config)
    conflicts = [k for k in asked if k not in budget and getattr(saved, k) != getattr(config, k)]
    if conflicts:
        raise ValueError(
            f"cannot resume {out} with different settings ({', '.join(conflicts)}); "
            f"only {', '.join(budget)} may change on resume"
        )
    merged = dataclasses.replace(saved, **{k: getattr(config, k) for k in asked if k in budget})
    write_json(out / "config.json", dataclasses.asdict(merged))
    return merged, load_checkpoint(ckpt_path, trainer)


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


def write_meta(out: Path, agent: str, trainer: str, progress: dict[str, Any], status: str) -> None:
    """``meta.json``: the agent that plays this run, rules version, progress and status."""
    write_json(
        out / "meta.json",
        {"agent": agent, "trainer": trainer, "rules_version": RULES_VERSION, "format": FORMAT, "status": status, "progress": progress},
    )


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


class Metrics:
    """``metrics.jsonl`` (one record a line) plus TensorBoard scalars in ``out/tb`` when tensorboard is installed.

    Every numeric field of a record becomes a scalar of that name at ``step`` (the record's
    episode or epoch); ``None``, booleans, lists and the step field itself are skipped. On resume
    :meth:`truncate` drops the records written after the checkpoint and rebuilds ``tb/`` from the
    records kept, so the event files hold each step once, exactly as ``metrics.jsonl``.
    """

    def __init__(self, out: Path, tensorboard: bool) -> None:
        self.path = out / "metrics.jsonl"
        self.tb_dir = out / "tb"
        self.enabled = tensorboard and tensorboard_available()
        self.writer: Any = None

    def truncate(self, key: str, last: int) -> None:
        """On resume: drop records written after the checkpoint (``record[key] > last``) and rebuild ``tb/``."""
        truncate_jsonl(self.path, lambda r: r.get(key, 0) <= last)
        if self.enabled:
            shutil.rmtree(self.tb_dir, ignore_errors=True)
            for record in read_jsonl(self.path) if self.path.exists() else []:
                self._scalars(record, int(record[key]), key)

    def log(self, record: dict[str, Any], step: int, step_key: str | None = None) -> None:
        """Append ``record`` to the jsonl file and write its numeric fields (except ``step_key``) as scalars at ``step``."""
        append_jsonl(self.path, record)
        if self.enabled:
            self._scalars(record, step, step_key)

    def _scalars(self, record: dict[str, Any], step: int, step_key: str | None) -> None:
        """One TensorBoard scalar per numeric field of ``record`` at ``step`` (the writer opens on first use)."""
        if self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.tb_dir))
        for k, v in record.items():
            if k != step_key and isinstance(v, (int, float)) and not isinstance(v, bool):
                self.writer.add_scalar(k, v, step)

    def flush(self) -> None:
        """Write pending TensorBoard events (called with every checkpoint, so ``tb/`` keeps up with it)."""
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def tensorboard_available() -> bool:
    """True when ``torch.utils.tensorboard`` can be imported (the ``tensorboard`` package is installed)."""
    try:
        import torch.utils.tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


class GracefulStop:
    """Within ``with``: the first Ctrl-C (SIGINT) or SIGTERM sets ``requested`` so the loop saves and
    stops at a clean point; a second one interrupts at once. (Background jobs ignore SIGINT, so
    SIGTERM is how they are stopped.)"""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> GracefulStop:
        try:
            for sig in self.SIGNALS:
                self._old[sig] = signal.signal(sig, self._handler)
        except ValueError:  # not the main thread: signals cannot reach us anyway
            self._old = {}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}


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


class Deadline:
    """Wall-clock budget in seconds (0 = none), counted across resumes via ``elapsed0``."""

    def __init__(self, seconds: float, elapsed0: float = 0.0) -> None:
        self.seconds = seconds
        self.start = time.monotonic() - elapsed0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def passed(self) -> bool:
        return self.seconds > 0 and self.elapsed >= self.seconds


def finish_run(out: Path, status: str, bar: Any, checkpoint: Any, metrics: Metrics) -> Path:
    """Close the progress bar, write the final checkpoint with ``status`` and the metrics; tell how to resume."""
    bar.close()
    checkpoint(status)
    metrics.close()
    if status == "interrupted":
        print(f"interrupted: checkpoint saved in {out} (continue with --resume)")
    return out
