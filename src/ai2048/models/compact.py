"""The compact file of a trained n-tuple network (``NAME.ntz``): touched weights, fixed point.

A 4x6 network with two stages holds 2 x 4 x 16**6 float32 weights (512 MiB), but a run only
changes the entries of the tuple values its games reached; the rest keep their initial value
(``fill``: 0, or the optimistic start of OTD). The file stores, per stage:

- each entry as an integer ``c = round((w - fill) / step)`` with ``step`` a power of two; the
  entries with ``c != 0`` are stored, in index order, each minus the previous stage's ``c`` at the
  same place (a promoted stage starts as a copy of the one below, so deltas are small),
  zigzag-coded and split into byte planes (the high planes are nearly all zero);
- which entries are stored: a bitmap (one bit an entry) XORed with the previous stage's bitmap,
  kept in two levels: one bit per byte of the bitmap (is it nonzero?), then the nonzero bytes;
- ``exact``: entries restored as float32 after decoding (index gaps as uint32 byte planes): the
  weights of every choice on the packer's calibration positions, and those it found deciding a
  move differently (:mod:`ai2048.models.agreement`);
- ``check``: positions from the network's own games with the float32 network's 1-ply move on each,
  so the shipped file can be checked without the float32 original.

Fixed point bounds every weight's error by ``step / 2``, where float16 errs by up to 2**-11 of
the weight (8 on a weight of 12,000): at the same size it disagrees with float32 on far fewer moves
(docs/ntuple.md, "Shipped networks"). Each section is compressed with a standard-library codec
(lzma or zlib) and stored as a uint8 array in an uncompressed ``.npz`` container, read with
``allow_pickle=False``. Decoding is numpy only; numba starts only when the network plays.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import math
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.checkpoint import atomic_write, check_regular_file
from ai2048.ntuple.network import KINDS, Network, array_nbytes, npz_claims, physical_memory
from ai2048.ntuple.patterns import parse_patterns, pattern_name, tuple_runs
from ai2048.rules import P_TWO, RULES_VERSION, RULES_VERSIONS

FORMAT = "ai2048.ntuple-compact/1"
SUFFIX = ".ntz"
CODECS: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
    "lzma": (lambda b: lzma.compress(b, preset=6), lzma.decompress),
    "zlib": (lambda b: zlib.compress(b, 9), zlib.decompress),
}
"""Section codecs: (compress, decompress). lzma is smaller, zlib decodes faster (docs/ntuple-lab.md)."""

DECOMPRESSORS: dict[str, Callable[[], Any]] = {"lzma": lzma.LZMADecompressor, "zlib": zlib.decompressobj}
"""Streaming decompressors of :data:`CODECS`: a section is decoded at most as far as its header allows."""
MAX_CHECKS = 1 << 24
"""Most check positions a compact file may hold (the packer writes thousands)."""

_CHUNK = 1 << 17
"""Bitmap bytes (up to 8 entries each) decoded at a time."""
_SECTIONS = ("index1", "index2", "codes", "exact_index", "exact_values", "check_boards", "check_moves")


class ModelFileError(ValueError):
    """A network file or card that cannot be used: corrupt, truncated, foreign or mismatched."""


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def stage_codes(w: np.ndarray, nstages: int, fill: float, step: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per stage: (indices within the stage [n] int64, their nonzero integer codes [n] int64).

    ``c = round((w - fill) / step)``; an entry whose code is 0 decodes to ``fill`` without being
    stored. A code beyond ±2**30 (a step too fine for the weights) raises.
    """
    table = w.size // nstages
    out = []
    for s in range(nstages):
        ws = w[s * table : (s + 1) * table]
        idx = np.flatnonzero(ws != np.float32(fill))
        c = np.rint((ws[idx].astype(np.float64) - fill) / step)
        if c.size and np.abs(c).max() >= 2**30:
            raise ValueError(
                f"step {step} is too fine for weights up to {np.abs(ws[idx]).max():.0f}; use a coarser step"
            )
        keep = c != 0
        out.append((idx[keep], c[keep].astype(np.int64)))
    return out


def dequantize(c: np.ndarray, step: float, fill: float) -> np.ndarray:
    """[n] float32 weights of integer codes: ``fill + c * step`` (the one formula encoder and decoder share).

    With ``fill`` 0 and codes below 2**24 the product is exact in float32 (``step`` is a power of
    two), so the float32 shortcut gives the same values as the float64 path.
    """
    if fill == 0 and (c.size == 0 or int(np.abs(c).max()) < 2**24):
        return c.astype(np.float32) * np.float32(step)
    return (c.astype(np.float64) * step + fill).astype(np.float32)


def stored_weights(
    w: np.ndarray, nstages: int, fill: float, step: float, exact: np.ndarray | None = None
) -> np.ndarray:
    """The float32 weights as a compact file with this ``fill``, ``step`` and ``exact`` decodes them."""
    out = np.full(w.size, np.float32(fill), np.float32)  # codes of 0 decode to fill
    table = w.size // nstages
    for s, (idx, c) in enumerate(stage_codes(w, nstages, fill, step)):
        out[s * table + idx] = dequantize(c, step, fill)
    if exact is not None and exact.size:
        out[exact] = w[exact]
    return out


def stage_deltas(w: np.ndarray, nstages: int, fill: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """(bitmap [entries/8] uint8, each stage's XORed with the one below; integer codes [touched]
    int64, each stage's minus the code below at the same place): what the file compresses."""
    table = w.size // nstages
    bitmaps, deltas = [], []
    prev_bm = np.zeros(table // 8, np.uint8)
    prev_c = np.zeros(table, np.int32)
    for s, (idx, c) in enumerate(stage_codes(w, nstages, fill, step)):
        mask = np.zeros(table, np.bool_)
        mask[idx] = True
        bm = np.packbits(mask)
        bitmaps.append(bm ^ prev_bm)
        deltas.append(c - prev_c[idx])
        prev_bm = bm
        if s + 1 < nstages:
            prev_c = np.zeros(table, np.int32)
            prev_c[idx] = c
    return np.concatenate(bitmaps), np.concatenate(deltas)


def check_step(step: Any, example: str) -> float:
    """``step`` as a float that is a positive power of two (``example`` names one), else a ValueError."""
    v = checks.number("step", step, 0, lo_open=True, why=f"a power of two such as {example}")
    if not math.log2(v).is_integer():
        raise ValueError(f"step={step!r} must be a power of two such as {example}")
    return v


def encode(
    net: Network,
    *,
    step: float,
    fill: float = 0.0,
    exact: np.ndarray | None = None,
    check_boards: np.ndarray | None = None,
    check_moves: np.ndarray | None = None,
    p_two: float = P_TWO,
    codec: str = "zlib",
) -> dict[str, np.ndarray]:
    """The sections of a compact file for ``net`` (see the module docstring).

    Args:
        net: the float32 network.
        step: fixed-point step, a power of two (2**-6 keeps every weight within 1/128).
        fill: the value of untouched entries (the run's ``init_value / features``).
        exact: int64 indices restored as float32 after decoding.
        check_boards, check_moves: [N] uint64 positions and [N] the float32 network's moves.
        p_two: the spawn odds the network was trained under (recorded in the header).
        codec: ``"zlib"`` (decodes faster) or ``"lzma"`` (a little smaller).
    """
    if codec not in CODECS:
        raise ValueError(f"codec must be one of {', '.join(CODECS)}, got {codec!r}")
    check_step(step, "2**-6")
    w = net.w
    if not np.isfinite(w).all():
        raise ValueError(
            f"the network holds {int((~np.isfinite(w)).sum())} NaN or infinite weights; it cannot be packed"
        )
    top = float(np.finfo(np.float32).max)
    fill = float(np.float32(checks.number("fill", fill, -top, top, why="float32's range")))
    nstages = len(net.stages) + 1
    ex = np.unique(np.asarray(exact if exact is not None else [], dtype=np.int64))
    if ex.size and (ex[0] < 0 or ex[-1] >= w.size):
        raise ValueError(f"exact indices must lie in 0..{w.size - 1}")
    if w.size >= 2**32:
        raise ValueError(f"networks of 2**32 weights or more ({w.size}) do not fit this format's indices")
    boards = np.zeros(0, np.uint64) if check_boards is None else np.asarray(check_boards, dtype=np.uint64)
    moves = np.zeros(0, np.int8) if check_moves is None else np.asarray(check_moves, dtype=np.int8)
    if boards.shape != moves.shape or boards.ndim != 1:
        raise ValueError(
            f"check_boards and check_moves must be [N] arrays of one length, got {boards.shape} and "
            f"{moves.shape}"
        )
    x, d = stage_deltas(w, nstages, fill, step)
    max_code = [int(np.abs(c).max()) if c.size else 0 for _, c in stage_codes(w, nstages, fill, step)]
    z = ((d << 1) ^ (d >> 63)).view(np.uint64)
    nbytes = max(1, (int(z.max()).bit_length() + 7) // 8) if z.size else 1
    planes = z.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :nbytes].T.copy()
    header = {
        "format": FORMAT,
        "rules_version": RULES_VERSION,
        "p_two": float(p_two),
        "patterns": net.patterns,
        "stages": list(net.stages),
        "kind": net.kind,
        "entries": int(w.size),
        "fill": fill,
        "step": float(step),
        "touched": int(d.size),
        "max_code": max_code,
        "code_bytes": nbytes,
        "exact": int(ex.size),
        "checks": int(boards.size),
        "codec": codec,
    }
    comp = CODECS[codec][0]
    raw = {
        "index1": np.packbits(x != 0).tobytes(),
        "index2": x[x != 0].tobytes(),
        "codes": planes.tobytes(),
        "exact_index": np.diff(ex, prepend=0).astype("<u4").view(np.uint8).reshape(-1, 4).T.tobytes(),
        "exact_values": w[ex].astype("<f4").tobytes(),
        "check_boards": boards.astype("<u8").tobytes(),
        "check_moves": moves.tobytes(),
    }
    out = {"header": np.array(json.dumps(header, sort_keys=True))}
    out.update({k: np.frombuffer(comp(v), dtype=np.uint8) for k, v in raw.items()})
    return out


def write(path: str | Path, net: Network, **options: Any) -> dict[str, Any]:
    """Encode ``net`` (options as :func:`encode`) and write it to ``path`` atomically; returns the header."""
    sections = encode(net, **options)
    atomic_write(path, lambda f: np.savez(f, **sections))  # type: ignore[arg-type]
    header: dict[str, Any] = json.loads(str(sections["header"]))
    return header


def _open(path: Path, sha256: str | None, size: int | None) -> bytes:
    """The file's bytes, after the size and hash checks a card provides."""
    check_regular_file(path, "network file")  # missing, or a folder, FIFO or device: named
    on_disk = path.stat().st_size
    if size is not None and on_disk != size:  # before reading: a card's size bounds what is read
        raise ModelFileError(
            f"network file {path} is {on_disk} bytes but its card says {size}: it is truncated or "
            "half-written (an interrupted download or copy); fetch or reinstall it again"
        )
    data = path.read_bytes()
    if size is not None and len(data) != size:
        raise ModelFileError(
            f"network file {path} is {len(data)} bytes but its card says {size}: it is truncated or "
            "half-written (an interrupted download or copy); fetch or reinstall it again"
        )
    if sha256 is not None:
        got = hashlib.sha256(data).hexdigest()
        if got != sha256.lower():
            raise ModelFileError(
                f"network file {path} is corrupt: its SHA-256 is {got}, its card says {sha256}; "
                "fetch or reinstall it again"
            )
    return data


def read_sections(
    path: str | Path, sha256: str | None = None, size: int | None = None
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """(header, decompressed sections) of a compact file; every problem names the file."""
    path = Path(path)
    data = _open(path, sha256, size)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            files = set(z.files)
            missing = sorted({"header", *_SECTIONS} - files)
            if missing:
                raise ModelFileError(
                    f"{path} lacks {', '.join(missing)}: it is not an ai2048 compact network file ({FORMAT})"
                )
            # numpy allocates a header's shape before reading: check every claim first
            for name, (shape, dtype) in npz_claims(path, source=io.BytesIO(data)).items():
                if array_nbytes(shape, dtype) > len(data):
                    raise ModelFileError(
                        f"network file {path} is corrupt: its array {name!r} claims {dtype} {list(shape)}, "
                        f"more than the file's {len(data)} bytes; fetch or reinstall it again"
                    )
            header = json.loads(str(z["header"]))
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                raise ModelFileError(
                    f"{path} has format {header.get('format') if isinstance(header, dict) else None!r}; "
                    f"this version of ai2048 reads {FORMAT!r}"
                )
            codec = header.get("codec")
            if codec not in CODECS:
                raise ModelFileError(f"{path} uses codec {codec!r}; this version reads {', '.join(CODECS)}")
            limits = _section_limits(path, header)
            sections = {k: _decompress(path, k, codec, z[k].tobytes(), limits[k]) for k in _SECTIONS}
    except ModelFileError:
        raise
    except (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError, KeyError,
            RecursionError) as e:
        raise ModelFileError(
            f"network file {path} is corrupt or truncated ({e}); fetch or reinstall it again"
        ) from e
    return header, sections


def _section_limits(path: Path, header: dict[str, Any]) -> dict[str, int]:
    """The most bytes each section may decompress to, from the header's counts: a few kilobytes of
    lzma can hold gigabytes of zeros, so nothing is decompressed further than the header allows,
    and the header's counts are checked against this machine's memory first."""
    try:
        entries, touched, n_exact = (_count(header, k) for k in ("entries", "touched", "exact"))
        checks = _count(header, "checks") if "checks" in header else MAX_CHECKS
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFileError(f"{path} has an incomplete header ({e}); fetch or reinstall it again") from e
    memory = physical_memory()
    if entries >= 2**32 or touched > entries or n_exact > entries or checks > MAX_CHECKS or (
            memory and entries * 5 > memory):
        raise ModelFileError(
            f"{path} has a header that no compact network file has (entries {entries}, touched {touched}, "
            f"exact {n_exact}, checks {checks}); it is corrupt: fetch or reinstall it again"
        )
    return {"index1": (entries // 8 + 7) // 8, "index2": entries // 8, "codes": 4 * touched,
            "exact_index": 4 * n_exact, "exact_values": 4 * n_exact, "check_boards": 8 * checks,
            "check_moves": checks}


def _count(header: dict[str, Any], key: str) -> int:
    v = header[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise ValueError(f"{key} is {v!r}, not a count")
    return v


def _decompress(path: Path, name: str, codec: str, data: bytes, limit: int) -> bytes:
    """Section ``name`` decompressed, refused (naming the file) beyond ``limit`` bytes or when cut short."""
    d = DECOMPRESSORS[codec]()
    out: bytes = d.decompress(data, limit + 1)
    if len(out) > limit:
        raise ModelFileError(
            f"network file {path} is corrupt: section {name} decompresses to more than the {limit} bytes "
            "its header allows; fetch or reinstall it again"
        )
    if not d.eof:
        raise ModelFileError(
            f"network file {path} is truncated inside section {name}; fetch or reinstall it again"
        )
    return out


def check_header(path: str | Path, header: dict[str, Any], patterns: str | None = None) -> None:
    """Raise naming the file and the difference unless the header fits these rules (and ``patterns``)."""
    rv = header.get("rules_version")
    if rv not in RULES_VERSIONS:  # 0 and 1 differ only past 32768: a network of either serves both
        raise ModelFileError(
            f"{path} holds a network trained under rules version {rv}, but this ai2048 plays rules "
            f"versions {', '.join(map(str, RULES_VERSIONS))}; use a network packed for one of them"
        )
    if header.get("kind") not in KINDS:
        raise ModelFileError(f"{path} has kind {header.get('kind')!r}, not one of {KINDS}")
    if patterns is not None:
        want = pattern_name(parse_patterns(patterns))
        if header.get("patterns") != want:
            raise ModelFileError(f"{path} holds patterns {header.get('patterns')}, not the requested {want}")


def decode(
    path: str | Path, sha256: str | None = None, size: int | None = None, patterns: str | None = None
) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:
    """(header, float32 weights [entries], check boards [N] uint64, check moves [N] int8): numpy only."""
    header, s = read_sections(path, sha256, size)
    check_header(path, header, patterns)
    try:
        entries, touched, nbytes = int(header["entries"]), int(header["touched"]), int(header["code_bytes"])
        nstages, fill, step = len(header["stages"]) + 1, float(header["fill"]), float(header["step"])
        n_exact = int(header["exact"])
        exact_f32 = [fill == 0 and int(m) < 2**24 for m in header["max_code"]]  # codes are w / step
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFileError(f"{path} has an incomplete header ({e}); fetch or reinstall it again") from e
    corrupt = ModelFileError(
        f"{path} has sections that disagree with its header; it is corrupt: fetch or reinstall it again"
    )
    table = entries // nstages
    if entries % (8 * nstages) or not 1 <= nbytes <= 4 or len(exact_f32) != nstages:
        raise corrupt
    if not (math.isfinite(fill) and math.isfinite(step) and step > 0):  # NaN would decode every weight NaN
        raise ModelFileError(f"{path} has fill {fill} and step {step} in its header; it is corrupt: fetch or "
                             "reinstall it again")
    try:  # the table the header's own patterns need, before allocating what ``entries`` claims
        need = tuple_runs(parse_patterns(str(header["patterns"])))[3] * nstages
    except (KeyError, ValueError) as e:
        raise ModelFileError(f"{path} does not match its own header: {e}") from e
    if need != entries:
        raise corrupt
    x = np.zeros(entries // 8, np.uint8)
    gidx = np.flatnonzero(np.unpackbits(np.frombuffer(s["index1"], np.uint8), count=x.size))
    nz = np.frombuffer(s["index2"], np.uint8)
    planes = np.frombuffer(s["codes"], np.uint8)
    gaps = np.frombuffer(s["exact_index"], np.uint8)
    if gaps.size != 4 * n_exact:
        raise corrupt
    ex_i = np.cumsum(gaps.reshape(4, n_exact).T.copy().view("<u4").ravel(), dtype=np.int64)
    ex_v = np.frombuffer(s["exact_values"], "<f4")
    if (
        nz.size != gidx.size
        or planes.size != nbytes * touched
        or ex_i.size != n_exact
        or ex_v.size != n_exact
    ):
        raise corrupt
    if ex_i.size and (ex_i.min() < 0 or ex_i.max() >= entries or not np.isfinite(ex_v).all()):
        raise corrupt
    x[gidx] = nz
    planes = planes.reshape(nbytes, touched)
    w = np.zeros(entries, np.float32) if fill == 0 else np.full(entries, fill, np.float32)
    prev_bm = np.zeros(table // 8, np.uint8)
    prev_i, prev_c = np.zeros(0, np.int64), np.zeros(0, np.int32)
    pos = 0
    for st in range(nstages):  # in chunks of the bitmap, so the temporaries stay small and reused
        bm = x[st * table // 8 : (st + 1) * table // 8] ^ prev_bm
        base = st * table
        keep = st + 1 < nstages and not exact_f32[st]  # the next stage needs these codes kept
        keep_i, keep_c = [], []
        for lo in range(0, bm.size, _CHUNK):
            nzb = np.flatnonzero(bm[lo : lo + _CHUNK])
            on = np.flatnonzero(np.unpackbits(bm[lo : lo + _CHUNK][nzb]))
            idx = (lo + nzb[on >> 3]) * 8 + (on & 7)
            if pos + idx.size > touched:
                raise corrupt
            z = planes[0, pos : pos + idx.size].astype(np.uint32)  # |c| < 2**30, so |delta| < 2**31
            for j in range(1, nbytes):
                z |= planes[j, pos : pos + idx.size].astype(np.uint32) << np.uint32(8 * j)
            c = (z >> np.uint32(1)).view(np.int32) ^ -(z & np.uint32(1)).view(np.int32)
            if st and exact_f32[st - 1]:  # add the code below at the same place (0 where it is untouched)
                c += (w[base - table + idx] / np.float32(step)).astype(np.int32)
            elif st and prev_i.size:
                at = np.minimum(np.searchsorted(prev_i, idx), prev_i.size - 1)
                c += np.where(prev_i[at] == idx, prev_c[at], 0).astype(np.int32)
            w[base + idx] = dequantize(c, step, fill)
            if keep:
                keep_i.append(idx)
                keep_c.append(c)
            pos += idx.size
        if keep:
            prev_i = np.concatenate(keep_i) if keep_i else np.zeros(0, np.int64)
            prev_c = np.concatenate(keep_c) if keep_c else np.zeros(0, np.int32)
        prev_bm = bm
    if pos != touched:
        raise corrupt
    w[ex_i] = ex_v
    boards = np.frombuffer(s["check_boards"], "<u8").astype(np.uint64)
    moves = np.frombuffer(s["check_moves"], np.int8).copy()
    if boards.size != moves.size:
        raise corrupt
    return header, w, boards, moves


def load(
    path: str | Path, sha256: str | None = None, size: int | None = None, patterns: str | None = None
) -> Network:
    """The network in a compact file, checked against ``sha256``/``size`` (from its card) if given."""
    header, w, _, _ = decode(path, sha256, size, patterns)
    try:
        return Network(header["patterns"], stages=header["stages"], kind=header["kind"], weights=w)
    except (KeyError, ValueError) as e:
        raise ModelFileError(f"{path} does not match its own header: {e}") from e
