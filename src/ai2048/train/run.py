"""One run directory and one loop skeleton for every trainer (no torch here).

A run directory (``ai2048 train NAME --out DIR``) holds

- ``config.json``: the trainer's frozen config (``dataclasses.asdict``);
- ``meta.json``: format :data:`~ai2048.checkpoint.RUN_META_FORMAT`: ``agent`` (what plays the run),
  ``trainer``, ``rules_version``, ``status`` (running, completed, interrupted), ``progress``
  (``step`` in the trainer's unit, ``games`` finished, ``time`` seconds of training, the trainer's
  counters) and ``info`` (what the trainer records about its network);
- ``metrics.jsonl``: one record a line, ``{"step", "games", "time", ...the trainer's fields}``, and
  ``tb/`` (the same as TensorBoard scalars) when asked for and installed;
- the trainer's checkpoint (``checkpoint.pt`` or ``weights.npz``) and what its agent loads.

Every file is written atomically; old layouts are read by the tolerant readers of
:mod:`ai2048.checkpoint`. A trainer's ``run(config, out, resume)`` reads top to bottom::

    cfg, resumed = start(out, config, "dqn", resume, RESUMABLE)   # checks, then config.json
    ...networks, optimiser; restore them from the checkpoint when resumed...
    loop = Loop(out, "dqn", total=cfg.episodes, done=episodes, elapsed=elapsed, duration=cfg.duration,
                resumed=resumed)

    def save(status):                                              # checkpoint, then meta.json
        torch_save(out / "checkpoint.pt", {...})
        loop.write_meta(status, {"step": episodes, "games": episodes, "time": loop.elapsed})

    with loop:                                                     # Ctrl-C / SIGTERM: stop cleanly
        while loop.running(episodes):                              # total, signal or budget
            ...play, learn...
            loop.log({...}, step=episodes, games=episodes)         # metrics.jsonl (+ tb/)
            loop.checkpoint_every(episodes, cfg.checkpoint_every, save)
    return loop.finish(save, episodes)                             # final save with the status

The wall-clock budget of every trainer is its config's ``duration`` (:data:`BUDGET`, seconds of
training counted across resumes; 0 = none).
"""

from __future__ import annotations

import dataclasses
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from types import FrameType
from typing import Any

from tqdm import tqdm

from ai2048.checkpoint import (
    RUN_META_FORMAT,
    append_jsonl,
    check_regular_file,
    output_target,
    read_json,
    read_run_config,
    read_run_meta,
    run_record,
    truncate_jsonl,
    write_json,
)
from ai2048.rules import RULES_VERSION
from ai2048.train.config import make_config

BUDGET = "duration"
"""The one name of every trainer's wall-clock budget (a config field, in seconds; 0 = none)."""

BUDGET_HELP = "wall-clock budget in seconds of training, counted across resumes (0 = none)"
"""The help text of every trainer's :data:`BUDGET` field."""

CHECKPOINTS = ("checkpoint.pt", "weights.npz")
"""Every trainer's checkpoint file: a directory holding one holds progress a fresh run must not replace."""

RUN_FILES = ("config.json", "meta.json", "metrics.jsonl", "model.pt", "eval.json", "tb", "validation.jsonl")
"""What trainers write besides their checkpoint; removed when a run without a checkpoint is restarted."""


# ---------------------------------------------------------------- new and resumed runs


def check_run_files(out: Path) -> None:
    """Refuse a run directory where a file a trainer writes (:data:`RUN_FILES`, :data:`CHECKPOINTS`,
    the lock) is a device, FIFO, socket, folder or dangling symlink, before the run starts: every write
    refuses it too (:func:`ai2048.checkpoint.output_target`), but only after the work it was to save."""
    out = Path(out)
    if not out.is_dir():
        return
    for name in (*RUN_FILES, *CHECKPOINTS, ".lock"):
        path = out / name
        if name != "tb" and (path.exists() or path.is_symlink()):
            output_target(path, "--out holds", fix="remove it or choose another --out")



def check_fresh(out: Path, trainer: str, checkpoint: str, config_cls: type) -> bool:
    """For a run without ``--resume``: refuse a directory that holds progress or another trainer's run.

    Returns True when ``out`` holds only the start of a run of this trainer that was killed before
    its first checkpoint (``config.json`` but no checkpoint): such a directory used to be a dead end
    (a rerun said it already holds a run, ``--resume`` found nothing to resume); now it restarts
    (:func:`restart_without_checkpoint`).
    """
    out = Path(out)
    if not out.is_dir():
        return False
    meta = read_json(out / "meta.json", "run metadata") if (out / "meta.json").is_file() else {}
    other = meta.get("trainer")
    if other and other != trainer:
        raise ValueError(f"{out} holds a run of trainer {other!r}; choose another --out")
    if any((out / name).exists() for name in {checkpoint, *CHECKPOINTS}):
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if not (out / "config.json").is_file():
        return False
    saved = read_run_config(out)
    foreign = sorted(set(saved) - {f.name for f in dataclasses.fields(config_cls)})
    if foreign:
        raise ValueError(
            f"{out} holds another program's run (its config.json has keys {', '.join(foreign[:5])} "
            f"that trainer "
            f"{trainer!r} lacks); choose another --out"
        )
    return True


def restart_without_checkpoint(out: Path) -> None:
    """Clear the files of a run that stopped before its first checkpoint (see :func:`check_fresh`).

    Call it while holding the run (:func:`ai2048.checkpoint.hold_run`), so no trainer writes the directory.
    """
    print(
        f"{out} holds no checkpoint yet (its run stopped before the first save): starting it afresh",
        file=sys.stderr,
    )
    for name in RUN_FILES:
        path = Path(out) / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def saved_config(out: Path, trainer: str, checkpoint: str) -> dict[str, Any]:
    """The config a ``--resume`` of ``out`` continues (today's field names), after checking that ``out``
    is a run of ``trainer`` with a checkpoint; every failure names the fix."""
    out = Path(out)
    if not out.exists():
        raise FileNotFoundError(f"cannot resume: run directory {out} does not exist")
    if not out.is_dir():
        raise ValueError(f"cannot resume: {out} is not a folder, so it is not a run directory")
    check_regular_file(out / "config.json", "run config", missing=(
        f"cannot resume: {out} has no config.json, so it is not a run directory of `ai2048 train {trainer}`"))
    meta = read_json(out / "meta.json", "run metadata") if (out / "meta.json").is_file() else {}
    found = meta.get("trainer")
    if found and found != trainer:
        raise ValueError(
            f"cannot resume: {out} is a run of trainer {found!r}, not {trainer!r}; "
            f"continue it with `ai2048 train {found} --out {out} --resume`"
        )
    if not (out / checkpoint).exists():
        raise FileNotFoundError(
            f"cannot resume: {out} holds no checkpoint yet ({checkpoint}; the run stopped before its "
            "first save); "
            "run the same command without --resume to start it afresh"
        )
    return read_run_config(out)


def start(
    out: Path,
    config: Any,
    trainer: str,
    resume: bool,
    resumable: Iterable[str],
    checkpoint: str = "checkpoint.pt",
) -> tuple[Any, bool]:
    """Check ``out`` for a new run or a resume, write ``config.json``; returns (config, resumed).

    A new run needs a directory without a run in it. A resume needs ``config.json``, a checkpoint
    (which holds the run's state), ``meta.json`` of ``trainer`` under today's rules when it is there
    (a deleted one is written again at the next save), and ``config`` equal to the saved config
    except for the ``resumable`` fields (budgets, logging, device), whose new values are kept.
    """
    out = Path(out)
    if not resume:
        if any((out / name).exists() for name in (checkpoint, "metrics.jsonl", "config.json")):
            raise ValueError(
                f"{out} already holds a run; pass --resume to continue it or choose another --out"
            )
        out.mkdir(parents=True, exist_ok=True)
        write_json(out / "config.json", dataclasses.asdict(config))
        return config, False
    stored = saved_config(out, trainer, checkpoint)  # the directory, config, trainer and checkpoint checks
    if not (out / "meta.json").is_file():  # the checkpoint holds the state; meta.json is rewritten at a save
        print(f"resuming from {out / checkpoint}: {out / 'meta.json'} is missing and is written again at "
              "the next checkpoint", file=sys.stderr)
        meta = {"rules_version": RULES_VERSION}
    else:
        meta = read_run_meta(out)
    if meta["rules_version"] != RULES_VERSION:
        raise ValueError(
            f"cannot resume: {out} was trained under rules version {meta['rules_version']}, "
            f"this ai2048 plays version {RULES_VERSION}; start a new --out"
        )
    cls = type(config)
    names = {f.name for f in dataclasses.fields(cls)}
    saved = dataclasses.asdict(make_config(cls, **{k: v for k, v in stored.items() if k in names}))
    now = dataclasses.asdict(config)
    keep = set(resumable)
    differ = [
        f"{k} (saved {saved[k]!r}, now {now[k]!r})" for k in now if k not in keep and saved[k] != now[k]
    ]
    if differ:
        raise ValueError(
            f"cannot resume {out} with different settings: {'; '.join(differ)}; "
            f"only {', '.join(sorted(keep))} may change on resume"
        )
    write_json(out / "config.json", now)
    return config, True


def write_meta(
    out: Path,
    agent: str,
    trainer: str,
    status: str,
    progress: dict[str, Any],
    info: dict[str, Any] | None = None,
) -> None:
    """``meta.json`` in the one schema; ``progress`` has ``step``, ``games`` and ``time`` (then the
    trainer's counters), ``info`` what the trainer records about its network."""
    missing = {"step", "games", "time"} - set(progress)
    if missing:
        raise ValueError(f"meta.json progress needs {', '.join(sorted(missing))}")
    write_json(
        Path(out) / "meta.json",
        {
            "format": RUN_META_FORMAT,
            "agent": agent,
            "trainer": trainer,
            "rules_version": RULES_VERSION,
            "status": status,
            "progress": progress,
            "info": info or {},
        },
    )


# ---------------------------------------------------------------- the loop's parts


class GracefulStop:
    """Within ``with``: the first Ctrl-C (SIGINT) or SIGTERM sets ``requested`` so the loop saves and
    stops at a clean point; a second one interrupts at once. (Background jobs ignore SIGINT, so
    SIGTERM is how they are stopped.)"""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.requested = False
        self._old: dict[int, Any] = {}

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __enter__(self) -> GracefulStop:
        try:
            for sig in self.SIGNALS:
                self._old[sig] = signal.signal(sig, self._handler)
        except ValueError:  # not the main thread: signals cannot reach us anyway
            self._old = {}
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old)
        self._old = {}


class Deadline:
    """Wall-clock budget in seconds (0 = none), counted across resumes via ``elapsed0``."""

    def __init__(self, seconds: float, elapsed0: float = 0.0) -> None:
        self.seconds = seconds
        self.start = time.monotonic() - elapsed0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def passed(self, elapsed: float | None = None) -> bool:
        """Whether the budget is spent by ``elapsed`` seconds (default: the wall clock)."""
        return self.seconds > 0 and (self.elapsed if elapsed is None else elapsed) >= self.seconds


def tensorboard_available() -> bool:
    """True when ``torch.utils.tensorboard`` imports (torch and the ``tensorboard`` package installed)."""
    try:
        import torch.utils.tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


class Metrics:
    """``metrics.jsonl`` (one record a line) plus TensorBoard scalars in ``out/tb`` when asked for and
    installed.

    Every numeric field of a record except ``step`` becomes a scalar of that name at the record's
    ``step``; ``None``, booleans and lists are skipped. On resume :meth:`truncate` drops the records
    written after the checkpoint and rebuilds ``tb/`` from the records kept, so the event files hold
    each step once, exactly as ``metrics.jsonl``.
    """

    def __init__(self, out: Path, tensorboard: bool) -> None:
        self.path = Path(out) / "metrics.jsonl"
        self.tb_dir = Path(out) / "tb"
        self.enabled = tensorboard and tensorboard_available()
        self.writer: Any = None

    def truncate(self, last: int) -> None:
        """On resume: drop records after step ``last`` (the checkpoint's; old shapes too), rebuild ``tb/``."""
        truncate_jsonl(self.path, lambda r: (run_record(r).get("step") or 0) <= last)
        if self.enabled:
            from ai2048.checkpoint import read_run_metrics

            shutil.rmtree(self.tb_dir, ignore_errors=True)
            for record in read_run_metrics(self.path) if self.path.exists() else []:
                self._scalars(record)

    def log(self, record: dict[str, Any]) -> None:
        """Append ``record`` (it has ``step``) to the jsonl file and write its numeric fields as scalars."""
        append_jsonl(self.path, record)
        if self.enabled:
            self._scalars(record)

    def _scalars(self, record: dict[str, Any]) -> None:
        """One TensorBoard scalar per numeric field of ``record`` at its step (the writer opens on first
        use)."""
        if self.writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(str(self.tb_dir))
        step = int(record["step"])
        for k, v in record.items():
            if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool):
                self.writer.add_scalar(k, v, step)

    def flush(self) -> None:
        """Write pending TensorBoard events (called with every checkpoint, so ``tb/`` keeps up with it)."""
        if self.writer is not None:
            self.writer.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


# ---------------------------------------------------------------- the skeleton


class Loop:
    """The frame every trainer's loop runs in: signals, the budget, the progress bar, metrics,
    checkpoints and the final status (see the module docstring for the shape of a ``run()``).

    Args:
        out: the run directory (made by :func:`start`).
        trainer: the trainer's name; ``agent`` (default the same) names what plays the run.
        total: steps to run (0 = until the budget or a signal); ``done`` steps are behind us.
        elapsed: training seconds already spent (from the checkpoint); ``duration`` the budget.
        unit: what a step is, for the progress bar and messages (game, epoch).
        bar: (total, done, unit) the progress bar counts instead of steps (LazyZero: games in epochs).
        resumed: the run continues from its checkpoint at ``done``: later metrics records are dropped.
    """

    def __init__(
        self,
        out: Path,
        trainer: str,
        *,
        total: int,
        done: int = 0,
        elapsed: float = 0.0,
        duration: float = 0.0,
        unit: str = "game",
        agent: str | None = None,
        tensorboard: bool = False,
        progress: bool = True,
        smoothing: float = 0.3,
        bar: tuple[int, int, str] | None = None,
        resumed: bool = False,
    ) -> None:
        self.out, self.trainer, self.agent = Path(out), trainer, agent or trainer
        self.total, self.unit = total, unit
        self.deadline = Deadline(duration, elapsed)
        self.metrics = Metrics(self.out, tensorboard)
        if resumed:  # records logged after the checkpoint (a crash) are dropped; they are played again
            self.metrics.truncate(done)
        self.stop = GracefulStop()
        bar_total, bar_done, bar_unit = bar or (total, done, unit)
        self.bar = tqdm(
            total=bar_total or None,
            initial=bar_done,
            unit=bar_unit,
            disable=not progress,
            dynamic_ncols=True,
            smoothing=smoothing,
        )
        self.first = self.last_saved = done
        self.status = "running"
        self.out_of_time = False
        # the status a resumed run was saved with: one that stopped (interrupted, or killed while
        # running) and is resumed with nothing left to do must still end up saved as completed
        self.resumed_status: str | None = (
            read_run_meta(self.out)["status"] if resumed and (self.out / "meta.json").is_file() else None
        )

    def __enter__(self) -> Loop:
        self.stop.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.__exit__(*exc)

    @property
    def elapsed(self) -> float:
        """Seconds of training, this session and the ones before it."""
        return self.deadline.elapsed

    @property
    def stopping(self) -> bool:
        """Whether Ctrl-C or SIGTERM asked the run to stop (inner loops look at it to abandon work)."""
        return self.stop.requested

    def running(self, done: int, elapsed: float | None = None) -> bool:
        """Whether to run another step after ``done``: not when ``total`` is reached (completed), a signal
        came (interrupted) or the budget is spent by ``elapsed`` (default: the wall clock; completed)."""
        if self.total and done >= self.total:
            self.status = "completed"
            return False
        if self.stop.requested:
            self.status = "interrupted"
            return False
        if self.deadline.passed(elapsed):
            self.status, self.out_of_time = "completed", True
            return False
        return True

    def log(self, record: dict[str, Any], step: int, games: int, time: float | None = None) -> None:
        """Write ``{"step", "games", "time", **record}`` to ``metrics.jsonl`` (and ``tb/``); ``time``
        defaults to :attr:`elapsed`."""
        t = self.elapsed if time is None else time
        self.metrics.log({"step": int(step), "games": int(games), "time": round(float(t), 3), **record})

    def checkpoint_every(self, done: int, every: int, save: Callable[[str], None]) -> None:
        """Call ``save("running")`` when ``every`` steps have passed since the last save."""
        if done - self.last_saved >= every:
            self.save(save, done, "running")

    def save(self, save: Callable[[str], None], done: int, status: str) -> None:
        """``save(status)`` now, and flush TensorBoard with it."""
        save(status)
        self.metrics.flush()
        self.last_saved = done

    def write_meta(self, status: str, progress: dict[str, Any], info: dict[str, Any] | None = None) -> None:
        """``meta.json`` of this run (:func:`write_meta`)."""
        write_meta(self.out, self.agent, self.trainer, status, progress, info)

    def finish(self, save: Callable[[str], None], done: int) -> Path:
        """Close the bar, save with the final status (not when a finished run was resumed with nothing
        left to do), close the metrics; say how the run ended."""
        self.bar.close()
        if self.status == "running":  # the trainer's own stop rule (a target score) ended the loop
            self.status = "completed"
        idle = done == self.first and self.status == "completed" and not self.out_of_time
        if not idle or self.resumed_status not in (None, "completed"):
            self.save(save, done, self.status)
        self.metrics.close()
        if idle and self.resumed_status is not None and self.total and done >= self.total:
            print(
                f"nothing to train: the run in {self.out} already holds {done} {self.unit}s (its total is "
                f"{self.total}); resume with a larger total to train on",
                flush=True,
            )
        if self.status == "interrupted":
            print(
                f"interrupted: saved after {done} {self.unit}s in {self.out} (continue with --resume)",
                flush=True,
            )
        elif self.out_of_time:
            print(
                f"time budget of {self.deadline.seconds:.0f} s reached after {done} {self.unit}s; saved in "
                f"{self.out} (continue with a larger --{BUDGET} and --resume)",
                flush=True,
            )
        return self.out
