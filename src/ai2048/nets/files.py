"""Reading and writing torch files without ever running code from them.

``torch.load`` unpickles, and a pickle can call any Python function (``os.system``), so a model
file from elsewhere (a downloaded run directory, a path typed into a web form) could run code the
moment it is loaded. Every torch file ai2048 reads goes through :func:`load_torch_file`, which
uses ``weights_only=True``: tensors, dicts, lists, tuples, strings and numbers, nothing else.

:func:`torch_bytes` writes only such data too: numpy arrays become tensors tagged
``{"__ndarray__": tensor}`` and numpy scalars become Python numbers, and :func:`load_torch_file`
turns the tags back into arrays. Checkpoints written before this held numpy arrays directly; they
still load because numpy's array reconstruction is allowed as well (torch's documented allowlist
for numpy arrays; the array's contents are still read by the restricted unpickler).
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ai2048.checkpoint import check_regular_file
from ai2048.nets import SeedNet, build_net
from ai2048.nets.device import resolve_device

NDARRAY_TAG = "__ndarray__"

_NUMERIC_DTYPES = "?bBhHiIlLqQefdgFD"


def _numpy_array_globals() -> list[Any]:
    """What numpy's ``ndarray.__reduce__`` names: ``_reconstruct``, ``ndarray``, ``dtype`` and the numeric
    dtype classes."""
    from numpy._core.multiarray import _reconstruct

    classes = {type(np.dtype(c)) for c in _NUMERIC_DTYPES}
    return [_reconstruct, np.ndarray, np.dtype, *sorted(classes, key=lambda c: c.__name__)]


def to_plain(obj: Any) -> Any:
    """``obj`` with numpy arrays as tagged tensors, numpy scalars as numbers and dataclasses as dicts."""
    if isinstance(obj, torch.Tensor):
        return obj
    if isinstance(obj, np.ndarray):
        if obj.dtype.char not in _NUMERIC_DTYPES:
            raise TypeError(
                f"cannot save a numpy array of dtype {obj.dtype} in a torch file (numbers and bools only)"
            )
        return {NDARRAY_TAG: torch.from_numpy(np.array(obj, copy=True, order="C"))}
    if isinstance(obj, np.generic):
        return obj.item()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return to_plain(dataclasses.asdict(obj))
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_plain(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(to_plain(v) for v in obj)
    return obj


def from_plain(obj: Any) -> Any:
    """Undo :func:`to_plain`'s array tags (``{"__ndarray__": tensor}`` -> numpy array)."""
    if isinstance(obj, dict):
        if len(obj) == 1 and NDARRAY_TAG in obj and isinstance(obj[NDARRAY_TAG], torch.Tensor):
            return obj[NDARRAY_TAG].numpy().copy()
        return {k: from_plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [from_plain(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(from_plain(v) for v in obj)
    return obj


def torch_bytes(obj: Any) -> bytes:
    """``torch.save`` of :func:`to_plain` ``(obj)`` as bytes (the caller writes them atomically)."""
    buf = io.BytesIO()
    torch.save(to_plain(obj), buf)
    return buf.getvalue()


def _refusal(e: BaseException) -> str:
    """The one line of torch's weights-only refusal that names what was refused."""
    text = str(e)
    found = re.search(r"(Unsupported [^\n]*|[^\n]*unsupported GLOBAL[^\n]*)", text)
    return (
        found.group(1) if found else text.strip().splitlines()[-1] if text.strip() else type(e).__name__
    ).strip()


def load_torch_file(path: str | Path, what: str, map_location: Any = "cpu") -> Any:
    """Load the torch file ``path`` with ``weights_only=True``; never runs code from it.

    ``what`` names the file for errors ("ai2048 model file", "LazyZero checkpoint"). A file holding
    anything but tensors and plain data (a pickled object or function) raises ValueError saying so,
    without running it; a torn or foreign file raises ValueError naming it.
    """
    path = Path(path)
    check_regular_file(path, what)  # a FIFO would block torch.load forever, /dev/zero fill memory
    try:
        with torch.serialization.safe_globals(_numpy_array_globals()):
            obj = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        raise ValueError(
            f"{path} is not a safe {what}: it holds Python objects other than tensors and plain data "
            f"({_refusal(e)}); ai2048 loads only tensors, numbers, strings, lists and dicts and never "
            "runs code from a model file"
        ) from None
    except Exception as e:  # torch raises several types for a torn or foreign file
        raise ValueError(f"{path} is not a readable {what} ({type(e).__name__}: {_refusal(e)})") from None
    return from_plain(obj)


MODEL_FORMAT = 1
"""``format`` of the ``model.pt`` files the torch trainers write (dqn, qnet, policy)."""


def load_weights(
    net: nn.Module, spec: dict[str, Any], saved_spec: dict[str, Any], state: dict[str, Any], where: str
) -> None:
    """Load ``state`` into ``net``; a checkpoint of another network raises naming what differs."""
    if saved_spec != spec:
        keys = sorted(set(spec) | set(saved_spec))
        diff = ", ".join(
            f"{k}: checkpoint {saved_spec.get(k)!r} vs config {spec.get(k)!r}"
            for k in keys
            if saved_spec.get(k) != spec.get(k)
        )
        raise ValueError(f"{where} holds a different network ({diff})")
    check_state(net.state_dict(), state, spec, where)
    net.load_state_dict(state)


def check_state(own: dict[str, Any], state: Any, spec: dict[str, Any], where: str) -> None:
    """Raise naming ``where`` unless ``state`` has exactly the tensors and shapes of ``own``."""
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ValueError(f"{where} holds no state_dict of tensors for network {spec.get('name')!r}")
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
            parts.append(
                "shape of "
                + ", ".join(f"{k} {tuple(state[k].shape)} != {tuple(own[k].shape)}" for k in shapes[:5])
            )
        raise ValueError(f"{where} does not fit network {spec.get('name')!r}: {'; '.join(parts)}")


def build_checked(spec: dict[str, Any], state: Any, where: str) -> SeedNet:
    """The network ``spec`` names, built only once ``state`` is checked to fit it on torch's meta
    device (shapes, no memory): a spec of a few bytes in a model file (``n_fc: 100000``) names a
    network of tens of gigabytes, which building would allocate and initialise before any check."""
    with torch.device("meta"):
        probe = build_net(spec)
    check_state(probe.state_dict(), state, spec, where)
    return build_net(spec)


def load_model(run: str | Path, kind: str, device: str = "cpu") -> tuple[SeedNet, dict[str, Any]]:
    """Rebuild the network of a run directory written by trainer ``kind``; returns (net in eval mode,
    payload)."""
    run = Path(run)
    path = run / "model.pt" if run.is_dir() else run
    check_regular_file(path, "ai2048 model file",
                       missing=f"{path} does not exist: {run} holds no trained {kind} model yet")
    payload = load_torch_file(path, "ai2048 model file")
    if not isinstance(payload, dict) or payload.get("format") != MODEL_FORMAT or "net" not in payload:
        raise ValueError(f"{path} is not an ai2048 model file of format {MODEL_FORMAT}")
    if payload.get("kind") != kind:
        raise ValueError(f"{path} holds a {payload.get('kind')!r} model, not a {kind!r} model")
    if not isinstance(payload["net"], dict):
        raise ValueError(f"{path} names its network with a {type(payload['net']).__name__}, not a spec")
    net = build_checked(payload["net"], payload.get("state_dict"), str(path))
    load_weights(net, payload["net"], payload["net"], payload["state_dict"], str(path))
    return net.to(resolve_device(device)).eval(), payload


__all__ = [
    "MODEL_FORMAT",
    "NDARRAY_TAG",
    "build_checked",
    "check_state",
    "from_plain",
    "load_model",
    "load_torch_file",
    "load_weights",
    "to_plain",
    "torch_bytes",
]
