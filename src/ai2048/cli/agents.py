"""``ai2048 agents``: list the registered agents, or one agent's config keys and defaults."""

from __future__ import annotations

import argparse

from ai2048.agents.base import available, config_keys, format_option_help


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "agents",
        help="list the registered agents (or one agent's settings)",
        description="Without NAME: every registered agent with its one-line description. With NAME: "
        "every config key it accepts (for --set key=value or name:key=value): its default, the values it "
        "allows, what it does and the seed or paper it comes from.",
    )
    p.add_argument("name", nargs="?", default=None, help="show this agent's options with their help")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """NAME, when given, is a registered agent (``run`` would say so while formatting its help)."""
    if args.name is not None:
        config_keys(args.name)


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        names = available()
        width = max(map(len, names))
        for name, desc in names.items():
            print(f"{name:<{width}}  {desc}")
        return 0
    print(format_option_help(args.name))
    return 0
