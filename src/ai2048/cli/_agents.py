"""Building agents from command-line words: a registry name with ``--set`` values, or a run directory."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai2048.agents.base import (
    available,
    build_checked,
    check_agent_config,
    check_run_overrides,
    config_keys,
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


@dataclass(frozen=True)
class ChosenAgent:
    """An agent the command line named, checked once by :func:`choose_agent`: the registered agent and
    the whole config it plays with (a run directory's weights and settings, a preset's, then ``--set``'s),
    which is also what results record."""

    name: str
    config: dict[str, Any]

    def build(self) -> tuple[Any, str, dict[str, Any]]:
        """(agent, name, config): the agent built once, without checking the config again."""
        return build_checked(self.name, self.config), self.name, dict(self.config)


def choose_agent(spec: str, sets: dict[str, Any], preset: dict[str, Any] | None = None) -> ChosenAgent:
    """The agent ``spec`` names (a registered name, or a run directory whose ``meta.json`` names one)
    with ``sets``, checked once before any work: a known agent, its keys and every value its options
    declare. ``preset``: settings (``--preset``'s) added where the agent has the key and ``sets`` has
    not. A path is recorded in one spelling (runs/x, runs/x/, ./runs/x), as ``eval --resume`` matches it."""
    if not spec.strip():
        raise ValueError(
            "the agent is empty: give a registered name (see `ai2048 agents`) or a run directory"
        )
    if isinstance(sets.get("weights"), str) and sets["weights"].strip():
        sets = {**sets, "weights": os.path.normpath(sets["weights"])}
    base: dict[str, Any] = {}
    name = spec
    if _is_run_dir(spec):
        check_run_overrides(spec, sets)
        run = os.path.normpath(spec)
        name = run_agent_name(run)
        base = {"weights": run, **run_settings(run)}
    keys = config_keys(name)  # an unknown name is named here, as check_agent_config names it
    extra = {k: v for k, v in (preset or {}).items() if k in keys and k not in sets}
    config = {**base, **sets, **extra}
    check_agent_config(name, config)
    return ChosenAgent(name, config)


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
