"""Records and eval results are validated field by field before a replay (issue 18), and ``--set`` without
``=`` is a usage error in every command that takes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai2048.agents import make_agent
from ai2048.cli import main
from ai2048.evaluate import evaluate
from ai2048.records import GameRecord, RecordError, record_game


@pytest.fixture
def record() -> dict:
    return record_game(make_agent("greedy"), seed=3, max_moves=12).to_dict()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("scores", "floats", "score 1 must be a whole number, got float"),
    ("scores", None, "field 'scores' must be a list"),
    ("scores", {"a": 1}, "field 'scores' must be a list"),
    ("agent", ["x"], "field 'agent' must be a string"),
    ("agent", 7, "field 'agent' must be a string"),
    ("agent_config", "depth=2", "field 'agent_config' must be an object"),
    ("meta", [1], "field 'meta' must be an object"),
    ("spawns", 5, "field 'spawns' must be a string"),
    ("spawns", "zz 11", "spawn token 'zz'"),
    ("start_board", 1.5, "field 'start_board' must be a hex string"),
    ("final_board", [1], "field 'final_board' must be a hex string"),
    ("rules_version", 0.0, "rules_version must be a whole number"),
    ("seed", 3.0, "seed=3.0 must be a whole number"),
    ("actions", ["u"], "action string must be a str"),
])
def test_record__wrong_types_are_clear_errors(record: dict, field: str, value: object, message: str) -> None:
    d = dict(record)
    d[field] = [float(s) for s in d["scores"]] if value == "floats" else value
    with pytest.raises(RecordError, match=message):
        GameRecord.from_dict(d)


def test_cli_replay__malformed_record_and_eval_result_exit_2(tmp_path: Path, record: dict, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**record, "scores": [float(s) for s in record["scores"]]}))
    assert main(["replay", str(bad)]) == 2
    assert "must be a whole number" in capsys.readouterr().err
    res = evaluate("greedy", games=2, max_moves=8, progress=False).to_dict()
    for games, message in [([1, 2], "list of game objects"), ("x", "list of game objects"),
                           ([{**res["games"][0], "score": float(res["games"][0]["score"])}], "whole number"),
                           ([{**res["games"][0], "seed": "7"}], "seed must be a whole number")]:
        path = tmp_path / "res.json"
        path.write_text(json.dumps({**res, "games": games}))
        assert main(["replay", str(path)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    path.write_text(json.dumps({**res, "agent": {"x": 1}}))
    assert main(["replay", str(path)]) == 2
    assert "'agent' must be a string" in capsys.readouterr().err


def test_cli_replay__agent_markup_is_shown_as_text(tmp_path: Path, record: dict, capsys,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A record's agent field is data: ``[bold red]`` must print as written, not style the output."""
    monkeypatch.setenv("COLUMNS", "400")  # a long tmp path (pytest-xdist's) must not crop the line
    path = tmp_path / "r[link=x].json"
    path.write_text(json.dumps({**record, "agent": "[bold red]evil[/bold red] [link=http://x]y[/link]"}))
    assert main(["replay", str(path), "--delay", "0"]) == 0
    out = capsys.readouterr().out
    assert "[bold red]evil[/bold red] [link=http://x]y[/link]" in out and "r[link=x].json" in out


@pytest.mark.parametrize("argv", [
    ["eval", "greedy", "--games", "1", "--set", "depth"],
    ["watch", "greedy", "--set", "depth"],
    ["train", "ntuple", "--out", "unused", "--set", "alpha"],
    ["serve", "--set", "depth"],
    ["play", "--set", "=3"],
])
def test_cli__set_without_equals_is_a_usage_error(
    argv: list[str], capsys, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--set expects KEY=VALUE" in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())
