"""Tune the nneonneo heuristic's weights by self-play: a (1+λ) evolution strategy on game scores.

The issue asks for the default heuristic's weights to be tuned, as xificurk tuned nneonneo's
constants with CMA-ES. Each candidate is a :class:`~ai2048.search.heuristics.NneonneoWeights`;
it plays ``games`` games of expectimax at a fixed ``depth`` and scores their mean. Every
candidate plays the *same* game seeds (common random numbers), so two candidates differ by
their play, not by their luck. The search runs in log space (all weights are positive): each
generation draws ``population`` children ``parent * exp(sigma * N(0, 1))`` per weight, the best
child replaces the parent only if it beats it, and ``sigma`` follows Rechenberg's 1/5 success
rule. At the end the start and the best weights both play ``validate`` games on other seeds,
so the report says whether the gain survives fresh games.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.checkpoint import write_json
from ai2048.evaluate import check_count, evaluate
from ai2048.search.heuristics import NneonneoWeights

TUNE_FORMAT = "ai2048.tune-result"
TUNED_KEYS = ("lost", "empty", "merges", "monotonicity", "mono_power", "sum", "sum_power")


@dataclass
class TuneResult:
    """Every candidate tried, the best weights, and their validation against the start."""

    settings: dict[str, Any]
    start: dict[str, float]
    best: dict[str, float]
    best_fitness: float
    history: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"format": TUNE_FORMAT, "settings": self.settings, "start": self.start, "best": self.best,
                "best_fitness": self.best_fitness, "validation": self.validation, "history": self.history}

    def save(self, path: str | Path) -> None:
        """Write the result as JSON atomically."""
        write_json(path, self.to_dict())

    def format(self) -> str:
        """A short report: the best weights, and start vs best on the validation games."""
        lines = ["best weights: " + ", ".join(f"{k}={v:.4g}" for k, v in self.best.items()),
                 f"tuning fitness (mean score over {self.settings['games']} games): {self.best_fitness:.0f}"]
        v = self.validation
        if v:
            lines.append(
                f"validation over {v['games']} other games: start {v['start_mean']:.0f} ± "
                f"{v['start_se']:.0f}, "
                f"best {v['best_mean']:.0f} ± {v['best_se']:.0f} (paired difference "
                f"{v['diff_mean']:+.0f} ± {v['diff_se']:.0f})"
            )
        return "\n".join(lines)


def _scores(weights: dict[str, float], depth: int, games: int, seed: int, workers: int) -> np.ndarray:
    """Final score of each of ``games`` expectimax games with ``weights`` (seeded by ``seed``)."""
    res = evaluate("expectimax", games=games, seed=seed, workers=workers, progress=False,
                   config={"depth": depth, "weights": weights})
    if res.interrupted:
        raise KeyboardInterrupt
    return np.array([g["score"] for g in sorted(res.records, key=lambda g: g["index"])], dtype=np.float64)


def check_tune_settings(
    *, depth: int, games: int, generations: int, population: int, sigma: float, validate: int,
    workers: int, start: dict[str, float] | None, seed: int = 0,
) -> tuple[int, int, int, int, int, int, dict[str, float]]:
    """The checks :func:`tune_weights` makes before its first game; returns (depth, games, generations,
    population, validate, workers, the full start weights). ``ai2048 tune`` makes them up front."""
    depth = check_count("depth", depth, 1)
    games = check_count("games", games, 1)
    generations = check_count("generations", generations, 1)
    population = check_count("population", population, 1)
    validate = check_count("validate", validate, 0)
    workers = check_count("workers", workers, 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed={seed!r} must be a whole number >= 0")
    if not (isinstance(sigma, (int, float)) and 0.0 < float(sigma) <= 2.0):
        raise ValueError(f"sigma={sigma!r} must be a number in (0, 2] (the log-space step size)")
    try:
        parent = NneonneoWeights(**(start or {})).as_dict()
    except ValueError as e:  # a weight that is not a finite number
        raise ValueError(f"bad start weights {start}: {e}") from e
    except TypeError as e:
        raise ValueError(f"bad start weights {start}: {e}; keys: {list(TUNED_KEYS)}") from e
    if any(not parent[k] > 0 for k in TUNED_KEYS):
        raise ValueError(f"start weights must all be positive (the search runs in log space): {parent}")
    return depth, games, generations, population, validate, workers, parent


def tune_weights(
    *,
    depth: int = 2,
    games: int = 100,
    generations: int = 8,
    population: int = 6,
    sigma: float = 0.25,
    seed: int = 1,
    validate: int = 200,
    workers: int = 1,
    start: dict[str, float] | None = None,
    on_candidate: Callable[[dict[str, Any]], None] | None = None,
) -> TuneResult:
    """Tune :class:`NneonneoWeights` for expectimax at ``depth`` (see the module docstring).

    ``seed`` fixes the mutations and the tuning games; validation games use seed ``seed + 1``.
    ``on_candidate`` is called with each history entry as it is scored (for progress output).
    """
    depth, games, generations, population, validate, workers, parent = check_tune_settings(
        depth=depth, games=games, generations=generations, population=population, sigma=sigma,
        validate=validate, workers=workers, start=start, seed=seed,
    )
    rng = np.random.default_rng(seed)
    step = float(sigma)
    history: list[dict[str, Any]] = []

    def score(w: dict[str, float], gen: int, role: str) -> float:
        fit = float(_scores(w, depth, games, seed, workers).mean())
        entry = {"generation": gen, "role": role, "weights": w, "fitness": fit, "sigma": step}
        history.append(entry)
        if on_candidate is not None:
            on_candidate(entry)
        return fit

    start_w = dict(parent)
    parent_fit = score(parent, 0, "start")
    for gen in range(1, generations + 1):
        wins = 0
        best_child: tuple[float, dict[str, float]] | None = None
        for _ in range(population):
            child = {k: float(parent[k] * math.exp(step * rng.standard_normal())) for k in TUNED_KEYS}
            fit = score(child, gen, "child")
            wins += fit > parent_fit
            if best_child is None or fit > best_child[0]:
                best_child = (fit, child)
        assert best_child is not None
        if best_child[0] > parent_fit:
            parent_fit, parent = best_child
        step *= math.exp((wins / population - 0.2) / 0.8)  # Rechenberg's 1/5 rule, smoothed
    result = TuneResult(
        settings={"depth": depth, "games": games, "generations": generations, "population": population,
                  "sigma": float(sigma), "seed": seed, "validate": validate},
        start=start_w, best=parent, best_fitness=parent_fit, history=history,
    )
    if validate:
        a = _scores(start_w, depth, validate, seed + 1, workers)
        b = _scores(parent, depth, validate, seed + 1, workers)
        d = b - a
        n = len(d)

        def se(x: np.ndarray) -> float:
            return float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0

        result.validation = {"games": n, "seed": seed + 1, "start_mean": float(a.mean()), "start_se": se(a),
                             "best_mean": float(b.mean()), "best_se": se(b), "diff_mean": float(d.mean()),
                             "diff_se": se(d)}
    return result


__all__ = ["TUNED_KEYS", "TuneResult", "tune_weights"]
