"""``ai2048 agents``: list the registered agents, or one agent's config keys and defaults."""

from __future__ import annotations

import argparse
import inspect

from ai2048.agents.base import available, config_keys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "agents",
        help="list the registered agents (or one agent's settings)",
        description="Without NAME: every registered agent with its one-line description. With NAME: "
        "the config keys it accepts (for --set key=value) and their defaults.",
    )
    p.add_argument("name", nargs="?", default=None, help="show this agent's config keys")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        names = available()
        width = max(map(len, names))
        for name, desc in names.items():
            print(f"{name:<{width}}  {desc}")
        return 0
    for key, default in config_keys(args.name).items():
        print(f"{key} (required)" if default is inspect.Parameter.empty else f"{key}={default!r}")
    return 0
