"""``ai2048 strategy FILE``: score untrusted ``strategy(board) -> move`` code by N seeded games, sandboxed."""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from ai2048 import checks
from ai2048.cli._common import printable
from ai2048.cli.eval import check_games_out
from ai2048.evaluate.stream import GameStream, stream_path
from ai2048.rules import RULES_VERSION


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "strategy",
        help="score a Python strategy(board) -> move file by N seeded games, the code locked in a sandbox",
        description="Play N seeded games (the games 'ai2048 eval --seed' plays) with the function "
        "strategy(board) defined in FILE: board is 4 rows of 4 tile values (0 for empty), the answer a move "
        "name (up, down, left, right) or 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3). The code runs in a separate "
        "locked-down process (Linux: resource limits, seccomp, no files, sockets or processes; see "
        "docs/llm.md) and ends in a verdict: ok, crash, timeout, cpu, memory, forbidden, bad_move or "
        "protocol. A move that changes nothing ends that game. Ctrl-C or SIGTERM stops the run and keeps "
        "the finished games; with --out they are also streamed to disk as they finish, and --resume plays "
        "only the games a stopped or killed run lacks. Exit code 0 when the verdict is ok, 1 otherwise, "
        "130 when stopped.",
    )
    p.add_argument("file", type=Path, help="the Python file that defines strategy(board)")
    p.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    p.add_argument("--seed", type=int, default=0, help="evaluation seed: the games, and the code's random")
    p.add_argument("--max-moves", type=int, default=None, help="end a game after this many moves")
    p.add_argument("--move-seconds", type=float, default=1.0, help="wall seconds per answer (default 1)")
    p.add_argument("--start-seconds", type=float, default=10.0,
                   help="wall seconds to start and run the file's top level (default 10)")
    p.add_argument("--cpu-seconds", type=int, default=60, help="CPU seconds for the whole run (default 60)")
    p.add_argument("--memory-mb", type=int, default=256,
                   help="memory the code may allocate, beyond the interpreter's start-up (default 256)")
    p.add_argument("--total-seconds", type=float, default=300.0,
                   help="wall seconds for all the games; unfinished ones are not scored (default 300)")
    p.add_argument("--numpy", action="store_true", help="let the code import numpy")
    p.add_argument("--out", type=Path, default=None,
                   help="write the verdict and every game as JSON here (also when stopped); finished games "
                   "stream to OUT's .games.jsonl beside it as they finish, so a killed run keeps them")
    p.add_argument("--resume", action="store_true",
                   help="with --out: keep the finished games of a stopped or killed run (its .games.jsonl, "
                   "each replayed to check it) and play only the rest, with the same seeds")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> Any:
    """Every check ``run`` makes before the first game: counts, limits, the output path, the host and
    the file (text of a sane size); returns (code, limits)."""
    from ai2048.llm.sandbox import MAX_CODE_CHARS, SandboxLimits, check_code, check_host

    checks.whole("--games", args.games, 1)
    checks.whole("--seed", args.seed, 0)
    if args.max_moves is not None:
        checks.whole("--max-moves", args.max_moves, 1)
    checks.number("--total-seconds", args.total_seconds, 0, lo_open=True)
    try:
        limits = SandboxLimits(move_seconds=args.move_seconds, start_seconds=args.start_seconds,
                               cpu_seconds=args.cpu_seconds, memory_mb=args.memory_mb, numpy=args.numpy)
    except ValueError as e:
        raise ValueError("--" + str(e).replace("_", "-")) from None
    check_games_out(args)
    check_host()
    if args.file.is_dir():
        raise IsADirectoryError(f"{args.file} is a folder; give the Python file in it that defines "
                                "strategy(board)")
    if not args.file.is_file():
        what = "is not a regular file" if args.file.exists() else "does not exist"
        raise FileNotFoundError(f"{args.file} {what}; give the Python file that defines strategy(board)")
    if args.file.stat().st_size > 4 * MAX_CODE_CHARS:
        raise ValueError(f"{args.file} is {args.file.stat().st_size:,} bytes; strategy code may have at most "
                         f"{MAX_CODE_CHARS:,} characters")
    try:
        code = args.file.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{args.file} is not UTF-8 text: {e}") from None
    return check_code(code), limits


def games_stream(args: argparse.Namespace, code: str) -> tuple[GameStream | None, dict[int, dict[str, Any]]]:
    """The stream of finished games beside ``--out`` (None without it), opened, and the games a
    resumed run keeps (each replayed from its seed by :meth:`GameStream.load`)."""
    if args.out is None:
        return None, {}
    path = stream_path(args.out)
    config = {"code_sha256": hashlib.sha256(code.encode("utf-8")).hexdigest(), "numpy": args.numpy}
    stream = GameStream(path, {"agent": f"strategy:{args.file.name}", "config": config, "seed": args.seed,
                               "max_moves": args.max_moves, "games_requested": args.games,
                               "rules_version": RULES_VERSION}, may_stop=True)
    done: dict[int, dict[str, Any]] = {}
    if args.resume:
        done = stream.load()
        print(f"resuming: {len(done)} finished game(s) kept from {path}", file=sys.stderr)
    elif path.exists():
        raise ValueError(f"{path} holds the finished games of an earlier run with --out {args.out}; pass "
                         "--resume to finish that run, or delete the file to start afresh")
    stream.open(done)
    return stream, done


def run(args: argparse.Namespace) -> int:
    code, limits = check(args)
    from ai2048.checkpoint import write_json
    from ai2048.llm.strategy import score_strategy

    stream, done = games_stream(args, code)
    try:
        res = score_strategy(code, games=args.games, seed=args.seed, limits=limits, max_moves=args.max_moves,
                             total_seconds=args.total_seconds, done=done,
                             on_game=stream.write if stream is not None else None)
    finally:
        if stream is not None:
            stream.close()
    res.result.agent = f"strategy:{args.file.name}"
    print(printable(res.format()))  # the code's exception text and output may hold terminal escapes
    if args.out is not None:
        write_json(args.out, res.to_dict())
        print(f"wrote {printable(args.out)}")
        if stream is not None and not res.interrupted:
            stream.remove()  # the run has its verdict: the result holds every game
        elif stream is not None:
            print(f"finished games kept in {printable(stream.path)}; finish the run with the same command "
                  "and --resume")
    if res.interrupted:
        return 130
    return 0 if res.ok else 1
