"""``ai2048 play``: play 2048 in the terminal, with undo and hints from any agent."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ai2048.cli._common import add_set_argument, check_out_dir, parse_sets


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "play",
        help="play 2048 in the terminal (arrows/WASD/hjkl, u undo, i hint, space AI move)",
        description="Play 2048 in the terminal. Keys: arrows, WASD or hjkl move; u undo; i or ? hint "
        "(what the hint agent would play and its move values); space lets the agent play one move; "
        "n new game; q quit. Each finished game is saved as a replayable record.",
    )
    p.add_argument("--seed", type=int, default=None, help="seed of the first game (default: random)")
    p.add_argument("--hint-agent", default="expectimax", help="agent that gives hints and AI moves")
    add_set_argument(p)
    p.add_argument("--records", type=Path, default=Path("records"), help="folder for game records")
    p.add_argument("--no-record", action="store_true", help="do not save game records")
    p.set_defaults(func=run, check=check)


def record_path(folder: Path, kind: str, seed: int) -> Path:
    """``folder/<kind>-YYYYmmdd-HHMMSS-<seed>.json`` (unique per game)."""
    return folder / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{seed}.json"


def check_terminal() -> None:
    """Refuse to start without an interactive terminal: the game reads keys, and with stdin at EOF
    (``play < /dev/null``, a pipe, a cron job) it would wait for keys that never come."""
    for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)):
        if stream is None or not stream.isatty():
            raise ValueError(
                f"ai2048 play needs an interactive terminal, but {name} is not one; run it in a terminal, "
                "or let an agent play without one: ai2048 watch AGENT"
            )


def check(args: argparse.Namespace) -> None:
    """Every check ``run`` makes before the hint agent is built: the records folder, the agent's name
    and config keys."""
    from ai2048.agents.base import check_agent_config

    if not args.no_record:
        check_out_dir(args.records, "--records")
    check_agent_config(args.hint_agent, parse_sets(args.sets))


def run(args: argparse.Namespace) -> int:
    from ai2048.ui.deps import require

    check(args)
    require("textual")
    from ai2048.ui.session import PlaySession
    from ai2048.ui.terminal import make_play_app

    session = PlaySession(seed=args.seed)
    session.set_agent(args.hint_agent, parse_sets(args.sets))
    saved: list[Path] = []

    def save(s: PlaySession) -> str | None:
        if args.no_record:
            return None
        path = s.record("play").save(record_path(args.records, "play", s.seed))
        saved.append(path)
        return f"record saved to {path}"

    check_terminal()  # after the agent and its settings are checked, so those errors come first
    make_play_app(session, on_game_end=save).run()
    for path in saved:
        print(f"record saved to {path} (replay: ai2048 replay {path})")
    return 0
