"""Progress in a log: written to a file or a pipe, a progress display prints a plain line at each tenth
of the work or every 30 s, never a carriage-return redraw; on a terminal it is tqdm's bar. Every
progress display of the package goes through :func:`ai2048.progress.progress_bar`."""

from __future__ import annotations

import ast
import io
import os
import threading
from pathlib import Path

import pytest
from tqdm import tqdm

from ai2048.progress import EVERY_SECONDS, LogProgress, is_terminal, progress_bar

SRC = Path(__file__).resolve().parents[1] / "src" / "ai2048"


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_progress_bar__a_file_gets_a_line_per_tenth_and_no_carriage_return(tmp_path):
    clock = FakeClock()
    with open(tmp_path / "log.txt", "w") as log:
        bar = progress_bar(total=1000, desc="eval greedy", unit="game", file=log, clock=clock)
        assert isinstance(bar, LogProgress)
        for _ in range(1000):  # a thousand updates, 125 s in all: ten lines by the tenths, none by the clock
            clock.now += 0.125
            bar.update(1)
        bar.close()
    text = (tmp_path / "log.txt").read_text()
    lines = text.splitlines()
    assert "\r" not in text and len(lines) == 10
    assert lines[0] == "eval greedy: 10% 100/1,000 game, 00:12, 8 game/s"
    assert lines[-1] == "eval greedy: 100% 1,000/1,000 game, 02:05, 8 game/s"


def test_progress_bar__a_pipe_gets_a_line_every_30_seconds_of_slow_work():
    read, write = os.pipe()
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(os.fdopen(read, "rb").read()))
    reader.start()
    clock = FakeClock()
    with os.fdopen(write, "w") as pipe:
        assert not is_terminal(pipe)
        bar = progress_bar(total=1000, desc="build", unit="pos", file=pipe, clock=clock)
        bar.set_postfix_str("solving layer 3")
        for _ in range(9):  # 9 of 1,000 done over 90 s: no tenth reached, three lines by the clock
            clock.now += 10.0
            bar.update(1)
        bar.close()  # the last line is the 9th: nothing more to say
    reader.join(timeout=30)
    lines = out[0].decode().splitlines()
    assert [line.split(", ")[0] for line in lines] == ["build: 0% 3/1,000 pos", "build: 1% 6/1,000 pos",
                                                    "build: 1% 9/1,000 pos"]
    assert lines[-1] == "build: 1% 9/1,000 pos, 01:30, 0.1 pos/s, solving layer 3" and EVERY_SECONDS == 30.0


def test_progress_bar__close_writes_the_last_line_once_and_disable_writes_nothing():
    log, clock = io.StringIO(), FakeClock()
    bar = progress_bar(total=100, desc="x", file=log, clock=clock)
    bar.update(15)  # past 10%: a line
    bar.update(3)  # 18%, within the same tenth: none
    bar.close()  # the count moved since the last line: the last line
    bar.close()
    bar.update(50)  # after close: nothing
    lines = log.getvalue().splitlines()
    assert [line.split(", ")[0] for line in lines] == ["x: 15% 15/100 it", "x: 18% 18/100 it"]
    quiet = io.StringIO()
    with progress_bar(total=10, file=quiet, disable=True, clock=clock) as off:
        off.update(10)
    assert quiet.getvalue() == ""


def test_progress_bar__wraps_an_iterable_with_its_total_and_postfix():
    log, clock = io.StringIO(), FakeClock()
    items = []
    bar = progress_bar(iter(range(4)), total=4, desc="pool: first 16384", unit="game", file=log, clock=clock)
    for x in bar:
        items.append(x)
        bar.set_postfix(score="1200", max=2048)
    assert items == [0, 1, 2, 3]
    lines = log.getvalue().splitlines()
    assert len(lines) == 4 and lines[-1].endswith("score=1200, max=2048")  # each update is a 25% step


def test_progress_bar__without_a_total_only_the_clock_writes_and_unit_scale_shortens():
    log, clock = io.StringIO(), FakeClock()
    bar = LogProgress(desc="train", unit="pos", unit_scale=True, file=log, clock=clock)
    bar.update(2_500_000)
    assert log.getvalue() == ""
    clock.now += EVERY_SECONDS
    bar.update(2_500_000)
    assert log.getvalue() == "train: 5.00M pos, 00:30, 167k pos/s\n"


def test_progress_bar__a_terminal_gets_tqdm(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    bar = progress_bar(total=5, desc="eval", unit="game", file=screen, dynamic_ncols=True)
    assert isinstance(bar, tqdm)
    bar.update(5)
    bar.close()
    assert "\r" in screen.getvalue()


def test_is_terminal__odd_streams_are_not():
    closed = io.StringIO()
    closed.close()
    assert not is_terminal(closed) and not is_terminal(object()) and not is_terminal(io.StringIO())


def _imports_tqdm(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(n == "tqdm" or n.startswith("tqdm.") for n in names):
            return True
    return False


@pytest.mark.parametrize("root", [SRC, SRC.parents[1] / "benchmarks"], ids=["src", "benchmarks"])
def test_progress_displays__tqdm_is_imported_by_the_progress_module_only(root):
    users = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if _imports_tqdm(p))
    assert users == (["progress.py"] if root == SRC else [])
