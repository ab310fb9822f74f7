"""``benchmarks/late_game_conversion.py``: the 16384 -> 32768 conversion from a pool of late-game
boards, and with ``--why`` how each lost game ended by its last table decision (docs/tables.md)."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ai2048.checkpoint import write_json
from ai2048.evaluate.pool import POOL_FORMAT
from ai2048.rules import RULES_VERSION

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "late_game_conversion.py"
_spec = importlib.util.spec_from_file_location("late_game_conversion", SCRIPT)
assert _spec is not None and _spec.loader is not None
conversion = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conversion)
NEVER, INSIDE, STUCK, GOAL = conversion.ENDINGS


@pytest.mark.parametrize(("states", "want"), [
    ([], (NEVER, 0)),
    (["", "", "stuck"], (NEVER, 3)),
    (["", "table"], (INSIDE, 0)),
    (["table", "", "table"], (INSIDE, 0)),
    (["table", "stuck", "", ""], (STUCK, 3)),
    (["table", "stuck", "table", "", "stuck"], (GOAL, 2)),  # the board after the last table move decides
])
def test_ending__by_the_board_after_the_last_table_move(states: list[str], want: tuple[str, int]) -> None:
    assert conversion.ending(states) == want


class _Tables:
    min_value = 0.0

    def __init__(self, values: np.ndarray | None) -> None:
        self.values = values

    def table_values(self, board: int) -> np.ndarray | None:
        return self.values


def test_table_state__a_table_move_a_stuck_formation_or_none() -> None:
    nan = np.nan
    assert conversion.table_state(_Tables(None), 1) == ""
    # in a formation, every legal move breaks it
    assert conversion.table_state(_Tables(np.array([nan, nan, 0.0, 0.0])), 1) == "stuck"
    assert conversion.table_state(_Tables(np.array([0.25, nan, 0.0, 1.0])), 1) == "table"


def test_why_lost__counts_each_ending_with_its_median_tail() -> None:
    out = [{"max_tile": 32768, "ending": (GOAL, 9)}, {"max_tile": 16384, "ending": (INSIDE, 0)},
           {"max_tile": 16384, "ending": (GOAL, 10)}, {"max_tile": 8192, "ending": (GOAL, 20)}]
    assert conversion.why_lost(out, 32768) == (
        "the 3 lost games ended: inside a table's formation 1; after a table's goal 2 (median 15 moves after "
        "its last table move)")


def _board(rows: list[list[int]]) -> int:
    return sum(int(v).bit_length() - 1 << (4 * (4 * r + c)) if v else 0
               for r, row in enumerate(rows) for c, v in enumerate(row))


def _least_score(board: int) -> int:
    """The score of a game that reaches ``board`` spawning only 4s (a pool's score must fit its tiles)."""
    return sum((k - 2) << k for k in ((board >> (4 * i)) & 0xF for i in range(16)) if k >= 2)


def test_script__why_splits_the_lost_games_of_a_pool(tmp_path: Path) -> None:
    """Two late-game boards played on with the shipped distilled tables at 1-ply: every lost game is
    counted once; an agent without tables is refused before any game."""
    boards = [_board([[16384, 4096, 2048, 256], [0, 16, 64, 128], [0, 4, 4, 4], [0, 2, 0, 0]]),
              _board([[16384, 8192, 4096, 512], [0, 2, 128, 256], [0, 2, 16, 4], [0, 0, 0, 4]])]
    pool = tmp_path / "pool.json"
    write_json(pool, {"format": POOL_FORMAT, "rules_version": RULES_VERSION, "tile": 16384, "agent": "ntuple",
                      "config": {}, "boards": [{"board": b, "score": _least_score(b)} for b in boards]})
    env = {**os.environ, "AI2048_TABLES": str(tmp_path / "none")}
    cmd = [sys.executable, str(SCRIPT), "endgame", "--set", "depth=1", "--pool", str(pool), "--workers", "1",
           "--seed", "5", "--why"]
    run = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    k = int(re.search(r"boards in (\d+) of 2", run.stdout).group(1))
    lost = re.search(r"the (\d+) lost games ended: (.*)", run.stdout)
    assert lost is not None and int(lost.group(1)) == 2 - k
    counts = [int(n) for n in re.findall(r"(?:table|formation|goal) (\d+)", lost.group(2))]
    assert sum(counts) == 2 - k
    refused = subprocess.run([*cmd[:2], "ntuple", "--pool", str(pool), "--why"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert refused.returncode == 2 and "--why needs an agent with endgame tables" in refused.stderr
