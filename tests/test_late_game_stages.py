"""``benchmarks/late_game_stages.py`` (how far past a 16384 each game's chain got) and
``benchmarks/table_stage.py`` (a table's stage played alone, against its own value)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ai2048.stats import wilson
from ai2048.tables import formations, store
from ai2048.tables.lookup import match
from conftest import tiny_table_spec

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _module(name: str):  # noqa: ANN202
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


stages = _module("late_game_stages")
stage = _module("table_stage")


def _boards(*tiles: list[int]) -> np.ndarray:
    out = np.zeros((len(tiles), 16), dtype=np.int64)
    for i, t in enumerate(tiles):
        out[i, :len(t)] = t
    return out


@pytest.mark.parametrize(("boards", "held"), [
    (_boards([14, 1, 1]), 1),
    (_boards([14, 13, 11, 10], [14, 12, 11]), 2),  # the 8192 and the 4096 never on one board
    (_boards([14, 13, 12, 2], [14, 13, 12, 11, 10]), 5),
    (_boards(list(range(14, 0, -1))), 14),
    (_boards([13, 12, 11]), 0),
])
def test_chain_held__the_longest_run_down_from_16384_on_one_board(boards, held):
    assert stages.chain_held(boards) == held


def test_late_game_stages__a_result_replayed_and_bad_files_refused(tmp_path):
    out = tmp_path / "r.json"
    subprocess.run([sys.executable, "-m", "ai2048", "eval", "greedy", "--games", "3", "--seed", "5", "--out",
                    str(out), "--no-progress"], check=True, capture_output=True)
    run = subprocess.run([sys.executable, str(BENCH / "late_game_stages.py"), str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "3 games, 0 with a 16384, 0 of them reached 32768" in run.stdout  # greedy never builds one
    assert "boards replayed and read a second" in run.stdout
    foreign = tmp_path / "f.json"
    foreign.write_text(json.dumps({"format": "something else"}))
    for bad, says in ((tmp_path / "missing.json", "missing.json"),
                      (foreign, "not an ai2048 evaluation result")):
        run = subprocess.run([sys.executable, str(BENCH / "late_game_stages.py"), str(bad)],
                             capture_output=True, text=True)
        assert run.returncode == 2 and says in run.stderr


def test_table_stage__a_table_builds_its_target_as_often_as_its_value_says(tiny_tables):
    table = store.load(tiny_table_spec(), tiny_tables)
    b = stage.start_board(table)
    f = table.spec.formation
    assert match(np.uint64(b), np.int64(0), f.places, f.anchors) == table.spec.target
    rng = np.random.default_rng(3)
    runs = [stage.play_stage(table, rng) for _ in range(400)]
    wins = sum(ok for ok, _ in runs)
    lo, hi = wilson(wins, len(runs), z=3.3)  # the table's value lies within a 99.9% interval
    assert lo <= float(table.values[0]) <= hi
    again = [stage.play_stage(table, np.random.default_rng(3)) for _ in range(1)]
    assert again[0] == runs[0]  # seeded


def test_table_stage__bad_input_is_named(tmp_path):
    for args, says in ((["442-64", "--dir", str(tmp_path)], "442-64 is not built"),
                       (["nope-1", "--dir", str(tmp_path)], "unknown table"),
                       (["442-64", "--runs", "0"], "--runs"), (["442-64", "--runs", "10000000"], "--runs")):
        run = subprocess.run([sys.executable, str(BENCH / "table_stage.py"), *args],
                             capture_output=True, text=True)
        assert run.returncode == 2 and says in run.stderr, run.stderr
    assert formations.spec("442t-256").formation is formations.F442T
