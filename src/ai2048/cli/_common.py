"""Helpers shared by subcommands: ``--set key=value`` parsing, up-front checks of output paths, and text
safe to print."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any, TypeVar

from ai2048.checkpoint import check_output_file, nearest_existing

T = TypeVar("T")

_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
"""Unicode bidirectional overrides and isolates: they reorder what a terminal shows."""


def printable(text: Any) -> str:
    """``str(text)`` safe to print: control characters (ESC, BEL, CR, C1 codes, DEL...) and bidi
    overrides shown as escapes (``\\x1b``), line breaks and tabs kept.

    A record's agent, a card's summary or a file name in an error can hold escape sequences (clear
    screen, colours, OSC 8 links) that a terminal would obey; everything the CLI shows from a file
    goes through here.
    """
    out = []
    for ch in str(text):
        o = ord(ch)
        if ch in "\n\t" or not (o < 0x20 or 0x7F <= o < 0xA0 or o in _BIDI):
            out.append(ch)
        else:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
    return "".join(out)


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


def add_listen_arguments(parser: argparse.ArgumentParser, port: int, connections: int) -> None:
    """A loopback server's options (``serve``, ``serve-env``): --host, --port, --allow-host,
    --max-connections and --request-timeout, with this server's default port and connection cap."""
    parser.add_argument("--host", default=None, help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=port, help=f"port (default {port})")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="another Host name to answer (e.g. this machine's name with --host 0.0.0.0); "
                        "repeatable")
    parser.add_argument("--max-connections", type=int, default=connections,
                        help=f"open connections; more are closed at once (default {connections})")
    parser.add_argument("--request-timeout", type=float, default=10.0,
                        help="seconds a client may take to send a request's head, and its body (default 10)")


def settings_from_flags(cls: type[T], args: argparse.Namespace, flags: dict[str, str]) -> T:
    """Settings dataclass ``cls`` (a server's limits, checked by :func:`ai2048.checks.check_fields`) built
    from the command's arguments, ``flags`` naming the flag of each field (``{"ping_seconds": "--ping"}``);
    an error names the flag the user typed (``--workers=0 must be a whole number >= 1``)."""
    values = {name: getattr(args, flag.removeprefix("--").replace("-", "_")) for name, flag in flags.items()}
    try:
        return cls(**values)
    except ValueError as e:
        text = str(e)
        name = next((n for n in flags if text.startswith(n + "=")), None)
        if name is None:
            raise
        raise type(e)(flags[name] + text[len(name):]) from None


def check_out_file(path: Path | None, flag: str = "--out") -> Path | None:
    """Refuse an output file that cannot be written, before any work is done; returns ``path``.

    Catches ``''`` and everything :func:`ai2048.checkpoint.check_output_file` refuses: an existing
    folder, a device such as ``/dev/null`` (refused, not taken as "discard": leave the option out to
    write nothing), a FIFO, a socket, a symlink to one of them or to nothing, a path under a file and
    a folder without write permission. A symlink to a regular file is written through. Each would
    otherwise fail, or replace a device node, only when the result is saved, after the work.
    """
    if path is None:
        return None
    text = str(path)
    if not text.strip() or text in (".", ".."):
        raise ValueError(f"{flag} needs a file name, got {text!r}")
    if path.is_dir():
        raise ValueError(f"{flag} {path} is a folder; give a file name such as {path / 'result.json'}")
    check_output_file(path, flag, fix=f"give another path, or leave {flag} out to write nothing")
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
    base = nearest_existing(path)
    if not base.is_dir():
        raise ValueError(f"{flag} {path}: {base} is a file, not a folder; choose another path")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {path}: cannot write in {base} (permission denied); choose another path")
    return path

