"""``ai2048 replay RECORD``: replay a recorded game in the terminal, or render it as a GIF or MP4."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ai2048 import checks
from ai2048.cli._common import check_out_file, printable
from ai2048.records import GameRecord, RecordError, Trajectory, json_int, read_record_json, replay_differences
from ai2048.rules import CAPPED_RULES, P_TWO

CELL_RANGE = (16, 512)
"""Tile sizes in pixels that draw a readable board (the labels need about 16 px)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "replay",
        help="replay a game record in the terminal, or render it with --gif/--mp4",
        description="Replay a game record (from play, watch, serve or eval --record), checking every spawn "
        "and score against the rules. An evaluation result works too: --game picks the game (default: "
        "the best).",
    )
    p.add_argument("record", type=Path, help="a game record .json, or an eval result .json with --game")
    p.add_argument("--game", type=int, default=None, help="with an eval result: index of the game to replay")
    p.add_argument(
        "--delay", type=float, default=0.15, help="seconds between moves in the terminal (default 0.15)"
    )
    p.add_argument("--gif", type=Path, default=None, help="write an animated GIF here instead")
    p.add_argument("--mp4", type=Path, default=None, help="write an MP4 here instead (needs imageio-ffmpeg)")
    p.add_argument("--fps", type=float, default=8.0, help="frames per second of --gif/--mp4 (default 8)")
    p.add_argument("--every", type=int, default=1, help="draw every N-th move in --gif/--mp4 (long games)")
    p.add_argument("--cell", type=int, default=96, help="tile size in pixels for --gif/--mp4 (default 96)")
    p.set_defaults(func=run, check=check)


def load_any(path: Path, game: int | None) -> GameRecord:
    """A record from a record file, or game ``game`` (default: best score) of an eval result file."""
    d = read_record_json(path)
    if isinstance(d, dict) and d.get("format") == "ai2048.eval-result":
        games = d.get("games") or []
        if not isinstance(games, list) or not all(isinstance(g, dict) for g in games):
            raise RecordError(f"evaluation result {path} is corrupt: 'games' must be a list of game objects")
        if not games:
            raise RecordError(f"evaluation result {path} holds no games")
        try:
            scores = [json_int(g.get("score", 0), f"the score of game {i}") for i, g in enumerate(games)]
        except TypeError as e:
            raise RecordError(f"evaluation result {path} is corrupt: {e}") from e
        if game is None:
            game = max(range(len(games)), key=lambda i: scores[i])
        if not 0 <= game < len(games):
            raise ValueError(f"--game {game} is out of range: {path} holds games 0..{len(games) - 1}")
        g = games[game]
        if "actions" not in g:
            raise RecordError(
                f"evaluation result {path}: game {game} has no action string, so it cannot be replayed"
            )
        agent, config = d.get("agent"), d.get("config") or {}
        try:
            if agent is not None and not isinstance(agent, str):
                raise TypeError(f"'agent' must be a string, got {type(agent).__name__}")
            if not isinstance(config, dict):
                raise TypeError(f"'config' must be an object, got {type(config).__name__}")
            p_two = checks.probability("p_two", d.get("p_two", P_TWO))
            # the games replay under the rules they were played by (a result without the field is from
            # before rules version 1: capped, as evaluate.result reads it)
            rules = json_int(d.get("rules_version", CAPPED_RULES), "rules_version")
            rec = GameRecord.from_actions(json_int(g["seed"], "seed"), g["actions"], p_two=p_two,
                                          agent=agent, agent_config=config,
                                          meta={"source": str(path), "game": game}, rules=rules)
        except (ValueError, TypeError, KeyError) as e:
            raise RecordError(f"evaluation result {path}: game {game} does not replay: {e}") from e
        differ = replay_differences(g, rec.replay())
        if differ:
            raise RecordError(f"evaluation result {path}: game {game} replays to {'; '.join(differ)}")
        rec.source = str(path)
        return rec
    if game is not None:
        raise ValueError(f"--game only applies to an evaluation result; {path} is a single record")
    return GameRecord.from_dict(d, source=str(path))


def check(args: argparse.Namespace) -> None:
    """Every check ``run`` makes before the record is read."""
    checks.number("--delay", args.delay, 0.0)
    from ai2048.ui import render

    checks.number("--fps", args.fps, 0.0, render.MAX_FPS, lo_open=True)
    if args.fps < render.MIN_FPS:  # Pillow's OverflowError before
        raise ValueError(f"--fps {args.fps:g} is too slow: a GIF frame shows at most 655 s, so --fps must "
                         f"be >= {render.MIN_FPS:.4f}")
    checks.whole("--every", args.every, 1)
    checks.whole("--cell", args.cell, *CELL_RANGE)
    for flag, path, suffix in (("--gif", args.gif, ".gif"), ("--mp4", args.mp4, ".mp4")):
        if path is not None:
            check_out_file(path, flag)
            render.check_output(path, suffix, flag)


def run(args: argparse.Namespace) -> int:
    check(args)
    rec = load_any(args.record, args.game)
    if args.gif is not None or args.mp4 is not None:
        from ai2048.ui import render

        if args.gif is not None:
            print(f"wrote {render.write_gif(rec, args.gif, fps=args.fps, every=args.every, cell=args.cell)}")
        if args.mp4 is not None:
            print(f"wrote {render.write_mp4(rec, args.mp4, fps=args.fps, every=args.every, cell=args.cell)}")
        return 0
    play_in_terminal(rec, args.delay)
    return 0


def replay_view(t: Trajectory, i: int, title: str) -> Any:
    """The terminal's picture of move ``i`` of a replayed game: ``title``, the score, move, best tile and
    last move, and the board with its exact tiles (65536 and 131072 included)."""
    from rich.console import Group
    from rich.text import Text

    from ai2048.rules import Action
    from ai2048.ui.terminal import board_text, status_text

    last = f"last {Action(int(t.actions[i - 1])).name}" if i else "start"
    supers = int(t.supers[i]) if t.supers is not None else 0
    return Group(  # plain text: a record's fields are neither markup nor terminal escapes
        Text(printable(title)), status_text(int(t.scores[i]), i, int(t.max_tiles[i]), last),
        board_text(int(t.boards[i]), supers),
    )


def play_in_terminal(rec: GameRecord, delay: float) -> None:
    """Redraw the board after every move with rich, ``delay`` seconds apart."""
    from rich.console import Console
    from rich.live import Live

    t = rec.replay()
    console = Console()
    title = f"{rec.source or 'record'}: {rec.agent or 'unknown'}, seed {rec.seed}"

    def view(i: int) -> Any:
        return replay_view(t, i, title)

    n = len(t.actions)
    if not console.is_terminal:
        console.print(view(n))
    else:
        with Live(view(0), console=console, auto_refresh=False) as live:
            for i in range(1, n + 1):
                if delay:
                    time.sleep(delay)
                live.update(view(i), refresh=True)
    console.print(
        f"replayed {n} moves: score {rec.final_score}, max tile {rec.max_tile} (every spawn and score "
        "checked)"
    )
