"""``ai2048 watch``: an agent plays in the terminal, the board redrawn live, a summary at the end."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from ai2048 import checks
from ai2048.board_io import exact_tiles
from ai2048.cli._agents import ChosenAgent, choose_agent
from ai2048.cli._common import add_set_argument, check_out_file, parse_sets
from ai2048.game import Game
from ai2048.rules import ACTION_CHARS, ACTION_NAMES, P_TWO

_COLOURS = ["white", "bright_white", "yellow", "orange1", "dark_orange", "red", "bright_red", "gold1",
            "green_yellow", "green", "cyan", "blue", "magenta", "purple", "deep_pink2", "bright_magenta",
            "bold medium_purple1", "bold hot_pink"]
"""One style per exact exponent, 0 (empty) to 17 (131072)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "watch",
        help="watch an agent play in the terminal",
        description="AGENT (a registered name or a run directory) plays one game; the board is redrawn "
        "live (plain output without a terminal) and a summary is printed at the end.",
    )
    p.add_argument(
        "agent", nargs="?", default="expectimax", help="agent name or run directory (default expectimax)"
    )
    add_set_argument(p)
    p.add_argument("--seed", type=int, default=None, help="game seed (default: random)")
    p.add_argument("--delay", type=float, default=0.0, help="seconds to pause after each move (speed)")
    p.add_argument("--max-moves", type=int, default=None, help="stop after this many moves")
    p.add_argument("--p-two", type=float, default=P_TWO, help="probability that a spawned tile is a 2")
    p.add_argument("--record", type=Path, default=None, help="save the game as a replayable record here")
    p.set_defaults(func=run, check=check)


def board_table(board: int, supers: int = 0) -> Table:
    """The position ``(board, supers)`` as a rich table of exact tile values (``supers``: the values of
    its tiles of 32768 or more, as ``Game.supers``), one colour per tile exponent."""
    t = Table(show_header=False, show_lines=True, padding=(0, 1))
    for _ in range(4):
        t.add_column(justify="right", width=6)  # "131072" fits
    for row in exact_tiles(board, supers).tolist():
        t.add_row(*[Text(str(v) if v else ".", style=_COLOURS[v.bit_length() - 1 if v else 0]) for v in row])
    return t


def frame(g: Game, name: str, last: str, rate: float) -> Group:
    head = Text(
        f"{name}  score {g.score}  moves {g.moves}  max {g.max_tile}  last {last}  {rate:.1f} moves/s"
    )
    return Group(head, board_table(g.board, g.supers))


def check(args: argparse.Namespace) -> ChosenAgent:
    """Every check ``run`` makes before the agent is built; returns the agent, checked once, its settings
    fitted to the standard rules this game is played by (a run trained under seed 004's rules masks its
    moves)."""
    checks.number("--delay", args.delay, 0.0)
    checks.probability("--p-two", args.p_two)
    check_out_file(args.record, "--record")
    if args.max_moves is not None:
        checks.whole("--max-moves", args.max_moves, 1)
    return choose_agent(args.agent, parse_sets(args.sets), illegal_move="reject")


def run(args: argparse.Namespace) -> int:
    agent, name, cfg = check(args).build()
    seed = args.seed if args.seed is not None else int(time.time_ns() % (1 << 63))
    g = Game(seed=seed, p_two=args.p_two)
    if hasattr(agent, "reset"):
        agent.reset(seed)
    console = Console()
    actions: list[str] = []
    t0 = time.perf_counter()
    last = "-"
    interrupted = False
    drawn = 0.0
    with Live(frame(g, name, last, 0.0), console=console, auto_refresh=False,
              transient=False) as live:
        try:
            while not g.is_over and (args.max_moves is None or g.moves < args.max_moves):
                view, forced = g.to_play()  # two equal tiles of 32768 or more show as 16384s (Game.view)
                a = forced if forced >= 0 else agent.act(view)
                g.step(a)
                actions.append(ACTION_CHARS[int(a)])
                last = ACTION_NAMES[int(a)]
                now = time.perf_counter()
                if console.is_terminal and (args.delay or now - drawn > 1 / 30):  # at most ~30 frames/s
                    live.update(frame(g, name, last, g.moves / (now - t0)), refresh=True)
                    drawn = now
                if args.delay:
                    time.sleep(args.delay)
        except KeyboardInterrupt:
            interrupted = True
        live.update(frame(g, name, last, g.moves / max(time.perf_counter() - t0, 1e-9)), refresh=True)
    secs = time.perf_counter() - t0
    if not console.is_terminal:
        console.print()
    state = "interrupted" if interrupted else ("game over" if g.is_over else "stopped at --max-moves")
    console.print(
        f"{state}: seed {seed}  score {g.score}  moves {g.moves}  max tile {g.max_tile}  "
        f"{secs:.1f} s  {g.moves / max(secs, 1e-9):.1f} moves/s"
    )
    if args.record is not None:
        from ai2048.records import GameRecord

        rec = GameRecord.from_actions(seed, "".join(actions), p_two=args.p_two, agent=name, agent_config=cfg)
        console.print(f"record saved to {rec.save(args.record)}")
    return 130 if interrupted else 0
