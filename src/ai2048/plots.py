"""Figures (PNG, matplotlib with the Agg backend) from training runs and evaluation results.

- :func:`plot_run`: a run directory's ``metrics.jsonl`` -> score per window (mean, min, max), reach
  rates of the tiles the run reaches, losses, epsilon (seed 004's and seed 000's curves); for
  per-episode logs seed 000's five curves with their EWMA and the action distribution over
  training; for LazyZero runs seed 001's learning curve.
- :func:`plot_eval`: an ``ai2048 eval`` result -> max-tile bar chart, score and moves histograms,
  score vs moves, action share over the game, mean final board heatmap, moves to each milestone
  tile (derived by replaying each game's actions from its seed), runtime per game and wall time to
  each milestone (seed 003).
- :func:`plot_runs`: several runs of any trainers overlaid, one colour per run on shared axes per panel,
  each named by :func:`distinct_names` (its folder, with parents where two are equal).
- :func:`plot_arena`: several results (an ``ai2048 arena`` file or eval files) side by side, with
  seed 000's overlaid score histograms, each named by :func:`agent_labels` (the agent plus only the
  options that differ).

Every record is read in the one shape of :mod:`ai2048.train.run` (``step``, ``games``, ``time``, then
the trainer's fields; older logs are mapped by :func:`ai2048.checkpoint.run_record`). A record is
one game (``episode``, ``score``, ``max_tile``...; grouped into windows here) or one window
(``score_mean``/``score_min``/``score_max``, ``reach_2048`` fractions or a ``tiles`` table in percent).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.checkpoint import read_json, read_run_metrics
from ai2048.records import ACTION_CHARS, max_tiles, replay_actions
from ai2048.rules import P_TWO

EVAL_FORMAT = "ai2048.eval-result"
ARENA_FORMAT = "ai2048.arena"
MILESTONES = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
X_KEYS = ("episode", "episodes", "games", "epoch", "step", "iteration")
ACTION_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")


class PlotInputError(ValueError):
    """A file or folder that cannot be plotted; the message names it and says what was expected."""


def _plt() -> Any:
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError("plots need matplotlib: pip install 'ai2048[plot]'") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "figure.figsize": (8, 5), "figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "font.size": 11, "legend.frameon": False,
    })
    return plt


def _save(fig: Any, out: Path, name: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / name
    tmp = out / f".{name}.tmp.png"
    fig.tight_layout()
    fig.savefig(tmp)
    tmp.replace(path)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def _log_y(ax: Any) -> None:
    """A log y axis labelled in plain numbers (0.3, 1, 2), minor ticks too when matplotlib labels them."""
    from matplotlib.ticker import LogFormatterSciNotation

    class Plain(LogFormatterSciNotation):  # type: ignore[misc]  # matplotlib has no type hints here
        def __call__(self, x: float, pos: int | None = None) -> str:
            return f"{x:g}" if super().__call__(x, pos) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(Plain())
    ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False))


# ---------------------------------------------------------------- training curves


def load_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The records of ``run_dir/metrics.jsonl`` in the one shape (old logs too); a missing or empty
    log raises, naming the folder."""
    run = Path(run_dir)
    path = run / "metrics.jsonl"
    if not run.is_dir():
        raise FileNotFoundError(f"run directory {run} does not exist")
    if not path.is_file():
        raise PlotInputError(f"{run} has no metrics.jsonl, so it is not a training run directory")
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


def _series(recs: list[dict[str, Any]], key: str) -> np.ndarray:
    """Values of ``key`` as floats, NaN where missing or not a number."""
    out = np.full(len(recs), np.nan)
    for i, r in enumerate(recs):
        v = r.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v is not None:
            out[i] = float(v)
    return out


def _has(recs: list[dict[str, Any]], key: str) -> bool:
    return bool(np.isfinite(_series(recs, key)).any())


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
        w = window or max(1, n // 50)
        starts = np.arange(0, n, w)
        score = _series(recs, "score")
        top = _series(recs, "max_tile")
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
            curves["losses"][key] = agg(_series(recs, key), np.nanmean)
        if _has(recs, "epsilon"):
            curves["epsilon"] = agg(_series(recs, "epsilon"), np.nanmean)
        return _drop_saturated(curves) if tiles is None else curves
    curves["x"] = x
    for name, keys in (("score_mean", ("score_mean", "score_avg", "score")), ("score_min", ("score_min",)),
                       ("score_max", ("score_max",))):
        found = next((k for k in keys if _has(recs, k)), None)
        if found is not None:
            curves[name] = _series(recs, found)
    reach_keys = sorted({int(k[6:]) for r in recs for k in r if k.startswith("reach_") and k[6:].isdigit()})
    for t in reach_keys:
        y = 100.0 * _series(recs, f"reach_{t}")
        # a tile no window reached draws a flat zero line: left out unless asked for
        if (tiles is None and np.nanmax(y, initial=0.0) > 0) or (tiles is not None and t in tiles):
            curves["reach"][t] = y
    if not reach_keys and any(isinstance(r.get("tiles"), list) for r in recs):
        seen = sorted({int(row["tile"]) for r in recs for row in r.get("tiles") or []
                       if "tile" in row and float(row.get("reach", 0)) > 0})
        for t in seen[-5:] if tiles is None else tiles:
            curves["reach"][t] = np.array([_reach_from_table(r.get("tiles") or [], t) for r in recs])
    for key in _loss_keys(recs):
        curves["losses"][key] = _series(recs, key)
    if _has(recs, "epsilon"):
        curves["epsilon"] = _series(recs, "epsilon")
    return _drop_saturated(curves) if tiles is None else curves


def _drop_saturated(curves: dict[str, Any]) -> dict[str, Any]:
    """Leave out reach curves at 100% in every window (nothing to see); the largest such tile stays when
    no other curve is left."""
    reach = curves["reach"]
    full = [t for t, y in reach.items() if np.isfinite(y).any() and np.nanmin(y) >= 100.0]
    for t in full[:-1] if len(full) == len(reach) else full:
        del reach[t]
    return curves


def _reach_from_table(rows: list[dict[str, Any]], tile: int) -> float:
    """% of games reaching ``tile`` from a seed-004 table (rows with ``tile`` and ``reach`` in %)."""
    if not rows:
        return math.nan
    above = [row for row in rows if int(row["tile"]) >= tile]
    return float(min(above, key=lambda row: int(row["tile"]))["reach"]) if above else 0.0


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
    if span < 1 or not math.isfinite(span):
        raise ValueError(f"span must be a finite number >= 1, got {span}")
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
            raw = _series(recs, key)[start:]
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
    w = window or max(1, len(rows) // 50)
    starts = np.arange(0, len(rows), w)
    sums = np.add.reduceat(counts, starts, axis=0)
    ends = np.minimum(starts + w, len(rows)) - 1
    return x[idx[ends]], (sums / np.maximum(sums.sum(axis=1, keepdims=True), 1)).T


def _lazyzero_rows(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records that are LazyZero epochs (seed 001's per-epoch game length and high tile)."""
    return [r for r in recs
            if all(k in r for k in ("epoch", "moves_mean", "moves_max", "high_tile_mean", "high_tile_max"))]


def lazyzero_figure(recs: list[dict[str, Any]], title: str, out: Path) -> Path | None:
    """Seed 001's learning curve (moves per game and high tile per epoch, mean and max); None when the
    records are not LazyZero epochs."""
    rows = _lazyzero_rows(recs)
    if not rows:
        return None
    plt = _plt()
    epoch = [r["epoch"] for r in rows]
    minutes = sum(float(r.get("epoch_seconds") or 0.0) for r in rows) / 60
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epoch, [r["moves_mean"] for r in rows], "o-", ms=3, label="mean")
    ax1.plot(epoch, [r["moves_max"] for r in rows], "s--", ms=3, alpha=0.6, label="max")
    ax1.set(xlabel="epoch", ylabel="moves per game", title="self-play game length")
    ax1.legend()
    ax2.plot(epoch, [r["high_tile_mean"] for r in rows], "o-", ms=3, label="mean")
    ax2.plot(epoch, [r["high_tile_max"] for r in rows], "s--", ms=3, alpha=0.6, label="max")
    ax2.set_yscale("log", base=2)
    ax2.set(xlabel="epoch", ylabel="high tile", title="self-play high tile")
    ax2.legend()
    games = rows[-1].get("games", "?")
    fig.suptitle(f"LazyZero {title}: {games} games, {minutes:.0f} min of training")
    return _save(fig, out, "lazyzero_curve.png")


def _check_plottable(recs: list[dict[str, Any]], run: Path, window: int | None = None) -> None:
    """Raise, naming the log, when a run has none of the curves :func:`plot_run` draws."""
    c = training_curves(recs, window)
    if ("score_mean" in c or c["reach"] or c["losses"]
            or ("epsilon" in c and np.isfinite(c["epsilon"]).any()) or len(episode_curves(recs)) > 1
            or action_distribution(recs, window)[0].size or _lazyzero_rows(recs)):
        return
    keys = sorted({k for r in recs for k in r})
    raise PlotInputError(
        f"{run / 'metrics.jsonl'} has no score, reach, loss or epsilon to plot (keys: {', '.join(keys)})"
    )


def plot_run(run_dir: str | Path, out: str | Path, window: int | None = None,
             title: str | None = None) -> list[Path]:
    """Write the training figures of ``run_dir`` into ``out`` (titled ``title``, default the folder's
    name); returns the paths written."""
    plt = _plt()
    run, out = Path(run_dir), Path(out)
    recs = load_metrics(run)
    _check_plottable(recs, run, window)
    c = training_curves(recs, window)
    title = title or run.name
    written = []
    if "score_mean" in c:
        fig, ax = plt.subplots()
        x = c["x"]
        if "score_min" in c and "score_max" in c:
            ax.fill_between(x, c["score_min"], c["score_max"], alpha=0.2, color="#4c72b0", label="min-max")
            ax.plot(x, c["score_max"], color="#4c72b0", lw=0.8, alpha=0.7)
            ax.plot(x, c["score_min"], color="#4c72b0", lw=0.8, alpha=0.7)
        elif "score_max" in c:
            ax.plot(x, c["score_max"], color="#4c72b0", lw=0.8, alpha=0.7, label="max")
        ax.plot(x, c["score_mean"], color="#c44e52", lw=2, label="mean")
        ax.set(xlabel=c["xlabel"], ylabel="score", title=f"{title}: score per window")
        ax.legend()
        written.append(_save(fig, out, "training_score.png"))
    if c["reach"]:
        fig, ax = plt.subplots()
        for t, y in c["reach"].items():
            ax.plot(c["x"], y, marker="o" if len(y) < 30 else None, ms=3, label=f">= {t}")
        ax.set(
            xlabel=c["xlabel"], ylabel="% of games", ylim=(-2, 102),
            title=f"{title}: tile reach rate per window",
        )
        ax.legend()
        written.append(_save(fig, out, "training_reach.png"))
    if c["losses"]:
        fig, ax = plt.subplots()
        for k, y in c["losses"].items():
            ok = np.isfinite(y)
            ax.plot(c["x"][ok], y[ok], label=k)
        ax.set(xlabel=c["xlabel"], ylabel="loss", title=f"{title}: loss")
        if all(np.nanmin(y) > 0 for y in c["losses"].values() if np.isfinite(y).any()):
            _log_y(ax)
        ax.legend()
        written.append(_save(fig, out, "training_loss.png"))
    if "epsilon" in c and np.isfinite(c["epsilon"]).any():
        fig, ax = plt.subplots()
        ok = np.isfinite(c["epsilon"])
        ax.plot(c["x"][ok], c["epsilon"][ok], color="#55a868")
        ax.set(xlabel=c["xlabel"], ylabel="epsilon", title=f"{title}: exploration")
        written.append(_save(fig, out, "training_epsilon.png"))
    ep = episode_curves(recs)
    if len(ep) > 1:
        written.append(_plot_episode_curves(plt, [(title, ep)], title, out))
    xs, shares = action_distribution(recs, window)
    if xs.size:
        fig, ax = plt.subplots()
        ax.stackplot(xs, 100 * shares, labels=["up", "right", "down", "left"], colors=ACTION_COLORS)
        ax.set(xlabel=c["xlabel"].split(" (")[0], ylabel="% of moves", ylim=(0, 100),
               title=f"{title}: action distribution over training")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4)
        written.append(_save(fig, out, "training_actions.png"))
    lz = lazyzero_figure(recs, title, out)
    if lz is not None:
        written.append(lz)
    return written


# ---------------------------------------------------------------- several runs overlaid


def plot_runs(run_dirs: Sequence[str | Path], out: str | Path, window: int | None = None,
              labels: Sequence[str] | None = None) -> list[Path]:
    """Several training runs (of any trainer) on the same axes per panel, each named by ``labels``
    (default: its folder's name, with parent folders when two are equal, :func:`distinct_names`), plus
    each run's own figures (:func:`plot_run`) in ``out/<i>-<name>/``; returns the paths written.

    Every log is read and checked before the first figure is written.
    """
    runs = [Path(r) for r in run_dirs]
    if len(runs) < 2:
        raise ValueError(f"plot_runs overlays two runs or more, got {len(runs)}; use plot_run for one")
    names = check_labels(labels, len(runs), "run") if labels is not None else distinct_names(runs)
    recs = [load_metrics(r) for r in runs]
    for rc, run in zip(recs, runs, strict=True):
        _check_plottable(rc, run, window)
    out = Path(out)
    written = overlay_runs(list(zip(names, recs, strict=True)), out, window)
    for i, (run, name) in enumerate(zip(runs, names, strict=True)):
        written += plot_run(run, out / f"{i}-{_slug(name)}", window, name)
    return written


def overlay_runs(runs: Sequence[tuple[str, list[dict[str, Any]]]], out: str | Path,
                 window: int | None = None) -> list[Path]:
    """The overlay figures of :func:`plot_runs` from ``(name, records)`` pairs: one colour per run in every
    figure; each figure has the runs that log its curves. Score: window mean (with a faint min-max band
    when at most two runs are drawn); reach: one panel per tile (the five largest any run shows); loss:
    one panel per key; epsilon; seed 000's per-episode curves (faint raw, solid EWMA of span 10); action
    shares (one panel per action); LazyZero's seed-001 curve (mean moves and high tile per epoch)."""
    plt = _plt()
    out = Path(out)
    colors = {name: f"C{i % 10}" for i, (name, _) in enumerate(runs)}
    curves = [(name, training_curves(rc, window)) for name, rc in runs]
    xlabel = " / ".join(dict.fromkeys(c["xlabel"] for _, c in curves))
    n = len(runs)
    written = []

    have = [(name, c) for name, c in curves if "score_mean" in c]
    if have:
        fig, ax = plt.subplots()
        bands = len(have) <= 2  # three overlapping min-max bands hide each other and the means
        for name, c in have:
            if bands and "score_min" in c and "score_max" in c:
                ax.fill_between(c["x"], c["score_min"], c["score_max"], color=colors[name], alpha=0.12, lw=0)
            ax.plot(c["x"], c["score_mean"], color=colors[name], lw=2, marker=_marker(c["x"]), ms=3,
                    label=name)
        ax.set(xlabel=xlabel, ylabel="score (window mean" + ("; band: min-max)" if bands else ")"),
               title=f"score per window, {len(have)} of {n} runs")
        ax.legend()
        written.append(_save(fig, out, "training_score.png"))

    tiles = sorted({t for _, c in curves for t in c["reach"]})[-5:]
    if tiles:
        reach = [(name, training_curves(rc, window, tiles)) for name, rc in runs]
        panels = [(t, [(name, c["x"], c["reach"][t]) for name, c in reach if t in c["reach"]]) for t in tiles]
        written.append(_panels(plt, panels, colors, xlabel, "tile reach rate per window", out,
                               "training_reach.png", lambda t: f"% of games >= {t}", ylim=(-2, 102)))

    keys = sorted({k for _, c in curves for k in c["losses"]})
    if keys:
        panels = [(k, [(name, c["x"], c["losses"][k]) for name, c in curves if k in c["losses"]])
                  for k in keys]
        written.append(_panels(plt, panels, colors, xlabel, "loss", out, "training_loss.png", str,
                               log_if_positive=True))

    have = [(name, c) for name, c in curves if "epsilon" in c and np.isfinite(c["epsilon"]).any()]
    if have:
        panels = [("epsilon", [(name, c["x"], c["epsilon"]) for name, c in have])]
        written.append(_panels(plt, panels, colors, xlabel, "exploration", out, "training_epsilon.png", str))

    eps = [(name, ep) for name, ep in ((name, episode_curves(rc)) for name, rc in runs) if len(ep) > 1]
    if eps:
        written.append(_plot_episode_curves(plt, eps, "per-episode curves", out, colors))

    acts = [(name, *action_distribution(rc, window)) for name, rc in runs]
    acts = [(name, x, sh) for name, x, sh in acts if x.size]
    if acts:
        panels = [(a, [(name, x, 100 * sh[k]) for name, x, sh in acts])
                  for k, a in enumerate(("up", "right", "down", "left"))]
        written.append(_panels(plt, panels, colors, xlabel.split(" (")[0], "action share over training", out,
                               "training_actions.png", lambda a: f"% {a}", ylim=(0, 100)))

    lz = [(name, _lazyzero_rows(rc)) for name, rc in runs]
    lz = [(name, rows) for name, rows in lz if rows]
    if lz:
        panels = [(k, [(name, _series(rows, "epoch"), _series(rows, k)) for name, rows in lz])
                  for k in ("moves_mean", "high_tile_mean")]
        written.append(_panels(plt, panels, colors, "epoch", "LazyZero self-play (seed 001's curve)", out,
                               "lazyzero_curve.png",
                               {"moves_mean": "mean moves per game", "high_tile_mean": "mean high tile"}.get))
    return written


def _marker(x: np.ndarray) -> str | None:
    return "o" if len(x) < 30 else None


Panel = tuple[Any, list[tuple[str, np.ndarray, np.ndarray]]]
"""One panel of an overlay: its key and each run's (name, x, y)."""


def _panels(plt: Any, panels: list[Panel], colors: dict[str, str], xlabel: str, title: str, out: Path,
            name: str, ylabel: Any, ylim: tuple[float, float] | None = None,
            log_if_positive: bool = False) -> Path:
    """One panel per key, stacked with a shared x axis; in each, every run's y against its x in the run's
    colour (NaNs skipped); the legend (on the first panel) names every run drawn."""
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 2.2 * len(panels) + 1.0), sharex=True, squeeze=False)
    drawn: dict[str, Any] = {}
    for ax, (key, runs) in zip(axes[:, 0], panels, strict=True):
        for run, x, y in runs:
            y = np.asarray(y, dtype=np.float64)
            ok = np.isfinite(y)
            if not ok.any():
                continue
            (line,) = ax.plot(x[ok], y[ok], color=colors[run], lw=1.6, marker=_marker(x), ms=3, label=run)
            drawn.setdefault(run, line)
        ax.set_ylabel(ylabel(key))
        if ylim is not None:
            ax.set_ylim(*ylim)
        vals = [v for _, _, y in runs for v in np.asarray(y, dtype=np.float64) if math.isfinite(v)]
        if log_if_positive and vals and min(vals) > 0:
            _log_y(ax)
    order = [r for r in colors if r in drawn]
    axes[0, 0].legend([drawn[r] for r in order], order, loc="best", fontsize=9)
    axes[0, 0].set_title(f"{title}, {len(order)} runs")
    axes[-1, 0].set_xlabel(xlabel)
    return _save(fig, out, name)


def _plot_episode_curves(plt: Any, eps: list[tuple[str, dict[str, Any]]], title: str, out: Path,
                         colors: dict[str, str] | None = None) -> Path:
    """Seed 000's five per-episode curves (:func:`episode_curves`) of one run (per episode in blue, the
    EWMA in red) or of several (each run in its colour from ``colors``: per episode faint, EWMA solid)."""
    one = colors is None
    names = [(n, label) for n, _, label in EPISODE_SERIES if any(n in ep for _, ep in eps)]
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.1 * len(names) + 0.6), sharex=True, squeeze=False)
    for ax, (series, label) in zip(axes[:, 0], names, strict=True):
        positive = True
        for run, ep in eps:
            if series not in ep:
                continue
            raw, smooth = ep[series]
            ok = np.isfinite(raw)
            ax.plot(ep["x"][ok], raw[ok], color="#4c72b0" if colors is None else colors[run], lw=0.6,
                    alpha=0.35 if one else 0.25, label="per episode" if one else "_nolegend_")
            ax.plot(ep["x"], smooth, color="#c44e52" if colors is None else colors[run], lw=1.8,
                    label="EWMA (span 10)" if one else run)
            positive = positive and bool(ok.any()) and float(np.nanmin(raw)) > 0
        if series == "max_tile" and positive:
            ax.set_yscale("log", base=2)
        ax.set_ylabel(label)
    axes[0, 0].legend(loc="upper left", ncol=2 if one else 1, fontsize=None if one else 9)
    axes[-1, 0].set_xlabel("episode")
    axes[0, 0].set_title(f"{title}: per-episode curves" if one else
                         f"{title}, {len(eps)} runs (faint: per episode; solid: EWMA, span 10)")
    return _save(fig, out, "training_episodes.png")


# ---------------------------------------------------------------- evaluation figures


def load_result(path: str | Path) -> dict[str, Any]:
    """An eval result or arena JSON; missing, corrupt or foreign files raise, naming the file."""
    p = Path(path)
    try:
        d = read_json(p, "result")
    except ValueError as e:
        raise PlotInputError(str(e)) from e
    if not isinstance(d, dict) or d.get("format") not in (EVAL_FORMAT, ARENA_FORMAT):
        found = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise PlotInputError(
            f"{p} is not an ai2048 evaluation or arena result (format {found!r}); plot takes a run "
            "directory, a result of `ai2048 eval --out` or `ai2048 arena --out`"
        )
    results = d["results"] if d["format"] == ARENA_FORMAT else [d]
    for r in results:
        games = r.get("games") if isinstance(r, dict) else None
        if not isinstance(games, list) or not games:
            raise PlotInputError(f"{p} holds no games to plot")
        for i, g in enumerate(games):
            if not isinstance(g, dict) or not all(k in g for k in ("seed", "score", "moves", "max_tile")):
                raise PlotInputError(f"{p}: game {i} lacks seed/score/moves/max_tile; the file is corrupt")
    return d


def _label(r: dict[str, Any]) -> str:
    """One result's full label: the agent and every option (figures of a single result)."""
    cfg = r.get("config") or {}
    agent = str(r.get("agent", "agent"))
    if not cfg:
        return agent
    return agent + "(" + ", ".join(f"{k}={_show(v)}" for k, v in cfg.items()) + ")"


def _show(v: Any) -> str:
    if v is None:
        return "none"
    return v if isinstance(v, str) else json.dumps(v, separators=(",", ":"), default=str)


def distinct_names(paths: Sequence[str | Path]) -> list[str]:
    """Short distinct names for paths: the last part, with as many parent folders as it takes to tell
    them apart; a path given again gets `` #2``, `` #3``.

    >>> distinct_names(["runs/a/run", "runs/b/run", "runs/c"])
    ['a/run', 'b/run', 'c']
    """
    parts = [Path(os.path.abspath(p)).parts[1:] or (str(p),) for p in paths]
    names = []
    for i, mine in enumerate(parts):
        others = [q for q in parts if q != mine]
        k = next((k for k in range(1, len(mine) + 1) if all(q[-k:] != mine[-k:] for q in others)), len(mine))
        names.append("/".join(mine[-k:]))
        if mine in parts[:i]:
            names[-1] += f" #{parts[: i + 1].count(mine)}"
    return names


EVAL_SETTINGS = ("seed", "p_two", "max_moves", "goal_tile", "end_on_full_board")
"""Result fields that tell two evaluations of the same agent apart when their options are equal."""


def agent_labels(results: Sequence[dict[str, Any]]) -> list[str]:
    """Short distinct legend labels for several results (seed 000's ``compare_agents`` says "DQN" and
    "random"): the agent name, plus the options that differ between results of that agent (a path cut to
    the parts that tell it apart, :func:`distinct_names`); then the evaluation settings that differ
    (seed, p_two...); then `` #2`` for a result given twice.

    >>> agent_labels([{"agent": "dqn", "config": {"weights": "runs/s1", "depth": 1}},
    ...               {"agent": "dqn", "config": {"weights": "runs/s2", "depth": 1}},
    ...               {"agent": "random", "config": {}}])
    ['dqn(weights=s1)', 'dqn(weights=s2)', 'random']
    """
    names = [str(r.get("agent", "agent")) for r in results]
    cfgs = [dict(r.get("config") or {}) for r in results]
    labels = list(names)
    for name in dict.fromkeys(names):
        group = [i for i, n in enumerate(names) if n == name]
        keys = list(dict.fromkeys(k for i in group for k in cfgs[i]))
        differ = [k for k in keys if len({_key(cfgs[i].get(k, _MISSING)) for i in group}) > 1]
        shown = {k: _shown_values([cfgs[i][k] for i in group if k in cfgs[i]]) for k in differ}
        for i in group:
            opts = [f"{k}={shown[k][_key(cfgs[i][k])]}" for k in differ if k in cfgs[i]]
            if opts:
                labels[i] = f"{name}({', '.join(opts)})"
    for lab in [lab for lab in dict.fromkeys(labels) if labels.count(lab) > 1]:
        group = [i for i, x in enumerate(labels) if x == lab]
        differ = [k for k in EVAL_SETTINGS if len({_key(results[i].get(k)) for i in group}) > 1]
        for i in group:
            if differ:
                labels[i] += " [" + ", ".join(f"{k}={_show(results[i].get(k))}" for k in differ) + "]"
    return [lab + (f" #{labels[: i + 1].count(lab)}" if lab in labels[:i] else "")
            for i, lab in enumerate(labels)]


_MISSING = "\0missing"


def _key(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def _shown_values(values: list[Any]) -> dict[str, str]:
    """{key of a value: how it is shown}: paths (strings with a ``/``) cut to their distinct last parts."""
    uniq = list({_key(v): v for v in values}.values())
    if uniq and all(isinstance(v, str) for v in uniq) and any("/" in v or os.sep in v for v in uniq):
        return dict(zip((_key(v) for v in uniq), distinct_names(uniq), strict=True))
    return {_key(v): _show(v) for v in uniq}


def check_labels(labels: Sequence[str], count: int, noun: str, note: str = "") -> list[str]:
    """User-given labels (``--label``): one per ``noun`` (``count`` of them), non-empty and distinct;
    raises saying what to give."""
    labels = [str(x).strip() for x in labels]
    if len(labels) != count:
        raise PlotInputError(
            f"--label was given {len(labels)} time(s) for {count} {noun}(s){note}: give one --label per "
            f"{noun}, in the order of the inputs, or none for automatic labels"
        )
    if not all(labels):
        raise PlotInputError("--label cannot be empty: give each a name")
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise PlotInputError(f"--label {dup[0]!r} is given twice: labels must tell the inputs apart")
    return labels


def milestone_moves(result: dict[str, Any], source: str = "result") -> dict[int, list[int]]:
    """{tile: [move at which each game that reached it first had it]}, by replaying the actions.

    Raises naming the game whose actions do not replay to its recorded score.
    """
    out: dict[int, list[int]] = {}
    p_two = float(result.get("p_two", P_TWO))
    for i, g in enumerate(result["games"]):
        acts = g.get("actions")
        if not isinstance(acts, str):
            raise PlotInputError(f"{source}: game {i} has no action string; cannot derive time to milestones")
        try:
            t = replay_actions(int(g["seed"]), acts, p_two)
        except (ValueError, TypeError) as e:
            raise PlotInputError(f"{source}: game {i} does not replay: {e}") from e
        if int(t.scores[-1]) != int(g["score"]):
            raise PlotInputError(
                f"{source}: game {i} replays to score {int(t.scores[-1])} but records {g['score']}; "
                "the file was altered"
            )
        mt = max_tiles(t.boards)
        for tile in MILESTONES:
            hit = np.flatnonzero(mt >= tile)
            if hit.size:
                out.setdefault(tile, []).append(int(hit[0]))
    return out


def action_shares(games: Sequence[dict[str, Any]], bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Share of each action by move number: (bin starts [B], shares [4, B]) over games still playing."""
    strings = [g.get("actions") or "" for g in games]
    longest = max((len(s) for s in strings), default=0)
    if longest == 0:
        return np.zeros(0), np.zeros((4, 0))
    width = max(1, math.ceil(longest / bins))
    nb = math.ceil(longest / width)
    counts = np.zeros((4, nb))
    for s in strings:
        codes = np.frombuffer(s.lower().encode(), dtype=np.uint8)
        idx = np.full(256, -1, dtype=np.int64)
        for k, ch in enumerate(ACTION_CHARS):
            idx[ord(ch)] = k
        a = idx[codes]
        ok = a >= 0
        np.add.at(counts, (a[ok], np.arange(len(a))[ok] // width), 1)
    total = counts.sum(axis=0)
    return np.arange(nb) * width, counts / np.maximum(total, 1)


def mean_board(games: Sequence[dict[str, Any]]) -> np.ndarray:
    """[4, 4] mean exponent (log2 tile) of the final boards."""
    finals = [g["final_board"] for g in games if "final_board" in g]
    boards = np.array([int(b, 16) if isinstance(b, str) else int(b) for b in finals], dtype=np.uint64)
    if boards.size == 0:
        return np.full((4, 4), np.nan)
    shifts = np.arange(0, 64, 4, dtype=np.uint64)
    e = (boards[:, None] >> shifts[None, :]) & np.uint64(0xF)
    return e.astype(np.float64).mean(axis=0).reshape(4, 4)


def _replayed_milestones(result: dict[str, Any], source: str) -> dict[int, list[int]]:
    """:func:`milestone_moves` when every game has its actions, else {} (no milestone figure)."""
    if all(isinstance(g.get("actions"), str) for g in result["games"]):
        return milestone_moves(result, source)
    return {}


def plot_eval(result: dict[str, Any], out: str | Path, source: str = "result",
              milestones: dict[int, list[int]] | None = None, label: str | None = None) -> list[Path]:
    """Write the evaluation figures of one result into ``out``, titled ``label`` (default the agent with
    its options); returns the paths written.

    ``milestones`` (from :func:`milestone_moves`) is computed here by replaying when not given.
    """
    plt = _plt()
    out = Path(out)
    games = result["games"]
    label = label or _label(result)
    n = len(games)
    scores = np.array([g["score"] for g in games], dtype=np.float64)
    moves = np.array([g["moves"] for g in games], dtype=np.float64)
    tiles = np.array([g["max_tile"] for g in games], dtype=np.int64)
    # replay first: a game that does not replay stops here, before any figure is written
    ms = _replayed_milestones(result, source) if milestones is None else milestones
    written = []

    fig, ax = plt.subplots()
    uniq, cnt = np.unique(tiles, return_counts=True)
    bars = ax.bar([str(t) for t in uniq], 100.0 * cnt / n, color="#edc22e", edgecolor="#776e65")
    ax.bar_label(bars, labels=[str(c) for c in cnt], padding=2)
    ax.set(xlabel="largest tile at game end", ylabel="% of games", title=f"{label}: max tile ({n} games)")
    written.append(_save(fig, out, "max_tile.png"))

    fig, ax = plt.subplots()
    ax.hist(scores, bins=min(40, max(5, n // 5)), color="#4c72b0", edgecolor="white")
    ax.axvline(scores.mean(), color="#c44e52", lw=2, label=f"mean {scores.mean():,.0f}")
    median = float(np.median(scores))
    ax.axvline(median, color="#55a868", lw=2, ls="--", label=f"median {median:,.0f}")
    ax.set(xlabel="score", ylabel="games", title=f"{label}: score distribution ({n} games)")
    ax.legend()
    written.append(_save(fig, out, "score_hist.png"))

    fig, ax = plt.subplots()
    ax.hist(moves, bins=min(40, max(5, n // 5)), color="#55a868", edgecolor="white")
    ax.axvline(moves.mean(), color="#c44e52", lw=2, label=f"mean {moves.mean():,.0f}")
    ax.set(xlabel="moves per game", ylabel="games", title=f"{label}: game length ({n} games)")
    ax.legend()
    written.append(_save(fig, out, "moves_hist.png"))

    secs = np.array([g.get("seconds", np.nan) for g in games], dtype=np.float64)
    if np.isfinite(secs).all():
        written.append(_runtime_figure(plt, secs, moves, ms, label, out))

    fig, ax = plt.subplots()
    sc = ax.scatter(moves, scores, c=np.log2(np.maximum(tiles, 1)), cmap="viridis", s=14, alpha=0.8)
    cb = fig.colorbar(sc, ax=ax)
    cb.set_label("log2 max tile")
    ax.set(xlabel="moves", ylabel="score", title=f"{label}: score vs moves")
    written.append(_save(fig, out, "score_vs_moves.png"))

    if any(isinstance(g.get("actions"), str) and g["actions"] for g in games):
        x, shares = action_shares(games)
        fig, ax = plt.subplots()
        ax.stackplot(
            x, 100 * shares, labels=["up", "right", "down", "left"], colors=ACTION_COLORS, step="post"
        )
        ax.set(xlabel="move number", ylabel="% of moves (games still playing)", ylim=(0, 100),
               title=f"{label}: action share over the game")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4)
        written.append(_save(fig, out, "action_share.png"))

    mb = mean_board(games)
    if np.isfinite(mb).all():
        fig, ax = plt.subplots(figsize=(5.5, 5))
        im = ax.imshow(mb, cmap="YlOrBr")
        for r in range(4):
            for c in range(4):
                ax.text(c, r, f"{mb[r, c]:.1f}", ha="center", va="center",
                        color="white" if mb[r, c] > mb.mean() else "black")
        ax.set_xticks(range(4))
        ax.set_yticks(range(4))
        ax.grid(False)
        fig.colorbar(im, ax=ax, label="mean log2 tile")
        ax.set_title(f"{label}: mean final board")
        written.append(_save(fig, out, "mean_board.png"))

    if ms:
        fig, ax = plt.subplots()
        ts = sorted(ms)
        ax.boxplot([ms[t] for t in ts], tick_labels=[str(t) for t in ts])
        for k, t in enumerate(ts, start=1):
            ax.annotate(f"{100 * len(ms[t]) / n:.0f}%", (k, float(np.max(ms[t]))), textcoords="offset points",
                        xytext=(0, 6), ha="center", fontsize=9)
        ax.set(xlabel="tile (share of games reaching it above)", ylabel="moves to first reach it",
               title=f"{label}: time to each milestone tile")
        written.append(_save(fig, out, "milestones.png"))
    return written


def _runtime_figure(plt: Any, secs: np.ndarray, moves: np.ndarray, ms: dict[int, list[int]], label: str,
                    out: Path) -> Path:
    """Seed 003's timing figures: runtime per game, and wall time to each milestone tile.

    A game records its total time only, so the time to a tile is estimated as the game's mean time per move
    times the move at which the tile first appeared (said on the axis).
    """
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    ax1.hist(secs, bins=min(40, max(5, len(secs) // 5)), color="#8172b3", edgecolor="white")
    ax1.axvline(secs.mean(), color="#c44e52", lw=2, label=f"mean {secs.mean():.3g} s")
    ax1.set(xlabel="seconds per game", ylabel="games", title="runtime per game")
    ax1.legend()
    per_move = float(secs.sum() / max(moves.sum(), 1))
    if ms:
        ts = sorted(ms)
        ax2.boxplot([np.asarray(ms[t]) * per_move for t in ts], tick_labels=[str(t) for t in ts])
        ax2.set(xlabel="tile", ylabel=f"seconds to first reach it (at {per_move * 1e3:.3g} ms a move)",
                title="wall time to each milestone tile")
    else:
        ax2.axis("off")
        ax2.text(0.5, 0.5, "games carry no actions:\nno milestone times", ha="center", va="center")
    fig.suptitle(f"{label}: timing ({len(secs)} games)")
    return _save(fig, out, "runtime.png")


def plot_arena(results: Sequence[dict[str, Any]], out: str | Path,
               labels: Sequence[str] | None = None) -> list[Path]:
    """Compare several results: reach rate per tile (grouped bars) and score distributions, each result
    named by ``labels`` (default :func:`agent_labels`)."""
    plt = _plt()
    out = Path(out)
    labels = list(labels) if labels is not None else agent_labels(results)
    tiles_all = sorted({int(g["max_tile"]) for r in results for g in r["games"]})
    shown = [t for t in tiles_all if t >= 128] or tiles_all
    fig, ax = plt.subplots(figsize=(max(8, 1.2 * len(shown) + 4), 5))
    width = 0.8 / len(results)
    for k, (r, lab) in enumerate(zip(results, labels, strict=True)):
        t = np.array([g["max_tile"] for g in r["games"]])
        rates = [100.0 * np.mean(t >= x) for x in shown]
        ax.bar(np.arange(len(shown)) + (k - (len(results) - 1) / 2) * width, rates, width, label=lab)
    ax.set_xticks(np.arange(len(shown)), [str(x) for x in shown])
    ax.set(xlabel="tile", ylabel="% of games reaching it", ylim=(0, 105), title="arena: tile reach rates")
    ax.legend()
    written = [_save(fig, out, "arena_reach.png")]

    fig, ax = plt.subplots(figsize=(max(8, 1.5 * len(results) + 3), 5))
    ax.boxplot([[g["score"] for g in r["games"]] for r in results], tick_labels=labels, showmeans=True)
    ax.set(ylabel="score", title="arena: scores")
    if len(labels) > 3:
        plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    written.append(_save(fig, out, "arena_score.png"))

    # seed 000's compare_agents: overlaid score histograms, sqrt(n) bins over a common range
    fig, ax = plt.subplots()
    all_scores = np.concatenate([[g["score"] for g in r["games"]] for r in results]).astype(np.float64)
    n_bins = max(5, int(math.sqrt(max(len(r["games"]) for r in results))))
    edges = np.linspace(all_scores.min(), max(all_scores.max(), all_scores.min() + 1), n_bins + 1)
    for r, lab in zip(results, labels, strict=True):
        scores = [g["score"] for g in r["games"]]
        ax.hist(scores, bins=edges, alpha=0.5, label=f"{lab} ({len(scores)} games)")
    ax.set(xlabel="score", ylabel="games", title="arena: score histograms")
    ax.legend()
    written.append(_save(fig, out, "arena_score_hist.png"))
    return written


def plot_paths(paths: Sequence[str | Path], out: str | Path, window: int | None = None,
               labels: Sequence[str] | None = None) -> list[Path]:
    """What ``ai2048 plot`` does: run directories -> training curves (several: overlaid, and each run's own
    figures in sub-folders); one result -> eval figures; an arena file or several results -> eval figures
    per agent (in sub-folders) and the comparison. ``labels`` names the runs or agents in order (default:
    :func:`distinct_names` of the runs, :func:`agent_labels` of the results). Every input is checked, and
    every game replayed, before the first figure is written."""
    out = Path(out)
    if not paths:
        raise ValueError("give a run directory, a result .json, or several result files")
    for p in paths:
        if not Path(p).exists():
            raise FileNotFoundError(f"{p} does not exist: give run directories or result .json files")
    dirs = [str(p) for p in paths if Path(p).is_dir()]
    files = [str(p) for p in paths if not Path(p).is_dir()]
    if dirs and files:
        raise PlotInputError(
            f"plot takes run directories (training curves) or result files (evaluation figures), not both: "
            f"run directories {', '.join(dirs)}; result files {', '.join(files)}. Plot them in two calls, "
            "e.g. `ai2048 plot RUN1 RUN2 --out figs/runs` and `ai2048 plot a.json b.json --out figs/eval`"
        )
    if dirs:
        if len(dirs) == 1:
            title = check_labels(labels, 1, "run")[0] if labels is not None else None
            return plot_run(dirs[0], out, window, title)
        return plot_runs(dirs, out, window, labels)
    results: list[tuple[str, dict[str, Any]]] = []
    arena = False
    for p in paths:
        d = load_result(p)
        if d["format"] == ARENA_FORMAT:
            arena = True
            results += [(f"{p} (agent {i})", r) for i, r in enumerate(d["results"])]
        else:
            results.append((str(p), d))
    names = None
    if labels is not None:
        names = check_labels(labels, len(results), "agent", " (an arena file counts each of its agents)"
                             if arena else "")
    ms = [_replayed_milestones(r, src) for src, r in results]  # every game replays before any figure
    if len(results) == 1:
        return plot_eval(results[0][1], out, results[0][0], ms[0], names[0] if names else None)
    names = names or agent_labels([r for _, r in results])
    written: list[Path] = []
    for i, (src, r) in enumerate(results):
        written += plot_eval(r, out / f"{i}-{_slug(names[i])}", src, ms[i], names[i])
    written += plot_arena([r for _, r in results], out, names)
    return written


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text).strip("-")[:60] or "agent"
