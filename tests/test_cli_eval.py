"""``ai2048 eval``, ``arena`` and ``watch`` end to end on tiny budgets."""

from __future__ import annotations

import json
import sys

import pytest

from ai2048.cli import main
from ai2048.cli._agents import split_spec
from ai2048.evaluate import EvalResult
from ai2048.records import load_record


def test_cli_eval__writes_result_and_best_worst_records(tmp_path, capsys) -> None:
    out = tmp_path / "res.json"
    code = main(["eval", "greedy", "--games", "4", "--seed", "3", "--workers", "2", "--out", str(out),
                 "--record", "best", "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "reach %" in text and "moves/s" in text
    res = EvalResult.load(out)
    assert res.games == 4 and res.agent == "greedy"
    best, worst = res.best_and_worst()
    rec = load_record(tmp_path / f"greedy-best-game{best['index']}.json")
    assert rec.final_score == best["score"]
    assert load_record(tmp_path / f"greedy-worst-game{worst['index']}.json").final_score == worst["score"]


def test_cli_eval__set_values_reach_the_agent(tmp_path) -> None:
    out = tmp_path / "r.json"
    assert main(["eval", "montecarlo", "--set", "playouts=2", "--games", "1", "--max-moves", "10",
                 "--out", str(out), "--no-progress"]) == 0
    data = json.loads(out.read_text())
    assert data["config"] == {"playouts": 2}
    assert data["games"][0]["moves"] == 10


@pytest.mark.parametrize("argv,match", [
    (["eval", "greedy", "--games", "0"], "--games=0 must be a whole number >= 1"),
    (["eval", "nope", "--games", "1"], "unknown agent"),
    (["eval", "greedy", "--set", "depth=2", "--games", "1"], "valid keys"),
    (["eval", "expectimax", "--set", "depth=-1", "--games", "1"], "depth"),
    (["eval", "expectimax", "--set", "p_two=0", "--games", "1"], "p_two"),
    (["watch", "greedy", "--delay", "-1"], "delay"),
])
def test_cli__bad_input_is_a_clear_error(argv: list[str], match: str, capsys) -> None:
    assert main([*argv, "--no-progress"] if argv[0] == "eval" else argv) == 2
    assert match in capsys.readouterr().err


def test_cli_arena__same_seeds_side_by_side(tmp_path, capsys) -> None:
    out = tmp_path / "arena.json"
    code = main(["arena", "greedy", "random", "montecarlo:playouts=2", "--games", "3", "--max-moves", "30",
                 "--out", str(out), "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "greedy" in text and "random" in text and "montecarlo:playouts=2" in text
    data = json.loads(out.read_text())
    seeds = [[g["seed"] for g in r["games"]] for r in data["results"]]
    assert seeds[0] == seeds[1] == seeds[2]


@pytest.mark.parametrize("word,want", [
    ("greedy", ("greedy", {})),
    ("expectimax:depth=2,p_two=1.0", ("expectimax", {"depth": 2, "p_two": 1.0})),
    ('expectimax:depth=1,weights={"empty":300,"merges":600}',
     ("expectimax", {"depth": 1, "weights": {"empty": 300, "merges": 600}})),
    ("minimax:weights=[0.5,3,2.7,4],depth=2", ("minimax", {"weights": [0.5, 3, 2.7, 4], "depth": 2})),
])
def test_split_spec__json_values_keep_their_commas(word: str, want: tuple) -> None:
    assert split_spec(word) == want


def test_split_spec__a_word_without_equals_is_named() -> None:
    with pytest.raises(ValueError, match="expected name:key=value"):
        split_spec("expectimax:depth=2,oops")


def test_cli_watch__runs_without_a_terminal(tmp_path, capsys) -> None:
    rec = tmp_path / "w.json"
    assert main(["watch", "greedy", "--seed", "5", "--max-moves", "20", "--record", str(rec)]) == 0
    text = capsys.readouterr().out
    assert "stopped at --max-moves" in text and "moves 20" in text
    assert load_record(rec).moves == 20


@pytest.mark.slow
def test_cli_eval__ray_backend_on_a_local_cluster(tmp_path) -> None:
    pytest.importorskip("ray")
    out = tmp_path / "ray.json"
    assert main(["eval", "greedy", "--games", "3", "--seed", "1", "--backend", "ray", "--out", str(out),
                 "--no-progress"]) == 0
    local = tmp_path / "local.json"
    assert main(["eval", "greedy", "--games", "3", "--seed", "1", "--out", str(local), "--no-progress"]) == 0
    strip = [[{k: v for k, v in g.items() if k != "seconds"} for g in json.loads(p.read_text())["games"]]
             for p in (out, local)]
    assert strip[0] == strip[1]


def test_cli_eval__without_ray_says_how_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    assert main(["eval", "greedy", "--games", "1", "--backend", "ray", "--no-progress"]) == 2
    assert "pip install" in capsys.readouterr().err


def test_cli_agents__lists_names_and_config_keys(capsys) -> None:
    assert main(["agents"]) == 0
    out = capsys.readouterr().out
    assert "expectimax" in out and "minimax" in out and "montecarlo" in out
    assert main(["agents", "minimax"]) == 0
    assert "time_limit=0.2  allowed: a finite number > 0, or None" in capsys.readouterr().out
    assert main(["agents", "nope"]) == 2


@pytest.mark.parametrize(
    ("argv", "checks"),
    [
        (["eval", "greedy", "--games", "1", "--no-progress"], 1),
        (["eval", "greedy", "--preset", "seed004-exact", "--games", "1", "--no-progress"], 1),
        (["arena", "greedy", "random:seed=3", "--games", "1", "--no-progress"], 2),
        (["watch", "greedy", "--max-moves", "2", "--seed", "1"], 1),
    ],
)
def test_front_door__checks_each_agent_once_and_builds_it_once(argv, checks, monkeypatch, capsys) -> None:
    """The command's arguments are checked once, each agent built once, then the games run: the agent
    spec used to be checked up to five times (with --preset: check, preset, check, build, make_agent)."""
    from ai2048.agents import base
    from ai2048.cli import _agents

    calls = {"check": 0, "build": 0}
    check, build = base.check_agent_config, base.build_checked

    def counted_check(*a, **k):
        calls["check"] += 1
        return check(*a, **k)

    def counted_build(*a, **k):
        calls["build"] += 1
        return build(*a, **k)

    monkeypatch.setattr(base, "check_agent_config", counted_check)
    monkeypatch.setattr(_agents, "check_agent_config", counted_check)
    monkeypatch.setattr(_agents, "build_checked", counted_build)
    assert main(argv) == 0
    assert calls == {"check": checks, "build": checks}
