"""``ai2048 pool``: a late-game restart pool, the first board holding a tile in each of an agent's games.

    ai2048 pool ntuple --set depth=2 --tile 16384 --games 1000 --seed 800000 --workers 2 --out pool.json
    ai2048 pool --from result.json --tile 32768 --out pool32k.json    # from an evaluation's games
    ai2048 train ntuple --init shipped --stages 14 --restart-pool pool.json --restart-prob 1 ...
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ai2048.checks import tile, whole
from ai2048.cli._agents import choose_agent
from ai2048.cli._common import add_set_argument, check_out_file, parse_sets


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "pool",
        help="make a late-game restart pool from an agent's games",
        description="Play GAMES seeded games (seeds SEED, SEED+1, ...) with AGENT and keep the first board "
        "of each whose largest tile reaches --tile, with the score so far: the restart pool of "
        "`train ntuple --restart-pool` and of benchmarks/late_game_conversion.py.",
    )
    p.add_argument("agent", metavar="AGENT", nargs="?", default=None,
                   help="an agent name, e.g. ntuple (or --from an evaluation's games)")
    p.add_argument("--from", dest="source", type=Path, default=None, metavar="RESULT",
                   help="play no game: replay the games of an evaluation (`eval --out` RESULT.json, or "
                   "RESULT.games.jsonl while it runs) to the first board of each holding --tile")
    add_set_argument(p, "depth=2")
    p.add_argument("--tile", type=int, default=16384,
                   help="the tile whose first board is kept (default 16384)")
    p.add_argument("--games", type=int, default=1000, help="games to play (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game (default 0)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--out", type=Path, required=True, help="the pool's JSON file (written atomically)")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """Every check before the first game: the numbers, the output file, the agent and its settings."""
    whole("--games", args.games, lo=1)
    whole("--workers", args.workers, lo=1, hi=256)
    whole("--seed", args.seed, lo=0)
    tile("--tile", args.tile, why="e.g. 16384")
    check_out_file(args.out)
    if (args.agent is None) == (args.source is None):
        raise ValueError("name an AGENT to play games, or --from an evaluation's games, not both"
                         if args.agent else "name an AGENT to play games, or --from RESULT.json to replay "
                         "an evaluation's")
    if args.source is not None:
        if not args.source.is_file():
            raise FileNotFoundError(f"--from {args.source}: no such file (an `ai2048 eval --out` result or "
                                    "its .games.jsonl)")
        return
    choose_agent(args.agent, parse_sets(args.sets))


def run(args: argparse.Namespace) -> int:
    check(args)
    from ai2048.evaluate.pool import make_pool, pool_from_games, save_pool

    if args.source is not None:
        pool, data = pool_from_games(args.source, args.tile)
    else:
        pool, data = make_pool(args.agent, parse_sets(args.sets), tile=args.tile, games=args.games,
                               seed=args.seed, workers=args.workers)
    save_pool(args.out, data)
    print(f"{pool.boards.size} of {data['games']} games reached {args.tile}: pool written to {args.out}")
    return 0
