"""Compact network files: size and load time of ``NAME.ntz`` beside the float32 ``weights.npz``.

For a run directory of ``ai2048 train ntuple``: the touched fraction, then per codec (lzma, zlib)
and fixed-point step the file size, the encode time and the decode time (numpy only, best of
``--repeat``), with the baseline of the same run: loading the float32 weights from the run's
``weights.npz`` (``np.load`` of the zip-deflated array), the format ``ai2048 train`` writes.
Times are wall seconds and CPU seconds of this process (on a shared machine the CPU figure is
what the decode costs; the wall figure what it got).

    python benchmarks/bench_models.py RUN [--steps=-6,-2,0] [--codecs lzma,zlib] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from ai2048.models import compact
from ai2048.ntuple.network import load_file


def timed(f) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """(wall, cpu) seconds of one call of ``f``."""
    w0, c0 = time.perf_counter(), time.process_time()
    f()
    return time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, help="run directory with weights.npz")
    p.add_argument("--steps", default="-6,-2,0", help="log2 of the fixed-point steps (default -6,-2,0)")
    p.add_argument("--codecs", default="lzma,zlib", help="codecs (default lzma,zlib)")
    p.add_argument("--repeat", type=int, default=3, help="decodes per file; the best is reported")
    a = p.parse_args()
    net, _ = load_file(a.run / "weights.npz")
    touched = int((net.w != 0).sum())
    print(f"{a.run}: {net.patterns}, stages {list(net.stages)}, {net.w.size:,} weights "
          f"({net.nbytes / 2**20:.0f} MiB float32), {touched:,} touched ({100 * touched / net.w.size:.2f}%)")

    def baseline() -> None:
        with np.load(a.run / "weights.npz", allow_pickle=False) as z:
            z["w"]

    base = min((timed(baseline) for _ in range(a.repeat)), key=lambda t: t[0])
    print(f"baseline: float32 weights from weights.npz: {base[0]:.2f} s wall, {base[1]:.2f} s CPU")
    with tempfile.TemporaryDirectory() as tmp:
        for codec in a.codecs.split(","):
            for k in (int(x) for x in a.steps.split(",")):
                path = Path(tmp) / f"n-{codec}-{k}.ntz"
                enc = timed(lambda: compact.write(path, net, step=2.0**k, codec=codec))  # noqa: B023
                dec = min((timed(lambda: compact.decode(path)) for _ in range(a.repeat)), key=lambda t: t[0])  # noqa: B023
                print(
                    f"{codec:4} step 2^{k:<3}: {os.path.getsize(path) / 2**20:7.2f} MiB, encode "
                    f"{enc[0]:6.1f} s, "
                    f"decode {dec[0]:5.2f} s wall / {dec[1]:5.2f} s CPU  (x{dec[0] / base[0]:.2f} of the "
                    "baseline's wall)"
                )


if __name__ == "__main__":
    main()
