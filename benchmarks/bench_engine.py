"""Engine speed: numba cache load (and fresh compile), raw moves/s and random self-play moves/s.

Each figure is printed with its ratio against a baseline measured in the same run (numpy on the
same row tables, the pure-Python reference rules, one core vs all cores).

    python benchmarks/bench_engine.py [--seconds 2] [--fresh-compile]
"""

from __future__ import annotations

import argparse

from ai2048 import bench


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0, help="time budget per measurement")
    p.add_argument("--boards", type=int, default=1_000_000, help="boards in the raw-move array")
    p.add_argument("--games", type=int, default=2_000, help="random games per self-play measurement")
    p.add_argument("--fresh-compile", action="store_true", help="also time a compile into an empty cache")
    args = p.parse_args()
    figs = bench.run(
        ["compile", "moves", "selfplay"],
        seconds=args.seconds,
        boards=args.boards,
        games=args.games,
        fresh_compile=args.fresh_compile,
        progress=print,
    )
    print(bench.render(figs))


if __name__ == "__main__":
    main()
