"""Suite-wide guards."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@pytest.fixture(autouse=True)
def _signal_handlers_restored() -> Iterator[None]:
    """A test must leave the SIGINT/SIGTERM handlers as it found them: a leaked handler (a trainer's
    graceful stop that only sets a flag) silently changes what Ctrl-C does in every later test."""
    before = {s: signal.getsignal(s) for s in _SIGNALS}
    yield
    after = {s: signal.getsignal(s) for s in _SIGNALS}
    leaked = {signal.Signals(s).name: after[s] for s in _SIGNALS if after[s] is not before[s]}
    for s in _SIGNALS:
        signal.signal(s, before[s])
    assert not leaked, f"the test left signal handlers installed: {leaked}"
