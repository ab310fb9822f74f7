"""Run directories and atomic writes: nothing is lost if a process dies mid-write.

A run directory holds ``config.json`` (the frozen config), ``meta.json`` (agent name, rules
version, format, progress), ``metrics.jsonl`` (one JSON object a line) and weights files.
Every file is written to a temporary name in the same folder and renamed into place, and one
training process at a time holds a run directory (:func:`hold_run`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np


def atomic_write(path: str | Path, write: Callable[[Any], None], mode: str = "wb") -> None:
    """Call ``write(file)`` on a temp file beside ``path``, fsync it, then rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def hold_run(out: str | Path) -> Iterator[None]:
    """Within ``with``: this process is the only trainer of run directory ``out``.

    Two trainers writing one directory interleave their metrics and overwrite each other's
    checkpoints (a second ``--resume`` while the first run still trains). An exclusive ``flock``
    on ``out/.lock`` (released by the kernel if the process dies) turns that into an error that
    names the other process.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise ValueError(
                f"{out} is being trained by another process (pid {f.read().strip() or '?'}); wait for it to finish "
                "or stop it (Ctrl-C, or kill -TERM PID), then continue with --resume"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        remove_stale_temps(out)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def remove_stale_temps(folder: str | Path) -> list[Path]:
    """Delete the temp files (``.NAME.*.tmp``) that :func:`atomic_write` left when its process was killed.

    Only safe while no other process writes ``folder``: :func:`hold_run` calls it once it holds
    the run. Returns the files removed.
    """
    removed = []
    for tmp in Path(folder).glob(".*.tmp"):
        if tmp.is_file():
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    text = json.dumps(obj, indent=2, default=_json_default) + "\n"
    atomic_write(path, lambda f: f.write(text), mode="w")


def read_json(path: str | Path, what: str = "file") -> dict[str, Any]:
    """Read a JSON object, turning a missing, corrupt or non-object file into an error that names it.

    Every JSON file ai2048 writes (configs, metadata, results, records) is an object, so a list or a
    number is as foreign as a torn file and is refused here, before a caller indexes it.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path} does not exist")
    try:
        value = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise ValueError(f"{what} {path} is not valid JSON ({e}); it may be truncated or corrupt") from e
    if not isinstance(value, dict):
        raise ValueError(
            f"{what} {path} holds a JSON {_json_kind(value)}, not an object; it is not a file ai2048 wrote"
        )
    return value


def _json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type: list, string, number, boolean or null."""
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "null" if value is None else "number"


def append_jsonl(path: str | Path, record: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk (a torn last line is skipped by :func:`read_jsonl`)."""
    with open(path, "a") as f:
        f.write(json.dumps(record, default=_json_default) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """All complete records of a JSON-lines file; a torn final line (crash mid-append) is dropped."""
    out = []
    lines = Path(path).read_text().splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            if i == len(lines) - 1:
                break
            raise ValueError(f"{path}: line {i + 1} is not valid JSON ({e})") from e
    return out


def truncate_jsonl(path: str | Path, keep: Callable[[dict[str, Any]], bool]) -> None:
    """Rewrite a JSON-lines file atomically, keeping the records ``keep`` accepts (used on resume)."""
    path = Path(path)
    if not path.exists():
        return
    records = [r for r in read_jsonl(path) if keep(r)]
    text = "".join(json.dumps(r) + "\n" for r in records)
    atomic_write(path, lambda f: f.write(text), mode="w")


def save_npz(path: str | Path, **arrays: np.ndarray) -> None:
    """Save arrays compressed, atomically."""
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))  # type: ignore[arg-type]


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot write {type(o).__name__} to JSON")
