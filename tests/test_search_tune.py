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
