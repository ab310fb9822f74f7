"""The strategy process: runs untrusted ``strategy(board) -> move`` code and answers boards over a pipe.

Started by :mod:`ai2048.llm.sandbox` as ``python -s -B -c <this file's source>`` in an empty temporary
folder with a scrubbed environment; it imports nothing of ai2048 (only the standard library, and
numpy when asked), so it starts in tens of milliseconds. Before the untrusted code runs it locks
itself down, in this order:

1. imports the modules a strategy may use (:data:`MODULES`, plus numpy when asked) and seeds
   ``random`` (and numpy's global generator) with the run's seed;
2. moves its answer pipe to fd 3 and points fd 1 and 2 at /dev/null (``print`` goes to a
   bounded buffer instead, so a strategy cannot garble the answers by accident);
3. sets resource limits: CPU seconds (SIGXCPU, then SIGKILL a second later), address space
   (start-up size + the memory allowed), no new files (``RLIMIT_NOFILE`` at the fds open), no
   new processes (``RLIMIT_NPROC`` 0; root ignores it), no file growth, no core dumps;
4. asks the kernel to kill it if the parent dies (``PR_SET_PDEATHSIG``) and installs a seccomp
   filter that allows only the system calls computing needs (memory, reading and writing the
   fds already open, clocks, sleeping, exiting): opening files, sockets, new processes or
   threads, signals to other processes, changing limits and everything else fail with EPERM;
5. installs an audit hook (PEP 578) that turns each forbidden attempt (files, sockets,
   processes, signals, imports beyond the allowed modules, introspection of the interpreter)
   into a report naming it, then exits: the parent's verdict says what was tried.

Protocol (one line each way per board): the parent sends a board as 16 hex digits; the answer is
``m TEXT`` (a string of one line), ``i N`` (an int) or ``x JSON`` (anything else: ``{"m": ...}`` for a
string of several lines, ``{"bad": ...}``, ``{"error": ...}``, ``{"memory": ...}``, ``{"forbidden":
...}``). The first line the parent sends is the JSON
set-up (code, limits, seed); the first answer is ``x {"setup_error": ...}`` (the host cannot lock the
process down) or ``x {"locked": true}``, sent before any of the code runs, so the code cannot forge a
set-up report; then ``x {"ready": true}`` or a failure. Before each game the parent sends ``s SEED``
(no answer): ``random`` (and numpy) is seeded with the game's seed, so a game's moves do not depend
on the games before it (unless the code keeps state of its own).
"""

from __future__ import annotations

import builtins
import ctypes
import json
import os
import platform
import resource
import sys
import warnings
from typing import Any

MODULES = ("math", "random", "itertools", "functools", "collections", "heapq", "bisect", "operator", "copy",
           "statistics", "string", "re", "typing", "dataclasses", "enum")
"""Modules a strategy may import (besides numpy when the run allows it); all are imported before the
lock-down, so ``import math`` costs nothing and opens no file."""

ALLOWED_EVENTS = frozenset({"exec", "compile", "builtins.id", "time.sleep", "object.__getattr__",
                            "object.__setattr__", "object.__delattr__", "sys._getframe"})
"""Audit events harmless computing raises (attribute access on frames and types included: they reach
nothing the seccomp filter would not stop)."""

PROTO_FD = 3
OUTPUT_LIMIT = 4096

# the system calls the strategy process may make, by machine (anything else fails with EPERM)
_SYSCALLS: dict[str, tuple[int, tuple[int, ...]]] = {
    "x86_64": (0xC000003E, (0, 1, 3, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 19, 20, 23, 24, 25, 28, 35, 39,
                            60, 72, 96, 98, 131, 186, 201, 202, 228, 229, 230, 231, 262, 270, 271, 318)),
    "aarch64": (0xC00000B7, (25, 29, 57, 62, 63, 64, 65, 66, 72, 73, 79, 80, 93, 94, 98, 101, 113, 114, 115,
                             124, 132, 134, 135, 139, 165, 169, 172, 178, 214, 215, 216, 222, 226, 233, 278)),
}
_KINDS = (
    ("open", "to open a file"), ("socket.", "to use a network socket"), ("os.fork", "to start a process"),
    ("os.exec", "to run a program"), ("os.system", "to run a program"),
    ("os.posix_spawn", "to start a process"), ("os.spawn", "to start a process"),
    ("subprocess.", "to start a process"), ("_thread.", "to start a thread"),
    ("os.kill", "to signal another process"), ("os.killpg", "to signal other processes"),
    ("signal.", "to send a signal"), ("import", "to import a module"), ("ctypes.", "to call C code"),
    ("os.", "to use the file system"), ("shutil.", "to use the file system"), ("glob.", "to list files"),
)
"""What an audit event's name says the strategy tried (the first match; else "to reach into the
interpreter")."""


class Output:
    """``sys.stdout``/``sys.stderr`` of the strategy: keeps the first :data:`OUTPUT_LIMIT` characters."""

    def __init__(self) -> None:
        self.text = ""

    def write(self, s: Any) -> int:
        s = str(s)
        if len(self.text) < OUTPUT_LIMIT:
            self.text += s[: OUTPUT_LIMIT - len(self.text)]
        return len(s)

    def flush(self) -> None:
        pass


def send(kind: str, payload: Any) -> None:
    """One answer line on the answer pipe (``m``/``i``: text; ``x``: JSON)."""
    line = f"{kind} {payload}\n" if kind != "x" else "x " + json.dumps(payload, default=str) + "\n"
    data = line.encode("utf-8", "backslashreplace")
    while data:
        data = data[os.write(PROTO_FD, data):]


def _short(v: Any, limit: int = 80) -> str:
    """``v`` for a report without running any code of the strategy's (no ``__repr__`` of its objects)."""
    kind = type(v)  # not isinstance or __class__: a subclass's __repr__ and a __class__ property are its code
    if kind is int and v.bit_length() > 64:
        text = f"<an int of {v.bit_length()} bits>"  # repr of 10**5000 raises (int digit limit)
    elif kind in (str, bytes, int, float, bool) or v is None:
        text = repr(v)
    elif kind in (tuple, list):
        text = "(" + ", ".join(_short(x, 30) for x in v[:4]) + ")"
    else:
        text = f"<{type(v).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def audit_hook(allowed_modules: frozenset[str]) -> Any:
    """The hook: an allowed event passes; any other is reported (what was tried) and the process exits."""
    reported = [False]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in ALLOWED_EVENTS or reported[0]:
            return
        module = args[0] if event == "import" and args and isinstance(args[0], str) else ""
        if module and module.split(".")[0] in allowed_modules:
            return
        reported[0] = True
        what = next((text for prefix, text in _KINDS if event.startswith(prefix)),
                    "to reach into the interpreter")
        shown = args[0] if event in ("import", "open") and args else args
        send("x", {"forbidden": what, "event": event, "detail": _short(shown)})
        os._exit(3)

    return hook


def install_seccomp() -> str:
    """Allow only :data:`_SYSCALLS` from now on; returns the machine, or raises OSError."""
    machine = platform.machine()
    if machine not in _SYSCALLS:
        raise OSError(f"no seccomp table for machine {machine!r} (x86_64 and aarch64 have one)")
    arch, allowed = _SYSCALLS[machine]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, 0x80000000),  # another ABI: kill the process
            (ld, 0, 0, 0), (jge, len(allowed) + 1, 0, 0x40000000)]  # x32 system calls: refused
    prog += [(jeq, len(allowed) - i, 0, nr) for i, nr in enumerate(allowed)]
    prog += [(ret, 0, 0, 0x00050000 | 1), (ret, 0, 0, 0x7FFF0000)]  # EPERM, allow

    class Insn(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn))]

    insns = (Insn * len(prog))(*[Insn(*p) for p in prog])
    fprog = Prog(len(prog), insns)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(1, 9, 0, 0, 0) != 0:  # PR_SET_PDEATHSIG, SIGKILL
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != int(os.environ.get("AI2048_PARENT", "0") or 0):
        os._exit(9)  # the parent died before the line above took effect
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
    return machine


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def lock_down(cpu_seconds: int, memory_bytes: int) -> None:
    """Steps 2 to 4 of the module docstring."""
    os.dup2(1, PROTO_FD)
    os.dup2(2, 1)  # the parent opened fd 2 on /dev/null
    os.closerange(PROTO_FD + 1, 1 << 16)
    limit = _vm_bytes() + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_NOFILE, (PROTO_FD + 1, PROTO_FD + 1))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    install_seccomp()


def trace(exc: BaseException, lines: list[str]) -> list[tuple[int, str]]:
    """(line number, source line) of the strategy's own frames in ``exc``'s traceback, innermost last."""
    out = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == "<strategy>":
            n = tb.tb_lineno
            out.append((n, lines[n - 1].strip()[:120] if 0 < n <= len(lines) else ""))
        tb = tb.tb_next
    return out[-5:]


def failure(exc: BaseException, lines: list[str]) -> dict[str, Any]:
    """An exception of the strategy as a report (its message read with care: ``__str__`` is its code)."""
    if isinstance(exc, SyntaxError) and exc.filename == "<strategy>":
        n = exc.lineno or 0
        where = [(n, lines[n - 1].strip()[:120] if 0 < n <= len(lines) else "")]
        return {"error": f"SyntaxError: {exc.msg}", "trace": where}
    kind = "memory" if isinstance(exc, MemoryError) else "error"
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001
        message = "<the exception's message raised an exception>"
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return {kind: text[:300], "trace": trace(exc, lines)}


_TILES = [0] + [1 << e for e in range(1, 16)]


def main() -> None:
    setup = json.loads(sys.stdin.buffer.readline())
    code: str = setup["code"]
    modules = MODULES + (("numpy",) if setup.get("numpy") else ())
    for name in modules:
        __import__(name)
    import random

    random.seed(setup["seed"])
    if setup.get("numpy"):
        sys.modules["numpy"].random.seed(setup["seed"] % (1 << 32))
    lines = code.splitlines()
    output = Output()
    warnings.simplefilter("ignore")  # showing a warning reads the source file of the line that warns
    program: Any
    try:
        program = compile(code, "<strategy>", "exec")  # a SyntaxError's report reads the "file" too
    except (SyntaxError, ValueError) as e:
        program = e
    try:
        lock_down(int(setup["cpu_seconds"]), int(setup["memory_bytes"]))
    except (OSError, ValueError) as e:  # the host lacks what the sandbox needs: the parent refuses to go on
        send("x", {"setup_error": str(e)})
        os._exit(0)
    send("x", {"locked": True})  # from here on the code may write to the answer pipe: no set-up report
    for name in ("ctypes", "_ctypes", "ctypes._endian"):
        sys.modules.pop(name, None)
    sys.stdout = sys.stderr = output  # type: ignore[assignment]
    stdin = sys.stdin.buffer
    if setup.get("audit", True):
        sys.addaudithook(audit_hook(frozenset(modules)))
    namespace: dict[str, Any] = {"__name__": "strategy", "__builtins__": builtins}
    try:
        if isinstance(program, BaseException):
            raise program
        exec(program, namespace)
        strategy = namespace.get("strategy")
        if not callable(strategy):
            raise NameError("the code defines no function strategy(board)")
    except BaseException as e:  # noqa: BLE001 (every failure of untrusted code is reported)
        send("x", {**failure(e, lines), "stage": "load", "output": output.text})
        os._exit(0)
    send("x", {"ready": True})
    tiles = _TILES
    while True:
        line = stdin.readline()
        if not line:
            os._exit(0)
        if line[:2] == b"s ":  # a new game: its seed for random (and numpy), so each game stands alone
            game_seed = int(line[2:])
            random.seed(game_seed)
            if setup.get("numpy"):
                sys.modules["numpy"].random.seed(game_seed % (1 << 32))
            continue
        b = int(line, 16)
        board = [[tiles[(b >> (16 * r + 4 * c)) & 0xF] for c in range(4)] for r in range(4)]
        try:
            answer = strategy(board)
        except BaseException as e:  # noqa: BLE001
            send("x", {**failure(e, lines), "output": output.text})
            os._exit(0)
        kind = type(answer)  # never answer.__class__ or a subclass: their methods are the strategy's code
        if kind is str and len(answer) <= 1024:
            if "\n" in answer or "\r" in answer:
                send("x", {"m": answer})  # several lines (reasoning, then the move): as JSON
            else:
                send("m", answer)
        elif kind is int and answer.bit_length() <= 64:
            send("i", answer)
        else:
            send("x", {"bad": _short(answer)})


if __name__ == "__main__":
    main()
