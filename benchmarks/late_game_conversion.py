"""The 16384 -> 32768 conversion of an agent, measured from a pool of late-game boards.

    python benchmarks/late_game_conversion.py endgame --set depth=2
    python benchmarks/late_game_conversion.py endgame --set depth=3 --set tables=442-128,442-256,442-512
    python benchmarks/late_game_conversion.py ntuple --set weights=runs/late --set depth=2 \
        --set downgrade=highest

A whole-game evaluation spends most of its time before the 16384 and counts only the games that
reach it; this measurement starts every game where the conversion is decided. The pool is the first
board holding a 16384 in each of ``--pool-games`` games of the shipped network's 2-ply search (seeds
``--pool-seed`` ...; about 83% of games give a board), made once with ``ai2048 pool``'s code and kept
in ``--pool`` (reused when it exists). Pool board ``i`` is played on with seed ``--seed + i`` to the
end; the output is the share that reaches 32768 with its 95% Wilson interval, the mean final score
and the CPU seconds a game. Two settings measured on one pool and one ``--seed`` meet the same boards
and the same spawn streams, so their difference is less noisy than two whole-game evaluations.
"""

from __future__ import annotations

import argparse
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.agents import make_agent
from ai2048.cli._common import parse_sets
from ai2048.evaluate.pool import make_pool, read_pool, save_pool
from ai2048.game import Game
from ai2048.stats import wilson

_AGENT: Any = None


def _init(name: str, config: dict[str, Any]) -> None:
    global _AGENT
    _AGENT = make_agent(name, **config)


def _play_on(task: tuple[int, int, int]) -> dict[str, float]:
    seed, board, score = task
    g = Game(seed=seed, board=board)
    g.score = score
    t0 = time.process_time()
    while not g.is_over:
        g.step(_AGENT.act(g.board))
    return {"max_tile": g.max_tile, "score": g.score, "cpu": time.process_time() - t0}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("agent")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--pool", type=Path, default=Path("late-game-pool.json"))
    p.add_argument("--pool-games", type=int, default=330)
    p.add_argument("--pool-seed", type=int, default=700_000)
    p.add_argument("--seed", type=int, default=900_000)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    config = parse_sets(args.set)
    if not args.pool.is_file():
        _, data = make_pool("ntuple", {"depth": 2}, tile=16384, games=args.pool_games, seed=args.pool_seed,
                            workers=args.workers)
        save_pool(args.pool, data)
    pool = read_pool(args.pool)
    starts = zip(pool.boards, pool.scores, strict=True)
    tasks = [(args.seed + i, int(b), int(c)) for i, (b, c) in enumerate(starts)]
    t0 = time.perf_counter()
    with Pool(args.workers, initializer=_init, initargs=(args.agent, config)) as workers:
        out = list(workers.imap(_play_on, tasks))
    k, n = sum(r["max_tile"] >= 32768 for r in out), len(out)
    lo, hi = wilson(k, n)
    print(f"{args.agent} {config}: 32768 from the pool's 16384 boards in {k} of {n}: "
          f"{100 * k / n:.1f}% ({100 * lo:.1f}-{100 * hi:.1f}); mean final score "
          f"{np.mean([r['score'] for r in out]):,.0f}; {np.mean([r['cpu'] for r in out]):.2f} CPU s a game; "
          f"{time.perf_counter() - t0:.0f} s wall, {args.workers} workers")


if __name__ == "__main__":
    main()
