"""``ai2048 pool --from``: a restart pool replayed from an evaluation's games, no game played."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai2048.cli import main
from ai2048.evaluate.pool import pool_from_games, read_pool
from ai2048.records import replay_actions


def test_pool_from_games__keeps_each_games_first_board_holding_the_tile(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(["eval", "greedy", "--games", "6", "--seed", "3", "--out", str(out), "--no-progress"]) == 0
    games = json.loads(out.read_text())["games"]
    pool_file = tmp_path / "p.json"
    assert main(["pool", "--from", str(out), "--tile", "128", "--out", str(pool_file)]) == 0
    pool = read_pool(pool_file)
    reached = [g for g in games if g["max_tile"] >= 128]
    assert 0 < pool.boards.size <= len(reached) and pool.agent == "greedy"
    for g, b, score in zip(reached, pool.boards, pool.scores, strict=False):
        t = replay_actions(g["seed"], g["actions"])
        k = int((t.max_tiles >= 128).argmax())
        assert (int(t.boards[k]), int(t.scores[k])) == (int(b), int(score))
    assert f"games reached 128: pool written to {pool_file}" in capsys.readouterr().out


def test_pool_from_games__refuses_what_is_not_an_evaluation(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "something"}')
    with pytest.raises(ValueError, match="not an evaluation result"):
        pool_from_games(bad, 128)
    assert main(["pool", "--from", str(tmp_path / "none.json"), "--out", str(tmp_path / "p.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["pool", "--out", str(tmp_path / "p.json")]) == 2
    assert "name an AGENT" in capsys.readouterr().err
    assert main(["pool", "greedy", "--from", str(bad), "--out", str(tmp_path / "p.json")]) == 2
    assert "not both" in capsys.readouterr().err
