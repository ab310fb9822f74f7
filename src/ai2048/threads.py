"""Whether a numba-parallel call runs on numba's threads or on the calling thread alone.

A parallel kernel ends with a barrier: the call returns when the last thread has done its share.
On a shared machine a thread may wait for a core for a whole scheduler slice (milliseconds), and
numba's OpenMP layer spins while it waits, taking a core from the threads it waits for; a call
that takes a fraction of a millisecond alone can then take many milliseconds, far slower than the
same work on the calling thread. Whether that happens depends on what else runs, so the default
is measured, not guessed: :class:`ThreadPicker` times the calls it is asked about, runs the faster
of the two kernels, and times the other now and then (rarely enough that those calls cost a few
per cent of the time at worst) so it comes back when the machine changes. The results are the
same either way: every kernel pair computes the same thing. An explicit choice
(``parallel=True`` / ``False``, ``numba.set_num_threads``, ``NUMBA_NUM_THREADS``) is honoured.
See docs/engine.md, "On a shared machine".
"""

from __future__ import annotations

import math
import os

import numba

from ai2048.checks import Option

PARALLEL = Option("True / False: always numba's threads / always the calling thread alone", "flag",
                  none="automatic: the faster, timed")
"""The ``parallel`` setting of every call that may thread (:class:`ThreadPicker`)."""

SERIAL, THREADS = 0, 1
"""Modes of a call: the serial kernel on the calling thread, or the parallel one on numba's threads."""
PROBE_EVERY = 100.0
"""The other mode is timed again after the chosen one has taken this many times the other's last
timed call: the probes cost about ``PROBE_CALLS / PROBE_EVERY`` of the time at worst."""
PROBE_CALLS = 3
"""Calls per probe: the first is not counted (it wakes numba's sleeping threads, or finds the
caches cold), the fastest of the others is the other mode's time."""
MARGIN = 0.9
"""Switch when the other mode's call takes under this fraction of the chosen one's (no flapping
between two modes that are as fast)."""
ALPHA = 1 / 32
"""Weight of the newest call in the chosen mode's running mean: a mean over some 32 calls, so one
call that waited for a core does not end a good choice, while calls that all wait (many times
slower) end it within a call or two."""


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity, where the OS reports it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def may_thread(work: int, min_work: int, numba_threads: int, cores: int) -> bool:
    """Whether threads are worth trying at all: ``work`` items (at least ``min_work``), more than
    one numba thread and more than one usable core."""
    return work >= min_work and numba_threads >= 2 and cores >= 2


def next_mode(mode: int, serial_ns: float, threads_ns: float, spent_ns: float,
              probe_every: float = PROBE_EVERY) -> int:
    """The mode of the next timed call, when the chosen ``mode`` has taken ``spent_ns`` since the
    other was last timed: an untimed mode first (threads, then serial), then the other one once
    ``spent_ns`` reaches ``probe_every`` times its last call, else ``mode``."""
    if math.isnan(threads_ns):
        return THREADS
    if math.isnan(serial_ns):
        return SERIAL
    other = 1 - mode
    other_ns = threads_ns if other == THREADS else serial_ns
    return other if spent_ns >= probe_every * other_ns else mode


def settle(mode: int, serial_ns: float, threads_ns: float, margin: float = MARGIN) -> int:
    """The chosen mode after new timings: the other one when its call takes under ``margin`` of
    this one's (an untimed mode is never chosen)."""
    this_ns, other_ns = (serial_ns, threads_ns) if mode == SERIAL else (threads_ns, serial_ns)
    if math.isnan(this_ns) or math.isnan(other_ns):
        return mode
    return 1 - mode if other_ns < margin * this_ns else mode


class ThreadPicker:
    """Runs one kind of parallel call on numba's threads or on the calling thread, by timing.

    ``parallel``: ``True`` / ``False`` always threads / always serial; ``None`` picks by timing
    when :func:`may_thread` allows (a call of ``work`` items, at least ``min_work``). Use::

        t = picker.threads(n)             # 0: the serial kernel; else numba threads (chunks)
        start = time.perf_counter_ns()
        ... the kernel over n items ...
        picker.took(t, time.perf_counter_ns() - start, n)

    Time one kind of call only (one kernel pair; timings are kept per item); other calls may use
    :meth:`chosen` untimed. The first call of each mode is not counted (it may compile or load
    the kernel from numba's cache).
    """

    def __init__(self, parallel: bool | None = None, min_work: int = 2) -> None:
        self.parallel = PARALLEL.check("parallel", parallel)
        self.min_work = min_work
        self.cores = usable_cores()
        self.mode = THREADS
        self.ns = [math.nan, math.nan]  # ns per item of each mode's last timed call (the chosen
        self.spent = 0.0  # one's running mean); ns per item in the chosen mode since the other was timed
        self._seen = [False, False]  # a first call (not counted) was seen
        self._probe: list[float] = []  # this probe's timed calls so far
        self._timed: int | None = None  # the mode :meth:`threads` last handed out by timing
        self.calls = [0, 0]  # timed calls of each mode so far (serial, threads)

    def _auto_threads(self, work: int) -> int:
        """Numba's threads when the automatic choice may use them for ``work`` items, else 0."""
        t = int(numba.get_num_threads())
        return t if may_thread(work, self.min_work, t, self.cores) else 0

    def chosen(self, work: int) -> int:
        """Numba threads of an untimed call of ``work`` items in the chosen mode (0: serial)."""
        if self.parallel is not None:
            return int(numba.get_num_threads()) if self.parallel else 0
        return self._auto_threads(work) if self.mode == THREADS else 0

    def threads(self, work: int) -> int:
        """Numba threads for the next timed call, of ``work`` items (0: serial), probes included."""
        self._timed = None
        if self.parallel is not None:
            return self.chosen(work)
        t = self._auto_threads(work)
        if not t:  # too little work, one numba thread or one core: serial, nothing to compare
            return 0
        self._timed = next_mode(self.mode, self.ns[SERIAL], self.ns[THREADS], self.spent, PROBE_EVERY)
        return t if self._timed == THREADS else 0

    def took(self, threads: int, ns: float, work: int) -> None:
        """Count the call :meth:`threads` last answered (``threads``): ``work`` items in ``ns``."""
        ran, self._timed = self._timed, None
        if ran is None or ran != (THREADS if threads else SERIAL):
            return
        ns = ns / max(work, 1)
        self.calls[ran] += 1
        if not self._seen[ran]:
            self._seen[ran] = True
            return
        if ran == self.mode:
            old = self.ns[ran]
            self.ns[ran] = ns if math.isnan(old) else old + ALPHA * (ns - old)
            self.spent += ns
        else:
            self._probe.append(ns)
            if len(self._probe) < PROBE_CALLS:
                return
            self.ns[ran] = min(self._probe[1:])
            self._probe.clear()
            self.spent = 0.0
        mode = settle(self.mode, self.ns[SERIAL], self.ns[THREADS], MARGIN)
        if mode != self.mode:
            self.mode = mode
            self.spent = 0.0
