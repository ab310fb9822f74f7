"""Training curves from a run directory's ``metrics.jsonl``: numbers only, no matplotlib.

Every record is read in the one shape of :mod:`ai2048.train.run` (``step``, ``games``, ``time``, then
the trainer's fields; older logs are mapped by :func:`ai2048.checkpoint.run_record`). A record is
one game (``episode``, ``score``, ``max_tile``...; grouped into windows here) or one window
(``score_mean``/``score_min``/``score_max``, ``reach_2048`` fractions or a ``tiles`` table in percent).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.checkpoint import read_run_metrics
from ai2048.plots.common import PlotInputError, finite_number

X_KEYS = ("episode", "episodes", "games", "epoch", "step", "iteration")


def load_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The records of ``run_dir/metrics.jsonl`` in the one shape (old logs too); a missing or empty
    log raises, naming the folder."""
    run = Path(run_dir)
    path = run / "metrics.jsonl"
    if not run.exists():
        raise FileNotFoundError(f"run directory {run} does not exist")
    if not run.is_dir():
        raise PlotInputError(f"{run} is not a folder, so it is not a training run directory")
    if not path.exists():
        raise PlotInputError(f"{run} has no metrics.jsonl, so it is not a training run directory")
    if not path.is_file():  # a folder or FIFO there is not "missing"
        raise PlotInputError(f"{path} is not a regular file (a folder, FIFO or device); the run is damaged")
    try:
        recs = [r for r in read_run_metrics(path) if isinstance(r, dict)]
    except (UnicodeDecodeError, ValueError) as e:
        raise PlotInputError(f"{path} is corrupt: {e}") from e
    if not recs:
        raise PlotInputError(f"{path} holds no records yet")
    return recs


def _x_axis(recs: list[dict[str, Any]]) -> tuple[str, np.ndarray]:
    """The first of :data:`X_KEYS` present in every record and strictly increasing; else the line number."""
    for key in X_KEYS:
        vals = [r.get(key) for r in recs]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
            x = np.asarray(vals, dtype=np.float64)
            if len(x) == 1 or np.all(np.diff(x) > 0):
                return key, x
    return "record", np.arange(1, len(recs) + 1, dtype=np.float64)


def record_values(recs: list[dict[str, Any]], key: str) -> np.ndarray:
    """Values of ``key`` as floats, NaN where missing or not a number."""
    out = np.full(len(recs), np.nan)
    for i, r in enumerate(recs):
        v = r.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v is not None:
            out[i] = float(v)
    return out


def _has(recs: list[dict[str, Any]], key: str) -> bool:
    return bool(np.isfinite(record_values(recs, key)).any())


def training_curves(
    recs: list[dict[str, Any]], window: int | None = None, tiles: Sequence[int] | None = None
) -> dict[str, Any]:
    """Per-window curves: x, score mean/min/max, reach rates {tile: %}, losses {name: y}, epsilon.

    The reach curves are those of the tiles the run reaches (see :func:`reached_tiles`), or with
    ``tiles`` exactly those tiles wherever the log can tell (0% for a tile never reached), none left out:
    the runs of one overlay share their panels.
    """
    xkey, x = _x_axis(recs)
    per_episode = xkey == "episode" and _has(recs, "score") and not _has(recs, "score_mean")
    curves: dict[str, Any] = {"xlabel": xkey, "reach": {}, "losses": {}}
    if per_episode:
        n = len(recs)
        w = min(window or max(1, n // 50), n)  # a window past the log is the whole log
        starts = np.arange(0, n, w)
        score = record_values(recs, "score")
        top = record_values(recs, "max_tile")
        curves["x"] = np.array([x[min(int(s) + w, n) - 1] for s in starts])
        curves["xlabel"] = f"episode (windows of {w})"

        def agg(v: np.ndarray, f: Any) -> np.ndarray:
            return np.array([f(v[s : s + w]) if np.isfinite(v[s : s + w]).any() else np.nan for s in starts])

        curves["score_mean"] = agg(score, np.nanmean)
        curves["score_min"] = agg(score, np.nanmin)
        curves["score_max"] = agg(score, np.nanmax)
        if np.isfinite(top).any():
            shown = reached_tiles(top[np.isfinite(top)].astype(np.int64).tolist()) if tiles is None else tiles
            for t in shown:
                curves["reach"][t] = agg(top, lambda v, t=t: 100.0 * np.mean(v[np.isfinite(v)] >= t))
        for key in _loss_keys(recs):
            curves["losses"][key] = agg(record_values(recs, key), np.nanmean)
        if _has(recs, "epsilon"):
            curves["epsilon"] = agg(record_values(recs, "epsilon"), np.nanmean)
        return _drop_saturated(curves) if tiles is None else curves
    curves["x"] = x
    for name, keys in (("score_mean", ("score_mean", "score_avg", "score")), ("score_min", ("score_min",)),
                       ("score_max", ("score_max",))):
        found = next((k for k in keys if _has(recs, k)), None)
        if found is not None:
            curves[name] = record_values(recs, found)
    reach_keys = sorted({int(k[6:]) for r in recs for k in r if k.startswith("reach_") and k[6:].isdigit()})
    for t in reach_keys:
        y = 100.0 * record_values(recs, f"reach_{t}")
        # a tile no window reached draws a flat zero line: left out unless asked for
        if (tiles is None and np.nanmax(y, initial=0.0) > 0) or (tiles is not None and t in tiles):
            curves["reach"][t] = y
    if not reach_keys and any(isinstance(r.get("tiles"), list) for r in recs):
        tables = [_table_rows(r.get("tiles")) for r in recs]
        seen = sorted({t for rows in tables for t, reach in rows if reach > 0})
        for t in seen[-5:] if tiles is None else tiles:
            curves["reach"][t] = np.array([_reach_from_table(rows, t) for rows in tables])
    for key in _loss_keys(recs):
        curves["losses"][key] = record_values(recs, key)
    if _has(recs, "epsilon"):
        curves["epsilon"] = record_values(recs, "epsilon")
    return _drop_saturated(curves) if tiles is None else curves


def _drop_saturated(curves: dict[str, Any]) -> dict[str, Any]:
    """Leave out reach curves at 100% in every window (nothing to see); the largest such tile stays when
    no other curve is left."""
    reach = curves["reach"]
    full = [t for t, y in reach.items() if np.isfinite(y).any() and np.nanmin(y) >= 100.0]
    for t in full[:-1] if len(full) == len(reach) else full:
        del reach[t]
    return curves


def _table_rows(table: Any) -> list[tuple[int, float]]:
    """The ``(tile, reach %)`` rows of a seed-004 ``tiles`` table; rows that are not an object with a whole
    ``tile`` and a finite ``reach`` are left out, like any value that is not a number."""
    if not isinstance(table, list):
        return []
    return [(row["tile"], float(row["reach"])) for row in table
            if isinstance(row, dict) and isinstance(row.get("tile"), int)
            and not isinstance(row["tile"], bool) and finite_number(row.get("reach"))]


def _reach_from_table(rows: list[tuple[int, float]], tile: int) -> float:
    """% of games reaching ``tile`` from a seed-004 table's ``(tile, reach %)`` rows."""
    if not rows:
        return math.nan
    above = [row for row in rows if row[0] >= tile]
    return min(above)[1] if above else 0.0


def _loss_keys(recs: list[dict[str, Any]]) -> list[str]:
    keys = sorted({k for r in recs for k in r if "loss" in k.lower()})
    return [k for k in keys if _has(recs, k)]


def reached_tiles(tiles: Sequence[int], most: int = 5) -> list[int]:
    """The ``most`` largest powers of two (>= 16) that some game reached: the tiles worth a reach curve.

    A run that never passes 512 gets curves for 32..512, not flat zero lines at 1024 and above.
    """
    top = max((int(t) for t in tiles), default=0)
    if top < 16:
        return []
    ts = [1 << k for k in range(4, top.bit_length()) if 1 << k <= top]
    return ts[-most:]


def ewma(y: np.ndarray, span: float = 10.0) -> np.ndarray:
    """Exponentially weighted moving average with ``alpha = 2 / (span + 1)``, normalised over the weights
    seen so far (pandas' ``ewm(span).mean()``, as seed 000's ``plot_5_metrics`` draws); NaNs are skipped."""
    checks.number("span", span, 1)
    a = 2.0 / (span + 1.0)
    out = np.full(len(y), np.nan)
    num = den = 0.0
    for i, v in enumerate(np.asarray(y, dtype=np.float64)):
        if math.isfinite(v):
            num = v + (1.0 - a) * num
            den = 1.0 + (1.0 - a) * den
        if den > 0:
            out[i] = num / den
    return out


EPISODE_SERIES = (
    ("score", ("score",), "score"),
    ("reward", ("reward",), "reward (as trained on)"),
    ("length", ("length", "moves"), "moves per game"),
    ("max_tile", ("max_tile",), "max tile"),
    ("loss", ("loss",), "mean loss"),
)
"""Seed 000's five per-episode curves (``plot_5_metrics``): name, metric keys tried in turn, axis label."""


def episode_curves(recs: list[dict[str, Any]], span: float = 10.0, skip: int = 15) -> dict[str, Any]:
    """Per-episode series of a per-episode log with their EWMA: ``{"x": episodes, name: (raw, ewma)}``.

    The first ``skip`` episodes are dropped (seed 000 drops 15) when more than ``2 * skip`` remain.
    """
    xkey, x = _x_axis(recs)
    if xkey != "episode":
        return {}
    start = skip if len(recs) > 2 * skip else 0
    out: dict[str, Any] = {"x": x[start:]}
    for name, keys, _ in EPISODE_SERIES:
        key = next((k for k in keys if _has(recs, k)), None)
        if key is not None:
            raw = record_values(recs, key)[start:]
            out[name] = (raw, ewma(raw, span))
    return out


def action_distribution(
    recs: list[dict[str, Any]], window: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Share of each action over training: (x at each window's end [W], shares [4, W]) from the ``actions``
    counts (4 per record) that the DQN-family and policy trainers log; empty arrays when none are logged."""
    rows = [(i, r["actions"]) for i, r in enumerate(recs)
            if isinstance(r.get("actions"), list) and len(r["actions"]) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in r["actions"])]
    if not rows:
        return np.zeros(0), np.zeros((4, 0))
    _, x = _x_axis(recs)
    idx = np.array([i for i, _ in rows])
    counts = np.array([c for _, c in rows], dtype=np.float64)
    w = min(window or max(1, len(rows) // 50), len(rows))  # a window past the log is the whole log
    starts = np.arange(0, len(rows), w)
    sums = np.add.reduceat(counts, starts, axis=0)
    ends = np.minimum(starts + w, len(rows)) - 1
    return x[idx[ends]], (sums / np.maximum(sums.sum(axis=1, keepdims=True), 1)).T


def lazyzero_rows(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that are LazyZero epochs (seed 001's per-epoch game length and high tile): those whose
    five fields are all numbers (a value that is not a number leaves its record out, as everywhere)."""
    keys = ("epoch", "moves_mean", "moves_max", "high_tile_mean", "high_tile_max")
    return [r for r in recs
            if all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool) for k in keys)]



def check_plottable(recs: list[dict[str, Any]], run: Path, window: int | None = None) -> None:
    """Raise, naming the log, when a run has none of the curves :func:`plot_run` draws."""
    c = training_curves(recs, window)
    if ("score_mean" in c or c["reach"] or c["losses"]
            or ("epsilon" in c and np.isfinite(c["epsilon"]).any()) or len(episode_curves(recs)) > 1
            or action_distribution(recs, window)[0].size or lazyzero_rows(recs)):
        return
    keys = sorted({k for r in recs for k in r})
    raise PlotInputError(
        f"{run / 'metrics.jsonl'} has no score, reach, loss or epsilon to plot (keys: {', '.join(keys)})"
    )

