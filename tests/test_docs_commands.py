"""Every command line in README.md and docs/*.md parses and passes the checks its command makes before
any work (:func:`ai2048.cli.check`), so what a user copies from the docs cannot fail on a renamed
option, a removed preset or an unknown ``--set`` key (the docs' Python examples: tests/test_api_docs.py).

Commands come from fenced code blocks (shell variables and ``for`` loops in a block are expanded) and
from inline code. The docs' placeholder conventions are read as a user reads them: ``[...]`` is
optional (checked without it and with it), ``a|b`` inside it lists alternatives, ``...`` elides, and
the ALL-CAPS words of :func:`_placeholder` stand for a value. Inputs that only exist on the machine the
docs were written on (``runs/...``, ``/tmp/...``) are checked up to the point where the file is needed:
:func:`ai2048.cli.check` raises FileNotFoundError naming it after every check that needs no file.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import inspect
import io
import itertools
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ai2048.agents.base import available, config_keys, make_agent
from ai2048.cli import build_parser, check
from ai2048.cli._agents import split_spec
from ai2048.cli._common import parse_sets
from ai2048.train import TRAINERS, get_trainer

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_SHELL = {"python", "py", "pycon", "json", "text", "toml", "yaml", "js", "javascript", "html", "css"}
"""Fenced-block languages that hold no shell commands."""


def _default_model() -> str:
    from ai2048 import models

    return models.default_name()


def _placeholder(word: str, prev: str, argv: list[str]) -> list[str]:
    """The values an ALL-CAPS placeholder of the docs is checked with, after the token ``prev``; other
    ALL-CAPS words (PATH, DIR, OLD_MODULE, ...) are checked as the strings they are."""
    if word.startswith("RUN"):  # RUN, RUN_DIR, RUN_OR_CHECKPOINT_COPY, ...: a run made by an earlier command
        return [f"runs/{word}"]
    if word == "AGENT":  # any registered agent
        return ["expectimax"]
    if word == "N":  # a count
        return ["10"]
    if word == "NAME" and prev == "train":  # every trainer
        return sorted(TRAINERS)
    if word == "NAME" and prev in ("models", "model="):  # a shipped network
        return [_default_model()]
    if word == "NAME" and prev == "agents":
        return ["expectimax"]
    if word == "P" and prev == "--patterns":
        return ["4x6"]
    if word == "P" and prev == "--preset" and argv[:1] == ["train"]:  # every preset of the trainer
        return sorted(get_trainer(argv[1]).presets or {})
    return [word]


@dataclass(frozen=True)
class DocCommand:
    """One command line as a doc shows it, and one reading of it (``argv`` without the program)."""

    where: str  # "docs/x.md:12"
    text: str
    program: str  # "ai2048" or "benchmarks/<script>.py"
    argv: tuple[str, ...]
    inline: bool


# -- extraction ---------------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_INLINE = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_FOR = re.compile(r"for (\w+) in ([^;]+); do")


def _shell_lines(body: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """A fenced block's lines with ``\\`` continuations joined, shell variables and ``for`` loop
    variables expanded (one line per combination of values)."""
    variables: dict[str, list[str]] = {}
    loops: list[list[str]] = []
    i = 0
    while i < len(body):
        lineno, line = body[i]
        while line.rstrip().endswith("\\") and i + 1 < len(body):
            i += 1
            line = line.rstrip()[:-1] + " " + body[i][1].strip()
        i += 1
        text = line.strip()
        for m in _FOR.finditer(text):
            variables[m.group(1)] = m.group(2).split()
            loops.append([m.group(1)])
        text = _FOR.sub("", text).strip()
        while text.startswith("done"):
            for name in loops.pop() if loops else []:
                variables.pop(name, None)
            text = text[4:].lstrip("; ").strip()
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            words = []
        if len(words) == 1 and _ASSIGN.match(words[0]):  # FC="--preset seed000 --set net=fc"
            name, _, value = words[0].partition("=")
            variables[name] = [value]
            continue
        used = [v for v in variables if re.search(rf"\${{?{v}\b", text)]
        for values in itertools.product(*(variables[v] for v in used)):
            out = text
            for v, value in zip(used, values, strict=True):
                out = re.sub(rf"\${{?{v}\b}}?", lambda _m, value=value: value, out)
            yield lineno, out


def _snippets(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, inline?) of every shell line of a fenced block and every inline code span."""
    lines = path.read_text().split("\n")
    prose = list(lines)
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = [(k + 1, lines[k]) for k in range(i + 1, min(j, len(lines)))]
        for k in range(i, min(j + 1, len(lines))):
            prose[k] = ""
        if lang not in NOT_SHELL:
            for lineno, text in _shell_lines(body):
                yield lineno, text, False
        i = j + 1
    text = "\n".join(prose)
    for m in _INLINE.finditer(text):
        if "\n\n" not in m.group(1):
            yield text.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split()), True


def _segments(text: str) -> Iterator[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``||``, ``;`` and ``|``), comments and
    redirections dropped."""
    text = re.sub(r"<([A-Za-z][^<>]*)>", lambda m: "_".join(m.group(1).upper().split()), text)  # <old tree>
    try:
        tokens = shlex.split(text, comments=True)
    except ValueError:
        return
    segment: list[str] = []
    skip = False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok in ("&&", "||", ";", "|") or tok.endswith(";"):
            if tok.endswith(";") and tok != ";":
                segment.append(tok[:-1])
            yield segment
            segment = []
        elif re.fullmatch(r"\d?>>?|<", tok):
            skip = True
        elif not re.fullmatch(r"\d?>&\d", tok):
            segment.append(tok)
    yield segment


def _program(tokens: list[str]) -> tuple[str, list[str]] | None:
    """("ai2048" or "benchmarks/X.py", its arguments) of a simple command, past env assignments and
    ``nice``/``time`` wrappers; None for any other program."""
    t = list(tokens)
    while t:
        if _ASSIGN.match(t[0]) or t[0] in ("env", "time", "/usr/bin/time", "-v"):
            t.pop(0)
        elif t[0] == "nice":
            t.pop(0)
            if t and t[0] == "-n":
                t = t[2:]
            elif t and re.fullmatch(r"-\d+", t[0]):
                t.pop(0)
        else:
            break
    if not t:
        return None
    name = t[0].rsplit("/", 1)[-1]
    if name == "ai2048":
        return "ai2048", t[1:]
    if re.fullmatch(r"python3?(\.\d+)?", name) and len(t) > 1:
        if t[1:3] == ["-m", "ai2048"]:
            return "ai2048", t[3:]
        if t[1].startswith("benchmarks/"):
            return t[1], t[2:]
    return None


def _optional_groups(argv: list[str]) -> Iterator[list[str]]:
    """Readings of a synopsis: without its ``[...]`` groups, then with each group (each of its
    ``a|b`` alternatives) in turn."""
    parts: list[list[str] | str] = []
    group: list[str] | None = None
    for tok in argv:
        if group is None and tok.startswith("[-"):
            group = []
            tok = tok[1:]
        if group is not None:
            end = tok.endswith("]")
            tok = tok[:-1] if end else tok
            if tok:
                group.append(tok)
            if end:
                parts.append(group)
                group = None
        else:
            parts.append(tok)
    if group is not None:  # an unclosed bracket is no group
        parts.append("[" + " ".join(group))
    plain = [p for p in parts if isinstance(p, str)]
    yield plain
    for n, g in enumerate(parts):
        if isinstance(g, list):
            for alt in _alternatives(g):
                yield [tok for m, p in enumerate(parts) for tok in ([p] if isinstance(p, str) else
                                                                      alt if m == n else [])]


def _alternatives(group: list[str]) -> list[list[str]]:
    """``["--preset", "a|b"]`` -> ``[["--preset", "a"], ["--preset", "b"]]``."""
    choices = [tok.split("|") if "|" in tok and not tok.startswith("-") else [tok] for tok in group]
    return [list(c) for c in itertools.product(*choices)]


def _placeholders(argv: list[str]) -> Iterator[list[str]]:
    """Readings with the elisions dropped (``...``, ``…``, ``--set ...``, ``--set key=value``) and each
    ALL-CAPS placeholder replaced by its value(s)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok in ("...", "…"):
            i += 1
            continue
        if tok == "--set" and i + 1 < len(argv) and argv[i + 1] in ("...", "key=value", "k=v", "KEY=VALUE"):
            i += 2
            continue
        out.append(tok)
        i += 1
    options: list[list[str]] = []
    for i, tok in enumerate(out):
        key, eq, value = tok.partition("=")
        if eq and re.fullmatch(r"[A-Z][A-Z0-9_]*", value):  # --set weights=RUN, model=NAME
            options.append([f"{key}={v}" for v in _placeholder(value, key + "=", out)])
        elif re.fullmatch(r"[A-Z][A-Z0-9_]*", tok):
            options.append(_placeholder(tok, out[i - 1] if i else "", out))
        else:
            options.append([tok])
    for combo in itertools.product(*options):
        yield list(combo)


def collect() -> list[DocCommand]:
    """Every reading of every ``ai2048`` / ``python -m ai2048`` / ``python benchmarks/...`` command line
    in README.md and docs/*.md."""
    found: list[DocCommand] = []
    for path in DOCS:
        for lineno, text, inline in _snippets(path):
            for tokens in _segments(text):
                prog = _program(tokens)
                if prog is None:
                    continue
                program, args = prog
                if program == "ai2048" and args and args[0].endswith(":"):
                    continue  # "ai2048 replay: error: ..." is a command's output shown in the docs
                where = f"{path.relative_to(ROOT)}:{lineno}"
                seen = set()
                for opt in _optional_groups(args):
                    for argv in _placeholders(opt):
                        if tuple(argv) not in seen:
                            seen.add(tuple(argv))
                            found.append(DocCommand(where, text, program, tuple(argv), inline))
    return found


COMMANDS = collect()


# -- checking -----------------------------------------------------------------------------------------

FILE_KEYS = {"weights", "model", "models_dir"}
"""Agent settings that name a file: an agent with one is checked by name and keys, not built (its file
is not in the repository; a shipped model would be loaded and compiled)."""


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


SUBCOMMANDS = _subcommands()


def _reference(argv: tuple[str, ...]) -> bool:
    """An inline mention of a command by name (``ai2048 eval``, ``ai2048 train ntuple``, ``ai2048 models
    pack``): no options, so not a command line to run; its words are checked to be real names."""
    if any(tok.startswith("-") for tok in argv) or not argv:
        return False
    return len(argv) == 1 or (argv[0] == "train" and len(argv) == 2) or tuple(argv) == ("models", "pack")


def _check_missing_file(e: FileNotFoundError, argv: tuple[str, ...]) -> None:
    """A FileNotFoundError is the one expected failure: an input the command names (a run made by an
    earlier command, a file in /tmp) that is not in the empty folder the commands are checked in."""
    named = [tok.partition("=")[2] or tok for tok in argv]
    paths = [p for p in named if ("/" in p or p.endswith(".json")) and p.rstrip("/") in str(e)]
    assert paths, f"FileNotFoundError about no file the command names: {e}"


def _agents_of(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The (registered name, config) of each agent a parsed eval/watch/arena/play command builds."""
    if args.command == "arena":
        return [split_spec(word) for word in args.agents]
    if args.command in ("eval", "watch"):
        return [(args.agent, parse_sets(args.sets))]
    if args.command == "play":
        return [(args.hint_agent, parse_sets(args.sets))]
    return []


def _build_agents(args: argparse.Namespace) -> None:
    """Build each agent of the command that needs no file, so its values are checked by the agent's own
    code (``depth=0``, ``p_two=2`` and a bad heuristic fail here); the others were checked by name and
    keys only (:func:`ai2048.cli.check`)."""
    for name, cfg in _agents_of(args):
        if name not in available():  # a run directory (here only if a test made one)
            continue
        required = [k for k, v in config_keys(name).items() if v is inspect.Parameter.empty]  # weights
        # ntuple: the shipped network (seconds); endgame: that and the tables, built on a user's machine
        if required or FILE_KEYS & set(cfg) or name in ("ntuple", "endgame"):
            continue
        make_agent(name, **cfg)


def _check_ai2048(cmd: DocCommand) -> None:
    argv = cmd.argv
    if cmd.inline and _reference(argv):
        assert argv[0] in SUBCOMMANDS, f"{argv[0]!r} is not an ai2048 command"
        if argv[0] == "train" and len(argv) == 2:
            assert argv[1] in TRAINERS, f"{argv[1]!r} is not a trainer"
        return
    if "--help" in argv or "-h" in argv:
        with pytest.raises(SystemExit) as e, contextlib.redirect_stdout(io.StringIO()):
            check(list(argv))
        assert e.value.code == 0
        return
    try:
        args = check(list(argv))
    except FileNotFoundError as e:
        _check_missing_file(e, argv)
        if argv[0] == "train" and "--resume" in argv:
            # the run to resume is not here: the same options on a fresh run check every flag and key
            # against the trainer's config (a resume keeps the saved ones and applies these on top)
            check([a for a in argv if a != "--resume"])
        return
    _build_agents(args)


def _check_benchmark(cmd: DocCommand) -> None:
    """The script's own argparse parser accepts the documented options (its main() stops at parsing)."""
    if "*" in cmd.program:
        assert list(ROOT.glob(cmd.program)), f"no script matches {cmd.program}"
        return
    script = ROOT / cmd.program
    assert script.is_file(), f"{cmd.program} does not exist"

    class Parsed(Exception):
        pass

    def parse_args(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        raise Parsed(original(self, list(cmd.argv), namespace))

    spec = importlib.util.spec_from_file_location(f"_doc_bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(script.parent))
    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = parse_args  # type: ignore[method-assign]
    try:
        with pytest.raises(Parsed):
            spec.loader.exec_module(module)  # a script that parses at import stops here
            module.main()
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
        sys.path.remove(str(script.parent))


def test_collect__finds_the_documented_commands():
    """The extraction itself: enough commands, from every kind of place, so a broken extractor cannot
    pass by finding nothing."""
    where = {c.where.split(":")[0] for c in COMMANDS}
    assert len(COMMANDS) > 250
    assert {"README.md", "docs/ntuple.md", "docs/deeprl.md", "docs/ui.md", "docs/search.md"} <= where
    assert any(c.program.startswith("benchmarks/") for c in COMMANDS)
    texts = {c.argv for c in COMMANDS}
    assert ("train", "dqn", "--preset", "explore_entropy", "--set", "num_envs=8", "--set",
            "replay_ratio=0.125", "--set", "duration=360", "--set", "episodes=100000", "--out",
            "runs/dqn-explore-entropy") in texts  # a for loop expanded
    assert any(c.argv[:2] == ("eval", "lazyzero") and c.inline is False for c in COMMANDS)


@pytest.mark.parametrize("cmd", COMMANDS, ids=[f"{c.where} {' '.join(c.argv)[:60]}" for c in COMMANDS])
def test_doc_command__parses_and_passes_its_checks(cmd: DocCommand, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # nothing the docs name exists here; outputs would go here
    # /tmp/... is the doc writer's scratch: checked inside the empty folder too, so that what this
    # machine's /tmp holds (a run left by someone) does not decide the result
    cmd = dataclasses.replace(cmd, argv=tuple(
        re.sub(r"(^|=)/tmp/", lambda m: f"{m.group(1)}{tmp_path}/tmp/", tok) for tok in cmd.argv))
    try:
        if cmd.program == "ai2048":
            _check_ai2048(cmd)
        else:
            _check_benchmark(cmd)
    except SystemExit as e:
        pytest.fail(f"{cmd.where}: `{cmd.text}` exits {e.code} as {' '.join(cmd.argv)}: "
                    f"{capsys.readouterr().err.strip()}")
    except (ValueError, TypeError, OSError, ImportError) as e:
        if isinstance(e, ImportError) and "the 'llm' extra" in str(e):  # openenv-core, mcp: not in the CI set
            pytest.skip(f"{cmd.where}: `{cmd.text}` needs the llm extra, not installed here")
        pytest.fail(f"{cmd.where}: `{cmd.text}` is refused as {' '.join(cmd.argv)}: {e}")


# -- the check itself can fail --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (["eval", "expectimax", "--set", "dept=2"], "no config key(s) dept"),
        (["train", "ntuple", "--patterns", "4x6", "--set", "alhpa=0.1", "--out", "runs/x"], "alhpa"),
        (["train", "dqn", "--preset", "seed0000", "--out", "runs/x"], None),
        (["eval", "expectimax", "--gamez", "5"], None),
        (["arena", "greedy", "expectimx:depth=2"], "unknown agent 'expectimx'"),
        (["watch", "montecarlo", "--set", "playout=3"], "playout"),
        (["tune", "--games", "0"], "games"),
        (["serve", "--agent", "expectimax", "--set", "depth=99"], "depth"),
        (["models", "pack", "runs/x", "--name", "bad name"], "name"),
    ],
)
def test_check__refuses_what_the_command_refuses(argv, words, tmp_path, monkeypatch, capsys):
    """A misspelt key, option, preset or agent fails the check (and so a doc line holding it)."""
    monkeypatch.chdir(tmp_path)
    if words is None:
        with pytest.raises(SystemExit) as e:
            check(argv)
        assert e.value.code == 2
    else:
        with pytest.raises(ValueError, match=re.escape(words)):
            check(argv)


def test_doc_command__a_broken_line_fails(tmp_path, monkeypatch):
    """A doc with a misspelt --set key or option is caught: the test above fails on it, naming the line."""
    doc = tmp_path / "broken.md"
    doc.write_text("Intro.\n\n```bash\nai2048 eval expectimax --set dpth=2 --games 10\n"
                   "ai2048 train ntuple --patterns 4x6 --gamez 10 --out runs/x\n```\n\n"
                   "And `ai2048 arena greedy expectimax:depht=2`.\n")
    found = []
    for lineno, text, inline in _snippets(doc):
        for tokens in _segments(text):
            prog = _program(tokens)
            assert prog is not None
            found.append(DocCommand(f"broken.md:{lineno}", text, prog[0], tuple(prog[1]), inline))
    assert [c.where for c in found] == ["broken.md:4", "broken.md:5", "broken.md:8"]
    monkeypatch.chdir(tmp_path)
    for cmd in found:
        with pytest.raises((ValueError, SystemExit)):
            _check_ai2048(cmd)


def test_doc_command__a_missing_run_is_checked_up_to_reading_it(tmp_path, monkeypatch):
    """``ai2048 eval runs/x`` and ``--resume`` of a missing run stop at the file, with every option before
    it checked; a bad option is still caught."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="runs/x"):
        check(["eval", "runs/x", "--games", "10"])
    with pytest.raises(ValueError, match="--games"):
        check(["eval", "runs/x", "--games", "0"])
    with pytest.raises(FileNotFoundError, match="runs/x"):
        check(["train", "ntuple", "--out", "runs/x", "--resume", "--games", "10"])
    bad = DocCommand("x.md:1", "", "ai2048", ("train", "ntuple", "--out", "runs/x", "--resume", "--set",
                                              "gamez=10"), False)
    with pytest.raises(ValueError, match="gamez"):
        _check_ai2048(bad)


# -- regressions of what the audit found -----------------------------------------------------------------


def test_arena__a_misspelt_later_agent_fails_before_any_game(tmp_path, monkeypatch, capsys):
    """``ai2048 arena greedy expectimx:depth=2`` used to play all of greedy's games, then fail on the
    second agent's name; every agent and its keys are now checked before the first game."""
    from ai2048.cli import arena, main

    played = []
    monkeypatch.setattr(arena, "run_eval", lambda *a, **k: played.append(a))
    monkeypatch.chdir(tmp_path)
    assert main(["arena", "greedy", "expectimx:depth=2", "--games", "2", "--no-progress"]) == 2
    assert main(["arena", "greedy", "montecarlo:playout=3", "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'expectimx'" in err and "no config key(s) playout" in err
    assert played == []


def test_eval__a_missing_run_directory_is_named(tmp_path, monkeypatch, capsys):
    """``ai2048 eval runs/typo`` said "unknown agent 'runs/typo'"; it now says the run directory is not
    there (exit 2, before any game)."""
    from ai2048.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["eval", "runs/typo", "--games", "1"]) == 2
    assert "no run directory runs/typo" in capsys.readouterr().err
    (tmp_path / "weights.npz").write_bytes(b"")
    assert main(["eval", "./weights.npz", "--games", "1"]) == 2
    assert "./weights.npz is a file, not a run directory" in capsys.readouterr().err
