"""Per-game random streams for batched search, and the torch thread setting of search agents.

A batched agent searches many games at once. If they drew from one shared generator, a game's
moves would depend on which other games share its batch; with one SplitMix64 state per game
(the engine's :mod:`ai2048.engine.rng`) game ``i`` plays the same moves alone or among 100 others,
which is what lets ``evaluate`` play games in flight and still match one-at-a-time play.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ai2048 import checks

MAX_THREADS = 64


def initial_state(seed: int, row: int = 0) -> np.uint64:
    """The SplitMix64 state of stream ``row`` of ``seed``: the seed itself for row 0 (as ``seed_state``)."""
    if row == 0:
        return np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)
    return np.random.SeedSequence([int(seed) & 0xFFFFFFFFFFFFFFFF, int(row)]).generate_state(1, np.uint64)[0]


class GameStreams:
    """One ``uint64`` SplitMix64 state per game, advanced in place by the search kernels.

    ``rows(n)``: the states of an agent's own rows ``0..n-1`` (``act_batch`` without slots;
    row 0 is what ``reset(seed)`` + ``act`` uses). ``reset_slot(slot, seed)`` starts game slot
    ``slot`` as ``reset(seed)`` would, so a game played in a slot repeats the game played alone.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        seed = checks.seed("seed", seed)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self.seed = int(seed)
        self._rows = np.zeros(0, np.uint64)
        self._slots: dict[int, np.uint64] = {}

    def rows(self, n: int) -> np.ndarray:
        """The first ``n`` row states (a view: kernels advance them in place)."""
        if len(self._rows) < n:
            extra = [initial_state(self.seed, r) for r in range(len(self._rows), n)]
            self._rows = np.concatenate([self._rows, np.array(extra, np.uint64)])
        return self._rows[:n]

    def reset_slot(self, slot: int, seed: int) -> None:
        self._slots[int(slot)] = initial_state(seed)

    def gather(self, slots: np.ndarray) -> np.ndarray:
        """The states of ``slots`` as a new array; write them back with :meth:`scatter`."""
        try:
            return np.array([self._slots[int(s)] for s in slots], np.uint64)
        except KeyError as e:
            raise ValueError(f"game slot {e} was never started; call reset_slot(slot, seed) first") from e

    def scatter(self, slots: np.ndarray, states: np.ndarray) -> None:
        for s, v in zip(slots, states, strict=True):
            self._slots[int(s)] = np.uint64(v)


def check_threads(threads: int) -> int:
    """``threads`` as an int in 1..min(cores, 64), else a ValueError naming the limit."""
    cores = os.cpu_count() or 1
    limit = min(cores, MAX_THREADS)
    return checks.whole("threads", threads, 1, limit,
                        why=f"this machine has {cores} cores; at most {MAX_THREADS}")


_THREAD_CAP: int | None = None
"""The most torch threads :func:`torch_threads` gives in this process (None: no cap)."""


def cap_torch_threads(threads: int) -> None:
    """From now on run torch with at most ``threads`` intra-op threads in this process, whatever an
    agent's ``threads`` asks for (an evaluation's forked workers: see
    :func:`ai2048.evaluate.one_torch_thread`)."""
    global _THREAD_CAP
    _THREAD_CAP = check_threads(threads)


@contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block with ``threads`` torch intra-op threads (at most the process's cap, see
    :func:`cap_torch_threads`), then restore the previous setting."""
    import torch

    if _THREAD_CAP is not None:
        threads = min(threads, _THREAD_CAP)
    before = torch.get_num_threads()
    if before != threads:
        torch.set_num_threads(threads)
    try:
        yield
    finally:
        if before != threads:
            torch.set_num_threads(before)
