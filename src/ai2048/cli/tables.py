"""``ai2048 tables``: list the endgame tables; ``ai2048 tables build [NAME ...]``: build them.

    ai2048 tables                          # every table: built (size, positions, build time) or not
    ai2048 tables build                    # the default tables, into the cache (or --dir, $AI2048_TABLES)
    ai2048 tables build 442-128 --dir DIR  # one table into DIR
    ai2048 tables verify                   # check the built tables' SHA-256 digests
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ai2048.tables import formations, store


def _names(args: argparse.Namespace) -> tuple[str, ...]:
    names = tuple(args.names) or formations.DEFAULT
    for n in names:
        formations.spec(n)
    return names


def check(args: argparse.Namespace) -> None:
    """Every check before the work: the table names, the folder, and for a build the disk and memory."""
    names = _names(args)
    root = store.tables_dir(args.dir)
    if root.exists() and not root.is_dir():
        raise ValueError(f"--dir {root} is a file, not a folder; name a folder for the tables")
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
    for col in ("name", "target", "state", "positions", "MiB", "build s", "default"):
        t.add_column(col, justify="left" if col in ("name", "state") else "right")
    for row in store.listing(args.dir):
        pos = row.get("positions")
        size = row.get("bytes")
        t.add_row(row["name"], str(row["target"]), row["state"],
                  "-" if pos is None else (f"{pos:,}" if row["state"] == "built" else f"~{pos:,}"),
                  "-" if size is None else f"{size / 2**20:,.0f}",
                  "-" if row.get("build_seconds") is None else f"{row['build_seconds']:,.0f}",
                  "yes" if row["name"] in formations.DEFAULT else "")
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(t)
    other = "" if args.dir is None else f" --dir {args.dir}"
    print(f"build: ai2048 tables build [NAME ...]{other}; play: ai2048 watch endgame"
          + ("" if args.dir is None else f" --set tables_dir={args.dir}"))
    return 0


def _build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from ai2048.tables.build import BuildStopped, build
    from ai2048.train.run import GracefulStop

    names = _names(args)
    with GracefulStop() as stop:
        for n in names:
            folder = store.tables_dir(args.dir) / n
            if not args.force and (folder / store.META).is_file():
                print(f"{n}: already built in {folder}")
                continue
            expected = formations.TABLES[n][1]
            bar = tqdm(total=expected, desc=n, unit="pos", unit_scale=True, disable=not args.progress,
                       file=sys.stderr)

            def progress(phase: str, k: int, count: int, bar: tqdm = bar) -> None:
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
    return 0


def _verify(args: argparse.Namespace) -> int:
    bad = 0
    for n in _names(args):
        try:
            store.load(n, args.dir, verify=True)
            print(f"{n}: ok")
        except (store.TableError, store.TableNotBuilt) as e:
            print(f"{n}: {e}")
            bad += 1
    return 1 if bad else 0


def _run(args: argparse.Namespace) -> int:
    check(args)
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
        "`ai2048 tables verify` checks their SHA-256 digests. "
        "The folder is --dir, else $AI2048_TABLES, else the user cache (see docs/tables.md).",
    )
    p.add_argument("action", nargs="?", choices=("list", "build", "verify"), default="list",
                   help="list (default), build or verify")
    p.add_argument("names", nargs="*",
                   help="table names (default: the default set; `ai2048 tables` lists them)")
    p.add_argument("--dir", type=Path, default=None,
                   help="tables folder (default: $AI2048_TABLES or the cache)")
    p.add_argument("--force", action="store_true", help="rebuild tables that are already built")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True,
                   help="show a progress bar (default: on)")
    p.set_defaults(func=_run, check=check)
