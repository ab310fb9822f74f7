"""Building agents from command-line words: a registry name with ``--set`` values, or a run directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ai2048.agents.base import (
    available,
    check_agent_config,
    check_run_overrides,
    config_keys,
    load_agent,
    make_agent,
    run_agent_name,
    run_settings,
)
from ai2048.cli._common import parse_value


def _is_run_dir(spec: str) -> bool:
    """Whether ``spec`` names a run directory rather than a registered agent; an existing file is a
    ValueError, and a path-like ``spec`` (one with a ``/``) that does not exist a FileNotFoundError."""
    if spec in available():
        return False
    if Path(spec).is_dir():
        return True
    if Path(spec).exists():
        raise ValueError(
            f"{spec} is a file, not a run directory: give the run's folder (the one with meta.json) or a "
            "registered agent (see `ai2048 agents`)"
        )
    if "/" in spec or os.sep in spec:
        raise FileNotFoundError(
            f"no run directory {spec}: give an existing run directory or a registered agent "
            "(see `ai2048 agents`)"
        )
    return False


def check_agent(spec: str, sets: dict[str, Any]) -> None:
    """The checks :func:`build_agent` makes before it builds: a known agent (a registered name, or a run
    directory whose ``meta.json`` names one) and its config keys. The values are checked when it is built."""
    if not spec.strip():
        raise ValueError(
            "the agent is empty: give a registered name (see `ai2048 agents`) or a run directory"
        )
    if _is_run_dir(spec):
        check_run_overrides(spec, sets)
        name = run_agent_name(spec)
        check_agent_config(name, {"weights": os.path.normpath(spec), **run_settings(spec), **sets})
    else:
        check_agent_config(spec, sets)


def agent_keys(spec: str) -> set[str]:
    """The config keys of the agent ``spec`` names (a registered name, or a run directory's agent)."""
    return set(config_keys(run_agent_name(spec) if _is_run_dir(spec) else spec))


def fit_to_rules(spec: str, sets: dict[str, Any], illegal_move: str) -> tuple[dict[str, Any], str | None]:
    """``sets`` for agent ``spec`` in games whose ``illegal_move`` rule is given, and a note saying what
    changed (None: nothing). A run trained under seed 004's rules plays ``illegal_action=penalty`` (its
    ``meta.json`` ``info.plays``): it chooses moves that change nothing, which only ``illegal_move=penalty``
    plays, so elsewhere it plays ``illegal_action=mask`` (a ``--set`` of it wins, and is then checked by
    :func:`ai2048.evaluate.check_agent_fits`)."""
    if illegal_move == "penalty" or "illegal_action" in sets or not _is_run_dir(spec):
        return sets, None
    if run_settings(spec).get("illegal_action") != "penalty":
        return sets, None
    note = (f"{spec} trained under seed 004's rules (illegal_action=penalty: it may choose a move that "
            "changes nothing); these games reject such moves, so it plays illegal_action=mask. "
            "--preset seed004-exact plays the rules it trained under")
    return {**sets, "illegal_action": "mask"}, note


def build_agent(spec: str, sets: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
    """(agent, name, config) for ``spec``: a registered name or a run directory (``meta.json``)."""
    check_agent(spec, sets)
    # one spelling of a path (runs/x, runs/x/, ./runs/x): the config is what `eval --resume` matches
    if isinstance(sets.get("weights"), str) and sets["weights"].strip():
        sets = {**sets, "weights": os.path.normpath(sets["weights"])}
    if _is_run_dir(spec):
        run = os.path.normpath(spec)
        agent = load_agent(run, **sets)
        return agent, getattr(agent, "name", run), {"weights": run, **run_settings(run), **sets}
    return make_agent(spec, **sets), spec, dict(sets)


def _top_level_items(text: str) -> list[str]:
    """Split ``text`` on the commas that are not inside brackets, braces or quotes."""
    items, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item for item in items if item.strip()]


def split_spec(word: str) -> tuple[str, dict[str, Any]]:
    """``"expectimax:depth=2,p_two=1.0" -> ("expectimax", {"depth": 2, "p_two": 1.0})``.

    Values may be JSON with commas of their own: ``expectimax:weights={"empty":300,"merges":600}``.
    """
    name, _, rest = word.partition(":")
    cfg: dict[str, Any] = {}
    for item in _top_level_items(rest):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"agent spec {word!r}: expected name:key=value,key=value")
        cfg[key.strip()] = parse_value(value.strip())
    return name, cfg
