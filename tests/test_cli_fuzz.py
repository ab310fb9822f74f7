"""Hypothesis fuzz of the command line (issue 18): any argument list gives a clear error or a success,
never a traceback.

Each example runs ``ai2048.cli.main`` in-process on a subcommand with random flags and values. Work
that could run long is given a tiny budget after every check has run: evaluations are capped at two
games of 20 moves in this process, trainers stop at their config (the run itself is replaced), and
``tune``, ``bench``, the servers (``serve``, ``serve-env``, ``mcp``), ``strategy`` and ``tables``
(whose build writes gigabytes to the user cache) are only parsed. The whole test stays well under a minute.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ai2048.cli.eval as cli_eval
import ai2048.cli.train as cli_train
from ai2048.cli import build_parser, main
from ai2048.evaluate import evaluate

PARSE_ONLY = {"tune", "bench", "serve", "serve-env", "mcp", "strategy", "tables"}
VALUES = [
    "",
    "0",
    "1",
    "2",
    "-1",
    "3",
    "nan",
    "inf",
    "-inf",
    "1e309",
    "0.5",
    "99999999999999999999",
    "x",
    "true",
    "no",
    "=",
    "k=v",
    "depth",
    "depth=2",
    "bonus=1",
    "[1, 2]",
    "{}",
    "null",
    "greedy",
    "random",
    "nope",
    "{tmp}",
    "{tmp}/file.txt",
    "{tmp}/file.txt/x.json",
    "{tmp}/new/out.json",
    "{tmp}/rec.json",
    "{tmp}/res.json",
    "{tmp}/list.json",
    "{tmp}/bad.json",
    "{tmp}/run",
    "{tmp}/x.gif",
]


def _flags(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Option -> whether it takes a value."""
    return {s: a.nargs != 0 for a in parser._actions for s in a.option_strings
            if s not in ("-h", "--help", "--version")}


PARSER = build_parser()
SUBPARSERS = next(a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction)).choices
FLAGS = {name: _flags(p) for name, p in SUBPARSERS.items()}
REAL_GET_TRAINER = cli_train.get_trainer
TRAIN_FLAGS = {
    name: _flags(cli_train.trainer_parser(cli_train.get_trainer(name))) for name in cli_train.TRAINERS
}
POSITIONAL = [
    "greedy",
    "random",
    "nope",
    "",
    "{tmp}/rec.json",
    "{tmp}/res.json",
    "{tmp}/list.json",
    "{tmp}/run",
]


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    """A subcommand, its positional argument, then up to five flags, nearly always with a value where one
    is due."""
    command = draw(st.sampled_from(sorted(SUBPARSERS)))
    argv = [command]
    flags = FLAGS[command]
    if command == "train":
        trainer = draw(st.sampled_from([*sorted(TRAIN_FLAGS), "nope"]))
        argv += [trainer, "--out", draw(st.sampled_from(["{tmp}/run", "{tmp}/file.txt", "{tmp}/new/r", ""]))]
        flags = TRAIN_FLAGS.get(trainer, {"--out": True})
    elif command in ("eval", "watch", "replay", "plot", "agents", "arena"):
        argv.append(draw(st.sampled_from(POSITIONAL)))
    names = sorted(flags)
    for _ in range(draw(st.integers(0, 5 if names else 0))):
        flag = draw(st.sampled_from(names))
        argv.append(flag)
        if flags[flag] != draw(st.integers(0, 9).map(lambda k: k == 0)):  # one time in ten: the wrong arity
            argv.append(draw(st.sampled_from(VALUES)))
    if command == "plot" and "--out" not in argv:
        argv += ["--out", "{tmp}/plots"]
    return argv


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from ai2048.agents import make_agent
    from ai2048.records import record_game

    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "file.txt").write_text("plain text")
    (tmp / "list.json").write_text("[1, 2]")
    (tmp / "bad.json").write_text('{"format": ')
    record_game(make_agent("greedy"), seed=1, max_moves=5).save(tmp / "rec.json")
    evaluate("greedy", games=2, max_moves=5, progress=False).save(tmp / "res.json")
    return tmp


def _small_evaluate(agent: Any, games: Any = 100, seed: Any = 0, workers: Any = 1, progress: bool = True,
                    **kw: Any) -> Any:
    """evaluate() with the caller's arguments checked as given, then at most 2 games of 20 moves here."""
    if isinstance(games, int) and games > 2:
        games = 2
    kw["max_moves"] = 20 if kw.get("max_moves") is None or kw["max_moves"] > 20 else kw["max_moves"]
    if kw.get("backend") == "ray":
        kw["backend"] = "local"
    return evaluate(
        agent,
        games=games,
        seed=seed,
        workers=1 if isinstance(workers, int) and workers > 1 else workers,
        progress=False,
        **kw,
    )


def _no_run(trainer: Any) -> Any:
    return dataclasses.replace(trainer, run=lambda config, out, resume=False: out)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(argv=argvs())
def test_cli__random_arguments_give_a_clear_error_or_success(
    argv: list[str], files: Path, monkeypatch, capsys
) -> None:
    args = [a.replace("{tmp}", str(files)) for a in argv]
    monkeypatch.chdir(files)
    monkeypatch.setattr(cli_eval, "evaluate", _small_evaluate)
    monkeypatch.setattr(cli_train, "get_trainer", lambda name: _no_run(REAL_GET_TRAINER(name)))
    try:
        if args[0] in PARSE_ONLY:
            PARSER.parse_args(args)
            code = 0
        else:
            code = main(args)
    except SystemExit as e:  # argparse: a usage error (2) or --help (0), with its message printed
        code = e.code if isinstance(e.code, int) else 2
        if code:
            assert "error:" in capsys.readouterr().err
    assert code in (0, 1, 2, 130), (args, code)
    err = capsys.readouterr().err
    assert "Traceback" not in err, (args, err)
    if code == 2 and err:
        assert "error" in err, (args, err)


