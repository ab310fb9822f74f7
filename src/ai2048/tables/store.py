"""Where tables live and how they are read: a folder per table under the tables directory, checked
before use and memory-mapped, so every process reading one shares its pages.

A *distilled* table (``ai2048 tables distill``) is the part of a built one that real games look up,
shipped in the package (``tables/distilled/NAME.npz``) so the endgame agent plays with no build:
the same three arrays, the positions it lacks read as unknown.

A built table is ``DIR/NAME/`` with ``keys.npy`` (uint64 keys, sorted within each layer),
``values.npy`` (float32 probabilities), ``offsets.npy`` (int64: layer ``k`` is
``keys[offsets[k]:offsets[k + 1]]``) and ``table.json`` (what was built, with which rules, the
files' sizes and SHA-256 digests, the build time), written last: a folder without it is a build
under way or stopped (``.build/`` holds its finished layers) and is never loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ai2048.checkpoint import atomic_write
from ai2048.tables.formations import TABLES, TableSpec, spec

ENV_VAR = "AI2048_TABLES"
FILES = ("keys.npy", "values.npy", "offsets.npy")
META = "table.json"
DISTILLED_DIR = Path(__file__).parent / "distilled"
DISTILLED_FORMAT = "ai2048-distilled-table/1"


def default_dir() -> Path:
    """``$AI2048_TABLES`` if set, else the user cache directory's ``ai2048/tables`` (platformdirs)."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("ai2048")) / "tables"


def tables_dir(directory: str | Path | None = None) -> Path:
    return Path(directory).expanduser() if directory is not None else default_dir()


def checked_dir(directory: str | Path | None, label: str) -> Path:
    """:func:`tables_dir`, refused (ValueError naming ``label``) when it exists and is not a folder."""
    root = tables_dir(directory)
    if root.exists() and not root.is_dir():
        named = label if directory is not None else f"${ENV_VAR}" if os.environ.get(ENV_VAR) else "the cache"
        raise ValueError(f"{named} {root} is a file, not a folder; name a folder for the tables")
    return root


class TableError(ValueError):
    """A table that is corrupt, unreadable or built for other rules."""


class TableNotBuilt(FileNotFoundError):
    """A table that is not built (or whose build stopped) in the tables folder."""


class DistilledTablesWarning(UserWarning):
    """Tables read from the distilled copies shipped in the package because they are not built: the
    agent plays at once, but weaker than with the built tables (docs/tables.md)."""


def build_command(name: str, directory: str | Path | None = None) -> str:
    extra = f" --dir {directory}" if directory is not None else ""
    return f"ai2048 tables build {name}{extra}"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def write_meta(folder: Path, table: TableSpec, positions: int, seconds: float, layers: int) -> None:
    files = {n: {"bytes": (folder / n).stat().st_size, "sha256": sha256(folder / n)} for n in FILES}
    meta = {
        "name": table.name,
        "spec": table.describe(),
        "positions": positions,
        "layers": layers,
        "build_seconds": round(seconds, 1),
        "files": files,
    }
    atomic_write(folder / META, lambda f: f.write(json.dumps(meta, indent=1) + "\n"), mode="w")


def read_meta(folder: Path) -> dict:
    path = folder / META
    try:
        meta = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TableError(f"{path}: unreadable table description ({e}); rebuild it") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("files"), dict) or "spec" not in meta:
        raise TableError(f"{path}: not a table description; rebuild it")
    return meta


@dataclass
class Table:
    """A loaded table: its spec and memory-mapped arrays."""

    spec: TableSpec
    keys: np.ndarray
    values: np.ndarray
    offsets: np.ndarray
    folder: Path
    meta: dict


def load(name: str | TableSpec, directory: str | Path | None = None, verify: bool = False) -> Table:
    """The built table ``name``, checked: present and complete, built for this formation, target,
    sum bound, spawn odds and format, files of the recorded sizes (and digests with ``verify``)."""
    want = spec(name)
    name = want.name
    folder = tables_dir(directory) / name
    cmd = build_command(name, directory)
    if not (folder / META).is_file():
        state = "is half-built (its build stopped)" if (folder / ".build").is_dir() else "is not built"
        raise TableNotBuilt(f"endgame table {name} {state} in {folder.parent}; run: {cmd}")
    meta = read_meta(folder)
    if meta["spec"] != want.describe():
        raise TableError(
            f"{folder}: built for {meta['spec']}, not for this version's {want.describe()} "
            f"(other rules, formation or format); rebuild it: {cmd} --force"
        )
    for n in FILES:
        rec = meta["files"].get(n)
        path = folder / n
        if not isinstance(rec, dict) or not path.is_file() or path.stat().st_size != rec.get("bytes"):
            raise TableError(f"{path}: missing or truncated; rebuild it: {cmd} --force")
        if verify and sha256(path) != rec.get("sha256"):
            raise TableError(f"{path}: SHA-256 does not match table.json (corrupt); "
                             f"rebuild it: {cmd} --force")
    try:
        keys = np.load(folder / "keys.npy", mmap_mode="r", allow_pickle=False)
        values = np.load(folder / "values.npy", mmap_mode="r", allow_pickle=False)
        offsets = np.load(folder / "offsets.npy", allow_pickle=False)
    except (OSError, ValueError) as e:
        raise TableError(f"{folder}: unreadable table files ({e}); rebuild it: {cmd} --force") from None
    size = int(meta.get("positions", -1))
    if (keys.dtype != np.uint64 or values.dtype != np.float32 or offsets.dtype != np.int64
            or keys.shape != (size,) or values.shape != (size,) or offsets.ndim != 1 or offsets.size < 2
            or offsets[0] != 0 or offsets[-1] != size or np.any(np.diff(offsets) < 0)):
        raise TableError(f"{folder}: table arrays do not match table.json; rebuild it: {cmd} --force")
    return Table(want, keys, values, offsets, folder, meta)


def listing(directory: str | Path | None = None) -> list[dict]:
    """Every registered table with its state in ``directory``: built (size, positions, build time),
    half-built, or not built (and whether the package ships a distilled copy the agent reads then)."""
    root = tables_dir(directory)
    rows = []
    for name, (table, expected) in TABLES.items():
        folder = root / name
        row: dict = {"name": name, "target": 2 ** table.target, "max_sum": table.max_sum}
        if (folder / META).is_file():
            try:
                meta = read_meta(folder)
                row.update(state="built", positions=meta.get("positions"),
                           bytes=sum(int(f.get("bytes", 0)) for f in meta["files"].values()),
                           build_seconds=meta.get("build_seconds"))
            except TableError as e:
                row.update(state=f"corrupt ({e})")
        elif (folder / ".build").is_dir():
            row.update(state="half-built")
        elif (DISTILLED_DIR / f"{name}.npz").is_file():  # the agent reads the shipped copy
            row.update(state="not built; distilled copy shipped", positions=expected)
        else:
            row.update(state="not built", positions=expected)
        rows.append(row)
    return rows


def distill(table: Table, looked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distilled arrays of ``table``: the keys ``looked`` (zeros ignored) with their values, sorted
    within layers, and the layer offsets. A key the table does not hold keeps the value -1, which the
    agent reads as it reads a position the table lacks (never the best move), so a distilled table
    decides as the full one wherever it holds every key a decision looks up."""
    from ai2048.tables.kernels import find, free_sum

    fixed = np.uint64(table.spec.formation.fixed_mask)
    keys = np.unique(looked[looked != 0].astype(np.uint64))
    layer = np.array([free_sum(k, fixed) // 2 for k in keys], dtype=np.int64)
    order = np.lexsort((keys, layer))
    keys, layer = keys[order], layer[order]
    inside = layer + 1 < table.offsets.size  # beyond the table's layers move_values looks nothing up
    keys, layer = keys[inside], layer[inside]
    held = np.array([find(table.keys, table.offsets[k], table.offsets[k + 1], np.uint64(key))
                     for key, k in zip(keys, layer, strict=True)], dtype=np.int64)
    values = np.where(held >= 0, np.asarray(table.values)[np.maximum(held, 0)], -1.0).astype(np.float32)
    offsets = np.searchsorted(layer, np.arange(table.offsets.size), side="left").astype(np.int64)
    return keys, values, offsets


def write_distilled(path: str | Path, table: Table, looked: np.ndarray, info: dict) -> int:
    """Write ``table`` distilled to the keys ``looked`` (:func:`distill`) as one ``.npz``,
    atomically; returns the positions kept."""
    keys, values, offsets = distill(table, looked)
    meta = json.dumps({"format": DISTILLED_FORMAT, "name": table.spec.name, "spec": table.spec.describe(),
                       "positions": int(keys.size), "of": int(table.keys.size), **info}, sort_keys=True)
    atomic_write(path, lambda f: np.savez_compressed(f, keys=keys, values=values, offsets=offsets,
                                                     meta=np.array(meta)))
    return int(keys.size)


def load_distilled(name: str | TableSpec, folder: str | Path | None = None) -> Table | None:
    """The distilled table ``name`` shipped in ``folder`` (default: the package's), checked like a
    built one; None when there is none."""
    want = spec(name)
    path = Path(folder if folder is not None else DISTILLED_DIR) / f"{want.name}.npz"
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            keys, values, offsets = z["keys"], z["values"], z["offsets"]
            meta = json.loads(str(z["meta"]))
    except (OSError, ValueError, KeyError, json.JSONDecodeError) as e:
        raise TableError(f"{path}: unreadable distilled table ({e}); reinstall ai2048 or build the table: "
                         f"{build_command(want.name)}") from None
    if meta.get("format") != DISTILLED_FORMAT or meta.get("spec") != want.describe():
        raise TableError(f"{path}: distilled for another version's {want.name} (rules, formation or "
                         f"format); build the table: {build_command(want.name)}")
    n = keys.size
    if (keys.dtype != np.uint64 or values.dtype != np.float32 or offsets.dtype != np.int64
            or values.shape != (n,) or offsets.ndim != 1 or offsets.size < 2 or offsets[0] != 0
            or offsets[-1] != n or np.any(np.diff(offsets) < 0)):
        raise TableError(f"{path}: distilled table arrays are inconsistent; reinstall ai2048 or build the "
                         f"table: {build_command(want.name)}")
    return Table(want, keys, values, offsets, path.parent, {**meta, "distilled": True})
