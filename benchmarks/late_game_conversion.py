"""The 16384 -> 32768 conversion of an agent (or any tile's to the next), measured from a pool of
late-game boards.

    python benchmarks/late_game_conversion.py endgame --set depth=2
    python benchmarks/late_game_conversion.py endgame --set depth=3 --set tables=442-128,442-256,442-512
    python benchmarks/late_game_conversion.py endgame --set depth=3 --why    # how the lost games ended
    python benchmarks/late_game_conversion.py ntuple --set weights=runs/late --set depth=2 \
        --set downgrade=highest
    ai2048 pool --from result.json --tile 32768 --out pool32k.json     # the game past 32768:
    python benchmarks/late_game_conversion.py endgame --pool pool32k.json  # 32768 -> 65536

A whole-game evaluation spends most of its time before the 16384 and counts only the games that
reach it; this measurement starts every game where the conversion is decided. The pool is the first
board holding a 16384 in each of ``--pool-games`` games of the shipped network's 2-ply search (seeds
``--pool-seed`` ...; about 83% of games give a board), made once with ``ai2048 pool``'s code and kept
in ``--pool`` (reused when it exists). Pool board ``i`` is played on with seed ``--seed + i`` to the
end; the output is the share that reaches 32768 with its 95% Wilson interval, the mean final score
and the CPU seconds a game. Two settings measured on one pool and one ``--seed`` meet the same boards
and the same spawn streams, so their difference is less noisy than two whole-game evaluations. A pool
of another tile (``ai2048 pool --tile``, or ``--from`` an evaluation's games) measures the conversion
to twice that tile: from a pool of 32768s, the 65536 (rules version 1; the agent plays
``Game.to_play``'s view, as every evaluation does).
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.agents import make_agent
from ai2048.agents.base import config_keys
from ai2048.cli._common import parse_sets
from ai2048.evaluate.pool import make_pool, read_pool, save_pool
from ai2048.game import Game
from ai2048.stats import wilson

_AGENT: Any = None


def _init(name: str, config: dict[str, Any]) -> None:
    global _AGENT
    _AGENT = make_agent(name, **config)


ENDINGS = ("never in a table", "inside a table's formation", "after a stuck table", "after a table's goal")
"""How a game ended, by its last table decision (``--why``)."""


def table_state(agent: Any, board: int) -> str:
    """``"table"`` when a table of ``agent`` chooses the move on ``board``, ``"stuck"`` when the board is
    in a table's formation but no move has a positive value (every legal move breaks it), else ``""``."""
    v = agent.table_values(board)
    if v is None:
        return ""
    return "table" if np.nanmax(v, initial=-1.0) > agent.min_value else "stuck"


def ending(states: list[str]) -> tuple[str, int]:
    """How a game whose moves had these :func:`table_state` ended, and the moves after its last table
    move: never in a table, inside a table's formation (the last move a table's), after a stuck table
    (the next board in a formation no move keeps), or after a table's goal (the next board in none)."""
    if "table" not in states:
        return ENDINGS[0], len(states)
    last = len(states) - 1 - states[::-1].index("table")
    after = len(states) - 1 - last
    if after == 0:
        return ENDINGS[1], 0
    return (ENDINGS[2] if states[last + 1] == "stuck" else ENDINGS[3]), after


def _play_on(task: tuple[int, int, int, bool]) -> dict[str, Any]:
    seed, board, score, why = task
    g = Game(seed=seed, board=board)
    g.score = score
    states: list[str] = []
    t0 = time.process_time()
    while not g.is_over:
        view, forced = g.to_play()
        if why:
            states.append(table_state(_AGENT, view))
        g.step(forced if forced >= 0 else _AGENT.act(view))
    second = sorted(g.tiles.reshape(16).tolist())[-2]
    out = {"max_tile": g.max_tile, "second": second, "score": g.score, "cpu": time.process_time() - t0}
    return {**out, "ending": ending(states)} if why else out


def why_lost(out: list[dict[str, Any]], goal: int) -> str:
    """The lost games (no ``goal``) counted by :data:`ENDINGS`, with the median moves after the last table
    move."""
    lost = [r["ending"] for r in out if r["max_tile"] < goal]
    parts = []
    for e in ENDINGS:
        after = [n for kind, n in lost if kind == e]
        if after:
            parts.append(f"{e} {len(after)}" + (f" (median {np.median(after):.0f} moves after its last table "
                                                 "move)" if e in ENDINGS[2:] else ""))
    return f"the {len(lost)} lost games ended: " + ("; ".join(parts) or "none")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("agent")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--pool", type=Path, default=Path("late-game-pool.json"))
    p.add_argument("--pool-games", type=int, default=330)
    p.add_argument("--pool-seed", type=int, default=700_000)
    p.add_argument("--seed", type=int, default=900_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--why", action="store_true",
                   help="also count how each lost game ended, by its last table decision (endgame agents)")
    args = p.parse_args()
    config = parse_sets(args.set)
    try:  # the agent built once: a bad name, key or value is named before the pool is made or any game played
        make_agent(args.agent, **config)
    except (ValueError, TypeError, OSError) as e:
        p.error(str(e))
    if args.why and "tables" not in config_keys(args.agent):
        p.error(f"--why needs an agent with endgame tables (endgame), not {args.agent}")
    if not args.pool.is_file():
        _, data = make_pool("ntuple", {"depth": 2}, tile=16384, games=args.pool_games, seed=args.pool_seed,
                            workers=args.workers)
        save_pool(args.pool, data)
    pool = read_pool(args.pool)
    starts = zip(pool.boards, pool.scores, strict=True)
    tasks = [(args.seed + i, int(b), int(c), args.why) for i, (b, c) in enumerate(starts)]
    t0 = time.perf_counter()
    with Pool(args.workers, initializer=_init, initargs=(args.agent, config)) as workers:
        out = list(workers.imap(_play_on, tasks))
    goal = 2 * pool.tile
    k, n = sum(r["max_tile"] >= goal for r in out), len(out)
    lo, hi = wilson(k, n)
    half = sum(r["max_tile"] >= goal or r["second"] >= pool.tile // 2 for r in out)
    print(f"{args.agent} {config}: {goal} from the pool's {pool.tile} boards in {k} of {n}: "
          f"{100 * k / n:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}); a {pool.tile // 2} beside the {pool.tile} "
          f"(or the {goal}) in {half}; mean final score {np.mean([r['score'] for r in out]):,.0f}; "
          f"{np.mean([r['cpu'] for r in out]):.2f} CPU s a game; {time.perf_counter() - t0:.0f} s wall, "
          f"{args.workers} workers")
    if args.why:
        print(why_lost(out, goal))


if __name__ == "__main__":
    main()
