"""What the web app lets a browser ask for: agents and models by name, and every setting in a range.

The web server runs agents for anyone who can reach it, so nothing a request carries may name a
file, change a process-wide setting (torch's thread count, the device) or ask for unbounded work.
Each agent the web offers lists the settings it accepts, each with a range (:data:`WEB_AGENTS`);
trained networks are offered only as *models* — run directories found in ``ai2048 serve --models
DIR`` (named by their folder) and the networks shipped in :mod:`ai2048.models` — chosen by name
(``"model:NAME"``), never by a path. The ranges keep one decision well under a second on a small
machine (measured figures in docs/ui.md).

Which agents the web offers is decided here (:data:`WEB_AGENT_NAMES`, :data:`MODEL_AGENT_NAMES`);
which of an agent's options it offers, in what range and with what default, is part of each
option's one declaration beside its agent (``web=`` in :mod:`ai2048.agents.options`), read by
:func:`web_settings`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai2048 import checks
from ai2048.agents import available, make_agent
from ai2048.agents.base import options_of
from ai2048.checks import Option

SEED_MAX = (1 << 63) - 1
MODEL_PREFIX = "model:"
PATH_KEYS = frozenset({"weights", "path", "file", "files", "dir", "run", "run_dir", "model", "models", "out",
                       "records", "data", "evaluator", "patterns", "models_dir"})
SERVER_KEYS = frozenset({"threads", "device"})
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def describe(setting: Option) -> str:
    """The values web setting ``setting`` takes, in a request's (JSON's) words: ``"a whole number in
    1..3 or 'adaptive'"``, ``"true or false"``, ``"... or null"``."""
    none = " or null" if setting.none is not None else ""
    if setting.kind in ("whole", "number"):
        extra = "".join(f" or {c!r}" for c in setting.choices)
        what = "a whole number" if setting.kind == "whole" else "a number"
        if setting.lo_open or setting.hi_open:
            rng = checks.describe_range(setting.lo, setting.hi, whole=False, lo_open=setting.lo_open,
                                        hi_open=setting.hi_open)
        else:
            rng = f"in {setting.lo:g}..{setting.hi:g}"
        return f"{what} {rng}{extra}{none}"
    if setting.kind == "seed":
        return f"a whole number in 0..2**63-1{none}"
    if setting.kind == "flag":
        return "true or false"
    return "one of " + ", ".join(repr(c) for c in setting.choices) + none


def check_setting(key: str, setting: Option, value: Any) -> Any:
    """``value`` checked by web setting ``setting`` (JSON's ``3.0`` is the whole number 3), else a
    ValueError naming the setting and its range in a request's words."""
    def bad() -> ValueError:
        return ValueError(f"setting {key}={_short(value)} is out of range: {key} must be {describe(setting)}")

    if value is None and setting.none is None:
        raise bad()
    if setting.kind in ("whole", "seed") and isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        return setting.check(key, value)
    except ValueError:
        raise bad() from None


def _short(v: Any) -> str:
    """``v`` for an error message, at most about 40 characters (a request may send megabytes)."""
    if isinstance(v, str):
        return repr(v if len(v) <= 40 else v[:37] + "...")
    text = json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


def Int(lo: int, hi: int, *choices: Any, optional: bool = False) -> Option:  # noqa: N802
    """A web setting of an agent registered outside the package: a whole number in ``lo..hi``."""
    return Option("a whole number", "whole", lo, hi, choices=choices, none="" if optional else None)


def Float(lo: float, hi: float, optional: bool = False) -> Option:  # noqa: N802
    """A web setting of an agent registered outside the package: a number in ``[lo, hi]``."""
    return Option("a number", "number", lo, hi, none="" if optional else None)


def web_setting(key: str, option: Option) -> Option:
    """Agent option ``key`` as the web takes it: its declaration's ``web`` range, choices and None
    (:meth:`ai2048.Option.web_option`), a seed at most 2**63-1 (or null); a number the web
    offers must be bounded both ways."""
    w = option.web_option()
    if w is None:
        raise ValueError(f"option {key} is not offered on the web (its declaration has no web=...)")
    if w.kind in ("whole", "number") and (w.lo is None or w.hi is None):
        raise ValueError(f"web setting {key} needs both bounds (a request's work must be bounded): "
                         "give web=(lo, hi)")
    if w.kind == "seed":
        return dataclasses.replace(w, hi=SEED_MAX, none="")
    if w.kind not in ("whole", "number", "choice") and not (w.kind == "flag" and not w.choices):
        raise ValueError(f"web setting {key}: a {w.kind} option{' with words' if w.choices else ''} cannot "
                         "be offered on the web")
    return w


def web_settings(agent: str) -> dict[str, Option]:
    """The settings a request may change for registered agent ``agent``: its options declared with
    ``web=``, in signature order."""
    return {k: web_setting(k, o) for k, o in options_of(agent).items() if o.web is not None}


WEB_AGENT_NAMES = ("random", "greedy", "expectimax", "expectimax-seed003", "minimax", "montecarlo",
                   "lazyzero-random")
"""Agents the web offers by name (their networks aside: those are models)."""

MODEL_AGENT_NAMES = ("dqn", "qnet", "policy", "lazyzero", "lazyzero-chance", "ntuple", "endgame")
"""Agents that play a trained network, offered as models (by the ``agent`` their run's meta.json names)."""

WEB_AGENTS: dict[str, dict[str, Option]] = {name: web_settings(name) for name in WEB_AGENT_NAMES}
"""Agents the web offers by name, each with the settings a request may change and their ranges."""

WEB_DEFAULTS: dict[str, dict[str, Any]] = {
    name: defaults for name in WEB_AGENT_NAMES
    if (defaults := {k: o.web_default for k, o in options_of(name).items()
                     if o.web is not None and o.web_default is not None})}
"""Settings the web uses where a request gives none (``web_default=``: the command line's adaptive
expectimax goes to depth 8, seconds per move late in a game; the web stops at 6)."""

MODEL_SETTINGS: dict[str, dict[str, Option]] = {name: web_settings(name) for name in MODEL_AGENT_NAMES}
"""Agents that play a trained network, by the ``agent`` their run's meta.json names, with web settings."""

WARM_UP: dict[str, tuple[dict[str, Any], ...]] = {
    "random": ({},),
    "greedy": ({},),
    "expectimax": tuple({"heuristic": h, "min_depth": 1, "max_depth": 1, **extra}
                        for h in ("nneonneo", "seed003") for extra in ({}, {"depth": 1})),
    "expectimax-seed003": ({"depth": 1},),
    "minimax": ({"depth": 1, "time_limit": 0.01},),
    "montecarlo": ({"playouts": 1}, {"playouts_total": 4}),
    "lazyzero-random": ({"rollouts": 1, "depth": 2},),  # depth 1 scores leaves without a playout
    "lazyzero": ({"rollouts": 1, "depth": 2},),
    "lazyzero-chance": ({"simulations": 1},),
    "dqn": ({"policy": "greedy"}, {"policy": "entropy"}),
    "qnet": ({},),
    "policy": ({},),
    "ntuple": ({"depth": 1}, {"depth": 2, "tt_bits": 0}, {"depth": 2, "tt_bits": 0, "downgrade": True}),
    "endgame": ({"depth": 1}, {"depth": 2, "tt_bits": 0}),  # the agent reads a table when built
}
"""Settings of one cheap decision per code path of each web agent and model agent: ``ai2048 serve``
plays them before it listens (:mod:`ai2048.ui.warmup`), so every kernel a request can reach is
compiled (or loaded from numba's cache) by then. A setting that picks other compiled code (a
heuristic, a search instead of a greedy move, downgrading) has an entry here; tests/test_ui_warmup.py
checks that no request, at any setting in its range, compiles anything after the warm-up."""


@dataclass
class Model:
    """A trained network the web offers by name: a run directory or a shipped network."""

    name: str
    agent: str  # the registered agent that plays it (dqn, ntuple, ...)
    description: str
    settings: dict[str, Option]
    build: Callable[..., Any] = field(repr=False)


def scan_models(models_dir: str | Path | None) -> dict[str, Model]:
    """Models by name: each subfolder of ``models_dir`` whose meta.json names a network agent, plus
    the networks shipped in :mod:`ai2048.models` (when present). Names are fixed here, at start-up;
    a request only ever picks one of them."""
    models: dict[str, Model] = {}
    for name, model in _shipped().items():
        models[name] = model
    models.update(_endgame())
    if models_dir is None:
        return models
    root = Path(models_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"--models {root}: no such directory (give a folder holding run directories)")
    for run in sorted(p for p in root.iterdir() if p.is_dir()):
        meta_path = run / "meta.json"
        if not meta_path.is_file() or not _NAME.match(run.name):
            continue
        try:
            meta = json.loads(meta_path.read_text())
        except (OSError, ValueError, RecursionError):  # RecursionError: a meta.json nested 100000 deep
            continue
        agent = meta.get("agent") if isinstance(meta, dict) else None
        if agent not in MODEL_SETTINGS or agent not in available():
            continue
        if run.name in models:
            raise ValueError(f"--models {root}: folder {run.name!r} has the name of a shipped model; "
                             "rename the folder")
        models[run.name] = Model(run.name, agent, f"{agent} network from {run.name}/", MODEL_SETTINGS[agent],
                                 _run_builder(agent, run))
    return models


def _run_builder(agent: str, run: Path) -> Callable[..., Any]:
    """What builds the agent of run directory ``run`` with web settings (n-tuple runs share one network)."""
    if agent == "ntuple":
        return lambda **cfg: make_agent(agent, weights=run_network(run), **cfg)
    return lambda **cfg: make_agent(agent, weights=str(run), **cfg)


_RUN_NETWORKS: weakref.WeakValueDictionary[tuple[str, int, int], Any] = weakref.WeakValueDictionary()
_RUN_NETWORKS_LOCK = threading.Lock()


def run_network(run: Path) -> Any:
    """The n-tuple network of run directory ``run``, loaded once for every web agent built from it.

    The agent cache holds one agent per setting (``p_two``, ``depth``, ...): each loaded its own copy,
    so a client cycling ``p_two`` kept ``--max-agents`` copies of a 512 MiB table (and loaded one per
    request). Shared while any agent holds it (weak references), reloaded when the file changes.
    """
    from ai2048.agents.ntuple import load_ntuple_network

    weights = run / "weights.npz"
    st = weights.stat() if weights.is_file() else None
    key = (str(run.resolve()), st.st_mtime_ns if st else 0, st.st_size if st else 0)
    with _RUN_NETWORKS_LOCK:
        net = _RUN_NETWORKS.get(key)
        if net is None:
            net = load_ntuple_network(run)
            _RUN_NETWORKS[key] = net
        return net


def _shipped() -> dict[str, Model]:
    """The n-tuple networks shipped with the package (:mod:`ai2048.models`), when that module has them."""
    try:
        from ai2048 import models as shipped
    except ImportError:
        return {}
    names, make = getattr(shipped, "names", None), getattr(shipped, "make", None)
    if not callable(names) or not callable(make):
        return {}  # an install without the shipped-models package
    try:
        found = list(names())
    except (OSError, ValueError):
        return {}
    return {name: Model(name, "ntuple", f"shipped n-tuple network {name}", MODEL_SETTINGS["ntuple"],
                        lambda name=name, **cfg: make(name, **cfg))
            for name in found if isinstance(name, str) and _NAME.match(name)}


def _endgame() -> dict[str, Model]:
    """The ``endgame`` agent (the shipped network with endgame tables), offered when each default table
    is built in the tables folder ($AI2048_TABLES or the user cache) or shipped distilled in the
    package: the web never starts a build."""
    from ai2048.tables import formations, store

    try:
        root = store.tables_dir()
        if not all((root / n / store.META).is_file() or (store.DISTILLED_DIR / f"{n}.npz").is_file()
                   for n in formations.DEFAULT):
            return {}
    except (OSError, ValueError):
        return {}
    return {"endgame": Model("endgame", "endgame", "the shipped n-tuple network with endgame tables",
                             MODEL_SETTINGS["endgame"], lambda **cfg: make_agent("endgame", **cfg))}


def default_agent() -> str:
    """The web's default hint/AI agent: the default shipped n-tuple network (fast and strong) when
    one is shipped, else ``expectimax``."""
    shipped = _shipped()
    try:
        from ai2048 import models

        name = models.default_name()
    except (ImportError, AttributeError, OSError, ValueError):
        return "expectimax"
    return MODEL_PREFIX + name if name in shipped else "expectimax"


def check_settings(agent: str, config: Any, models: dict[str, Model],
                   extra_agents: dict[str, dict[str, Option]] | None = None) -> tuple[str, dict[str, Any]]:
    """(agent, checked settings) for a request's ``agent`` and ``config``, or ValueError saying what
    is wrong and what is allowed. ``agent`` is a web agent's name or ``"model:NAME"``."""
    agents = {**WEB_AGENTS, **(extra_agents or {})}
    if not isinstance(agent, str):
        raise ValueError(f"'agent' must be an agent name (string), got {type(agent).__name__}")
    if not isinstance(config, dict):
        raise ValueError(f"'config' must be an object of agent settings, got {type(config).__name__}")
    if agent.startswith(MODEL_PREFIX):
        name = agent[len(MODEL_PREFIX):]
        if name not in models:
            listed = (", ".join(MODEL_PREFIX + m for m in sorted(models))
                      or "none (start the server with --models DIR)")
            raise ValueError(f"unknown model {_short(name)}; models on this server: {listed}")
        rules = models[name].settings
    elif agent in agents:
        rules = agents[agent]
    else:
        names = ", ".join(sorted(agents))
        hint = f"; trained networks are models: {MODEL_PREFIX}NAME" if agent in MODEL_SETTINGS else ""
        raise ValueError(f"unknown agent {_short(agent)}; available agents: {names}{hint}")
    out = {}
    for key, value in config.items():
        if key in rules:
            out[key] = check_setting(key, rules[key], value)
        elif key in PATH_KEYS:
            raise ValueError(f"setting {_short(key)} is not accepted: the web app loads networks only by "
                             f"model name ({MODEL_PREFIX}NAME, from the server's --models folder), "
                             "never from a path")
        elif key in SERVER_KEYS:
            raise ValueError(f"setting {_short(key)} is fixed by the server "
                             "(it would change the whole process)")
        else:
            allowed = ", ".join(f"{k} ({describe(r)})" for k, r in rules.items()) or "none"
            raise ValueError(f"agent {agent!r} has no web setting {_short(key)}; settings: {allowed}")
    return agent, out


def build(agent: str, config: dict[str, Any], models: dict[str, Model]) -> Any:
    """The agent for checked (agent, config): web defaults filled in, models built from their run."""
    if agent.startswith(MODEL_PREFIX):
        built = models[agent[len(MODEL_PREFIX):]].build(**config)
    else:
        built = make_agent(agent, **{**WEB_DEFAULTS.get(agent, {}), **config})
    built.name = agent
    return built


def listing(models: dict[str, Model],
            extra_agents: dict[str, dict[str, Option]] | None = None) -> list[dict[str, Any]]:
    """What ``GET /api/agents`` shows: every web agent and model with its settings, their ranges and
    one line of help each (the options' declarations, as ``ai2048 agents NAME`` prints)."""
    from ai2048.agents import config_keys

    descriptions = available()
    out = []
    for name, rules in {**WEB_AGENTS, **(extra_agents or {})}.items():
        if name not in descriptions:
            continue
        try:
            defaults = {**config_keys(name), **WEB_DEFAULTS.get(name, {})}
        except (ImportError, AttributeError):
            continue  # an agent whose optional dependency is missing
        out.append({"name": name, "description": descriptions[name], "model": False,
                    "config": {k: _jsonable(defaults.get(k)) for k in rules},
                    "ranges": {k: describe(r) for k, r in rules.items()}, "help": _help(name, rules)})
    for name, m in sorted(models.items()):
        out.append({"name": MODEL_PREFIX + name, "description": m.description, "model": True,
                    "config": {}, "ranges": {k: describe(r) for k, r in m.settings.items()},
                    "help": _help(m.agent, m.settings)})
    return out


def _help(agent: str, keys: Any) -> dict[str, str]:
    """Each web setting's help line: what it does and the seed it comes from (its declaration)."""
    options = options_of(agent)
    return {k: f"{options[k].help} [from: {options[k].source}]" for k in keys if k in options}


def _jsonable(v: Any) -> Any:
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return None
    return v if isinstance(v, (str, int, float, bool)) or v is None else None
