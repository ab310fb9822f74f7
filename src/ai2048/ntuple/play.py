"""Fast 1-ply evaluation of a network: many greedy games in parallel inside numba."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numba
import numpy as np

from ai2048.ntuple.network import KINDS, Network
from ai2048.rules import P_TWO
from ai2048.stats import tile_table_percent


def game_states(seed: int, games: int, salt: int = 0) -> np.ndarray:
    """[games] uint64 RNG states, one per game, derived from ``seed`` (same seed, same games)."""
    return np.random.SeedSequence([int(seed), salt]).generate_state(games, np.uint64)


STOP_GAMES = 64
"""Games a thread plays per kernel call when :func:`evaluate_greedy` is given ``stop``: the request
is looked at between calls (about a second apart with a strong network)."""


def evaluate_greedy(
    net: Network, games: int, seed: int = 0, workers: int = 1, p_two: float = P_TWO, downgrade: int = 0,
    kernels: ModuleType | None = None, stop: Callable[[], bool] | None = None,
) -> dict[str, Any] | None:
    """Play ``games`` 1-ply greedy games; returns seed 004's table, scores and speed.

    ``kernels``: a rule variant of ``net``'s kernels (``codegen.specialized`` with options) to play
    under, e.g. seed 004's full-board end; default ``net.k``. ``stop``: asked between kernel calls of
    :data:`STOP_GAMES` games a thread; when it says True the evaluation ends and returns None (the
    trainer's final evaluation stops on Ctrl-C within a second instead of after every game). The games
    are the same in one call or many."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    states = game_states(seed, games, salt=1)
    score = np.zeros(games, np.int64)
    tile = np.zeros(games, np.int64)
    moves = np.zeros(games, np.int64)
    board = np.zeros(games, np.uint64)
    threads = max(1, min(workers, getattr(numba.config, "NUMBA_NUM_THREADS", 1)))
    numba.set_num_threads(threads)
    t0 = time.perf_counter()
    # (TC records: a copy, so one kernel variant)
    w = net.w if net.w.flags.c_contiguous else net.contiguous_weights()
    step = games if stop is None else STOP_GAMES * threads
    for a in range(0, games, step):
        if stop is not None and stop():
            return None
        part = slice(a, min(a + step, games))  # contiguous views: the kernel's one signature
        (kernels or net.k).play_games(
            states[part], w, net.runs, net.nruns, net.tbase, net.stage_arr, KINDS.index(net.kind), p_two,
            np.int64(downgrade), score[part], tile[part], moves[part], board[part],
        )
    dt = time.perf_counter() - t0
    return {
        "games": games,
        "seed": seed,
        "depth": 1,
        "score_mean": float(score.mean()),
        "score_sem": float(score.std(ddof=1) / np.sqrt(games)) if games > 1 else 0.0,
        "score_median": float(np.median(score)),
        "score_max": int(score.max()),
        "moves_mean": float(moves.mean()),
        "moves_per_s": float(moves.sum() / dt) if dt > 0 else 0.0,
        "seconds": dt,
        "tiles": tile_table_percent(tile),
        "max_exponents": tile.tolist(),
        "scores": score.tolist(),
    }
