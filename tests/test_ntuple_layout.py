"""Temporal-coherence records (w, E, A interleaved) against separate arrays and a slow reference;
their checkpoints hold the same separate arrays; the bit-parallel stage test against max_exponent."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai2048 import engine
from ai2048.engine.board import max_exponent
from ai2048.engine.rng import seed_state
from ai2048.ntuple import kernels as generic
from ai2048.ntuple.codegen import DEFAULT_RULES
from ai2048.ntuple.network import Network, load_file, read_into

PATTERNS = "0123,4567"  # the pattern set test_ntuple_network trains on (kernels shared)


def _cells(b: int) -> list[int]:
    return [(b >> (4 * i)) & 15 for i in range(16)]


def _images(c: list[int]) -> list[list[int]]:
    """The 8 images in the kernels' order: b, mirror, flip, flip(mirror), then their transposes."""

    def mirror(x: list[int]) -> list[int]:
        return [x[4 * r + 3 - k] for r in range(4) for k in range(4)]

    def flip(x: list[int]) -> list[int]:
        return [x[4 * (3 - r) + k] for r in range(4) for k in range(4)]

    def transpose(x: list[int]) -> list[int]:
        return [x[4 * k + r] for r in range(4) for k in range(4)]

    m = mirror(c)
    base = [c, m, flip(c), flip(m)]
    return base + [transpose(x) for x in base]


def _ref_indices(net: Network, b: int) -> list[int]:
    """Every feature's weight index in the kernels' update order (tuple by tuple, image by image)."""
    imgs = _images(_cells(b))
    out, off = [], 0
    for t in net.tuples:
        out += [off + sum(img[cell] << (4 * j) for j, cell in enumerate(t)) for img in imgs]
        off += 16 ** len(t)
    return out


class _Ref:
    """Slow TC learner on separate float32 arrays (Jaśkowski 2018): each feature weight moves by
    ``step * |E|/A`` (``step`` while ``A = 0``), then ``E += err``, ``A += |err|``."""

    def __init__(self, net: Network) -> None:
        self.net = net
        self.w = net.w.copy()
        self.e = np.zeros_like(self.w)
        self.a = np.zeros_like(self.w)

    def value(self, b: int) -> float:
        return float(sum(float(self.w[i]) for i in _ref_indices(self.net, b)))

    def learn(self, b: int, err: float, alpha_f: float) -> None:
        step = np.float32(alpha_f * err)
        for i in _ref_indices(self.net, b):
            rate = abs(self.e[i]) / self.a[i] if self.a[i] > 0 else np.float32(1.0)
            self.w[i] += step * rate
            # float64 sums stored as float32, as the kernels do
            self.e[i] = np.float32(float(self.e[i]) + err)
            self.a[i] = np.float32(float(self.a[i]) + abs(err))

    def game(self, state: np.ndarray, online: bool, alpha_f: float) -> int:
        """One after-state TD(0) game with 1-ply greedy moves (kernels.play_game_train)."""
        b = int(engine.new_board(state, 0.9))
        path: list[tuple[int, int]] = []
        prev, score = None, 0
        while True:
            after = [(int(x), int(r)) for x, r in (engine.move(np.uint64(b), act) for act in range(4))]
            legal = [(r + self.value(x), -act, x, r) for act, (x, r) in enumerate(after) if x != b]
            if not legal:
                break
            v, _, nb, r = max(legal)  # ties go to the lower action, as in the kernels
            if online:
                if prev is not None:
                    self.learn(prev, v - self.value(prev), alpha_f)
                prev = nb
            else:
                path.append((nb, r))
            b = int(engine.spawn(np.uint64(nb), state, 0.9))
            score += r
        if online and prev is not None:
            self.learn(prev, 0.0 - self.value(prev), alpha_f)
        target = 0.0
        for x, r in reversed(path):
            self.learn(x, target - self.value(x), alpha_f)
            target = r + self.value(x)
        return score


def _kernel_game(
    net: Network, w: np.ndarray, e: np.ndarray, a: np.ndarray, seed: int, online: bool, alpha_f: float
) -> int:
    state = seed_state(seed)
    b0 = engine.new_board(state, 0.9)
    score, _, _ = net.k.play_game_train(
        np.uint64(b0), w, e, a, np.ones(1, np.int64), net.runs, net.nruns, net.tbase, net.stage_arr, 0,
        online,
        True, False, alpha_f, 0.0, 0.9, state, np.zeros(1 << 14, np.uint64), np.zeros(1 << 14, np.int64),
        np.zeros(4, np.uint64), np.zeros(1, np.int64), 15, False, 0, DEFAULT_RULES,
    )
    return int(score)


@settings(deadline=None, max_examples=8)
@given(seed=st.integers(0, 2**32 - 4), online=st.booleans(), games=st.integers(1, 2))
def test_tc_records__same_games_and_updates_as_separate_arrays_and_slow_reference(
    seed: int, online: bool, games: int
) -> None:
    rec_net = Network(PATTERNS)
    e_rec, a_rec = rec_net.tc_arrays()
    assert rec_net.w.base is e_rec.base and rec_net.w.strides == (12,)
    sep_net = Network(PATTERNS)
    e_sep, a_sep = np.zeros_like(sep_net.w), np.zeros_like(sep_net.w)
    ref = _Ref(Network(PATTERNS))
    alpha_f = 1.0 / rec_net.features
    for g in range(games):  # later games learn on the tables the earlier ones left
        s_rec = _kernel_game(rec_net, rec_net.w, e_rec, a_rec, seed + g, online, alpha_f)
        s_sep = _kernel_game(sep_net, sep_net.w, e_sep, a_sep, seed + g, online, alpha_f)
        assert s_rec == s_sep == ref.game(seed_state(seed + g), online, alpha_f)
    # the records layout gives exactly the separate arrays' updates, and both the reference's
    assert np.array_equal(rec_net.w, sep_net.w)
    assert np.array_equal(e_rec, e_sep) and np.array_equal(a_rec, a_sep)
    assert np.allclose(rec_net.w, ref.w, rtol=1e-5, atol=1e-6)
    assert np.allclose(e_rec, ref.e, rtol=1e-5, atol=1e-4) and np.allclose(a_rec, ref.a, rtol=1e-5, atol=1e-4)
    assert np.count_nonzero(a_rec) > 0


def test_tc_records__keep_the_weights_and_start_at_zero() -> None:
    net = Network("0123", init_value=8.0)
    before = net.w.copy()
    e, a = net.tc_arrays()
    assert np.array_equal(net.w, before) and not e.any() and not a.any()
    assert net.tc_arrays()[0].base is e.base  # the same records again
    assert net.contiguous_weights().flags.c_contiguous and np.array_equal(net.contiguous_weights(), before)


def test_tc_records__checkpoint_holds_separate_arrays_streamed_without_a_table_copy(tmp_path: Path) -> None:
    net = Network("012345,456789")  # 2 x 16^6 weights: a 128 MiB table, 384 MiB of records
    e, a = net.tc_arrays()
    rng = np.random.default_rng(4)
    picks = rng.integers(0, net.w.size, 5000)
    net.w[picks] = rng.standard_normal(picks.size).astype(np.float32)
    e[picks] = rng.standard_normal(picks.size).astype(np.float32)
    a[picks] = np.abs(e[picks]) + 1
    path = tmp_path / "w.npz"
    tracemalloc.start()
    try:
        net.save(path, train_e=e, train_a=a)
        save_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert save_peak < 16 * 2**20  # 1 MiB pieces, never a copy of a column
    back, arrays = load_file(path, extra=("train_e", "train_a"))
    assert back.w.flags.c_contiguous and np.array_equal(back.w, net.w)
    assert np.array_equal(arrays["train_e"], e) and np.array_equal(arrays["train_a"], a)
    del arrays
    e2, a2 = back.tc_arrays()
    tracemalloc.start()
    try:
        read_into(path, "train_e", e2)
        read_into(path, "train_a", a2)
        read_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read_peak < 16 * 2**20
    assert np.array_equal(back.w, net.w) and np.array_equal(e2, e) and np.array_equal(a2, a)


def test_read_into__wrong_array_or_broken_file_names_the_problem(tmp_path: Path) -> None:
    net = Network("0123")
    e, _ = net.tc_arrays()
    path = tmp_path / "w.npz"
    net.save(path, train_e=np.zeros(10, np.float32), train_f=np.zeros(e.size, np.float64))
    with pytest.raises(ValueError, match=r"holds train_e as float32 \[10\], expected float32 \[65536\]"):
        read_into(path, "train_e", e)
    with pytest.raises(ValueError, match=r"float64 \[65536\], expected float32"):
        read_into(path, "train_f", e)
    with pytest.raises(ValueError, match="lacks train_a"):
        read_into(path, "train_a", e)
    net.save(path, train_e=np.ones(e.size, np.float32))
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        read_into(tmp_path / "cut.npz", "train_e", e)


@settings(deadline=None, max_examples=300)
@given(b=st.integers(0, 2**64 - 1), t=st.integers(-2, 18))
def test_reaches__equals_max_exponent_at_least(b: int, t: int) -> None:
    assert bool(generic.reaches(np.uint64(b), t)) == (int(max_exponent(np.uint64(b))) >= t)


@settings(deadline=None, max_examples=200)
@given(b=st.integers(0, 2**64 - 1), stages=st.lists(st.integers(1, 15), max_size=3, unique=True).map(sorted))
def test_stage_of__counts_the_stage_tiles_reached(b: int, stages: list[int]) -> None:
    want = sum(int(max_exponent(np.uint64(b))) >= s for s in stages)
    assert generic.stage_of(np.uint64(b), np.array(stages, np.int64)) == want
