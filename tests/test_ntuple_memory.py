"""Training memory (issue 14): what `train ntuple` imports, TC records built without a second
table, LLVM's library pages handed back without breaking later compiles, and a first run's
kernels compiled in a child process (``ntuple.memory``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ai2048.ntuple import codegen, memory
from ai2048.ntuple.codegen import specialized
from ai2048.ntuple.network import Network, load_file
from ai2048.ntuple.patterns import parse_patterns
from ai2048.train.ntuple import NTupleConfig, _warm_args, compile_kernels

HEAVY = ("torch", "gymnasium", "matplotlib", "pandas", "tensorboard")
"""Packages the n-tuple trainer does not use: importing one costs tens of MiB of resident memory."""


def test_train_ntuple_path__imports_no_torch_gymnasium_or_matplotlib() -> None:
    """The CLI's parser (every subcommand registered), the trainer and its kernels' modules import
    none of the heavy packages (run in a fresh interpreter: this one may have them already)."""
    code = textwrap.dedent(
        f"""
        import sys
        from ai2048.cli import build_parser
        from ai2048.train import get_trainer
        build_parser().parse_args(["train", "ntuple", "--out", "x"])
        get_trainer("ntuple")
        import ai2048.ntuple.hogwild, ai2048.ntuple.memory, ai2048.ntuple.network
        print(",".join(m for m in {HEAVY!r} if m in sys.modules))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


SIX = "012345,456789"  # 2 x 16^6 weights: a 128 MiB table, 384 MiB of TC records


def test_network_tc__records_allocated_without_a_table_beside_them() -> None:
    """``Network(tc=True)`` allocates the records and nothing the size of a column besides (the old
    way, a table then ``tc_arrays()``, held the table and the records at once)."""
    tracemalloc.start()
    try:
        net = Network("01234,56789", init_value=6.0, tc=True)  # 2 x 16^5 weights: 24 MiB of records
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    e, a = net.tc_arrays()
    rec = net.w.base
    assert rec is not None and rec.shape == (net.w.size, 3) and e.base is rec and a.base is rec
    assert peak < rec.nbytes + 2 * 2**20
    assert np.all(net.w == np.float32(6.0 / net.features)) and not e.any() and not a.any()
    with pytest.raises(ValueError, match="not both"):
        Network("0123", weights=np.zeros(65536, np.float32), tc=True)


def test_load_file_tc__streams_weights_into_records(tmp_path: Path) -> None:
    """``load_file(tc=True)`` (a resumed TC run) reads the weights into records 1 MiB at a time:
    it holds the records, never a separate table as well."""
    net = Network(SIX)
    rng = np.random.default_rng(5)
    picks = rng.integers(0, net.w.size, 5000)
    net.w[picks] = rng.standard_normal(picks.size).astype(np.float32)
    path = tmp_path / "w.npz"
    net.save(path)
    tracemalloc.start()
    try:
        back, _ = load_file(path, tc=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    rec = back.w.base
    assert rec is not None and rec.shape == (net.w.size, 3)
    assert peak < rec.nbytes + 16 * 2**20
    assert np.array_equal(back.w, net.w) and back.tc_arrays()[0].base is rec
    plain, _ = load_file(path)
    assert plain.w.flags.c_contiguous and np.array_equal(plain.w, net.w)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps and madvise are Linux's")
def test_release_compiler_memory__drops_llvm_pages_and_later_compiles_still_work() -> None:
    """After a compile, LLVM's library pages leave the resident set; a later compile faults them
    back in and its function returns the right answer (only unmodified read-only pages go)."""
    code = textwrap.dedent(
        """
        from numba import njit
        from ai2048.ntuple.memory import LIBRARIES, release_compiler_memory

        def llvm_rss():
            total, inside = 0, False
            for line in open("/proc/self/smaps"):
                head = line.split(" ", 1)[0]
                if "-" in head and not head.endswith(":"):
                    inside = line.rstrip().rsplit("/", 1)[-1] in LIBRARIES
                elif inside and head == "Rss:":
                    total += int(line.split()[1])
            return total

        @njit
        def f(n):
            t = 0
            for i in range(n):
                t += i * i
            return t

        assert f(10) == 285
        before = llvm_rss()
        released = release_compiler_memory()
        after = llvm_rss()

        @njit
        def g(x):
            return x * 2.5 + 1.0

        print(before, released // 1024, after, g(2.0), f(100))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    before, released, after, g2, f100 = out.stdout.split()
    if int(before) == 0:
        pytest.skip("numba's LLVM is not a separate libllvmlite.so here")
    assert int(released) > 10 * 1024 and int(after) < int(before) - 10 * 1024
    assert float(g2) == 6.0 and int(f100) == 328350


# --- first-run compile in a child process (ntuple.memory.compile_in_child) ---------------------------


def _fake_module(folder: Path) -> Path:
    module = folder / "kernels_0123456789abcdef.py"
    module.write_text("x = 1\n")
    return module


def test_is_compiled__needs_the_marker_of_this_signature_and_module_and_numbas_index(tmp_path: Path) -> None:
    """The marker counts only for its own signature and the module file as it was when written, and
    only while numba's index for the function is there."""
    module = _fake_module(tmp_path)
    sig = memory.kernel_signature((np.zeros(2, np.float32), 3, 0.5, True))
    assert sig == "(array(float32, 1d, C), int64, float64, bool)"
    assert not memory.is_compiled(module, "train_worker", sig)
    memory.mark_compiled(module, "train_worker", sig)
    assert not memory.is_compiled(module, "train_worker", sig)  # no numba index yet
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / f"{module.stem}.train_worker-670.py311.nbi").write_bytes(b"")
    assert memory.is_compiled(module, "train_worker", sig)
    assert not memory.is_compiled(module, "train_worker", sig.replace("float32", "float64"))
    assert not memory.is_compiled(module, "other", sig)
    module.write_text("x = 22\n")  # a rewritten module: numba's index is stale, so is the marker
    assert not memory.is_compiled(module, "train_worker", sig)


def test_writable__tries_to_create_a_file(tmp_path: Path) -> None:
    assert memory.writable(tmp_path)
    assert not memory.writable(_fake_module(tmp_path))  # a file, not a folder
    assert not memory.writable(tmp_path / "missing")
    if sys.platform.startswith("linux"):
        assert not memory.writable(Path("/proc"))  # not even root creates files there


def test_compile_in_child__failure_quotes_the_stderr_tail() -> None:
    code = "import sys\nfor i in range(100): print('line', i, file=sys.stderr)\nsys.exit(3)"
    with pytest.raises(ChildProcessError, match="exit status 3") as err:
        memory.compile_in_child(code, [], "compiling the kernels")
    msg = str(err.value)
    assert msg.startswith("compiling the kernels failed in a child process")
    assert "line 99" in msg and "line 70" in msg and "line 69" not in msg  # the last 30 lines
    assert "run again" in msg


def test_compile_in_child__ctrl_c_stops_the_child(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to this process's main thread) while waiting kills the child before the
    KeyboardInterrupt propagates."""
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(120)"

    def interrupt() -> None:
        for _ in range(300):  # wait for the child to start
            if pid_file.is_file() and pid_file.read_text():
                break
            time.sleep(0.1)
        signal.pthread_kill(main, signal.SIGINT)

    main = threading.get_ident()
    timer = threading.Thread(target=interrupt)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        memory.compile_in_child(code, [], "sleeping")
    timer.join()
    assert time.monotonic() - t0 < 60
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped: no such process any more
        os.kill(pid, 0)


SMALL = "0123,4567"
"""The pattern set the trainer's tests compile (test_ntuple_train's TINY): the child-compile mechanism
does not depend on the pattern set, and the default 4x6 kernels would be one more long compile on a
fresh clone."""


@pytest.fixture
def cache_small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$AI2048_CACHE`` in ``tmp_path`` holding numba's cache of the SMALL kernels (copied from the
    user's cache, warmed there first) but no marker; this process imports the module afresh."""
    cfg = NTupleConfig(patterns=SMALL)
    k = specialized(parse_patterns(cfg.patterns))
    k.train_worker(*_warm_args(cfg))  # loads (or compiles) into the user's cache
    src = Path(str(k.__file__))
    dst = tmp_path / "ntuple"
    dst.mkdir()
    shutil.copy2(src, dst / src.name)  # copy2 keeps the modification time numba's index checks
    cache = memory.cache_dirs(dst / src.name)[0]  # numba's: $NUMBA_CACHE_DIR's, else __pycache__
    cache.mkdir(parents=True, exist_ok=True)
    for folder in memory.cache_dirs(src):
        for f in folder.glob(f"{src.stem}.*"):
            shutil.copy2(f, cache / f.name)
    monkeypatch.setenv("AI2048_CACHE", str(tmp_path))
    monkeypatch.setattr(codegen, "_LOADED", {})
    monkeypatch.setitem(sys.modules, k.__name__, k)  # restored after the test
    return dst / src.name


def test_compile_kernels__child_when_not_marked_then_none(
    cache_small: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """End to end: without a marker a real child process runs (here it finds numba's cache) and
    writes the marker; this process then loads the kernels from numba's cache (hits, no miss); a
    second call starts no child."""
    calls: list[str] = []
    real = memory.compile_in_child

    def counted(code: str, args: list[str], what: str) -> None:
        calls.append(what)
        real(code, args, what)

    monkeypatch.setattr(memory, "compile_in_child", counted)
    cfg = NTupleConfig(patterns=SMALL)
    k = compile_kernels(cfg)
    assert Path(str(k.__file__)) == cache_small
    assert len(calls) == 1 and SMALL in calls[0]
    assert "compiling in a child process" in capsys.readouterr().err
    assert memory.is_compiled(cache_small, "train_worker", memory.kernel_signature(_warm_args(cfg)))
    stats = k.train_worker.stats
    assert sum(stats.cache_hits.values()) >= 1 and not stats.cache_misses
    monkeypatch.setattr(codegen, "_LOADED", {})
    compile_kernels(cfg)
    assert len(calls) == 1
    assert "child" not in capsys.readouterr().err


def test_compile_kernels__failing_child_is_a_clear_error_before_training(
    cache_small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that fails (here an "interpreter" that runs out of memory) stops the run with an
    OSError (the CLI prints it without a traceback) quoting the child's stderr; no marker."""
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\necho Traceback ... >&2\necho MemoryError: out of memory >&2\nexit 1\n")
    python.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(python))
    cfg = NTupleConfig(patterns=SMALL)
    with pytest.raises(ChildProcessError, match=r"(?s)kernels for 0123,4567 .*exit status 1.*MemoryError"):
        compile_kernels(cfg)
    assert issubclass(ChildProcessError, OSError)
    assert not memory.is_compiled(cache_small, "train_worker", memory.kernel_signature(_warm_args(cfg)))


def test_compile_kernels__unwritable_cache_compiles_in_this_process(
    cache_small: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_child(*args: object) -> None:
        raise AssertionError("no child where the cache folder is not writable")

    monkeypatch.setattr(memory, "compile_in_child", no_child)
    monkeypatch.setattr(memory, "writable", lambda folder: False)
    k = compile_kernels(NTupleConfig(patterns=SMALL))
    assert "not writable, compiling in this process" in capsys.readouterr().err
    assert sum(k.train_worker.stats.cache_hits.values()) >= 1  # the kernels are there (numba's cache)


def test_is_compiled__reads_numbas_index_where_numba_cache_dir_puts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``$NUMBA_CACHE_DIR`` set numba writes its index there, not beside the module (a newcomer's
    cold test run sets it): the marker plus that index count as compiled."""
    from numba.core import config

    module = _fake_module(tmp_path)
    sig = memory.kernel_signature((np.zeros(2, np.float32),))
    memory.mark_compiled(module, "train_worker", sig)
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "numba"))
    cache = memory.cache_dirs(module)[0]
    assert cache.parent == (tmp_path / "numba").resolve()
    assert not memory.is_compiled(module, "train_worker", sig)
    cache.mkdir(parents=True)
    (cache / f"{module.stem}.train_worker-670.py311.nbi").write_bytes(b"")
    assert memory.is_compiled(module, "train_worker", sig)
