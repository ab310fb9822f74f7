"""Progress of long work: a bar on a terminal, a plain line now and then in a log.

A tqdm bar redraws itself with carriage returns, many times a second; written to a file or a pipe
(``ai2048 tables build 2> build.log``, a job scheduler's log) those redraws pile up as hundreds of
updates on one line. So, as pip and Hugging Face's tools do, :func:`progress_bar` gives a tqdm bar
only when its stream is a terminal (or a Jupyter kernel's), and otherwise a :class:`LogProgress`,
which prints one plain line each time another tenth of the total is done or
:data:`EVERY_SECONDS` have passed since its last line, and a last one when it closes::

    tables build 442-64: 40% 1.97M/4.92M pos, 2 s, 985k pos/s, enumerating layer 61

Every progress display of the package is made here (``tests/test_progress.py`` checks that no other
module imports tqdm).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from tqdm import tqdm

EVERY_FRACTION = 0.1
"""A log line each time another tenth of the total is done."""
EVERY_SECONDS = 30.0
"""A log line at least this often while work goes on (the only rule when the total is unknown)."""


def is_terminal(stream: Any) -> bool:
    """Whether ``stream`` is an interactive terminal (a closed or odd stream is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where tqdm draws a widget, not carriage returns)."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


class LogProgress:
    """The part of tqdm's interface the package uses (``update``, ``set_postfix``,
    ``set_postfix_str``, ``close``, iteration, ``with``), printed as plain lines for a log.

    A line is written when ``n`` reaches the next tenth of ``total`` (``every_fraction``) or
    ``every_seconds`` after the last line (read from ``clock``), and at :meth:`close` when the count
    moved since the last line. Nothing is written while ``disable`` is true.
    """

    def __init__(
        self,
        iterable: Iterable[Any] | None = None,
        *,
        total: float | None = None,
        initial: float = 0,
        desc: str = "",
        unit: str = "it",
        unit_scale: bool = False,
        disable: bool = False,
        file: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        every_fraction: float = EVERY_FRACTION,
        every_seconds: float = EVERY_SECONDS,
    ) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.total, self.n, self.desc, self.unit = iterable, total or None, initial, desc, unit
        self.unit_scale, self.disable, self.file, self.clock = unit_scale, disable, file, clock
        self.every_fraction, self.every_seconds = every_fraction, every_seconds
        self.postfix = ""
        self.start = self.last_time = clock()
        self.initial = self.last_n = initial
        self.closed = False

    def _step(self, n: float) -> int:
        """Which tenth of the total ``n`` is in (0 without a total)."""
        return int(n / self.total / self.every_fraction) if self.total else 0

    def _count(self, n: float) -> str:
        return tqdm.format_sizeof(n) if self.unit_scale else f"{n:,.0f}"

    def line(self) -> str:
        """The progress as one line: what, how far, how long, how fast, and the postfix."""
        elapsed = self.clock() - self.start
        done = self._count(self.n)
        where = f"{done}/{self._count(self.total)} {self.unit}" if self.total else f"{done} {self.unit}"
        if self.total:
            where = f"{100 * self.n / self.total:.0f}% {where}"
        rate = (self.n - self.initial) / elapsed if elapsed > 0 else 0.0
        rate_text = tqdm.format_sizeof(rate) if self.unit_scale else f"{rate:,.3g}"
        parts = [where, tqdm.format_interval(elapsed), f"{rate_text} {self.unit}/s", self.postfix]
        return (f"{self.desc}: " if self.desc else "") + ", ".join(p for p in parts if p)

    def _write(self) -> None:
        stream = sys.stderr if self.file is None else self.file
        stream.write(self.line() + "\n")
        stream.flush()
        self.last_n, self.last_time = self.n, self.clock()

    def update(self, n: float = 1) -> None:
        """Count ``n`` more done; write a line when a tenth of the total or the time says so."""
        before = self.n
        self.n += n
        if self.disable or self.closed:
            return
        if self._step(self.n) > self._step(before) or self.clock() - self.last_time >= self.every_seconds:
            self._write()

    def set_postfix(self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True,
                    **kwargs: Any) -> None:
        """Show ``key=value`` pairs after the figures on the next line (``refresh`` is tqdm's; unused)."""
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        """Show ``s`` after the figures on the next line."""
        self.postfix = s

    def close(self) -> None:
        """Write the last line (when the count moved since the one before); later updates write nothing."""
        if not self.closed and not self.disable and self.n != self.last_n:
            self._write()
        self.closed = True

    def __iter__(self) -> Iterator[Any]:
        if self.iterable is None:
            raise TypeError("this progress display wraps no iterable")
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


LOG_OPTIONS = ("total", "initial", "desc", "unit", "unit_scale", "disable")
"""The tqdm options a :class:`LogProgress` reads too; the others (``dynamic_ncols``, ``smoothing``, ...)
shape a bar only."""


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    file: TextIO | None = None,
    clock: Callable[[], float] = time.monotonic,
    **options: Any,
) -> Any:
    """A tqdm bar over ``iterable`` (or counted by ``update``) where ``file`` (default stderr) is a
    terminal or the process a Jupyter kernel; else a :class:`LogProgress` printing plain lines.

    ``options`` are tqdm's (``total``, ``initial``, ``desc``, ``unit``, ``unit_scale``, ``disable``,
    and bar-only ones such as ``dynamic_ncols``); ``clock`` is the log's (tests pass a fake one).
    """
    stream = sys.stderr if file is None else file
    if is_terminal(stream) or (file is None and _in_notebook()):
        from tqdm.auto import tqdm as auto_tqdm  # a widget in Jupyter, the plain bar elsewhere

        bar = auto_tqdm if not is_terminal(stream) else tqdm
        return bar(iterable, file=stream, **options)
    log_options = {k: v for k, v in options.items() if k in LOG_OPTIONS}
    return LogProgress(iterable, file=file, clock=clock, **log_options)
