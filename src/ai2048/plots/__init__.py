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
  seed 000's overlaid score histograms and seed 003's runtime per game against the max tile and time
  to each milestone (one line per agent), each named by :func:`agent_labels` (the agent plus only
  the options that differ).
- :func:`plot_paths`: what ``ai2048 plot`` does with its inputs.

The modules, each with one job: ``common`` (matplotlib, saving, the input error), ``labels`` (names
of runs and agents, ``--label``), ``curves`` (a run's metrics -> curves, no matplotlib),
``run_figures``, ``results`` (result files and the numbers from their games, no matplotlib),
``result_figures``, ``dispatch`` (:func:`plot_paths`). This package re-exports their public names.
"""

from __future__ import annotations

from ai2048.plots.common import ACTION_COLORS, PlotInputError
from ai2048.plots.curves import (
    EPISODE_SERIES,
    X_KEYS,
    action_distribution,
    episode_curves,
    ewma,
    load_metrics,
    reached_tiles,
    training_curves,
)
from ai2048.plots.dispatch import plot_paths
from ai2048.plots.labels import EVAL_SETTINGS, agent_labels, check_labels, distinct_names
from ai2048.plots.result_figures import plot_arena, plot_eval
from ai2048.plots.results import (
    ARENA_FORMAT,
    EVAL_FORMAT,
    MILESTONES,
    action_shares,
    load_result,
    mean_board,
    milestone_moves,
    milestone_seconds,
    runtime_by_tile,
)
from ai2048.plots.run_figures import Panel, lazyzero_figure, overlay_runs, plot_run, plot_runs

__all__ = [
    "ACTION_COLORS",
    "ARENA_FORMAT",
    "EPISODE_SERIES",
    "EVAL_FORMAT",
    "EVAL_SETTINGS",
    "MILESTONES",
    "X_KEYS",
    "Panel",
    "PlotInputError",
    "action_distribution",
    "action_shares",
    "agent_labels",
    "check_labels",
    "distinct_names",
    "episode_curves",
    "ewma",
    "lazyzero_figure",
    "load_metrics",
    "load_result",
    "mean_board",
    "milestone_moves",
    "milestone_seconds",
    "overlay_runs",
    "plot_arena",
    "plot_eval",
    "plot_paths",
    "plot_run",
    "plot_runs",
    "reached_tiles",
    "runtime_by_tile",
    "training_curves",
]
