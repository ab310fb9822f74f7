"""``ai2048 tune``: tune the expectimax heuristic's weights by self-play (see :mod:`ai2048.tune`)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from ai2048 import checks
from ai2048.cli._common import check_out_file
from ai2048.tune import TuneResult, check_done, check_tune_settings, load_tune_file, tune_weights


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "tune",
        help="tune the expectimax heuristic's weights by self-play",
        description="A (1+λ) evolution strategy over the nneonneo heuristic's weights: every candidate "
        "plays the same seeded games at a fixed depth and is scored by its mean score; the best weights "
        "are then checked against the start on other games. Use the result with "
        "`ai2048 eval expectimax --set weights='{...}'`. Ctrl-C or SIGTERM saves the candidates tried "
        "(to --out, else to ./tune-DATE-TIME.json) and prints the command that continues the search.",
    )
    p.add_argument("--depth", type=int, default=2,
                   help="expectimax depth the candidates play at, D = D-ply (default 2)")
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
    p.add_argument("--out", type=Path, default=None,
                   help="write every candidate and the result here (JSON, rewritten atomically after each "
                   "candidate, so a stopped or killed search keeps them)")
    p.add_argument("--resume", action="store_true",
                   help="with --out: continue the search saved there (stopped by Ctrl-C, SIGTERM or a kill) "
                   "with the same settings; its candidates are checked, not replayed")
    p.set_defaults(func=run, check=check)


def _weights(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"--start expects a JSON object of weights: {e}") from e
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"--start expects a JSON object of weights, got {text!r}")
    return value


def check(args: argparse.Namespace) -> list[dict[str, Any]] | None:
    """Every check ``run`` makes before the first game (``tune_weights`` makes its own again); with
    ``--resume``, the saved candidates (checked against the settings)."""
    check_out_file(args.out)
    checks.number("--sigma", args.sigma, 0.0, lo_open=True)
    *_, start = check_tune_settings(depth=args.depth, games=args.games, generations=args.generations,
                                    population=args.population, sigma=args.sigma, validate=args.validate,
                                    workers=args.workers, start=args.start, seed=args.seed)
    if not args.resume:
        if args.out is not None and args.out.is_file():
            try:
                _, _, status = load_tune_file(args.out)
            except ValueError:  # not a tune result: replaced, as any output file is
                status = "completed"
            if status in ("running", "interrupted"):
                raise ValueError(f"{args.out} holds an unfinished search ({status}); pass --resume to "
                                 "continue it, or delete the file to start afresh")
        return None
    if args.out is None:
        raise ValueError("--resume needs --out: it continues the search saved in that file")
    done, saved, _ = load_tune_file(args.out)
    settings = {"depth": args.depth, "games": args.games, "generations": args.generations,
                "population": args.population, "sigma": float(args.sigma), "seed": args.seed}
    check_done(done, settings, start, saved)
    return done


def continue_command(args: argparse.Namespace, out: Path) -> str:
    """The ``ai2048 tune`` command line that continues this search from ``out``."""
    words = ["ai2048", "tune", "--depth", str(args.depth), "--games", str(args.games), "--generations",
             str(args.generations), "--population", str(args.population), "--sigma", repr(float(args.sigma)),
             "--seed", str(args.seed), "--validate", str(args.validate), "--workers", str(args.workers)]
    if args.start is not None:
        words += ["--start", json.dumps(args.start)]
    return shlex.join([*words, "--out", str(out), "--resume"])


def run(args: argparse.Namespace) -> int:
    done = check(args)
    console = Console()
    best = [float("-inf")]

    def show(entry: dict[str, Any]) -> None:
        best[0] = max(best[0], entry["fitness"])
        console.print(f"gen {entry['generation']:>2} {entry['role']:<5} mean score {entry['fitness']:>9.0f}"
                      f"  (best {best[0]:.0f}, sigma {entry['sigma']:.3f})")

    def save(partial: TuneResult) -> None:
        partial.save(args.out)

    if done:
        print(f"resuming: {len(done)} candidate(s) kept from {args.out}", file=sys.stderr)
    result = tune_weights(depth=args.depth, games=args.games, generations=args.generations,
                          population=args.population, sigma=args.sigma, seed=args.seed,
                          validate=args.validate, workers=args.workers, start=args.start, on_candidate=show,
                          on_result=save if args.out is not None else None, done=done)
    if result.status == "interrupted":
        if not result.history:
            print("interrupted before the first candidate was scored; nothing to save", file=sys.stderr)
            return 130
        out = args.out or Path(f"tune-{time.strftime('%Y%m%d-%H%M%S')}.json")
        result.save(out)
        print(result.format())
        print(f"interrupted: {len(result.history)} candidate(s) saved to {out}; continue with:\n"
              f"  {continue_command(args, out)}")
        return 130
    print(result.format())
    print("use: ai2048 eval expectimax --set weights='" + json.dumps(result.best) + "'")
    if args.out is not None:
        result.save(args.out)
        print(f"result written to {args.out}")
    return 0
