"""Env speed: a plain ``gymnasium.make`` loop and ``make_vec`` random stepping, side by side with
OpenSpiel's and pgx's 2048 when they are installed (``pip install 'ai2048[bench]'``).

Each figure is printed with its ratio against a baseline measured in the same run.

    python benchmarks/bench_envs.py [--seconds 2] [--num-envs 4096]
"""

from __future__ import annotations

import argparse

from ai2048 import bench


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=2.0, help="time budget per measurement")
    p.add_argument("--num-envs", type=int, default=4096, help="envs in the make_vec measurement")
    args = p.parse_args()
    figs = bench.run(
        ["gym", "vector"], seconds=args.seconds, num_envs=args.num_envs, games=200, progress=print
    )
    print(bench.render(figs))


if __name__ == "__main__":
    main()
