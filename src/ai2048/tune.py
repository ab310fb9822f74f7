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

Ctrl-C or SIGTERM stops the search and returns the candidates scored so far (``status``
"interrupted"); ``done=`` (the history of such a result) continues it: the mutations are drawn
from the same seeded generator, so the saved candidates are checked against the ones drawn again,
their fitness is reused, and the continued search equals an uninterrupted one.
"""

from __future__ import annotations

import math
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.checkpoint import read_json, write_json
from ai2048.evaluate import check_workers, evaluate, sigterm_as_interrupt
from ai2048.search.heuristics import NneonneoWeights, nneonneo_table

TUNE_FORMAT = "ai2048.tune-result"
TUNED_KEYS = ("lost", "empty", "merges", "monotonicity", "mono_power", "sum", "sum_power")
SAME_SETTINGS = ("depth", "games", "population", "sigma", "seed")
"""Settings a continued search must share with the saved one (``generations`` may grow, ``validate``
and ``workers`` change nothing already scored)."""


@dataclass
class TuneResult:
    """Every candidate tried, the best weights, and their validation against the start.

    ``status``: "completed", "running" (a search still going: the CLI saves one after every
    candidate) or "interrupted" (stopped by Ctrl-C or SIGTERM; not validated).
    """

    settings: dict[str, Any]
    start: dict[str, float]
    best: dict[str, float]
    best_fitness: float
    history: list[dict[str, Any]] = field(default_factory=list)
    validation: dict[str, Any] = field(default_factory=dict)
    status: str = "completed"

    def to_dict(self) -> dict[str, Any]:
        return {"format": TUNE_FORMAT, "status": self.status, "settings": self.settings, "start": self.start,
                "best": self.best, "best_fitness": self.best_fitness, "validation": self.validation,
                "history": self.history}

    def save(self, path: str | Path) -> None:
        """Write the result as JSON atomically."""
        write_json(path, self.to_dict())

    def format(self) -> str:
        """A short report: the best weights, and start vs best on the validation games."""
        lines = ["best weights: " + ", ".join(f"{k}={v:.4g}" for k, v in self.best.items()),
                 f"tuning fitness (mean score over {self.settings['games']} games): {self.best_fitness:.0f}"]
        if self.status != "completed":
            lines.append(f"{self.status} after {len(self.history)} candidate(s); not validated")
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
    depth = checks.whole("depth", depth, 1)
    games = checks.whole("games", games, 1)
    generations = checks.whole("generations", generations, 1)
    population = checks.whole("population", population, 1)
    validate = checks.whole("validate", validate, 0)
    workers = check_workers(workers)
    checks.whole("seed", seed, 0)
    checks.number("sigma", sigma, 0.0, 2.0, lo_open=True, why="the log-space step size")
    try:
        weights = NneonneoWeights(**(start or {}))
        nneonneo_table(weights)  # finite row scores (1e308 tuned on infinite tables before)
        parent = weights.as_dict()
    except ValueError as e:  # a weight that is not a finite number, or row scores past float32
        raise ValueError(f"bad start weights {start}: {e}") from e
    except TypeError as e:
        raise ValueError(f"bad start weights {start}: {e}; keys: {list(TUNED_KEYS)}") from e
    if any(not parent[k] > 0 for k in TUNED_KEYS):
        raise ValueError(f"start weights must all be positive (the search runs in log space): {parent}")
    return depth, games, generations, population, validate, workers, parent


def load_tune_file(path: str | Path) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """(candidates, settings, status) of a saved :class:`TuneResult` file (``ai2048 tune --out``), for
    ``done=``; a file that is not one is a ValueError naming it."""
    d = read_json(path, "tune result")
    history, settings = d.get("history"), d.get("settings")
    if d.get("format") != TUNE_FORMAT or not isinstance(history, list) or not isinstance(settings, dict):
        raise ValueError(f"tune result {path} is not a file `ai2048 tune --out` wrote (format {TUNE_FORMAT})")
    return history, settings, str(d.get("status", "completed"))


def check_done(done: list[dict[str, Any]], settings: dict[str, Any], start: dict[str, float],
               saved: dict[str, Any] | None = None) -> None:
    """Refuse saved candidates that cannot continue this search: other settings (``saved``, when the
    file's settings are known), more generations than asked, or an entry that is not a candidate."""
    if saved is not None:
        differ = [f"{k}: file {saved.get(k)!r}, now {settings[k]!r}" for k in SAME_SETTINGS
                  if saved.get(k) != settings[k]]
        if differ:
            raise ValueError(f"the saved search has other settings ({'; '.join(differ)}); continue it with "
                             "the same settings, or start a new --out")
    for i, e in enumerate(done):
        if (not isinstance(e, dict) or not isinstance(e.get("weights"), dict)
                or isinstance(e.get("fitness"), bool) or not isinstance(e.get("fitness"), (int, float))
                or not math.isfinite(e["fitness"]) or not isinstance(e.get("generation"), int)):
            raise ValueError(f"saved candidate {i} is malformed: {str(e)[:80]!r}")
    if done and done[0]["weights"] != start:
        raise ValueError("the saved search started from other weights; continue it with the same --start")
    last = max((e["generation"] for e in done), default=0)
    if last > settings["generations"]:
        raise ValueError(f"the saved search reached generation {last}; --generations must be >= {last}")


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
    on_result: Callable[[TuneResult], None] | None = None,
    done: list[dict[str, Any]] | None = None,
) -> TuneResult:
    """Tune :class:`NneonneoWeights` for expectimax at ``depth`` (see the module docstring).

    ``seed`` fixes the mutations and the tuning games; validation games use seed ``seed + 1``.
    ``on_candidate`` is called with each history entry as it is scored (for progress output), and
    ``on_result`` with the result so far (status "running") after each (``ai2048 tune --out`` saves
    it, so a killed search keeps its candidates). ``done``: the history of an interrupted search with
    these settings; its candidates are checked against the ones drawn again and not replayed.
    Ctrl-C or SIGTERM returns the result so far with status "interrupted".
    """
    depth, games, generations, population, validate, workers, parent = check_tune_settings(
        depth=depth, games=games, generations=generations, population=population, sigma=sigma,
        validate=validate, workers=workers, start=start, seed=seed,
    )
    settings = {"depth": depth, "games": games, "generations": generations, "population": population,
                "sigma": float(sigma), "seed": seed, "validate": validate}
    saved = list(done or [])
    check_done(saved, settings, parent)
    rng = np.random.default_rng(seed)
    step = float(sigma)
    history: list[dict[str, Any]] = []
    start_w = dict(parent)
    parent_fit = float("-inf")

    def result(status: str) -> TuneResult:
        return TuneResult(settings=settings, start=start_w, best=dict(parent), best_fitness=parent_fit,
                          history=list(history), status=status)

    def score(w: dict[str, float], gen: int, role: str) -> float:
        k = len(history)
        if k < len(saved):  # continued: the candidate drawn again must be the saved one
            old = saved[k]
            if old["generation"] != gen or old.get("role") != role or old["weights"] != w:
                raise ValueError(f"saved candidate {k} (generation {old['generation']}) is not the one this "
                                 "search draws there: the file was edited or written by another version")
            fit = float(old["fitness"])
        else:
            fit = float(_scores(w, depth, games, seed, workers).mean())
        entry = {"generation": gen, "role": role, "weights": w, "fitness": fit, "sigma": step}
        history.append(entry)
        if on_candidate is not None:
            on_candidate(entry)
        return fit

    previous_sigterm = sigterm_as_interrupt()  # the whole search, not only while games are played
    try:
        parent_fit = score(parent, 0, "start")
        if on_result is not None:
            on_result(result("running"))
        for gen in range(1, generations + 1):
            wins = 0
            best_child: tuple[float, dict[str, float]] | None = None
            for _ in range(population):
                child = {k: float(parent[k] * math.exp(step * rng.standard_normal())) for k in TUNED_KEYS}
                fit = score(child, gen, "child")
                wins += fit > parent_fit
                if best_child is None or fit > best_child[0]:
                    best_child = (fit, child)
                if on_result is not None:
                    on_result(result("running"))
            assert best_child is not None
            if best_child[0] > parent_fit:
                parent_fit, parent = best_child
            step *= math.exp((wins / population - 0.2) / 0.8)  # Rechenberg's 1/5 rule, smoothed
        final = result("completed")
        if validate:
            a = _scores(start_w, depth, validate, seed + 1, workers)
            b = _scores(parent, depth, validate, seed + 1, workers)
            d = b - a
            n = len(d)

            def se(x: np.ndarray) -> float:
                return float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0

            final.validation = {"games": n, "seed": seed + 1, "start_mean": float(a.mean()),
                                "start_se": se(a), "best_mean": float(b.mean()), "best_se": se(b),
                                "diff_mean": float(d.mean()), "diff_se": se(d)}
    except KeyboardInterrupt:
        return result("interrupted")
    finally:
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
    return final


__all__ = ["TUNED_KEYS", "TuneResult", "load_tune_file", "tune_weights"]
