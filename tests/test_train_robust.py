"""Trainers and ``ai2048 train`` under bad settings and signals (issue 18): no NaN accepted, no dead-end
run directories, SIGTERM saves like Ctrl-C, and a stop request acts within seconds."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
import typing
from pathlib import Path

import pytest

from ai2048.checkpoint import hold_run, read_jsonl
from ai2048.cli import main
from ai2048.train import TRAINERS, get_trainer
from ai2048.train.config import TorchRunConfig

FIELDS = [
    (name, f.name, typing.get_type_hints(get_trainer(name).config_cls)[f.name])
    for name in sorted(TRAINERS)
    for f in dataclasses.fields(get_trainer(name).config_cls)
]
FLOATS = [(t, f) for t, f, tp in FIELDS if tp is float]
BOOLS = [(t, f) for t, f, tp in FIELDS if tp is bool]


def test_fields__every_trainer_has_float_and_bool_settings_to_check() -> None:
    assert {t for t, _ in FLOATS} == set(TRAINERS) and len(FLOATS) > 40 and len(BOOLS) > 10


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize(("trainer", "field"), FLOATS)
def test_config__every_float_refuses_nan_and_infinity(trainer: str, field: str, value: float) -> None:
    cls = get_trainer(trainer).config_cls
    with pytest.raises(ValueError, match=field):
        cls(**{field: value})


@pytest.mark.parametrize("value", ["no", "false", 0, 1, None])
@pytest.mark.parametrize(("trainer", "field"), BOOLS)
def test_config__bool_settings_take_only_bools(trainer: str, field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"{field}=.* must be True or False"):
        get_trainer(trainer).config_cls(**{field: value})


@pytest.mark.parametrize("argv", [
    ["train", "ntuple", "--alpha", "nan"],
    ["train", "ntuple", "--lam", "nan"],
    ["train", "ntuple", "--init-value", "inf"],
    ["train", "ntuple", "--p-two", "nan"],
    ["train", "dqn", "--gamma", "nan"],
    ["train", "dqn", "--lr", "nan"],
    ["train", "dqn", "--device", "bogus"],
    ["train", "qnet", "--device", "cuda:x"],
    ["train", "policy", "--set", "lr"],
    ["train", "dqn", "--set", "lr=nan"],
])
def test_cli_train__bad_settings_fail_before_the_run_directory_exists(
        tmp_path: Path, argv: list[str], capsys) -> None:
    out = tmp_path / "run"
    usage_error = argv[-1] == "lr"  # --set without "=": argparse's usage error, exit code 2
    with pytest.raises(SystemExit, match="2") if usage_error else contextlib.nullcontext():
        assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
    assert not out.exists()


def test_cli_train__cuda_without_cuda_leaves_no_directory(tmp_path: Path, capsys) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    out = tmp_path / "run"
    assert main(["train", "dqn", "--device", "cuda", "--out", str(out)]) == 2
    assert "torch sees no CUDA device" in capsys.readouterr().err and not out.exists()
    assert main(["train", "lazyzero", "--device", "cuda", "--out", str(out)]) == 2
    assert not out.exists()


TORCH_TRAINERS = [n for n in sorted(TRAINERS) if issubclass(get_trainer(n).config_cls, TorchRunConfig)]


@pytest.mark.parametrize("name", TORCH_TRAINERS)
def test_torch_trainers__a_bad_device_fails_before_the_run_directory_exists(
        tmp_path: Path, name: str) -> None:
    """``run()`` itself (the Python API, no CLI to clean up after it) reads the device first."""
    assert set(TORCH_TRAINERS) >= {"dqn", "lazyzero", "policy", "qnet"}
    trainer = get_trainer(name)
    out = tmp_path / "run"
    with pytest.raises(ValueError, match="device='tpu' is not one of 'cpu', 'cuda', 'cuda:N', 'auto'"):
        trainer.run(trainer.config_cls(device="tpu", progress=False), out)
    assert not out.exists()


TINY_DQN = ["--episodes", "2", "--num-envs", "2", "--net", "fc", "--batch-size", "8",
            "--replay-ratio", "0.05", "--progress", "false", "--tensorboard", "false",
            "--checkpoint-every", "1"]


def test_cli_train__a_run_killed_before_its_first_checkpoint_restarts(tmp_path: Path, capsys) -> None:
    """What a SIGKILL in the first second leaves (config.json, a few metrics, no checkpoint)
    is no dead end."""
    out = tmp_path / "dqn"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"episodes": 2, "lr": 0.001}))
    (out / "metrics.jsonl").write_text('{"episode": 1}\n')
    (out / ".checkpoint.pt.x1y2.tmp").write_bytes(b"torn")
    assert main(["train", "dqn", *TINY_DQN, "--out", str(out), "--resume"]) == 2
    assert "holds no checkpoint yet" in capsys.readouterr().err
    assert main(["train", "dqn", *TINY_DQN, "--out", str(out)]) == 0
    assert "starting it afresh" in capsys.readouterr().err
    assert (out / "checkpoint.pt").is_file() and not list(out.glob(".*.tmp"))
    assert [r["episode"] for r in read_jsonl(out / "metrics.jsonl")][-1] == 2
    assert main(["train", "dqn", *TINY_DQN, "--out", str(out)]) == 2  # now it holds progress: refused
    assert "already holds a run" in capsys.readouterr().err


def test_cli_train__restart_never_touches_another_trainers_run(tmp_path: Path, capsys) -> None:
    out = tmp_path / "other"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"patterns": "4x6", "games": 10}))
    assert main(["train", "dqn", *TINY_DQN, "--out", str(out)]) == 2
    assert "another program's run" in capsys.readouterr().err
    (out / "meta.json").write_text(json.dumps({"trainer": "ntuple"}))
    assert main(["train", "dqn", *TINY_DQN, "--out", str(out)]) == 2
    assert "holds a run of trainer 'ntuple'" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "meta.json"]


@pytest.mark.parametrize("name", ["config.json", "meta.json"])
def test_cli_train__json_list_in_run_files_is_a_clear_error(tmp_path: Path, name: str, capsys) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / "weights.npz").write_bytes(b"")
    (out / name).write_text("[1, 2]")
    assert main(["train", "ntuple", "--out", str(out), "--resume"]) == 2
    assert "holds a JSON array, not an object" in capsys.readouterr().err
    assert main(["eval", str(out), "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_hold_run__removes_temp_files_of_killed_writes(tmp_path: Path) -> None:
    (tmp_path / ".weights.npz.abc.tmp").write_bytes(b"x")
    (tmp_path / ".meta.json.q.tmp").write_text("{")
    (tmp_path / "keep.tmp").write_text("not ours")
    with hold_run(tmp_path):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "keep.tmp"]


def _wait_for(check: typing.Callable[[], bool], proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _handles_sigterm(pid: int) -> bool:
    """True once process ``pid`` has a SIGTERM handler (Linux: the SigCgt mask in /proc/PID/status)."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        pytest.skip("needs /proc to see when the trainer's signal handler is installed")
    caught = next(line for line in status.read_text().splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)


def _spawn_cli(argv: list[str]) -> subprocess.Popen:
    """``ai2048 ARGV`` in a child process with one numba thread, its output captured as text."""
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from ai2048.cli import main; sys.exit(main())", *argv],
        env={**os.environ, "NUMBA_NUM_THREADS": "1"}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


def test_ntuple__sigterm_saves_like_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "nt"
    argv = ["train", "ntuple", "--patterns", "0123,4567", "--games", "100000", "--chunk", "20",
            "--checkpoint-every", "1000", "--seed", "3", "--out", str(out)]
    proc = _spawn_cli(argv)
    _wait_for(lambda: (out / "metrics.jsonl").is_file() and len(read_jsonl(out / "metrics.jsonl")) >= 2,
              proc, 300)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "interrupted: saved after" in stdout
    done = json.loads((out / "meta.json").read_text())["progress"]["games"]
    # saved at the stop, not at 1000
    assert done == read_jsonl(out / "metrics.jsonl")[-1]["games"] and 40 <= done < 1000


def test_policy__play_games_stops_when_asked() -> None:
    torch = pytest.importorskip("torch")
    import numpy as np

    from ai2048.train.policy import EpochStopped, play_games

    calls = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(EpochStopped):
        play_games(None, 50, seed=1, cutoff=0, random_frac=0.0, gen=np.random.default_rng(0),
                   device=torch.device("cpu"), stop=stop)
    assert len(calls) == 4


def test_policy__sigterm_in_a_long_epoch_stops_within_seconds(tmp_path: Path) -> None:
    """Default-style settings with a huge batch: one epoch takes far longer than the stop may."""
    pytest.importorskip("torch")
    out = tmp_path / "pol"
    argv = ["train", "policy", "--batch-size", "50000", "--progress", "false", "--tensorboard", "false",
            "--out", str(out)]
    proc = _spawn_cli(argv)
    _wait_for(lambda: _handles_sigterm(proc.pid), proc, 300)  # the training loop has begun
    time.sleep(1.0)  # inside the first epoch's games
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert time.monotonic() - t0 < 15 and proc.returncode == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["progress"]["step"] == 0


def test_lazyzero__a_stop_during_the_test_games_acts_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test batch after an epoch can take minutes (1000 games by default): a stop acts inside it,
    the epoch is recorded without its test, and the run saves and stops; --resume goes on."""
    pytest.importorskip("torch")
    from ai2048.train import lazyzero

    cfg = lazyzero.LazyZeroConfig(**{**lazyzero.PRESETS["tiny"], "num_envs": 4, "episodes_per_epoch": 4,
                                     "epochs": 2, "rollouts": 3, "test_rollouts": 2, "test_games": 3,
                                     "replay_min_games": 1, "minibatch_size": 16, "device": "cpu",
                                     "seed": 3})
    real = lazyzero.play_test
    asked: list[int] = []

    def signalled(cfg, fused, epoch, device, stop=None):  # noqa: ANN001, ANN202
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` during the test games

        def counting() -> bool:
            asked.append(1)
            return stop() if stop else False

        return real(cfg, fused, epoch, device, counting)

    monkeypatch.setattr(lazyzero, "play_test", signalled)
    out = tmp_path / "lz"
    lazyzero.run(cfg, out)
    assert len(asked) == 1  # stopped before the first test move
    [first] = read_jsonl(out / "metrics.jsonl")
    assert first["epoch"] == 1 and first["test_stopped"] and "test_moves_mean" not in first
    meta = json.loads((out / "meta.json").read_text())
    assert meta["progress"]["step"] == 1 and meta["status"] == "interrupted"
    monkeypatch.setattr(lazyzero, "play_test", real)
    lazyzero.run(cfg, out, resume=True)
    second = read_jsonl(out / "metrics.jsonl")[-1]
    assert second["epoch"] == 2 and "test_moves_mean" in second
    assert json.loads((out / "meta.json").read_text())["status"] == "completed"


def test_cli_train__ntuple_killed_before_its_first_checkpoint_restarts(tmp_path: Path, capsys) -> None:
    """A fresh n-tuple run writes config.json, then its first weights.npz: a SIGKILL between left a
    directory that neither a rerun nor --resume accepted."""
    from ai2048.train.ntuple import NTupleConfig

    out = tmp_path / "nt"
    out.mkdir()
    argv = ["train", "ntuple", "--patterns", "0123,4567", "--games", "20", "--chunk", "20",
            "--checkpoint-every", "20", "--seed", "3", "--out", str(out)]
    config = NTupleConfig(patterns="0123,4567", games=20, chunk=20, checkpoint_every=20, seed=3)
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(config)))
    assert main([*argv, "--resume"]) == 2
    assert "holds no checkpoint yet (weights.npz" in capsys.readouterr().err
    assert main(argv) == 0
    assert json.loads((out / "meta.json").read_text())["progress"]["games"] == 20
    assert main(argv) == 2 and "already holds a run" in capsys.readouterr().err


@pytest.mark.slow
def test_ntuple__a_stop_inside_a_long_chunk_acts_within_a_kernel_call_and_resumes_exactly(
        tmp_path: Path) -> None:
    """One chunk of 20,000 games used to run to its end after Ctrl-C; now the stop waits for at most
    STOP_GAMES games, and the resumed run's weights equal an uninterrupted run's (workers=1)."""
    import numpy as np

    from ai2048.ntuple.network import load_file
    from ai2048.train.ntuple import STOP_GAMES, NTupleConfig, run

    cfg = NTupleConfig(patterns="0123,4567", games=20_000, chunk=20_000, checkpoint_every=20_000, seed=5)
    out = tmp_path / "stopped"
    argv = ["train", "ntuple", "--patterns", "0123,4567", "--games", "20000", "--chunk", "20000",
            "--checkpoint-every", "20000", "--seed", "5", "--out", str(out)]
    proc = _spawn_cli(argv)
    _wait_for(lambda: _handles_sigterm(proc.pid), proc, 300)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "interrupted: saved after" in stdout
    done = json.loads((out / "meta.json").read_text())["progress"]["games"]
    assert done % STOP_GAMES == 0 and 0 < done < 20_000, done
    assert [r["games"] for r in read_jsonl(out / "metrics.jsonl")] == [done]
    run(cfg, out, resume=True)
    full = run(cfg, tmp_path / "full")
    assert np.array_equal(load_file(out / "weights.npz")[0].w, load_file(full / "weights.npz")[0].w)
