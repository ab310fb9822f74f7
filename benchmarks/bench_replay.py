"""Replay throughput: moves/s of ``replay_actions`` (numba kernel) and of a full checked
``GameRecord.replay()``, against stepping ``ai2048.Game`` in Python in the same run (the baseline).

Plots replay every game of an eval result to find when each milestone tile appeared, so this is
the figure that says how long `ai2048 plot result.json` spends replaying. Run with
``NUMBA_NUM_THREADS=1``:

    python benchmarks/bench_replay.py [--games 200]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ai2048
from ai2048.engine import random_play, seed_state
from ai2048.records import GameRecord, actions_to_str, record_game, replay_actions


def random_games(n: int) -> list[tuple[int, str]]:
    """(seed, action string) of ``n`` random-agent games."""
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        policy = lambda b: rng.choice(ai2048.Game(board=b).legal_actions())  # noqa: E731
        r = record_game(policy, seed=i)
        out.append((i, actions_to_str(r.actions)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200)
    args = ap.parse_args()
    random_play(np.uint64(0), seed_state(0), 0.9)  # compile/load caches outside the timings
    games = random_games(args.games)
    replay_actions(games[0][0], games[0][1])
    moves = sum(len(a) for _, a in games)

    t = time.perf_counter()
    for seed, acts in games:
        g = ai2048.Game(seed=seed)
        for ch in acts:
            g.step("urdl".index(ch))
    base = moves / (time.perf_counter() - t)

    t = time.perf_counter()
    for seed, acts in games:
        replay_actions(seed, acts)
    fast = moves / (time.perf_counter() - t)

    records = [GameRecord.from_actions(seed, acts) for seed, acts in games]
    records[0].replay()
    t = time.perf_counter()
    for r in records:
        r.replay()
    checked = moves / (time.perf_counter() - t)

    print(f"{args.games} random games, {moves} moves")
    print(f"baseline  Game.step loop in Python : {base / 1e3:10.1f} k moves/s  (1.00x)")
    print(f"replay_actions (numba kernel)       : {fast / 1e3:10.1f} k moves/s  ({fast / base:.1f}x)")
    print(f"GameRecord.replay (checks spawns)   : {checked / 1e3:10.1f} k moves/s  ({checked / base:.1f}x)")


if __name__ == "__main__":
    main()
