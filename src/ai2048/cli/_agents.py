"""Building agents from command-line words: a registry name with ``--set`` values, or a run directory."""

from __future__ import annotations

import os
import sys
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


def choose_agent(spec: str, sets: dict[str, Any], preset: dict[str, Any] | None = None,
                 illegal_move: str | None = None) -> ChosenAgent:
    """The agent ``spec`` names (a registered name, or a run directory whose ``meta.json`` names one)
    with ``sets``, checked once before any work: a known agent, its keys and every value its options
    declare. ``preset``: settings (``--preset``'s) added where the agent has the key and ``sets`` has
    not. ``illegal_move``: the games' rule for a move that changes nothing; the settings are fitted to it
    (:func:`fit_to_rules`, a note on stderr) and one that does not fit is refused, naming the flag to
    add. A path is recorded in one spelling (runs/x, runs/x/, ./runs/x), as ``eval --resume`` matches it."""
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
    sets = {**sets, **{k: v for k, v in (preset or {}).items() if k in keys and k not in sets}}
    if illegal_move is not None:
        from ai2048.evaluate import check_agent_fits

        sets, note = fit_to_rules(spec, sets, illegal_move)
        if note is not None:
            print(f"note: {note}", file=sys.stderr)
        check_agent_fits(sets.get("illegal_action"), illegal_move)
    config = {**base, **sets}
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
