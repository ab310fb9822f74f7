"""``ai2048 serve``: the web app (play, hints, AI moves, autoplay) on http://127.0.0.1:8048."""

from __future__ import annotations

import argparse
import signal
import socket
from pathlib import Path
from typing import Any

from ai2048.cli._common import add_listen_arguments, add_set_argument, parse_sets, settings_from_flags


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve the web page: play, undo, hint, AI move and autoplay with any agent",
        description="Start the ai2048 web app. It works offline (no CDN). It listens on 127.0.0.1 only "
        "unless --host says otherwise and answers only requests for its own host name from its own page. "
        "Trained networks are offered by name from --models DIR (each run directory in it is a model named "
        "by its folder); a browser can never name a file. Before it prints its address it warms up: every "
        "agent's kernels are compiled or loaded and the models built once, so no request waits for them. "
        "It runs agents on request, so expose it only on networks you trust.",
    )
    add_listen_arguments(p, port=8048, connections=64)
    p.add_argument(
        "--agent",
        default=None,
        help="agent preselected for hints and AI moves, or model:NAME (default: the shipped n-tuple "
        "network when one is shipped, else expectimax)",
    )
    add_set_argument(p)
    p.add_argument("--models", type=Path, default=None, metavar="DIR",
                   help="folder of run directories offered as models (model:FOLDER), by name only")
    p.add_argument(
        "--max-games", type=int, default=256, help="games kept in memory (least recently used dropped)"
    )
    p.add_argument(
        "--game-ttl", type=float, default=3600.0, help="seconds an untouched game is kept (default 3600)"
    )
    p.add_argument("--max-agents", type=int, default=8, help="built agents kept in memory (default 8)")
    p.add_argument("--workers", type=int, default=2, help="threads running agents (default 2)")
    p.add_argument("--budget", type=float, default=2.0, help="seconds of agent work per request (default 2)")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> Any:
    """Every check ``run`` makes before the app is built: the options, --models, the agent and its
    settings against the web's ranges; returns the server's Limits."""
    from ai2048.ui.deps import require

    require("fastapi")
    from ai2048.ui.limits import default_agent, scan_models
    from ai2048.ui.state import Limits, default_choice

    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port} is not a TCP port (1..65535)")
    limits = settings_from_flags(Limits, args, {name: "--" + name.replace("_", "-") for name in (
        "max_games", "game_ttl", "max_agents", "workers", "budget", "max_connections", "request_timeout")})
    default_choice(args.agent or default_agent(), parse_sets(args.sets), scan_models(args.models))
    return limits


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, not yet listening, or an OSError naming the address and the fix.

    Bound before the warm-up, so a port in use is an error at once; it listens (uvicorn) only when the
    warm-up is done, so a connection before then is refused, not left waiting: whoever checks the port
    sees the server when it is ready.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as e:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port} ({e.strerror or e}); is another server using it? "
                      "Stop it or pick another --port") from None
    sock.set_inheritable(True)
    return sock


class Interrupts:
    """Ctrl-C (SIGINT) within ``with``: raised at once as KeyboardInterrupt, as by default, and also
    remembered in ``seen``, for the code that must not go on after an interrupt something swallowed
    (the warm-up: an interrupt inside a ctypes callback of numba's kernel loading is only printed)."""

    def __init__(self) -> None:
        self.seen = False
        self._old: Any = None

    def _handler(self, signum: int, frame: Any) -> None:
        self.seen = True
        raise KeyboardInterrupt

    def __enter__(self) -> Interrupts:
        self._old = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._old)


def run(args: argparse.Namespace) -> int:
    from ai2048.ui.deps import require

    require("fastapi")
    uvicorn = require("uvicorn")
    from ai2048.ui.server import create_app

    limits = check(args)
    config = parse_sets(args.sets)
    host = args.host or "127.0.0.1"
    from ai2048.ui.limits import MODEL_PREFIX, default_agent

    agent = args.agent or default_agent()
    # checks the agent, its settings against the web's ranges, and --models, before serving
    app = create_app(default_agent=agent, default_config=config, models_dir=args.models,
                     host=args.host, allow_hosts=tuple(args.allow_host), limits=limits)
    sock = bind(host, args.port)
    try:
        models = sorted(app.state.web.models)
        if models:
            print(f"models: {', '.join(MODEL_PREFIX + m for m in models)}")
        from ai2048.ui.warmup import warm_up

        with Interrupts() as interrupts:
            print("warming up: agents, kernels and models (Ctrl-C stops) ...", flush=True)
            # the default agent first (a broken model fails here, clearly), then every agent's kernels
            seconds = warm_up(app, say=lambda line: print(line, flush=True), stopped=lambda: interrupts.seen)
        print(f"ready in {seconds:.1f} s", flush=True)
        print(f"ai2048 web app on http://{host}:{args.port}/  (Ctrl-C stops it)", flush=True)
        from ai2048.ui.protocol import protocol_class

        # uvicorn alone has neither a connection cap nor a timeout on a request's head (slowloris); the
        # app has no WebSocket route, so an Upgrade request is not handed to a protocol without either
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=args.port, log_level="warning", ws="none",
                                               http=protocol_class(limits.max_connections,
                                                                   limits.request_timeout)))
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0
