"""``ai2048 serve``: a small FastAPI app that serves the offline web page and a JSON game API.

Every game lives in server memory under a random id (at most ``max_games``; the least recently used
is dropped). Every request is validated: a malformed or oversized body, an unknown action, game or
agent, or an illegal move is answered with a 4xx and ``{"error": "..."}``, and the server stays up.

API (JSON in, JSON out; a game's state is ``{"id", "board" [4][4] tile values, "score", "moves",
"max_tile", "over", "legal", "can_undo", "seed", "agent", "agent_config"}``):

- ``GET  /api/agents`` -> ``{"agents": [{"name", "description", "config": {key: default}}]}``
- ``POST /api/games`` ``{"seed"?: int, "agent"?: str, "config"?: {}}`` -> state
- ``GET  /api/games/{id}`` -> state
- ``POST /api/games/{id}/move`` ``{"action": "up"|"right"|"down"|"left"|0..3}`` -> state (409 if illegal)
- ``POST /api/games/{id}/undo`` -> state (409 if there is nothing to undo)
- ``POST /api/games/{id}/hint`` ``{"agent"?: str, "config"?: {}}`` -> state + ``"hint"``
- ``POST /api/games/{id}/ai`` ``{"agent"?: str, "config"?: {}, "steps"?: 1..100}`` -> state + ``"hint"``
- ``GET  /api/games/{id}/record`` -> the game record (replay it with ``ai2048 replay``)

FastAPI comes with the ``ui`` extra; ``ai2048 serve`` checks for it before importing this module.
"""

from __future__ import annotations

import inspect
import json
import secrets
import threading
from collections import OrderedDict
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from ai2048.agents import available, config_keys
from ai2048.ui.session import Hint, PlaySession

MAX_BODY_BYTES = 16 * 1024
MAX_STEPS = 100


class ApiError(Exception):
    """An error answered with ``status`` and a message for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _jsonable(v: Any) -> Any:
    if v is inspect.Parameter.empty:
        return None
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)
    return v


def _check_fields(body: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed)) or 'none'}")


def _agent_choice(body: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    agent = body.get("agent")
    config = body.get("config", {})
    if agent is not None and not isinstance(agent, str):
        raise ApiError(400, f"'agent' must be an agent name (string), got {type(agent).__name__}")
    if not isinstance(config, dict):
        raise ApiError(400, f"'config' must be an object of agent settings, got {type(config).__name__}")
    return agent, config


def _seed(v: Any) -> int | None:
    if v is None or v == "":
        return None
    if isinstance(v, str):
        try:
            v = int(v.strip())
        except ValueError:
            raise ApiError(400, f"'seed' must be a whole number, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 64:
        raise ApiError(400, f"'seed' must be a whole number in 0..2**64-1, got {v!r}")
    return v


class GameStore:
    """Games by id, least recently used dropped beyond ``max_games``; one lock per game."""

    def __init__(self, max_games: int = 256) -> None:
        self.max_games = max_games
        self._games: OrderedDict[str, tuple[PlaySession, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session: PlaySession) -> str:
        gid = secrets.token_hex(8)
        with self._lock:
            self._games[gid] = (session, threading.Lock())
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)
        return gid

    def get(self, gid: str) -> tuple[PlaySession, threading.Lock]:
        with self._lock:
            if gid not in self._games:
                raise ApiError(404, f"no game {gid!r} on this server (it may have expired); start a new game")
            self._games.move_to_end(gid)
            return self._games[gid]


def create_app(default_agent: str = "expectimax", default_config: dict[str, Any] | None = None,
               max_games: int = 256) -> Any:
    """The FastAPI application (``uvicorn`` serves it; tests use ``TestClient``)."""
    app = FastAPI(title="ai2048", docs_url=None, redoc_url=None, openapi_url=None)
    store = GameStore(max_games)
    static = resources.files("ai2048.ui") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.exception_handler(ApiError)
    async def api_error(_: Request, e: ApiError) -> JSONResponse:
        return JSONResponse({"error": e.message}, status_code=e.status)

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Any) -> Response:
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY_BYTES):
            return JSONResponse({"error": f"request body too large: at most {MAX_BODY_BYTES} bytes"}, status_code=413)
        if request.method == "POST":
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    return JSONResponse(
                        {"error": f"request body too large: at most {MAX_BODY_BYTES} bytes"}, status_code=413
                    )
            request._body = body  # let the endpoint read the body we consumed
        return await call_next(request)  # type: ignore[no-any-return]

    async def read_body(request: Request) -> dict[str, Any]:
        raw = await request.body()
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"request body is not valid JSON: {e}") from None
        if not isinstance(body, dict):
            raise ApiError(400, f"request body must be a JSON object, got {type(body).__name__}")
        return body

    def respond(gid: str, s: PlaySession, hint: Hint | None = None) -> dict[str, Any]:
        out = {"id": gid, **s.state()}
        if hint is not None:
            out["hint"] = hint.to_dict()
        return out

    def with_agent(s: PlaySession, agent: str | None, config: dict[str, Any]) -> None:
        if agent is None and not config:
            return
        try:
            s.set_agent(agent or s.agent_name, config)
        except (ValueError, TypeError) as e:
            raise ApiError(400, str(e)) from None
        except (FileNotFoundError, ImportError) as e:
            raise ApiError(400, f"cannot build agent {agent!r}: {e}") from None

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return (static / "index.html").read_text()

    @app.get("/api/agents")
    def agents() -> dict[str, Any]:
        out = []
        for name, desc in available().items():
            try:
                keys = {k: _jsonable(v) for k, v in config_keys(name).items()}
            except (ImportError, AttributeError):
                continue  # an agent whose optional dependency (torch) is missing
            out.append({"name": name, "description": desc, "config": keys})
        return {"agents": out, "default": default_agent}

    @app.post("/api/games")
    async def new_game(request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"seed", "agent", "config"})
        agent, config = _agent_choice(body)
        s = PlaySession(seed=_seed(body.get("seed")), agent=default_agent, agent_config=default_config)
        if agent is not None or config:
            with_agent(s, agent, config)
        return respond(store.add(s), s)

    @app.get("/api/games/{gid}")
    def get_game(gid: str) -> dict[str, Any]:
        s, _ = store.get(gid)
        return respond(gid, s)

    @app.post("/api/games/{gid}/move")
    async def move(gid: str, request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"action"})
        if "action" not in body:
            raise ApiError(400, "missing 'action': one of up, right, down, left (or 0..3)")
        s, lock = store.get(gid)
        with lock:
            try:
                moved = s.move(body["action"])
            except (ValueError, TypeError) as e:
                raise ApiError(400, str(e)) from None
            if not moved:
                legal = ", ".join(s.state()["legal"]) or "none: the game is over"
                raise ApiError(409, f"{body['action']} does not move any tile; legal moves: {legal}")
            return respond(gid, s)

    @app.post("/api/games/{gid}/undo")
    async def undo(gid: str, request: Request) -> dict[str, Any]:
        _check_fields(await read_body(request), set())
        s, lock = store.get(gid)
        with lock:
            if not s.undo():
                raise ApiError(409, "nothing to undo")
            return respond(gid, s)

    def agent_call(gid: str, body: dict[str, Any], steps: int) -> dict[str, Any]:
        agent, config = _agent_choice(body)
        s, lock = store.get(gid)
        with lock:
            if agent is not None or "config" in body:
                with_agent(s, agent, config)
            hint = None
            try:
                if steps == 0:
                    hint = s.hint()
                for _ in range(steps):
                    hint = s.ai_move()
                    if s.is_over:
                        break
            except (ValueError, TypeError) as e:
                raise ApiError(400, f"agent {s.agent_name!r} failed: {e}") from None
            return respond(gid, s, hint)

    @app.post("/api/games/{gid}/hint")
    async def hint(gid: str, request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"agent", "config"})
        return agent_call(gid, body, 0)

    @app.post("/api/games/{gid}/ai")
    async def ai(gid: str, request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"agent", "config", "steps"})
        steps = body.get("steps", 1)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
            raise ApiError(400, f"'steps' must be a whole number in 1..{MAX_STEPS}, got {steps!r}")
        return agent_call(gid, body, steps)

    @app.get("/api/games/{gid}/record")
    def record(gid: str) -> dict[str, Any]:
        s, lock = store.get(gid)
        with lock:
            return s.record("serve").to_dict()

    return app
