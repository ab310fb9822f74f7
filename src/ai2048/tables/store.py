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

Nothing read is trusted. Every load compares each array's ``.npy`` header with ``table.json`` before
reading it, then checks the contents in one pass (:mod:`ai2048.tables.invariants`: keys in order and in
their layers, values probabilities). The files' SHA-256 digests are checked once per table and
remembered in ``.verified.json`` (each file's size, mtime and inode), so a file changed since is hashed
again; ``ai2048 tables verify`` hashes every time. A distilled copy gets the same checks (its zip
members' CRCs stand for the digests).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ai2048.checkpoint import atomic_write
from ai2048.tables.formations import TABLES, TableSpec, spec

ENV_VAR = "AI2048_TABLES"
FILES = ("keys.npy", "values.npy", "offsets.npy")
META = "table.json"
STAMP = ".verified.json"
DISTILLED_DIR = Path(__file__).parent / "distilled"
DISTILLED_FORMAT = "ai2048-distilled-table/1"
DISTILLED_MAX_BYTES = 2**30
"""The most an array of a distilled file may hold (the shipped ones hold a few MiB): a header claiming
more is refused before anything is allocated."""

_UNREADABLE = (OSError, ValueError, TypeError, SyntaxError, RecursionError, EOFError)
"""What reading a damaged ``.npy`` header or JSON file raises."""

_VERIFIED: set[str] = set()
"""Tables whose digests this process checked where no stamp could be written (a read-only folder)."""


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
    """:func:`tables_dir`, refused (TypeError or ValueError naming ``label``) when ``directory`` is not a
    path, or names what cannot be a folder: a file, a path under a file, a symlink to nothing."""
    if directory is not None:
        try:
            text = os.fspath(directory)
        except TypeError:
            text = None
        if not isinstance(text, str):
            raise TypeError(f"{label}={directory!r} must be a path (the folder the tables are built in), "
                            f"or None for ${ENV_VAR} or the user cache")
        if not text.strip():
            raise ValueError(f"{label} is empty: name the folder the tables are built in, or leave it out "
                             f"for ${ENV_VAR} or the user cache")
    root = tables_dir(directory)
    named = label if directory is not None else f"${ENV_VAR}" if os.environ.get(ENV_VAR) else "the cache"
    here = root.absolute()
    while not os.path.lexists(here) and here != here.parent:
        here = here.parent
    if here.is_symlink() and not here.exists():
        raise ValueError(f"{named} {root}: {here} is a symlink to {os.readlink(here)}, which does not "
                         "exist; create that folder, or name another folder for the tables")
    if not here.is_dir():
        where = "is a file" if here == root.absolute() else f"is under {here}, a file"
        raise ValueError(f"{named} {root} {where}, not a folder; name a folder for the tables")
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


def _shown(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _whole(value: Any, lo: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= lo


def _meta_problem(meta: Any) -> str | None:
    """What makes ``meta`` no table description (in words), or None: every field a reader uses is
    checked here, so none is indexed or formatted unchecked."""
    if not isinstance(meta, dict) or not isinstance(meta.get("spec"), dict) \
            or not isinstance(meta.get("files"), dict):
        return "not a table description"
    for field, lo in (("positions", 0), ("layers", 1)):
        if not _whole(meta.get(field), lo):
            return f"{field} is {_shown(meta.get(field))}, not a whole number of at least {lo}"
    secs = meta.get("build_seconds")
    if secs is not None and (isinstance(secs, bool) or not isinstance(secs, (int, float))
                             or not math.isfinite(secs) or secs < 0):
        return f"build_seconds is {_shown(secs)}, not a number of seconds"
    for n in FILES:
        rec = meta["files"].get(n)
        if not isinstance(rec, dict) or not _whole(rec.get("bytes"), 0) \
                or not isinstance(rec.get("sha256"), str) or not re.fullmatch("[0-9a-f]{64}", rec["sha256"]):
            return f"files.{n} is {_shown(rec)}, not its size in bytes and SHA-256 digest"
    return None


def read_meta(folder: Path, cmd: str | None = None) -> dict:
    """``folder``'s ``table.json``, every field a reader uses checked (TableError naming the file and
    ``cmd``, the command that rebuilds it)."""
    path = folder / META
    fix = f"rebuild it: {cmd or build_command(folder.name, folder.parent)} --force"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as e:  # RecursionError: nested 100,000 deep
        raise TableError(f"{path}: unreadable table description ({e}); {fix}") from None
    problem = _meta_problem(meta)
    if problem:
        raise TableError(f"{path}: {problem}; {fix}")
    return meta


def _npy_header(f: IO[bytes], size: int) -> tuple[np.dtype, tuple]:
    """The dtype and shape that the ``.npy`` stream ``f`` of ``size`` bytes declares, read without
    reading the data; ValueError for a damaged header or one the bytes that follow do not fill exactly
    (a shape claiming terabytes is refused here, before anything is allocated)."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"format version {version}, not one ai2048 writes")
    if dtype.hasobject:
        raise ValueError("it holds Python objects")
    need = f.tell() + math.prod(shape) * dtype.itemsize
    if need != size:
        raise ValueError(f"its header declares {dtype} {shape}, {need:,} bytes, and it holds {size:,}")
    return dtype, shape


def read_npy(path: Path, dtype: type, shape: tuple, mmap: bool = False) -> np.ndarray:
    """The array in ``path`` once its header declares ``dtype`` and ``shape`` and the file holds exactly
    that (memory-mapped with ``mmap``); ValueError saying what is wrong otherwise, before anything is
    allocated."""
    try:
        with open(path, "rb") as f:
            got = _npy_header(f, os.fstat(f.fileno()).st_size)
    except _UNREADABLE as e:
        raise ValueError(f"unreadable ({e})") from None
    if got != (np.dtype(dtype), shape):
        raise ValueError(f"holds {got[0]} {got[1]}, not the {np.dtype(dtype)} {shape} expected")
    try:
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"unreadable ({e})") from None


def _read_array(path: Path, dtype: type, shape: tuple, fix: str, mmap: bool = True) -> np.ndarray:
    """:func:`read_npy` of the shape ``table.json`` gives, a TableError naming ``path`` and ``fix``."""
    try:
        return read_npy(path, dtype, shape, mmap)
    except ValueError as e:
        raise TableError(f"{path}: {e}; {fix}") from None


def _fingerprint(folder: Path) -> str:
    """What a table's files are on disk now (name, size, mtime, inode of each): a change to any of
    them, or a copy, gives another fingerprint."""
    stats = [(n, (folder / n).stat()) for n in (*FILES, META)]
    return json.dumps({"folder": str(folder.absolute()),
                       "files": [[n, st.st_size, st.st_mtime_ns, st.st_ino] for n, st in stats]})


def _verified(folder: Path) -> bool:
    """Whether the digests of the table in ``folder`` were checked since its files last changed."""
    try:
        mark = _fingerprint(folder)
        if mark in _VERIFIED:
            return True
        if not (folder / STAMP).is_file():  # (a FIFO would block the read)
            return False
        with open(folder / STAMP) as f:
            return f.read(1 << 16) == mark
    except (OSError, ValueError):
        return False


def mark_verified(folder: Path) -> None:
    """Remember that the table in ``folder`` matches its digests (:data:`STAMP`, written atomically;
    this process alone remembers it where the folder cannot be written)."""
    mark = _fingerprint(folder)
    try:
        atomic_write(folder / STAMP, lambda f: f.write(mark), mode="w")
    except (OSError, ValueError):
        _VERIFIED.add(mark)


def _contents(keys: np.ndarray, values: np.ndarray, offsets: np.ndarray, table: TableSpec,
              unknown_ok: bool = False) -> tuple[str, str] | None:
    from ai2048.tables.invariants import table_problem

    return table_problem(keys, values, offsets, table.formation.places, table.target, unknown_ok)


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
    sum bound, spawn odds and format, arrays of the recorded shapes and sizes, contents that are a
    table's (:mod:`ai2048.tables.invariants`), and files of the recorded digests (hashed once per change of
    the files, remembered in :data:`STAMP`; every time with ``verify``)."""
    want = spec(name)
    name = want.name
    folder = tables_dir(directory) / name
    cmd = build_command(name, directory)
    fix = f"rebuild it: {cmd} --force"
    if not (folder / META).is_file():
        state = "is half-built (its build stopped)" if (folder / ".build").is_dir() else "is not built"
        raise TableNotBuilt(f"endgame table {name} {state} in {folder.parent}; run: {cmd}")
    meta = read_meta(folder, cmd)
    if meta["spec"] != want.describe():
        raise TableError(
            f"{folder}: built for {_shown(meta['spec'], 400)}, not for this version's {want.describe()} "
            f"(other rules, formation or format); {fix}"
        )
    for n in FILES:
        path = folder / n
        if not path.is_file() or path.stat().st_size != meta["files"][n]["bytes"]:
            raise TableError(f"{path}: missing or truncated; {fix}")
    size = meta["positions"]
    keys = _read_array(folder / "keys.npy", np.uint64, (size,), fix)
    values = _read_array(folder / "values.npy", np.float32, (size,), fix)
    offsets = _read_array(folder / "offsets.npy", np.int64, (meta["layers"] + 1,), fix, mmap=False)
    checked = not verify and _verified(folder)
    if not checked:
        for n in FILES:
            if sha256(folder / n) != meta["files"][n]["sha256"]:
                raise TableError(f"{folder / n}: SHA-256 does not match table.json (corrupt); {fix}")
    bad = _contents(keys, values, offsets, want)
    if bad:
        raise TableError(f"{folder / bad[0]}: {bad[1]} (corrupt); {fix}")
    if not checked:
        mark_verified(folder)
    return Table(want, keys, values, offsets, folder, meta)


def listing(directory: str | Path | None = None) -> list[dict]:
    """Every registered table with its state in ``directory``: built (size, positions, build time),
    unusable (and why: :func:`load`'s checks, the agent's), half-built, or not built (and whether the
    package ships a distilled copy the agent reads then)."""
    root = tables_dir(directory)
    rows = []
    for name, (table, expected) in TABLES.items():
        folder = root / name
        row: dict = {"name": name, "target": 2 ** table.target, "max_sum": table.max_sum}
        if (folder / META).is_file():
            try:
                meta = load(name, directory).meta
                row.update(state="built", positions=meta["positions"],
                           bytes=sum(f["bytes"] for f in meta["files"].values()),
                           build_seconds=meta.get("build_seconds"))
            except TableError as e:
                row.update(state=f"unusable: {e}")
        elif (folder / ".build").is_dir():
            row.update(state="half-built")
        elif (DISTILLED_DIR / f"{name}.npz").is_file():  # the agent reads the shipped copy
            try:
                load_distilled(name)
                row.update(state="not built; distilled copy shipped", positions=expected)
            except TableError as e:
                row.update(state=f"not built; the shipped distilled copy is unusable: {e}")
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

    keys = np.unique(looked[looked != 0].astype(np.uint64))
    layer = np.array([free_sum(k) // 2 for k in keys], dtype=np.int64)
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


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of a distilled file, each member's header checked before it is read (ValueError:
    a member missing, of another dtype or shape, or declaring more than :data:`DISTILLED_MAX_BYTES`)."""
    want = {"keys": np.uint64, "values": np.float32, "offsets": np.int64, "meta": None}
    out = {}
    with zipfile.ZipFile(path) as zf:
        for name, dtype in want.items():
            try:
                info = zf.getinfo(f"{name}.npy")
            except KeyError:
                raise ValueError(f"it holds no {name} array") from None
            if info.file_size > DISTILLED_MAX_BYTES:
                raise ValueError(f"its {name} array declares {info.file_size:,} bytes")
            with zf.open(info) as f:
                got, shape = _npy_header(f, info.file_size)
            if (dtype is None and (got.kind != "U" or shape != ())) \
                    or (dtype is not None and (got != np.dtype(dtype) or len(shape) != 1)):
                raise ValueError(f"its {name} array is {got} {shape}")
            with zf.open(info) as f:
                out[name] = np.lib.format.read_array(f, allow_pickle=False)
    return out


def load_distilled(name: str | TableSpec, folder: str | Path | None = None) -> Table | None:
    """The distilled table ``name`` shipped in ``folder`` (default: the package's), checked like a
    built one (headers, then contents; the zip's CRCs stand for the digests); None when there is
    none."""
    want = spec(name)
    path = Path(folder if folder is not None else DISTILLED_DIR) / f"{want.name}.npz"
    if not path.is_file():
        return None
    fix = f"reinstall ai2048, or build the table: {build_command(want.name)}"
    try:
        arrays = _read_npz(path)
        meta = json.loads(str(arrays["meta"]))
    except (*_UNREADABLE, zipfile.BadZipFile, zlib.error, NotImplementedError) as e:
        raise TableError(f"{path}: unreadable distilled table ({e}); {fix}") from None
    keys, values, offsets = arrays["keys"], arrays["values"], arrays["offsets"]
    made = (meta.get("format"), meta.get("spec")) if isinstance(meta, dict) else None
    if made != (DISTILLED_FORMAT, want.describe()):
        raise TableError(f"{path}: distilled for another version's {want.name} (rules, formation or "
                         f"format); build the table: {build_command(want.name)}")
    if values.shape != keys.shape:
        raise TableError(f"{path}: {values.size:,} values for {keys.size:,} keys (corrupt); {fix}")
    bad = _contents(keys, values, offsets, want, unknown_ok=True)
    if bad:
        raise TableError(f"{path} ({bad[0]}): {bad[1]} (corrupt); {fix}")
    return Table(want, keys, values, offsets, path.parent, {**meta, "distilled": True})
