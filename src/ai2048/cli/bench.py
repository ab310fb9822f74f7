"""``ai2048 bench``: measure the engine and env speed and print each figure with its baseline ratio."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    from ai2048.bench import SECTIONS

    p = subparsers.add_parser(
        "bench",
        help="measure engine and env speed (about a minute)",
        description=(
            "Measure raw moves/s, random self-play moves/s, gymnasium.make and make_vec steps/s "
            "and numba compile/cache-load time. Each figure is printed with its ratio against a "
            "baseline measured in the same run (numpy, the pure-Python rules, OpenSpiel or pgx "
            "when installed: pip install 'ai2048[bench]')."
        ),
    )
    p.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        metavar="SECTION",
        help=f"measure only these sections (repeatable): {', '.join(SECTIONS)}",
    )
    p.add_argument("--seconds", type=float, default=2.0, help="time budget per measurement (default 2)")
    p.add_argument("--boards", type=int, default=1_000_000, help="boards in the raw-move array")
    p.add_argument("--games", type=int, default=2_000, help="random games per self-play measurement")
    p.add_argument("--num-envs", type=int, default=4096, help="envs in the make_vec measurement")
    p.add_argument(
        "--fresh-compile",
        action="store_true",
        help="also time compiling every kernel into an empty numba cache (adds about a minute)",
    )
    p.add_argument("--ntuple", type=Path, default=None, metavar="RUN",
                   help="also time 1-ply evaluation of this n-tuple run's network (section eval)")
    p.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """Every check ``run`` makes before measuring."""
    from ai2048 import checks
    from ai2048.cli._common import check_out_file

    check_out_file(args.json, "--json")
    checks.number("--seconds", args.seconds)  # finite; bench.run checks that every budget is positive


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from ai2048 import bench
    from ai2048.checkpoint import write_json

    check(args)

    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # a readable table in logs and pipes
    with console.status("benchmarking") as status:
        figs = bench.run(
            args.only or [s for s in bench.SECTIONS if s != "eval" or args.ntuple is not None],
            seconds=args.seconds,
            boards=args.boards,
            games=args.games,
            num_envs=args.num_envs,
            fresh_compile=args.fresh_compile,
            progress=lambda msg: status.update(f"benchmarking: {msg}"),
            ntuple=None if args.ntuple is None else str(args.ntuple),
        )
    rows = bench.table(figs)
    t = Table(title="ai2048 speed", caption=bench.machine_note())
    for i, head in enumerate(rows[0]):
        t.add_column(head, justify="right" if i in (1, 3, 4) else "left")
    for row in rows[1:]:
        t.add_row(*row)
    console.print(t)
    for f in figs:
        if f.note:
            console.print(f"[dim]{f.name}: {f.note}[/dim]", highlight=False)
    if args.json:
        write_json(args.json, {"machine": bench.machine_note(), "figures": [f.as_dict() for f in figs]})
        console.print(f"wrote {args.json}")
    return 0
