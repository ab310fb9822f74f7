"""The agent seam: the ``Agent`` protocol and the registry that builds agents by name.

An agent answers ``act(board) -> Action`` for a uint64 board, choosing only legal actions;
``act_batch(boards)`` and ``reset(seed)`` are optional. Agents are registered lazily by
``"module:attr"`` so that listing them never imports torch.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ai2048 import checks
from ai2048.agents.options import declared_options, format_help, option_rows
from ai2048.checkpoint import check_regular_file, read_json
from ai2048.checks import Option
from ai2048.rules import Action


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(board) -> Action``; the evaluator, CLI and UIs take any of them."""

    def act(self, board: int) -> Action: ...


class BaseAgent:
    """Convenience base: ``act_batch`` loops over ``act``; ``reset`` is a no-op; ``explain`` is empty."""

    name: str = "agent"

    def act(self, board: int) -> Action:
        raise NotImplementedError

    def act_batch(self, boards: np.ndarray) -> np.ndarray:
        """[N] uint64 boards -> [N] int64 actions."""
        return np.array([int(self.act(int(b))) for b in boards], dtype=np.int64)

    def reset(self, seed: int | None = None) -> None:
        """Forget per-game state and reseed any randomness."""

    def explain(self, board: int) -> dict[str, float]:
        """The agent's value of each legal move (name -> value), shown by hints; empty if it has none."""
        return {}


@dataclass(frozen=True)
class AgentSpec:
    """A registered agent: where its factory lives and what it is, in one line."""

    name: str
    target: str
    description: str

    def factory(self) -> Callable[..., Any]:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


_REGISTRY: dict[str, AgentSpec] = {}


def register(name: str, target: str, description: str) -> None:
    """Register the factory at ``"module:attr"`` under ``name`` (later issues add learned agents)."""
    _REGISTRY[name] = AgentSpec(name, target, description)


def available() -> dict[str, str]:
    """Registered agent names with their one-line descriptions."""
    return {n: s.description for n, s in sorted(_REGISTRY.items())}


def _spec(name: str) -> AgentSpec:
    if not isinstance(name, str) or name not in _REGISTRY:
        names = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"unknown agent {name!r}; available agents: {names}")
    return _REGISTRY[name]


def config_keys(name: str) -> dict[str, Any]:
    """The config keys agent ``name`` accepts, with their defaults.

    A required key's default is ``inspect.Parameter.empty``."""
    sig = inspect.signature(_spec(name).factory())
    return {
        k: p.default
        for k, p in sig.parameters.items()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and k != "self"
    }


def options_of(name: str) -> dict[str, Option]:
    """The options agent ``name`` declares (:mod:`ai2048.agents.options`), by key in signature order;
    empty for an agent registered outside the package without declarations."""
    return declared_options(_spec(name).factory()) or {}


def option_help(name: str) -> list[dict[str, Any]]:
    """Agent ``name``'s options in signature order: key, default (None and ``required`` when there is
    none), what, source, allowed. Unknown agents raise as :func:`make_agent` does."""
    return option_rows(config_keys(name), options_of(name))


def format_option_help(name: str) -> str:
    """``ai2048 agents NAME``'s text: the agent's description, then one block per option."""
    return format_help(name, _spec(name).description, option_help(name))


def check_agent_config(name: str, config: dict[str, Any]) -> None:
    """The checks :func:`make_agent` makes before it builds anything: ``name`` is registered, every key
    of ``config`` is one of its keys, every required key is given, and every value is one its
    declaration takes (:mod:`ai2048.agents.options`); a ValueError names the fix. Rules between
    options, and values that need a file (a network, a table), are checked when the agent is built.

    ``seed`` is checked for an agent without declarations too: a whole number in 0..2**64-1 or None
    (``--set seed=-1`` was taken silently by some agents, refused with numpy's bare "expected
    non-negative integer" by others)."""
    keys = config_keys(name)
    unknown = sorted(set(config) - set(keys))
    if unknown:
        valid = ", ".join(f"{k}={v!r}" if v is not inspect.Parameter.empty else k for k, v in keys.items())
        raise ValueError(f"agent {name!r} has no config key(s) {', '.join(unknown)}; valid keys: {valid}")
    missing = [k for k, v in keys.items() if v is inspect.Parameter.empty and k not in config]
    if missing:
        raise ValueError(_missing_message(name, missing))
    options = options_of(name)
    for key, value in config.items():
        if key in options:
            options[key].check(key, value)
    if "seed" in config and "seed" not in options:
        checks.seed("seed", config["seed"])


def make_agent(name: str, **config: Any) -> Any:
    """Build the agent registered as ``name`` with keyword ``config``; unknown keys raise."""
    check_agent_config(name, config)
    return build_checked(name, config)


def build_checked(name: str, config: dict[str, Any]) -> Any:
    """Build agent ``name`` from a ``config`` that :func:`check_agent_config` has passed: the command line
    checks its agent once, before any work, then builds it here without the registry's checks again (the
    factory's own checks still run)."""
    agent = _spec(name).factory()(**config)
    agent.name = name
    return agent


def _missing_message(name: str, missing: list[str]) -> str:
    """Why agent ``name`` cannot be built without ``missing`` and how to fix it (a network needs a run)."""
    if missing == ["weights"]:
        trainer = name.split("-")[0]  # dqn, qnet, policy, lazyzero (lazyzero-chance plays a lazyzero run)
        return (
            f"agent {name!r} plays a trained network and needs its run directory: give the directory "
            "as the agent (ai2048 eval RUN_DIR) or --set weights=RUN_DIR "
            f"(in arena: {name}:weights=RUN_DIR); train one with "
            f"`ai2048 train {trainer} --out RUN_DIR` (see `ai2048 train {trainer} --help`)"
        )
    return f"agent {name!r} needs the config key(s) {', '.join(missing)} (see `ai2048 agents {name}`)"


def run_agent_name(path: str | Path) -> str:
    """The registered agent a run directory holds (its ``meta.json``'s ``agent``), checked."""
    run = Path(path)
    meta_path = run / "meta.json"
    if not run.is_dir():
        raise FileNotFoundError(f"{run} is not a run directory (expected a folder with meta.json)")
    check_regular_file(meta_path, "run metadata",
                       missing=f"{run} has no meta.json, so it is not an ai2048 run directory")
    meta = read_json(meta_path, "run metadata")  # a torn file or a JSON list is a clear error
    name = meta.get("agent")
    if not name or not isinstance(name, str):
        raise ValueError(f"{meta_path} does not say which agent it holds (no 'agent' key)")
    return name


def run_settings(path: str | Path) -> dict[str, Any]:
    """The settings a run directory's agent plays with unless overridden: its ``meta.json``'s
    ``info.plays``, written by the trainer (an n-tuple run trained with ``--downgrade highest`` plays
    ``downgrade="highest"``, as its own final evaluation did); empty for a run that records none."""
    meta_path = Path(path) / "meta.json"
    info = read_json(meta_path, "run metadata").get("info")
    plays = info.get("plays", {}) if isinstance(info, dict) else {}
    if not isinstance(plays, dict) or "weights" in plays:
        raise ValueError(f"{meta_path}: info.plays must be an object of agent settings (not weights), "
                         f"got {plays!r}; remove it to play the run with the agent's defaults")
    return dict(plays)


def check_run_overrides(path: str | Path, overrides: dict[str, Any]) -> None:
    """A run directory is the weights its agent plays: a ``weights`` setting beside it is refused."""
    if "weights" in overrides:
        raise ValueError(
            f"{Path(path)} is the run directory whose weights the agent plays, so "
            f"weights={overrides['weights']!r} cannot be set as well; drop the weights setting, or name the "
            "agent and give its run as weights=RUN_DIR"
        )


def load_agent(path: str | Path, **overrides: Any) -> Any:
    """Rebuild a trained agent from its run directory (``meta.json`` names the agent and the settings
    it plays with, :func:`run_settings`; ``overrides`` win)."""
    check_run_overrides(path, overrides)
    name = run_agent_name(path)
    return make_agent(name, weights=str(Path(path)), **{**run_settings(path), **overrides})
