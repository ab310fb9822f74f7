"""An agent that plays a trained network, asked for with no weights: a clear error naming the
problem and the fix, before any game is played (issue 17: not a raw TypeError)."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from ai2048.agents import available, config_keys, make_agent
from ai2048.cli import main

NEEDS_WEIGHTS = sorted(n for n in available()
                       if config_keys(n).get("weights", None) is inspect.Parameter.empty)


def test_the_network_agents_are_the_ones_that_need_weights() -> None:
    assert {"dqn", "qnet", "policy", "lazyzero", "lazyzero-chance"} <= set(NEEDS_WEIGHTS)


@pytest.mark.parametrize("name", NEEDS_WEIGHTS)
def test_make_agent__missing_weights_says_what_and_how(name: str) -> None:
    with pytest.raises(ValueError, match="needs its run directory") as e:
        make_agent(name)
    assert "--set weights=RUN_DIR" in str(e.value) and "ai2048 train " in str(e.value)


@pytest.mark.parametrize("name", NEEDS_WEIGHTS)
def test_cli_eval__missing_weights_fails_before_any_game(name: str, monkeypatch, capsys) -> None:
    import ai2048.cli.eval as cli_eval

    def no_games(*args, **kwargs):
        raise AssertionError("a game was started")

    monkeypatch.setattr(cli_eval, "evaluate", no_games)
    assert main(["eval", name, "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"agent {name!r} plays a trained network and needs its run directory" in err
    trainer = err.split("`ai2048 train ")[1].split()[0]
    with pytest.raises(SystemExit) as ex:  # the named trainer exists: its --help exits 0
        main(["train", trainer, "--help"])
    assert ex.value.code == 0
    capsys.readouterr()


def test_cli_eval_dqn__without_weights_end_to_end() -> None:
    cmd = [sys.executable, "-c", "import sys; from ai2048.cli import main; sys.exit(main())", "eval", "dqn",
           "--games", "1", "--no-progress"]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "TypeError" not in run.stderr and "missing 1 required positional argument" not in run.stderr
    assert "ai2048 train dqn --out RUN_DIR" in run.stderr
