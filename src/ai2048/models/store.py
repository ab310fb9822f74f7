"""The shipped networks: a folder of ``NAME.ntz`` files, each with its card ``NAME.json`` (and ``NAME.md``).

The folder is ``ai2048/models/networks`` inside the installed package, or ``$AI2048_MODELS``, or
the ``directory`` a caller passes. Names are looked up in it, never used as paths, so a name from
a web request cannot reach another file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ai2048.checkpoint import read_json
from ai2048.models import compact
from ai2048.models.card import check_card, check_name
from ai2048.ntuple.network import Network

ENV = "AI2048_MODELS"
"""Environment variable naming another folder of shipped networks (tests, a user's own packs)."""

PACKAGE_DIR = Path(__file__).parent / "networks"


class UnknownModelError(ValueError):
    """No shipped network of that name (the message lists the ones there are)."""


class NoShippedModelError(FileNotFoundError):
    """No shipped network at all, where one is needed as the default."""


def models_dir(directory: str | Path | None = None) -> Path:
    """The folder of shipped networks: ``directory``, else ``$AI2048_MODELS``, else the package's."""
    if directory is not None:
        return Path(directory)
    env = os.environ.get(ENV)
    return Path(env) if env else PACKAGE_DIR


def names(directory: str | Path | None = None) -> list[str]:
    """Names of the shipped networks present (a card ``NAME.json`` beside its ``NAME.ntz``), sorted."""
    d = models_dir(directory)
    if not d.is_dir():
        return []
    out = []
    for p in sorted(d.glob("*.json")):
        try:
            check_name(p.stem)
        except ValueError:
            continue
        if (d / f"{p.stem}{compact.SUFFIX}").is_file():
            out.append(p.stem)
    return out


def _available(directory: str | Path | None) -> str:
    found = names(directory)
    return ", ".join(found) if found else "none (this install ships no network; see `ai2048 models`)"


def paths(name: str, directory: str | Path | None = None) -> tuple[Path, Path]:
    """(card, network file) of the shipped network ``name``; a missing one is an error listing the others."""
    check_name(name)
    d = models_dir(directory)
    card_path, file_path = d / f"{name}.json", d / f"{name}{compact.SUFFIX}"
    if card_path.is_file() and not file_path.is_file():
        raise FileNotFoundError(
            f"shipped network {name!r}: its card {card_path} is there but its file {file_path} is missing; "
            "reinstall it"
        )
    if not card_path.is_file():
        raise UnknownModelError(
            f"no shipped network named {name!r} in {d}; available: {_available(directory)}"
        )
    return card_path, file_path


def card(name: str, directory: str | Path | None = None) -> dict[str, Any]:
    """The model card (JSON) of the shipped network ``name``."""
    card_path, file_path = paths(name, directory)
    c = check_card(read_json(card_path, "model card"), card_path)
    if c["file"]["name"] != file_path.name or c["name"] != name:
        raise compact.ModelFileError(
            f"model card {card_path} describes {c['name']!r} in {c['file']['name']!r}, not {name!r} in "
            f"{file_path.name!r}; it was renamed or copied over: reinstall it"
        )
    return c


def load(name: str, directory: str | Path | None = None) -> Network:
    """The shipped network ``name``, its size and SHA-256 checked against its card, a fresh copy."""
    c = card(name, directory)
    _, file_path = paths(name, directory)
    net = compact.load(file_path, sha256=c["file"]["sha256"], size=int(c["file"]["bytes"]))
    want = c["network"]
    if net.patterns != want.get("patterns") or list(net.stages) != list(want.get("stages", [])):
        raise compact.ModelFileError(
            f"{file_path} holds patterns {net.patterns} with stages {list(net.stages)}, but its card says "
            f"{want.get('patterns')} with stages {want.get('stages')}; the file and card do not belong "
            "together"
        )
    return net


def default_name(directory: str | Path | None = None) -> str:
    """The network ``make_agent("ntuple")`` plays: the one whose card says ``default``, else the first
    name."""
    found = names(directory)
    if not found:
        raise NoShippedModelError(
            f"no trained n-tuple network is shipped in {models_dir(directory)}, so 'ntuple' needs weights: "
            "train one (`ai2048 train ntuple --preset tc --out runs/tc`) and pass weights=runs/tc, "
            "or pack one into this folder with `ai2048 models pack`"
        )
    for name in found:
        try:
            if card(name, directory).get("default"):
                return name
        except (ValueError, FileNotFoundError):
            continue
    return found[0]


_SHARED: dict[tuple[str, int, int], Network] = {}


def shared(name: str | None = None, directory: str | Path | None = None) -> Network:
    """Like :func:`load` (``None``: the default network), but one copy per file for every agent.

    Agents only read the weights; a trainer that changes them must use :func:`load`.
    """
    name = default_name(directory) if name is None else name
    _, file_path = paths(name, directory)
    st = file_path.stat()
    key = (str(file_path.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _SHARED:
        _SHARED.clear()  # one network of 512 MiB at a time
        _SHARED[key] = load(name, directory)
    return _SHARED[key]


def load_path(path: str | Path, patterns: str | None = None) -> Network:
    """A compact file named by path, checked against the card beside it (``NAME.json``) if there is one."""
    path = Path(path)
    card_path = path.with_suffix(".json")
    if card_path.is_file():
        c = check_card(read_json(card_path, "model card"), card_path)
        return compact.load(path, sha256=c["file"]["sha256"], size=int(c["file"]["bytes"]), patterns=patterns)
    return compact.load(path, patterns=patterns)
