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
:mod:`ai2048.checkpoint`. A trainer's ``run(config, out, resume)`` reads top to bottom; it writes
no resume or save code, the :class:`Loop` saves and restores what it is told to track::

    resumed = start(out, config, TRAINER, resume)        # the run directory checked, config.json
    ...networks, optimiser, replay, games; c = Counters(episodes=0, elapsed=0.0, ...)...
    loop = Loop(out, config, TRAINER, resumed, total=config.episodes, counters=c, step="episodes",
                checkpoint=TorchCheckpoint(...), files=...)     # files: what the agent loads
    loop.track(policy=policy, optimizer=optimizer, counters=c, ...)  # resumed: restored here
    with loop:                                           # Ctrl-C / SIGTERM: stop cleanly
        while loop.running():                            # total, signal or budget
            ...play, learn, c["episodes"] += 1...
            loop.log({...})                              # metrics.jsonl (+ tb/)
            loop.checkpoint()                            # every config.checkpoint_every steps
    return loop.finish()                                 # final save with the status

The wall-clock budget of every trainer is its config's ``duration`` (:data:`BUDGET`, seconds of
training counted across resumes; 0 = none).
"""

from __future__ import annotations

import dataclasses
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

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
from ai2048.progress import progress_bar
from ai2048.rules import RULES_VERSION, RULES_VERSIONS
from ai2048.train.config import BUDGET, make_config

if TYPE_CHECKING:
    from ai2048.train import Trainer
    from ai2048.train.config import RunConfig

CHECKPOINTS = ("checkpoint.pt", "weights.npz")
"""Every trainer's checkpoint file: a directory holding one holds progress a fresh run must not replace."""

RUN_FILES = ("config.json", "meta.json", "metrics.jsonl", "model.pt", "eval.json", "tb", "validation.jsonl")
"""What trainers write besides their checkpoint; removed when a run without a checkpoint is restarted."""


# ---------------------------------------------------------------- opening a run directory


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


@dataclass(frozen=True)
class RunDir:
    """What :func:`open_run` found in a run directory."""

    out: Path
    saved: dict[str, Any] | None
    """The config a ``--resume`` continues (today's field names); None for a new run."""
    restart: bool
    """``out`` holds only the start of a run of this trainer that was killed before its first
    checkpoint (``config.json`` but no checkpoint): a new run may clear it and start afresh."""


def open_run(out: Path, trainer: Trainer, resume: bool, *, clear: bool = False) -> RunDir:
    """Every check of ``out`` for a new run or a ``--resume`` of ``trainer``; writes nothing unless
    ``clear``. The CLI's ``check`` and every trainer's :func:`start` call it, so the rules are written once.

    A new run needs a directory without a run in it; one killed before its first checkpoint is
    reported (``restart``), and with ``clear`` (the caller holds the run:
    :func:`ai2048.checkpoint.hold_run`) its files are removed so the run starts afresh. A resume
    needs ``config.json``, the checkpoint (which holds the run's state) and ``meta.json`` of
    ``trainer`` under today's rules when it is there (a deleted one is written again at the next save).
    """
    out = Path(out)
    check_run_files(out)
    if resume:
        saved = saved_config(out, trainer.name, trainer.checkpoint)
        # a missing meta.json is no obstacle: the checkpoint holds the state (start() says so)
        version = read_run_meta(out)["rules_version"] if (out / "meta.json").is_file() else RULES_VERSION
        if version not in RULES_VERSIONS:
            raise ValueError(
                f"cannot resume: {out} was trained under rules version {version}, "
                f"this ai2048 plays versions {', '.join(map(str, RULES_VERSIONS))}; start a new --out"
            )
        return RunDir(out, saved, restart=False)
    if not out.is_dir():
        return RunDir(out, None, restart=False)
    meta = read_json(out / "meta.json", "run metadata") if (out / "meta.json").is_file() else {}
    other = meta.get("trainer")
    if other and other != trainer.name:
        raise ValueError(f"{out} holds a run of trainer {other!r}; choose another --out")
    held = [name for name in (trainer.checkpoint, *CHECKPOINTS, "metrics.jsonl") if (out / name).exists()]
    if held and (held[0] != "metrics.jsonl" or not (out / "config.json").is_file()):
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if not (out / "config.json").is_file():
        return RunDir(out, None, restart=False)
    foreign = sorted(set(read_run_config(out)) - {f.name for f in dataclasses.fields(trainer.config_cls)})
    if foreign:
        raise ValueError(
            f"{out} holds another program's run (its config.json has keys {', '.join(foreign[:5])} "
            f"that trainer {trainer.name!r} lacks); choose another --out"
        )
    if clear:
        restart_without_checkpoint(out)
    return RunDir(out, None, restart=not clear)


def restart_without_checkpoint(out: Path) -> None:
    """Clear the files of a run that stopped before its first checkpoint (see :func:`open_run`).

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


def check_resumed_config(found: RunDir, config: Any, trainer: Trainer) -> None:
    """Refuse a ``config`` that differs from the saved one of a resumed run except in the trainer's
    :attr:`~ai2048.train.Trainer.resumable` fields (budgets, logging, device)."""
    cls = type(config)
    names = {f.name for f in dataclasses.fields(cls)}
    stored = found.saved or {}
    saved = dataclasses.asdict(make_config(cls, **{k: v for k, v in stored.items() if k in names}))
    now = dataclasses.asdict(config)
    keep = set(trainer.resumable)
    differ = [
        f"{k} (saved {saved[k]!r}, now {now[k]!r})" for k in now if k not in keep and saved[k] != now[k]
    ]
    if differ:
        raise ValueError(
            f"cannot resume {found.out} with different settings: {'; '.join(differ)}; "
            f"only {', '.join(sorted(keep))} may change on resume"
        )


def start(out: Path, config: Any, trainer: Trainer, resume: bool, opened: RunDir | None = None) -> bool:
    """Open ``out`` for ``config`` (:func:`open_run`, then the config checked against a resumed run's)
    and write ``config.json``; returns whether the run resumes.

    A directory killed before its first checkpoint is refused here: the CLI clears it first, holding
    the run (``open_run(..., clear=True)``). ``opened``: ``out`` as the caller opened it and checked
    ``config`` against, holding the run (the command line checks once, before any work): not opened
    or checked again.
    """
    out = Path(out)
    found = opened if opened is not None else open_run(out, trainer, resume)
    if found.restart:
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if resume and opened is None:
        check_resumed_config(found, config, trainer)
        if not (out / "meta.json").is_file():
            print(f"resuming from {out / trainer.checkpoint}: {out / 'meta.json'} is missing and is written "
                  "again at the next checkpoint", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "config.json", dataclasses.asdict(config))
    return resume


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


class Counters(dict[str, Any]):
    """The numbers (and arrays of numbers) a trainer carries from step to step, saved and restored whole.

    Restoring updates the fresh values, so a key added after a checkpoint was written keeps its start
    value when that checkpoint is resumed.
    """

    def state_dict(self) -> dict[str, Any]:
        return dict(self)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.update(state)


class Stateful(Protocol):
    """Anything a :class:`Loop` saves and restores: torch modules, optimisers, schedulers, replay
    memories, game batches, :class:`Counters`..."""

    def state_dict(self) -> Any: ...

    def load_state_dict(self, state: Any, /) -> Any: ...


class CheckpointFile(Protocol):
    """How a trainer's checkpoint file is written and read: a dict of the tracked states (plus the
    file's own header); :class:`ai2048.train.torchrun.TorchCheckpoint` for the torch trainers."""

    def write(self, path: Path, state: dict[str, Any]) -> None: ...

    def read(self, path: Path) -> dict[str, Any]: ...


class Loop:
    """The frame every trainer's loop runs in: the checkpoint (what :meth:`track` is told to track is
    saved and, on resume, restored), signals, the budget, the progress bar, metrics and the final
    status (see the module docstring for the shape of a ``run()``).

    Args:
        out: the run directory (opened by :func:`start`); ``config`` the run's config, whose run
            fields (:class:`~ai2048.train.config.RunConfig`) the loop reads.
        trainer: the trainer; ``agent`` (default its name) names what plays the run.
        resumed: the run continues from its checkpoint (:func:`start`'s answer).
        total: steps to run (0 = until the budget or a signal); ``unit`` what a step is (game, epoch).
        counters: the trainer's :class:`Counters`: ``counters[step]`` is the number of steps done,
            ``counters[games]`` of games finished (default: the steps), ``counters["elapsed"]`` the
            seconds of training; ``progress`` names more counters that ``meta.json`` shows.
        checkpoint: how the checkpoint file is written and read; ``files`` writes what the run's
            agent loads after each checkpoint; ``info`` what ``meta.json`` records about the network.
        bar_games: the progress bar counts games up to this many instead of steps (LazyZero's epochs).
        clock: "wall" (training time is the wall clock) or "counted" (the trainer adds the seconds it
            counts to ``counters["elapsed"]``: the n-tuple kernels' time).
        first_save: what a new run writes as it enters the loop: "" nothing, "meta" ``meta.json``,
            "checkpoint" a full checkpoint.
        logs: other JSON-lines files of the run, each with the key of a record's step: records after
            the checkpoint are dropped on resume, as ``metrics.jsonl``'s are.
    """

    def __init__(
        self,
        out: Path,
        config: RunConfig,
        trainer: Trainer,
        resumed: bool,
        *,
        total: int,
        counters: Counters,
        step: str,
        games: str | None = None,
        progress: tuple[str, ...] = (),
        checkpoint: CheckpointFile,
        files: Callable[[], None] | None = None,
        info: Callable[[], dict[str, Any]] | None = None,
        unit: str = "game",
        agent: str | None = None,
        smoothing: float = 0.3,
        bar_games: int | None = None,
        clock: str = "wall",
        first_save: str = "",
        logs: dict[str, str] | None = None,
    ) -> None:
        self.out, self.config, self.trainer, self.resumed = Path(out), config, trainer, resumed
        self.agent = agent or trainer.name
        self.total, self.unit = total, unit
        self.counters, self.step_key, self.games_key, self.progress = counters, step, games or step, progress
        self.file, self.files, self.info = checkpoint, files, info
        self.smoothing, self.bar_games, self.clock, self.first_save = smoothing, bar_games, clock, first_save
        self.logs = logs or {}
        self.named: dict[str, Stateful] = {}
        self.flat: list[Stateful] = []
        self.metrics = Metrics(self.out, bool(getattr(config, "tensorboard", False)))
        self.stop = GracefulStop()
        self.deadline = Deadline(config.duration)
        self.bar: Any = None
        self.status = "running"
        self.out_of_time = False
        self.first = self.last_saved = 0
        # the status a resumed run was saved with: one that stopped (interrupted, or killed while
        # running) and is resumed with nothing left to do must still end up saved as completed
        self.resumed_status: str | None = (
            read_run_meta(self.out)["status"] if resumed and (self.out / "meta.json").is_file() else None
        )

    def track(self, *flat: Stateful, optional: tuple[str, ...] = (), **named: Stateful) -> None:
        """Save these with every checkpoint, and restore them from it now when the run resumes.

        Each named state is the checkpoint's entry of that name (in this order); the keys of a
        positional one's state are entries themselves, after the named ones. An ``optional`` entry
        that an older checkpoint lacks keeps its fresh state.
        """
        self.named.update(named)
        self.flat.extend(flat)
        if not self.resumed:
            return
        path = self.out / self.trainer.checkpoint
        saved = self.file.read(path)
        for name, obj in named.items():
            if name not in saved and name in optional:
                continue
            if name not in saved:
                raise ValueError(f"{path} holds no {name!r}; it is not a checkpoint of trainer "
                                 f"{self.trainer.name!r} (or it is damaged)")
            _restore(obj, saved[name], f"{path}: its {name!r}")
        for obj in flat:
            _restore(obj, saved, str(path))

    def __enter__(self) -> Loop:
        done = self.done
        if self.resumed:  # records logged after the checkpoint (a crash) are dropped; they are played again
            self.metrics.truncate(done)
            for name, key in self.logs.items():
                truncate_jsonl(self.out / name, lambda r, key=key: r[key] <= done)  # type: ignore[misc]
        self.deadline = Deadline(self.config.duration, float(self.counters["elapsed"]))
        self.first = self.last_saved = done
        bar_total, bar_done, bar_unit = (
            (self.bar_games, int(self.counters[self.games_key]), "game") if self.bar_games
            else (self.total, done, self.unit)
        )
        self.bar = progress_bar(
            total=bar_total or None,
            initial=bar_done,
            unit=bar_unit,
            disable=not self.config.progress,
            dynamic_ncols=True,
            smoothing=self.smoothing,
        )
        self.stop.__enter__()
        if not self.resumed and self.first_save == "meta":
            self.write_meta("running")
        elif not self.resumed and self.first_save == "checkpoint":
            self.save("running")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.__exit__(*exc)

    @property
    def done(self) -> int:
        """Steps done (the trainer's ``counters[step]``)."""
        return int(self.counters[self.step_key])

    @property
    def elapsed(self) -> float:
        """Seconds of training, this session and the ones before it."""
        if self.clock == "counted":
            return float(self.counters["elapsed"])
        return self.deadline.elapsed

    @property
    def stopping(self) -> bool:
        """Whether Ctrl-C or SIGTERM asked the run to stop (inner loops look at it to abandon work)."""
        return self.stop.requested

    def running(self) -> bool:
        """Whether to run another step: not when ``total`` is reached (completed), a signal came
        (interrupted) or the budget is spent (completed)."""
        if self.total and self.done >= self.total:
            self.status = "completed"
            return False
        if self.stop.requested:
            self.status = "interrupted"
            return False
        if self.deadline.passed(self.elapsed):
            self.status, self.out_of_time = "completed", True
            return False
        return True

    def log(self, record: dict[str, Any]) -> None:
        """Write ``{"step", "games", "time", **record}`` to ``metrics.jsonl`` (and ``tb/``), from the
        counters and :attr:`elapsed`."""
        self.metrics.log({"step": self.done, "games": int(self.counters[self.games_key]),
                          "time": round(self.elapsed, 3), **record})

    def checkpoint(self) -> None:
        """Save (status running) when ``config.checkpoint_every`` steps have passed since the last save."""
        if self.done - self.last_saved >= self.config.checkpoint_every:
            self.save("running")

    def save(self, status: str) -> None:
        """The checkpoint (every tracked state), the agent's files, then ``meta.json`` with ``status``."""
        if self.clock == "wall":
            self.counters["elapsed"] = self.elapsed
        state = {name: obj.state_dict() for name, obj in self.named.items()}
        for obj in self.flat:
            state.update(obj.state_dict())
        self.file.write(self.out / self.trainer.checkpoint, state)
        if self.files is not None:
            self.files()
        self.write_meta(status)
        self.metrics.flush()
        self.last_saved = self.done

    def write_meta(self, status: str) -> None:
        """``meta.json`` of this run (:func:`write_meta`) from the counters and ``info``."""
        c = self.counters
        progress = {"step": self.done, "games": c[self.games_key], "time": c["elapsed"],
                    **{k: c[k] for k in self.progress}}
        info = self.info() if self.info else {}
        write_meta(self.out, self.agent, self.trainer.name, status, progress, info)

    def finish(self) -> Path:
        """Close the bar, save with the final status (not when a finished run was resumed with nothing
        left to do), close the metrics; say how the run ended."""
        done = self.done
        self.bar.close()
        if self.status == "running":  # the trainer's own stop rule (a target score) ended the loop
            self.status = "completed"
        idle = done == self.first and self.status == "completed" and not self.out_of_time
        if not idle or self.resumed_status not in (None, "completed"):
            self.save(self.status)
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


def _restore(obj: Stateful, state: Any, where: str) -> None:
    """``obj.load_state_dict(state)``; a failure other than a ValueError (which names its fix) names
    the checkpoint entry it came from."""
    try:
        obj.load_state_dict(state)
    except (KeyError, TypeError, RuntimeError) as e:
        raise ValueError(f"{where} does not fit this run ({type(e).__name__}: {e}); "
                         "resume it with the settings it was made with") from e
