"""What playing past 32768 costs (rules version 1): the game layer and the replay kernel beside the code
of another revision in the same run, on games that never pass 32768, and the exact move's own cost.

Rules version 1 keeps a tile of 32768 or more as a 15 on the board and its exact value beside it
(:mod:`ai2048.engine.supertiles`); ``Game.step`` and the replay and game-loop kernels take the plain
bitboard move unless two tiles of 32768 or more are on the board. This prints, per core (thread CPU
time, timed in turns over ``--rounds`` rounds, the median):

- ``Game.step``: moves/s of the same random games stepped by this revision's ``Game`` (rules 1 and
  rules 0) and by ``--reference-game`` (``game.py`` of another revision, e.g.
  ``git show 0ffb561:src/ai2048/game.py > /tmp/game_ref.py``);
- ``replay_boards``: moves/s of the replay kernel, this revision's (exact and capped) beside
  ``--reference-replay`` (``git show 0ffb561:src/ai2048/engine/replay.py > /tmp/replay_ref.py``);
- ``exact_move`` on boards with two 32768s (the exact path) beside ``move`` on the same boards.

The whole-game kernels' loop is timed by ``benchmarks/bench_eval_end_rules.py --reference-games``.

    python benchmarks/bench_supertiles.py --reference-game /tmp/game_ref.py \
        --reference-replay /tmp/replay_ref.py
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from ai2048.board_io import exact_from_tiles
from ai2048.engine import seed_state
from ai2048.engine.moves import move
from ai2048.engine.replay import replay_boards
from ai2048.engine.supertiles import exact_move
from ai2048.game import Game
from ai2048.records import record_game
from ai2048.rules import CAPPED_RULES, P_TWO


def load_module(path: str, name: str) -> ModuleType:
    """The module in ``path`` (another revision's file), imported under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def random_games(n: int) -> list[tuple[int, np.ndarray]]:
    """(seed, actions) of ``n`` games of a seeded random player."""
    rng = np.random.default_rng(0)
    out = []
    for seed in range(n):
        r = record_game(lambda b: rng.choice(Game(board=b, rules=CAPPED_RULES).legal_actions()), seed=seed)
        out.append((seed, np.array(r.actions, np.uint8)))
    return out


def timed(fn: Callable[[], int]) -> float:
    """Moves per second of thread CPU time of ``fn`` (which returns the moves it made)."""
    t = time.thread_time()
    n = fn()
    return n / max(time.thread_time() - t, 1e-9)


def step_games(make: Callable[[int], Any], games: list[tuple[int, np.ndarray]]) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for seed, acts in games:
            g = make(seed)
            for a in acts.tolist():
                g.step(a)
            n += len(acts)
        return n
    return run


def replay_games(kernel: Callable[..., Any], games: list[tuple[int, np.ndarray]],
                 *extra: Any) -> Callable[[], int]:
    def run() -> int:
        n = 0
        for seed, acts in games:
            kernel(seed_state(seed), np.float64(P_TWO), acts, False, *extra)
            n += len(acts)
        return n
    return run


def exact_path(boards: list[tuple[int, int]],
               rounds: int = 200) -> tuple[Callable[[], int], Callable[[], int]]:
    """(exact_move, move) over ``boards`` (positions with two 32768s) in all four directions."""
    bs = [(np.uint64(b), np.int64(s)) for b, s in boards]

    def exact() -> int:
        for _ in range(rounds):
            for b, s in bs:
                for a in range(4):
                    exact_move(b, s, np.int64(a))
        return rounds * len(bs) * 4

    def plain() -> int:
        for _ in range(rounds):
            for b, _s in bs:
                for a in range(4):
                    move(b, np.int64(a))
        return rounds * len(bs) * 4
    return exact, plain


def report(title: str, rates: dict[str, list[float]], base: str) -> None:
    b = statistics.median(rates[base])
    print(title)
    for name, rs in rates.items():
        med = statistics.median(rs)
        print(f"  {name:34s} {med / 1e6:8.3f} M moves/s  ({min(rs) / 1e6:.3f}-{max(rs) / 1e6:.3f})  "
              f"{med / b:5.3f}x {base}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=60, help="random games (about 100 moves each)")
    p.add_argument("--rounds", type=int, default=7, help="timings of each variant, taken in turns")
    p.add_argument("--reference-game", default=None, metavar="FILE", help="game.py of another revision")
    p.add_argument("--reference-replay", default=None, metavar="FILE",
                   help="engine/replay.py of another revision")
    a = p.parse_args()
    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    games = random_games(a.games)
    print(f"{a.games} random games, {sum(len(x) for _, x in games):,} moves, none past 32768")

    steps: dict[str, Callable[[], int]] = {
        "Game.step, rules 1": step_games(lambda s: Game(seed=s), games),
        "Game.step, rules 0": step_games(lambda s: Game(seed=s, rules=CAPPED_RULES), games),
    }
    if a.reference_game:
        old = load_module(a.reference_game, "ai2048_game_reference")
        steps["Game.step, reference revision"] = step_games(lambda s: old.Game(seed=s), games)
    replays: dict[str, Callable[[], int]] = {
        "replay_boards, exact": replay_games(replay_boards, games, True),
        "replay_boards, capped": replay_games(replay_boards, games, False),
    }
    if a.reference_replay:
        old_replay = load_module(a.reference_replay, "ai2048_replay_reference").replay_boards
        replays["replay_boards, reference revision"] = replay_games(old_replay, games)
    big = [exact_from_tiles(t) for t in (
        [32768, 32768, 2, 4] + [0] * 12,
        [32768, 2, 4, 8, 32768] + [0] * 11,
        [65536, 32768, 0, 32768, 2, 4, 8, 2] + [0] * 8,
        [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 32768],
    )]
    exact, plain = exact_path(big)
    paths = {"exact_move, two 32768s": exact, "move (bitboard), same boards": plain}
    for group in (steps, replays, paths):
        for fn in group.values():
            fn()  # compile or load, and warm
    rates: dict[str, list[float]] = {k: [] for g in (steps, replays, paths) for k in g}
    for k in range(a.rounds):
        for group in (steps, replays, paths):
            names = list(group)
            for name in names[k % len(names):] + names[: k % len(names)]:  # each goes first in turn
                for _ in range(2):  # the first call after another kernel warms the caches: keep the second
                    r = timed(group[name])
                rates[name].append(r)
    base_step = "Game.step, reference revision" if a.reference_game else "Game.step, rules 0"
    report("Game.step (Python), per core:", {k: rates[k] for k in steps}, base_step)
    base_replay = "replay_boards, reference revision" if a.reference_replay else "replay_boards, capped"
    report("replay kernel, per core:", {k: rates[k] for k in replays}, base_replay)
    report("one move on boards with two 32768s, per core:", {k: rates[k] for k in paths},
           "move (bitboard), same boards")
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
