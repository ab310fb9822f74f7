"""Run directories and atomic writes: nothing is lost if a process dies mid-write.

A run directory holds ``config.json`` (the frozen config), ``meta.json`` (agent name, rules
version, format, status, progress), ``metrics.jsonl`` (one JSON object a line) and weights files.
Every file is written to a temporary name in the same folder and renamed into place, and one
training process at a time holds a run directory (:func:`hold_run`).

The tolerant readers :func:`read_run_meta`, :func:`read_run_config` and :func:`run_record` give
every run directory, old ones included, the one shape that :mod:`ai2048.train.run` writes (the
layouts before it are described in ``tests/data/runs_v1/README.md``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np


def _kind(mode: int) -> str:
    """What a non-regular file is, in words: a folder, a character device (``/dev/null``), a FIFO..."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def output_target(path: str | Path, what: str = "output file", fix: str = "give another path") -> Path:
    """The regular file a write of ``path`` replaces or creates; ValueError naming ``path`` for
    anything else.

    Every file ai2048 writes goes through here (:func:`atomic_path`), because the final rename of an
    atomic write lands on whatever the path names: run as root, ``--out /dev/null`` once replaced
    the device node with a regular file. So:

    - a path that does not exist, or a regular file: written (returned as given);
    - a symlink to a regular file: the file it points to is written and the link stays (returned
      resolved), as ``open(path, "w")`` would write it;
    - a folder, a device (``/dev/null`` included: an output is never discarded silently), a FIFO,
      a socket, a symlink to one of them, a symlink to nothing (a dangling link would create a file
      wherever it points) or a loop of links: refused, before anything is written. ``fix`` ends
      the message (the CLI adds how to write nothing).
    """
    path = Path(path)
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # not there (or under a file: the write names that)
        return path
    target = path
    via = ""
    if stat.S_ISLNK(st.st_mode):
        link = os.readlink(path)
        try:
            target = path.resolve(strict=True)
            st = os.stat(target)
        except FileNotFoundError:
            raise ValueError(
                f"{what} {path} is a symlink to {link}, which does not exist; ai2048 writes through a "
                f"symlink only to an existing regular file: {fix}"
            ) from None
        except (OSError, RuntimeError) as e:  # a loop of links (ELOOP), a link under a file
            raise ValueError(
                f"{what} {path} is a symlink that does not resolve ({e}); {fix}"
            ) from None
        via = f"a symlink to {target}, which is "
    if stat.S_ISREG(st.st_mode):
        return target
    raise ValueError(
        f"{what} {path} is {via}{_kind(st.st_mode)}, not a regular file; ai2048 writes only regular "
        f"files (it never replaces a folder, device, FIFO or socket): {fix}"
    )


def nearest_existing(path: Path) -> Path:
    """``path`` or its closest ancestor that exists (the folder a write would create folders in)."""
    p = path.absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def check_output_file(path: str | Path, what: str = "output file", fix: str = "give another path") -> Path:
    """Refuse an output file that cannot be written, before any work is done; returns the file a write
    will replace (:func:`output_target`).

    Refused: whatever :func:`output_target` refuses (a folder, device, FIFO, socket, a link to one or
    to nothing), a path under a file (``file/x.json``) and a folder without write permission; each
    would otherwise fail, or clobber, only when the result is saved, after the work.
    """
    target = output_target(path, what, fix)
    base = nearest_existing(target.parent)
    if not base.is_dir():
        raise ValueError(f"{what} {path}: {base} is a file, not a folder; choose another path")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{what} {path}: cannot write in {base} (permission denied); choose another path")
    return target


@contextlib.contextmanager
def atomic_path(path: str | Path, suffix: str = ".tmp", what: str = "output file") -> Iterator[Path]:
    """Within ``with``: a new empty temp file beside the file ``path`` names, to be filled by the caller
    (``fig.savefig(tmp)``); on a clean exit it is renamed over that file, on an exception deleted.

    The one way ai2048 puts a file in place: :func:`output_target` picks the file (a symlink's regular
    target; a folder, device, FIFO or socket refused) before anything is written, and again just
    before the rename, so the rename never lands on anything but a regular file. ``suffix`` ends the
    temp name (writers that choose the format by extension want ``.tmp.gif``). A new file gets the
    permissions ``open()`` would give it (the umask); a file written over keeps its own.
    """
    target = output_target(path, what)
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}{suffix}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    try:
        yield tmp
        again = output_target(path, what)  # something may have taken the path's place meanwhile
        with contextlib.suppress(FileNotFoundError):
            os.chmod(tmp, stat.S_IMODE(os.stat(again).st_mode))
        os.replace(tmp, again)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | Path, write: Callable[[Any], None], mode: str = "wb") -> None:
    """Call ``write(file)`` on a temp file beside ``path``, fsync it, then rename it over ``path``
    (:func:`atomic_path`: only a regular file, or a symlink to one, is ever replaced)."""
    with atomic_path(path) as tmp, open(tmp, mode) as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())


@contextlib.contextmanager
def hold_run(out: str | Path, busy: str | None = None) -> Iterator[None]:
    """Within ``with``: this process is the only trainer of run directory ``out``.

    Two trainers writing one directory interleave their metrics and overwrite each other's
    checkpoints (a second ``--resume`` while the first run still trains). An exclusive ``flock``
    on ``out/.lock`` (released by the kernel if the process dies) turns that into an error that
    names the other process. ``busy`` words that error for another kind of folder (a table build
    holds its table's folder the same way), ``{pid}`` standing for the other process's id.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with open(output_target(out / ".lock", "run lock file"), "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            pid = f.read().strip() or "?"
            if busy is not None:
                raise ValueError(busy.replace("{pid}", pid)) from None
            raise ValueError(
                f"{out} is being trained by another process (pid {pid}); "
                "wait for it to finish "
                "or stop it (Ctrl-C, or kill -TERM PID), then continue with --resume"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        remove_stale_temps(out)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def remove_stale_temps(folder: str | Path) -> list[Path]:
    """Delete the temp files (``.NAME.*.tmp``) that :func:`atomic_write` left when its process was killed.

    Only safe while no other process writes ``folder``: :func:`hold_run` calls it once it holds
    the run. Returns the files removed.
    """
    removed = []
    for tmp in Path(folder).glob(".*.tmp"):
        if tmp.is_file():
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    text = json.dumps(obj, indent=2, default=_json_default) + "\n"
    atomic_write(path, lambda f: f.write(text), mode="w")


def read_json(path: str | Path, what: str = "file") -> dict[str, Any]:
    """Read a JSON object, turning a missing, corrupt or non-object file into an error that names it.

    Every JSON file ai2048 writes (configs, metadata, results, records) is an object, so a list or a
    number is as foreign as a torn file and is refused here, before a caller indexes it.
    """
    path = Path(path)
    check_regular_file(path, what)
    try:
        value = json.loads(path.read_text())
    except (ValueError, RecursionError) as e:  # JSON, UTF-8, a number of more than 4300 digits, nesting
        raise ValueError(f"{what} {path} is not valid JSON ({e}); it may be truncated or corrupt") from e
    if not isinstance(value, dict):
        raise ValueError(
            f"{what} {path} holds a JSON {json_kind(value)}, not an object; it is not a file ai2048 wrote"
        )
    return value


def check_regular_file(path: str | Path, what: str = "file", missing: str | None = None) -> None:
    """Raise naming ``path`` unless it is a regular file: missing is FileNotFoundError (``missing``, when
    given, is its message); a folder, a FIFO or a device (a link to ``/dev/zero``) is ValueError,
    before anything reads it (a FIFO would block the reader forever, ``/dev/zero`` fill its memory),
    and never called missing."""
    path = Path(path)
    if path.is_file():
        return
    if not path.exists():
        raise FileNotFoundError(missing or f"{what} {path} does not exist")
    kind = "a folder" if path.is_dir() else "not a regular file (a FIFO, socket or device)"
    raise ValueError(f"{what} {path} is {kind}; give the path of the file itself")


def json_kind(value: Any) -> str:
    """What JSON calls a parsed value (object, array, string, number, boolean, null), for messages
    that tell a user or a client what was sent."""
    if isinstance(value, bool):
        return "boolean"
    kinds = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
    return kinds.get(type(value), "null" if value is None else type(value).__name__)


def append_jsonl(path: str | Path, record: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk (a torn last line is skipped by :func:`read_jsonl`); like
    every write, only to a regular file (:func:`output_target`)."""
    with open(output_target(path, "JSON-lines file"), "a") as f:
        f.write(json.dumps(record, default=_json_default) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """All complete records of a JSON-lines file; a torn final line (crash mid-append) is dropped."""
    out = []
    check_regular_file(path, "JSON-lines file")
    try:
        lines = Path(path).read_text().splitlines()
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e}); it is not a JSON-lines file ai2048 wrote") from e
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as e:
            if i == len(lines) - 1:
                break
            raise ValueError(f"{path}: line {i + 1} is not valid JSON ({e})") from e
        except (ValueError, RecursionError) as e:  # a number of more than 4300 digits, deep nesting
            raise ValueError(f"{path}: line {i + 1} is not valid JSON ({e})") from e
    return out


def truncate_jsonl(path: str | Path, keep: Callable[[dict[str, Any]], bool]) -> None:
    """Rewrite a JSON-lines file atomically, keeping the records ``keep`` accepts (used on resume)."""
    path = Path(path)
    if not path.exists():
        return
    records = [r for r in read_jsonl(path) if keep(r)]
    text = "".join(json.dumps(r) + "\n" for r in records)
    atomic_write(path, lambda f: f.write(text), mode="w")


def save_npz(path: str | Path, **arrays: np.ndarray) -> None:
    """Save arrays compressed, atomically."""
    atomic_write(path, lambda f: np.savez_compressed(f, **arrays))  # type: ignore[arg-type]


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"cannot write {type(o).__name__} to JSON")


RUN_META_FORMAT = "ai2048.run/2"
"""``meta.json``'s ``format`` since every trainer writes it through :mod:`ai2048.train.run`."""

RENAMED_CONFIG_KEYS: dict[str, tuple[str, float]] = {
    "seconds": ("duration", 1.0),
    "max_minutes": ("duration", 60.0),
}
"""Old config keys -> (the one name, factor): the wall-clock budget was ``seconds`` in ``train ntuple``
and ``max_minutes`` in ``train lazyzero`` before every trainer called it ``duration`` (seconds)."""


def read_run_meta(out: str | Path) -> dict[str, Any]:
    """``out/meta.json`` in the one schema, whichever trainer version wrote it.

    The schema: ``format``, ``agent``, ``trainer``, ``rules_version``, ``status`` (running,
    completed or interrupted), ``progress`` (``step`` in the trainer's unit, ``games`` finished,
    ``time`` seconds of training, plus the trainer's own counters) and ``info`` (what the trainer
    records about its network). Older layouts are mapped: the torch trainers' ``progress.episodes``
    / ``epoch`` / ``elapsed``, the n-tuple trainer's ``games_done`` / ``train_seconds`` /
    ``patterns``, LazyZero's ``epochs_done`` / ``episodes`` / ``finished``.
    """
    meta = read_json(Path(out) / "meta.json", "run metadata")
    if meta.get("format") == RUN_META_FORMAT:
        return meta
    known = {"agent", "trainer", "rules_version", "format", "status", "progress"}
    new: dict[str, Any] = {
        "format": RUN_META_FORMAT,
        "agent": meta.get("agent"),
        "trainer": meta.get("trainer"),
        "rules_version": meta.get("rules_version"),
        "status": meta.get("status", "running"),
        "progress": {},
        "info": {},
    }
    old = meta.get("progress") if isinstance(meta.get("progress"), dict) else {}
    if old:  # dqn, qnet, policy (format 1)
        step = old.get("episodes", old.get("epoch", 0))
        new["progress"] = {
            "step": step,
            "games": old.get("games", step),
            "time": old.get("elapsed", 0.0),
            **{k: v for k, v in old.items() if k not in ("episodes", "epoch", "games", "elapsed")},
        }
    elif "games_done" in meta:  # ntuple ("ai2048.ntuple/1")
        done = meta["games_done"]
        new["progress"] = {"step": done, "games": done, "time": meta.get("train_seconds", 0.0)}
        new["status"] = "completed" if done >= meta.get("games", done + 1) else "running"
        known |= {"games_done", "train_seconds", "games"}
    elif "epochs_done" in meta:  # lazyzero (format 1)
        new["progress"] = {"step": meta["epochs_done"], "games": meta.get("episodes", 0), "time": 0.0}
        new["status"] = "completed" if meta.get("finished") else "running"
        known |= {"epochs_done", "episodes", "finished"}
    new["info"] = {k: v for k, v in meta.items() if k not in known}
    return new


def read_run_config(out: str | Path) -> dict[str, Any]:
    """``out/config.json`` as a flat dict of today's field names (a ``{"config": {...}}`` wrapper is
    unwrapped; old budget names are renamed by :data:`RENAMED_CONFIG_KEYS`)."""
    saved = read_json(Path(out) / "config.json", "run config")
    if isinstance(saved.get("config"), dict):
        saved = saved["config"]
    return rename_config_keys(saved)


def rename_config_keys(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` with :data:`RENAMED_CONFIG_KEYS` mapped to today's names (an old key whose new name
    is present too is dropped)."""
    out = dict(values)
    for old, (new, factor) in RENAMED_CONFIG_KEYS.items():
        if old in out:
            v = out.pop(old)
            if new not in out:
                out[new] = v * factor if isinstance(v, (int, float)) and not isinstance(v, bool) else v
    return out


def run_record(record: dict[str, Any]) -> dict[str, Any]:
    """One ``metrics.jsonl`` record in the one shape: ``step``, ``games`` (finished so far) and ``time``
    (seconds of training so far) first, then the trainer's own fields.

    Records written before the shape are mapped: a game a line (``episode``, ``time``), an epoch a
    line (``epoch`` with ``games`` in total, or LazyZero's ``episodes`` in total with ``games`` and
    ``seconds`` of that epoch, renamed ``epoch_games`` and ``epoch_seconds``), a chunk a line
    (``games`` and ``seconds`` in total). ``time`` is None where an old record did not keep it.
    """
    if "step" in record:
        return record
    r = dict(record)
    if "episode" in r:  # dqn, qnet: a game a line
        step, games, time = r["episode"], r["episode"], r.pop("time", None)
    elif "epoch" in r and "episodes" in r:  # lazyzero: an epoch a line
        r["epoch_games"], r["epoch_seconds"] = r.pop("games", None), r.pop("seconds", None)
        step, games, time = r["epoch"], r.pop("episodes"), None
    elif "epoch" in r:  # policy: an epoch a line
        step, games, time = r["epoch"], r.pop("games", None), r.pop("time", None)
    elif "games" in r:  # ntuple: a chunk a line
        step = games = r.pop("games")
        time = r.pop("seconds", None)
    else:
        return r
    return {"step": step, "games": games, "time": time, **r}


def read_run_metrics(path: str | Path) -> list[dict[str, Any]]:
    """Every record of a ``metrics.jsonl`` in the one shape (:func:`run_record`)."""
    return [run_record(r) if isinstance(r, dict) else r for r in read_jsonl(path)]
