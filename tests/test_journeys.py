"""A new user's journeys end to end (eval, arena, watch, replay, train, resume, plot), each test the
regression test of a problem found by playing them for real at small sizes."""

from __future__ import annotations

import pytest

from ai2048.cli import main


@pytest.mark.parametrize("bad", ["bogus", "expectimax:depth=1,nope=3", "dqn", "minimax:depth=0"])
def test_cli_arena__a_bad_later_agent_fails_before_any_game(bad: str, monkeypatch, capsys) -> None:
    """``arena greedy BAD``: the error about BAD comes before greedy plays a game (it used to come
    after greedy's whole evaluation, which was then thrown away)."""
    import ai2048.cli.eval as cli_eval

    def no_games(*args, **kwargs):
        raise AssertionError("a game was started before every agent was checked")

    monkeypatch.setattr(cli_eval, "evaluate", no_games)
    assert main(["arena", "greedy", bad, "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "ai2048 arena: error:" in err and "a game was started" not in err


@pytest.mark.parametrize("name", ["dqn", "qnet", "policy"])
@pytest.mark.parametrize("threads", ["x", -3, 1.5, True])
def test_net_agents__bad_threads_is_named_before_the_weights_are_read(name: str, threads: object,
                                                                      tmp_path) -> None:
    """``--set threads=x`` used to end in "'>=' not supported between instances of 'str' and 'int'";
    a negative count was taken silently as torch's default."""
    from ai2048.agents import make_agent

    with pytest.raises(ValueError, match=r"threads=.* must be an integer >= 1 .*or 0 for torch's default"):
        make_agent(name, weights=str(tmp_path / "no-run"), threads=threads)


def test_cli_eval__a_run_directory_with_set_weights_is_a_clear_error(tmp_path, capsys) -> None:
    """``ai2048 eval RUN --set weights=OTHER`` used to print make_agent's "got multiple values for
    keyword argument 'weights'"."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_text('{"agent": "ntuple"}')
    assert main(["eval", str(run), "--set", "weights=/elsewhere", "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "cannot be set as well" in err and "multiple values" not in err


def test_cli_arena__the_table_has_a_row_for_every_tile_between_the_agents() -> None:
    """An agent whose games all end at 128-256 beside one whose games all reach 1024: the table used
    to jump from 256 to 1024 (no agent's own table held a 512 row)."""
    from ai2048.cli.arena import table
    from ai2048.evaluate import EvalResult

    def result(name: str, tiles: list[int]) -> EvalResult:
        games = [{"index": i, "seed": i, "score": t, "moves": 1, "max_tile": t, "seconds": 0.1}
                 for i, t in enumerate(tiles)]
        return EvalResult(agent=name, config={}, seed=0, games_requested=len(tiles), records=games)

    text = table([result("low", [128, 256]), result("high", [1024, 2048])])
    rows = {line.split("%")[0].strip(): line.split("%")[1].split() for line in text.splitlines()
            if line.startswith(">=")}
    assert list(rows) == [f">= {t}" for t in (128, 256, 512, 1024, 2048)]
    assert rows[">= 512"] == ["0.0", "100.0"]
