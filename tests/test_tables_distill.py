"""Distilled endgame tables (``ai2048 tables distill``): the positions real decisions look up, kept
with their values; the agent decides with one exactly as with the full table where it holds every
position a decision looks up, and hands the other decisions to the network's search."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest

from ai2048 import make_agent
from ai2048.agents import endgame
from ai2048.cli import main
from ai2048.engine import reference
from ai2048.evaluate import distill
from ai2048.game import Game
from ai2048.tables import formations, store
from ai2048.tables.formations import TableSpec
from conftest import tiny_table_spec

SPEC = tiny_table_spec()


@pytest.fixture
def spec(monkeypatch, tmp_path):
    """The tiny table registered, the package's distilled folder moved to ``tmp_path / 'distilled'``
    and the agents' table cache emptied."""
    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    monkeypatch.setattr(store, "DISTILLED_DIR", tmp_path / "distilled")
    monkeypatch.setattr(endgame, "_LOADED", {})
    return SPEC


def _cells(b: int) -> list[int]:
    return [(b >> (4 * q)) & 15 for q in range(16)]


def _boards(table: store.Table, n: int, seed: int) -> list[int]:
    """``n`` playable boards in the table's formation (its walls replaced by distinct large tiles)."""
    rng, out = random.Random(seed), []
    f = table.spec.formation
    while len(out) < n:
        cells = _cells(int(table.keys[rng.randrange(table.keys.size)]))
        large = rng.sample(range(5, 16), len(f.fixed) - 1)
        for q in f.fixed:
            cells[q] = 4 if q == f.anchor else large.pop()
        if any(reference.legal_mask(cells)):
            out.append(sum(e << (4 * q) for q, e in enumerate(cells)))
    return out


def _distilled_agent(tiny_tables, spec, tmp_path, boards: list[int]) -> tuple:
    """The full agent, and an agent on the distillate of its decisions on ``boards``."""
    full = make_agent("endgame", tables=spec.name, tables_dir=str(tiny_tables), depth=1)
    looked = [full.looked_up(b).get(spec.name, np.zeros(0, np.uint64)) for b in boards]
    table = full.tables[0]
    n = store.write_distilled(store.DISTILLED_DIR / f"{spec.name}.npz", table, np.concatenate(looked),
                              {"games": 0})
    assert 0 < n < table.keys.size
    empty = tmp_path / "none"
    empty.mkdir(exist_ok=True)
    with pytest.warns(store.DistilledTablesWarning) as said:
        small = make_agent("endgame", tables=spec.name, tables_dir=str(empty), depth=1)
    assert str(said[0].message).endswith(f"ai2048 tables build {spec.name} --dir {empty}")
    assert small.tables[0].meta["distilled"] and small.tables[0].keys.size == n
    return full, small


def test_only_an_agent_on_distilled_tables_warns(tiny_tables, spec, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", store.DistilledTablesWarning)
        make_agent("endgame", tables=spec.name, tables_dir=str(tiny_tables), depth=1)  # built: silent
    _distilled_agent(tiny_tables, spec, tmp_path, _boards(store.load(spec.name, tiny_tables), 5, 1))


def test_cli__playing_from_the_shipped_distillates_says_so_once_in_a_line_with_the_build_command(tmp_path):
    """What a fresh install plays: the default tables not built, their shipped copies read."""
    argv = ["eval", "endgame", "--games", "2", "--seed", "3", "--set", "depth=1", "--workers", "2",
            "--no-progress"]
    run = subprocess.run([sys.executable, "-m", "ai2048", *argv], capture_output=True, text=True,
                         env={**os.environ, "AI2048_TABLES": str(tmp_path)}, timeout=300)
    assert run.returncode == 0, run.stderr
    names = " ".join(formations.DEFAULT)
    assert run.stderr.splitlines() == [
        f"ai2048: endgame: {', '.join(formations.DEFAULT)} not built in {tmp_path}: playing from the small "
        "distilled copies shipped in the package, weaker than the built tables (docs/tables.md gives both "
        f"rates). Build them once for the full strength: ai2048 tables build {names}"]


def test_distilled_decides_as_the_full_table_on_the_boards_it_was_made_from(tiny_tables, spec, tmp_path):
    boards = _boards(store.load(spec.name, tiny_tables), 300, 1)
    full, small = _distilled_agent(tiny_tables, spec, tmp_path, boards)
    for b in boards:
        want, got = full.table_values(b), small.table_values(b)
        if want is None:
            assert got is None
            continue
        assert got is not None
        legal = np.array(reference.legal_mask(_cells(b)))
        assert np.array_equal(np.nan_to_num(want[legal], nan=-1.0), got[legal])
        assert int(full.act(b)) == int(small.act(b))


def test_on_other_boards_it_decides_only_when_it_knows_every_move(tiny_tables, spec, tmp_path):
    table = store.load(spec.name, tiny_tables)
    full, small = _distilled_agent(tiny_tables, spec, tmp_path, _boards(table, 100, 2))
    known = unknown = 0
    for b in _boards(table, 300, 3):
        got = small.table_values(b)
        legal = np.array(reference.legal_mask(_cells(b)))
        if got is None:
            unknown += 1
            assert int(small.act(b)) == int(small.search.act(b))  # the network's search moves
            continue
        known += 1
        assert not np.isnan(got[legal]).any()
        assert np.array_equal(got[legal], np.nan_to_num(full.table_values(b)[legal], nan=-1.0))
    assert known and unknown


def test_a_game_replays_exactly_from_its_own_distillate(tiny_tables, spec, tmp_path):
    def play(agent) -> tuple[int, int]:
        agent.reset(5)
        g = Game(seed=5)
        while not g.is_over and g.moves < 2000:
            g.step(agent.act(g.board))
        return g.score, g.moves

    full = make_agent("endgame", tables=spec.name, tables_dir=str(tiny_tables), depth=1)
    looked = distill.distill_game(full, 5)  # the whole game's lookups, asked of the agent move by move
    full.table_moves = 0
    first = play(full)
    assert looked and full.table_moves > 0
    store.write_distilled(store.DISTILLED_DIR / f"{spec.name}.npz", full.tables[0], looked[spec.name],
                          {"games": 1})
    small = make_agent("endgame", tables=spec.name, tables_dir=str(tmp_path), depth=1)
    assert play(small) == first and small.table_moves == full.table_moves


def test_collect__workers_keep_what_one_process_keeps(tiny_tables, spec):
    """``tables distill --workers N`` plays in the evaluation's worker pool: the same keys as one process."""
    config = {"tables": spec.name, "tables_dir": str(tiny_tables), "depth": 1}
    one = distill.collect(config, games=3, seed=5, workers=1, progress=False)
    two = distill.collect(config, games=3, seed=5, workers=2, progress=False)
    assert one.keys() == two.keys() == {spec.name}
    assert np.array_equal(one[spec.name], two[spec.name]) and one[spec.name].size > 0


def test_bad_distilled_files_are_named(tiny_tables, spec, tmp_path):
    path = store.DISTILLED_DIR / f"{spec.name}.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a zip")
    with pytest.raises(store.TableError, match="unreadable distilled table"):
        store.load_distilled(spec.name)
    other = TableSpec(formations.F442, 5, 2 ** 12)
    store.write_distilled(path, store.load(spec.name, tiny_tables), np.zeros(0, np.uint64), {})
    assert store.load_distilled(spec.name).keys.size == 0
    (path.parent / f"{other.name}.npz").write_bytes(path.read_bytes())
    with pytest.raises(store.TableError, match="distilled for another version"):
        store.load_distilled(other)
    assert store.load_distilled(TableSpec(formations.F442, 6, 2 ** 12)) is None


def test_cli_distills_from_built_tables_only(tiny_tables, spec, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["tables", "distill", spec.name, "--dir", str(tiny_tables), "--seed", "5", "--set", "depth=1",
            "--no-progress"]
    assert main([*args, "--games", "2", "--out", str(out)]) == 0
    assert f"{spec.name}: " in capsys.readouterr().out
    kept = store.load_distilled(spec.name, out)
    assert kept.keys.size > 0
    # the recipe names every setting, defaults included (downgrade was not set on the command line)
    assert kept.meta["agent"]["depth"] == 1 and kept.meta["agent"]["downgrade"] == "rooted"
    assert "tables_dir" not in kept.meta["agent"]
    assert main([*args, "--games", "0", "--out", str(out)]) == 2
    assert "--games=0 must be a whole number" in capsys.readouterr().err
    assert main(args) == 2
    assert "needs --out" in capsys.readouterr().err
    store.write_distilled(store.DISTILLED_DIR / f"{spec.name}.npz", store.load(spec.name, tiny_tables),
                          np.zeros(0, np.uint64), {})
    with pytest.raises(ValueError, match="is not built"):
        distill.collect({"tables": spec.name, "tables_dir": str(tmp_path), "depth": 1}, games=1, seed=0,
                        progress=False)


def test_every_shipped_distillate__loads_as_its_registered_table_within_the_package_budget():
    files = sorted(store.DISTILLED_DIR.glob("*.npz"))
    names = [p.stem for p in files]
    assert set(formations.DEFAULT) <= set(names)  # the default agent plays straight after install
    assert {"442-512-s616", "443-256-s360", "443-512-s616"} <= set(names)  # and `tables=large`, weaker
    for p in files:
        table = store.load_distilled(p.stem)
        assert table is not None and table.meta["distilled"] and table.keys.size > 100_000, p.name
    assert sum(p.stat().st_size for p in files) < 16 * 10 ** 6  # issue 42's bound on the package
