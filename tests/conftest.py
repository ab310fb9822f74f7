"""Suite-wide guards."""

from __future__ import annotations

import ctypes
import signal
from collections import Counter
from collections.abc import Iterator

import pytest

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_LIBC = ctypes.CDLL(None, use_errno=True)


def _c_handler(sig: int) -> int:
    """The address of the process's C-level handler of ``sig`` (``sigaction``): a native library can
    replace Python's own handler without ``signal.getsignal`` noticing."""
    buf = ctypes.create_string_buffer(256)  # struct sigaction; its first member is the handler
    assert _LIBC.sigaction(sig, None, buf) == 0
    return int.from_bytes(buf.raw[:8], "little")


@pytest.fixture(scope="session", autouse=True)
def _ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt in every test process, as in an interactive shell: a suite
    started in the background by a non-interactive shell (``nohup pytest &``, some CI runners)
    inherits SIGINT ignored, and the tests of what Ctrl-C does would then see nothing."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """A test must leave the SIGINT/SIGTERM handlers and the main thread's blocked signals as it
    found them: a leaked handler (a trainer's graceful stop that only sets a flag) or a blocked
    SIGINT silently changes what Ctrl-C does in every later test."""
    before = {s: signal.getsignal(s) for s in _SIGNALS}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    native = {s: _c_handler(s) for s in _SIGNALS}
    yield
    changed = [signal.Signals(s).name for s in _SIGNALS if _c_handler(s) != native[s]]
    after = {s: signal.getsignal(s) for s in _SIGNALS}
    leaked = {signal.Signals(s).name: after[s] for s in _SIGNALS if after[s] is not before[s]}
    blocked = signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # the mask as it was; returns the test's
    for s in _SIGNALS:
        signal.signal(s, before[s])
    assert not leaked, f"the test left signal handlers installed: {leaked}"
    assert blocked == mask, f"the test left signals blocked: {sorted(blocked - mask)}"
    assert not changed, f"the test left a native (C-level) handler of {changed} in place of Python's"


HEAVY_FIRST = (
    "test_seed004_options.py",
    "test_ui_adversarial.py",
    "test_ntuple_eval_compile.py",
    "test_models.py",
)
"""The test files that take longest from a cold cache (``--durations``: the n-tuple trainer's kernels,
which later files load, ``ai2048 serve``'s warm-up in a subprocess, a cold compile in a child, a
trained network): the workers get them first, the two that compile different kernels (the n-tuple
trainer's, the web agents') side by side. A worker takes whole files (``--dist loadfile``) in
collection order (``--no-loadscope-reorder``); xdist's own order, most tests first, handed these out
in the second half of the run, which could then end with one worker busy on one of them and the
other idle."""


def run_order(nodeids: list[str]) -> list[str]:
    """``nodeids`` as the workers get them: :data:`HEAVY_FIRST`'s files first, then the others by
    number of tests (most first, xdist's order), each file's tests in their own order."""
    files = Counter(nodeid.split("::")[0] for nodeid in nodeids)
    rank = {name: k for k, name in enumerate(HEAVY_FIRST)}

    def key(nodeid: str) -> tuple[int, int]:
        file = nodeid.split("::")[0]
        return rank.get(file.rsplit("/", 1)[-1], len(rank)), -files[file]

    return sorted(nodeids, key=key)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, the tests in :func:`run_order`."""
    if hasattr(config, "workerinput"):
        position = {nodeid: k for k, nodeid in enumerate(run_order([item.nodeid for item in items]))}
        items.sort(key=lambda item: position[item.nodeid])


def tiny_table_spec():  # noqa: ANN201 (tables import lazily: most tests never need them)
    from ai2048.tables import formations
    from ai2048.tables.formations import TableSpec

    return TableSpec(formations.F442, 4, 2 ** 12)


@pytest.fixture(scope="session")
def tiny_tables(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """A folder with :func:`tiny_table_spec`'s table built (once a session)."""
    from ai2048.tables.build import build

    d = tmp_path_factory.mktemp("tables")
    build(tiny_table_spec(), d)
    return d
