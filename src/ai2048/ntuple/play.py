"""Fast 1-ply evaluation of a network: many greedy games in parallel inside numba."""

from __future__ import annotations

import time
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


def evaluate_greedy(
    net: Network, games: int, seed: int = 0, workers: int = 1, p_two: float = P_TWO, downgrade: bool = False,
    kernels: ModuleType | None = None,
) -> dict[str, Any]:
    """Play ``games`` 1-ply greedy games; returns seed 004's table, scores and speed.

    ``kernels``: a rule variant of ``net``'s kernels (``codegen.specialized`` with options) to play
    under, e.g. seed 004's full-board end; default ``net.k``."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    states = game_states(seed, games, salt=1)
    score = np.zeros(games, np.int64)
    tile = np.zeros(games, np.int64)
    moves = np.zeros(games, np.int64)
    board = np.zeros(games, np.uint64)
    numba.set_num_threads(max(1, min(workers, getattr(numba.config, "NUMBA_NUM_THREADS", 1))))
    t0 = time.perf_counter()
    # (TC records: a copy, so one kernel variant)
    w = net.w if net.w.flags.c_contiguous else net.contiguous_weights()
    (kernels or net.k).play_games(
        states, w, net.runs, net.nruns, net.tbase, net.stage_arr, KINDS.index(net.kind), p_two,
        downgrade, score, tile, moves, board,
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
