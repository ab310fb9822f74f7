"""The heuristic tuner: elitism, reproducibility, its JSON file, the CLI and bad settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ai2048
from ai2048.cli import main
from ai2048.search.heuristics import NneonneoWeights
from ai2048.tune import TUNED_KEYS, tune_weights

TINY = {"depth": 1, "games": 3, "generations": 2, "population": 2, "validate": 3}


def test_tune__keeps_the_best_candidate_and_never_loses_the_start() -> None:
    res = tune_weights(seed=5, **TINY)
    assert len(res.history) == 1 + 2 * 2
    start = res.history[0]
    assert start["role"] == "start" and start["weights"] == NneonneoWeights().as_dict()
    assert res.best_fitness == max(h["fitness"] for h in res.history)
    assert res.best in [h["weights"] for h in res.history]
    assert set(res.best) == set(TUNED_KEYS) and all(v > 0 for v in res.best.values())
    v = res.validation
    assert v["games"] == 3 and v["seed"] == 6
    assert v["diff_mean"] == pytest.approx(v["best_mean"] - v["start_mean"])


def test_tune__same_seed_same_result_and_other_seed_other_mutations() -> None:
    a = tune_weights(seed=3, **TINY)
    b = tune_weights(seed=3, **TINY)
    c = tune_weights(seed=4, **TINY)
    assert a.to_dict() == b.to_dict()
    assert a.history[1]["weights"] != c.history[1]["weights"]


def test_tune__fitness_is_the_mean_score_of_the_same_seeded_games() -> None:
    """Common random numbers: every candidate plays evaluate(seed)'s games; fitness = their mean score."""
    res = tune_weights(seed=2, start={"empty": 300.0}, **{**TINY, "generations": 1, "population": 1})
    for entry in res.history:
        played = ai2048.evaluate("expectimax", games=3, seed=2, progress=False,
                                 config={"depth": 1, "weights": entry["weights"]})
        assert entry["fitness"] == pytest.approx(np.mean([g["score"] for g in played.records]))


def test_tune_cli__writes_the_result_and_prints_the_eval_command(tmp_path, capsys) -> None:
    out = tmp_path / "tune.json"
    code = main(["tune", "--depth", "1", "--games", "2", "--generations", "1", "--population", "2",
                 "--validate", "2", "--seed", "1", "--out", str(out)])
    assert code == 0
    data = json.loads(out.read_text())
    assert data["format"] == "ai2048.tune-result" and len(data["history"]) == 3
    printed = capsys.readouterr().out
    assert "ai2048 eval expectimax --set weights=" in printed
    assert json.loads(printed.split("weights='")[1].split("'")[0]) == data["best"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"games": 0}, "games=0"),
        ({"population": -1}, "population=-1"),
        ({"depth": 0}, "depth=0"),
        ({"sigma": 0.0}, "sigma=0.0"),
        ({"start": {"empyt": 1.0}}, "empyt"),
        ({"start": {"empty": -5.0}}, "positive"),
    ],
)
def test_tune__bad_settings_name_the_problem(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        tune_weights(**{**TINY, **kwargs})


def test_tune_cli__bad_start_json_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["tune", "--start", "{not json"])
    assert e.value.code == 2
    assert "--start expects a JSON object" in capsys.readouterr().err


SLOW_TUNE = (  # every candidate takes 0.3 s more, so a signal lands in the middle of the search
    "import sys, time\nimport ai2048.tune as t\nscores = t._scores\n"
    "def slow(*a):\n    time.sleep(0.3)\n    return scores(*a)\n"
    "t._scores = slow\nfrom ai2048.cli import main\nsys.exit(main())\n"
)
SEARCH = ["--depth", "1", "--games", "1", "--generations", "2", "--population", "2", "--validate", "0",
          "--seed", "4"]


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_tune_cli__a_signal_saves_the_candidates_and_the_printed_command_finishes_the_search(
        sig, tmp_path, capsys) -> None:
    """Before: Ctrl-C or SIGTERM lost every candidate evaluated (nothing was written)."""
    import shlex
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "t.json"
    proc = subprocess.Popen([sys.executable, "-c", SLOW_TUNE, "tune", *SEARCH, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out.is_file() and len(json.loads(out.read_text())["history"]) >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        proc.send_signal(getattr(signal, sig))
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    saved = json.loads(out.read_text())
    assert saved["status"] == "interrupted" and 2 <= len(saved["history"]) < 5
    command = stdout.split("continue with:\n")[1].strip()
    assert command.endswith(f"--out {out} --resume")
    assert main(shlex.split(command)[1:]) == 0
    assert f"resuming: {len(saved['history'])} candidate(s) kept" in capsys.readouterr().err
    resumed = json.loads(out.read_text())
    full = tune_weights(depth=1, games=1, generations=2, population=2, validate=0, seed=4)
    assert resumed["status"] == "completed" and resumed["history"] == full.to_dict()["history"]
    assert resumed["best"] == full.best


def test_tune__an_interrupt_returns_the_candidates_so_far(monkeypatch) -> None:
    import ai2048.tune as tune

    scores = tune._scores
    calls = []

    def stop_third(*a):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return scores(*a)

    monkeypatch.setattr(tune, "_scores", stop_third)
    res = tune_weights(depth=1, games=1, generations=2, population=2, validate=0, seed=4)
    assert res.status == "interrupted" and len(res.history) == 2 and not res.validation
    assert "interrupted after 2 candidate(s)" in res.format()


@pytest.mark.parametrize(("edit", "extra", "message"), [
    (None, [], "holds an unfinished search (interrupted); pass --resume"),
    (None, ["--resume", "--seed", "5"], "seed: file 4, now 5"),
    (None, ["--resume", "--generations", "1"], "--generations must be >= 2"),
    (lambda h: h[1]["weights"].update(empty=1.0), ["--resume"], "is not the one this search draws"),
    (lambda h: h[1].update(fitness="x"), ["--resume"], "saved candidate 1 is malformed"),
    (lambda h: h[0]["weights"].update(empty=1.0), ["--resume"], "started from other weights"),
])
def test_tune_cli__a_saved_search_is_continued_only_as_itself(edit, extra, message, tmp_path, capsys) -> None:
    full = tune_weights(depth=1, games=1, generations=2, population=2, validate=0, seed=4).to_dict()
    history = full["history"][:4]
    if edit is not None:
        edit(history)
    out = tmp_path / "t.json"
    out.write_text(json.dumps({**full, "status": "interrupted", "history": history}))
    assert main(["tune", *SEARCH, *extra, "--out", str(out)]) == 2  # argparse: a later --seed wins
    err = capsys.readouterr().err
    assert message in err, err
