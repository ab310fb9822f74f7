"""Untrusted strategy code in a locked-down process: start it, ask it for moves, end it with a verdict.

:class:`StrategyProcess` starts :mod:`ai2048.llm.sandbox_child` (a separate Python process, an empty
temporary folder as its working directory, an environment of a few fixed variables, its own
process group) and asks it one board at a time, waiting at most ``move_seconds`` for each answer.
Whatever goes wrong ends in a :class:`Stop` carrying a :class:`Verdict`, and the process (its whole
group) is killed and reaped: the host never waits on it for longer than the bounds. What the
child locks down, and what it does not, is in docs/llm.md ("Threat model").

Linux only (x86_64 or aarch64: the seccomp table); elsewhere :func:`check_host` says so up front.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ai2048.checks import check_fields, setting

CHILD = Path(__file__).with_name("sandbox_child.py")
MAX_LINE = 64 * 1024
"""Longest answer line read from the strategy process: a longer one is a protocol verdict."""
MAX_CODE_CHARS = 200_000
VERDICTS = ("ok", "crash", "timeout", "cpu", "memory", "forbidden", "bad_move", "protocol")


@dataclass(frozen=True)
class SandboxLimits:
    """Bounds of one strategy process (``ai2048 strategy`` options; docs/llm.md explains each)."""

    move_seconds: float = setting(1.0, "wall time for one answer (the per-move bound)", lo=0, lo_open=True,
                                  hi=3600, why="seconds")
    start_seconds: float = setting(10.0, "wall time to start and run the code's top level", lo=0,
                                   lo_open=True, hi=3600, why="seconds")
    cpu_seconds: int = setting(60, "CPU time of the whole process (the kernel's RLIMIT_CPU)", lo=1, hi=86400)
    memory_mb: int = setting(256, "memory the code may allocate beyond the interpreter's start-up "
                             "(RLIMIT_AS)", lo=1, hi=1 << 20)
    numpy: bool = setting(False, "let the code import numpy (adds its start-up time and address space)")

    def __post_init__(self) -> None:
        check_fields(self)


@dataclass
class Verdict:
    """How a strategy run ended: ``kind`` (one of :data:`VERDICTS`), a one-line ``message`` for people
    (and for a model's feedback), and ``detail`` (the strategy's lines in the traceback, what it
    printed, the audit event it tripped)."""

    kind: str
    message: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Stop(Exception):
    """The strategy process is finished (and killed): ``verdict`` says why."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.verdict = verdict


def check_host() -> None:
    """OSError unless this machine can run the sandbox (Linux on x86_64 or aarch64)."""
    if not sys.platform.startswith("linux"):
        raise OSError(f"the strategy sandbox needs Linux (seccomp, resource limits); this is {sys.platform}")
    if platform.machine() not in ("x86_64", "aarch64"):
        raise OSError(f"the strategy sandbox has no seccomp table for {platform.machine()} "
                      "(x86_64 and aarch64 have one)")


def check_code(code: Any) -> str:
    """``code`` if it is text of a sane size, else an error before any process starts."""
    if not isinstance(code, str):
        raise TypeError(f"strategy code must be text (str), got {type(code).__name__}")
    if len(code) > MAX_CODE_CHARS:
        raise ValueError(f"strategy code is {len(code):,} characters; at most {MAX_CODE_CHARS:,} are read")
    if "\x00" in code:
        raise ValueError("strategy code holds a NUL character, which Python source cannot")
    return code


def _where(trace: list[Any]) -> str:
    return f" (line {trace[-1][0]}: {trace[-1][1]})" if trace else ""


class StrategyProcess:
    """One strategy process; use as a context manager (``close`` kills and reaps it).

    ``audit=False`` leaves out the audit hook, so only the kernel's barriers (seccomp, limits) stand:
    the tests use it to check that those hold on their own.
    """

    def __init__(self, code: str, limits: SandboxLimits | None = None, seed: int = 0, *,
                 audit: bool = True) -> None:
        check_host()
        self.code = check_code(code)
        self.limits = limits or SandboxLimits()
        self.moves = 0
        self._buf = b""
        self._dir = tempfile.mkdtemp(prefix="ai2048-strategy-")
        env = {"PATH": os.defpath, "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": str(seed % (1 << 32)),
               "PYTHONIOENCODING": "utf-8", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "AI2048_PARENT": str(os.getpid())}
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-s", "-B", "-c", CHILD.read_text(encoding="utf-8")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=self._dir,
                env=env, close_fds=True, start_new_session=True)
        finally:
            # the process has its working directory; the folder goes now, so no stop of ours (SIGTERM,
            # SIGKILL) can leave it behind (an empty folder: the process can create nothing in it)
            shutil.rmtree(self._dir, ignore_errors=True)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        setup = {"code": code, "seed": seed, "cpu_seconds": self.limits.cpu_seconds,
                 "memory_bytes": self.limits.memory_mb << 20, "numpy": self.limits.numpy, "audit": audit}
        what = "to start and run the code's top level"
        try:
            deadline = time.monotonic() + self.limits.start_seconds
            self._write(json.dumps(setup).encode() + b"\n")
            locked = self._answer(self.limits.start_seconds, what)
            if locked[0] == "x" and set(locked[1]) == {"setup_error"}:  # sent before any code ran
                raise OSError(f"the strategy sandbox could not be set up on this machine: "
                              f"{locked[1]['setup_error']}")
            if locked != ("x", {"locked": True}):
                self._fail(Verdict("protocol", "the strategy process did not report its lock-down"))
            first = self._answer(max(0.0, deadline - time.monotonic()), what)
        except BaseException:
            self.close()
            raise
        if first != ("x", {"ready": True}):
            self._fail(self._report(first, stage="load"))

    def new_game(self, seed: int) -> None:
        """Seed the process's ``random`` (and numpy) for the game about to start."""
        self._write(f"s {int(seed)}\n".encode())

    def __enter__(self) -> StrategyProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def ask(self, board: int) -> str | int:
        """The strategy's answer for ``board``: a string or an int, unchecked (the caller reads it).
        Anything else ends the run: :class:`Stop`."""
        self._write(f"{board:016x}\n".encode())
        self.moves += 1
        kind, value = self._answer(self.limits.move_seconds, "to answer one board")
        if kind == "m" or kind == "i":
            return value  # type: ignore[no-any-return]
        if isinstance(value.get("m"), str) and len(value) == 1:
            return value["m"]  # type: ignore[no-any-return]
        self._fail(self._report((kind, value), stage="move"))
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Kill the process group and reap the process (idempotent)."""
        proc = getattr(self, "proc", None)
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for f in (proc.stdin, proc.stdout) if proc is not None else ():
            with contextlib.suppress(OSError):
                f.close()  # type: ignore[union-attr]
        shutil.rmtree(self._dir, ignore_errors=True)

    # -- the pipe ---------------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        try:
            while data:
                data = data[os.write(self._in, data):]
        except (BrokenPipeError, OSError):
            self._fail(self._ended())

    def _answer(self, seconds: float, what: str) -> tuple[str, Any]:
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            ready = select.select([self._out], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                self._fail(Verdict("timeout", f"the strategy took more than {seconds:g} s {what} and was "
                                              "stopped (an endless loop, a sleep, or too slow)",
                                   {"moves": self.moves}))
            chunk = os.read(self._out, MAX_LINE)
            if not chunk:
                self._fail(self._ended())
            self._buf += chunk
            if len(self._buf) > MAX_LINE and b"\n" not in self._buf[:MAX_LINE]:
                self._fail(Verdict("protocol", f"the strategy process sent a line of over {MAX_LINE} bytes"))
        line, _, self._buf = self._buf.partition(b"\n")
        kind, _, payload = line.decode("utf-8", "replace").partition(" ")
        if kind == "m":
            return kind, payload
        try:
            if kind == "i":
                return kind, int(payload)
            if kind == "x":
                value = json.loads(payload)
                if isinstance(value, dict):
                    return kind, value
        except (ValueError, RecursionError):
            pass
        self._fail(Verdict("protocol", f"the strategy process sent {line[:60]!r}, which is not an answer "
                                       "(did the code write to file descriptor 3?)"))
        raise AssertionError("unreachable")

    def _fail(self, verdict: Verdict) -> None:
        self.close()
        raise Stop(verdict)

    # -- verdicts ---------------------------------------------------------------------------------

    def _report(self, answer: tuple[str, Any], stage: str) -> Verdict:
        """The verdict of a report line (``x {...}``) the process sent instead of a move."""
        _, r = answer
        if not isinstance(r, dict):
            return Verdict("protocol", "the strategy process sent an unexpected answer")
        detail = {k: r[k] for k in ("trace", "output", "event", "detail") if k in r}
        where = _where(detail.get("trace", []))
        if "forbidden" in r:
            return Verdict("forbidden", f"the strategy tried {r['forbidden']} ({r.get('event')}: "
                                        f"{r.get('detail', '')}), which is not allowed", detail)
        if "memory" in r:
            return Verdict("memory", f"the strategy ran out of memory ({self.limits.memory_mb} MiB allowed): "
                                     f"{r['memory']}{where}", detail)
        if "error" in r:
            when = "while loading the code" if stage == "load" else f"on move {self.moves}"
            return Verdict("crash", f"the strategy raised {r['error']} {when}{where}", detail)
        if "bad" in r:
            return Verdict("bad_move", f"the strategy returned {r['bad']}, not a move (return 'up', 'down', "
                                       "'left' or 'right')", {"moves": self.moves})
        return Verdict("protocol", f"the strategy process sent an unexpected report {str(r)[:80]}")

    def _ended(self) -> Verdict:
        """The verdict of a process that closed its pipes: how it died (the CPU limit, a signal, an exit)."""
        proc = self.proc
        stopped = False
        deadline = time.monotonic() + 1.0
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:  # it closed its pipe but lives on: stop it
                    stopped = True
                    os.killpg(proc.pid, signal.SIGKILL)
                    _, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.002)
        except (ChildProcessError, ProcessLookupError):
            status, usage = 0, None
        proc.returncode = os.waitstatus_to_exitcode(status)
        if stopped:
            return Verdict("crash", "the strategy process closed its answer pipe and was stopped",
                           {"moves": self.moves})
        cpu = usage.ru_utime + usage.ru_stime if usage is not None else 0.0
        code = proc.returncode
        if code in (-signal.SIGXCPU, -signal.SIGKILL) and cpu >= self.limits.cpu_seconds - 0.05:
            return Verdict("cpu", f"the strategy used its {self.limits.cpu_seconds} s of CPU time and was "
                                  "killed", {"moves": self.moves, "cpu_seconds": round(cpu, 2)})
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            hint = " (out of memory?)" if -code in (signal.SIGKILL, signal.SIGSEGV, signal.SIGABRT) else ""
            return Verdict("crash", f"the strategy process died of {name}{hint}", {"moves": self.moves})
        return Verdict("crash", f"the strategy process exited (code {code}) instead of answering",
                       {"moves": self.moves})


__all__ = ["VERDICTS", "SandboxLimits", "Stop", "StrategyProcess", "Verdict", "check_code", "check_host"]
