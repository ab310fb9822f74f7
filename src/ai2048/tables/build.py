"""Build a table: enumerate its positions forward by layers of tile sum, then solve them backward.

Every finished layer is written (atomically) to ``NAME/.build/`` before the next one starts, so a
build stopped at any moment (Ctrl-C, SIGTERM, SIGKILL, a full disk) resumes from its last
finished layer with the same command. The finished table is assembled from those files, its
``table.json`` written last (:mod:`ai2048.tables.store`), then the layer files are removed.

A resumed build trusts nothing it reads back: each layer ``LKKKKK.npy`` has ``LKKKKK.json`` beside
it (dtype, size, SHA-256), and a layer is used only when it matches its record and holds what a
layer holds (:mod:`ai2048.tables.invariants`); a damaged file of ``.build`` is named, with the fix
(delete ``.build``: the build starts again). One build at a time holds a table's folder (an
``flock`` on ``NAME/.lock``, as a trainer holds its run directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.checkpoint import atomic_write, hold_run, nearest_existing, remove_stale_temps
from ai2048.tables import invariants, kernels
from ai2048.tables.formations import NO_BOUND, TABLES, TableSpec, spec
from ai2048.tables.store import (
    FILES,
    META,
    build_command,
    checked_dir,
    mark_verified,
    read_npy,
    tables_dir,
    write_meta,
)

# Bytes a position costs while building: its key and value in the layer files, the assembled
# table, and the expansion buffers of the largest layers (measured: see docs/tables.md).
DISK_BYTES_PER_POSITION = 2 * (8 + 4)
PEAK_LAYER_FRACTION = 0.03


LAYER_FORMAT = 2
"""The layout of ``.build``: layer files with their records (a stopped build of another layout, or
another spec, starts again)."""


class BuildStopped(Exception):
    """A stop request (Ctrl-C, SIGTERM) was honoured at a layer boundary; the build resumes later."""


class BuildDamaged(ValueError):
    """A file of a stopped build that is not what the build wrote; deleting ``.build`` starts again."""


def _damaged(path: Path, work: Path, why: str) -> BuildDamaged:
    return BuildDamaged(f"{path}: {why} (a damaged stopped build); delete {work} and run the same "
                        "command to start the build again")


def _available_memory() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def requirements(table: TableSpec, positions: int) -> tuple[int, int]:
    """(peak memory, disk) in bytes a build of ``positions`` positions needs, estimated."""
    free = len(table.formation.free)
    peak_layer = max(1, int(positions * PEAK_LAYER_FRACTION))
    memory = peak_layer * (2 * free * 4 * 8 + 3 * 8) + 256 * 2**20
    return memory, positions * DISK_BYTES_PER_POSITION


POSITIONS_PER_CORE_SECOND = 0.7e6
"""A build's positions (forward and backward) per second per core, measured on the large set's
tables (docs/tables.md): the time :func:`estimate` gives."""


def estimate(name: str | TableSpec, cores: int) -> str:
    """What building table ``name`` takes, in one line: positions, memory, disk and time on ``cores``
    cores (from the positions its registered build counted); printed before a build starts."""
    table = spec(name)
    positions = TABLES[table.name][1] if TABLES.get(table.name, (None,))[0] == table else 0
    memory, disk = requirements(table, positions)
    minutes = positions / (POSITIONS_PER_CORE_SECOND * max(1, cores)) / 60
    return (f"{table.name}: about {positions:,} positions, {memory / 2**30:.1f} GiB of memory, "
            f"{disk / 1e9:.1f} GB of disk, {minutes:.0f} min on {cores} cores")


def _size(n: int) -> str:
    """Bytes in words: ``18.0 MiB``, ``1.3 GiB``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _unwritable(folder: Path) -> str | None:
    """Why no table can be written under the existing ``folder`` (in words), or None."""
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    try:
        st = os.statvfs(folder)
    except OSError as e:
        return f"{folder} cannot be examined ({e.strerror or e})"
    if st.f_flag & os.ST_RDONLY:
        return f"{folder} is on a read-only file system"
    if st.f_blocks == 0:
        return f"{folder} is on a file system that stores no files (such as /proc or /sys)"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"this user may not write in {folder} (permission denied)"
    return None


def check_resources(name: str | TableSpec, directory: str | Path | None = None) -> None:
    """Refuse, before anything is allocated or written, a build into a folder that cannot be written
    (read-only, not a disk, no permission) or that the disk or memory cannot hold (estimated from the
    positions a build of the registered table counted)."""
    table = spec(name)
    name = table.name
    positions = TABLES[name][1] if TABLES.get(name, (None,))[0] == table else 0
    memory, disk = requirements(table, positions)
    root = tables_dir(directory)
    probe = nearest_existing(root)
    problem = _unwritable(probe)
    if problem:
        raise ValueError(f"table {name} cannot be built in {root}: {problem}; choose another folder with "
                         "--dir (or AI2048_TABLES)")
    free_disk = shutil.disk_usage(probe).free
    if free_disk < disk:
        raise ValueError(
            f"table {name} needs about {_size(disk)} of disk in {root}, and {_size(free_disk)} "
            "is free; free some space or choose another folder with --dir (or AI2048_TABLES)"
        )
    avail = _available_memory()
    if avail and avail < memory:
        raise ValueError(
            f"table {name} needs about {_size(memory)} of memory to build and {_size(avail)} is "
            "available; close other programs or build it on a larger machine"
        )


def _layer_path(folder: Path, k: int) -> Path:
    return folder / f"L{k:05d}.npy"


def _save(path: Path, arr: np.ndarray) -> None:
    atomic_write(path, lambda f: np.save(f, arr, allow_pickle=False))


def _record_path(layer: Path) -> Path:
    return layer.with_suffix(".json")


def _digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr).view(np.uint8).data).hexdigest()


def _save_layer(path: Path, arr: np.ndarray) -> None:
    """Save a layer, then its record (a layer without one was never finished: it is made again)."""
    _save(path, arr)
    rec = {"dtype": arr.dtype.str, "size": int(arr.size), "sha256": _digest(arr)}
    atomic_write(_record_path(path), lambda f: f.write(json.dumps(rec)), mode="w")


def _is_saved(path: Path) -> bool:
    return path.is_file() and _record_path(path).is_file()


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _read_json(path: Path, work: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as e:  # RecursionError: nested 100,000 deep
        raise _damaged(path, work, f"unreadable ({e})") from None


def _layer_size(path: Path, dtype: type, work: Path) -> tuple[int, str]:
    """The size and SHA-256 that a saved layer's record gives."""
    rec = _read_json(_record_path(path), work)
    if not isinstance(rec, dict) or rec.get("dtype") != np.dtype(dtype).str or not _count(rec.get("size")) \
            or not isinstance(rec.get("sha256"), str):
        raise _damaged(_record_path(path), work, f"not the record of a layer of {np.dtype(dtype)}")
    return rec["size"], rec["sha256"]


def _load_layer(path: Path, table: TableSpec, k: int, values: bool = False) -> np.ndarray:
    """Layer ``k`` (its keys, or with ``values`` their values) as saved, once it matches its record
    and holds what such a layer holds; BuildDamaged naming the file otherwise."""
    work = path.parent.parent
    dtype = np.float32 if values else np.uint64
    size, digest = _layer_size(path, dtype, work)
    try:
        arr = read_npy(path, dtype, (size,))
    except ValueError as e:
        raise _damaged(path, work, str(e)) from None
    if _digest(arr) != digest:
        raise _damaged(path, work, f"its SHA-256 does not match {_record_path(path).name}")
    f = table.formation
    problem = (invariants.value_problem(arr) if values
               else invariants.key_problem(arr, np.array([0, size]), k, f.places, table.target))
    if problem:
        raise _damaged(path, work, problem)
    return arr


def _saved_layers(folder: Path) -> int:
    """How many consecutive layers 0, 1, ... are saved (with their records) in ``folder``."""
    k = 0
    while _is_saved(_layer_path(folder, k)):
        k += 1
    return k


def forward(table: TableSpec, folder: Path, progress: Callable[[str, int, int], None],
            stop: Callable[[], bool], chunks: int) -> int:
    """Enumerate the layers into ``folder`` (resuming after its saved layers); the number of layers."""
    done = folder / "done.json"
    if done.is_file():
        rec = _read_json(done, folder.parent)
        try:
            layers = checks.whole("layers", rec.get("layers") if isinstance(rec, dict) else None, 1)
        except ValueError:
            raise _damaged(done, folder.parent, "not the record of a finished enumeration") from None
        saved = _saved_layers(folder)
        if saved < layers:
            missing = _layer_path(folder, saved)
            raise _damaged(done, folder.parent, f"it counts {layers} layers, and {missing.name} or its "
                           "record is missing")
        return layers
    rules = table.rules()
    walls = rules.fixed_mask  # the empty free region: every fixed cell holds the wall nibble 0xF
    free = np.int64(len(table.formation.free))
    pending: dict[int, np.ndarray] = {}

    def expand(k: int, layer: np.ndarray, only_fours: bool = False) -> None:
        u2, u4 = kernels.expand_layer(layer, rules, free, np.int64(chunks))
        for kk, arr in (((k + 1, u2),) if not only_fours else ()) + ((k + 2, u4),):
            if arr.size:
                pending[kk] = kernels.merge_unique(pending[kk], arr) if kk in pending else arr

    k = _saved_layers(folder)
    if k == 0:
        pending[0] = np.array([walls], dtype=np.uint64)
    else:  # rebuild what layers k-2 and k-1 sent upwards
        if k >= 2:
            below = _load_layer(_layer_path(folder, k - 2), table, k - 2)
            u2, u4 = kernels.expand_layer(below, rules, free, np.int64(chunks))
            if u4.size:
                pending[k] = u4
        expand(k - 1, _load_layer(_layer_path(folder, k - 1), table, k - 1))
    while pending:
        if stop():
            raise BuildStopped
        layer = pending.pop(k, np.empty(0, dtype=np.uint64))
        _save_layer(_layer_path(folder, k), layer)
        expand(k, layer)
        progress("enumerating", k, layer.size)
        k += 1
    atomic_write(done, lambda f: f.write(json.dumps({"layers": k})), mode="w")
    return k


def backward(table: TableSpec, fwd: Path, val: Path, layers: int, progress: Callable[[str, int, int], None],
             stop: Callable[[], bool]) -> None:
    """Solve the layers from the top down into ``val`` (resuming after its saved layers)."""
    rules = table.rules()
    empty_k = np.empty(0, dtype=np.uint64)
    empty_v = np.empty(0, dtype=np.float32)
    above = [(empty_k, empty_v), (empty_k, empty_v)]  # layers k + 1, k + 2
    for k in range(layers - 1, -1, -1):
        keys = _load_layer(_layer_path(fwd, k), table, k)
        path = _layer_path(val, k)
        if _is_saved(path):
            values = _load_layer(path, table, k, values=True)
            if values.size != keys.size:
                raise _damaged(path, val.parent, f"{values.size:,} values for the {keys.size:,} keys of "
                               f"{_layer_path(fwd, k)}")
        else:
            if stop():
                raise BuildStopped
            (k1, v1), (k2, v2) = above
            values = kernels.solve_layer(keys, k1, v1, k2, v2, rules, table.p_two)
            if np.isnan(values).any():
                raise RuntimeError(f"layer {k}: a successor is missing from the layers above (a builder bug)")
            _save_layer(path, values)
            progress("solving", layers - k, keys.size)
        above = [(keys, values), above[0]]


def assemble(table: TableSpec, folder: Path, fwd: Path, val: Path, layers: int, seconds: float) -> None:
    """Join the layer files into the table's three arrays, then write ``table.json`` last."""
    sizes = np.array([_layer_size(_layer_path(fwd, k), np.uint64, fwd.parent)[0] for k in range(layers)],
                     np.int64)
    offsets = np.zeros(layers + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n = int(offsets[-1])
    for name, src, dtype in (("keys.npy", fwd, np.uint64), ("values.npy", val, np.float32)):
        tmp = folder / f".{name}.tmp"
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=(n,))
        for k in range(layers):
            part = _load_layer(_layer_path(src, k), table, k, values=dtype is np.float32)
            if part.size != sizes[k]:
                raise _damaged(_layer_path(src, k), fwd.parent, f"{part.size:,} values for the {sizes[k]:,} "
                               f"keys of {_layer_path(fwd, k)}")
            out[offsets[k]:offsets[k + 1]] = part
        out.flush()
        del out
        os.replace(tmp, folder / name)
    _save(folder / "offsets.npy", offsets)
    write_meta(folder, table, n, seconds, layers)
    mark_verified(folder)  # the digests were just taken from these files


def build(name: str | TableSpec, directory: str | Path | None = None, *, force: bool = False,
          progress: Callable[[str, int, int], None] | None = None, stop: Callable[[], bool] | None = None,
          chunks: int | None = None) -> Path:
    """Build table ``name`` into ``directory`` (default: :func:`ai2048.tables.store.default_dir`) and
    return its folder. A built table is kept unless ``force``; a stopped build resumes.

    ``progress(phase, layer, positions)`` is called after each layer; ``stop()`` is asked between
    layers (True: raise :class:`BuildStopped`, the finished layers kept). ``chunks`` parts of each
    layer are expanded in parallel (default: numba's thread count).
    """
    table = spec(name)
    name = table.name
    folder = checked_dir(directory, "the tables folder") / name
    if not force and (folder / META).is_file():
        return folder
    check_resources(table, directory)
    busy = (f"table {name} is being built in {folder} by another process (pid {{pid}}); wait for it to "
            "finish, or stop it (Ctrl-C, or kill -TERM {pid}) and run the same command again to resume")
    with hold_run(folder, busy=busy):  # removes the temp files a killed build left in the folder
        if force:  # everything but the lock this process holds
            (folder / META).unlink(missing_ok=True)
            for p in folder.iterdir():
                if p.is_dir() and not p.is_symlink():
                    shutil.rmtree(p)
                elif p.name != ".lock":
                    p.unlink()
        elif (folder / META).is_file():  # built by another process since the check above
            return folder
        return _build(table, folder, progress, stop, chunks)


def unnamed_cap(table: TableSpec, fwd: Path, layers: int, chunks: int) -> None:
    """Refuse a table whose ``max_sum`` cut its enumeration while its name says it is exact (a cap at or
    above twice the target is not in the name): another table of the same name would hold other
    values. Only the layers within a spawn of the cap can pass it; they are expanded once more
    without it."""
    if table.capped:
        return
    top = table.max_sum // 2  # the highest layer the cap allows
    loose = table.rules()._replace(max_half_sum=NO_BOUND)
    free = np.int64(len(table.formation.free))
    for k in range(max(0, top - 1), min(layers, top + 1)):
        layer = _load_layer(_layer_path(fwd, k), table, k)
        u2, u4 = kernels.expand_layer(layer, loose, free, np.int64(chunks))
        if (u2.size and k + 1 > top) or (u4.size and k + 2 > top):
            raise ValueError(
                f"table {table.name}: max_sum {table.max_sum} bound its enumeration (layer {k} has "
                f"successors past it) but is not in its name; give a max_sum below "
                f"{2 ** (table.target + 1)} (the name then says -s<max_sum>) or one above every reachable "
                f"sum (e.g. {2 ** 12})")


def _read_seconds(clock: Path, work: Path) -> float:
    if not clock.is_file():
        return 0.0
    rec = _read_json(clock, work)
    try:
        return checks.number("seconds", rec.get("seconds") if isinstance(rec, dict) else None, 0)
    except ValueError:
        raise _damaged(clock, work, "not the record of the time spent building") from None


def _build(table: TableSpec, folder: Path, progress: Callable[[str, int, int], None] | None,
           stop: Callable[[], bool] | None, chunks: int | None) -> Path:
    """:func:`build`'s work, in ``folder`` that this process holds."""
    work = folder / ".build"
    fwd, val = work / "fwd", work / "val"
    stamp = work / "spec.json"
    want = {"spec": table.describe(), "layers": LAYER_FORMAT}
    if stamp.is_file() and _read_json(stamp, work) != want:
        shutil.rmtree(work)  # layers of another spec or layout (an older version): start again
    for d in (fwd, val):
        try:
            d.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise _damaged(d, work, f"not a folder ({e.strerror or e})") from None
        remove_stale_temps(d)
    remove_stale_temps(work)
    if not stamp.is_file():
        atomic_write(stamp, lambda f: f.write(json.dumps(want)), mode="w")
    clock = work / "seconds.json"
    spent = _read_seconds(clock, work)
    start = time.monotonic()

    def tick() -> float:
        return spent + time.monotonic() - start

    def keep_time() -> None:
        atomic_write(clock, lambda f: f.write(json.dumps({"seconds": tick()})), mode="w")

    import numba

    parts = int(chunks or numba.get_num_threads())
    report = progress or (lambda phase, k, n: None)
    asked = stop or (lambda: False)
    try:
        layers = forward(table, fwd, report, asked, parts)
        unnamed_cap(table, fwd, layers, parts)
        backward(table, fwd, val, layers, report, asked)
    finally:
        keep_time()
    for n in FILES:
        (folder / n).unlink(missing_ok=True)
    assemble(table, folder, fwd, val, layers, tick())
    shutil.rmtree(work)
    return folder


__all__ = ["BuildDamaged", "BuildStopped", "build", "build_command", "check_resources", "estimate",
           "requirements"]
