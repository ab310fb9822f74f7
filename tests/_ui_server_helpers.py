"""A real ``ai2048 serve`` app on 127.0.0.1 for the tests: uvicorn in a thread on a free port."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ai2048.agents import BaseAgent, register
from ai2048.rules import Action
from ai2048.ui.limits import Float


class SlowAgent(BaseAgent):
    """Sleeps ``delay`` seconds a decision, then plays the first legal move (for busy-server tests)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay

    def act(self, board: int) -> Action:
        from ai2048 import legal_mask

        time.sleep(self.delay)
        mask = legal_mask(board)
        return next(a for a in Action if mask[a])


register("ui-test-slow", "_ui_server_helpers:SlowAgent", "test agent: sleeps, then the first legal move")
SLOW_AGENT = {"ui-test-slow": {"delay": Float(0.0, 2.0)}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serving(app: Any, config: Callable[[int], Any] | None = None) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free 127.0.0.1 port; yields ``http://127.0.0.1:PORT``.

    ``config(port)``: the ``uvicorn.Config`` to serve with (default: uvicorn's defaults)."""
    import uvicorn

    port = free_port()
    made = config(port) if config else uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical")
    server = uvicorn.Server(made)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


SRC = str(Path(__file__).resolve().parents[1] / "src")


def cli_env() -> dict[str, str]:
    """This environment, with this checkout's ``src`` first on the path (for ``python -m ai2048``)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}


def read_until(proc: subprocess.Popen, text: str, timeout: float) -> list[str]:
    """Lines of ``proc``'s stdout up to the first holding ``text`` (AssertionError after ``timeout``,
    or when the output ends first)."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if text in line:
            return lines
    raise AssertionError(f"no line with {text!r} within {timeout} s: {''.join(lines)}")


@contextlib.contextmanager
def serve_cli(*args: str) -> Iterator[tuple[subprocess.Popen, int]]:
    """``python -m ai2048 serve --port PORT *args`` in a fresh process; yields (process, port) at once
    (its stdout a text pipe) and stops it with Ctrl-C (SIGINT) afterwards, killing it if it hangs."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "ai2048", "serve", "--port", str(port), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
    try:
        yield proc, port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


def dqn_model_run(path: Path) -> Path:
    """A tiny untrained DQN run directory (model.pt + meta.json), as ``ai2048 train dqn`` writes it."""
    import torch

    from ai2048.nets import build_net
    from ai2048.train.dqn import DQNConfig
    from ai2048.train.run import write_meta
    from ai2048.train.torchrun import save_model

    cfg = DQNConfig(net="conv")
    spec = cfg.net_spec()
    torch.manual_seed(0)
    path.mkdir(parents=True)
    save_model(path, "dqn", spec, build_net(spec),
               {"config": dataclasses.asdict(cfg), "explore_counts": [1.0] * 4})
    write_meta(path, "dqn", "dqn", "completed", {"step": 0, "games": 0, "time": 0.0})
    return path


def rss_bytes() -> int:
    """This process's resident memory (Linux ``/proc``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def raw_exchange(url: str, data: bytes, responses: int = 1, timeout: float = 10.0) -> list[bytes]:
    """Send ``data`` as is on one connection; return the status lines of the answers (up to ``responses``)."""
    host, port = url.removeprefix("http://").split(":")
    buf = b""
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(data)
        while len(_answers(buf)) < responses:
            try:
                chunk = s.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            buf += chunk
    return _answers(buf)


def _answers(buf: bytes) -> list[bytes]:
    """The status lines of the complete answers (head and Content-Length body) at the start of ``buf``."""
    out, pos = [], 0
    while True:
        head_end = buf.find(b"\r\n\r\n", pos)
        if head_end < 0:
            return out
        lines = buf[pos:head_end].split(b"\r\n")
        if any(x.lower().replace(b" ", b"") == b"transfer-encoding:chunked" for x in lines):
            end = buf.find(b"\r\n0\r\n\r\n", head_end)
            if end < 0:
                return out
            pos = end + 7
        else:
            length = next((int(x.split(b":")[1]) for x in lines if x.lower().startswith(b"content-length:")),
                          0)
            if head_end + 4 + length > len(buf):
                return out
            pos = head_end + 4 + length
        out.append(lines[0])
