"""What ``ai2048 plot`` does with its inputs (:func:`plot_paths`): run directories or result files,
checked (and every game replayed) before the first figure is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai2048.plots.common import PlotInputError
from ai2048.plots.labels import agent_labels, check_labels, slug
from ai2048.plots.result_figures import plot_arena, plot_eval
from ai2048.plots.results import ARENA_FORMAT, load_result, replayed_milestones
from ai2048.plots.run_figures import plot_run, plot_runs


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
    ms = [replayed_milestones(r, src) for src, r in results]  # every game replays before any figure
    if len(results) == 1:
        return plot_eval(results[0][1], out, results[0][0], ms[0], names[0] if names else None)
    names = names or agent_labels([r for _, r in results])
    written: list[Path] = []
    for i, (src, r) in enumerate(results):
        written += plot_eval(r, out / f"{i}-{slug(names[i])}", src, ms[i], names[i])
    written += plot_arena([r for _, r in results], out, names, ms)
    return written

