"""``ai2048 serve``: the web app (play, hints, AI moves, autoplay) on http://127.0.0.1:8048."""

from __future__ import annotations

import argparse

from ai2048.cli._common import add_set_argument, parse_sets


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the web page: play, undo, hint, AI move and autoplay with any agent",
        description="Start the ai2048 web app. It works offline (no CDN). It listens on 127.0.0.1 only "
        "unless --host says otherwise; it runs agents on request, so expose it only on networks you trust.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8048, help="port (default 8048)")
    p.add_argument("--agent", default="expectimax", help="agent preselected for hints and AI moves")
    add_set_argument(p)
    p.add_argument("--max-games", type=int, default=256, help="games kept in memory (oldest dropped)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ai2048.ui.deps import require

    require("fastapi")
    uvicorn = require("uvicorn")
    from ai2048.agents import make_agent
    from ai2048.ui.server import create_app

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port} is not a TCP port (1..65535)")
    if args.max_games < 1:
        raise ValueError(f"--max-games must be at least 1, got {args.max_games}")
    config = parse_sets(args.sets)
    make_agent(args.agent, **config)  # fail now, clearly, on a bad agent or setting
    app = create_app(default_agent=args.agent, default_config=config, max_games=args.max_games)
    print(f"ai2048 web app on http://{args.host}:{args.port}/  (Ctrl-C stops it)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
