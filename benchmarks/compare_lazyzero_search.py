"""LazyZero vs chance-node MCTS with the same network at equal network-evaluation budgets.

Each agent plays the same games (``ai2048.evaluate.game_seeds``) in lockstep, all live games
searched in one batch per move. LazyZero with R rollouts of depth D costs R*D evaluations per
move; the chance-node MCTS gets S = R*D simulations (one evaluation each). The random-rollout
LazyZero baseline (no network) runs with the same R and D.

    python benchmarks/compare_lazyzero_search.py RUN_DIR [--games 32] [--rollouts 50] [--depth 2] [--out
    result.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai2048 import Game
from ai2048.agents import make_agent
from ai2048.evaluate import game_seeds
from ai2048.stats import wilson


def play_lockstep(agent: Any, seeds: list[int], max_moves: int) -> dict[str, Any]:
    games = [Game(seed=s) for s in seeds]
    t0 = time.perf_counter()
    moves = 0
    while True:
        live = [g for g in games if not g.is_over and g.moves < max_moves]
        if not live:
            break
        actions = agent.act_batch(np.array([g.board for g in live], dtype=np.uint64))
        for g, a in zip(live, actions, strict=True):
            g.step(int(a))
        moves += len(live)
    secs = time.perf_counter() - t0
    tiles = np.array([g.max_tile for g in games])
    out: dict[str, Any] = {
        "games": len(games), "moves_mean": float(np.mean([g.moves for g in games])),
        "score_mean": float(np.mean([g.score for g in games])),
        "score_sem": float(np.std([g.score for g in games], ddof=1) / np.sqrt(len(games))),
        "max_tiles": tiles.tolist(), "seconds": secs, "ms_per_move": 1e3 * secs / max(moves, 1),
    }
    for t in (256, 512, 1024, 2048):
        k = int((tiles >= t).sum())
        lo, hi = wilson(k, len(games))
        out[f"reach_{t}"] = [k / len(games), lo, hi]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir")
    p.add_argument("--games", type=int, default=32)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rollouts", type=int, default=50)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--max-moves", type=int, default=100000)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--agents", default="lazyzero,chance,random", help="comma list of lazyzero, chance, random"
    )
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    import numba

    torch.set_num_threads(args.threads)
    numba.set_num_threads(max(1, min(args.threads, getattr(numba.config, "NUMBA_NUM_THREADS", 1))))
    budget = args.rollouts * args.depth
    seeds = game_seeds(args.seed, args.games)
    builders = {
        "lazyzero": lambda: (f"lazyzero R={args.rollouts} D={args.depth}", make_agent(
            "lazyzero", weights=args.run_dir, rollouts=args.rollouts, depth=args.depth, seed=args.seed)),
        "chance": lambda: (f"lazyzero-chance S={budget}", make_agent(
            "lazyzero-chance", weights=args.run_dir, simulations=budget, seed=args.seed)),
        "random": lambda: (f"lazyzero-random R={args.rollouts} D={args.depth}", make_agent(
            "lazyzero-random", rollouts=args.rollouts, depth=args.depth, seed=args.seed)),
    }
    unknown = set(args.agents.split(",")) - set(builders)
    if unknown:
        p.error(f"unknown agents {sorted(unknown)}; use lazyzero, chance, random")
    agents = dict(builders[k]() for k in args.agents.split(","))
    results = {}
    print(f"{args.games} games, seed {args.seed}, {budget} network evaluations per move")
    print("| agent | games | moves | score (± s.e.) | 512 | 1024 | 2048 | ms/move |")
    print("|---|---|---|---|---|---|---|---|")
    for name, agent in agents.items():
        r = play_lockstep(agent, seeds, args.max_moves)
        results[name] = r

        def pct(key: str, r: dict[str, Any] = r) -> str:
            v, lo, hi = r[key]
            return f"{100 * v:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]"

        print(
            f"| {name} | {r['games']} | {r['moves_mean']:.0f} | {r['score_mean']:.0f} ± {r['score_sem']:.0f} "
            "| "
            f"{pct('reach_512')} | {pct('reach_1024')} | {pct('reach_2048')} | {r['ms_per_move']:.1f} |",
            flush=True,
        )
    if args.out:
        args.out.write_text(
            json.dumps({"args": vars(args) | {"out": str(args.out)}, "results": results}, indent=2)
        )


if __name__ == "__main__":
    main()
