"""``ai2048 arena``: several agents on the same seeded games, side by side."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ai2048.checkpoint import write_json
from ai2048.cli._agents import ChosenAgent, split_spec
from ai2048.cli._common import check_out_file, printable
from ai2048.cli.eval import add_eval_arguments, check_eval_arguments, choose_with_preset, run_eval
from ai2048.evaluate import EvalError, EvalResult


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "arena",
        help="compare agents on the same seeded games",
        description="Evaluate each AGENT on the same game seeds and print one column per agent. "
        "Give settings as name:key=value,key=value, e.g. expectimax:depth=2 montecarlo:playouts=20.",
    )
    p.add_argument("agents", nargs="+", metavar="AGENT", help="name[:key=value,...] or a run directory")
    add_eval_arguments(p)
    p.add_argument("--out", type=Path, default=None, help="write every result to this JSON file")
    p.set_defaults(func=run, check=check)


def table(results: list[EvalResult]) -> str:
    """One column per agent: score, speed, then the share of games reaching each tile."""
    sums = [r.summary() for r in results]
    labels = [f"{r.agent}{_cfg(r.config)}" for r in results]
    rows: list[tuple[str, list[str]]] = [
        ("games", [str(s["games"]) for s in sums]),
        ("score mean", [f"{s['score_mean']:.0f} ± {s['score_se']:.0f}" if s["games"] else "-" for s in sums]),
        ("score median", [f"{s['score_median']:.0f}" if s["games"] else "-" for s in sums]),
        ("score max", [f"{s['score_max']}" if s["games"] else "-" for s in sums]),
        ("moves/game", [f"{s['moves_mean']:.0f}" if s["games"] else "-" for s in sums]),
        ("moves/s", [f"{s['moves_per_s']:.1f}" if s["games"] else "-" for s in sums]),
    ]
    seen = [row["tile"] for s in sums for row in s.get("tiles", [])]
    # every power of two from the smallest to the largest: a tile above one agent's table and below
    # another's (512 between a 256 and a 1024 agent) is still a row
    tiles = [1 << e for e in range(min(seen).bit_length() - 1, max(seen).bit_length())] if seen else []
    for t in tiles:
        cells = []
        for s in sums:
            hit = [row for row in s.get("tiles", []) if row["tile"] == t]
            if hit:
                lo, hi = hit[0]["reach_ci"]
                cells.append(f"{100 * hit[0]['reach_rate']:.1f} ({100 * lo:.0f}-{100 * hi:.0f})")
            else:
                below = s["games"] and all(row["tile"] > t for row in s["tiles"])
                cells.append("100.0" if below else "0.0")
        rows.append((f">= {t} %", cells))
    width = [max(len(lab), *(len(r[1][i]) for r in rows)) for i, lab in enumerate(labels)]
    first = max(len(r[0]) for r in rows)
    out = [" " * first + "  " + "  ".join(lab.rjust(w) for lab, w in zip(labels, width, strict=False))]
    for name, cells in rows:
        out.append(
            name.ljust(first) + "  " + "  ".join(c.rjust(w) for c, w in zip(cells, width, strict=False))
        )
    return "\n".join(out)


def _cfg(cfg: dict[str, Any]) -> str:
    return (":" + ",".join(f"{k}={v}" for k, v in cfg.items())) if cfg else ""


def check(args: argparse.Namespace) -> list[ChosenAgent]:
    """Every check ``run`` makes before the first game: the options, then every agent, its keys and
    values (a misspelt last agent fails before the first agent plays); returns the agents, checked once."""
    check_eval_arguments(args)
    check_out_file(args.out)
    return [choose_with_preset(args, name, cfg) for name, cfg in map(split_spec, args.agents)]


def run(args: argparse.Namespace) -> int:
    chosen = check(args)
    # every agent is built before the first game: a bad setting or missing weights in the last spec
    # must not cost the evaluations of the ones before it
    built = [c.build() for c in chosen]
    results: list[EvalResult] = []
    code = 0
    for agent in built:
        try:
            results.append(run_eval(args, agent))
        except EvalError as e:
            print(f"ai2048 arena: error: {printable(e)}", file=sys.stderr)
            results.append(e.result)
            code = 1
        if results[-1].interrupted:
            code = 130
            break
    print(table(results))
    if args.out is not None:
        write_json(args.out, {"format": "ai2048.arena", "seed": args.seed,
                              "results": [r.to_dict() for r in results]})
        print(f"results written to {args.out}")
    return code
