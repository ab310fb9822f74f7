"""TensorBoard logs of the torch trainers: tiny runs write ``RUN/tb/``, read back with tensorboard's
reader."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from ai2048.checkpoint import read_jsonl  # noqa: E402
from ai2048.train.config import make_config  # noqa: E402
from ai2048.train.dqn import DQNConfig  # noqa: E402
from ai2048.train.dqn import run as run_dqn  # noqa: E402
from ai2048.train.policy import PolicyConfig  # noqa: E402
from ai2048.train.policy import run as run_policy  # noqa: E402
from ai2048.train.qnet import QNetConfig  # noqa: E402
from ai2048.train.qnet import run as run_qnet  # noqa: E402

GAME_TAGS = {
    "episode", "games", "score", "length", "max_tile", "loss", "epsilon", "env_steps", "grad_steps", "time"
}
EPOCH_TAGS = {
    "epoch", "score", "score_avg", "score_max", "length", "max_tile", "loss", "epsilon", "train_moves",
    "games", "time",
}
TRAINERS = {  # name: (config class, run, tiny settings, step field, scalar tags)
    "dqn": (
        DQNConfig, run_dqn,
        {
            "episodes": 5, "num_envs": 4, "net": "conv", "batch_size": 16, "replay_ratio": 0.1,
            "checkpoint_every": 2,
        },
        "episode", GAME_TAGS | {"reward"},
    ),
    "qnet": (
        QNetConfig, run_qnet,
        {"episodes": 5, "num_envs": 4, "batch_size": 16, "replay_ratio": 0.2, "checkpoint_every": 2},
        "episode", GAME_TAGS,
    ),
    "policy": (
        PolicyConfig, run_policy,
        {"epochs": 5, "batch_size": 6, "forget_interval": 3, "cutoff": 30, "checkpoint_every": 2},
        "epoch", EPOCH_TAGS,
    ),
}


def _scalars(run_dir) -> dict[str, list[tuple[int, float]]]:
    """Every scalar series of ``run_dir/tb`` as [(step, value)], without the reader's own purging."""
    acc = EventAccumulator(str(run_dir / "tb"), size_guidance={"scalars": 0}, purge_orphaned_data=False)
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


@pytest.mark.parametrize("name", list(TRAINERS))
def test_tensorboard__tiny_run_writes_one_scalar_per_record_and_tag(tmp_path, name):
    cls, run, tiny, key, tags = TRAINERS[name]
    out = run(make_config(cls, **{**tiny, "progress": False, "tensorboard": True}), tmp_path / name)
    records = read_jsonl(out / "metrics.jsonl")
    series = _scalars(out)
    assert set(series) == tags  # the step field and the list of action counts are not scalars
    for tag in tags:
        expected = [(r[key], pytest.approx(float(r[tag]), rel=1e-6)) for r in records if r[tag] is not None]
        assert series[tag] == expected, tag
    assert [s for s, _ in series["score"]] == list(range(1, len(records) + 1))
    assert len(records) >= tiny.get("episodes", tiny.get("epochs"))


def test_tensorboard__off_or_not_installed_writes_no_tb_dir(tmp_path, monkeypatch):
    cls, run, tiny, _, _ = TRAINERS["dqn"]
    off = make_config(cls, **{**tiny, "episodes": 2, "progress": False, "tensorboard": False})
    out = run(off, tmp_path / "off")
    assert not (out / "tb").exists() and (out / "metrics.jsonl").exists()
    monkeypatch.setattr("ai2048.train.run.tensorboard_available", lambda: False)
    wanted = make_config(cls, **{**tiny, "episodes": 2, "progress": False, "tensorboard": True})
    out = run(wanted, tmp_path / "missing")
    assert not (out / "tb").exists() and len(read_jsonl(out / "metrics.jsonl")) >= 2


def test_tensorboard__resume_after_a_crash_keeps_each_step_once(tmp_path):
    """A run that logged past its last checkpoint and is resumed: tb/ is rebuilt, no step twice."""
    cls, run, tiny, _, _ = TRAINERS["dqn"]
    cfg = {**tiny, "progress": False, "tensorboard": True}
    part = run(make_config(cls, **{**cfg, "episodes": 3}), tmp_path / "part")
    saved = tmp_path / "checkpoint-at-3.pt"
    shutil.copy(part / "checkpoint.pt", saved)
    run(make_config(cls, **{**cfg, "episodes": 6}), part, resume=True)
    n_logged = len(read_jsonl(part / "metrics.jsonl"))
    shutil.copy(saved, part / "checkpoint.pt")  # as if it crashed after logging games past the checkpoint
    run(make_config(cls, **{**cfg, "episodes": 6}), part, resume=True)
    records = read_jsonl(part / "metrics.jsonl")
    steps = [s for s, _ in _scalars(part)["score"]]
    assert len(records) == n_logged
    assert steps == list(range(1, len(records) + 1))
    assert [v for _, v in _scalars(part)["score"]] == [r["score"] for r in records]
