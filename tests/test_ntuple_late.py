"""Late-game training: restart pools (``ai2048 pool``, ``train ntuple --restart-pool``) and a stage
read downgraded (``--downgrade highest``; the kernels' rule is checked against a slow reference in
test_ntuple_network.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ai2048.agents.base import load_agent, run_settings
from ai2048.agents.ntuple import DOWNGRADES
from ai2048.checkpoint import read_jsonl
from ai2048.cli import main
from ai2048.cli._agents import choose_agent
from ai2048.evaluate.pool import POOL_FORMAT, make_pool, read_pool, save_pool
from ai2048.ntuple.network import load_file
from ai2048.records import max_tiles
from ai2048.rules import RULES_VERSION
from ai2048.train.ntuple import NTupleConfig, eval_command, eval_settings, run

TINY = NTupleConfig(patterns="0123,4567", games=40, chunk=10, checkpoint_every=10, seed=3)


@pytest.fixture(scope="module")
def pool_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first board holding a 64 in each of 8 random-agent games."""
    path = tmp_path_factory.mktemp("pool") / "pool64.json"
    _, data = make_pool("random", {}, tile=64, games=8, seed=100, workers=1, progress=False)
    save_pool(path, data)
    return path


def test_pool__each_board_is_the_first_holding_the_tile_and_the_same_seed_gives_the_same_pool(
    pool_file: Path,
) -> None:
    pool = read_pool(pool_file)
    again, _ = make_pool("random", {}, tile=64, games=8, seed=100, workers=2, progress=False)
    assert pool.boards.size > 0 and np.array_equal(pool.boards, again.boards)
    assert (max_tiles(pool.boards) == 64).all()  # a move makes at most one tile above the largest
    data = json.loads(pool_file.read_text())
    assert data["format"] == POOL_FORMAT and data["patterns"] is None and data["tile"] == 64
    assert [r["seed"] for r in data["boards"]] == sorted(r["seed"] for r in data["boards"])
    assert all(100 <= r["seed"] < 108 and r["moves"] > 0 for r in data["boards"])


def _bad(tmp_path: Path, **change: object) -> Path:
    data = {"format": POOL_FORMAT, "rules_version": RULES_VERSION, "tile": 64, "agent": "random",
            "config": {},
            "patterns": None, "seed": 0, "games": 1, "boards": [{"seed": 0, "board": 0x16, "score": 300}]}
    data.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"format": "something"}, "is not a restart pool"),
        ({"rules_version": RULES_VERSION + 1}, "made under rules version"),
        ({"boards": []}, "holds no boards"),
        ({"boards": [{"seed": 0, "board": 0x15, "score": 100}]},
         "board 0 has largest tile 32, below the pool's tile 64"),
        ({"boards": [{"seed": 0, "score": 1}]}, "board 0 is not a board a game reaches: it has no board"),
        ({"tile": 48}, r"tile=48 must be a power of two in 4..32768"),
        ({"tile": 65536}, r"tile=65536 must be a power of two in 4..32768"),
        ({"boards": [{"board": 0xFFFF_FFFF_FFFF_FFFF, "score": 10**6}]}, "holds no 2 or 4"),
        ({"boards": [{"board": 0x1213_3121_1213_3121, "score": 40}]}, "has no legal move"),
        ({"boards": [{"board": 0x16, "score": 300.0}]}, "score=300.0 must be a whole number"),
        ({"boards": [{"board": 22.0, "score": 300}]}, "board=22.0 must be a whole number"),
        ({"boards": [{"board": 0x16, "score": 5000}]}, r"score 5000 is not one its tiles make \(256..320\)"),
        ({"boards": [{"board": 0x16, "score": 300, "moves": 3}]}, "which 3 moves cannot spawn"),
        ({"boards": [[0x16, 300]]}, "it is a list, not an object"),
    ],
)
def test_read_pool__bad_files_raise_naming_the_fix(tmp_path: Path, change: dict, match: str) -> None:
    """Boards no game reaches (sixteen 32768s, no legal move, a float, a score or a move count its
    tiles cannot have) are refused, naming the board and the fix."""
    assert read_pool(_bad(tmp_path)).boards.tolist() == [0x16]
    with pytest.raises(ValueError, match=match):
        read_pool(_bad(tmp_path, **change))
    with pytest.raises(ValueError, match="does not exist; make one with `ai2048 pool"):
        read_pool(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="is not a file"):
        read_pool(tmp_path)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"restart_pool": "p.json"}, "needs restart_prob > 0"),
        ({"downgrade": "highest", "state": "before"}, "reads after-states"),
        ({"downgrade": "lowest"}, "downgrade='lowest' is not one of 'none', 'highest', 'residual'"),
    ],
)
def test_config__bad_late_game_values_raise(bad: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        replace(TINY, **bad)


def test_run__pool_of_another_pattern_set_or_too_few_boards_fails_before_any_write(tmp_path: Path) -> None:
    other = _bad(tmp_path, patterns="012345,456789,012456,45689a")
    cfg = replace(TINY, restart_pool=str(other), restart_prob=1.0, restart_tile=6)
    with pytest.raises(ValueError, match="comes from a network with patterns 012345"):
        run(cfg, tmp_path / "a")
    with pytest.raises(ValueError, match="holds 1 boards for 2 workers"):
        run(replace(cfg, restart_pool=str(_bad(tmp_path)), workers=2), tmp_path / "b")
    with pytest.raises(ValueError, match="set --restart-tile 6"):
        run(replace(cfg, restart_pool=str(_bad(tmp_path)), restart_tile=7), tmp_path / "c")
    assert not any((tmp_path / d).exists() for d in "abc")


def test_run__restarts_from_the_pool_keeps_it_in_the_checkpoint_and_resumes_exactly(
    pool_file: Path, tmp_path: Path
) -> None:
    cfg = replace(TINY, restart_pool=str(pool_file), restart_prob=1.0, restart_tile=6, chain_restarts=10,
                  downgrade="highest")
    a = run(cfg, tmp_path / "a")
    recs = read_jsonl(a / "metrics.jsonl")
    assert [r["restarted"] for r in recs] == [10] * 4 and all(r["restart_tiles"] for r in recs)
    assert all(r["score_mean"] is None and r["chain_moves"] > 0 for r in recs)
    assert all(r["restart_score_mean"] > 0 and r["restart_moves_mean"] > 0 for r in recs)
    _, arrays = load_file(a / "weights.npz", extra=("train_pools", "train_pool_n"))
    pool = read_pool(pool_file)
    n = pool.boards.size
    assert int(arrays["train_pool_n"][0]) == n
    assert np.array_equal(arrays["train_pools"][0][:n], pool.boards)
    part = run(replace(cfg, games=20), tmp_path / "part")
    run(cfg, part, resume=True)
    assert np.array_equal(load_file(part / "weights.npz")[0].w, load_file(a / "weights.npz")[0].w)
    assert eval_settings(cfg) == {"downgrade": "highest"}
    assert "--set downgrade=highest" in eval_command(cfg, a)
    # `ai2048 eval RUN` plays the run as it trained (the downgrade read from its meta.json), overrides win
    assert run_settings(a) == {"downgrade": "highest"}
    assert load_agent(a).downgrade == DOWNGRADES.index("highest")
    assert load_agent(a, downgrade="none").downgrade == 0
    built = choose_agent(str(a), {}).build()
    assert built[2] == {"weights": str(a), "downgrade": "highest"}  # what eval.json records


def test_run_settings__bad_plays_in_meta_is_a_clear_error(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "meta.json").write_text(json.dumps({"agent": "ntuple", "info": {"plays": ["downgrade"]}}))
    with pytest.raises(ValueError, match="info.plays must be an object of agent settings"):
        load_agent(run_dir)
    (run_dir / "meta.json").write_text(json.dumps({"agent": "ntuple", "info": {"plays": {"weights": "x"}}}))
    with pytest.raises(ValueError, match="not weights"):
        run_settings(run_dir)


def test_cli__pool_then_train_from_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    pool = tmp_path / "pool.json"
    assert main(["pool", "random", "--tile", "64", "--games", "4", "--seed", "7", "--out", str(pool)]) == 0
    assert "games reached 64: pool written to" in capsys.readouterr().out
    assert main(["pool", "random", "--tile", "100", "--out", str(pool)]) == 2
    assert "--tile=100 must be a power of two in 4..32768 (e.g. 16384)" in capsys.readouterr().err
    for tile in ("65536", "2"):  # tiles the rules cannot make, or no game starts below: refused before a game
        assert main(["pool", "random", "--tile", tile, "--out", str(tmp_path / "other.json")]) == 2
        assert f"--tile={tile} must be a power of two in 4..32768" in capsys.readouterr().err
    out = tmp_path / "run"
    assert main(["train", "ntuple", "--patterns", "0123,4567", "--restart-pool", str(pool), "--restart-prob",
                 "1", "--restart-tile", "6", "--games", "20", "--chunk", "10", "--checkpoint-every", "10",
                 "--out", str(out)]) == 0
    assert [r["restarted"] for r in read_jsonl(out / "metrics.jsonl")] == [10, 10]
