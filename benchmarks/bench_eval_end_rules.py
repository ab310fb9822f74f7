"""Evaluation speed with the seeds' end rules: whole games in numba with ``goal_tile`` (seeds 000 and
003) and seed 004's ``end_on_full_board``, beside the standard end and the Python loop, in one run.

Every figure is moves per second of thread CPU time in one thread (on a shared machine: the speed of
the core the work got). The kernels are timed in turns (standard end, each rule, and, with
``--reference-games``, the game loop of another revision) for ``--rounds`` rounds over the same
games, and the median of each is printed, so a load that changes during the run touches all alike.
``--reference-games FILE`` is ``src/ai2048/search/games.py`` of another revision (e.g. ``git show
REV:src/ai2048/search/games.py > /tmp/games_ref.py``): its standard-end loop with the same chooser
gives the before/after ratio of a change to the game loop.

    python benchmarks/bench_eval_end_rules.py --run RUN [--games 300] [--rounds 5] [--reference-games F]
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

from ai2048 import load_agent, make_agent
from ai2048.evaluate import game_seeds, play_game
from ai2048.evaluate.kernel import kernel_of
from ai2048.rules import P_TWO
from ai2048.search.games import RUNNING, end_rule_args

RULES: list[tuple[str, int | None, bool]] = [
    ("standard end", None, False),
    ("goal 2048", 2048, False),
    ("goal 4096", 4096, False),
    ("full board (seed 004)", None, True),
    ("goal 2048 + full board", 2048, True),
]


def kernel_rate(kernel: Any, seeds: list[int], goal: int | None, full: bool) -> tuple[float, int]:
    """(moves per CPU second of this thread, moves) of the games ``seeds`` played to their end by
    ``kernel.play``; a play template of an older revision is given only the rule arguments it takes."""
    n = len(seeds)
    boards = np.zeros(n, np.uint64)
    states = np.array(seeds, dtype=np.uint64)
    scores, moves, status, nacts = (np.zeros(n, np.int64) for _ in range(4))
    acts = np.empty((n, 8192), np.uint8)
    stop = np.zeros(1, np.int64)
    ctx = kernel.context(None)
    rules = end_rule_args(goal, full)
    known = len(inspect.signature(kernel.play.py_func).parameters) - 11  # rule arguments it takes
    if any(rules[known:]):
        raise ValueError("the reference game loop does not know these rules")
    extra: tuple[Any, ...] = rules[:known]
    if known > len(rules):  # the supers of each game and exact rules (version 1)
        extra = (*rules, np.zeros(n, np.int64), True)
    t = time.thread_time()
    while (status == RUNNING).any():
        kernel.play(ctx, boards, states, scores, moves, status, acts, nacts, 0, P_TWO, stop, *extra)
    dt = time.thread_time() - t
    return int(moves.sum()) / max(dt, 1e-9), int(moves.sum())


def loop_rate(agent: Any, seeds: list[int], goal: int | None, full: bool) -> tuple[float, int]:
    """(moves per CPU second, moves) of the Python loop (``play_game``) over ``seeds`` with the rules."""
    play_game(agent, 1, max_moves=5)
    t = time.thread_time()
    moves = sum(play_game(agent, s, goal_tile=goal, end_on_full_board=full)["moves"] for s in seeds)
    return moves / max(time.thread_time() - t, 1e-9), moves


def reference_kernel(path: str, agent: Any) -> Any:
    """The agent's game kernel built by the ``games.py`` at ``path`` (another revision's game loop)."""
    spec = importlib.util.spec_from_file_location("ai2048_games_reference", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # (its dataclass looks itself up there)
    spec.loader.exec_module(mod)
    if hasattr(agent, "net"):
        from ai2048.agents.ntuple import KINDS

        n = agent.net
        if "rules" not in inspect.signature(mod.ntuple_kernel).parameters:
            sys.exit(f"{path} predates the kernels' rules argument: its game loop cannot play this "
                     "revision's n-tuple kernels (compare a revision from after it)")
        kind = KINDS.index(n.kind)
        return mod.ntuple_kernel(n.k, kind, agent.p_two, n.data(), agent.downgrade, agent.rules)
    return mod.greedy_kernel(agent.order)


def bench(label: str, agent: Any, games: int, rounds: int, seed: int, reference: str | None,
          loop_games: int) -> None:
    kernel = kernel_of(agent)
    seeds = game_seeds(seed, games)
    timed: dict[str, tuple[Any, int | None, bool]] = {name: (kernel, g, f) for name, g, f in RULES}
    if reference:
        timed["standard end, reference loop"] = (reference_kernel(reference, agent), None, False)
    for k, g, f in timed.values():
        kernel_rate(k, seeds[:2], g, f)  # compile or load from the cache
    rates: dict[str, list[float]] = {name: [] for name in timed}
    moves: dict[str, int] = {}
    for _ in range(rounds):
        for name, (k, g, f) in timed.items():
            r, m = kernel_rate(k, seeds, g, f)
            rates[name].append(r)
            moves[name] = m
    print(f"{label}: {games} games x {rounds} rounds, median moves/s per core (min-max)")
    base = statistics.median(rates["standard end"])
    for name, rs in rates.items():
        med = statistics.median(rs)
        print(f"  {name:30s} {med / 1e6:7.3f} M/s  ({min(rs) / 1e6:.3f}-{max(rs) / 1e6:.3f}; "
              f"{moves[name] / games:,.0f} moves/game)  {med / base:5.3f}x standard")
    for name, g, f in RULES[1:]:
        lr, lm = loop_rate(agent, seeds[:loop_games], g, f)
        fast = statistics.median(rates[name])
        label = f"Python loop, {name}"
        print(f"  {label:30s} {lr / 1e6:7.3f} M/s  ({lm:,} moves)  fast path {fast / lr:6.1f}x")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", default=None, help="run directory of `ai2048 train ntuple` (default: the "
                   "shipped network)")
    p.add_argument("--games", type=int, default=300, help="games per timing")
    p.add_argument("--rounds", type=int, default=5, help="timings of each kernel, taken in turns")
    p.add_argument("--loop-games", type=int, default=20, help="games of each Python-loop timing")
    p.add_argument("--reference-games", default=None, metavar="FILE",
                   help="games.py of another revision: its standard-end loop timed beside ours")
    p.add_argument("--greedy", action="store_true", help="time the greedy agent too (a cheap chooser: the "
                   "game loop's own cost shows most)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    print(f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    agent = load_agent(a.run) if a.run else make_agent("ntuple")
    bench(f"n-tuple 1-ply ({agent.net.patterns})", agent, a.games, a.rounds, a.seed, a.reference_games,
          a.loop_games)
    if a.greedy:
        bench("greedy", make_agent("greedy"), a.games * 10, a.rounds, a.seed, a.reference_games,
              a.loop_games * 10)
    print(f"load {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
