"""Hand the compiler's memory back to the system once the kernels are compiled or loaded.

A training process needs LLVM only to compile or load its kernels; afterwards the kernels are
machine code in memory of their own. What LLVM leaves behind is (1) glibc heap it freed but
glibc keeps (``malloc_trim`` returns it) and (2) the pages of LLVM's shared library
(``libllvmlite.so``) that starting and loading touched: clean, file-backed code and constants
counted in the process's resident set (sizes measured in docs/ntuple-lab.md, "Training memory").
:func:`release_compiler_memory` drops both. The library pages are unmapped with
``madvise(MADV_DONTNEED)`` only where that is lossless: read-only mappings of the library with
no private (copy-on-write) page, whose contents are the file's; a later compile faults them back
in from the page cache, as it would after the kernel reclaimed them under memory pressure.

A first run compiles its kernels, and after compiling numba keeps a few hundred MiB of LLVM's
memory in the process for good (more than a 4x6 table; docs/ntuple-lab.md).
:func:`compile_in_child` runs the compile in a short-lived child process that writes numba's cache
and exits, handing all of it back; the training process then only loads the cached code.

Whether the code is cached is read from a marker the child writes beside the generated module
(``kernels_<key>.<signature hash>.compiled``) after the compile succeeded, holding the function and
signature compiled, numba's version and the module file's size and modification time (what numba's
own index is checked against), together with numba's index file for the function in
``__pycache__`` (:func:`is_compiled`). A marker names exactly one signature of one module (the
module key covers the patterns, the rule options and the sources), is written only after numba
wrote its cache, and is never read by numba, so a wrong answer costs time or memory, never
correctness: a stale marker means the training process compiles in-process, as before; a missing
one means a child that finds numba's cache and exits in seconds. numba's private index format is
not read.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numba

from ai2048.checkpoint import atomic_write

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


STDERR_TAIL = 30
"""Lines of a failed child's stderr quoted in the error."""

PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process gets when its parent dies."""


def kernel_signature(args: Sequence[Any]) -> str:
    """numba's type signature for calling a function with ``args`` (``numba.typeof`` of each), the
    key under which numba compiles and caches it."""
    return "(" + ", ".join(str(numba.typeof(a)) for a in args) + ")"


def marker_path(module: Path, sig: str) -> Path:
    """The marker beside generated module ``module`` for signature ``sig``."""
    digest = hashlib.sha256(sig.encode()).hexdigest()[:16]
    return module.with_name(f"{module.stem}.{digest}.compiled")


def _marker_text(module: Path, function: str, sig: str) -> str:
    st = module.stat()
    return json.dumps(
        {"function": function, "signature": sig, "numba": numba.__version__,
         "module_size": st.st_size, "module_mtime": st.st_mtime},
        sort_keys=True,
    )


def is_compiled(module: Path, function: str, sig: str, *, indexed: bool = True) -> bool:
    """Whether a child compiled ``function`` of ``module`` for ``sig`` into numba's cache: its
    marker matches the module file as it is now and (``indexed``) numba's index for the function
    exists beside the module. A function numba caches elsewhere (a game loop compiled for the
    module's kernels from a template in another file) has its marker read alone."""
    try:
        if marker_path(module, sig).read_text() != _marker_text(module, function, sig):
            return False
    except OSError:
        return False
    pattern = f"{module.stem}.{function}-*.nbi"
    return not indexed or any(any(folder.glob(pattern)) for folder in cache_dirs(module))


def cache_dirs(module: Path) -> list[Path]:
    """The folders where numba caches ``module``'s functions: ``$NUMBA_CACHE_DIR``'s subfolder for it
    when that is set (numba's own naming, ``_CacheLocator.get_suitable_cache_subpath``), and the
    ``__pycache__`` beside it."""
    from numba.core import config
    from numba.core.caching import _CacheLocator

    beside = module.parent / "__pycache__"
    if not config.CACHE_DIR:
        return [beside]
    return [Path(config.CACHE_DIR).resolve() / _CacheLocator.get_suitable_cache_subpath(str(module)), beside]


def mark_compiled(module: Path, function: str, sig: str) -> None:
    """Write ``module``'s marker for ``sig`` (call it after ``function`` was compiled and cached)."""
    atomic_write(marker_path(module, sig), lambda f: f.write(_marker_text(module, function, sig)), mode="w")


def writable(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (tried, so read-only file systems count too)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def die_with_parent(parent: int) -> None:
    """In a child: ask Linux to stop this process with SIGTERM when its parent dies (a killed
    trainer does not leave a compiler running); exit at once if ``parent`` is already gone."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(AttributeError, OSError):
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        sys.exit(1)


def compile_in_child(code: str, args: Sequence[str], what: str) -> None:
    """Run ``python -c code *args`` with this interpreter and this copy of ai2048 on the path, and
    wait for it; the child's output is kept and its stderr's tail quoted in a
    ``ChildProcessError`` if it fails. Ctrl-C reaches the child too (same process group), and an
    interrupt of this process kills and reaps it before propagating."""
    root = str(Path(__file__).resolve().parents[2])  # the folder holding this ai2048 package; added
    # only where the child lacks it (an installed package's site-packages must not precede the stdlib)
    code = f"import sys\n{root!r} in sys.path or sys.path.insert(0, {root!r})\n{code}"
    with subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as child:
        try:
            _, stderr = child.communicate()
        except BaseException:  # Ctrl-C or SIGTERM's exception here: the child goes first
            child.kill()
            child.wait()
            raise
    rc = child.returncode
    if rc != 0:
        tail = "\n".join(stderr.strip().splitlines()[-STDERR_TAIL:]) or "(no output)"
        how = f"signal {-rc}" if rc < 0 else f"exit status {rc}"
        raise ChildProcessError(
            f"{what} failed in a child process ({how}); its stderr ends with:\n{tail}\n"
            "fix the cause above and run again"
        )
