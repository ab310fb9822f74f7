"""``ai2048 models [NAME]``: the shipped networks and their cards; ``ai2048 models pack``: make one.

    ai2048 models                      # names with headline figures
    ai2048 models 4x6-tc-lambda            # the model card (markdown; --json for the JSON)
    ai2048 models pack runs/long1 --name 4x6-tc-lambda --eval-1ply e1.json --eval-2ply e2.json --default
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ai2048 import models
from ai2048.cli._common import printable
from ai2048.models.card import HEADLINE_TILES, ply


def _fmt_pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}%"


def _list(directory: Path | None) -> int:
    found = models.names(directory)
    where = models.models_dir(directory)
    if not found:
        print(f"no shipped networks in {where}; pack one with `ai2048 models pack RUN_DIR --name NAME`")
        return 0
    heads: list[tuple[str, dict[str, Any]]] = []
    skipped = []
    for name in found:
        try:
            heads.append((name, models.headline(models.card(name, directory))))
        except ValueError as e:  # one damaged card does not hide the others
            skipped.append(f"skipped {name}: {e}")
    # 16384 and 32768 always; 65536 and 131072 (rules version 1) once a listed network's 2-ply games
    # reach them
    tiles = [*HEADLINE_TILES[:2], *(t for t in HEADLINE_TILES[2:]
                                    if any((h.get(ply(2)) or {}).get(str(t)) for _, h in heads))]
    t = Table(title=f"shipped networks ({where})",
              caption="N-ply: the ntuple agent at --set depth=N (2-ply: max-chance-max)")
    for col in ("name", "patterns", "stages", "MiB", "2-ply: games", *map(str, tiles), "mean", "moves/s",
                "1-ply: games", "mean "):
        t.add_column(col, justify="left" if col in ("name", "patterns") else "right")
    for name, h in heads:
        d2, d1 = h.get(ply(2)), h.get(ply(1))
        cells = [
            name + (" (default)" if h["default"] else ""),
            str(h["patterns"]),
            str(h["stages"]),
            f"{h['MiB']:.1f}",
            str(d2["games"]) if d2 else "-",
            *(_fmt_pct(d2 and d2[str(tile)]) for tile in tiles),
            f"{d2['score_mean']:,.0f}" if d2 else "-",
            f"{d2['moves_per_s']:,.0f}" if d2 else "-",
            str(d1["games"]) if d1 else "-",
            f"{d1['score_mean']:,.0f}" if d1 else "-",
        ]
        t.add_row(*(Text(printable(c)) for c in cells))  # a card's text is neither markup nor escapes
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)  # a pipe or a log: one line a network, not wrapped cells
    console.print(t)
    for line in skipped:
        print(printable(line), file=sys.stderr)
    other = "" if directory is None else f" --dir {directory}"
    models_dir = "" if directory is None else f" --set models_dir={directory}"
    print(f"the card: ai2048 models NAME{other}; play: ai2048 watch ntuple --set model=NAME{models_dir} "
          "--set depth=2")
    return 0


def _show(args: argparse.Namespace) -> int:
    if args.name is None:
        return _list(args.dir)
    card = models.card(args.name, args.dir)
    print(json.dumps(card, indent=2) if args.json else printable(models.markdown(card)))  # JSON escapes them
    return 0


def pack_parser() -> argparse.ArgumentParser:
    """The parser of ``ai2048 models pack``."""
    p = argparse.ArgumentParser(
        prog="ai2048 models pack",
        description="Pack an `ai2048 train ntuple` run directory as a shipped network: the compact file "
        "NAME.ntz and its model card NAME.json + NAME.md, in the models folder.",
    )
    p.add_argument("run", type=Path, help="run directory (config.json, meta.json, weights.npz)")
    p.add_argument("--name", required=True, help="model name (letters, digits, '.', '_', '-')")
    p.add_argument("--eval-1ply", type=Path, default=None,
                   help="result JSON of `ai2048 eval ... --out` at 1-ply (depth=1)")
    p.add_argument(
        "--eval-2ply", "--eval-depth2", dest="eval_2ply", type=Path, default=None,
        help="result JSON of `ai2048 eval ... --out` at 2-ply (depth=2)",
    )
    p.add_argument(
        "--command", default=None, help="the training command as run (default: written from config.json)"
    )
    p.add_argument("--summary", default="", help="one line for the top of the card")
    p.add_argument("--default", action="store_true", help="make it the network `make_agent('ntuple')` plays")
    p.add_argument(
        "--dir", type=Path, default=None, help="models folder (default: $AI2048_MODELS or the package's)"
    )
    p.add_argument("--machine", default=None, help="the training machine in words (default: this one)")
    p.add_argument("--wall-seconds", type=float, default=None, help="wall time of the training run")
    p.add_argument("--max-mib", type=float, default=64.0, help="largest file allowed (default 64)")
    p.add_argument(
        "--step",
        type=float,
        default=None,
        help="fixed-point step, a power of two (default: finest that fits)",
    )
    p.add_argument("--codec", choices=("zlib", "lzma"), default="zlib",
                   help="section codec: zlib (default, faster to decode) or lzma (smaller); "
                   "figures in docs/ntuple-lab.md")
    p.add_argument("--positions", type=int, default=100_000,
                   help="calibration positions: their decision weights are kept float32 (default 100000)")
    p.add_argument(
        "--checks", type=int, default=1000, help="fresh positions whose moves must agree (default 1000)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the games the positions come from")
    return p


def _pack(rest: list[str]) -> int:
    from ai2048.models.pack import pack

    a = pack_parser().parse_args(rest)
    card = pack(
        a.run, a.name, eval_1ply=a.eval_1ply, eval_depth2=a.eval_2ply, command=a.command, summary=a.summary,
        default=a.default, directory=a.dir, machine_text=a.machine, wall_seconds=a.wall_seconds,
        max_mib=a.max_mib, step=a.step, codec=a.codec, positions=a.positions, checks=a.checks, seed=a.seed,
    )
    where = models.models_dir(a.dir)
    print(f"packed {card['name']}: {where / card['file']['name']} ({card['file']['bytes'] / 2**20:.2f} MiB), "
          f"card {where / (card['name'] + '.md')}")
    return 0


def _rest(args: argparse.Namespace) -> list[str]:
    """The words after ``models``, with the options written before the first word (``ai2048 models --dir
    DIR``), which reach the subcommand's parser rather than ``rest``."""
    rest = list(args.rest)
    if args.dir is not None:
        rest += ["--dir", str(args.dir)]
    if args.json:
        rest += ["--json"]
    return rest


def _show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ai2048 models")
    p.add_argument("name", nargs="?", default=None)
    p.add_argument("--json", action="store_true")
    p.add_argument("--dir", type=Path, default=None)
    return p


def check(args: argparse.Namespace) -> None:
    """Every check ``_run`` makes before its work: the options, the pack options (before the run is
    read), or that NAME is a shipped network with a readable card."""
    rest = _rest(args)
    if rest and rest[0] == "pack":
        from ai2048.models.pack import check_pack_options, check_pack_outputs

        a = pack_parser().parse_args(rest[1:])
        check_pack_options(a.name, max_mib=a.max_mib, positions=a.positions, checks=a.checks, step=a.step,
                           wall_seconds=a.wall_seconds, codec=a.codec)
        check_pack_outputs(a.name, a.dir)
        return
    a = _show_parser().parse_args(rest)
    if a.name is not None:
        models.card(a.name, a.dir)


def _run(args: argparse.Namespace) -> int:
    check(args)
    rest = _rest(args)
    if rest and rest[0] == "pack":
        return _pack(rest[1:])
    return _show(_show_parser().parse_args(rest))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "models",
        help="list the shipped networks, show a model card, or pack a run as one",
        description="`ai2048 models` lists the shipped n-tuple networks with their headline figures; "
        "`ai2048 models NAME [--json]` prints its model card; `ai2048 models pack RUN --name NAME ...` packs "
        "a "
        "training run (see `ai2048 models pack --help`). --dir DIR uses another models folder "
        "(default: $AI2048_MODELS or the package's).",
    )
    p.add_argument("--dir", type=Path, default=None,
                   help="models folder (default: $AI2048_MODELS or the package's)")
    p.add_argument("--json", action="store_true", help="with NAME: print the model card as JSON")
    p.add_argument(
        "rest", nargs=argparse.REMAINDER, help="[NAME] [--json] [--dir DIR], or pack RUN --name NAME ..."
    )
    p.set_defaults(func=_run, check=check)
