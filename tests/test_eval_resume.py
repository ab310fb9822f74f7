"""``ai2048 eval --out``: finished games stream to disk, a killed run resumes, bad output paths fail first."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import _eval_test_agents  # noqa: F401  (registers slow-greedy)
from ai2048.cli import main
from ai2048.evaluate import EvalResult, evaluate
from ai2048.evaluate.stream import STREAM_FORMAT, stream_path

TESTS = Path(__file__).parent
CLI = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); import _eval_test_agents; "
    "from ai2048.cli import main; sys.exit(main())"
)


def without_time(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in records]


def test_eval__kill_then_resume_equals_an_uninterrupted_run(tmp_path) -> None:
    """SIGKILL mid-run keeps the streamed games; --resume plays only the rest, with the same seeds."""
    out = tmp_path / "res.json"
    games_file = stream_path(out)
    argv = ["eval", "slow-greedy", "--games", "8", "--seed", "5", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen([sys.executable, "-c", CLI, str(TESTS), *argv], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if games_file.exists() and len(games_file.read_text().splitlines()) >= 3:  # header + 2 games
                break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert not out.exists()
    kept = [json.loads(line) for line in games_file.read_text().splitlines()]
    assert kept[0]["format"] == STREAM_FORMAT and 2 <= len(kept) - 1 < 8
    assert main([*argv, "--resume"]) == 0
    resumed = EvalResult.load(out)
    full = evaluate("greedy", games=8, seed=5, progress=False)  # the same moves, played without pauses
    assert without_time(resumed.records) == without_time(full.records)
    assert [r["index"] for r in resumed.records] == list(range(8))
    finished = {r["index"]: r for r in kept[1:]}
    assert all(
        resumed.records[i]["seconds"] == r["seconds"] for i, r in finished.items()
    )  # kept, not replayed
    assert not games_file.exists()  # complete: the result holds every game


def test_eval__stream_holds_every_finished_game_and_guards_a_rerun(tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    games_file = stream_path(out)
    games_file.write_text(json.dumps({"format": STREAM_FORMAT, "version": 1, "agent": "greedy", "config": {},
                                      "seed": 0, "p_two": 0.9, "max_moves": None, "rules_version": 1}) + "\n")
    assert main(["eval", "greedy", "--games", "2", "--out", str(out), "--no-progress"]) == 2
    assert "pass --resume" in capsys.readouterr().err and not out.exists()
    assert main(["eval", "greedy", "--games", "2", "--seed", "1", "--out", str(out), "--no-progress",
                 "--resume"]) == 2
    assert "seed: file 0, now 1" in capsys.readouterr().err
    assert main(["eval", "greedy", "--games", "3", "--out", str(out), "--no-progress", "--resume"]) == 0
    assert EvalResult.load(out).games == 3 and not games_file.exists()


def test_eval__interrupted_run_keeps_its_stream_for_resume(tmp_path) -> None:
    """A stream written game by game (as evaluate's on_game hook does) resumes to the same result."""
    out = tmp_path / "r.json"
    seen: list[dict] = []
    evaluate("greedy", games=3, seed=2, progress=False, on_game=seen.append)
    assert [r["index"] for r in seen] == [0, 1, 2]
    part = evaluate("greedy", games=5, seed=2, progress=False, done={r["index"]: r for r in seen[:2]})
    assert without_time(part.records) == without_time(
        evaluate("greedy", games=5, seed=2, progress=False).records
    )
    assert (
        main(["eval", "greedy", "--games", "2", "--out", str(out), "--no-progress", "--resume"]) == 2
    )  # nothing to resume


@pytest.mark.parametrize("make_out", [
    lambda tmp: "",
    lambda tmp: str(tmp),
    lambda tmp: str(tmp / "afile" / "x.json"),
    lambda tmp: str(tmp / "locked" / "x.json"),
])
def test_eval__unwritable_out_fails_before_any_game(tmp_path, make_out, capsys, monkeypatch) -> None:
    (tmp_path / "afile").write_text("not a folder")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    played = []
    import ai2048.cli.eval as cli_eval

    monkeypatch.setattr(cli_eval, "evaluate", lambda *a, **k: played.append(1))
    try:
        if os.geteuid() == 0 and "locked" in make_out(tmp_path):
            pytest.skip("root may write anywhere")
        assert main(["eval", "greedy", "--games", "2", "--out", make_out(tmp_path), "--no-progress"]) == 2
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err
    assert "error: --out" in err and not played


@pytest.mark.parametrize("argv,match", [
    (["arena", "greedy", "random", "--games", "1", "--out", "{tmp}"], "is a folder"),
    (["tune", "--games", "1", "--out", "{tmp}/afile/t.json"], "is a file, not a folder"),
    (["watch", "greedy", "--record", "{tmp}"], "is a folder"),
    (["replay", "{rec}", "--gif", "{tmp}"], "is a folder"),
    (["replay", "{rec}", "--gif", "{tmp}/x.gif", "--cell", "0"], "--cell=0 must be a whole number in 16.."),
    (["replay", "{rec}", "--gif", "{tmp}/x.gif", "--fps", "inf"], "--fps=inf must be a finite number"),
    (["replay", "{rec}", "--gif", "{tmp}/x.gif", "--fps", "0"], "--fps=0.0 must be a finite number in (0, "),
    (["replay", "{rec}", "--gif", "{tmp}/x.gif", "--fps", "0.001"], "--fps 0.001 is too slow"),
    (["replay", "{rec}", "--gif", "{tmp}/x.png"], "the output file must end in .gif"),
    (["replay", "{rec}", "--delay", "nan"], "--delay=nan must be a finite number"),
    (["bench", "--json", "{tmp}"], "is a folder"),
    (["bench", "--seconds", "inf"], "--seconds=inf must be a finite number"),
    (["plot", "{rec}", "--out", "{tmp}/afile"], "is an existing file"),
    (["train", "ntuple", "--out", "{tmp}/afile", "--games", "10"], "is an existing file"),
    (["eval", "greedy", "--p-two", "nan"], "--p-two=nan must be a finite number"),
])
def test_cli__bad_output_or_range_fails_first(tmp_path, argv, match, capsys) -> None:
    from ai2048.agents import make_agent
    from ai2048.records import record_game

    (tmp_path / "afile").write_text("x")
    rec = record_game(make_agent("greedy"), seed=1, max_moves=5).save(tmp_path / "rec.json")
    args = [a.format(tmp=tmp_path, rec=rec) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert match in err, err
    assert not list(tmp_path.glob("*.gif")) and sorted(p.name for p in tmp_path.iterdir()) == [
        "afile",
        "rec.json",
    ]


def _consistent_cut(recs: list[dict]) -> None:
    """Game 1 cut short by 5 moves, its score, moves, max tile and board rewritten to match."""
    from ai2048.records import replay_actions

    g = recs[1]
    g["actions"] = g["actions"][:-5]
    t = replay_actions(g["seed"], g["actions"])
    b = int(t.boards[-1])
    g.update(moves=len(t.actions), score=int(t.scores[-1]), max_tile=int(t.max_tiles[-1]),
             final_board=f"0x{b:016x}")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r[1].update(score=10**9), "actions replay to score"),
    (lambda r: r[1].update(seed=r[1]["seed"] + 1), "is not the seed this evaluation gives it"),
    (lambda r: r[1].update(actions=r[1]["actions"][:-1]), "actions replay to moves"),
    (lambda r: r[1].update(actions="uuuuuuuuuuuuuuuuuuuu" + r[1]["actions"]), "is illegal on board"),
    (_consistent_cut, "the game is not over there"),
    (lambda r: r[1].pop("max_tile"), "it has no 'max_tile'"),
    (lambda r: r[1].pop("moves"), "it has no 'moves'"),
    (lambda r: r[1].update(score="12"), "score='12' is a str"),
    (lambda r: r[1].update(seconds=float("nan")), "seconds=nan is not a time"),
    (lambda r: r[1].update(index=10**6), "an index in 0..3 is expected"),
])
def test_eval_resume__an_edited_game_line_is_refused_by_name(edit, message, tmp_path, capsys) -> None:
    """Before: --resume took the stream on trust (an edited score of 10**9 went into the mean; a line
    without max_tile or moves ended in a KeyError traceback). Each kept game is replayed from its seed."""
    from ai2048.evaluate.stream import GameStream
    from ai2048.rules import P_TWO

    out = tmp_path / "r.json"
    recs = evaluate("greedy", games=3, seed=2, progress=False).records
    argv = ["eval", "greedy", "--games", "4", "--seed", "2", "--out", str(out), "--no-progress", "--resume"]
    header = {"agent": "greedy", "config": {}, "seed": 2, "p_two": P_TWO, "max_moves": None,
              "rules_version": 1, "games_requested": 4, "goal_tile": None, "end_on_full_board": False}
    stream = GameStream(stream_path(out), header)
    stream.open({r["index"]: r for r in recs})
    stream.close()
    assert main(argv) == 0  # the untouched stream resumes to the uninterrupted result
    assert without_time(EvalResult.load(out).records) == without_time(
        evaluate("greedy", games=4, seed=2, progress=False).records)
    edit(recs)
    stream.open({i: r for i, r in enumerate(recs)})
    stream.close()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and ("delete that line" in err or "malformed" in err), err
    assert "Traceback" not in err
