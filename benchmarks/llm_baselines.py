"""The scoring table of docs/llm.md: ai2048's agents playing the text env (``ai2048/TextGame2048-v0``)
through its door, every move written as text the ways models write one
(:data:`ai2048.llm.baselines.PHRASINGS`).

Game ``i`` is the text env reset with ``game_seeds(seed, games)[i]`` (the evaluation seeds); the reach
rates carry Wilson 95% intervals (:func:`ai2048.stats.wilson`). Prints a Markdown table:

    python benchmarks/llm_baselines.py [--games 20] [--seed 0] [--agents random,greedy,expectimax,ntuple]
"""

from __future__ import annotations

import argparse
import math
import statistics

import gymnasium as gym

from ai2048.agents import make_agent
from ai2048.envs import TEXT_ENV_ID
from ai2048.evaluate import game_seeds
from ai2048.llm.baselines import play_text_env
from ai2048.models import default_name
from ai2048.stats import wilson

AGENTS = {
    "random": ("random", {}),
    "greedy": ("greedy", {}),
    "expectimax": ("expectimax", {"depth": 2}),
    "ntuple": ("ntuple", {"model": None}),
}
"""Table rows: name -> (registered agent, settings); ntuple plays the default shipped network, 1-ply."""
TILES = (512, 2048, 4096, 8192, 16384)


def row(name: str, games: int, seed: int) -> str:
    agent_name, config = AGENTS[name]
    if agent_name == "ntuple":
        config = {"model": default_name()}
    agent = make_agent(agent_name, **config)
    env = gym.make(TEXT_ENV_ID).unwrapped
    results = [play_text_env(agent, env, s) for s in game_seeds(seed, games)]
    scores = [r["score"] for r in results]
    se = statistics.stdev(scores) / math.sqrt(games) if games > 1 else 0.0
    cells = []
    for tile in TILES:
        k = sum(r["max_tile"] >= tile for r in results)
        lo, hi = wilson(k, games)
        cells.append(f"{100 * k / games:.0f} ({100 * lo:.0f}–{100 * hi:.0f})")
    label = agent_name + ("" if not config else " " + ", ".join(f"{k}={v}" for k, v in config.items()))
    if agent_name in ("expectimax", "ntuple"):  # the search's ply: depth=D searches D moves
        label += f" ({config.get('depth', 1)}-ply)"
    invalid = sum(r["invalid"] for r in results)
    moves = statistics.mean(r["moves"] for r in results)
    return (f"| {label} | {games} | {statistics.mean(scores):,.0f} ± {se:,.0f} | "
            f"{statistics.median(scores):,.0f} | {moves:,.0f} | " + " | ".join(cells)
            + f" | {max(r['max_tile'] for r in results)} | {invalid} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--agents", default=",".join(AGENTS), help=f"comma-separated, of {', '.join(AGENTS)}")
    args = ap.parse_args()
    names = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = sorted(set(names) - set(AGENTS))
    if unknown or args.games < 1 or args.seed < 0:
        ap.error(f"--agents takes {', '.join(AGENTS)} (got {unknown}); --games >= 1; --seed >= 0")
    print(f"text env {TEXT_ENV_ID}, games reset with game_seeds({args.seed}, {args.games}); "
          "reach % (Wilson 95%)")
    reach = " | ".join(f"reach {t} %" for t in TILES)
    print(f"| agent | games | score (mean ± s.e.) | median | moves | {reach} | best tile | invalid answers |")
    print("|---|---:|---:|---:|---:|" + "---:|" * len(TILES) + "---:|---:|")
    for name in names:
        print(row(name, args.games, args.seed), flush=True)


if __name__ == "__main__":
    main()
