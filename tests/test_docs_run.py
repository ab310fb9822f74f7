"""The commands of docs/seeds.md and the README's quick start run end to end, in a short form: each
exits 0 and prints what it promises (the tile table of ``eval``, the table of ``arena``, a run
directory from ``train``, the figures of ``plot``, the board of ``watch``).

tests/test_docs_commands.py checks that every documented command parses and passes its up-front
checks; five of docs/seeds.md's commands passed it and still stopped after a few moves (issue 46: a
seed004-exact run under the standard rules). Here the commands play. The short form keeps every
option of the doc's line and shrinks only the budget: few games (``--games``, ``--eval-games``),
seconds of training (``duration``, ``episodes``), a small n-tuple pattern set, a move cap for
``watch``. The runs they read are the ones the earlier commands of the same page trained, in a
temporary folder; ``RUN`` in a table row is the run that row trains. Long (training with torch,
several kernel compiles): marked slow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from ai2048.cli import main
from test_docs_commands import ROOT, _program, _segments, _snippets

pytestmark = pytest.mark.slow

SMALL_PATTERNS = "0123,4567"
"""The n-tuple pattern set the short form trains (tests/test_seed004_options.py compiles its kernels)."""
NOT_RUN = {
    "device=cuda": "a GPU (docs/seeds.md says it is not run here)",
    "tables build": "1.4 GB of tables and a minute on 2 cores; the agent plays the distilled tables instead",
}
"""Words of the commands left out, and why: each must match a documented command (checked)."""


@dataclass(frozen=True)
class Step:
    """One documented command: where, its words as written, and its short form."""

    where: str
    written: tuple[str, ...]
    argv: tuple[str, ...]


def _quick_start_lines() -> set[int]:
    """The README's line numbers of its "Quick start" section."""
    lines = (ROOT / "README.md").read_text().split("\n")
    start = lines.index("## Quick start")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("## "))
    return set(range(start + 1, end + 1))


def _set(argv: list[str], key: str, value: str) -> None:
    """``--set key=value`` in ``argv``: replaces the doc's value of ``key``, else is added."""
    for i, tok in enumerate(argv):
        if tok.startswith(f"{key}=") and i and argv[i - 1] == "--set":
            argv[i] = f"{key}={value}"
            return
    argv += ["--set", f"{key}={value}"]


def _option(argv: list[str], flag: str, value: str) -> None:
    """``flag value`` in ``argv``: replaces the doc's value, else is added."""
    if flag in argv:
        argv[argv.index(flag) + 1] = value
    else:
        argv += [flag, value]


def short_form(argv: list[str]) -> list[str]:
    """The documented command with a small budget and every other option as written."""
    out = list(argv)
    if out[0] == "train":
        trainer = out[1]
        if trainer == "ntuple":
            _option(out, "--games", "40")
            _option(out, "--patterns", SMALL_PATTERNS)
            if "--eval-games" in out:
                _option(out, "--eval-games", "3")
        else:
            _set(out, "duration", "3")
            if trainer in ("dqn", "qnet"):
                _set(out, "episodes", "2")
            if trainer == "qnet":
                _set(out, "validate_games", "2")
    elif out[0] in ("eval", "arena"):
        _option(out, "--games", "2")
    elif out[0] == "watch":
        _option(out, "--max-moves", "20")
    return out


def run_of(lineno: int, text: str, last_run: str) -> str:
    """The run a ``RUN`` placeholder stands for: the one its line trains (a table row's ``--out RUN``),
    else the last run trained above it on the page."""
    return f"runs/RUN-{lineno}" if re.search(r"train .*--out RUN\b", text) or not last_run else last_run


def steps() -> tuple[list[Step], set[str]]:
    """The commands of docs/seeds.md and the README's quick start in page order (each once), in their
    short form; and the NOT_RUN words that matched a command left out."""
    found: list[Step] = []
    left_out: set[str] = set()
    seen: set[tuple[str, ...]] = set()
    quick = _quick_start_lines()
    last_run = ""
    for path in (ROOT / "README.md", ROOT / "docs" / "seeds.md"):
        for lineno, text, _inline in _snippets(path):
            if path.name == "README.md" and lineno not in quick:
                continue
            for tokens in _segments(text):
                prog = _program(tokens)
                if prog is None or prog[0] != "ai2048" or not prog[1] or prog[1][0].endswith(":"):
                    continue
                argv = [run_of(lineno, text, last_run) if tok == "RUN" else tok for tok in prog[1]]
                if not any(t.startswith("-") for t in argv) and len(argv) <= 2 and argv[0] != "tables":
                    continue  # a mention by name ("ai2048 eval"), not a command line
                skip = [w for w in NOT_RUN if w in " ".join(argv)]
                if skip:
                    left_out.update(skip)
                    continue
                if tuple(argv) in seen:
                    continue
                seen.add(tuple(argv))
                if argv[0] == "train" and "--out" in argv:
                    last_run = argv[argv.index("--out") + 1]
                found.append(Step(f"{path.relative_to(ROOT)}:{lineno}", tuple(argv), tuple(short_form(argv))))
    return found, left_out


def _promised(step: Step, out: str, cwd: Path) -> None:
    """What the command's output must hold: the table or files it promises."""
    command = step.argv[0]
    if command == "eval":
        assert re.search(r"tile\s+reach %\s+95% CI\s+end %", out), out
        assert "score " in out
    elif command == "arena":
        assert ">= " in out and "moves/s" in out, out
    elif command == "train":
        assert "run directory:" in out, out
        run = Path(cwd, step.argv[step.argv.index("--out") + 1])
        assert (run / "meta.json").is_file()
    elif command == "plot":
        figs = Path(cwd, step.argv[step.argv.index("--out") + 1])
        assert any(figs.glob("*.png")), f"{figs} holds no figure"
    elif command == "watch":
        assert "score" in out and "moves" in out, out


def test_short_form__keeps_every_option_and_shrinks_the_budget() -> None:
    argv = ["train", "dqn", "--preset", "seed000", "--set", "duration=1200", "--out", "runs/x"]
    assert short_form(argv) == ["train", "dqn", "--preset", "seed000", "--set", "duration=3", "--out",
                                "runs/x", "--set", "episodes=2"]
    assert short_form(["eval", "runs/x", "--games", "1000", "--seed", "1"]) == [
        "eval", "runs/x", "--games", "2", "--seed", "1"]
    ntuple = ["train", "ntuple", "--preset", "seed004", "--games", "100000", "--eval-games", "1000"]
    assert short_form(ntuple) == [
        "train", "ntuple", "--preset", "seed004", "--games", "40", "--eval-games", "3", "--patterns",
        SMALL_PATTERNS]
    assert short_form(["watch", "ntuple", "--seed", "1"]) == [
        "watch", "ntuple", "--seed", "1", "--max-moves", "20"]


def test_steps__every_page_command_is_run_or_left_out_for_a_named_reason() -> None:
    found, left_out = steps()
    assert left_out == set(NOT_RUN), f"NOT_RUN names no documented command: {set(NOT_RUN) - left_out}"
    commands = {s.argv[0] for s in found}
    assert {"eval", "arena", "train", "plot", "watch"} <= commands
    written = [" ".join(s.written) for s in found]
    for doc in ("eval runs/seed004 --set tie_order=clockwise --games 1000 --seed 1",  # issue 46's
                "eval runs/seed004 --end-on-full-board --set tie_order=004 --games 1000 --seed 1",
                "watch ntuple --set depth=2 --seed 1"):
        assert doc in written


def test_docs_commands__run_end_to_end_in_short_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AI2048_TABLES", str(tmp_path / "no-tables"))  # distilled tables, as with no build
    found, _ = steps()
    for step in found:
        code = main(list(step.argv))
        captured = capsys.readouterr()
        command = " ".join(step.argv)
        assert code == 0, f"{step.where}: `ai2048 {command}` exited {code}:\n{captured.err[-2000:]}"
        _promised(step, captured.out + captured.err, tmp_path)
