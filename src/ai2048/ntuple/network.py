"""The n-tuple network as a Python object: arrays for the kernels, values, save and load.

A weights file (``weights.npz``, compressed) holds ``format``, ``rules_version``, ``patterns``
(hex cell strings), ``stages`` (tile exponents opening each stage), ``kind`` ("after" or
"before": what the values are of) and ``w`` (float32 [stages * table]); a training run adds its
state under ``train_*`` keys. Loading checks every one of them and names what differs.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.checkpoint import atomic_write, check_regular_file
from ai2048.ntuple.codegen import DEFAULT_RULES, specialized
from ai2048.ntuple.patterns import parse_patterns, pattern_name, tuple_runs
from ai2048.rules import P_TWO, RULES_VERSION, RULES_VERSIONS

FORMAT = "ai2048.ntuple/1"
KINDS = ("after", "before")


class Network:
    """Weights of an n-tuple network with the 8 symmetries of every tuple.

    Args:
        patterns: preset name (``"4x6"``), hex cell strings or lists of cells.
        stages: tile exponents that open a new set of weights (multistage TD; e.g. ``(14,)``
            switches to stage 1 once a 16384 is on the board). Empty for one stage.
        kind: ``"after"`` (values of after-states, the default) or ``"before"`` (seed 004's
            before-state values).
        init_value: every state's starting value, spread evenly over the features (optimistic
            initialisation, Guei et al. 2022, uses 320,000).
        weights: an existing float32 [stages * table] array to use instead of allocating one.
        tc: allocate the weights as temporal-coherence records at once (:meth:`tc_arrays`), so a TC
            run never holds a separate table beside them.
    """

    def __init__(
        self,
        patterns: str | Sequence[Sequence[int]] = "4x6",
        *,
        stages: Sequence[int] = (),
        kind: str = "after",
        init_value: float = 0.0,
        weights: np.ndarray | None = None,
        tc: bool = False,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        st = tuple(int(s) for s in stages)
        if any(not 1 <= s <= 15 for s in st) or list(st) != sorted(set(st)):
            raise ValueError(f"stages must be increasing tile exponents in 1..15, got {list(stages)}")
        self.tuples = parse_patterns(patterns)
        self.patterns = pattern_name(self.tuples)
        self.stages = st
        self.kind = kind
        self.runs, self.nruns, self.tbase, self.table = tuple_runs(self.tuples)
        self.stage_arr = np.array(st, dtype=np.int64)
        self.k = specialized(self.tuples)
        size = self.table * (len(st) + 1)
        self._records: np.ndarray | None = None
        if weights is None and tc:
            self._records = _new_records(size, init_value / self.features)
            self.w = self._records[:, 0]
        elif weights is None:
            self.w = np.full(size, init_value / self.features, dtype=np.float32)
        else:
            if tc:
                raise ValueError("pass weights or tc=True, not both (tc_arrays() moves given weights)")
            if weights.dtype != np.float32 or weights.shape != (size,):
                raise ValueError(
                    f"weights must be float32 [{size}] for patterns {self.patterns} with "
                    f"{len(st) + 1} stage(s), got {weights.dtype} {list(weights.shape)}"
                )
            self.w = weights

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its kernels module (compiled code, rebuilt on unpickling) and, with TC
        records, without the weights view into them (it is their first column again)."""
        state = dict(vars(self))
        del state["k"]
        if state["_records"] is not None:
            del state["w"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self.k = specialized(self.tuples)
        if self._records is not None:
            self.w = self._records[:, 0]

    def tc_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Temporal-coherence accumulators ``(E, A)`` (Jaśkowski 2018) stored beside the weights.

        The first call moves the weights into one float32 [table, 3] array of records
        ``(w, E, A)`` (as TDL2048+ stores a TC weight), so a TC step reads and writes one cache line
        per feature instead of three; :attr:`w` becomes its first column (a strided view: the
        kernels take either layout) and E, A (zero) its others. Converting holds the old table
        and the records at once (one table more than the records; ``Network(tc=True)`` and
        ``load_file(tc=True)`` build the records directly instead); later calls return the same
        views. Save, load and :func:`read_into` convert between this layout and the file's
        separate arrays.
        """
        if self._records is None:
            rec = _new_records(self.w.size, 0.0)
            rec[:, 0] = self.w
            self.w = rec[:, 0]
            self._records = rec
        return self._records[:, 1], self._records[:, 2]

    def contiguous_weights(self) -> np.ndarray:
        """:attr:`w` as one contiguous array (a copy when TC records hold it): what the playing
        kernels are compiled for, so evaluation after TC training does not compile a strided variant."""
        return np.ascontiguousarray(self.w)

    @property
    def features(self) -> int:
        """Number of features: tuples x 8 symmetries."""
        return 8 * int(self.nruns.size)

    @property
    def nbytes(self) -> int:
        """Bytes held by the weights."""
        return int(self.w.nbytes)

    def data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The evaluator data ``(w, runs, nruns, tbase, stages)`` for ``ntuple_value`` of :attr:`k` (the
        kernels specialised to this pattern set)."""
        return (self.w, self.runs, self.nruns, self.tbase, self.stage_arr)

    def value(self, board: int) -> float:
        """``V(board)``: the sum of the board's feature weights in its stage."""
        return float(self.k.ntuple_value(np.uint64(board), self.data()))

    def move_values(self, board: int, p_two: float = P_TWO, downgrade: int = 0) -> np.ndarray:
        """[4] ``r + V`` per action (NaN if illegal), as the 1-ply player scores them; ``downgrade``:
        the kernels' mode (``agents.ntuple.DOWNGRADES``)."""
        return self.k.move_values(
            np.uint64(board), KINDS.index(self.kind), p_two, self.w, self.runs, self.nruns, self.tbase,
            self.stage_arr, np.int64(downgrade), DEFAULT_RULES,
        )

    def header(self) -> dict[str, np.ndarray]:
        """The identifying arrays stored with the weights."""
        return {
            "format": np.array(FORMAT),
            "rules_version": np.array(RULES_VERSION, dtype=np.int64),
            "patterns": np.array(self.patterns),
            "stages": self.stage_arr,
            "kind": np.array(self.kind),
        }

    def save(self, path: str | Path, **extra: np.ndarray) -> None:
        """Write the weights (and ``extra`` arrays) compressed, atomically (:func:`save_streamed`)."""
        save_streamed(path, {"w": self.w, **self.header(), **extra})

    @classmethod
    def load(cls, path: str | Path, patterns: str | None = None) -> Network:
        """Read a weights file, checking format, rules version, patterns (if given) and sizes."""
        net, _ = load_file(path, patterns=patterns)
        return net


def _new_records(size: int, value: float) -> np.ndarray:
    """float32 [size, 3] TC records ``(value, 0, 0)``, written a 1 MiB slice at a time (no temporary
    the size of a column)."""
    rec = np.empty((size, 3), dtype=np.float32)
    step = max(1, STREAM_CHUNK // rec[0].nbytes)
    for i in range(0, size, step):
        rec[i : i + step] = (value, 0.0, 0.0)
    return rec


STREAM_CHUNK = 1 << 20
"""Bytes of an array handed to the compressor at a time when saving."""
COMPRESS_LEVEL = 1
"""zlib level of saved tables: much faster than the default level 6 for a slightly larger file
(measured: docs/ntuple-lab.md); a run checkpoints every few thousand games."""


def save_streamed(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as a compressed ``.npz`` (the format of ``np.savez_compressed``, read by
    ``np.load``) atomically, streaming each array into its zip member from views of its memory in
    1 MiB pieces: a checkpoint of a 256 MiB table allocates about 1 MiB, not a copy of the table.
    A strided 1-d array (a column of :meth:`Network.tc_arrays`' records) is copied out 1 MiB at a
    time, so the file holds the same separate arrays whatever the layout in memory."""

    def write(f: Any) -> None:
        with zipfile.ZipFile(
            f, mode="w", compression=zipfile.ZIP_DEFLATED, compresslevel=COMPRESS_LEVEL, allowZip64=True
        ) as zf:
            for name, value in arrays.items():
                a = np.asarray(value)
                if a.dtype.hasobject:
                    raise ValueError(f"cannot save object array {name!r} without pickle")
                strided = not a.flags.c_contiguous and a.ndim == 1
                if not a.flags.c_contiguous and not strided:
                    a = a.copy(order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
                with zf.open(f"{name}.npy", mode="w", force_zip64=True) as member:
                    np.lib.format.write_array_header_1_0(member, np.lib.format.header_data_from_array_1_0(a))
                    if strided:
                        step = max(1, STREAM_CHUNK // a.itemsize)
                        for i in range(0, a.size, step):
                            member.write(np.ascontiguousarray(a[i : i + step]).data)
                    else:
                        raw = a.reshape(-1).view(np.uint8).data  # a view, not a copy
                        for i in range(0, raw.nbytes, STREAM_CHUNK):
                            member.write(raw[i : i + STREAM_CHUNK])

    atomic_write(path, write)


def _open_member(zf: zipfile.ZipFile, path: Path, name: str) -> tuple[Any, tuple[int, ...], np.dtype]:
    """Open array ``name`` of an open ``.npz`` and read its ``.npy`` header: (stream, shape, dtype)."""
    if f"{name}.npy" not in zf.namelist():
        raise ValueError(f"weights file {path} lacks {name}")
    member = zf.open(f"{name}.npy")
    version = np.lib.format.read_magic(member)
    if version not in ((1, 0), (2, 0)):
        member.close()
        raise ValueError(
            f"weights file {path} stores {name} in .npy format {version}, which this version cannot stream"
        )
    header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = header(member)
    return member, tuple(shape), dtype


def read_shape(path: str | Path, name: str) -> tuple[int, ...]:
    """Shape of array ``name`` in the ``.npz`` at ``path``, read from its header alone."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            member, shape, _ = _open_member(zf, path, name)
            member.close()
            return shape
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise ValueError(f"weights file {path} is corrupt or truncated ({e}); restore it or retrain") from e


def read_into(path: str | Path, name: str, out: np.ndarray) -> None:
    """Read array ``name`` of the ``.npz`` at ``path`` into ``out`` (any 1-d layout, e.g. a column
    of :meth:`Network.tc_arrays`), 1 MiB at a time: resuming TC training fills its records without
    holding a second copy of the table. The stored array must have ``out``'s dtype and length."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            member, shape, dtype = _open_member(zf, path, name)
            with member:
                if dtype != out.dtype or shape != out.shape or dtype.hasobject:
                    raise ValueError(
                        f"weights file {path} holds {name} as {dtype} {list(shape)}, expected "
                        f"{out.dtype} {list(out.shape)}; it does not belong to this network"
                    )
                step = max(1, STREAM_CHUNK // out.itemsize)
                for i in range(0, out.size, step):
                    n = min(step, out.size - i)
                    raw = member.read(n * out.itemsize)
                    if len(raw) != n * out.itemsize:
                        raise ValueError(
                            f"weights file {path} is truncated inside {name}; restore it or retrain"
                        )
                    out[i : i + n] = np.frombuffer(raw, dtype=out.dtype)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise ValueError(f"weights file {path} is corrupt or truncated ({e}); restore it or retrain") from e


SMALL_MEMBER_BYTES = 1 << 20
"""Most bytes a weights file's header arrays (format, rules version, patterns, stages, kind) may claim."""


def physical_memory() -> int:
    """Bytes of memory this machine has (0 where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 0


def npz_claims(
    path: Path, names: Sequence[str] | None = None, source: Any = None
) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """(shape, dtype) of each array ``name`` of the ``.npz`` at ``path`` (every array when ``names`` is
    None; read from ``source``, a file object, when given), from its ``.npy`` header alone: numpy
    allocates an array of the header's shape before it reads a byte of its data, so a few-byte file
    could claim terabytes. Names absent from the file are left out."""
    out = {}
    try:
        with zipfile.ZipFile(path if source is None else source) as zf:
            present = set(zf.namelist())
            wanted = [n[:-4] for n in zf.namelist() if n.endswith(".npy")] if names is None else names
            for name in wanted:
                if f"{name}.npy" in present:
                    member, shape, dtype = _open_member(zf, path, name)
                    member.close()
                    out[name] = (shape, dtype)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as e:
        if str(path) in str(e):
            raise
        raise ValueError(f"weights file {path} is corrupt or truncated ({e}); restore it or retrain") from e
    return out


def array_nbytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    """Bytes of an array of ``shape`` and ``dtype``, in Python ints (no overflow for a forged shape)."""
    return int(np.prod(shape, dtype=object)) * dtype.itemsize


def _check_claims(
    path: Path, claims: dict[str, tuple[tuple[int, ...], np.dtype]], small: Sequence[str]
) -> None:
    """Refuse, naming the file, arrays whose headers claim more than a weights file can hold."""
    memory = physical_memory()
    for name, (shape, dtype) in claims.items():
        n = array_nbytes(shape, dtype)
        if name in small and n > SMALL_MEMBER_BYTES:
            raise ValueError(
                f"weights file {path} holds {name} as {dtype} {list(shape)} ({n} bytes), where an ai2048 "
                "weights file holds a few bytes; it is corrupt or not an ai2048 n-tuple weights file"
            )
        if memory and n > memory:
            raise ValueError(
                f"weights file {path} holds {name} as {dtype} {list(shape)}: {n / 2**30:.1f} GiB, more "
                f"than this machine's {memory / 2**30:.1f} GiB of memory; it is corrupt or too big to "
                "load here"
            )


def _check_w(path: Path, claim: tuple[tuple[int, ...], np.dtype], patterns: str, stages: tuple[int, ...],
             tc: bool) -> None:
    """Refuse, before numpy allocates it, a ``w`` whose header is not the float32 table the file's own
    patterns and stages need, or a table bigger than this machine's memory."""
    try:
        table = tuple_runs(parse_patterns(patterns))[3]
    except ValueError as e:
        raise ValueError(f"weights file {path} does not match its own header: {e}") from e
    size = table * (len(stages) + 1)
    shape, dtype = claim
    if dtype != np.float32 or shape != (size,):
        raise ValueError(
            f"weights file {path} does not match its own header: weights must be float32 [{size}] for "
            f"patterns {patterns} with {len(stages) + 1} stage(s), got {dtype} {list(shape)}"
        )
    need, memory = size * 4 * (3 if tc else 1), physical_memory()
    if memory and need > memory:
        raise ValueError(
            f"weights file {path} holds a network of {need / 2**30:.1f} GiB (patterns {patterns}), more "
            f"than this machine's {memory / 2**30:.1f} GiB of memory"
        )


def load_file(
    path: str | Path, patterns: str | None = None, extra: Sequence[str] = (), tc: bool = False
) -> tuple[Network, dict[str, np.ndarray]]:
    """Load a weights file and the ``extra`` arrays named; every problem raises a ValueError that names it.

    ``tc=True`` streams the weights into TC records (``Network(tc=True)``; :func:`read_into` the
    accumulators after), so resuming TC training holds the records and never a second table."""
    path = Path(path)
    check_regular_file(path, "weights file")  # missing, or a folder, FIFO or device: named
    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"weights file {path} is corrupt or truncated (not an .npz archive); restore it or retrain"
        )
    small = ("format", "rules_version", "patterns", "stages", "kind")
    claims = npz_claims(path, (*small, "w", *extra))
    _check_claims(path, claims, small)
    try:
        with np.load(path, allow_pickle=False) as z:
            keys = set(z.files)
            need = {"format", "rules_version", "patterns", "stages", "kind", "w", *extra}
            missing = sorted(need - keys)
            if missing:
                raise ValueError(
                    f"weights file {path} lacks {', '.join(missing)}; it is not an ai2048 n-tuple "
                    f"weights file (or it is from an older format)"
                )
            fmt = str(z["format"])
            if fmt != FORMAT:
                raise ValueError(f"weights file {path} has format {fmt!r}; this version reads {FORMAT!r}")
            rv = int(z["rules_version"])
            if rv not in RULES_VERSIONS:  # 0 and 1 differ only past 32768: either serves both
                raise ValueError(
                    f"weights file {path} was trained under rules version {rv}, but this ai2048 plays "
                    f"versions {', '.join(map(str, RULES_VERSIONS))}; retrain under the current rules"
                )
            file_patterns = str(z["patterns"])
            stages = tuple(int(s) for s in z["stages"])
            kind = str(z["kind"])
            _check_w(path, claims["w"], file_patterns, stages, tc)
            w = None if tc else z["w"]  # (NpzFile reads a member only when it is asked for)
            arrays: dict[str, Any] = {k: z[k] for k in extra}
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
        raise ValueError(f"weights file {path} is corrupt or truncated ({e}); restore it or retrain") from e
    except ValueError as e:
        if "allow_pickle" in str(e):
            raise ValueError(
                f"weights file {path} holds pickled Python objects, which ai2048 never loads (numbers "
                "only); it is not an ai2048 n-tuple weights file"
            ) from None
        if str(path) in str(e):
            raise
        # numpy's own words for a member shorter than its header says ("EOF: reading array data")
        raise ValueError(f"weights file {path} is corrupt or truncated ({e}); restore it or retrain") from e
    if patterns is not None:
        want = pattern_name(parse_patterns(patterns))
        if want != file_patterns:
            raise ValueError(
                f"weights file {path} holds patterns {file_patterns}, not the requested {want}"
            )
    try:
        net = Network(file_patterns, stages=stages, kind=kind, weights=w, tc=tc)
        if w is None:
            read_into(path, "w", net.w)
    except ValueError as e:
        if str(path) in str(e):
            raise
        raise ValueError(f"weights file {path} does not match its own header: {e}") from e
    return net, arrays
