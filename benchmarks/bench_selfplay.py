"""Self-play speed of the LazyZero network's searches: batched array search vs the per-game one (issue 19).

For each search, moves per second summed over the games in flight:

- ``chance MCTS``: ``lazyzero-chance`` at ``--simulations`` (default 100). Batched: the tree arrays
  and numba kernels of :mod:`ai2048.search.chance_mcts`, ``--games-in-flight`` games through
  ``ai2048.evaluate``; present: the per-game search (``chance_mcts_reference`` in ``tests/``, Python lists)
  one game at a time, as ``ai2048 eval`` played it before.
- ``LazyZero``: ``lazyzero`` at ``--rollouts`` x ``--depth`` (default 50 x 2). Batched: numba
  rollouts with per-game streams (:func:`lazy_search_boards`), games in flight; present: the torch
  search on an ``EngineBatch`` of one game (:func:`lazy_search`), one game at a time.

Each row plays the same games (``game_seeds(seed, n)``), each for at most ``--moves`` moves; the
ratio is batched / present measured in the same run. Torch and numba use ``--threads`` threads.

    python benchmarks/bench_selfplay.py [--weights RUN_DIR] [--games-in-flight 64] [--threads 1]

Without ``--weights`` the tiny preset's untrained network (seed 0) is used: the cost per move
does not depend on the weights, only game lengths do (capped here by ``--moves``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from ai2048.agents.chance_mcts import ChanceMCTSAgent
from ai2048.agents.lazyzero import LazyZeroAgent, load_lazyzero_network
from ai2048.envs.torch_env import make_batch_env
from ai2048.evaluate import evaluate
from ai2048.nets.resnet import FusedPolicyValue, PolicyValueResNet, ResNetConfig
from ai2048.rules import Action
from ai2048.search.lazyzero import choose_actions, lazy_search

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from _chance_mcts_reference import chance_mcts_reference  # noqa: E402  (the test oracle: tests/)


class PresentChance(ChanceMCTSAgent):
    """The chance MCTS as it was: the per-game Python search."""

    def _visits(self, boards: np.ndarray, states: np.ndarray) -> np.ndarray:
        return chance_mcts_reference(boards, self.evaluate, simulations=self.simulations, puct=self.puct)


class PresentLazyZero:
    """LazyZero as it was: the torch search on a one-game EngineBatch per move, a torch generator."""

    name = "lazyzero-present"

    def __init__(self, evaluate: Any, rollouts: int, depth: int, puct: float) -> None:
        self.evaluate, self.rollouts, self.depth, self.puct = evaluate, rollouts, depth, puct
        self.reset(0)

    def reset(self, seed: int | None = None) -> None:
        self.gen = torch.Generator().manual_seed(int(seed or 0) % 2**63)
        self.env_seed = int(torch.randint(0, 2**62, (1,), generator=self.gen))

    def act(self, board: int) -> Action:
        env = make_batch_env("auto", 1, "cpu", self.env_seed)
        self.env_seed += 1
        env.set_boards(np.array([board], dtype=np.uint64))
        visits, _ = lazy_search(env, self.evaluate, rollouts=self.rollouts, depth=self.depth, puct=self.puct,
                                generator=self.gen)
        return Action(int(choose_actions(visits, env.legal_actions(), 0.0, self.gen)[0]))


def _network(weights: str | None) -> tuple[FusedPolicyValue, str]:
    if weights:
        model, _ = load_lazyzero_network(weights)
        return FusedPolicyValue(model), weights
    from ai2048.train.lazyzero import PRESETS, LazyZeroConfig

    cfg = asdict(LazyZeroConfig(**{**PRESETS["tiny"], "device": "cpu"}))
    torch.manual_seed(0)
    model = PolicyValueResNet(ResNetConfig(**{k: cfg[k] for k in ResNetConfig.__dataclass_fields__})).eval()
    return FusedPolicyValue(model), "untrained tiny preset network (seed 0)"


def _rate(agent: Any, games: int, moves: int, seed: int) -> tuple[float, int, float]:
    t0 = time.perf_counter()
    res = evaluate(agent, games=games, seed=seed, progress=False, max_moves=moves)
    wall = time.perf_counter() - t0
    total = sum(r["moves"] for r in res.records)
    return total / wall, total, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", help="a LazyZero run directory (default: the untrained tiny network)")
    ap.add_argument("--games-in-flight", type=int, default=64)
    ap.add_argument("--simulations", type=int, default=100)
    ap.add_argument("--rollouts", type=int, default=50)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--moves", type=int, default=60, help="moves per game (batched rows)")
    ap.add_argument("--present-games", type=int, default=2, help="games played by the per-game rows")
    ap.add_argument("--present-moves", type=int, default=20, help="moves per game of the per-game rows")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    os.environ.setdefault("NUMBA_NUM_THREADS", str(args.threads))
    net, which = _network(args.weights)
    g = args.games_in_flight
    kw = {"device": "cpu", "seed": 0, "threads": args.threads}
    rows = []
    # warm-up: numba compiles (or loads its cache) before any timing
    evaluate(ChanceMCTSAgent(net, simulations=2, puct=1.25, games_in_flight=2, **kw), games=2, progress=False,
             max_moves=2)
    evaluate(
        LazyZeroAgent(net, rollouts=2, depth=2, puct=1.0, temperature=0.0, games_in_flight=2, **kw),
        games=2,
        progress=False,
        max_moves=2,
    )
    for label, batched, present in (
        (f"chance MCTS, {args.simulations} simulations",
         ChanceMCTSAgent(net, simulations=args.simulations, puct=1.25, games_in_flight=g, **kw),
         PresentChance(net, simulations=args.simulations, puct=1.25, **kw)),
        (f"LazyZero, {args.rollouts} rollouts x depth {args.depth}",
         LazyZeroAgent(net, rollouts=args.rollouts, depth=args.depth, puct=1.0, temperature=0.0,
                       games_in_flight=g, **kw),
         PresentLazyZero(net, args.rollouts, args.depth, 1.0)),
    ):
        new, new_moves, new_wall = _rate(batched, g, args.moves, args.seed)
        old, old_moves, old_wall = _rate(present, args.present_games, args.present_moves, args.seed)
        rows.append(
            {
                "search": label,
                "batched_moves_per_s": new,
                "batched_moves": new_moves,
                "batched_s": new_wall,
                "present_moves_per_s": old,
                "present_moves": old_moves,
                "present_s": old_wall,
                "ratio": new / old,
            }
        )
        print(
            f"{label:<36} batched ({g} games in flight): {new:8.1f} moves/s ({new_moves} moves, "
            f"{new_wall:.1f} s)"
            f" | present (one game at a time): {old:6.1f} moves/s ({old_moves} moves, {old_wall:.1f} s)"
            f" | {new / old:6.1f}x",
            flush=True,
        )
    print(f"network: {which}; torch threads {args.threads}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {"network": which, "threads": args.threads, "games_in_flight": g, "rows": rows}, f, indent=1
            )


if __name__ == "__main__":
    main()
