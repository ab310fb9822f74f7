"""Hand the compiler's memory back to the system once the kernels are compiled or loaded.

A training process needs LLVM only to compile or load its kernels; afterwards the kernels are
machine code in memory of their own. What LLVM leaves behind is (1) glibc heap it freed but
glibc keeps (``malloc_trim`` returns it) and (2) the pages of LLVM's shared library
(``libllvmlite.so``, 170 MiB on disk) that starting and loading touched: about 60 MiB of clean,
file-backed code and constants counted in the process's resident set (docs/ntuple.md,
"Memory"). :func:`release_compiler_memory` drops both. The library pages are unmapped with
``madvise(MADV_DONTNEED)`` only where that is lossless: read-only mappings of the library with
no private (copy-on-write) page, whose contents are the file's; a later compile faults them back
in from the page cache, as it would after the kernel reclaimed them under memory pressure.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys

MADV_DONTNEED = 4
"""Linux's ``MADV_DONTNEED``: drop the pages; a private file mapping refaults them from the file."""

LIBRARIES = ("libllvmlite.so",)
"""Shared libraries used only to compile: their read-only, unmodified pages are released."""


def _release_mappings(names: tuple[str, ...]) -> int:
    """``madvise(MADV_DONTNEED)`` on every read-only mapping of a file named in ``names`` that holds
    no private page (``Anonymous: 0`` in ``/proc/self/smaps``); returns the bytes of resident pages
    released (0 where ``/proc`` or ``madvise`` is missing)."""
    try:
        with open("/proc/self/smaps") as f:
            lines = f.read().splitlines()
    except OSError:
        return 0
    ranges: list[tuple[int, int, int]] = []  # (start, end, resident bytes)
    current: list[int] | None = None  # [start, end, rss, anonymous] of a candidate mapping
    for line in lines:
        head, _, rest = line.partition(" ")
        if "-" in head and not head.endswith(":"):  # a mapping: "start-end perms offset dev inode path"
            if current is not None and current[3] == 0:
                ranges.append((current[0], current[1], current[2]))
            fields = line.split()
            path = fields[5] if len(fields) > 5 else ""
            perms = fields[1]
            wanted = "w" not in perms and path.rsplit("/", 1)[-1] in names
            lo, hi = (int(x, 16) for x in head.split("-"))
            current = [lo, hi, 0, 0] if wanted else None
        elif current is not None and head == "Rss:":
            current[2] = int(rest.split()[0]) * 1024
        elif current is not None and head == "Anonymous:":
            current[3] = int(rest.split()[0])
    if current is not None and current[3] == 0:
        ranges.append((current[0], current[1], current[2]))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    released = 0
    for lo, hi, rss in ranges:
        if libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), MADV_DONTNEED) == 0:
            released += rss
    return released


def release_compiler_memory() -> int:
    """Return glibc's freed heap (``malloc_trim``) and unmap LLVM's clean library pages; call it
    after compiling or loading kernels and before allocating large tables, so the process's peak
    is the tables plus the interpreter, not plus the compiler. Returns the bytes of library pages
    released (0 off Linux)."""
    if not sys.platform.startswith("linux"):
        return 0
    with contextlib.suppress(AttributeError, OSError):  # glibc keeps the compiler's freed heap
        ctypes.CDLL(None).malloc_trim(0)
    return _release_mappings(LIBRARIES)
