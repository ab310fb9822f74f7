"""N-tuple network: seed 004's symmetry lists, values and TD updates against slow references."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from ai2048 import engine
from ai2048.engine.intrinsics import HAS_PEXT, pext
from ai2048.engine.rng import seed_state
from ai2048.ntuple import kernels as generic
from ai2048.ntuple.codegen import DEFAULT_RULES, KernelOptions, feature_source
from ai2048.ntuple.network import Network, load_file
from ai2048.ntuple.patterns import PRESETS, isomorphic_patterns, parse_patterns, tuple_runs

SEED_VECTORS = Path(__file__).parent / "data" / "seed_vectors.json"
SMALL = "0123,4567,5410,26ae"  # straight, row, unsorted and column tuples: 4 * 65536 weights


def cells(b: int) -> list[int]:
    return [(b >> (4 * i)) & 15 for i in range(16)]


def ref_index_lists(tuples):
    """[(table offset, seed-004 index list)] for every feature."""
    out, off = [], 0
    for t in tuples:
        out += [(off, iso) for iso in isomorphic_patterns(t)]
        off += 16 ** len(t)
    return out


def chain_images(cs: list[int]) -> list[list[int]]:
    """The 8 images of a board (as cell lists) in the kernels' order: mirror, transpose, mirror, ..."""

    def mirror(c: list[int]) -> list[int]:
        return [c[4 * r + 3 - k] for r in range(4) for k in range(4)]

    def transpose(c: list[int]) -> list[int]:
        return [c[4 * k + r] for r in range(4) for k in range(4)]

    out = [cs]
    for i in range(1, 8):
        out.append(mirror(out[-1]) if i % 2 else transpose(out[-1]))
    return out


def ref_indices(net: Network, b: int, dg: int = 0, stage: int | None = None) -> list[int]:
    """Slow reference: the weight index of every feature of ``b``, in the kernels' summation order;
    ``dg`` 2 reads the features on ``b`` downgraded (:func:`_downgrade_top_reference`) in ``b``'s own
    stage (or in ``stage``)."""
    cs = cells(b)
    base = (sum(max(cs) >= s for s in net.stages) if stage is None else stage) * net.table
    if dg == 2:
        cs = _downgrade_top_reference(cs)
    offs = np.cumsum([0] + [16 ** len(t) for t in net.tuples])
    return [
        base + int(offs[k]) + sum(img[c] << (4 * j) for j, c in enumerate(t))
        for img in chain_images(cs)
        for k, t in enumerate(net.tuples)
    ]


def ref_value(net: Network, b: int, dg: int = 0) -> float:
    """Sum of the table lookups of every feature (float64, kernels' order); ``dg`` 3 (a residual late
    stage) adds, past the first stage, the first stage's value of ``b`` downgraded."""
    v = 0.0
    for i in ref_indices(net, b, dg):
        v += float(net.w[i])
    if dg == 3 and max(cells(b)) >= min(net.stages, default=16):
        low = int(engine.board.pack(np.array(_downgrade_top_reference(cells(b)))))
        v += sum(float(net.w[i]) for i in ref_indices(net, low, 0, stage=0))
    return v


def ref_add(net: Network, b: int, step: float, dg: int = 0) -> None:
    """Add ``step`` to every feature weight of ``b``, in float32 as the kernels do."""
    for i in ref_indices(net, b, dg):
        net.w[i] = net.w[i] + np.float32(step)


def random_boards(n: int, seed: int = 0) -> list[int]:
    rng = np.random.default_rng(seed)
    return [int(engine.board.pack(rng.integers(0, 16, 16) * (rng.random(16) < 0.7))) for _ in range(n)]


def test_isomorphic_patterns__equal_seed004_vectors() -> None:
    vectors = json.loads(SEED_VECTORS.read_text())["ntuple_isomorphic_patterns_seed004"]
    assert len(vectors) == 4
    for pattern, lists in vectors.items():
        assert isomorphic_patterns(json.loads(pattern)) == lists


def test_features__kernel_images_equal_seed004_index_lists() -> None:
    """The kernels read tuple k on the 8 images of the board; seed 004 reads 8 index lists of
    the board: both give the same multiset of (tuple, index) features."""
    net = Network(SMALL)
    offs = np.cumsum([0] + [16 ** len(t) for t in net.tuples])
    for b in random_boards(30, seed=7):
        cs = cells(b)
        seed = [
            int(offs[k]) + sum(cs[c] << (4 * j) for j, c in enumerate(iso))
            for k, t in enumerate(net.tuples)
            for iso in isomorphic_patterns(t)
        ]
        assert sorted(seed) == sorted(ref_indices(net, b))


def test_parse_patterns__presets_and_hex() -> None:
    assert parse_patterns("4x6") == (
        (0, 1, 2, 3, 4, 5),
        (4, 5, 6, 7, 8, 9),
        (0, 1, 2, 4, 5, 6),
        (4, 5, 6, 8, 9, 10),
    )
    assert parse_patterns("2x4+2x6")[:2] == ((0, 1, 2, 3), (4, 5, 6, 7))
    assert [len(t) for t in parse_patterns("8x6")] == [6] * 8
    assert [len(t) for t in parse_patterns("4x5")] == [5] * 4
    assert parse_patterns("0123,4567") == parse_patterns([[0, 1, 2, 3], [4, 5, 6, 7]])
    assert set(PRESETS) == {"4x6", "5x6", "8x6", "4x5", "2x4+2x6"}


@pytest.mark.parametrize("spec", ["nope", "0g12", "0012", "012345678", ""])
def test_parse_patterns__bad_spec_raises(spec: str) -> None:
    with pytest.raises(ValueError):
        parse_patterns(spec)


def test_tuple_runs__index_equals_nibble_packing() -> None:
    tuples = parse_patterns(SMALL + ",012456,45689a")
    runs, nruns, _, _ = tuple_runs(tuples)
    for b in random_boards(50):
        for k, t in enumerate(tuples):
            idx = 0
            for j in range(nruns[k]):
                idx |= ((b >> int(runs[k, j, 0])) & int(runs[k, j, 1])) << int(runs[k, j, 2])
            assert idx == sum(cells(b)[c] << (4 * j) for j, c in enumerate(t))


@pytest.mark.parametrize("use_pext", [False, True])
def test_feature_source__pext_or_runs_give_the_reference_indices(use_pext: bool) -> None:
    """The generated feature code reads the same indices with pext (BMI2) as with shift-and-mask runs."""
    if use_pext and not HAS_PEXT:
        pytest.skip("this CPU has no BMI2 pext")
    net = Network(SMALL + ",012456")
    source = feature_source(net.tuples, use_pext=use_pext)
    assert ("pext(" in source) == use_pext
    ns = {
        "np": np,
        "pext": pext,
        "_isos": generic._isos,
        "njit": lambda **kw: njit(inline=kw.get("inline", "never")),
    }
    exec(source, ns)
    for b in random_boards(40, seed=3):
        got = ns["features"](np.uint64(b), np.int64(0), net.runs, net.nruns, net.tbase)
        assert sorted(got) == sorted(ref_indices(net, b))


def test_feature_source__written_out_tc_step_is_the_kernels_tc_step() -> None:
    """The generated ``ftc`` (``_tc_step``'s statements written out at each index) moves w, E and A
    exactly as ``_tc_step`` called at each index, and as the branchy rule of Jaśkowski 2018
    (``step`` while ``A = 0``), also where an index repeats."""
    net = Network(SMALL)
    ns = {"np": np, "pext": pext, "_isos": generic._isos, "njit": lambda **kw: njit(inline="never")}
    exec(feature_source(net.tuples), ns)
    rng = np.random.default_rng(5)
    n = 64
    for trial in range(20):
        idx = tuple(int(i) for i in rng.integers(0, n if trial % 2 else 8, size=8 * len(net.tuples)))
        w = rng.standard_normal(n).astype(np.float32)
        a = np.where(rng.random(n) < 0.3, 0.0, rng.random(n) * 5).astype(np.float32)
        e = np.where(a == 0, 0.0, (rng.random(n) * 2 - 1) * a).astype(np.float32)
        err = float(rng.standard_normal() * 10)
        step = np.float32(0.01 * err)
        got = [x.copy() for x in (w, e, a)]
        ns["ftc"](*got, idx, step, err)
        want = [x.copy() for x in (w, e, a)]
        branchy = [x.copy() for x in (w, e, a)]
        for i in idx:
            generic._tc_step(*want, np.int64(i), step, err)
            bw, be, ba = branchy
            rate = abs(be[i]) / ba[i] if ba[i] > 0 else np.float32(1.0)
            bw[i] += step * rate
            be[i] = np.float32(float(be[i]) + err)
            ba[i] = np.float32(float(ba[i]) + abs(err))
        for g, x, y in zip(got, want, branchy, strict=True):
            assert np.array_equal(g, x) and np.array_equal(g, y)


def test_network__4x6_fits_300_mib() -> None:
    assert Network("4x6").nbytes <= 300 * 2**20


@pytest.mark.parametrize("stages", [(), (5,)])
def test_value__equals_slow_reference(stages: tuple[int, ...]) -> None:
    net = Network(SMALL, stages=stages)
    net.w[:] = np.random.default_rng(1).standard_normal(net.w.size).astype(np.float32)
    for b in random_boards(40, seed=2):
        want = ref_value(net, b)
        assert net.value(b) == pytest.approx(want, rel=1e-9, abs=1e-9)
        assert generic.ntuple_value(np.uint64(b), net.data()) == pytest.approx(want, rel=1e-9, abs=1e-9)


def test_update__one_td_step_by_hand() -> None:
    """V(b) += α (target - V(b)): each of the F features moves by α/F · error."""
    net = Network("0123")  # F = 8 features; this board's 8 images are all different
    b = int(engine.board.pack(np.array([1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 5, 6, 7, 8])))
    e = np.zeros(1, np.float32)
    new = net.k._td(
        np.uint64(b), 10.0, net.stage_arr, net.table, 0, 0.1 / net.features, False, net.w, e, e, net.runs,
        net.nruns, net.tbase,
    )
    assert new == pytest.approx(1.0, rel=1e-6)  # 0 + 0.1 * (10 - 0)
    assert np.count_nonzero(net.w) == 8
    assert np.allclose(net.w[net.w != 0], 0.125)
    # an empty board: all 8 images hit one weight, which gets 8 steps of alpha/F * error
    net2 = Network("0123")
    net2.k._td(
        np.uint64(0),
        8.0,
        net2.stage_arr,
        net2.table,
        0,
        0.5 / 8,
        False,
        net2.w,
        e,
        e,
        net2.runs,
        net2.nruns,
        net2.tbase,
    )
    assert net2.w[0] == pytest.approx(4.0) and net2.value(0) == pytest.approx(32.0)


def ref_train_game(
    net: Network, state: np.ndarray, kind: str, online: bool, quirk: bool = False, alpha: float = 0.1,
    opts: KernelOptions | None = None, start: int | None = None, dg: int = 0,
) -> tuple[int, list[int]]:
    """Slow reference of one self-play training game (see kernels.play_game_train) under the rule
    variant ``opts`` (default: none), from ``start`` (default a new board), every after-state read
    as ``dg`` says (kernels.view): (score, the reward of every move)."""
    opts = opts or KernelOptions()
    p, g = 0.9, opts.gamma
    step = alpha / net.features

    def ref_value(net: Network, b: int) -> float:
        return _ref_value(net, b, dg)

    def ref_add(net: Network, b: int, step: float) -> None:
        _ref_add(net, b, step, dg)

    def value_before(nb: int) -> float:
        total, n = 0.0, 0
        for c in range(16):
            if (nb >> (4 * c)) & 15 == 0:
                total += p * ref_value(net, nb | (1 << (4 * c)))
                total += (1 - p) * ref_value(net, nb | (2 << (4 * c)))
                n += 1
        return total / n

    b = int(engine.new_board(state, p)) if start is None else start
    recs: list[tuple[int, int]] = []
    prev, prev_r, score = None, 0, 0
    while True:
        cs = cells(b)
        if opts.end_on_full_board and (0 not in cs or max(cs) >= 15):
            break
        best = None
        for a in opts.tie_order:
            nb, r = (int(x) for x in engine.move(np.uint64(b), a))
            if nb == b:
                if not opts.illegal_penalty:
                    continue
                r = -1
            v = r + (ref_value(net, nb) if kind == "after" else value_before(nb))
            if best is None or v > best[0]:
                best = (v, nb, r)
        if best is None:
            break
        _, nb, r = best
        x = nb if kind == "after" else b
        if online:
            if prev is not None:
                target = r + g * ref_value(net, nb) if kind == "after" else prev_r + g * ref_value(net, b)
                ref_add(net, prev, step * (target - ref_value(net, prev)))
            prev, prev_r = x, r
        recs.append((x, r))
        b = int(engine.spawn(np.uint64(nb), state, p))
        score += r
    if online and prev is not None:
        ref_add(net, prev, step * ((0.0 if kind == "after" else prev_r) - ref_value(net, prev)))
    if not online:
        target = 0.0
        for x, r in reversed(recs):
            goal = target if kind == "after" else r + g * target
            ref_add(net, x, step * (goal - ref_value(net, x)))
            vnew = ref_value(net, x)
            target = r + g * vnew if kind == "after" else vnew + (r if quirk else 0)
    return score, [r for _, r in recs]


_ref_value, _ref_add = ref_value, ref_add


@pytest.mark.parametrize("online", [True, False])
def test_train_game__late_stage_read_downgraded_equals_slow_reference(online: bool) -> None:
    """``dg`` 2 with a stage from 16384 (the late stage of ``train ntuple --downgrade highest``): every
    after-state is valued and updated on its features downgraded, in its own stage; ``dg`` 3 (residual)
    on its features as they are, plus the first stage's value of it downgraded. The weights moved are
    stage 1's, and differ from those of the same game read as it is."""
    start = int(engine.board.pack(np.array([14, 12, 11, 10, 9, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0])))
    nets = {}
    for dg in (2, 3, 0):
        fast = Network("0123,4567", stages=(14,))
        slow = Network("0123,4567", stages=(14,))
        fast.w[: fast.table] = slow.w[: slow.table] = np.random.default_rng(1).normal(0, 50, fast.table)
        s1, s2 = seed_state(7), seed_state(7)
        e = np.zeros(1, np.float32)
        score, _, _ = fast.k.play_game_train(
            np.uint64(start), fast.w, e, e, np.ones(2, np.int64), fast.runs, fast.nruns, fast.tbase,
            fast.stage_arr, 0, online, False, False, 0.1 / fast.features, 0.0, 0.9, s1,
            np.zeros(1 << 14, np.uint64), np.zeros(1 << 14, np.int64), np.zeros(4, np.uint64),
            np.zeros(1, np.int64), 15, False, dg, DEFAULT_RULES,
        )
        assert score == ref_train_game(slow, s2, "after", online, start=start, dg=dg)[0]
        assert np.allclose(fast.w, slow.w, rtol=1e-5, atol=1e-6)
        nets[dg] = fast.w.copy()
    half = nets[0].size // 2
    assert not np.array_equal(nets[2][half:], nets[0][half:])
    assert not np.array_equal(nets[3][half:], nets[0][half:])
    assert np.array_equal(nets[2][:half], nets[0][:half]) and np.array_equal(nets[3][:half], nets[0][:half])


@pytest.mark.parametrize(
    "kind,online,quirk",
    [("after", True, False), ("after", False, False), ("before", True, False), ("before", False, True)],
)
def test_train_game__equals_slow_reference(kind: str, online: bool, quirk: bool) -> None:
    fast = Network("0123,4567", kind=kind)
    slow = Network("0123,4567", kind=kind)
    s1, s2 = seed_state(5), seed_state(5)
    for _ in range(2):
        b0 = np.uint64(engine.new_board(s1, 0.9))
        e = np.zeros(1, np.float32)
        buf_b = np.zeros(1 << 14, np.uint64)
        buf_r = np.zeros(1 << 14, np.int64)
        pool = np.zeros(4, np.uint64)
        score, _, _ = fast.k.play_game_train(
            b0,
            fast.w,
            e,
            e,
            np.ones(1, np.int64),
            fast.runs,
            fast.nruns,
            fast.tbase,
            fast.stage_arr,
            0 if kind == "after" else 1,
            online,
            False,
            quirk,
            0.1 / fast.features,
            0.0,
            0.9,
            s1,
            buf_b,
            buf_r,
            pool,
            np.zeros(1, np.int64),
            15,
            False,
            0,
            DEFAULT_RULES,
        )
        assert score == ref_train_game(slow, s2, kind, online, quirk)[0]
        assert np.allclose(fast.w, slow.w, rtol=1e-5, atol=1e-6)
    assert np.count_nonzero(fast.w) > 0


def test_save_load__round_trip(tmp_path: Path) -> None:
    net = Network(SMALL, stages=(11,), kind="before")
    net.w[:] = np.random.default_rng(3).standard_normal(net.w.size).astype(np.float32)
    net.save(tmp_path / "w.npz", extra=np.arange(3))
    back, arrays = load_file(tmp_path / "w.npz", extra=("extra",))
    assert back.patterns == net.patterns and back.stages == (11,) and back.kind == "before"
    assert np.array_equal(back.w, net.w) and list(arrays["extra"]) == [0, 1, 2]


def test_save_load__stream_the_table_without_a_whole_copy(tmp_path: Path) -> None:
    """A checkpoint of a 128 MiB table allocates a few MiB, never a copy of the table (the array
    is streamed into its zip member from views of its memory), and loading allocates the one
    table it returns."""
    net = Network("012345,456789")
    net.w[::4097] = 1.5
    tracemalloc.start()
    try:
        net.save(tmp_path / "w.npz")
        save_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        back, _ = load_file(tmp_path / "w.npz")
        load_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert save_peak < 8 * 2**20
    assert net.nbytes <= load_peak < net.nbytes * 1.25
    assert np.array_equal(back.w, net.w)


def test_load__corrupt_truncated_or_foreign_file_names_the_problem(tmp_path: Path) -> None:
    net = Network("0123")
    path = tmp_path / "w.npz"
    net.save(path)
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        load_file(tmp_path / "cut.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip file at all")
    with pytest.raises(ValueError, match="corrupt or truncated"):
        load_file(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="holds patterns 0123, not the requested 4567"):
        load_file(path, patterns="4567")
    header = net.header()
    np.savez(tmp_path / "rules.npz", w=net.w, **{**header, "rules_version": np.array(99)})
    with pytest.raises(ValueError, match="rules version 99"):
        load_file(tmp_path / "rules.npz")
    np.savez(tmp_path / "size.npz", w=net.w[:10], **header)
    with pytest.raises(ValueError, match=r"float32 \[65536\]"):
        load_file(tmp_path / "size.npz")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match="not an ai2048 n-tuple weights file"):
        load_file(tmp_path / "other.npz")
    with pytest.raises(FileNotFoundError):
        load_file(tmp_path / "missing.npz")


def test_downgrade__closes_lowest_gap_only_with_32768() -> None:
    b = int(engine.board.pack(np.array([15, 14, 13, 11, 10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])))
    want = int(engine.board.pack(np.array([14, 13, 12, 10, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])))
    assert int(generic.downgrade(np.uint64(b))) == want
    b2 = int(engine.board.pack(np.array([14, 13, 11, 1] + [0] * 12)))
    assert int(generic.downgrade(np.uint64(b2))) == b2


def _downgrade_top_reference(cells: list[int]) -> list[int]:
    """Slow reference: from a 16384 up, lower every tile above the highest missing exponent."""
    top = max(cells)
    if top < 14:
        return cells
    gaps = [e for e in range(1, top) if e not in cells]
    if not gaps:
        return cells
    g = max(gaps)
    return [e - 1 if e > g else e for e in cells]


def test_downgrade_top__closes_the_highest_gap_from_16384() -> None:
    pack = engine.board.pack
    b = int(pack(np.array([14, 12, 11, 10, 3, 1] + [0] * 10)))  # 16384 4096 2048 1024 8 2: no 8192
    want = int(pack(np.array([13, 12, 11, 10, 3, 1] + [0] * 10)))
    assert int(generic.downgrade_top(np.uint64(b))) == want
    b2 = int(pack(np.array([14, 13, 12, 10, 9, 1] + [0] * 10)))  # gap at 2048: the three above it lowered
    assert int(generic.downgrade_top(np.uint64(b2))) == int(pack(np.array([13, 12, 11, 10, 9, 1] + [0] * 10)))
    b3 = int(pack(np.array([13, 11, 1] + [0] * 13)))  # below a 16384: unchanged
    assert int(generic.downgrade_top(np.uint64(b3))) == b3
    b4 = int(pack(np.array(list(range(14, 0, -1)) + [0, 0])))  # no gap: unchanged
    assert int(generic.downgrade_top(np.uint64(b4))) == b4


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_downgrade_top__matches_the_reference(cells: list[int]) -> None:
    b = np.uint64(int(engine.board.pack(np.array(cells))))
    got = [int(x) for x in engine.board.exponents(np.array([generic.downgrade_top(b)], np.uint64))[0]]
    assert got == _downgrade_top_reference(cells)


def test_move_values__highest_downgrade_values_the_lowered_after_state() -> None:
    from ai2048.models import store

    net = store.shared(None, None)
    b = int(engine.board.pack(np.array([14, 12, 11, 10, 0, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0])))
    got = net.move_values(b, downgrade=2)
    plain = net.move_values(b, downgrade=0)
    for a in range(4):
        after, r = engine.move(np.uint64(b), a)
        if after == b:
            assert np.isnan(got[a])
            continue
        low = int(generic.downgrade_top(after))
        assert low != int(after)
        assert got[a] == pytest.approx(int(r) + net.value(low), rel=1e-6)
        assert got[a] != pytest.approx(plain[a], rel=1e-6)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_value_late__reads_the_board_downgraded_in_its_own_stage(cells: list[int]) -> None:
    """``ntuple_value_late`` (the ``downgrade="highest"`` search's evaluator) of a network with a stage
    from 16384: the downgraded board's features in the stage of the board as it is;
    ``ntuple_value_residual``: the board's own features plus, from 16384, the first stage's value of it
    downgraded."""
    net = Network("0123,4567", stages=(14,))
    net.w[:] = np.random.default_rng(2).normal(0, 10, net.w.size)
    b = int(engine.board.pack(np.array(cells)))
    late = generic.ntuple_value_late(np.uint64(b), net.data())
    assert late == pytest.approx(ref_value(net, b, 2), abs=1e-6)
    got = generic.ntuple_value_residual(np.uint64(b), net.data())
    assert got == pytest.approx(ref_value(net, b, 3), abs=1e-6)
    assert (got == pytest.approx(ref_value(net, b, 0), abs=1e-6)) == (max(cells) < 14)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 15), min_size=16, max_size=16),
       st.lists(st.integers(0, 15), min_size=16, max_size=16))
def test_value_rooted__reads_every_board_through_its_roots_map(root: list[int], cells: list[int]) -> None:
    """``downgrade="rooted"``: ``set_root_gap`` fixes the root's map (its highest gap closed, and once
    more while a 16384 or more is still on top), and every board the search values is read through
    it, in its own stage (the reference closes the gaps by hand)."""
    net = Network("0123,4567", stages=(14,))
    net.w[:] = np.random.default_rng(3).normal(0, 10, net.w.size)
    data = (*net.data(), np.zeros(2, np.int64))
    generic.set_root_gap(np.uint64(int(engine.board.pack(np.array(root)))), data)
    gs, x = [], list(root)
    for _ in range(2):
        top = max(x)
        g = max([e for e in range(1, top) if e not in x], default=0) if top >= 14 else 0
        gs.append(g)
        x = [e - 1 if g >= 1 and e > g else e for e in x]
    assert [int(v) for v in data[5]] == gs
    assert gs[1] == 0 or max(root) == 15  # a second closure only under a 32768
    lowered = list(cells)
    for g in gs:
        lowered = [e - 1 if g >= 1 and e > g else e for e in lowered]
    stage = 1 if max(cells) >= 14 else 0
    b = int(engine.board.pack(np.array(cells)))
    want = sum(float(net.w[i]) for i in ref_indices(net, int(engine.board.pack(np.array(lowered))), 0, stage))
    assert generic.ntuple_value_rooted(np.uint64(b), data) == pytest.approx(want, abs=1e-6)


def test_root_gaps__a_32768_board_reads_with_8192_on_top() -> None:
    pack = engine.board.pack
    b = np.uint64(int(pack(np.array([15, 13, 12, 11, 9, 3, 1] + [0] * 9))))  # 32768 8192 4096 2048 512 ...
    g1, g2 = generic.root_gaps(b)
    assert (g1, g2) == (14, 10)  # 16384 missing, then (32768 read as 16384) 1024 missing
    got = generic.lower_twice(b, np.int64(g1), np.int64(g2))
    assert int(got) == int(pack(np.array([13, 12, 11, 10, 9, 3, 1] + [0] * 9)))
    one = np.uint64(int(pack(np.array([14, 12, 11, 9, 3] + [0] * 11))))  # a 16384 on top: one closure
    assert generic.root_gaps(one) == (13, 0)


def test_downgrade_modes__the_agents_names_are_the_kernels_numbers() -> None:
    from ai2048.agents.ntuple import DOWNGRADES, ROOTED

    assert DOWNGRADES.index("residual") == generic.RESIDUAL
    assert ROOTED == DOWNGRADES.index("rooted") == generic.ROOTED
    assert len(DOWNGRADES) < generic.FIXED_MAP


def test_move_values__rooted_reads_the_after_states_through_the_boards_own_map() -> None:
    """At 1 ply, ``downgrade="rooted"`` lowers every after-state with the map of the board moved from:
    the merge that fills the gap (two 1024s under a top row without a 2048) keeps its material."""
    from ai2048.models import store

    net = store.shared(None, None)
    b = np.uint64(int(engine.board.pack(np.array([10, 12, 13, 14, 10, 2, 1, 0, 1, 3, 1, 0, 2, 0, 0, 0]))))
    g1, g2 = generic.root_gaps(b)
    assert (g1, g2) == (11, 0)  # 2048 is missing below the 16384
    got = net.move_values(int(b), downgrade=4)
    for a in range(4):
        after, r = engine.move(b, a)
        if after == b:
            assert np.isnan(got[a])
            continue
        low = int(generic.lower_above(np.uint64(after), np.int64(g1)))
        assert got[a] == pytest.approx(int(r) + net.value(low), rel=1e-6)
    b32 = np.uint64(int(engine.board.pack(np.array([15, 13, 12, 11, 9, 9, 1, 0, 1, 3, 1, 0, 2, 0, 0, 0]))))
    g1, g2 = generic.root_gaps(b32)
    assert g2 > 0  # under a 32768 the map closes two gaps, at 1 ply as in a search
    got = net.move_values(int(b32), downgrade=4)
    for a in range(4):
        after, r = engine.move(b32, a)
        if after != b32:
            low = int(generic.lower_twice(np.uint64(after), np.int64(g1), np.int64(g2)))
            assert got[a] == pytest.approx(int(r) + net.value(low), rel=1e-6)


@pytest.mark.parametrize("depth", [1, 2])
def test_agent__downgrade_with_a_before_state_network_is_refused_at_every_depth(depth: int) -> None:
    """A before-state network's kernels read the board as it is: ``downgrade`` would be ignored, so
    it is an error before any move (at 1 ply it used to be dropped silently)."""
    from ai2048.agents.ntuple import NTupleAgent

    net = Network(SMALL, kind="before")
    with pytest.raises(ValueError, match="before-states.*downgrade=none"):
        NTupleAgent(weights=net, depth=depth, downgrade="highest")
    assert NTupleAgent(weights=net, depth=depth, downgrade="none").downgrade == 0


@pytest.mark.parametrize(("depth", "downgrade"), [(1, "none"), (2, "rooted")])
def test_agent__pickles_and_plays_the_same_moves(depth: int, downgrade: str) -> None:
    """An n-tuple agent pickles (for process pools, ``copy.deepcopy``): its kernels and search are
    compiled code, built again on unpickling, and it plays and values boards as before."""
    import pickle

    from ai2048.agents.ntuple import NTupleAgent

    # the training tests' pattern set: its 1-ply kernels are compiled once for the file (a round trip
    # needs no pattern set of its own)
    net = Network("0123,4567", stages=(12,))
    net.w[:] = np.random.default_rng(5).standard_normal(net.w.size).astype(np.float32)
    agent = NTupleAgent(weights=net, depth=depth, downgrade=downgrade, tie_order="004")
    back = pickle.loads(pickle.dumps(agent))
    assert back.net is not net and np.array_equal(back.net.w, net.w) and back.order == agent.order
    assert back.rules == agent.rules
    rng = np.random.default_rng(9)
    for _ in range(30):
        cells = rng.integers(0, 15, 16)
        b = int(engine.board.pack(cells))
        if engine.is_over(np.uint64(b)):
            continue
        assert np.array_equal(back.values(b), agent.values(b))
        assert back.act(b) == agent.act(b)


def test_network__pickles_its_tc_records_as_one_table() -> None:
    import pickle

    net = Network(SMALL, tc=True, init_value=8.0)
    e, _ = net.tc_arrays()
    e[:3] = 1.5
    back = pickle.loads(pickle.dumps(net))
    assert np.array_equal(back.w, net.w) and np.array_equal(back.tc_arrays()[0], e)
    back.w[0] = 42.0  # the weights are still the records' first column
    assert back._records is not None and back._records[0, 0] == 42.0
    assert back.value(0x1) == pytest.approx(float(back.k.ntuple_value(np.uint64(0x1), back.data())))


@pytest.mark.parametrize("p_two", [0.5, 1.0])
def test_value_before__reads_the_spawn_odds_the_agent_gives(p_two: float) -> None:
    """A before-state network's search values an after-state as the mean over its spawns, a 2 with the
    agent's ``p_two`` (it was a literal 0.9 in the kernel, whatever the agent was told)."""
    from ai2048.agents.ntuple import NTupleAgent

    net = Network(SMALL, stages=(11,), kind="before")
    net.w[:] = np.random.default_rng(3).standard_normal(net.w.size).astype(np.float32)
    agent = NTupleAgent(weights=net, depth=2, p_two=p_two, tt_bits=0)
    assert agent.search is not None and agent.search.data[-1] == p_two
    b = int(engine.board.pack(np.array([1, 2, 0, 3, 0, 11, 4, 0, 5, 0, 6, 0, 0, 7, 0, 1])))
    empty = [i for i in range(16) if not (b >> 4 * i) & 15]
    want = np.mean([p_two * net.value(b | 1 << 4 * i) + (1 - p_two) * net.value(b | 2 << 4 * i)
                    for i in empty])
    got = net.k.ntuple_value_before(np.uint64(b), agent.search.data)
    assert got == pytest.approx(want, rel=1e-5)
