"""Hogwild self-play training (Niu et al. 2011): one thread per worker, shared weights, no locks.

Each worker is one call of the kernels' ``train_worker``, which releases the GIL; the threads
update the same weight table without locks, as TDL2048+'s threads do. Python threads instead of
a numba ``prange`` keep the compiled code to one small entry point (no parallel-loop machinery to
compile) and let one worker run with no thread at all, bit-for-bit reproducibly.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import numpy as np

from ai2048.ntuple.codegen import DEFAULT_RULES


def train_chunk(
    k: ModuleType, counts: np.ndarray, w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, ready: np.ndarray,
    runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray, stages: np.ndarray, kind: int, online: bool,
    tc: bool, quirk: bool, alpha_f: float, lam: float, p_two: float, states: np.ndarray, buf_b: np.ndarray,
    buf_r: np.ndarray, pools: np.ndarray,
    pool_n: np.ndarray, restart_tile: int, restart_prob: float, out_score: np.ndarray, out_tile: np.ndarray,
    out_moves: np.ndarray, out_restart: np.ndarray,
    chain_min: int = 0, chain_at: float = 0.5, out_chain: np.ndarray | None = None, dg: int = 0,
    rules: tuple = DEFAULT_RULES,
) -> None:
    """Worker ``i`` plays ``counts[i]`` games with kernels ``k`` (``Network.k``), using ``states[i]``,
    ``buf_b[i]``, ``buf_r[i]``, ``pools[i]`` and ``pool_n[i]``; game ``j`` of worker ``i`` writes
    its results at ``sum(counts[:i]) + j`` of the ``out_*`` arrays. ``chain_min`` > 0 adds chained
    midpoint restarts (``train_worker``), whose moves go to ``out_chain`` (int64, like ``out_moves``);
    ``dg`` is how boards are read (``kernels.view``); ``rules`` the rule variant
    (``codegen.KernelOptions.rules``)."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    if out_chain is None:
        out_chain = np.zeros(out_moves.size, dtype=np.int64)

    def worker(i: int) -> None:
        lo, hi = int(starts[i]), int(starts[i] + counts[i])
        k.train_worker(
            int(counts[i]), w, e_acc, a_acc, ready, runs, nruns, tbase, stages, kind, online, tc, quirk,
            alpha_f, lam, p_two,
            states[i : i + 1], buf_b[i], buf_r[i], pools[i], pool_n[i : i + 1], restart_tile, restart_prob,
            out_score[lo:hi], out_tile[lo:hi], out_moves[lo:hi], out_restart[lo:hi],
            int(chain_min), float(chain_at), out_chain[lo:hi], int(dg), rules,
        )

    if counts.size == 1:
        worker(0)
        return
    with ThreadPoolExecutor(max_workers=int(counts.size)) as pool:
        for f in [pool.submit(worker, i) for i in range(int(counts.size))]:
            f.result()
