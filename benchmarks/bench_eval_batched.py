"""Evaluation speed of an agent with games in flight (the chance-node MCTS on a tiny LazyZero
network) in three layouts, measured in the same run on the same games:

- one process, ``games_in_flight`` games batched (``--workers 1``): the baseline;
- ``--workers W``, one game at a time in each worker (``games_in_flight=1``; what ``--workers 2``
  did before each worker batched its games);
- ``--workers W``, each worker batching its games (the default layout now).

Figures are moves per second of wall time (every game's moves over the evaluation's wall time);
the ratios compare the layouts with each other. Every layout must play the same games (records
equal but for ``seconds``); the script says so or stops. The network is untrained and built in
memory (seeded), so no run directory is needed.

    python benchmarks/bench_eval_batched.py [--games 8] [--simulations 100] [--workers 2] [--in-flight 32]
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import torch

from ai2048.agents.chance_mcts import ChanceMCTSAgent
from ai2048.evaluate import EvalResult, evaluate
from ai2048.nets.resnet import FusedPolicyValue, PolicyValueResNet, ResNetConfig


def tiny_agent(simulations: int, in_flight: int) -> ChanceMCTSAgent:
    """seed 001's tiny network (8 channels, 2 blocks), untrained, seeded; chance MCTS on it."""
    torch.manual_seed(0)
    net = PolicyValueResNet(ResNetConfig(channels=8, blocks=2, head_channels=8, head_blocks=1)).eval()
    return ChanceMCTSAgent(FusedPolicyValue(net), simulations=simulations, puct=1.25, device="cpu", seed=0,
                           games_in_flight=in_flight)


def rate(res: EvalResult) -> float:
    """Moves per second of wall time."""
    return sum(r["moves"] for r in res.records) / res.wall_seconds


def games(res: EvalResult) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in res.records]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=8)
    p.add_argument("--simulations", type=int, default=100)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--in-flight", type=int, default=32, help="games_in_flight of the batched layouts")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-moves", type=int, default=None)
    a = p.parse_args()
    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; chance MCTS, {a.simulations} "
          f"simulations, {a.games} games")
    kw = {"games": a.games, "seed": a.seed, "progress": False, "max_moves": a.max_moves}
    evaluate(tiny_agent(a.simulations, 1), games=1, seed=a.seed + 1, progress=False, max_moves=3)  # compile
    base = evaluate(tiny_agent(a.simulations, a.in_flight), workers=1, **kw)
    old = evaluate(tiny_agent(a.simulations, 1), workers=a.workers, **kw)
    new = evaluate(tiny_agent(a.simulations, a.in_flight), workers=a.workers, **kw)
    if not games(base) == games(old) == games(new):
        raise SystemExit("the layouts played different games: the figures do not compare")
    rows = [(f"1 process, {a.in_flight} in flight (baseline)", base),
            (f"{a.workers} workers, one game at a time each", old),
            (f"{a.workers} workers, each batching its games", new)]
    for label, res in rows:
        print(f"  {label:45s} {rate(res):8.1f} moves/s  {res.wall_seconds:6.1f} s  "
              f"{rate(res) / rate(base):5.2f}x baseline")
    print(f"  batched workers vs one game at a time: {rate(new) / rate(old):.2f}x; same games in all three")


if __name__ == "__main__":
    main()
