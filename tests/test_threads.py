"""When a numba-parallel call runs on numba's threads: the decision rules as pure functions, the
picker fed timings as a shared machine would give them (threads collapsing, then recovering), and
the same games whichever kernel each call ran."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ai2048.threads as threads_mod
from ai2048.envs.batch import PARALLEL_MIN_GAMES, GameBatch
from ai2048.threads import (
    PROBE_CALLS,
    PROBE_EVERY,
    SERIAL,
    THREADS,
    ThreadPicker,
    may_thread,
    next_mode,
    settle,
)

NAN = math.nan


@pytest.mark.parametrize(("work", "min_work", "numba_threads", "cores", "want"), [
    (4096, 1024, 2, 2, True),
    (1023, 1024, 2, 2, False),  # too little work
    (4096, 1024, 1, 2, False),  # NUMBA_NUM_THREADS=1 or numba.set_num_threads(1)
    (4096, 1024, 8, 1, False),  # pinned to one core (taskset)
    (2, 2, 16, 16, True),
])
def test_may_thread(work, min_work, numba_threads, cores, want):
    assert may_thread(work, min_work, numba_threads, cores) is want


@pytest.mark.parametrize(("mode", "serial_ns", "threads_ns", "spent_ns", "want"), [
    (THREADS, NAN, NAN, 0.0, THREADS),  # threads are timed first
    (THREADS, NAN, 5.0, 0.0, SERIAL),  # then serial
    (SERIAL, NAN, 5.0, 1e9, SERIAL),
    (THREADS, 10.0, 5.0, 10.0 * PROBE_EVERY - 1, THREADS),  # not yet time to time serial again
    (THREADS, 10.0, 5.0, 10.0 * PROBE_EVERY, SERIAL),  # now
    (SERIAL, 10.0, 300.0, 300.0 * PROBE_EVERY - 1, SERIAL),  # collapsed threads: timed rarely
    (SERIAL, 10.0, 300.0, 300.0 * PROBE_EVERY, THREADS),
])
def test_next_mode(mode, serial_ns, threads_ns, spent_ns, want):
    assert next_mode(mode, serial_ns, threads_ns, spent_ns) == want


@pytest.mark.parametrize(("mode", "serial_ns", "threads_ns", "want"), [
    (THREADS, 10.0, 8.0, THREADS),
    (THREADS, 10.0, 12.0, SERIAL),
    (THREADS, 10.0, 10.5, THREADS),  # within the margin: no flapping
    (SERIAL, 10.0, 9.5, SERIAL),
    (SERIAL, 10.0, 8.5, THREADS),
    (SERIAL, 10.0, NAN, SERIAL),  # an untimed mode is never chosen
    (THREADS, NAN, 100.0, THREADS),
])
def test_settle(mode, serial_ns, threads_ns, want):
    assert settle(mode, serial_ns, threads_ns) == want


@pytest.fixture
def four_threads(monkeypatch):
    """Numba reports 4 threads whatever this machine has (the picker asks at every call)."""
    monkeypatch.setattr(threads_mod.numba, "get_num_threads", lambda: 4)


def drive(picker: ThreadPicker, cost, calls: int, work: int = 4096) -> list[float]:
    """Feed ``calls`` calls whose ns per item ``cost(mode)`` gives; the ns spent in each mode."""
    spent = [0.0, 0.0]
    for _ in range(calls):
        t = picker.threads(work)
        assert t in (0, 4)
        ns = cost(THREADS if t else SERIAL) * work
        spent[THREADS if t else SERIAL] += ns
        picker.took(t, ns, work)
    return spent


@pytest.mark.parametrize(("threads_cost", "best"), [(0.6, THREADS), (1.5, SERIAL), (30.0, SERIAL)])
def test_picker__settles_on_the_faster_and_probes_the_other_rarely(four_threads, threads_cost, best):
    picker = ThreadPicker(None, 1024)
    picker.cores = 4
    spent = drive(picker, lambda m: threads_cost if m == THREADS else 1.0, 20_000)
    assert picker.mode == best
    slow = spent[1 - best]
    assert slow / sum(spent) < 1.5 * PROBE_CALLS / PROBE_EVERY + 0.01  # probes and the start, a few per cent


def test_picker__leaves_collapsed_threads_at_once_and_comes_back_when_they_recover(four_threads):
    picker = ThreadPicker(None, 1024)
    picker.cores = 4
    cost = {SERIAL: 1.0, THREADS: 0.6}
    drive(picker, cost.get, 200)
    assert picker.mode == THREADS
    cost[THREADS] = 20.0  # a busy machine: every threaded call waits for a core
    drive(picker, cost.get, 2)
    assert picker.mode == SERIAL
    cost[THREADS] = 0.6  # the machine is quiet again, but the threads sleep after serial calls:
    last = [SERIAL]  # the first threaded call after a serial one wakes them (slow, not counted)

    def waking(mode: int) -> float:
        slow = mode == THREADS and last[0] == SERIAL
        last[0] = mode
        return 50.0 if slow else cost[mode]

    calls = 0
    while picker.mode == SERIAL:
        drive(picker, waking, 1)
        calls += 1
    assert calls <= 20.0 * PROBE_EVERY + PROBE_CALLS  # within one probe period


def test_picker__explicit_choices_and_too_little_work_are_not_timed(four_threads):
    always, never = ThreadPicker(True), ThreadPicker(False)
    drive(always, lambda m: 100.0 if m == THREADS else 1.0, 50)
    drive(never, lambda m: 0.1 if m == THREADS else 1.0, 50)
    assert always.threads(4096) == 4 and always.chosen(4096) == 4
    assert never.threads(4096) == 0 and never.chosen(4096) == 0
    small = ThreadPicker(None, 1024)
    small.cores = 4
    assert drive(small, lambda m: 1.0, 20, work=1000)[THREADS] == 0.0
    assert math.isnan(small.ns[SERIAL]) and math.isnan(small.ns[THREADS])
    with pytest.raises(TypeError, match=r"parallel=.yes. must be True or False, or None \(automatic"):
        ThreadPicker("yes")  # type: ignore[arg-type]


def test_picker__one_numba_thread_is_serial(monkeypatch):
    monkeypatch.setattr(threads_mod.numba, "get_num_threads", lambda: 1)
    picker = ThreadPicker(None, 2)
    picker.cores = 4
    assert picker.threads(4096) == 0 and picker.chosen(4096) == 0


def test_default_batch__same_games_whichever_kernel_each_step_ran(monkeypatch):
    """The automatic choice switching kernels at random steps plays the games the forced serial
    and forced parallel batches play (same seed, same actions)."""
    flips = np.random.default_rng(7)
    monkeypatch.setattr(threads_mod, "next_mode", lambda *_: THREADS if flips.random() < 0.5 else SERIAL)
    n = PARALLEL_MIN_GAMES
    batches = [GameBatch(n, seed=11, parallel=p, autoreset=True) for p in (False, True, None)]
    auto = batches[2]
    auto._picker.cores = 2
    monkeypatch.setattr(threads_mod.numba, "get_num_threads", lambda: 2)
    for b in batches:
        b.reset()
    rng = np.random.default_rng(3)
    for _ in range(16):
        pick = rng.random((n, 4))
        outs = []
        for b in batches:
            acts = np.argmax(np.where(b.masks, pick, -1.0), axis=1)
            outs.append(b.step(acts))
        for out in outs[1:]:
            for field in ("rewards", "gains", "terminated", "truncated", "masks", "obs", "boards", "scores"):
                assert np.array_equal(getattr(out, field), getattr(outs[0], field)), field
        assert all(np.array_equal(b.boards, batches[0].boards) for b in batches)
        assert all(np.array_equal(b.states, batches[0].states) for b in batches)
    assert min(auto._picker.calls) >= 4  # both kernels ran, several times, in the automatic batch


def test_rollouts_and_engine_batch__same_results_serial_threads_and_default():
    """The random-rollout baseline and the torch env's CPU backend take ``parallel`` too, and give
    the same values and games whichever kernels run."""
    torch = pytest.importorskip("torch")
    from ai2048.bench.kernels import collect_boards
    from ai2048.engine.rng import seed_state
    from ai2048.envs.torch_env import EngineBatch, from_boards
    from ai2048.search.lazyzero import RandomRolloutEvaluator

    modes = (False, True, None)
    states = from_boards(collect_boards(np.int64(200), seed_state(4), np.float64(0.9)))
    evaluators = [RandomRolloutEvaluator(seed=8, parallel=p) for p in modes]
    for _ in range(3):
        values = [ev(states)[1] for ev in evaluators]
        assert all(torch.equal(v, values[0]) for v in values)
    envs = [EngineBatch(PARALLEL_MIN_GAMES, seed=5, parallel=p) for p in modes]
    assert [e.games.parallel for e in envs] == list(modes)
    gen = torch.Generator().manual_seed(0)
    for _ in range(6):
        acts = torch.randint(0, 4, (PARALLEL_MIN_GAMES,), generator=gen)
        gains = [e.step(acts)[0] for e in envs]
        assert all(torch.equal(g, gains[0]) for g in gains)
        assert all(np.array_equal(e.boards(), envs[0].boards()) for e in envs)
