"""Transport formations (walls that may slide along their line, game-difficulty's "t" tables): exact
against a brute force that lets the large tiles stand in any placement, never below the fixed
formation's table, read during a game from any placement under any symmetry, and refused by name
when misdeclared."""

from __future__ import annotations

import random

import numpy as np
import pytest

from _tables_reference import brute_force, cells_of
from ai2048 import make_agent
from ai2048.engine import reference
from ai2048.rules import CAPPED_RULES
from ai2048.tables import formations, invariants, store
from ai2048.tables.build import build
from ai2048.tables.formations import Formation, TableSpec
from ai2048.tables.lookup import match, move_values, symmetry

# The free cells are the bottom-right 2x3 block; the anchor (1, 1) sits above its goal cell (2, 1).
# The wall in the corner (3, 0) may slide right along the bottom row, to any of its cells.
TINY = Formation("tiny", fixed=(0, 1, 2, 3, 4, 5, 6, 7, 8, 12), anchor=5, goals=(9,))
TINY_T = Formation("tinyt", fixed=TINY.fixed, anchor=5, goals=(9,),
                   slides=tuple((0, 1, 2, 3, 4, 5, 6, 7, 8, c) for c in (13, 14, 15)))
FIXED = TableSpec(TINY, 4, 2 ** 12)
TRANSPORT = TableSpec(TINY_T, 4, 2 ** 12)
LARGE = [13, 12, 11, 10, 9, 4, 8, 7, 6, 5]  # in ``fixed`` order; the anchor (cell 5) holds the target 16


_REF = brute_force(TRANSPORT, LARGE)


def _key(cells: list[int]) -> int:
    return sum(e << (4 * q) for q, e in enumerate(cells))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("transport")
    build(FIXED, d)
    build(TRANSPORT, d)
    return store.load(FIXED, d), store.load(TRANSPORT, d, verify=True)


def _walls(key: int) -> tuple[int, ...]:
    return tuple(q for q, e in enumerate(cells_of(key)) if e == 15)


def test_transport_table__is_exact_against_brute_force_and_holds_every_placement(built):
    _, table = built
    want = np.array([_REF(int(k)) for k in table.keys])
    np.testing.assert_allclose(np.asarray(table.values, np.float64), want, atol=2e-6)
    placements = {_walls(int(k)) for k in table.keys}
    assert placements == {tuple(sorted(p)) for p in (TINY_T.fixed, *TINY_T.slides)}


def test_transport_table__never_below_the_fixed_table_and_above_it_somewhere(built):
    fixed, transport = built
    t = dict(zip(transport.keys.tolist(), np.asarray(transport.values, np.float64).tolist(), strict=True))
    f = dict(zip(fixed.keys.tolist(), np.asarray(fixed.values, np.float64).tolist(), strict=True))
    assert f.keys() < t.keys()  # every fixed position is a transport position at home, and more
    assert all(t[k] >= v - 1e-6 for k, v in f.items())
    assert sum(t[k] > v + 1e-4 for k, v in f.items()) > 10  # a slide is a way out somewhere


def _board(key: int, rng: random.Random) -> int:
    """A key with a tile spawned (a board a move is chosen on: its moves' results are the table's)
    and its walls replaced by distinct large tiles in the formation's order (the anchor's rank holds
    the target), the same large tiles wherever the walls stand."""
    cells = cells_of(key)
    cells[rng.choice([q for q in range(16) if cells[q] == 0])] = rng.choice((1, 2))
    walls = [q for q in range(16) if cells[q] == 15]
    rank = TINY_T.anchor_rank
    larger = sorted(rng.sample(range(5, 16), len(walls) - 1), reverse=True)
    for i, q in enumerate(walls):
        cells[q] = 4 if i == rank else larger.pop()
    return _key(cells)


def _move_value_reference(board: int, a: int, order: list[int]) -> float:
    """The value :func:`move_values` must give move ``a`` of a real board: its successor's value by
    brute force, 1 at the goal (walls at home), 0 where the formation breaks, NaN if illegal."""
    cells = cells_of(board)
    r, _ = reference.move(cells, a, CAPPED_RULES)
    if r == cells:
        return float("nan")
    places = [tuple(sorted(p)) for p in (TINY_T.fixed, *TINY_T.slides)]
    at = next((p for p in places if [r[q] for q in p] == order), None)
    if at is None:
        return 0.0
    if at == places[0] and r[9] == 4:
        return 1.0
    if any(r[q] >= 4 for q in range(16) if q not in at):
        return 0.0
    return _REF(_key([15 if q in at else r[q] for q in range(16)]))  # values do not depend on the tiles


def test_lookup__matches_every_placement_under_every_symmetry_with_the_brute_force_values(built):
    _, table = built
    rules = TRANSPORT.rules()
    rng = random.Random(5)
    slid = [i for i in range(table.keys.size) if _walls(int(table.keys[i])) != tuple(sorted(TINY.fixed))]
    checked = 0
    for i in rng.sample(slid, 40) + rng.sample(range(table.keys.size), 20):
        b = _board(int(table.keys[i]), rng)
        order = [cells_of(b)[q] for q in _walls(int(table.keys[i]))]
        want = [_move_value_reference(b, a, order) for a in range(4)]
        base = move_values(np.uint64(b), np.int64(0), rules, table.keys, table.values, table.offsets)
        np.testing.assert_allclose(base, want, atol=2e-6)
        for s in range(8):  # a board turned by s^-1 matches under s with the same values, permuted
            turned = b
            while int(symmetry(np.uint64(turned), np.int64(s))) != b:
                turned = int(symmetry(np.uint64(turned), np.int64(s)))
            assert match(np.uint64(turned), np.int64(s), TINY_T.places, TINY_T.anchors) == 4
            got = move_values(np.uint64(turned), np.int64(s), rules, table.keys, table.values, table.offsets)
            assert sorted(np.nan_to_num(got, nan=-1).tolist()) == pytest.approx(
                sorted(np.nan_to_num(base, nan=-1).tolist()), abs=1e-7)
            checked += 1
    assert checked == 480
    # the fixed formation does not see a slid board at all
    b = _board(int(table.keys[slid[0]]), rng)
    assert match(np.uint64(b), np.int64(0), TINY.places, TINY.anchors) == 0


def test_an_agent_plays_a_slid_board_from_the_transport_table(tmp_path, monkeypatch):
    spec = TableSpec(formations.F442T, 4, 2 ** 12)  # 442t-16
    monkeypatch.setitem(formations.TABLES, spec.name, (spec, 10_000))
    build(spec, tmp_path)
    agent = make_agent("endgame", tables=spec.name, tables_dir=str(tmp_path), depth=1)
    # 16384 8192 4096 2048 on top, then 1024 16 slid one cell left: (1, 1) 16, (1, 2) 1024
    cells = [14, 13, 12, 11, 0, 4, 10, 0, 1, 2, 1, 0, 0, 0, 0, 0]
    b = _key(cells)
    v = agent.table_values(b)
    assert v is not None and np.nanmax(v) > 0
    right = 1  # sliding the pair back home keeps the formation; its value is the table's
    assert v[right] > 0 and not np.isnan(v[right])
    a = int(agent.act(b))
    assert reference.legal_mask(cells)[a] and v[a] == np.nanmax(v)
    assert agent.table_moves == 1


def test_transport_is_the_tables_identity(built, tmp_path):
    fixed, transport = built
    assert "slides" in TRANSPORT.describe()["formation"] and "slides" not in FIXED.describe()["formation"]
    assert TRANSPORT.name == "tinyt-16"
    assert formations.TABLES["442t-512-s616"][0].formation is formations.F442T
    build(FIXED, tmp_path)
    (tmp_path / "tiny-16").rename(tmp_path / "tinyt-16")  # a fixed table passed off as a transport one
    with pytest.raises(store.TableError, match="built for"):
        store.load(TRANSPORT, tmp_path)
    # a key whose walls stand in no placement is refused by the one key check
    bad = transport.keys.copy()
    cells = cells_of(int(bad[1]))
    cells[12], cells[11] = cells[11], cells[12]  # a wall moved up into the free block
    bad[1] = np.uint64(_key(cells))
    problem = invariants.key_problem(bad, np.array([0, bad.size]), 0, TINY_T.places, 4)
    assert problem is not None and "placement" in problem


@pytest.mark.parametrize("slides, message", [
    (((0, 1, 2, 3, 4, 5, 6, 7, 8, 13),) * 2, "repeats a placement"),
    (((0, 1, 2, 3, 4, 5, 6, 7, 8),), "must place all 10 walls"),
    (((0, 1, 2, 3, 4, 5, 6, 7, 8, 16),), "must place all 10 walls"),
    (tuple((0, 1, 2, 3, 4, 5, 6, 7, 8, c) for c in (13, 14, 15, 11)), "at most 3 slides"),
    ((TINY.fixed,), "repeats a placement"),
])
def test_bad_slides__are_refused_by_name(slides, message):
    with pytest.raises(ValueError, match=message):
        Formation("bad", fixed=TINY.fixed, anchor=5, goals=(9,), slides=slides)
