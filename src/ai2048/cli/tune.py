"""``ai2048 tune``: tune the expectimax heuristic's weights by self-play (see :mod:`ai2048.tune`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from ai2048.cli._common import check_out_file, check_range
from ai2048.tune import check_tune_settings, tune_weights


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tune",
        help="tune the expectimax heuristic's weights by self-play",
        description="A (1+λ) evolution strategy over the nneonneo heuristic's weights: every candidate "
        "plays the same seeded games at a fixed depth and is scored by its mean score; the best weights "
        "are then checked against the start on other games. Use the result with "
        "`ai2048 eval expectimax --set weights='{...}'`.",
    )
    p.add_argument("--depth", type=int, default=2, help="expectimax depth the candidates play at (default 2)")
    p.add_argument("--games", type=int, default=100, help="games per candidate (default 100)")
    p.add_argument("--generations", type=int, default=8, help="generations (default 8)")
    p.add_argument("--population", type=int, default=6, help="children per generation (default 6)")
    p.add_argument("--sigma", type=float, default=0.25, help="initial log-space step size (default 0.25)")
    p.add_argument("--seed", type=int, default=1, help="seed of the mutations and of the tuning games")
    p.add_argument("--validate", type=int, default=200,
                   help="games on other seeds comparing start and best (default 200; 0 = skip)")
    p.add_argument("--workers", type=int, default=1, help="parallel worker processes (default 1)")
    p.add_argument("--start", type=_weights, default=None,
                   help="start weights as JSON, e.g. '{\"empty\": 270}' (default: nneonneo's constants)")
    p.add_argument("--out", type=Path, default=None, help="write every candidate and the result here (JSON)")
    p.set_defaults(func=run, check=check)


def _weights(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"--start expects a JSON object of weights: {e}") from e
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"--start expects a JSON object of weights, got {text!r}")
    return value


def check(args: argparse.Namespace) -> None:
    """Every check ``run`` makes before the first game (``tune_weights`` makes its own again)."""
    check_out_file(args.out)
    check_range("--sigma", args.sigma, 0.0, low_open=True)
    check_tune_settings(depth=args.depth, games=args.games, generations=args.generations,
                        population=args.population, sigma=args.sigma, validate=args.validate,
                        workers=args.workers, start=args.start, seed=args.seed)


def run(args: argparse.Namespace) -> int:
    check(args)
    console = Console()
    best = [float("-inf")]

    def show(entry: dict[str, Any]) -> None:
        best[0] = max(best[0], entry["fitness"])
        console.print(f"gen {entry['generation']:>2} {entry['role']:<5} mean score {entry['fitness']:>9.0f}"
                      f"  (best {best[0]:.0f}, sigma {entry['sigma']:.3f})")

    result = tune_weights(depth=args.depth, games=args.games, generations=args.generations,
                          population=args.population, sigma=args.sigma, seed=args.seed,
                          validate=args.validate, workers=args.workers, start=args.start, on_candidate=show)
    print(result.format())
    print("use: ai2048 eval expectimax --set weights='" + json.dumps(result.best) + "'")
    if args.out is not None:
        result.save(args.out)
        print(f"result written to {args.out}")
    return 0
