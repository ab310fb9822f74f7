"""The one run directory and loop skeleton (``ai2048.train.run``) and its tolerant readers.

``tests/data/runs_v1`` holds tiny run directories of all five trainers as the code before
``train/run.py`` wrote them: they must still read in the one shape, resume, plot and pack.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ai2048 import Game, legal_mask
from ai2048.agents import load_agent
from ai2048.checkpoint import (
    RUN_META_FORMAT,
    read_jsonl,
    read_run_config,
    read_run_meta,
    read_run_metrics,
    run_record,
)
from ai2048.checks import setting
from ai2048.cli import main
from ai2048.rules import CAPPED_RULES, RULES_VERSION
from ai2048.train import Trainer
from ai2048.train.config import RunConfig
from ai2048.train.run import BUDGET, Counters, Loop, open_run, saved_config, start, write_meta

OLD = Path(__file__).parent / "data" / "runs_v1"

# (trainer, step, games, status) of each old fixture, as its meta.json says in its own words
OLD_META = {
    "dqn": (3, 3, "completed"),
    "qnet": (3, 3, "completed"),
    "policy": (3, 6, "completed"),
    "lazyzero": (2, 4, "completed"),
    "ntuple": (40, 40, "completed"),
}


@dataclass(frozen=True)
class TinyConfig:
    """A trainer config with one setting, a budget and a resumable total."""

    lr: float = field(default=0.1, metadata={"help": "a setting"})
    steps: int = field(default=3, metadata={"help": "total"})
    duration: float = field(default=0.0, metadata={"help": "budget"})


def _no_run(*args: object) -> None:
    raise AssertionError("the tests here open run directories and loops only")


TINY = Trainer("tiny", "a trainer of one setting", TinyConfig, _no_run, resumable=("steps",))
"""The trainer of :class:`TinyConfig`; ``steps`` may change on resume."""


# ---------------------------------------------------------------- tolerant readers


@pytest.mark.parametrize("name", list(OLD_META))
def test_read_run_meta__every_old_layout_maps_to_the_one_schema(name: str) -> None:
    meta = read_run_meta(OLD / name)
    step, games, status = OLD_META[name]
    assert meta["format"] == RUN_META_FORMAT and meta["agent"] == name and meta["trainer"] == name
    assert meta["rules_version"] == CAPPED_RULES and meta["status"] == status  # made under version 0
    assert (meta["progress"]["step"], meta["progress"]["games"]) == (step, games)
    assert isinstance(meta["progress"]["time"], float) and isinstance(meta["info"], dict)


def test_read_run_meta__keeps_what_old_layouts_knew() -> None:
    assert read_run_meta(OLD / "ntuple")["info"] == {"patterns": "0123,4567",
                                                       "state": "after", "stages": []}
    assert read_run_meta(OLD / "lazyzero")["info"]["parameters"] == 639
    dqn = read_run_meta(OLD / "dqn")["progress"]
    assert dqn["env_steps"] == 278 and dqn["grad_steps"] == 13
    assert dqn["time"] == pytest.approx(0.4422, abs=1e-4)


def test_read_run_meta__an_unfinished_old_ntuple_run_reads_as_running(tmp_path: Path) -> None:
    old = json.loads((OLD / "ntuple" / "meta.json").read_text())
    (tmp_path / "meta.json").write_text(json.dumps({**old, "games_done": 20}))
    meta = read_run_meta(tmp_path)
    assert meta["status"] == "running"
    assert meta["progress"] == {"step": 20, "games": 20, "time": old["train_seconds"]}


@pytest.mark.parametrize("name", list(OLD_META))
def test_run_record__old_metrics_read_in_the_one_shape(name: str) -> None:
    recs = read_run_metrics(OLD / name / "metrics.jsonl")
    raw = read_jsonl(OLD / name / "metrics.jsonl")
    assert [list(r)[:3] for r in recs] == [["step", "games", "time"]] * len(raw)
    steps = [r["step"] for r in recs]
    assert steps == sorted(steps) and steps[-1] == OLD_META[name][0]
    assert recs[-1]["games"] == OLD_META[name][1]
    assert all(run_record(r) == r for r in recs)  # the one shape maps to itself


def test_run_record__lazyzero_epoch_counts_are_not_taken_for_totals() -> None:
    first, second = read_run_metrics(OLD / "lazyzero" / "metrics.jsonl")
    assert (first["games"], second["games"]) == (2, 4)  # the old "episodes", in total
    assert first["epoch_games"] == 2 and first["epoch_seconds"] == pytest.approx(0.7507, abs=1e-4)
    assert first["time"] is None and "seconds" not in first and "episodes" not in first


def test_run_record__ntuple_seconds_are_its_time() -> None:
    first = read_run_metrics(OLD / "ntuple" / "metrics.jsonl")[0]
    assert (first["step"], first["games"], first["time"]) == (20, 20, 0.002) and "seconds" not in first


def test_read_run_config__old_budget_names_become_duration(tmp_path: Path) -> None:
    assert read_run_config(OLD / "ntuple")[BUDGET] == 0.0 and "seconds" not in read_run_config(OLD / "ntuple")
    lz = json.loads((OLD / "lazyzero" / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({"config": {**lz, "max_minutes": 1.5}}))
    cfg = read_run_config(tmp_path)
    assert cfg[BUDGET] == 90.0 and "max_minutes" not in cfg and cfg["channels"] == 2


# ---------------------------------------------------------------- new and resumed runs


def test_start__new_run_writes_its_config_and_refuses_a_second(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert not start(out, TinyConfig(lr=0.2), TINY, False)
    assert json.loads((out / "config.json").read_text()) == {"lr": 0.2, "steps": 3, "duration": 0.0}
    with pytest.raises(ValueError, match="already holds a run; pass --resume"):
        start(out, TinyConfig(), TINY, False)


def test_start__resume_checks_name_the_problem(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with pytest.raises(FileNotFoundError, match="cannot resume: run directory .* does not exist"):
        start(out, TinyConfig(), TINY, True)
    start(out, TinyConfig(), TINY, False)
    with pytest.raises(FileNotFoundError, match="holds no checkpoint yet"):
        start(out, TinyConfig(), TINY, True)
    write_meta(out, "tiny", "other", "running", {"step": 1, "games": 1, "time": 0.0})
    with pytest.raises(ValueError, match="is a run of trainer 'other', not 'tiny'"):
        start(out, TinyConfig(), TINY, True)
    write_meta(out, "tiny", "tiny", "running", {"step": 1, "games": 1, "time": 0.0})
    with pytest.raises(FileNotFoundError, match=r"holds no checkpoint yet \(checkpoint.pt"):
        start(out, TinyConfig(), TINY, True)
    (out / "checkpoint.pt").write_bytes(b"x")
    with pytest.raises(ValueError,
                       match=r"different settings: lr \(saved 0.1, now 0.5\); only steps may change"):
        start(out, TinyConfig(lr=0.5), TINY, True)
    assert start(out, TinyConfig(steps=9), TINY, True)
    assert json.loads((out / "config.json").read_text())["steps"] == 9
    meta = json.loads((out / "meta.json").read_text())
    (out / "meta.json").write_text(json.dumps({**meta, "rules_version": RULES_VERSION + 1}))
    with pytest.raises(ValueError, match="rules version"):
        start(out, TinyConfig(), TINY, True)


def test_start__a_deleted_meta_json_does_not_stop_a_resume(tmp_path: Path, capsys) -> None:
    """Before: 'has no meta.json/config.json, so it is not a run directory', though the checkpoint
    holds the run's state (meta.json is written again at the next save)."""
    out = tmp_path / "run"
    start(out, TinyConfig(), TINY, False)
    (out / "checkpoint.pt").write_bytes(b"x")
    assert start(out, TinyConfig(steps=9), TINY, True)
    assert "meta.json is missing and is written again at the next checkpoint" in capsys.readouterr().err
    (out / "config.json").unlink()
    with pytest.raises(FileNotFoundError, match="has no config.json"):
        start(out, TinyConfig(), TINY, True)


def test_open_run__the_one_check_of_the_cli_and_the_trainers(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    assert open_run(out, TINY, False) == open_run(out, TINY, False, clear=True)  # nothing there: a new run
    assert not open_run(out, TINY, False).restart and not out.exists()
    start(out, TinyConfig(), TINY, False)
    (out / "metrics.jsonl").write_text('{"step": 1}\n')
    # killed before its first checkpoint: reported, and cleared only when asked (the CLI, holding the run)
    assert open_run(out, TINY, False).restart and (out / "config.json").is_file()
    assert not open_run(out, TINY, False, clear=True).restart
    assert "starting it afresh" in capsys.readouterr().err and sorted(p.name for p in out.iterdir()) == []
    start(out, TinyConfig(), TINY, False)
    with pytest.raises(FileNotFoundError, match="holds no checkpoint yet"):
        saved_config(out, "tiny", "checkpoint.pt")
    (out / "checkpoint.pt").write_bytes(b"x")
    assert saved_config(out, "tiny", "checkpoint.pt") == {"lr": 0.1, "steps": 3, "duration": 0.0}
    assert open_run(out, TINY, True).saved == {"lr": 0.1, "steps": 3, "duration": 0.0}
    with pytest.raises(ValueError, match="already holds a run"):
        open_run(out, TINY, False)
    write_meta(out, "tiny", "other", "running", {"step": 0, "games": 0, "time": 0.0})
    with pytest.raises(ValueError, match="continue it with `ai2048 train other"):
        saved_config(out, "tiny", "checkpoint.pt")
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "metrics.jsonl").write_text('{"step": 1}\n')  # records without a config: not ours to clear
    with pytest.raises(ValueError, match="already holds a run"):
        open_run(lone, TINY, False, clear=True)
    assert (lone / "metrics.jsonl").is_file()


# ---------------------------------------------------------------- the loop


@dataclass(frozen=True)
class LoopConfig(RunConfig):
    """The run fields a loop reads, with a checkpoint every 2 steps and no progress bar."""

    checkpoint_every: int = setting(2, "save every this many steps")
    progress: bool = setting(False, "no bar in tests")


class FileInMemory:
    """A checkpoint file kept in memory (the loop's :class:`~ai2048.train.run.CheckpointFile`)."""

    def __init__(self, saved: dict | None = None) -> None:
        self.saved = saved

    def write(self, path: Path, state: dict) -> None:
        self.saved = json.loads(json.dumps(state))

    def read(self, path: Path) -> dict:
        assert self.saved is not None
        return self.saved


def _loop(out: Path, saves: list[str], counters: Counters | None = None, file: FileInMemory | None = None,
          duration: float = 0.0, **kw) -> tuple[Loop, Counters]:
    """A loop over ``counters`` (default: steps ``n``, games ``g``) that records every save as
    ``status@step`` in ``saves``."""

    class Recording(Loop):
        def save(self, status: str) -> None:
            saves.append(f"{status}@{self.done}")
            super().save(status)

    out.mkdir(exist_ok=True)
    c = counters if counters is not None else Counters(n=0, g=0, elapsed=0.0)
    kw.setdefault("resumed", False)
    loop = Recording(out, LoopConfig(duration=duration), TINY, kw.pop("resumed"), counters=c, step="n",
                     games="g", checkpoint=file or FileInMemory(), **kw)
    return loop, c


def test_loop__runs_to_its_total_logs_one_shape_and_saves_on_cadence(tmp_path: Path, capsys) -> None:
    saves: list[str] = []
    loop, c = _loop(tmp_path, saves, total=5)
    loop.track(counters=c)
    with loop:
        while loop.running():
            c["n"] += 1
            c["g"] += 2
            loop.log({"score": c["n"]})
            loop.checkpoint()
    loop.finish()
    assert saves == ["running@2", "running@4", "completed@5"]
    recs = read_jsonl(tmp_path / "metrics.jsonl")
    assert [(r["step"], r["games"], r["score"]) for r in recs] == [(i, 2 * i, i) for i in range(1, 6)]
    assert list(recs[0]) == ["step", "games", "time", "score"]
    meta = read_run_meta(tmp_path)
    assert meta["status"] == "completed" and meta["progress"]["games"] == 10
    assert capsys.readouterr().out == ""


def test_loop__saves_what_it_tracks_and_restores_it_on_resume(tmp_path: Path) -> None:
    """Named states are entries of the checkpoint, a positional one's keys are entries themselves; a
    resumed loop restores them all (an ``optional`` entry an older checkpoint lacks keeps its start)."""
    saves: list[str] = []
    file = FileInMemory()
    loop, c = _loop(tmp_path / "a", saves, file=file, total=3)
    extra = Counters(best=None)
    flat = Counters(epoch=0)
    loop.track(flat, counters=c, extra=extra)
    with loop:
        while loop.running():
            c["n"] += 1
            flat["epoch"] += 10
            extra["best"] = c["n"] * 7
    loop.finish()
    assert file.saved is not None and list(file.saved) == ["counters", "extra", "epoch"]
    assert file.saved["extra"] == {"best": 21} and file.saved["epoch"] == 30
    again, c2 = _loop(tmp_path / "a", saves, file=file, total=5, resumed=True)
    extra2, flat2 = Counters(best=None), Counters(epoch=0)
    again.track(flat2, counters=c2, extra=extra2)
    assert (c2["n"], extra2["best"], flat2["epoch"]) == (3, 21, 30)
    del file.saved["extra"]
    third, c3 = _loop(tmp_path / "a", saves, file=file, total=5, resumed=True)
    with pytest.raises(ValueError, match="holds no 'extra'; it is not a checkpoint of trainer 'tiny'"):
        third.track(counters=c3, extra=Counters(best=None))
    fresh = Counters(best=None)
    third.track(counters=c3, extra=fresh, optional=("extra",))
    assert fresh["best"] is None and c3["n"] == 3


def test_loop__budget_ends_it_completed_with_a_message(tmp_path: Path, capsys) -> None:
    saves: list[str] = []
    c = Counters(n=0, g=0, elapsed=4.5)
    loop, _ = _loop(tmp_path, saves, c, total=0, duration=5.0, clock="counted")
    with loop:
        assert loop.running()
        c["elapsed"] = 5.0
        assert not loop.running()
    c["n"] = 7
    loop.finish()
    assert saves == ["completed@7"] and loop.out_of_time
    assert "time budget of 5 s reached after 7 games" in capsys.readouterr().out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_loop__a_signal_stops_it_interrupted_and_it_saves(tmp_path: Path, capsys, sig: int) -> None:
    saves: list[str] = []
    loop, c = _loop(tmp_path, saves, total=1000)
    with loop:
        while loop.running():
            c["n"] += 1
            if c["n"] == 3:
                os.kill(os.getpid(), sig)
    loop.finish()
    assert c["n"] == 3 and saves == ["interrupted@3"]
    assert "interrupted: saved after 3 games" in capsys.readouterr().out
    assert signal.getsignal(sig) is not loop.stop._handler  # the old handler is back


def test_loop__resume_truncates_records_past_the_checkpoint_old_shapes_too(tmp_path: Path) -> None:
    shutil.copy(OLD / "ntuple" / "metrics.jsonl", tmp_path / "metrics.jsonl")
    file = FileInMemory({"counters": {"n": 20, "g": 20, "elapsed": 0.0}})
    loop, c = _loop(tmp_path, [], file=file, total=60, resumed=True)
    loop.track(counters=c)
    with loop:
        pass
    assert [r["step"] for r in read_run_metrics(tmp_path / "metrics.jsonl")] == [20]


def test_write_meta__progress_needs_step_games_time(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs games, time"):
        write_meta(tmp_path, "a", "a", "running", {"step": 1})


def test_run_module__imports_no_torch() -> None:
    code = ("import sys, ai2048.train.run, ai2048.train.ntuple; "
            "assert 'torch' not in sys.modules, 'torch loaded'")
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------- old run directories, end to end


def _old_copy(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copytree(OLD / name, out)
    return out


OLD_RESUME = {  # the flags that give each old run more to do
    "dqn": ["--episodes", "5"],
    "qnet": ["--episodes", "5"],
    "policy": ["--epochs", "5"],
    "ntuple": ["--games", "60"],
}


@pytest.mark.parametrize("name", list(OLD_RESUME))
def test_old_run_dir__resumes_through_the_cli_then_plots(tmp_path: Path, name: str, capsys) -> None:
    """A run directory of the code before train/run.py continues with ``--resume`` (its config.json,
    meta.json and metrics.jsonl in the old shapes), writes the one shape after, and plots."""
    if name != "ntuple":
        pytest.importorskip("torch")

    out = _old_copy(tmp_path, name)
    old_records = read_jsonl(out / "metrics.jsonl")
    assert main(["train", name, "--out", str(out), "--resume", *OLD_RESUME[name]]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["format"] == RUN_META_FORMAT and meta["status"] == "completed" and meta["trainer"] == name
    raw = read_jsonl(out / "metrics.jsonl")
    assert raw[: len(old_records)] == old_records  # the old records are kept as they were
    assert all(list(r)[:3] == ["step", "games", "time"] for r in raw[len(old_records):])
    assert len(raw) > len(old_records)
    steps = [r["step"] for r in read_run_metrics(out / "metrics.jsonl")]
    assert steps == sorted(set(steps)) and steps[-1] == meta["progress"]["step"] == int(OLD_RESUME[name][1])
    pytest.importorskip("matplotlib")
    from ai2048.plots import plot_run

    assert plot_run(out, tmp_path / "fig")


def test_old_run_dir__lazyzero_resumes_and_plots_its_curve(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from ai2048.train.lazyzero import LazyZeroConfig, run

    out = _old_copy(tmp_path, "lazyzero")
    cfg = LazyZeroConfig(**{**read_run_config(out), "epochs": 3, "tensorboard": False, "progress": False})
    run(cfg, out, resume=True)
    meta = read_run_meta(out)
    assert meta["status"] == "completed" and (meta["progress"]["step"], meta["progress"]["games"]) == (3, 6)
    recs = read_run_metrics(out / "metrics.jsonl")
    assert [(r["step"], r["games"], r["epoch_games"]) for r in recs] == [(1, 2, 2), (2, 4, 2), (3, 6, 2)]
    pytest.importorskip("matplotlib")
    from ai2048.plots import plot_run

    assert "lazyzero_curve.png" in {p.name for p in plot_run(out, tmp_path / "fig")}


@pytest.mark.parametrize("name", ["dqn", "qnet", "policy", "lazyzero", "ntuple"])
def test_old_run_dir__its_agent_still_loads(name: str) -> None:
    if name != "ntuple":
        pytest.importorskip("torch")
    agent = load_agent(OLD / name)
    board = Game(seed=1).board
    assert legal_mask(board)[int(agent.act(board))]


def test_old_ntuple_run__resumed_with_the_new_code_still_packs(tmp_path: Path) -> None:
    """What ``ai2048 train ntuple --out RUN --resume`` then ``ai2048 models pack RUN`` do to a run
    started by the old code (as /work/runs/long1 is): both work, and the card counts every game."""

    out = _old_copy(tmp_path, "ntuple")
    cfg = json.loads((out / "config.json").read_text())
    # as long1's: a budget by its old name
    (out / "config.json").write_text(json.dumps({**cfg, "seconds": 7200.0}))

    def pack(name: str) -> dict:
        argv = ["models", "pack", str(out), "--name", name, "--dir", str(tmp_path / "models"),
                "--positions", "200", "--checks", "100"]
        assert main(argv) == 0
        return json.loads((tmp_path / "models" / f"{name}.json").read_text())

    assert pack("before")["training"]["games"] == 40  # the old layout, as the old code left it
    assert main(["train", "ntuple", "--out", str(out), "--resume", "--games", "60"]) == 0
    assert json.loads((out / "config.json").read_text())[BUDGET] == 7200.0
    card = pack("old")
    assert card["training"]["games"] == 60 and card["training"]["train_seconds"] > 0
    assert "--duration" in card["training"]["command"] and "--seconds" not in card["training"]["command"]


def test_loop__a_finished_run_resumed_with_nothing_to_do_is_not_rewritten(tmp_path: Path) -> None:
    saves: list[str] = []
    file = FileInMemory({"counters": {"n": 5, "g": 5, "elapsed": 0.0}})
    loop, c = _loop(tmp_path, saves, file=file, total=5, resumed=True)
    loop.track(counters=c)
    with loop:
        assert not loop.running()
    loop.finish()
    assert saves == [] and loop.status == "completed"


def test_cli__old_budget_flags_still_set_duration() -> None:
    from ai2048.cli.train import build_config, trainer_parser
    from ai2048.train import get_trainer

    nt = get_trainer("ntuple")

    def duration(*flags: str) -> float:
        return build_config(nt, trainer_parser(nt).parse_args(["--out", "x", *flags])).duration

    assert duration("--seconds", "7200") == 7200.0
    assert duration("--set", "seconds=30") == 30.0
    with pytest.raises(SystemExit):  # lazyzero's old flag, not ntuple's
        trainer_parser(nt).parse_args(["--out", "x", "--max-minutes", "2"])


@pytest.mark.parametrize("resume", [False, True])
def test_train_cli__checks_the_run_once_and_the_trainer_does_not_again(tmp_path, monkeypatch, resume) -> None:
    """``ai2048 train`` checks its arguments, the run directory and the config once, opens the directory
    again only once it holds the run (a run killed before its first save is cleared there), and hands
    that to the trainer, whose ``start`` neither opens nor checks it a third time."""
    import dataclasses as dc

    from ai2048.cli import main
    from ai2048.cli import train as cli_train
    from ai2048.train import get_trainer
    from ai2048.train import run as train_run

    real = get_trainer("ntuple")
    out = tmp_path / "r"
    if resume:  # a run with a checkpoint to continue
        out.mkdir()
        (out / "config.json").write_text(json.dumps(dc.asdict(real.config_cls())))
        (out / real.checkpoint).write_text("")
    calls = {"open": 0, "resumed": 0, "opened": []}
    open_run, check_resumed = train_run.open_run, train_run.check_resumed_config

    def counted_open(*a, **k):
        calls["open"] += 1
        return open_run(*a, **k)

    def counted_resumed(*a, **k):
        calls["resumed"] += 1
        return check_resumed(*a, **k)

    def fake_run(config, out, resume=False, opened=None):
        calls["opened"].append(opened)
        train_run.start(out, config, real, resume, opened)
        return out

    monkeypatch.setattr(train_run, "open_run", counted_open)
    monkeypatch.setattr(cli_train, "open_run", counted_open)
    monkeypatch.setattr(train_run, "check_resumed_config", counted_resumed)
    monkeypatch.setattr(cli_train, "check_resumed_config", counted_resumed)
    monkeypatch.setattr(cli_train, "get_trainer", lambda name: dc.replace(real, run=fake_run))
    argv = ["train", "ntuple", "--out", str(out), "--progress", "false"] + (["--resume"] if resume else [])
    assert main(argv) == 0
    assert calls["open"] == 2 and calls["resumed"] == int(resume)
    assert [o.out for o in calls["opened"]] == [out] and (out / "config.json").is_file()
