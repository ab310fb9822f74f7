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
  ``CAPACITY_REACHED`` error), each dropped after ``session_ttl`` idle seconds, its WebSocket
  closed with it (code 1001, the reason saying so), so a dropped session cannot play on;
- a WebSocket message that is JSON but not an object answered with an error naming the message
  types (openenv-core would end the session with a Python error), and the stateless ``POST /step``
  answered 400 (a game lives in a WebSocket session; a step without one has no game to play).

Loopback by default. See docs/llm.md for the protocol and a client.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.types import ConcurrencyConfig
from starlette.websockets import WebSocketDisconnect

from ai2048.checkpoint import json_kind
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


_CLOSER: contextvars.ContextVar[Callable[[str], Awaitable[None]] | None] = contextvars.ContextVar(
    "ai2048_websocket_closer", default=None)
"""In a WebSocket connection's task: the coroutine that closes that socket (set by :class:`SocketGuard`)."""

MESSAGE_TYPES = "reset, step, state or close"
NOT_AN_OBJECT = ("each message must be a JSON object such as {{\"type\": \"step\", \"data\": {{\"message\": "
                 "\"left\"}}}} (type: " + MESSAGE_TYPES + "); this one is a JSON {kind}")


def _not_an_object(text: str) -> str | None:
    """Why a WebSocket message of JSON that is not an object cannot be read, else None (an object, or
    text that is not JSON at all: openenv-core answers that itself)."""
    if text.lstrip()[:1] == "{":
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return NOT_AN_OBJECT.format(kind=json_kind(value))


class SocketGuard:
    """ASGI middleware for WebSocket connections.

    - A session whose client left first ends quietly: openenv-core closes the socket when a session
      ends, after the client has closed it; the ``WebSocketDisconnect`` that raises would be logged
      with a traceback for every finished game.
    - :data:`_CLOSER` holds, for the connection's task, a coroutine that closes the socket (with a
      reason) and drops whatever the session sends after: :class:`SessionServer` calls it when the
      idle-session reaper ends the session.
    - A message of JSON that is not an object gets an error naming the message types, and the
      session goes on (openenv-core would end it on ``'list' object has no attribute 'get'``).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        closed = False

        async def guarded_send(message: dict[str, Any]) -> None:
            if not closed:
                await send(message)

        async def close(reason: str) -> None:
            nonlocal closed
            if not closed:
                closed = True
                with contextlib.suppress(Exception):  # the connection may be gone already
                    await send({"type": "websocket.close", "code": 1001, "reason": reason})

        async def checked_receive() -> dict[str, Any]:
            while True:
                message: dict[str, Any] = await receive()
                text = message.get("text") if message["type"] == "websocket.receive" else None
                why = _not_an_object(text) if isinstance(text, str) else None
                if why is None:
                    return message
                await guarded_send({"type": "websocket.send", "text": json.dumps(
                    {"type": "error", "data": {"message": why, "code": "INVALID_JSON"}})})

        token = _CLOSER.set(close)
        try:
            with contextlib.suppress(WebSocketDisconnect):
                await self.app(scope, checked_receive, guarded_send)
        finally:
            _CLOSER.reset(token)


class SessionServer(HTTPEnvServer):
    """openenv-core's server, whose idle-session reaper also closes the reaped session's WebSocket:
    without it the socket stays open and plays on against the closed game, and ``max_sessions``
    bounds nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._closers: dict[str, Callable[[str], Awaitable[None]]] = {}

    async def _create_session(self) -> tuple[str, Any]:
        session_id, env = await super()._create_session()
        closer = _CLOSER.get()
        if closer is not None:  # a WebSocket session (the HTTP MCP route makes others)
            self._closers[session_id] = closer
        return session_id, env

    async def _destroy_session(self, session_id: str) -> None:
        closer = self._closers.pop(session_id, None)
        await super()._destroy_session(session_id)
        if closer is not None and _CLOSER.get() is not closer:  # ended from outside its socket: reaped
            ttl = self._concurrency_config.session_timeout
            await closer(f"the session was idle for over {ttl:g} s and ended; connect again for a new game")


async def _stateless_step() -> JSONResponse:
    return JSONResponse(status_code=400, content={"error": (
        "a game lives in a WebSocket session: connect to /ws and send reset, then step messages "
        "(Game2048Client does); POST /step has no game to play")})


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
    server = SessionServer(
        functools.partial(Game2048Environment, **options), Game2048Action, Game2048Observation,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=limits.max_sessions,
                                             session_timeout=limits.session_ttl))
    app.add_api_route("/step", _stateless_step, methods=["POST"], include_in_schema=False)  # before openenv's
    server.register_routes(app)
    app.state.env_server, app.state.limits = server, limits
    app.add_middleware(SocketGuard)
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
