"""``ai2048 agents NAME``: every option of every registered agent has its help line (issue 17), read
from the option's declaration (issue 34)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ai2048.agents import available, base, config_keys
from ai2048.agents.base import AgentSpec, _spec, format_option_help, option_help, options_of
from ai2048.cli import main

_CLI = [sys.executable, "-c", "import sys; from ai2048.cli import main; sys.exit(main())"]


def _package_agents() -> list[str]:
    """The agents ai2048 registers itself (tests register more of their own)."""
    return sorted(n for n in available() if _spec(n).target.startswith("ai2048."))


def test_option_help__covers_exactly_the_keys_of_every_registered_agent() -> None:
    for name in _package_agents():
        keys = list(config_keys(name))
        assert list(options_of(name)) == keys, name
        rows = option_help(name)
        assert [r["key"] for r in rows] == keys
        for row in rows:
            assert row["what"] and row["source"] and row["allowed"], (name, row["key"])


def test_option_help__defaults_come_from_the_signature() -> None:
    rows = {r["key"]: r for r in option_help("minimax")}
    assert rows["time_limit"]["default"] == 0.2 and not rows["time_limit"]["required"]
    rows = {r["key"]: r for r in option_help("dqn")}
    assert rows["weights"]["required"] and rows["weights"]["default"] is None


@pytest.mark.parametrize("name", _package_agents())
def test_cli_agents__prints_every_option_with_its_help(name: str, capsys) -> None:
    assert main(["agents", name]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{name}: {available()[name]}")
    for row in option_help(name):
        head = f"{row['key']} (required)" if row["required"] else f"{row['key']}={row['default']!r}"
        assert f"  {head}  allowed: {row['allowed']}" in out
        assert f"{row['what']} [from: {row['source']}]" in out
    assert out.strip() == format_option_help(name)


def test_cli_agents__end_to_end_in_a_fresh_process(capsys) -> None:
    """The installed command, as a user runs it: expectimax's internals are explained, not bare nulls.
    (An unknown name is checked in this process: the exit path is the one every command shares, run in
    a fresh process by test_eval_end_rules.)"""
    run = subprocess.run([*_CLI, "agents", "expectimax"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "reward_weight=None  allowed: a finite number >= 0, or None" in run.stdout
    assert "None means 0 with a built-in heuristic" in run.stdout
    assert "evaluator=None" in run.stdout and "Python API only" in run.stdout
    assert main(["agents", "nope"]) == 2
    out, err = capsys.readouterr()
    assert "available agents" in err and out == "" and "Traceback" not in err


def test_cli_agents__an_agent_registered_outside_the_package_lists_its_keys(capsys, monkeypatch) -> None:
    spec = AgentSpec("test-help-plugin", "ai2048.agents.simple:RandomAgent", "a plugin without help lines")
    monkeypatch.setitem(base._REGISTRY, "test-help-plugin", spec)
    assert main(["agents", "test-help-plugin"]) == 0
    assert "  seed=None" in capsys.readouterr().out
