"""Figures of evaluation results: one result's figures (:func:`plot_eval`, with seed 003's runtime
and wall time to each milestone) and several results side by side (:func:`plot_arena`, with seed
000's overlaid score histograms and seed 003's runtime per game against the max tile and time to
each milestone, one line per agent)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.plots import common
from ai2048.plots.common import ACTION_COLORS
from ai2048.plots.labels import agent_labels, result_label
from ai2048.plots.results import (
    action_shares,
    game_seconds,
    mean_board,
    milestone_seconds,
    replayed_milestones,
    runtime_by_tile,
)


def plot_eval(result: dict[str, Any], out: str | Path, source: str = "result",
              milestones: dict[int, list[int]] | None = None, label: str | None = None) -> list[Path]:
    """Write the evaluation figures of one result into ``out``, titled ``label`` (default the agent with
    its options); returns the paths written.

    ``milestones`` (from :func:`milestone_moves`) is computed here by replaying when not given.
    """
    plt = common.pyplot()
    out = Path(out)
    games = result["games"]
    label = label or result_label(result)
    n = len(games)
    scores = np.array([g["score"] for g in games], dtype=np.float64)
    moves = np.array([g["moves"] for g in games], dtype=np.float64)
    tiles = np.array([g["max_tile"] for g in games], dtype=np.int64)
    # replay first: a game that does not replay stops here, before any figure is written
    ms = replayed_milestones(result, source) if milestones is None else milestones
    written = []

    fig, ax = plt.subplots()
    uniq, cnt = np.unique(tiles, return_counts=True)
    bars = ax.bar([str(t) for t in uniq], 100.0 * cnt / n, color="#edc22e", edgecolor="#776e65")
    ax.bar_label(bars, labels=[str(c) for c in cnt], padding=2)
    ax.set(xlabel="largest tile at game end", ylabel="% of games", title=f"{label}: max tile ({n} games)")
    written.append(common.save_figure(fig, out, "max_tile.png"))

    fig, ax = plt.subplots()
    ax.hist(scores, bins=min(40, max(5, n // 5)), color="#4c72b0", edgecolor="white")
    ax.axvline(scores.mean(), color="#c44e52", lw=2, label=f"mean {scores.mean():,.0f}")
    median = float(np.median(scores))
    ax.axvline(median, color="#55a868", lw=2, ls="--", label=f"median {median:,.0f}")
    ax.set(xlabel="score", ylabel="games", title=f"{label}: score distribution ({n} games)")
    ax.legend()
    written.append(common.save_figure(fig, out, "score_hist.png"))

    fig, ax = plt.subplots()
    ax.hist(moves, bins=min(40, max(5, n // 5)), color="#55a868", edgecolor="white")
    ax.axvline(moves.mean(), color="#c44e52", lw=2, label=f"mean {moves.mean():,.0f}")
    ax.set(xlabel="moves per game", ylabel="games", title=f"{label}: game length ({n} games)")
    ax.legend()
    written.append(common.save_figure(fig, out, "moves_hist.png"))

    secs = game_seconds(games)
    if secs is not None:
        written.append(_runtime_figure(plt, secs, moves, ms, label, out))

    fig, ax = plt.subplots()
    sc = ax.scatter(moves, scores, c=np.log2(np.maximum(tiles, 1)), cmap="viridis", s=14, alpha=0.8)
    cb = fig.colorbar(sc, ax=ax)
    cb.set_label("log2 max tile")
    ax.set(xlabel="moves", ylabel="score", title=f"{label}: score vs moves")
    written.append(common.save_figure(fig, out, "score_vs_moves.png"))

    if any(isinstance(g.get("actions"), str) and g["actions"] for g in games):
        x, shares = action_shares(games)
        fig, ax = plt.subplots()
        ax.stackplot(
            x, 100 * shares, labels=["up", "right", "down", "left"], colors=ACTION_COLORS, step="post"
        )
        ax.set(xlabel="move number", ylabel="% of moves (games still playing)", ylim=(0, 100),
               title=f"{label}: action share over the game")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=4)
        written.append(common.save_figure(fig, out, "action_share.png"))

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
        written.append(common.save_figure(fig, out, "mean_board.png"))

    if ms:
        fig, ax = plt.subplots()
        ts = sorted(ms)
        ax.boxplot([ms[t] for t in ts], tick_labels=[str(t) for t in ts])
        for k, t in enumerate(ts, start=1):
            ax.annotate(f"{100 * len(ms[t]) / n:.0f}%", (k, float(np.max(ms[t]))), textcoords="offset points",
                        xytext=(0, 6), ha="center", fontsize=9)
        ax.set(xlabel="tile (share of games reaching it above)", ylabel="moves to first reach it",
               title=f"{label}: time to each milestone tile")
        written.append(common.save_figure(fig, out, "milestones.png"))
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
    return common.save_figure(fig, out, "runtime.png")


def plot_arena(results: Sequence[dict[str, Any]], out: str | Path, labels: Sequence[str] | None = None,
               milestones: Sequence[dict[int, list[int]]] | None = None) -> list[Path]:
    """Compare several results: reach rate per tile (grouped bars), score distributions and, when the
    games carry their times, seed 003's timing (``arena_timing.png``), each result named by
    ``labels`` (default :func:`agent_labels`). ``milestones`` (one :func:`milestone_moves` a result) is
    computed here by replaying when not given."""
    plt = common.pyplot()
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
    written = [common.save_figure(fig, out, "arena_reach.png")]

    fig, ax = plt.subplots(figsize=(max(8, 1.5 * len(results) + 3), 5))
    ax.boxplot([[g["score"] for g in r["games"]] for r in results], tick_labels=labels, showmeans=True)
    ax.set(ylabel="score", title="arena: scores")
    if len(labels) > 3:
        plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    written.append(common.save_figure(fig, out, "arena_score.png"))

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
    written.append(common.save_figure(fig, out, "arena_score_hist.png"))

    if all(game_seconds(r["games"]) is not None for r in results):
        ms = milestones if milestones is not None else [replayed_milestones(r, "result") for r in results]
        written.append(_arena_timing(plt, results, list(ms), labels, out))
    return written


def _arena_timing(plt: Any, results: Sequence[dict[str, Any]], ms: Sequence[dict[int, list[int]]],
                  labels: Sequence[str], out: Path) -> Path:
    """Seed 003's comparison of its algorithms in one figure: mean seconds a game against the largest
    tile it ended on, and median seconds to first reach each milestone tile, one line per agent
    (log time axes: agents differ by orders of magnitude)."""
    by_tile = [runtime_by_tile(r["games"]) for r in results]
    to_tile = [milestone_seconds(r["games"], m) for r, m in zip(results, ms, strict=True)]
    tiles = sorted({t for d in by_tile + to_tile for t in d})
    x = {t: i for i, t in enumerate(tiles)}  # one tile axis in tile order for every agent
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    for ax, series in ((ax1, by_tile), (ax2, to_tile)):
        for d, lab in zip(series, labels, strict=True):
            if d:
                ax.plot([x[t] for t in d], list(d.values()), marker="o", label=lab)
        ax.set_xticks(range(len(tiles)), [str(t) for t in tiles])
        ax.set_yscale("log")
    ax1.set(xlabel="largest tile at game end", ylabel="mean seconds per game", title="runtime per game")
    ax2.set(xlabel="tile", ylabel="median seconds to first reach it", title="time to each milestone tile")
    ax1.legend(fontsize=8)
    fig.suptitle("arena: timing (the games' own time, without loading the agent)")
    return common.save_figure(fig, out, "arena_timing.png")

