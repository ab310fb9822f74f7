"""``ai2048 plot``: PNG figures from training runs or from evaluation/arena results."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plot",
        help="write PNG figures for run directories (overlaid when several), an eval result, or several "
        "results",
        description="RUN_DIR: training curves from metrics.jsonl (score mean/min/max per window, reach rates "
        "of the tiles the run reaches, loss, epsilon; per-episode logs also get seed 000's five curves with "
        "their EWMA and the action distribution over training; LazyZero runs seed 001's learning curve). "
        "Several RUN_DIRs (any trainers): the same curves overlaid, one colour and legend entry per run "
        "(its folder's name, with parent folders when two are equal), and each run's own figures in "
        "OUT/<i>-<name>/. "
        "result.json (ai2048 eval --out): max-tile bars, score and moves-per-game histograms, score vs "
        "moves, action share, mean final board, moves to each milestone tile, runtime per game and wall "
        "time to each milestone (seed 003). Several result files or an arena file (ai2048 arena --out): "
        "the figures per agent, a side-by-side comparison and seed 000's overlaid score histograms, each "
        "agent labelled by its name plus only the options that differ between the results. "
        "Run directories and result files cannot be mixed in one call.",
    )
    p.add_argument("inputs", nargs="+", type=Path, metavar="RUN_DIR|RESULT.json")
    p.add_argument("--out", type=Path, required=True, help="folder for the PNG files")
    p.add_argument("--window", type=int, default=None,
                   help="episodes per window for per-episode training logs (default: about 50 windows)")
    p.add_argument("--label", action="append", default=None, metavar="NAME",
                   help="name of a run or agent in the legends and titles, instead of the automatic one; "
                   "repeat once per run or agent, in the order of the inputs (an arena file counts each "
                   "of its agents)")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """Every check ``run`` makes before the inputs are read."""
    from ai2048.checkpoint import output_target
    from ai2048.cli._common import check_out_dir

    check_out_dir(args.out)
    if args.out.is_dir():  # the figures replace PNG files there (and in each run's sub-folder) by name
        for entry in sorted([*args.out.glob("*.png"), *args.out.glob("*/*.png")]):
            output_target(entry, "--out holds", fix="remove it or choose another --out folder")
    if args.window is not None and args.window < 1:
        raise ValueError(f"--window must be at least 1, got {args.window}")


def run(args: argparse.Namespace) -> int:
    from ai2048.plots import plot_paths

    check(args)
    for path in plot_paths(args.inputs, args.out, args.window, args.label):
        print(f"wrote {path}")
    return 0
