"""The ``endgame`` agent: plays the table's best move inside a formation, the network's search
elsewhere, never an illegal move; a missing table is named with the command that builds it."""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest

from ai2048 import make_agent
from ai2048.agents import endgame
from ai2048.engine import reference
from ai2048.game import Game
from ai2048.tables import formations, store
from conftest import tiny_table_spec

SPEC = tiny_table_spec()


@pytest.fixture
def agent(tiny_tables, monkeypatch):
    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    return make_agent("endgame", tables=SPEC.name, tables_dir=str(tiny_tables))


def _cells(b: int) -> list[int]:
    return [(b >> (4 * q)) & 15 for q in range(16)]


def _in_formation(table: store.Table, rng: random.Random) -> int:
    f = table.spec.formation
    i = rng.randrange(table.keys.size)
    cells = _cells(int(table.keys[i]))
    large = rng.sample(range(5, 16), len(f.fixed) - 1)
    for q in f.fixed:
        cells[q] = 4 if q == f.anchor else large.pop()
    return sum(e << (4 * q) for q, e in enumerate(cells))


def test_agent_plays_the_tables_best_move_in_formation_and_ties_by_the_search(agent):
    table = agent.tables[0]
    rng = random.Random(11)
    used = ties = 0
    for _ in range(400):
        b = _in_formation(table, rng)
        if not any(reference.legal_mask(_cells(b))):
            continue
        a = int(agent.act(b))
        assert reference.legal_mask(_cells(b))[a], "an illegal move"
        v = agent.table_values(b)
        assert v is not None
        if np.nanmax(v, initial=-1) > 0:
            used += 1
            tied = np.nan_to_num(v, nan=-1.0) == np.nanmax(v)
            assert tied[a]
            assert set(agent.explain(b)) <= {"up", "right", "down", "left"}
            if tied.sum() > 1:  # moves the table values alike go to the network's search
                ties += 1
                searched = np.asarray(agent.search.values(b), dtype=float)
                assert searched[a] == max(searched[i] for i in range(4) if tied[i])
    assert used > 250 and ties > 20


def test_agent_uses_the_search_outside_the_formations(agent):
    g = Game(seed=4)
    for _ in range(30):
        b = g.board
        assert agent.table_values(b) is None  # an opening is in no formation
        a = agent.act(b)
        assert a == agent.search.act(b)
        g.step(a)


def test_late_depth_searches_deeper_from_16384_on(tiny_tables, monkeypatch):
    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    agent = make_agent("endgame", tables=SPEC.name, tables_dir=str(tiny_tables), depth=1, late_depth=2)
    assert agent.late.depth == 2 and agent.search.depth == 1 and agent.late.net is agent.search.net
    same = make_agent("endgame", tables=SPEC.name, tables_dir=str(tiny_tables), depth=2, late_depth=2)
    assert same.late is same.search
    deeper = searched = 0
    for seed in range(40):
        g = Game(seed=seed)
        for _ in range(seed % 7):
            g.step(agent.search.act(g.board))
        for top, late in ((13, False), (14, True), (15, True)):  # 8192: depth; 16384 and 32768: late_depth
            cells = _cells(g.board)
            cells[cells.index(0)] = top
            b = sum(e << (4 * q) for q, e in enumerate(cells))
            if agent.table_values(b) is not None or not any(reference.legal_mask(cells)):
                continue
            want = (agent.late if late else agent.search).values(b)
            assert agent.searcher(b) is (agent.late if late else agent.search)
            assert agent.act(b) == int(np.argmax(want)) or want[int(agent.act(b))] == want.max()
            assert agent.explain(b) == (agent.late if late else agent.search).explain(b)
            deeper += late and not np.array_equal(want, agent.search.values(b))
            searched += 1
    assert searched > 60 and deeper > 20  # the late boards were searched deeper, to other values


def test_a_whole_game_is_legal_and_reproducible(agent):
    def play(seed: int) -> tuple[int, int]:
        g = Game(seed=seed)
        while not g.is_over and g.moves < 3000:
            g.step(agent.act(g.board))
        return g.score, g.moves

    assert play(5) == play(5)


def test_a_pickled_agent_plays_the_same_moves_and_carries_no_table(agent, monkeypatch):
    """Pickling keeps the settings and the network; the tables are loaded again by name (a table is
    gigabytes, never copied into the pickle)."""
    blob = pickle.dumps(agent)
    assert len(blob) < agent.search.net.w.nbytes + 2**20 and agent.tables[0].keys.nbytes > 0
    endgame._LOADED.clear()  # as in a fresh process
    back = pickle.loads(blob)
    assert back.tables[0].spec == agent.tables[0].spec and back.search.downgrade == agent.search.downgrade
    rng = random.Random(3)
    boards = [_in_formation(agent.tables[0], rng) for _ in range(40)] + [Game(seed=s).board for s in range(5)]
    for b in boards:
        if any(reference.legal_mask(_cells(b))):
            assert back.act(b) == agent.act(b)
            assert back.explain(b) == agent.explain(b)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"tables": "442-32"},  # (no distilled copy of it ships)
         r"endgame table 442-32 is not built .*run: ai2048 tables build 442-32 --dir"),
        ({"tables": "nope"}, r"unknown table 'nope'"),
        ({"tables": ""}, r"tables is empty"),
        ({"tables": 5}, r"tables must be 'default', 'large' or comma-separated"),
        ({"tables": "default,442-512-s616"}, r"tables 442-512 and 442-512-s616 both serve formation 442 at "
                                             r"target 512: name one of them"),
        ({"min_value": 1.0}, r"min_value=1.0 must be a finite number in \[0, 1\)"),
        ({"min_value": float("nan")}, r"min_value=nan must be a finite number in \[0, 1\)"),
        ({"late_depth": 0}, r"late_depth=0 must be a whole number in 1..6, or None"),
        ({"late_depth": 2.5}, r"late_depth=2.5 must be a whole number in 1..6, or None"),
        ({"p_two": 0.8, "tables": "442-64"}, r"table 442-64 is solved for p_two=0.9, not 0.8"),
    ],
)
def test_bad_settings_are_named(config, message, tmp_path):
    with pytest.raises((ValueError, TypeError, FileNotFoundError), match=message):
        make_agent("endgame", tables_dir=str(tmp_path), **config)


def test_a_tables_dir_that_is_a_file_is_refused_before_any_table_is_read(tmp_path, monkeypatch):
    """Regression: a file was read as a folder with no tables, and the distilled copies played."""
    monkeypatch.setattr(endgame, "_LOADED", {})
    path = tmp_path / "tables.txt"
    path.write_text("not a folder")
    with pytest.raises(ValueError, match=f"tables_dir {path} is a file, not a folder"):
        make_agent("endgame", tables_dir=str(path))
    monkeypatch.setenv("AI2048_TABLES", str(path))
    with pytest.raises(ValueError, match=rf"\$AI2048_TABLES {path} is a file, not a folder"):
        make_agent("endgame")
    assert endgame._LOADED == {}


def test_tables_load_once_per_process(tiny_tables, monkeypatch):
    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    a = endgame.load_tables((SPEC.name,), tiny_tables)
    b = endgame.load_tables((SPEC.name,), tiny_tables)
    assert a[0] is b[0]
    assert isinstance(a[0].keys, np.memmap)


def test_the_web_offers_the_endgame_agent_only_when_its_tables_are_built(tiny_tables, tmp_path, monkeypatch):
    from ai2048.ui.limits import scan_models

    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    monkeypatch.setattr(formations, "DEFAULT", (SPEC.name,))
    monkeypatch.setenv(store.ENV_VAR, str(tmp_path))
    assert "endgame" not in scan_models(None)
    monkeypatch.setattr(store, "DISTILLED_DIR", tmp_path / "distilled")  # or its distilled copy ships
    store.write_distilled(tmp_path / "distilled" / f"{SPEC.name}.npz", store.load(SPEC.name, tiny_tables),
                          np.zeros(0, np.uint64), {})
    assert "endgame" in scan_models(None)
    (tmp_path / "distilled" / f"{SPEC.name}.npz").unlink()
    monkeypatch.setenv(store.ENV_VAR, str(tiny_tables))
    model = scan_models(None)["endgame"]
    agent = model.build(depth=1)
    g = Game(seed=2)
    assert agent.act(g.board) in g.legal_actions()


def test_dispatch__target_plays_the_further_goal_value_the_likelier_one(tiny_tables, monkeypatch):
    """Where 442-16 (anchor (1, 2) holds 16) and 443-32 (anchor (1, 3) holds 32) both apply, 'target'
    plays 443-32's move values whenever it has a move, 'value' the table with the higher best value."""
    from ai2048.tables.build import build
    from ai2048.tables.lookup import move_values

    wide = formations.TableSpec(formations.F443, 5, 48)  # capped: a small table
    build(wide, tiny_tables)
    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    monkeypatch.setitem(formations.TABLES, wide.name, (wide, 1000))
    names = f"{SPEC.name},{wide.name}"
    by = {d: make_agent("endgame", tables=names, tables_dir=str(tiny_tables), dispatch=d, depth=1)
          for d in ("target", "value")}
    narrow_t, wide_t = (store.load(s, tiny_tables) for s in (SPEC, wide))
    rng = random.Random(5)
    differ = 0
    for _ in range(300):
        cells = _cells(int(narrow_t.keys[rng.randrange(narrow_t.keys.size)]))
        for q, e in zip((0, 1, 2, 3, 7, 6), (14, 13, 12, 11, 5, 4), strict=True):
            cells[q] = e
        b = np.uint64(sum(e << (4 * q) for q, e in enumerate(cells)))
        vn, vw = (move_values(b, np.int64(0), t.spec.rules(), t.keys, t.values, t.offsets)
                  for t in (narrow_t, wide_t))
        mn, mw = np.nanmax(vn, initial=-1.0), np.nanmax(vw, initial=-1.0)
        want_target = vw if mw > 0 else (vn if mn > mw else vw)
        want_value = vw if mw > mn else vn
        np.testing.assert_array_equal(by["target"].table_values(int(b)), want_target)
        np.testing.assert_array_equal(by["value"].table_values(int(b)), want_value)
        differ += int(mw > 0 and mn > mw)
    assert differ > 10  # boards where the two rules choose different tables
