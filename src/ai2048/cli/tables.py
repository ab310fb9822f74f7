"""``ai2048 tables``: list the endgame tables; ``ai2048 tables build [NAME ...]``: build them.

    ai2048 tables                          # every table: built (size, positions, build time) or not
    ai2048 tables build                    # the default tables, into the cache (or --dir, $AI2048_TABLES)
    ai2048 tables build 442-128 --dir DIR  # one table into DIR
    ai2048 tables build large              # the large set: the 11-free-cell tables too (docs/tables.md)
    ai2048 tables verify                   # check the built tables' SHA-256 digests and contents
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ai2048.cli._common import add_set_argument
from ai2048.tables import formations, store


def _names(args: argparse.Namespace) -> tuple[str, ...]:
    return formations.expand(tuple(args.names) or formations.DEFAULT)


def check(args: argparse.Namespace) -> None:
    """Every check before the work: the table names, the folder, and for a build the disk and memory."""
    names = _names(args)
    root = store.checked_dir(args.dir, "--dir")
    if args.action == "distill":
        from ai2048.checks import whole
        from ai2048.cli._agents import choose_agent

        whole("--games", args.games, lo=1)
        whole("--workers", args.workers, lo=1, hi=256)
        whole("--seed", args.seed, lo=0)
        if args.out is None:
            raise ValueError("tables distill needs --out FOLDER "
                             "(the package ships src/ai2048/tables/distilled)")
        if args.out.exists() and not args.out.is_dir():
            raise ValueError(f"--out {args.out} is a file, not a folder")
        choose_agent("endgame", _distill_config(args))
    if args.action == "build":
        from ai2048.tables.build import check_resources

        for n in names:
            if args.force or not (root / n / store.META).is_file():
                check_resources(n, args.dir)


def _list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    root = store.tables_dir(args.dir)
    t = Table(title=f"endgame tables ({root})")
    for col in ("name", "target", "state", "positions", "MiB", "build s", "sets"):
        t.add_column(col, justify="left" if col in ("name", "state") else "right")
    for row in store.listing(args.dir):
        pos = row.get("positions")
        size = row.get("bytes")
        t.add_row(row["name"], str(row["target"]), row["state"],
                  "-" if pos is None else (f"{pos:,}" if row["state"] == "built" else f"~{pos:,}"),
                  "-" if size is None else f"{size / 2**20:,.0f}",
                  "-" if row.get("build_seconds") is None else f"{row['build_seconds']:,.0f}",
                  ", ".join(k for k, v in formations.sets().items() if row["name"] in v))
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(t)
    other = "" if args.dir is None else f" --dir {args.dir}"
    print(f"build: ai2048 tables build [NAME ...]{other}; play: ai2048 watch endgame"
          + ("" if args.dir is None else f" --set tables_dir={args.dir}"))
    return 0


def _build(args: argparse.Namespace) -> int:
    import numba

    from ai2048.progress import progress_bar
    from ai2048.tables.build import BuildStopped, build, estimate
    from ai2048.train.run import GracefulStop

    names = _names(args)
    unusable = 0
    with GracefulStop() as stop:
        for n in names:
            folder = store.tables_dir(args.dir) / n
            if not args.force and (folder / store.META).is_file():
                try:
                    store.load(n, args.dir)
                    print(f"{n}: already built in {folder}")
                except store.TableError as e:  # the message ends with the --force that rebuilds it
                    print(f"{n}: built, but unusable: {e}")
                    unusable += 1
                continue
            expected = formations.TABLES[n][1]
            print(estimate(n, numba.get_num_threads()), flush=True)
            bar = progress_bar(total=expected, desc=n, unit="pos", unit_scale=True,
                               disable=not args.progress, file=sys.stderr)

            def progress(phase: str, k: int, count: int, bar: Any = bar) -> None:
                bar.set_postfix_str(f"{phase} layer {k}", refresh=False)
                if phase == "enumerating":
                    bar.update(count)

            start = time.monotonic()
            try:
                folder = build(n, args.dir, force=args.force, progress=progress, stop=lambda: stop.requested)
            except BuildStopped:
                bar.close()
                print(f"{n}: stopped; its finished layers are kept in {folder / '.build'}. "
                      f"Resume with: {store.build_command(n, args.dir)}")
                return 130
            finally:
                bar.close()
            meta = store.read_meta(folder)
            size = sum(f["bytes"] for f in meta["files"].values())
            print(f"{n}: {meta['positions']:,} positions, {size / 2**20:,.0f} MiB in {folder} "
                  f"({time.monotonic() - start:,.0f} s)")
    return 1 if unusable else 0


def _verify(args: argparse.Namespace) -> int:
    """Hash every file and check every table's contents (:func:`store.load` with ``verify``); a table
    that is not built is named, and its distilled copy in the package (if any) checked."""
    bad = 0
    for n in _names(args):
        try:
            store.load(n, args.dir, verify=True)
            print(f"{n}: ok")
        except store.TableNotBuilt as e:
            try:
                note = "; its distilled copy in the package is sound" if store.load_distilled(n) else ""
            except store.TableError as d:
                note = f"; {d}"
            print(f"{n}: {e}{note}")
            bad += 1
        except store.TableError as e:
            print(f"{n}: {e}")
            bad += 1
    return 1 if bad else 0


def _distill_config(args: argparse.Namespace) -> dict:
    from ai2048.cli._common import parse_sets

    config = {"tables": ",".join(_names(args)), **parse_sets(args.sets)}
    if args.dir is not None:
        config["tables_dir"] = str(args.dir)
    return config


def _distill(args: argparse.Namespace) -> int:
    from ai2048.agents.base import config_keys
    from ai2048.evaluate import distill

    config = _distill_config(args)
    looked = distill.collect(config, games=args.games, seed=args.seed, workers=args.workers,
                             progress=args.progress)
    # every setting the games were played with, defaults included: a later change of default leaves
    # the distillate's recipe unambiguous
    played = {**config_keys("endgame"), **config}
    agent = {k: v for k, v in played.items() if k != "tables_dir"}
    info = {"games": args.games, "seed": args.seed, "agent": agent}
    kept = distill.write(config, looked, args.out, info)
    for name, n in kept.items():
        size = (Path(args.out) / f"{name}.npz").stat().st_size
        print(f"{name}: {n:,} positions, {size / 2**20:.1f} MiB in {Path(args.out) / (name + '.npz')}")
    return 0


def _run(args: argparse.Namespace) -> int:
    check(args)
    if args.action == "distill":
        return _distill(args)
    if args.action == "build":
        return _build(args)
    if args.action == "verify":
        return _verify(args)
    return _list(args)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tables",
        help="list, build or verify the endgame tables the `endgame` agent plays from",
        description="`ai2048 tables` lists the endgame tables and which are built; "
        "`ai2048 tables build [NAME ...]` builds them (default: the default set) into the tables folder, "
        "resumably (Ctrl-C keeps the finished layers; the same command goes on); "
        "`ai2048 tables verify` checks their SHA-256 digests and contents. "
        "The folder is --dir, else $AI2048_TABLES, else the user cache (see docs/tables.md).",
    )
    p.add_argument("action", nargs="?", choices=("list", "build", "verify", "distill"), default="list",
                   help="list (default), build, verify, or distill (keep the positions real games look up)")
    p.add_argument("names", nargs="*",
                   help="table names (default: the default set; `ai2048 tables` lists them)")
    p.add_argument("--dir", type=Path, default=None,
                   help="tables folder (default: $AI2048_TABLES or the cache)")
    p.add_argument("--force", action="store_true", help="rebuild tables that are already built")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="show a progress bar (default: on)")
    g = p.add_argument_group("distill", "`ai2048 tables distill`: play games with the built tables and "
                             "write, per table, the positions they looked up (the package ships such files)")
    g.add_argument("--games", type=int, default=300, help="games to play (default 300)")
    g.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    g.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    g.add_argument("--out", type=Path, default=None, help="folder for the distilled files")
    add_set_argument(g, "depth=3")
    p.set_defaults(func=_run, check=check)
