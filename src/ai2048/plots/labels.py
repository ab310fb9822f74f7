"""Names in legends, titles and folders: a result's full label, short distinct labels for several
results (:func:`agent_labels`) or paths (:func:`distinct_names`), the checks of ``--label``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai2048.plots.common import PlotInputError


def result_label(r: dict[str, Any]) -> str:
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



def slug(text: str) -> str:
    """A label as a folder name (letters, digits, ``-_.``; at most 60 characters) for a run's or an
    agent's own figures."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in text).strip("-")[:60] or "agent"
