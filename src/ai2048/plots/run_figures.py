"""Figures of training runs: one run directory's curves (:func:`plot_run`), several runs of any
trainers overlaid (:func:`plot_runs`, :func:`overlay_runs`), seed 000's per-episode curves with their
EWMA and the action distribution over training, seed 001's LazyZero learning curve."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.plots import common
from ai2048.plots.common import ACTION_COLORS, finite_number
from ai2048.plots.curves import (
    EPISODE_SERIES,
    action_distribution,
    check_plottable,
    episode_curves,
    lazyzero_rows,
    load_metrics,
    record_values,
    training_curves,
)
from ai2048.plots.labels import check_labels, distinct_names, slug


def lazyzero_figure(recs: list[dict[str, Any]], title: str, out: Path) -> Path | None:
    """Seed 001's learning curve (moves per game and high tile per epoch, mean and max); None when the
    records are not LazyZero epochs."""
    rows = lazyzero_rows(recs)
    if not rows:
        return None
    plt = common.pyplot()
    epoch = [r["epoch"] for r in rows]
    minutes = sum(float(r["epoch_seconds"]) for r in rows if finite_number(r.get("epoch_seconds"))) / 60
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
    return common.save_figure(fig, out, "lazyzero_curve.png")



def plot_run(run_dir: str | Path, out: str | Path, window: int | None = None,
             title: str | None = None) -> list[Path]:
    """Write the training figures of ``run_dir`` into ``out`` (titled ``title``, default the folder's
    name); returns the paths written."""
    plt = common.pyplot()
    run, out = Path(run_dir), Path(out)
    recs = load_metrics(run)
    check_plottable(recs, run, window)
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
        written.append(common.save_figure(fig, out, "training_score.png"))
    if c["reach"]:
        fig, ax = plt.subplots()
        for t, y in c["reach"].items():
            ax.plot(c["x"], y, marker="o" if len(y) < 30 else None, ms=3, label=f">= {t}")
        ax.set(
            xlabel=c["xlabel"], ylabel="% of games", ylim=(-2, 102),
            title=f"{title}: tile reach rate per window",
        )
        ax.legend()
        written.append(common.save_figure(fig, out, "training_reach.png"))
    if c["losses"]:
        fig, ax = plt.subplots()
        for k, y in c["losses"].items():
            ok = np.isfinite(y)
            ax.plot(c["x"][ok], y[ok], label=k)
        ax.set(xlabel=c["xlabel"], ylabel="loss", title=f"{title}: loss")
        if all(np.nanmin(y) > 0 for y in c["losses"].values() if np.isfinite(y).any()):
            common.log_y(ax)
        ax.legend()
        written.append(common.save_figure(fig, out, "training_loss.png"))
    if "epsilon" in c and np.isfinite(c["epsilon"]).any():
        fig, ax = plt.subplots()
        ok = np.isfinite(c["epsilon"])
        ax.plot(c["x"][ok], c["epsilon"][ok], color="#55a868")
        ax.set(xlabel=c["xlabel"], ylabel="epsilon", title=f"{title}: exploration")
        written.append(common.save_figure(fig, out, "training_epsilon.png"))
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
        written.append(common.save_figure(fig, out, "training_actions.png"))
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
        check_plottable(rc, run, window)
    out = Path(out)
    written = overlay_runs(list(zip(names, recs, strict=True)), out, window)
    for i, (run, name) in enumerate(zip(runs, names, strict=True)):
        written += plot_run(run, out / f"{i}-{slug(name)}", window, name)
    return written


def overlay_runs(runs: Sequence[tuple[str, list[dict[str, Any]]]], out: str | Path,
                 window: int | None = None) -> list[Path]:
    """The overlay figures of :func:`plot_runs` from ``(name, records)`` pairs: one colour per run in every
    figure; each figure has the runs that log its curves. Score: window mean (with a faint min-max band
    when at most two runs are drawn); reach: one panel per tile (the five largest any run shows); loss:
    one panel per key; epsilon; seed 000's per-episode curves (faint raw, solid EWMA of span 10); action
    shares (one panel per action); LazyZero's seed-001 curve (mean moves and high tile per epoch)."""
    plt = common.pyplot()
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
        written.append(common.save_figure(fig, out, "training_score.png"))

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

    lz = [(name, lazyzero_rows(rc)) for name, rc in runs]
    lz = [(name, rows) for name, rows in lz if rows]
    if lz:
        panels = [(k, [(name, record_values(rows, "epoch"), record_values(rows, k)) for name, rows in lz])
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
            common.log_y(ax)
    order = [r for r in colors if r in drawn]
    axes[0, 0].legend([drawn[r] for r in order], order, loc="best", fontsize=9)
    axes[0, 0].set_title(f"{title}, {len(order)} runs")
    axes[-1, 0].set_xlabel(xlabel)
    return common.save_figure(fig, out, name)


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
    return common.save_figure(fig, out, "training_episodes.png")

