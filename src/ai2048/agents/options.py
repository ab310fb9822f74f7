"""Agent options, each declared once, in its factory's signature: default, help, values, web range.

An agent option is one parameter of the factory the registry names, with :func:`option` as its
default::

    @agent_options
    def __init__(self, depth: int = option(3, "moves searched ahead", "whole", lo=1, hi=60, web=(1, 3))):

:func:`agent_options` puts the real defaults back in the signature (so ``inspect.signature``, the
Python API and :func:`ai2048.agents.base.config_keys` see ``depth=3``) and checks every argument
against its declaration (with :mod:`ai2048.checks`) before the factory runs; a parameter without a
declaration is an error when the module is imported. From the same declarations come
``ai2048 agents NAME`` (:func:`option_help`), the values :func:`ai2048.agents.base.check_agent_config`
refuses before any work starts, and the web app's settings (:mod:`ai2048.ui.limits`).

Options several agents take (a seed, a tie-break order, a search's cutoff) are declared once below
and reused: ``option(None, SEED)``, or ``option(1e-4, PROB_CUTOFF, web=(1e-4, None))`` to change a
field for one agent.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from ai2048.checks import Option
from ai2048.rules import SEED_ORDERS

REQUIRED: Any = inspect.Parameter.empty
"""The default of an option the caller must give (a network's run directory)."""

WEB = (None, None)
"""``web=WEB``: the web app offers the option with its declared range."""

F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass(frozen=True)
class Declared:
    """What :func:`option` leaves in a signature until :func:`agent_options` reads it."""

    default: Any
    option: Option


def option(default: Any, what: str | Option, kind: str = "any", **fields: Any) -> Any:
    """An agent option declared in one place: its default, one line of help (or a shared
    :class:`~ai2048.checks.Option` such as :data:`SEED`), its kind and the fields of
    :class:`~ai2048.checks.Option` (``lo``, ``hi``, ``choices``, ``none``, ``source``, ``allowed``,
    ``why``, ``web``, ``web_none``, ``web_choices``, ``web_default``). Given a shared option, the
    fields named here (``help`` too) replace its own."""
    if "choices" in fields:
        fields["choices"] = tuple(fields["choices"])
    if isinstance(what, Option):
        return Declared(default, dataclasses.replace(what, **fields))
    return Declared(default, Option(what, kind, **fields))


def agent_options(factory: F) -> F:
    """Read the :func:`option` declarations of ``factory``'s parameters (``self`` aside), put their
    defaults back in its signature and check each argument against its declaration before it runs.

    A parameter without a declaration is a TypeError naming it: every option has its help and
    values. Required options (:data:`REQUIRED`) must come first, as Python's own required
    parameters do."""
    sig = inspect.signature(factory)
    options: dict[str, Option] = {}
    params = []
    for name, p in sig.parameters.items():
        if name == "self":
            params.append(p)
            continue
        if not isinstance(p.default, Declared):
            raise TypeError(f"{factory.__qualname__}: parameter {name!r} has no option(...) declaration "
                            "(its default, help and values; see ai2048.agents.options)")
        options[name] = p.default.option
        params.append(p.replace(default=p.default.default))
    positional = [p for p in params if p.kind == p.POSITIONAL_OR_KEYWORD and p.name != "self"]
    first_default = next((i for i, p in enumerate(positional) if p.default is not REQUIRED), len(positional))
    if any(p.default is REQUIRED for p in positional[first_default:]):
        raise TypeError(f"{factory.__qualname__}: a required option follows one with a default")
    fn: Any = factory  # the defaults Python itself fills in, as if the signature had written them
    fn.__defaults__ = tuple(p.default for p in positional[first_default:]) or None
    fn.__kwdefaults__ = {p.name: p.default for p in params
                         if p.kind == p.KEYWORD_ONLY and p.default is not REQUIRED} or None
    checked = sig.replace(parameters=params)

    @functools.wraps(factory)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = checked.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            if name in options:
                bound.arguments[name] = options[name].check(name, value)
        return factory(*bound.args, **bound.kwargs)

    wrapper.__signature__ = checked  # type: ignore[attr-defined]
    wrapper.options = options  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def declared_options(factory: Callable[..., Any]) -> dict[str, Option] | None:
    """The options ``factory`` (a class or a function) declares, by name in signature order; None for
    a factory without declarations (an agent registered outside the package)."""
    target = factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]
    return getattr(target, "options", None)


_ORDERS = tuple(SEED_ORDERS)

SEED = Option("seed of the agent's own random stream (each game of an evaluation reseeds it)", "seed",
              none="OS entropy", source="this toolkit (every random source takes a seed)", web=WEB)
ORDER = Option("tie-break order between moves of equal value: the first in this order wins", "choice",
               choices=_ORDERS, source="each seed's action numbering (agents/seed_actions.py)", web=WEB)
P_TWO_SEARCH = Option("probability of a 2 that the search assumes at spawns (the game's own odds are 0.9)",
                      "number", lo=0, hi=1, lo_open=True, web=WEB,
                      source="2048 rules; seed 003's code spawns 2s only (1.0)")
PROB_CUTOFF = Option("chance nodes whose cumulative probability falls below this become leaves "
                     "(probability pruning)", "number", lo=0, hi=1, hi_open=True, why="0 = exact search",
                     source="nneonneo/2048-ai")
TT_BITS = Option("log2 of the transposition-table size", "whole", lo=0, hi=28,
                 why="0 turns the table off", source="nneonneo/2048-ai", web=(None, 20))
"""On the web at most 2**20 entries: about 32 MiB a table."""
DEPTH = Option("moves (each followed by a spawn) searched ahead", "whole", lo=1, hi=60,
               why="1 = one move layer, greedy on the evaluator")
WEIGHTS_RUN = Option("the run directory of a trained network (its meta.json/config.json and weights)",
                     allowed="a path to a run directory (required)",
                     source="this toolkit's `ai2048 train ...` output (the agent's description names it)")
DEVICE = Option("torch device the network runs on", allowed="'cpu', 'cuda', 'cuda:N' or 'auto' (an absent "
                "GPU is an error)", source="this toolkit")
NET_THREADS = Option("torch CPU threads, set for the whole process when the agent is built (torch has one "
                     "setting)", "whole", lo=0, why="0 keeps torch's default", source="this toolkit")
SEARCH_THREADS = Option("torch CPU threads of the network calls", "whole", lo=1, hi=64,
                        why="at most the machine's cores", source="this toolkit")
IN_FLIGHT = Option("games each evaluation process (each of --workers) searches at once (one network call "
                   "for all of them); the moves are those of one-at-a-time play", "whole", lo=1,
                   source="this toolkit")
PUCT = Option("PUCT exploration constant C at the root", "number", lo=0, web=(None, 10.0))
TEMPERATURE = Option("move choice from visit counts: 0 = most visited, > 0 samples N^(1/T)", "number", lo=0,
                     web=(None, 10.0))


def option_rows(keys: dict[str, Any], options: dict[str, Option]) -> list[dict[str, Any]]:
    """Each of ``keys`` (an agent's config keys with their defaults) as a row: key, default (None and
    ``required`` when there is none), what, source, allowed; what, source and allowed are empty for a
    key without a declaration (an agent registered outside the package)."""
    rows = []
    for key, default in keys.items():
        required = default is REQUIRED
        opt = options.get(key)
        allowed = (opt.describe() + (f" ({opt.why})" if opt.why else "")) if opt else ""
        rows.append({"key": key, "default": None if required else default, "required": required,
                     "what": opt.help if opt else "", "source": opt.source if opt else "",
                     "allowed": allowed})
    return rows


def format_help(name: str, description: str, rows: list[dict[str, Any]]) -> str:
    """``ai2048 agents NAME``'s text: the agent's description, then one block per option."""
    lines = [f"{name}: {description}"]
    if not rows:
        lines.append("no options")
    for row in rows:
        head = f"{row['key']} (required)" if row["required"] else f"{row['key']}={row['default']!r}"
        if not row["what"]:
            lines.append(f"  {head}")
            continue
        lines.append(f"  {head}  allowed: {row['allowed']}")
        lines.append(f"      {row['what']} [from: {row['source']}]")
    return "\n".join(lines)
