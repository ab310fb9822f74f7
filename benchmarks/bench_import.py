"""CPU time of ``import ai2048`` in fresh interpreters, beside baselines measured in the same run.

Each statement runs ``--repeat`` times, alternating, each in a new ``python -c`` process that
reports its own CPU time (``time.process_time``) around the statement alone, so interpreter
start-up is not counted. Baselines: ``import numpy`` and ``import numba`` (what the engine
imports on first use), plus what the lazy names cost when touched (``from ai2048 import Game``,
``import gymnasium`` with ai2048's environment registration).

    python benchmarks/bench_import.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

STATEMENTS = (
    ("import ai2048", "import ai2048"),
    ("import numpy", "import numpy"),
    ("import numba", "import numba"),
    ("from ai2048 import Game (engine)", "from ai2048 import Game"),
    ("import ai2048, gymnasium (registers envs)", "import ai2048, gymnasium"),
)

_PROBE = "import time\nc = time.process_time()\n{stmt}\nprint(time.process_time() - c)\n"


def cpu_seconds(stmt: str) -> float:
    """CPU seconds of ``stmt`` in a fresh interpreter."""
    cmd = [sys.executable, "-c", _PROBE.format(stmt=stmt)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=5, help="fresh processes per statement")
    args = p.parse_args()
    if args.repeat < 1:
        sys.exit("--repeat must be >= 1")
    times: dict[str, list[float]] = {name: [] for name, _ in STATEMENTS}
    for _ in range(args.repeat):
        for name, stmt in STATEMENTS:
            times[name].append(cpu_seconds(stmt))
    base = statistics.median(times["import numpy"])
    print(f"CPU seconds in a fresh interpreter, median of {args.repeat} (min-max)")
    print(f"{'statement':<44}{'median':>8}{'min':>8}{'max':>8}{'x numpy':>9}")
    for name, _ in STATEMENTS:
        t = times[name]
        med = statistics.median(t)
        print(f"{name:<44}{med:>8.3f}{min(t):>8.3f}{max(t):>8.3f}{med / base:>9.2f}")
    target = statistics.median(times["import ai2048"])
    print(f"import ai2048: {target:.3f} CPU-s (target <= 1 s: {'met' if target <= 1.0 else 'not met'})")


if __name__ == "__main__":
    main()
