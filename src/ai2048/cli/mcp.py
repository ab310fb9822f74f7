"""``ai2048 mcp``: 2048 as MCP tools on stdin/stdout, for chat assistants (new game, board, move, hint)."""

from __future__ import annotations

import argparse
from typing import Any

from ai2048.cli._common import settings_from_flags


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve 2048 as MCP tools on stdin/stdout so a chat assistant can play (new game, move, hint)",
        description="Run an MCP server on stdin/stdout (configure it in an MCP client as the command "
        "'ai2048 mcp'). Tools: new_game, read_board, move, hint, agents. Hints come from the web app's "
        "agents with the web's setting ranges and from shipped networks by name. Needs the llm extra: "
        "pip install 'ai2048[llm]'.",
    )
    p.add_argument("--agent", default=None,
                   help="default hint agent, or model:NAME (default: the shipped n-tuple network when one is "
                   "shipped, else expectimax)")
    p.add_argument("--max-games", type=int, default=64,
                   help="games kept (least recently used dropped; default 64)")
    p.add_argument("--game-ttl", type=float, default=3600.0,
                   help="seconds an untouched game is kept (default 3600)")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> Any:
    """Every check ``run`` makes before serving: the extra, the limits, the default agent; returns the
    limits."""
    from ai2048.ui.deps import require

    require("mcp.server.mcpserver", "llm")
    from ai2048.llm.mcp_server import McpLimits
    from ai2048.ui.limits import check_settings, default_agent, scan_models

    limits = settings_from_flags(McpLimits, args, {"max_games": "--max-games", "game_ttl": "--game-ttl"})
    try:
        check_settings(args.agent or default_agent(), {}, scan_models(None))
    except ValueError as e:
        raise ValueError(f"--agent: {e}") from None
    return limits


def run(args: argparse.Namespace) -> int:
    limits = check(args)
    from ai2048.llm.mcp_server import serve_stdio

    serve_stdio(args.agent, limits)
    return 0
