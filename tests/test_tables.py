"""Endgame tables: exact against brute-force expectimax, Bellman-consistent, symmetric, legal, and
refused by name when missing, half-built, corrupt or built for other rules."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from _tables_reference import brute_force as _brute_force
from ai2048.cli import main
from ai2048.engine import reference
from ai2048.engine.board import flip, mirror, transpose
from ai2048.rules import CAPPED_RULES, P_TWO
from ai2048.tables import formations, store
from ai2048.tables.build import BuildStopped, build, check_resources
from ai2048.tables.formations import Formation, TableSpec
from ai2048.tables.lookup import match, move_values, symmetry

# A small formation: the free cells are the bottom-right 2x3 block, the anchor (1, 1) sits above
# its goal cell (2, 1); ten large tiles fixed.
TINY = Formation("tiny", fixed=(0, 1, 2, 3, 4, 5, 6, 7, 8, 12), anchor=5, goals=(9,))
TINY_SPEC = TableSpec(TINY, 4, 2 ** 12)


def _cells(key: int) -> list[int]:
    return [(key >> (4 * q)) & 15 for q in range(16)]


def _key(cells: list[int]) -> int:
    return sum(e << (4 * q) for q, e in enumerate(cells))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("tables")
    build(TINY_SPEC, d)
    return store.load(TINY_SPEC, d, verify=True), d


def test_tiny_table_is_exact_against_brute_force(tiny):
    table, _ = tiny
    large = [13, 12, 11, 10, 9, 4, 8, 7, 6, 5]  # distinct, all >= 16; the anchor (cell 5) holds 16
    assert large[TINY.fixed.index(TINY.anchor)] == TINY_SPEC.target
    ref = _brute_force(TINY_SPEC, large)
    assert table.keys.size > 100
    got = np.asarray(table.values, dtype=np.float64)
    want = np.array([ref(int(k)) for k in table.keys])
    np.testing.assert_allclose(got, want, atol=2e-6)
    assert 0.0 < got.max() <= 1.0 and got.min() >= 0.0
    assert len(set(np.round(got, 5))) > 10  # values differ from position to position


def test_values_do_not_depend_on_which_large_tiles(tiny):
    table, _ = tiny
    other = _brute_force(TINY_SPEC, [14, 9, 13, 12, 11, 4, 10, 8, 6, 7])
    rng = np.random.default_rng(1)
    for i in rng.choice(table.keys.size, size=200, replace=False):
        assert abs(other(int(table.keys[i])) - float(table.values[i])) < 2e-6


def _bellman(table: store.Table, i: int) -> float:
    """The value of key ``i`` recomputed in Python from the table's own stored successors."""
    spec = table.spec
    f = spec.formation
    fixed = int(f.fixed_mask)
    key = int(table.keys[i])
    total = 0.0
    empty = [c for c in f.free if (key >> (4 * c)) & 15 == 0]
    for c in empty:
        for v, p in ((1, spec.p_two), (2, 1 - spec.p_two)):
            b = key | (v << (4 * c))
            best = 0.0
            for a in range(4):
                cells, _ = reference.move(_cells(b), a, CAPPED_RULES)  # walls are 15s: never merge
                r = _key(cells)
                if r == b:
                    continue
                if r & fixed != fixed:
                    val = 0.0
                elif any(cells[q] == spec.target for q in f.goals):
                    val = 1.0
                elif any(cells[q] >= spec.target for q in f.free) or \
                        sum(2 ** cells[q] for q in f.free if cells[q]) > spec.max_sum:
                    val = 0.0
                else:
                    k = sum(2 ** cells[q] for q in f.free if cells[q]) // 2
                    lo, hi = table.offsets[k], table.offsets[k + 1]
                    j = lo + int(np.searchsorted(table.keys[lo:hi], np.uint64(r)))
                    assert j < hi and table.keys[j] == r, "a successor is missing from the table"
                    val = float(table.values[j])
                best = max(best, val)
            total += p * best
    return total / len(empty)


@pytest.fixture(scope="module")
def t442(tmp_path_factory):
    d = tmp_path_factory.mktemp("t442")
    spec = TableSpec(formations.F442, 4, 2 ** 12)
    build(spec, d)
    return store.load(spec, d)


def test_442_table_is_bellman_consistent_on_random_positions(t442):
    rng = np.random.default_rng(7)
    idx = rng.choice(t442.keys.size, size=1500, replace=False)
    for i in idx:
        assert abs(_bellman(t442, int(i)) - float(t442.values[i])) < 2e-6
    # layers: every key sits in the layer of its free tiles' sum
    k = t442.offsets.size // 2
    lo, hi = t442.offsets[k], t442.offsets[k + 1]
    fixed = int(formations.F442.fixed_mask)
    for key in t442.keys[lo:hi][:50]:
        cells = _cells(int(key) & ~fixed)
        assert sum(2 ** e for e in cells if e) == 2 * k


def _mirrored(f: Formation) -> Formation:
    m = [4 * (q // 4) + 3 - q % 4 for q in range(16)]
    return Formation(f.name + "m", tuple(m[q] for q in f.fixed), m[f.anchor], tuple(m[q] for q in f.goals))


def test_mirror_formation_gives_mirror_values(tiny, tmp_path):
    table, _ = tiny
    mspec = TableSpec(_mirrored(TINY), TINY_SPEC.target, TINY_SPEC.max_sum)
    build(mspec, tmp_path)
    mt = store.load(mspec, tmp_path)
    assert mt.keys.size == table.keys.size
    mvals = dict(zip(mt.keys.tolist(), mt.values.tolist(), strict=False))
    for key, v in zip(table.keys.tolist(), table.values.tolist(), strict=False):
        assert mvals[int(mirror(np.uint64(key)))] == pytest.approx(v, abs=1e-6)


def _board_in_formation(table: store.Table, i: int, rng: random.Random) -> int:
    """Key ``i`` with distinct large tiles (the anchor holding the target) in place of the walls."""
    f = table.spec.formation
    cells = _cells(int(table.keys[i]))
    large = rng.sample(range(table.spec.target + 1, 16), len(f.fixed) - 1)
    for q in f.fixed:
        cells[q] = table.spec.target if q == f.anchor else large.pop()
    return _key(cells)


def test_lookup_under_every_symmetry_matches_and_is_legal(t442):
    f = formations.F442
    rng = random.Random(3)
    places, anchor = f.places, f.anchors
    rules = t442.spec.rules()
    checked = 0
    for i in np.random.default_rng(5).choice(t442.keys.size, size=300, replace=False):
        b = _board_in_formation(t442, int(i), rng)
        base = move_values(np.uint64(b), np.int64(0), rules, t442.keys, t442.values, t442.offsets)
        for s in range(8):
            # a board turned by s^-1 is in the formation under s, with the same move values permuted
            turned = b
            for _ in range(_order(s) - 1):
                turned = int(symmetry(np.uint64(turned), np.int64(s)))
            assert match(np.uint64(turned), np.int64(s), places, anchor) == 4
            v = move_values(np.uint64(turned), np.int64(s), rules, t442.keys, t442.values, t442.offsets)
            assert sorted(np.nan_to_num(v, nan=-1).tolist()) == pytest.approx(
                sorted(np.nan_to_num(base, nan=-1).tolist()), abs=1e-7)
            legal = [reference.move(_cells(turned), a, CAPPED_RULES)[0] != _cells(turned) for a in range(4)]
            for a in range(4):
                assert np.isnan(v[a]) or legal[a], "a table value for an illegal move"
            checked += 1
    assert checked == 2400


def _order(s: int) -> int:
    """The order of symmetry ``s`` (s applied this many times is the identity)."""
    b = np.uint64(0x0123456789ABCDEF)
    x, n = np.uint64(symmetry(b, np.int64(s))), 1
    while x != b:
        x, n = np.uint64(symmetry(x, np.int64(s))), n + 1
    return n


def test_symmetry_is_the_eight_transforms():
    b = np.uint64(0x0123456789ABCDEF)
    outs = {int(symmetry(b, np.int64(s))) for s in range(8)}
    assert len(outs) == 8
    assert int(symmetry(b, np.int64(4))) == int(transpose(b))
    assert int(symmetry(b, np.int64(3))) == int(mirror(flip(b)))


def test_match_refuses_boards_out_of_formation():
    f = formations.F442
    places, anchor = f.places, f.anchors
    # top row 16384 8192 4096 2048, then 1024 512 leftwards; free tiles below 512
    cells = [14, 13, 12, 11, 0, 3, 9, 10, 1, 2, 0, 0, 0, 0, 1, 0]
    assert match(np.uint64(_key(cells)), np.int64(0), places, anchor) == 9
    for change in ({5: 9}, {5: 10}, {0: 10}, {6: 0}, {14: 12}):  # free tile as large, a repeat, ...
        c = list(cells)
        for q, e in change.items():
            c[q] = e
        assert match(np.uint64(_key(c)), np.int64(0), places, anchor) == 0, change


def test_stopped_build_resumes_to_the_same_table(tmp_path):
    calls = {"n": 0}

    def stop_after(n):
        def stop():
            calls["n"] += 1
            return calls["n"] > n
        return stop

    whole = build(TINY_SPEC, tmp_path / "whole")
    stops = 0
    while True:  # stopped after every third layer, forward and backward, until it completes
        calls["n"] = 0
        try:
            part = build(TINY_SPEC, tmp_path / "part", stop=stop_after(3))
            break
        except BuildStopped:
            stops += 1
        assert not (tmp_path / "part" / "tiny-16" / store.META).exists()
        with pytest.raises(store.TableNotBuilt, match="half-built.*ai2048 tables build tiny-16"):
            store.load(TINY_SPEC, tmp_path / "part")
    assert stops >= 10
    a, b = json.loads((whole / store.META).read_text()), json.loads((part / store.META).read_text())
    assert a["files"] == b["files"] and a["positions"] == b["positions"]
    assert not (part / ".build").exists()


def test_missing_corrupt_and_foreign_tables_are_named(tiny, tmp_path):
    with pytest.raises(store.TableNotBuilt,
                       match=r"442-64 is not built .*run: ai2048 tables build 442-64 --dir"):
        store.load("442-64", tmp_path)
    table, d = tiny
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(d, copy)
    folder = copy / "tiny-16"
    values = folder / "values.npy"
    raw = bytearray(values.read_bytes())
    raw[-3] ^= 0xFF
    values.write_bytes(bytes(raw))
    with pytest.raises(store.TableError, match="SHA-256 does not match"):  # a copy is hashed once
        store.load(TINY_SPEC, copy)
    with pytest.raises(store.TableError, match="SHA-256 does not match"):
        store.load(TINY_SPEC, copy, verify=True)
    values.write_bytes(bytes(raw[:-8]))
    with pytest.raises(store.TableError, match="missing or truncated"):
        store.load(TINY_SPEC, copy)
    other = TableSpec(TINY, 4, 2 ** 12, p_two=0.8)
    with pytest.raises(store.TableError, match="built for .*rebuild it"):
        store.load(other, d)
    (folder / store.META).write_text("{not json")
    with pytest.raises(store.TableError, match="unreadable table description"):
        store.load(TINY_SPEC, copy)


def test_build_refuses_a_full_disk_before_writing(tmp_path, monkeypatch):
    import shutil

    usage = shutil.disk_usage(tmp_path)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage._replace(free=10 * 2**20))
    with pytest.raises(ValueError, match=r"needs about .* GiB of disk .*--dir"):
        check_resources("442-512", tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_registered_specs_are_consistent():
    assert set(formations.DEFAULT) <= set(formations.TABLES)
    for name, (spec, positions) in formations.TABLES.items():
        assert spec.name == name and positions > 0 and spec.p_two == P_TWO
    with pytest.raises(ValueError, match="unknown table 'nope'; known: 442-32"):
        formations.spec("nope")
    with pytest.raises(ValueError, match="anchor must be a fixed cell"):
        Formation("x", fixed=(0, 1), anchor=2, goals=(3,))


def test_cli_lists_builds_and_verifies(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(formations.TABLES, "tiny-16", (TINY_SPEC, 1000))
    assert main(["tables", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "tiny-16" in out and "not built" in out
    assert main(["tables", "build", "tiny-16", "--dir", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "positions" in out
    # the estimate comes first: positions, memory, disk and minutes
    assert out.splitlines()[0].startswith("tiny-16: about 1,000 positions, ")
    assert "GiB of memory" in out and "GB of disk" in out and "min on" in out
    assert main(["tables", "build", "tiny-16", "--dir", str(tmp_path)]) == 0
    assert "already built" in capsys.readouterr().out
    assert main(["tables", "verify", "tiny-16", "--dir", str(tmp_path)]) == 0
    assert main(["tables", "--dir", str(tmp_path)]) == 0
    assert "built" in capsys.readouterr().out
    assert main(["tables", "build", "nope", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "unknown table 'nope'" in err and "sets: default, large" in err
    monkeypatch.setattr(formations, "LARGE", ("tiny-16",))  # a set name builds (and lists) its tables
    assert main(["tables", "build", "large", "--dir", str(tmp_path)]) == 0
    assert "tiny-16: already built" in capsys.readouterr().out
    assert main(["tables", "--dir", str(tmp_path)]) == 0
    assert "large" in capsys.readouterr().out
    (tmp_path / "afile").write_text("x")
    assert main(["tables", "--dir", str(tmp_path / "afile")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_build_killed_with_sigkill_resumes_to_the_same_table(tmp_path):
    """SIGKILL in the middle of a build (no handler runs): the same command finishes it, and the table
    is the one a straight build makes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    spec = TableSpec(formations.F442, 5, 2 ** 12)
    code = ("import sys; from ai2048.tables import formations; from ai2048.tables.build import build; "
            "from ai2048.tables.formations import TableSpec; "
            "build(TableSpec(formations.F442, 5, 2 ** 12), sys.argv[1])")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "killed")])
    fwd = tmp_path / "killed" / "442-32" / ".build" / "fwd"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(fwd.glob("L*.npy"))) < 20 and proc.poll() is None:
        time.sleep(0.01)
    assert proc.poll() is None, "the build ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (tmp_path / "killed" / "442-32" / store.META).exists()
    killed = build(spec, tmp_path / "killed")
    straight = build(spec, tmp_path / "straight")
    a = json.loads((killed / store.META).read_text())["files"]
    b = json.loads((straight / store.META).read_text())["files"]
    assert a == b
