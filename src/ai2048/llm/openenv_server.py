"""``ai2048 serve-env``: the text env served with openenv-core, behind the web app's guards.

openenv-core's routes (``/ws`` for sessions, and ``/reset``, ``/step``, ``/state``, ``/schema``,
``/metadata``, ``/health``, ``/mcp``) on a FastAPI app without the generated docs pages, with:

- the web app's :class:`~ai2048.ui.guard.Guard` in front: only this machine's loopback names
  (or ``--host``/``--allow-host``) in ``Host`` (421), no cross-site ``Origin`` (403) — WebSocket
  handshakes included, so a web page cannot drive the server — bodies of at most ``max_message``
  bytes read within ``request_timeout`` (413, 408), JSON posts only (415);
- the web app's uvicorn protocol (:mod:`ai2048.ui.protocol`): at most ``max_connections`` open
  connections, ``request_timeout`` seconds for a request's head;
- WebSocket messages of at most ``max_message`` bytes (larger: the connection is closed with
  1009), no compression, keep-alive pings every ``ping_seconds`` (a client that stops reading is
  dropped when its pong does not come within as many seconds);
- at most ``max_sessions`` games at once (one per WebSocket; more get openenv's
  ``CAPACITY_REACHED`` error), each dropped after ``session_ttl`` idle seconds.

Loopback by default. See docs/llm.md for the protocol and a client.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.types import ConcurrencyConfig
from starlette.websockets import WebSocketDisconnect

from ai2048.checks import check_fields, setting
from ai2048.envs.text import OPTION_NAMES
from ai2048.llm.openenv_env import Game2048Action, Game2048Environment, Game2048Observation
from ai2048.ui.guard import Guard, allowed_hosts

DEFAULT_PORT = 8049


@dataclass(frozen=True)
class EnvServerLimits:
    """The server's caps (``ai2048 serve-env`` options; docs/llm.md explains each)."""

    max_sessions: int = setting(64, "games played at once, one per WebSocket session", lo=1, hi=1 << 24)
    session_ttl: float = setting(300.0, "seconds a session may stay idle before it is dropped", lo=0,
                                 lo_open=True, why="seconds")
    max_connections: int = setting(128, "open connections; more are closed at once", lo=1, hi=1 << 24)
    request_timeout: float = setting(10.0, "seconds a client may take to send a request's head, and its body",
                                     lo=0, lo_open=True, why="seconds")
    max_message: int = setting(64 * 1024, "largest WebSocket message or request body in bytes", lo=4096,
                               hi=1 << 24, why="bytes; an observation needs 4096")
    ping_seconds: float = setting(10.0, "seconds between WebSocket pings; a client whose pong is as late is "
                                  "dropped", lo=0, lo_open=True, why="seconds")

    def __post_init__(self) -> None:
        check_fields(self)


class QuietDisconnect:
    """ASGI middleware: a WebSocket session whose client left first ends quietly.

    openenv-core closes the socket when a session ends, after the client has closed it; the
    ``WebSocketDisconnect`` that raises would be logged with a traceback for every finished game.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        with contextlib.suppress(WebSocketDisconnect):
            await self.app(scope, receive, send)


def check_env_options(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` if the text env takes them (one env is built to check), else ValueError."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise ValueError(f"unknown text env option(s) {', '.join(unknown)}; "
                         f"options: {', '.join(OPTION_NAMES)}")
    Game2048Environment(**options).close()
    return options


def create_env_app(env_options: dict[str, Any] | None = None, limits: EnvServerLimits | None = None, *,
                   host: str | None = None, allow_hosts: tuple[str, ...] = ()) -> FastAPI:
    """The FastAPI app: openenv-core's routes for the text env (``env_options`` are its options), the
    guards in front. ``host`` is the address served (its name is accepted as a Host header)."""
    limits = limits or EnvServerLimits()
    options = check_env_options(dict(env_options or {}))
    app = FastAPI(title="ai2048 text env (OpenEnv)", docs_url=None, redoc_url=None, openapi_url=None)
    server = HTTPEnvServer(
        functools.partial(Game2048Environment, **options), Game2048Action, Game2048Observation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=limits.max_sessions,
                                             session_timeout=limits.session_ttl))
    server.register_routes(app)
    app.state.env_server, app.state.limits = server, limits
    app.add_middleware(QuietDisconnect)
    app.add_middleware(Guard, hosts=allowed_hosts(host, allow_hosts), body_timeout=limits.request_timeout,
                       max_body=limits.max_message, json_paths="/")
    return app


def uvicorn_config(app: FastAPI, host: str, port: int, limits: EnvServerLimits, **extra: Any) -> Any:
    """The uvicorn ``Config`` that serves ``app`` with the limits (``serve`` and the tests use it)."""
    import uvicorn

    from ai2048.ui.protocol import protocol_class

    settings: dict[str, Any] = {"log_level": "warning", **extra}
    return uvicorn.Config(
        app, host=host, port=port, ws="websockets-sansio",
        http=protocol_class(limits.max_connections, limits.request_timeout), ws_max_size=limits.max_message,
        ws_max_queue=4, ws_ping_interval=limits.ping_seconds, ws_ping_timeout=limits.ping_seconds,
        ws_per_message_deflate=False, **settings)


def serve(app: FastAPI, host: str, port: int, limits: EnvServerLimits) -> None:
    """Serve until Ctrl-C."""
    import uvicorn

    uvicorn.Server(uvicorn_config(app, host, port, limits)).run()


__all__ = ["DEFAULT_PORT", "EnvServerLimits", "create_env_app", "serve", "uvicorn_config"]
