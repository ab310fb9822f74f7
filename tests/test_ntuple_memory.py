"""Training memory (issue 14): what `train ntuple` imports, TC records built without a second
table, and LLVM's library pages handed back without breaking later compiles."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from ai2048.ntuple.network import Network, load_file

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
        import ai2048.ntuple.hogwild, ai2048.ntuple.memory, ai2048.ntuple.network, ai2048.ntuple.play
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
