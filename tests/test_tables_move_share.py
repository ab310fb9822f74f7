"""``benchmarks/table_move_share.py``: who decides an endgame agent's moves over an evaluation's games,
by the agent's own rule (``EndgameAgent.decider``, the one ``act`` follows)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ai2048 import make_agent
from ai2048.evaluate import evaluate
from ai2048.game import Game
from ai2048.tables import formations
from conftest import tiny_table_spec

SPEC = tiny_table_spec()
SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "table_move_share.py"
_spec = importlib.util.spec_from_file_location("table_move_share", SCRIPT)
assert _spec is not None and _spec.loader is not None
share_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(share_script)


@pytest.fixture
def settings(tiny_tables, monkeypatch) -> dict:
    monkeypatch.setitem(formations.TABLES, SPEC.name, (SPEC, 1000))
    return {"tables": SPEC.name, "tables_dir": str(tiny_tables), "depth": 1}


@pytest.fixture
def played(settings):
    """Three games of 700 moves by an endgame agent on the tiny 442-16 table, and that agent (its own
    count of table moves: ``table_moves``)."""
    agent = make_agent("endgame", **settings)
    result = evaluate(agent, games=3, seed=12, max_moves=700, progress=False)
    result.config = dict(settings)  # what `ai2048 eval endgame --set ...` records
    return result, agent


def test_decider__is_the_table_act_plays_or_none_for_the_search(settings):
    """On boards in and out of the formation: a name exactly where ``act`` counts a table move, and
    then the table's best value is above min_value."""
    agent = make_agent("endgame", **settings)
    g, named = Game(seed=3), 0
    while not g.is_over and g.moves < 900:
        b = g.board
        before = agent.table_moves
        who = agent.decider(b)
        a = agent.act(b)
        v = agent.table_values(b)
        assert (who is not None) == (agent.table_moves == before + 1)
        if who is not None:
            assert who == SPEC.name and v is not None and np.nanmax(v) > agent.min_value
            named += 1
        else:
            assert v is None or np.nanmax(v, initial=-1.0) <= agent.min_value
        g.step(a)
    assert named > 0


def test_decider__min_value_hands_a_table_move_to_the_search(settings):
    agent = make_agent("endgame", **settings)
    strict = make_agent("endgame", **settings, min_value=0.999)
    g, moved = Game(seed=3), 0
    while not g.is_over and g.moves < 900:
        b = g.board
        v = agent.table_values(b)
        if v is not None and 0 < np.nanmax(v) <= 0.999:
            assert agent.decider(b) == SPEC.name and strict.decider(b) is None
            moved += 1
        g.step(agent.act(b))
    assert moved > 0


def test_move_share__adds_up_to_the_games_moves_and_the_agents_table_moves(played, settings):
    result, agent = played
    fresh = make_agent("endgame", **settings)
    share = share_script.move_share(fresh, result)
    assert share.games == 3
    assert share.moves() + share.moves(share_script.FORCED) == sum(r["moves"] for r in result.records)
    assert share.moves(share_script.FORCED) == 0  # no tile past 32768 in such games
    assert share.moves(SPEC.name) == agent.table_moves > 0
    assert share.moves(share_script.SEARCH) == share.moves() - agent.table_moves > 0
    assert share.moves(None, [0]) == share.moves()  # every board below 8192
    assert share_script.move_share(fresh, result, workers=2).counts == share.counts  # the worker pool


def test_phases__by_the_largest_tile():
    got = share_script.phases(np.array([0, 4096, 8191, 8192, 16383, 16384, 32768, 65536, 1 << 17]))
    assert got.tolist() == [0, 0, 0, 1, 1, 2, 3, 3, 3]


def test_format__shares_of_all_moves_of_the_late_ones_and_of_each_phase():
    share = share_script.MoveShare(("442-256", "443-512"))
    share.add({("442-256", 0): 10, ("search", 0): 30, ("443-512", 2): 5, ("search", 2): 15, ("search", 3): 20,
               ("forced", 3): 2})
    rows = {line.split()[0]: line.split()[1:] for line in share.format().splitlines()[1:4]}
    assert rows["442-256"] == ["10", "12.50%", "0.00%", "25.00%", "-", "0.00%", "0.00%"]
    assert rows["443-512"] == ["5", "6.25%", "12.50%", "0.00%", "-", "25.00%", "0.00%"]
    assert rows["search"] == ["65", "81.25%", "87.50%", "75.00%", "-", "75.00%", "100.00%"]
    assert share.format().splitlines()[-2].split()[-6:] == ["80", "40", "40", "0", "20", "20"]
    assert "2 moves forced by the rules" in share.format()


def test_script__prints_the_counts_of_a_result_file(played, tmp_path, capsys):
    result, agent = played
    path = result.save(tmp_path / "r.json")
    share_script.main([str(path), "--set", "depth=2"])  # a setting changed: the tables decide alike
    out = capsys.readouterr().out
    total = sum(r["moves"] for r in result.records)
    assert f"over the 3 games of {path}: {total:,} moves" in out
    row = next(line for line in out.splitlines() if line.startswith(SPEC.name))
    assert row.split()[1] == f"{agent.table_moves:,}"
    assert "boards classified" in out and "'depth': 2" in out


def _errors(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as e:
        share_script.main(argv)
    assert e.value.code == 2
    return capsys.readouterr().err


def test_script__bad_input_is_named_before_any_work(played, tmp_path, capsys):
    result, _ = played
    assert "does not exist" in _errors([str(tmp_path / "none.json")], capsys)
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps({"format": "something else"}))
    assert "is not an ai2048 evaluation result" in _errors([str(foreign)], capsys)
    other = evaluate("random", games=1, seed=1, max_moves=20, progress=False).save(tmp_path / "random.json")
    assert "holds games of the agent 'random', not 'endgame'" in _errors([str(other)], capsys)
    good = result.save(tmp_path / "r.json")
    assert "workers=0 must be" in _errors([str(good), "--workers", "0"], capsys)
    assert "nope" in _errors([str(good), "--set", "nope=1"], capsys)
    data = json.loads(good.read_text())
    data["games"][1]["actions"] = data["games"][1]["actions"][:-5]
    altered = tmp_path / "altered.json"
    altered.write_text(json.dumps(data))
    assert "game 1 replays to" in _errors([str(altered)], capsys)
    data["games"][1]["actions"] = "u" * 40
    altered.write_text(json.dumps(data))
    assert "game 1 does not replay" in _errors([str(altered)], capsys)


def test_script__from_the_command_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SCRIPT.parents[1] / "src"),
                                                                      os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "none.json")], capture_output=True,
                         text=True, env=env, timeout=120)
    assert run.returncode == 2 and "none.json" in run.stderr and "does not exist" in run.stderr
