"""Who decides an endgame agent's moves: each table's share and the network search's, over the games of
an evaluation.

    ai2048 eval endgame --games 100 --out endgame.json
    python benchmarks/table_move_share.py endgame.json
    python benchmarks/table_move_share.py endgame.json --set min_value=0.5 --workers 2

Every game of the result (``ai2048 eval endgame ... --out FILE``) is replayed from its seed and
actions, checked against its recorded score, moves and final board, and each board the agent decided
is classified with the agent's own rule (``EndgameAgent.decider``, the one ``act`` follows) under the
result's settings (``--set`` changes one): the table that plays it, by name, or the search. Only table
lookups run, no search, so a game of tens of thousands of moves takes seconds. A move the rules force
(two equal tiles past 32768 and nothing else to move: ``Game.to_play``) is no one's decision and is
counted apart.

Printed: one row per table of the agent and one for the search, with its moves, its share of all the
decided moves, its share of those made while the board holds a 16384 or more, and its share of each
phase by the largest tile (below 8192, 8192, 16384, 32768 and more); then the number of moves in
each column. The speed line is this analysis's own (boards classified per wall second); there is no
baseline to compare it with, so no ratio is printed. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.agents import make_agent
from ai2048.cli._common import parse_sets, printable
from ai2048.engine.supertiles import view_and_forced
from ai2048.evaluate import EvalResult, check_workers
from ai2048.evaluate.local import worker_stream
from ai2048.progress import progress_bar
from ai2048.records import replay_actions, replay_differences
from ai2048.rules import CAPPED_RULES

AGENT = "endgame"
SEARCH = "search"
"""The decider of a move no table plays: the n-tuple network's search."""
FORCED = "forced"
"""A move the rules play unasked (no legal move in the agent's view): decided by no one."""
PHASE_TILES = (8192, 16384, 32768)
"""Where the phases by the largest tile start: below 8192, 8192, 16384, 32768 and more."""
PHASES = ("below 8192", "8192", "16384", "32768+")
LATE = 2
"""The first phase of a board holding a 16384 or more."""

Counts = dict[tuple[str, int], int]
"""{(decider, phase): moves}."""


def phases(max_tiles: np.ndarray) -> np.ndarray:
    """[n] the phase (index into :data:`PHASES`) of boards whose largest tiles are ``max_tiles``."""
    return np.searchsorted(np.array(PHASE_TILES), np.asarray(max_tiles), side="right")


def classify_game(agent: Any, game: tuple[int, int, str], *, p_two: float, penalty: bool,
                  rules: int) -> Counts:
    """{(decider, phase): moves} of one game = (index, seed, actions): each move's board (the view the
    agent is shown) classified by ``agent.decider``, the search as :data:`SEARCH`, a forced move as
    :data:`FORCED`."""
    _, seed, actions = game
    t = replay_actions(seed, actions, p_two, penalty, rules=rules)
    phase = phases(t.max_tiles[:-1]).tolist()
    supers = np.zeros(len(t.boards), np.int64) if t.supers is None else t.supers
    out: Counter[tuple[str, int]] = Counter()
    for k in range(len(t.actions)):
        board, forced = int(t.boards[k]), -1
        if rules != CAPPED_RULES:
            view, f = view_and_forced(t.boards[k], np.int64(supers[k]))
            board, forced = int(view), int(f)
        who = FORCED if forced >= 0 else agent.decider(board) or SEARCH
        out[who, phase[k]] += 1
    return dict(out)


class MoveShare:
    """Moves by decider and phase over the games of one evaluation (a plain class: the script is also
    loaded from its path, where a dataclass cannot find its module)."""

    def __init__(self, tables: tuple[str, ...]) -> None:
        self.tables = tables
        """The agent's tables, in its order (a table that decided nothing is shown with 0 moves)."""
        self.counts: Counter[tuple[str, int]] = Counter()
        self.games = 0

    def add(self, counts: Counts) -> None:
        self.counts.update(counts)
        self.games += 1

    def moves(self, who: str | None = None, phase: Iterable[int] = range(len(PHASES))) -> int:
        """Moves of ``who`` (None: every decided move) in the phases ``phase``."""
        ph = set(phase)
        return sum(n for (w, p), n in self.counts.items()
                   if p in ph and (w == who if who is not None else w != FORCED))

    @property
    def deciders(self) -> tuple[str, ...]:
        """The tables, then the search."""
        return (*self.tables, SEARCH)

    def format(self) -> str:
        """The table of shares (see the module docstring)."""
        late = range(LATE, len(PHASES))
        cols = [("share", range(len(PHASES))), ("from 16384", late)]
        cols += [(p, [i]) for i, p in enumerate(PHASES)]
        width = max(len(w) for w in (*self.deciders, "moves in column"))
        lines = [f"{'decider':<{width}} {'moves':>11} " + " ".join(f"{c:>10}" for c, _ in cols)]
        for who in self.deciders:
            cells = []
            for _, ph in cols:
                total = self.moves(None, ph)
                cells.append(f"{100 * self.moves(who, ph) / total:>9.2f}%" if total else f"{'-':>10}")
            lines.append(f"{who:<{width}} {self.moves(who):>11,} " + " ".join(cells))
        lines.append(f"{'moves in column':<{width}} {'':>11} "
                     + " ".join(f"{self.moves(None, ph):>10,}" for _, ph in cols))
        forced = self.moves(FORCED)
        if forced:
            lines.append(f"(and {forced:,} moves forced by the rules, decided by no one)")
        return "\n".join(lines)


def check_result(result: EvalResult, path: Path) -> None:
    """Every game of ``result`` replays from its seed and actions to its recorded figures; else a
    ValueError naming the game."""
    penalty = result.illegal_move == "penalty"
    if not result.records:
        raise ValueError(f"{path} holds no finished games")
    for i, g in enumerate(progress_bar(result.records, desc="checking games", unit="game")):
        if not isinstance(g, dict) or not isinstance(g.get("actions"), str):
            raise ValueError(f"{path}: game {i} has no action string; it is not a game `ai2048 eval` wrote")
        try:
            t = replay_actions(g.get("seed"), g["actions"], result.p_two, penalty, rules=result.rules_version)
        except (TypeError, ValueError) as e:
            raise ValueError(f"{path}: game {i} does not replay: {e}") from None
        differ = replay_differences(g, t)
        if differ:
            raise ValueError(f"{path}: game {i} replays to {'; '.join(differ)}; the file was altered")


def move_share(agent: Any, result: EvalResult, workers: int = 1) -> MoveShare:
    """Every decided move of ``result``'s games by who decides it under ``agent``'s settings, in this
    process or in ``workers`` processes of the evaluation pool (:func:`worker_stream`)."""
    share = MoveShare(tuple(t.spec.name for t in agent.tables))
    play = partial(classify_game, p_two=result.p_two, penalty=result.illegal_move == "penalty",
                   rules=result.rules_version)
    tasks = [(i, int(g["seed"]), g["actions"]) for i, g in enumerate(result.records)]
    for counts in worker_stream(agent, play, tasks, check_workers(workers), progress="classifying moves"):
        share.add(counts)
    return share


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result", type=Path,
                   help="an evaluation result of the endgame agent (`ai2048 eval endgame --out FILE`)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="change one of the agent's settings the result records (e.g. min_value=0.5)")
    p.add_argument("--workers", type=int, default=1, help="processes classifying games (1: this one)")
    a = p.parse_args(argv)
    try:
        workers = check_workers(a.workers)
        result = EvalResult.load(a.result)
        if result.agent != AGENT:
            raise ValueError(f"{a.result} holds games of the agent {printable(result.agent)!r}, not "
                             f"{AGENT!r}: give an evaluation of {AGENT} (`ai2048 eval {AGENT} --out FILE`)")
        config = {**dict(result.config or {}), **parse_sets(a.set)}
        agent = make_agent(AGENT, **config)
        check_result(result, a.result)
    except (ValueError, TypeError, OSError) as e:
        p.error(str(e))
    t0 = time.perf_counter()
    share = move_share(agent, result, workers)
    wall = time.perf_counter() - t0
    every = share.moves(None) + share.moves(FORCED)
    print(f"{AGENT} {config} over the {share.games} games of {a.result}: {every:,} moves")
    print(share.format())
    rate = every / max(wall, 1e-9)
    print(f"speed: {every:,} boards classified in {wall:.1f} s wall = {rate:,.0f} boards/s "
          f"({workers} worker{'s' if workers > 1 else ''}; table lookups only, no baseline)")


if __name__ == "__main__":
    main()
