"""``ai2048 serve-env``: the text env for language models as an OpenEnv server on http://127.0.0.1:8049."""

from __future__ import annotations

import argparse
from typing import Any

from ai2048.cli._common import add_listen_arguments, add_set_argument, parse_sets, settings_from_flags


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve-env",
        help="serve the text env (ai2048/TextGame2048-v0) to language-model agents over OpenEnv",
        description="Serve the text env with openenv-core: each WebSocket session (openenv-core's "
        "EnvClient, or ai2048.llm.openenv_env.Game2048Client) plays its own game, the model's answers as "
        "text. It listens on 127.0.0.1 only unless --host says otherwise and answers only requests for its "
        "own host name, never cross-site ones (WebSocket handshakes included). Text env options go in "
        "--set KEY=VALUE: obs_format (text or json), max_invalid (invalid answers in a row before the game "
        "ends; null: never), invalid_penalty, max_chars, reward_mode, goal_tile, p_two. Needs the llm "
        "extra: pip install 'ai2048[llm]'.",
    )
    add_listen_arguments(p, port=8049, connections=128)
    add_set_argument(p)
    p.add_argument("--max-sessions", type=int, default=64,
                   help="games played at once, one per WebSocket session (default 64)")
    p.add_argument("--session-ttl", type=float, default=300.0,
                   help="seconds a session may stay idle before it is dropped (default 300)")
    p.add_argument("--max-message", type=int, default=64 * 1024,
                   help="largest WebSocket message or request body in bytes (default 65536)")
    p.add_argument("--ping", type=float, default=10.0,
                   help="seconds between WebSocket pings; a client whose pong is as late is dropped "
                   "(default 10)")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> Any:
    """Every check ``run`` makes before serving: the port, the limits, the env options; returns the limits."""
    from ai2048.ui.deps import require

    require("openenv.core.env_server.http_server", "llm")
    from ai2048.llm.openenv_server import EnvServerLimits, check_env_options

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port} is not a TCP port (1..65535)")
    flags = {name: "--" + name.replace("_", "-") for name in (
        "max_sessions", "session_ttl", "max_connections", "request_timeout", "max_message")}
    limits = settings_from_flags(EnvServerLimits, args, {**flags, "ping_seconds": "--ping"})
    try:
        check_env_options(parse_sets(args.sets))
    except (ValueError, TypeError) as e:
        raise ValueError(f"--set: {e}") from None
    return limits


def run(args: argparse.Namespace) -> int:
    limits = check(args)
    from ai2048.llm.openenv_server import create_env_app, serve

    host = args.host or "127.0.0.1"
    app = create_env_app(parse_sets(args.sets), limits, host=args.host, allow_hosts=tuple(args.allow_host))
    print(f"ai2048 text env (OpenEnv) on http://{host}:{args.port}/  WebSocket: ws://{host}:{args.port}/ws  "
          "(Ctrl-C stops it)", flush=True)
    serve(app, host, args.port, limits)
    return 0
