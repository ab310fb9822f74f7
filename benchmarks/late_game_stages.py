"""Where the games past a 16384 are lost: the longest run ``16384, 8192, 4096, ...`` each game held at
once between its first 16384 and its first 32768 (or its end), counted for the games that reached
the 32768 and those that did not.

    ai2048 eval endgame --set depth=2 --games 600 --seed 1510000 --workers 2 --goal-tile 32768 --out e.json
    python benchmarks/late_game_stages.py e.json

A game that held ``16384 8192 4096`` but never a 2048 beside them was lost building the 2048 with
twelve free cells (the network's phase); one that held the chain down to 512 reached the ``442``
formation. Every game is replayed from its record (``records.replay_actions``, the rules version the
result states), every board looked at. The speed line is boards read per second.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from ai2048.evaluate.result import EvalResult
from ai2048.records import replay_actions

LOW, HIGH = 14, 15  # the game from the first 16384 to the first 32768


def chain_held(exponents: np.ndarray) -> int:
    """The longest run ``LOW, LOW - 1, ...`` of exponents held at once on any of the boards
    (``exponents``: [n, 16])."""
    held = np.zeros(exponents.shape[0], dtype=np.int64)
    alive = np.ones(exponents.shape[0], dtype=bool)
    for e in range(LOW, 0, -1):
        alive &= (exponents == e).any(axis=1)
        held += alive
    return int(held.max(initial=0))


def game_stage(seed: int, actions: str, rules: int) -> tuple[int, bool] | None:
    """(the chain held past the first 16384, whether the game reached 32768), or None before a 16384."""
    boards = replay_actions(seed, actions, rules=rules).boards
    exps = np.stack([((boards >> np.uint64(4 * q)) & np.uint64(15)).astype(np.int64) for q in range(16)], 1)
    top = exps.max(axis=1)
    if top.max() < LOW:
        return None
    first = int(np.argmax(top >= LOW))
    won = bool((top >= HIGH).any())
    last = int(np.argmax(top >= HIGH)) if won else top.size
    return chain_held(exps[first:last]), won


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result", type=Path, help="an evaluation result (ai2048 eval ... --out FILE)")
    args = p.parse_args()
    try:
        result = EvalResult.load(args.result)
    except (OSError, ValueError) as e:
        p.error(str(e))
    games = result.records
    if not games or any("actions" not in g for g in games):
        p.error(f"{args.result}: its games carry no actions to replay (an evaluation without records)")
    rules = result.rules_version
    lost: Counter[int] = Counter()
    won: Counter[int] = Counter()
    boards = 0
    t0 = time.perf_counter()
    for k, g in enumerate(games):
        stage = game_stage(int(g["seed"]), g["actions"], rules)
        boards += int(g["moves"]) + 1
        if stage is not None:
            (won if stage[1] else lost)[stage[0]] += 1
        if (k + 1) % 100 == 0:
            print(f"{k + 1} of {len(games)} games replayed", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t0
    print(f"{args.result}: {len(games)} games, {sum(lost.values()) + sum(won.values())} with a 16384, "
          f"{sum(won.values())} of them reached 32768")
    print("chain held at once (16384 down to)   lost   reached 32768")
    for n in sorted(set(lost) | set(won)):
        print(f"  {2 ** (LOW - n + 1):>6} ({n} tiles){'':<17} {lost[n]:>5}   {won[n]:>5}")
    print(f"speed: {boards / seconds:,.0f} boards replayed and read a second ({seconds:.1f} s)")


if __name__ == "__main__":
    main()
