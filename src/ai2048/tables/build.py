"""Build a table: enumerate its positions forward by layers of tile sum, then solve them backward.

Every finished layer is written (atomically) to ``NAME/.build/`` before the next one starts, so a
build stopped at any moment (Ctrl-C, SIGTERM, SIGKILL, a full disk) resumes from its last
finished layer with the same command. The finished table is assembled from those files, its
``table.json`` written last (:mod:`ai2048.tables.store`), then the layer files are removed.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ai2048.checkpoint import atomic_write
from ai2048.tables import kernels
from ai2048.tables.formations import TABLES, TableSpec, spec
from ai2048.tables.store import FILES, META, build_command, tables_dir, write_meta

# Bytes a position costs while building: its key and value in the layer files, the assembled
# table, and the expansion buffers of the largest layers (measured: see docs/tables.md).
DISK_BYTES_PER_POSITION = 2 * (8 + 4)
PEAK_LAYER_FRACTION = 0.03


class BuildStopped(Exception):
    """A stop request (Ctrl-C, SIGTERM) was honoured at a layer boundary; the build resumes later."""


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


def check_resources(name: str | TableSpec, directory: str | Path | None = None) -> None:
    """Refuse, before anything is allocated or written, a build that the disk or memory cannot hold
    (estimated from the positions a build of the registered table counted)."""
    table = spec(name)
    name = table.name
    positions = TABLES[name][1] if TABLES.get(name, (None,))[0] == table else 0
    memory, disk = requirements(table, positions)
    root = tables_dir(directory)
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free_disk = shutil.disk_usage(probe).free
    if free_disk < disk:
        raise ValueError(
            f"table {name} needs about {disk / 2**30:.1f} GiB of disk in {root}, and "
            f"{free_disk / 2**30:.1f} GiB is free; free some space or choose another folder with --dir "
            "(or AI2048_TABLES)"
        )
    avail = _available_memory()
    if avail and avail < memory:
        raise ValueError(
            f"table {name} needs about {memory / 2**30:.1f} GiB of memory to build and "
            f"{avail / 2**30:.1f} GiB is available; close other programs or build it on a larger machine"
        )


def _layer_path(folder: Path, k: int) -> Path:
    return folder / f"L{k:05d}.npy"


def _save(path: Path, arr: np.ndarray) -> None:
    atomic_write(path, lambda f: np.save(f, arr, allow_pickle=False))


def _load(path: Path) -> np.ndarray:
    return np.load(path, allow_pickle=False)


def _saved_layers(folder: Path) -> int:
    """How many consecutive layers 0, 1, ... are saved in ``folder``."""
    k = 0
    while _layer_path(folder, k).is_file():
        k += 1
    return k


def forward(table: TableSpec, folder: Path, progress: Callable[[str, int, int], None],
            stop: Callable[[], bool], chunks: int) -> int:
    """Enumerate the layers into ``folder`` (resuming after its saved layers); the number of layers."""
    done = folder / "done.json"
    if done.is_file():
        return int(json.loads(done.read_text())["layers"])
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
            below = _load(_layer_path(folder, k - 2))
            u2, u4 = kernels.expand_layer(below, rules, free, np.int64(chunks))
            if u4.size:
                pending[k] = u4
        expand(k - 1, _load(_layer_path(folder, k - 1)))
    while pending:
        if stop():
            raise BuildStopped
        layer = pending.pop(k, np.empty(0, dtype=np.uint64))
        _save(_layer_path(folder, k), layer)
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
        keys = _load(_layer_path(fwd, k))
        path = _layer_path(val, k)
        if path.is_file():
            values = _load(path)
        else:
            if stop():
                raise BuildStopped
            (k1, v1), (k2, v2) = above
            values = kernels.solve_layer(keys, k1, v1, k2, v2, rules, table.p_two)
            if np.isnan(values).any():
                raise RuntimeError(f"layer {k}: a successor is missing from the layers above (a builder bug)")
            _save(path, values)
            progress("solving", layers - k, keys.size)
        above = [(keys, values), above[0]]


def assemble(table: TableSpec, folder: Path, fwd: Path, val: Path, layers: int, seconds: float) -> None:
    """Join the layer files into the table's three arrays, then write ``table.json`` last."""
    sizes = np.array([np.load(_layer_path(fwd, k), mmap_mode="r").shape[0] for k in range(layers)], np.int64)
    offsets = np.zeros(layers + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n = int(offsets[-1])
    for name, src, dtype in (("keys.npy", fwd, np.uint64), ("values.npy", val, np.float32)):
        tmp = folder / f".{name}.tmp"
        out = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=(n,))
        for k in range(layers):
            out[offsets[k]:offsets[k + 1]] = np.load(_layer_path(src, k), allow_pickle=False)
        out.flush()
        del out
        os.replace(tmp, folder / name)
    _save(folder / "offsets.npy", offsets)
    write_meta(folder, table, n, seconds, layers)


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
    folder = tables_dir(directory) / name
    if force and folder.exists():
        (folder / META).unlink(missing_ok=True)
        shutil.rmtree(folder)
    if (folder / META).is_file():
        return folder
    check_resources(table, directory)
    work = folder / ".build"
    fwd, val = work / "fwd", work / "val"
    fwd.mkdir(parents=True, exist_ok=True)
    val.mkdir(parents=True, exist_ok=True)
    stamp = work / "spec.json"
    if stamp.is_file() and json.loads(stamp.read_text()) != table.describe():
        shutil.rmtree(work)  # layers of another spec (an older version): start again
        fwd.mkdir(parents=True)
        val.mkdir(parents=True)
    if not stamp.is_file():
        atomic_write(stamp, lambda f: f.write(json.dumps(table.describe())), mode="w")
    clock = work / "seconds.json"
    spent = float(json.loads(clock.read_text())["seconds"]) if clock.is_file() else 0.0
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
        backward(table, fwd, val, layers, report, asked)
    finally:
        keep_time()
    for n in FILES:
        (folder / n).unlink(missing_ok=True)
    assemble(table, folder, fwd, val, layers, tick())
    shutil.rmtree(work)
    return folder


__all__ = ["BuildStopped", "build", "build_command", "check_resources", "estimate", "requirements"]
