"""Suite-wide guards."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """A test must leave the SIGINT/SIGTERM handlers and the main thread's blocked signals as it
    found them: a leaked handler (a trainer's graceful stop that only sets a flag) or a blocked
    SIGINT silently changes what Ctrl-C does in every later test."""
    before = {s: signal.getsignal(s) for s in _SIGNALS}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    yield
    after = {s: signal.getsignal(s) for s in _SIGNALS}
    leaked = {signal.Signals(s).name: after[s] for s in _SIGNALS if after[s] is not before[s]}
    blocked = signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # the mask as it was; returns the test's
    for s in _SIGNALS:
        signal.signal(s, before[s])
    assert not leaked, f"the test left signal handlers installed: {leaked}"
    assert blocked == mask, f"the test left signals blocked: {sorted(blocked - mask)}"
