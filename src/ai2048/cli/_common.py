"""Helpers shared by subcommands: ``--set key=value`` parsing and up-front checks of output paths."""

from __future__ import annotations

import argparse
import json
import math
import os
from pathlib import Path
from typing import Any


def parse_value(text: str) -> Any:
    """``"3" -> 3``, ``"0.5" -> 0.5``, ``"true" -> True``, ``"[1,2]" -> [1, 2]``, else the string."""
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    except ValueError:  # a number of more than 4300 digits (Python's int-string limit)
        raise ValueError(f"{text[:12]}... is a number of {len(text)} characters, too long to read; no "
                         "setting takes such a number") from None


def set_item(item: str) -> str:
    """argparse type of ``--set``: ``"key=value"`` passes unchanged; anything else is a usage error."""
    key, eq, _ = item.partition("=")
    if not eq or not key.strip():
        raise argparse.ArgumentTypeError(f"--set expects KEY=VALUE (e.g. --set depth=3), got {item!r}")
    return item


def parse_sets(items: list[str] | None) -> dict[str, Any]:
    """Turn ``["depth=3", "p=0.5"]`` into ``{"depth": 3, "p": 0.5}``; a malformed item raises ValueError."""
    out: dict[str, Any] = {}
    for item in items or []:
        try:
            set_item(item)
        except argparse.ArgumentTypeError as e:
            raise ValueError(str(e)) from None
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = parse_value(value.strip())
        except ValueError as e:
            raise ValueError(f"--set {key.strip()}: {e}") from None
    return out


def add_set_argument(parser: argparse.ArgumentParser, example: str = "depth=3") -> None:
    """Add the repeatable ``--set key=value`` option; ``example`` is a real ``key=value`` of what the
    command configures (the agents' ``depth`` by default; a trainer's own field for ``train``)."""
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        type=set_item,
        default=[],
        metavar="KEY=VALUE",
        help=f"a config value, e.g. --set {example} (repeatable)",
    )


def _nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (the folder a write would create folders in)."""
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_out_file(path: Path | None, flag: str = "--out") -> Path | None:
    """Refuse an output file that cannot be written, before any work is done; returns ``path``.

    Catches ``''``, an existing folder, a path under a file (``file/x.json``) and a folder without
    write permission: each would otherwise fail only when the result is saved, after the work.
    """
    if path is None:
        return None
    text = str(path)
    if not text.strip() or text in (".", ".."):
        raise ValueError(f"{flag} needs a file name, got {text!r}")
    if path.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name such as {path / 'result.json'}")
    base = _nearest_existing(path.parent)
    if not base.is_dir():
        raise ValueError(f"{flag} {path}: {base} is a file, not a folder; choose another path")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: cannot write in {base} (permission denied); choose another path")
    return path


def check_out_dir(path: Path | None, flag: str = "--out") -> Path | None:
    """Refuse an output folder that is an existing file or cannot be created, before any work; returns
    ``path``."""
    if path is None:
        return None
    if not str(path).strip():
        raise ValueError(f"{flag} needs a folder name, got {str(path)!r}")
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {path} is an existing file, not a folder; choose a folder name")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise ValueError(f"{flag} {path}: {base} is a file, not a folder; choose another path")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: cannot write in {base} (permission denied); choose another path")
    return path


def check_range(flag: str, value: float | int | None, low: float | None = None, high: float | None = None,
                low_open: bool = False) -> None:
    """Raise ValueError unless ``value`` (when given) is finite and within [low, high] (``(low, high]`` if
    ``low_open``)."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{flag} must be a finite number, got {value}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{flag} must be {'>' if low_open else '>='} {low}, got {value}")
    if high is not None and value > high:
        raise ValueError(f"{flag} must be <= {high}, got {value}")
