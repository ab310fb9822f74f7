"""Helpers shared by subcommands: ``--set key=value`` parsing."""

from __future__ import annotations

import argparse
import json
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
    except json.JSONDecodeError:
        return text


def parse_sets(items: list[str] | None) -> dict[str, Any]:
    """Turn ``["depth=3", "p=0.5"]`` into ``{"depth": 3, "p": 0.5}``; malformed items raise."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise argparse.ArgumentTypeError(f"--set expects key=value, got {item!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def add_set_argument(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable ``--set key=value`` option."""
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config value, e.g. --set depth=3 (repeatable)",
    )
