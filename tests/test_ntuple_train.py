"""`ai2048 train ntuple`: determinism, exact resume, crash safety, bad input, CLI and agent."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ai2048 import Game, legal_mask
from ai2048.agents import load_agent, make_agent
from ai2048.checkpoint import hold_run, read_jsonl
from ai2048.cli import main
from ai2048.ntuple.network import load_file
from ai2048.train import get_trainer
from ai2048.train.ntuple import NTupleConfig, run

DATA = Path(__file__).parent / "data"
TINY = NTupleConfig(patterns="0123,4567", games=60, chunk=20, checkpoint_every=20, seed=3)


def weights(out: Path) -> np.ndarray:
    net, _ = load_file(out / "weights.npz")
    return net.w


def test_run__writes_run_directory(tmp_path: Path) -> None:
    out = run(TINY, tmp_path / "r")
    assert {p.name for p in out.iterdir()} >= {"config.json", "meta.json", "metrics.jsonl", "weights.npz"}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["agent"] == "ntuple" and meta["progress"]["games"] == 60
    recs = read_jsonl(out / "metrics.jsonl")
    assert [r["games"] for r in recs] == [20, 40, 60]
    assert recs[0]["tiles"][-1]["reach"] > 0 and {"reach_lo", "reach_hi", "end"} <= set(recs[0]["tiles"][0])
    assert np.count_nonzero(weights(out)) > 0


def test_run__same_seed_same_weights(tmp_path: Path) -> None:
    a = run(TINY, tmp_path / "a")
    b = run(TINY, tmp_path / "b")
    c = run(replace(TINY, seed=4), tmp_path / "c")
    assert np.array_equal(weights(a), weights(b))
    assert not np.array_equal(weights(a), weights(c))


def test_resume__equals_uninterrupted_run(tmp_path: Path) -> None:
    full = run(TINY, tmp_path / "full")
    part = run(replace(TINY, games=40), tmp_path / "part")
    run(TINY, part, resume=True)
    assert np.array_equal(weights(full), weights(part))
    def timeless(r: dict) -> dict:
        return {k: v for k, v in r.items() if "per_s" not in k and k != "time"}

    strip = [timeless(r) for r in read_jsonl(full / "metrics.jsonl")]
    again = [timeless(r) for r in read_jsonl(part / "metrics.jsonl")]
    assert strip == again


def test_options__tc_otd_multistage_restarts_and_before_state_train(tmp_path: Path) -> None:
    cfg = replace(
        TINY, tc=True, alpha=1.0, init_value=1000.0, stages=(6,), restart_prob=0.5, restart_tile=5, lam=0.5,
    )
    out = run(cfg, tmp_path / "opts")
    _, arrays = load_file(out / "weights.npz", extra=("train_ready", "train_a", "train_pool_n"))
    assert list(arrays["train_ready"]) == [1, 1]  # stage 1 promoted from stage 0
    assert arrays["train_a"].max() > 0 and arrays["train_pool_n"].sum() > 0
    assert sum(r["restarted"] for r in read_jsonl(out / "metrics.jsonl")) > 0
    before = run(replace(TINY, state="before", seed004_double_reward=True, games=20), tmp_path / "before")
    assert load_agent(before).net.kind == "before"


@pytest.mark.parametrize(
    "bad",
    [
        {"games": 0}, {"alpha": 0.0}, {"state": "during"}, {"update": "sideways"}, {"patterns": "xyz"},
        {"lam": 0.5, "update": "online"}, {"seed004_double_reward": True}, {"stages": (14, 13)},
        {"checkpoint_every": 30}, {"workers": 0}, {"restart_prob": 2.0},
    ],
)
def test_config__bad_values_raise(bad: dict) -> None:
    with pytest.raises(ValueError):
        replace(TINY, **bad)


def test_resume__missing_foreign_or_changed_run_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        run(TINY, tmp_path / "missing", resume=True)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        run(TINY, tmp_path / "empty", resume=True)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "meta.json").write_text('{"agent": "dqn", "trainer": "dqn"}')
    (foreign / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="trainer 'dqn'"):
        run(TINY, foreign, resume=True)
    out = run(replace(TINY, games=20), tmp_path / "r")
    with pytest.raises(ValueError, match="alpha"):
        run(replace(TINY, alpha=0.5), out, resume=True)
    with pytest.raises(ValueError, match="already holds a run"):
        run(TINY, out)
    (out / "weights.npz").write_bytes((out / "weights.npz").read_bytes()[:100])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        run(TINY, out, resume=True)


def test_agent__plays_legal_moves_at_depth_1_and_2(tmp_path: Path) -> None:
    out = run(replace(TINY, games=20), tmp_path / "r")
    for agent in (load_agent(out), make_agent("ntuple", weights=str(out), depth=2, tt_bits=10)):
        g = Game(seed=2)
        for _ in range(60):
            if g.is_over:
                break
            a = agent.act(g.board)
            assert legal_mask(g.board)[int(a)]
            g.step(a)
        assert set(agent.explain(Game(seed=1).board)) <= {"up", "right", "down", "left"}
    with pytest.raises(ValueError, match="patterns"):
        make_agent("ntuple", weights=str(out), patterns="4x6")
    with pytest.raises(FileNotFoundError):
        make_agent("ntuple", weights=str(tmp_path / "nowhere"))


def test_cli__train_resume_and_play(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert get_trainer("ntuple").config_cls is NTupleConfig
    out = tmp_path / "cli"
    args = ["train", "ntuple", "--patterns", "0123,4567", "--games", "20", "--alpha", "0.1", "--seed", "3",
            "--chunk", "20", "--checkpoint-every", "20", "--out", str(out)]
    assert main(args) == 0
    assert main(["train", "ntuple", "--out", str(out), "--resume", "--games", "40"]) == 0
    assert json.loads((out / "meta.json").read_text())["progress"]["games"] == 40
    assert main(["train", "ntuple", "--out", str(tmp_path / "nope"), "--resume"]) == 2
    assert "cannot resume" in capsys.readouterr().err
    with hold_run(out):  # as if another process were still training this run
        assert main(["train", "ntuple", "--out", str(out), "--resume", "--games", "60"]) == 2
    assert "is being trained by another process (pid " in capsys.readouterr().err
    assert json.loads((out / "meta.json").read_text())["progress"]["games"] == 40
    assert main(["train", "ntuple", "--preset", "tc", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "not made with --preset tc" in err and "patterns: run '0123,4567' vs preset '4x6'" in err
    assert main(["train", "dqn", "--out", str(out), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "is a run of trainer 'ntuple', not 'dqn'" in err and "ai2048 train ntuple" in err


@pytest.mark.slow
def test_sigkill_and_ctrl_c__lose_at_most_games_since_checkpoint(tmp_path: Path) -> None:
    """SIGKILL a training process mid-run, then Ctrl-C the resumed one, then finish: the weights
    equal an uninterrupted run's, so nothing but the games since a checkpoint was lost."""
    cfg = replace(TINY, games=4000, chunk=20, checkpoint_every=40)
    out = tmp_path / "killed"
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\nfrom ai2048.train.ntuple import NTupleConfig, run\n"
        "run(NTupleConfig(patterns='0123,4567', games=4000, chunk=20, checkpoint_every=40, seed=3), "
        "Path(sys.argv[1]), resume=sys.argv[2] == '1')\n"
    )
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}
    done = 0
    for sig, resume in ((signal.SIGKILL, "0"), (signal.SIGINT, "1")):
        proc = subprocess.Popen(
            [sys.executable, str(script), str(out), resume], env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        deadline = time.time() + 300
        while time.time() < deadline:
            meta = out / "meta.json"
            if meta.is_file() and json.loads(meta.read_text())["progress"]["games"] >= done + 80:
                break
            time.sleep(0.1)
        proc.send_signal(sig)
        stdout, _ = proc.communicate(timeout=120)
        if sig == signal.SIGINT:
            assert proc.returncode == 0 and b"interrupted" in stdout
        done = json.loads((out / "meta.json").read_text())["progress"]["games"]
        assert 80 <= done < 4000
    run(cfg, out, resume=True)
    full = run(cfg, tmp_path / "full")
    assert np.array_equal(weights(out), weights(full))
    assert [r["games"] for r in read_jsonl(out / "metrics.jsonl")] == list(range(20, 4001, 20))


@pytest.mark.slow
def test_sigkill_during_checkpoint_write__last_checkpoint_loads_and_resumes(tmp_path: Path) -> None:
    """SIGKILL while ``weights.npz`` is being written (its temp file exists): the previous
    checkpoint still loads, agrees with ``meta.json``, and resumes to an uninterrupted run's weights."""
    cfg = NTupleConfig(patterns="012345", games=400, chunk=20, checkpoint_every=20, seed=5)  # a 64 MiB table
    out = tmp_path / "killed"
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nfrom pathlib import Path\nfrom ai2048.train.ntuple import NTupleConfig, run\n"
        "run(NTupleConfig(patterns='012345', games=400, chunk=20, checkpoint_every=20, seed=5),"
        " Path(sys.argv[1]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(script), str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    killed = False
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        meta = out / "meta.json"
        done = meta.is_file() and json.loads(meta.read_text())["progress"]["games"] >= 40
        if done and list(out.glob(".weights.npz.*")):
            proc.send_signal(signal.SIGKILL)
            killed = True
            break
        time.sleep(0.001)
    proc.wait(timeout=60)
    assert killed, "the run ended before a checkpoint write was caught"
    assert list(out.glob(".weights.npz.*"))  # the write was cut short
    _, arrays = load_file(out / "weights.npz", extra=("train_done",))
    done = int(arrays["train_done"])
    assert 40 <= done < 400 and done == json.loads((out / "meta.json").read_text())["progress"]["games"]
    run(cfg, out, resume=True)
    full = run(cfg, tmp_path / "full")
    assert np.array_equal(weights(out), weights(full))


def test_resume__run_written_by_the_previous_trainer_continues_exactly(tmp_path: Path) -> None:
    """A run directory written by the trainer of commit 2df9267 (before streamed checkpoints and
    thread workers; TC, a second stage, restarts) resumes, and its 40 games end with the weights
    that trainer reached in an uninterrupted 40-game run."""
    out = tmp_path / "old"
    shutil.copytree(DATA / "ntuple_run_v1", out)
    cfg = NTupleConfig(
        patterns="0123,4567", games=40, chunk=20, checkpoint_every=20, seed=3, tc=True, alpha=1.0,
        stages=(6,),
        restart_prob=0.5, restart_tile=5,
    )
    run(cfg, out, resume=True)
    old, _ = load_file(DATA / "ntuple_run_v1_weights40.npz")
    assert np.array_equal(weights(out), old.w)
    _, arrays = load_file(out / "weights.npz", extra=("train_done", "train_ready"))
    assert int(arrays["train_done"]) == 40 and list(arrays["train_ready"]) == [1, 1]


def test_run__time_budget_stops_after_a_chunk_and_saves(tmp_path: Path) -> None:
    out = run(replace(TINY, duration=1e-6), tmp_path / "t")
    meta = json.loads((out / "meta.json").read_text())
    assert meta["progress"]["games"] == 20 and len(read_jsonl(out / "metrics.jsonl")) == 1
