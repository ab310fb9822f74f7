"""``ai2048 serve``: a small FastAPI app that serves the offline web page and a JSON game API.

Trust boundary: the server runs agents for whoever can reach it, so a request can only *choose*
among what the operator made available — the agents in :data:`ai2048.ui.limits.WEB_AGENTS` with
settings inside their ranges, and trained networks by model name (``"model:NAME"``: a run
directory in ``--models DIR`` or a shipped network), never by path. Requests must come from this
machine's loopback names (or the ``--host`` the server was started with) and from the page itself:
another Host header is answered 421 (DNS rebinding), another Origin 403 (cross-site requests), an
API POST that is not ``application/json`` 415. Agent work runs on a small thread pool with a
bounded queue (503 when full) and a time budget per request; games, cached agents, request
bodies and JSON nesting are bounded, and idle games expire.

API (JSON in, JSON out; a game's state is ``{"id", "board" [4][4] tile values, "score", "moves",
"max_tile", "over", "legal", "can_undo", "seed", "agent", "agent_config"}``):

- ``GET  /api/agents`` -> ``{"agents": [{"name", "description", "model", "config", "ranges"}], "default"}``
- ``POST /api/games`` ``{"seed"?: int, "agent"?: str, "config"?: {}}`` -> state
- ``GET  /api/games/{id}`` -> state
- ``POST /api/games/{id}/move`` ``{"action": "up"|"right"|"down"|"left"|0..3}`` -> state (409 if illegal)
- ``POST /api/games/{id}/undo`` -> state (409 if there is nothing to undo)
- ``POST /api/games/{id}/hint`` ``{"agent"?: str, "config"?: {}}`` -> state + ``"hint"``
- ``POST /api/games/{id}/ai`` ``{"agent"?: str, "config"?: {}, "steps"?: 1..100}`` -> state + ``"hint"``
  (+ ``"stopped"`` when the time budget ended the steps early)
- ``GET  /api/games/{id}/record`` -> the game record (replay it with ``ai2048 replay``)

FastAPI comes with the ``ui`` extra; ``ai2048 serve`` checks for it before importing this module.
"""

from __future__ import annotations

import asyncio
import json
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from ai2048.ui.guard import MAX_BODY_BYTES, Guard, allowed_hosts
from ai2048.ui.limits import (
    MODEL_PREFIX,
    WEB_AGENTS,
    Model,
    Setting,
    build,
    check_settings,
    listing,
    scan_models,
)
from ai2048.ui.session import Hint, PlaySession

MAX_STEPS = 100
MAX_UNDO = 200  # moves a web game can take back: each holds a copy of the game (~2 KiB); 256 games
# of 10,000 moves kept every one (5 GiB)
MAX_JSON_DEPTH = 16
MAX_NUMBER_CHARS = 40


@dataclass
class Limits:
    """The server's caps (``ai2048 serve`` options; docs/ui.md explains each)."""

    max_games: int = 256
    game_ttl: float = 3600.0  # seconds a game may stay untouched before it is dropped
    max_agents: int = 8  # built agents kept (least recently used dropped)
    workers: int = 2  # threads that run agents
    max_queue: int = 8  # agent requests running or waiting; more get 503
    budget: float = 2.0  # seconds of agent work per request: AI steps stop after it
    max_connections: int = 64  # open connections; more are closed at once (uvicorn: ai2048.ui.protocol)
    request_timeout: float = 10.0  # seconds a client may take to send a request's head, and its body

    def __post_init__(self) -> None:
        for key in ("max_games", "max_agents", "workers", "max_queue", "max_connections"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{key} must be a whole number >= 1, got {v!r}")
        for key in ("game_ttl", "budget", "request_timeout"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                raise ValueError(f"{key} must be a positive number of seconds, got {v!r}")


class ApiError(Exception):
    """An error answered with ``status`` and a message for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _check_fields(body: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(body) - allowed)
    if unknown:
        names = ", ".join(repr(k)[1:-1][:40] for k in unknown[:5])
        raise ApiError(400, f"unknown field(s) {names}; allowed: {', '.join(sorted(allowed)) or 'none'}")


def _seed(v: Any) -> int | None:
    if v is None or v == "":
        return None
    if isinstance(v, str):
        if len(v) > 30:
            raise ApiError(400, "'seed' must be a whole number in 0..2**64-1, got a string of more than "
                                "30 characters")
        try:
            v = int(v.strip())
        except ValueError:
            raise ApiError(400, f"'seed' must be a whole number, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 64:
        raise ApiError(400, f"'seed' must be a whole number in 0..2**64-1, got {str(v)[:40]!r}")
    return v


def json_depth(raw: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == 0x5C:  # backslash
                escaped = True
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif ch in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _number(text: str, kind: type) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        raise ApiError(400, f"request body holds a number of {len(text)} characters; numbers may have at "
                       f"most {MAX_NUMBER_CHARS}")
    value = kind(text)
    if kind is float and not math.isfinite(value):
        raise ApiError(400, f"request body holds {text}, which is not a finite number")
    return value


def _constant(name: str) -> Any:
    raise ApiError(400, f"request body holds {name}, which is not JSON (NaN and Infinity are not numbers)")


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or ApiError 400: bad JSON, too deep, huge numbers, NaN, non-object."""
    if not raw.strip():
        return {}
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ApiError(400, f"request body is nested {depth} deep; at most {MAX_JSON_DEPTH} levels are "
                            "accepted")
    try:
        text = raw.decode("utf-8")
        body = json.loads(text, parse_int=lambda s: _number(s, int), parse_float=lambda s: _number(s, float),
                          parse_constant=_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"request body must be a JSON object, got {type(body).__name__}")
    return body


class GameStore:
    """Games by id: least recently used dropped beyond ``max_games``, idle ones after ``ttl`` seconds;
    one lock per game."""

    def __init__(self, max_games: int = 256, ttl: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_games = max_games
        self.ttl = ttl
        self.clock = clock
        self._games: OrderedDict[str, tuple[PlaySession, threading.Lock, float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def _expire(self) -> None:
        now = self.clock()
        while self._games:
            gid, (_, _, seen) = next(iter(self._games.items()))
            if now - seen <= self.ttl:
                break
            del self._games[gid]

    def add(self, session: PlaySession) -> str:
        gid = secrets.token_hex(8)
        with self._lock:
            self._expire()
            self._games[gid] = (session, threading.Lock(), self.clock())
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)
        return gid

    def get(self, gid: str) -> tuple[PlaySession, threading.Lock]:
        with self._lock:
            self._expire()
            if gid not in self._games:
                raise ApiError(404, f"no game {gid[:40]!r} on this server (it may have expired); "
                                    "start a new game")
            s, lock, _ = self._games.pop(gid)
            self._games[gid] = (s, lock, self.clock())
            return s, lock


class AgentCache:
    """Built agents by (name, settings), shared by every game; the least recently used is dropped
    beyond ``max_agents``. Each agent has a lock: one decision at a time."""

    def __init__(self, max_agents: int, models: dict[str, Model]) -> None:
        self.max_agents = max_agents
        self.models = models
        self._agents: OrderedDict[str, tuple[Any, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._agents)

    def get(self, agent: str, config: dict[str, Any]) -> tuple[Any, threading.Lock]:
        """The agent for checked settings, built on first use (in the calling worker thread)."""
        key = agent + json.dumps(config, sort_keys=True)
        with self._lock:
            if key in self._agents:
                self._agents.move_to_end(key)
                return self._agents[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:  # two requests for a new agent build it once
            with self._lock:
                if key in self._agents:
                    return self._agents[key]
            try:
                built = build(agent, config, self.models)
            except BaseException:  # a failed build leaves no entry behind (settings are many: they pile up)
                with self._lock:
                    self._building.pop(key, None)
                raise
            entry = (built, threading.Lock())
            with self._lock:
                self._agents[key] = entry
                self._building.pop(key, None)
                while len(self._agents) > self.max_agents:
                    self._agents.popitem(last=False)
            return entry



def create_app(default_agent: str = "expectimax", default_config: dict[str, Any] | None = None,
               max_games: int = 256, *, models_dir: str | Path | None = None, host: str | None = None,
               allow_hosts: tuple[str, ...] = (), limits: Limits | None = None,
               extra_agents: dict[str, dict[str, Setting]] | None = None) -> Any:
    """The FastAPI application (``uvicorn`` serves it; tests use ``TestClient``).

    ``models_dir``: run directories offered as ``model:NAME``; ``host``: the address served (its name
    is accepted as a Host header besides loopback); ``extra_agents``: more agents offered, with the
    ranges of their settings (tests use it).
    """
    limits = limits or Limits(max_games=max_games)
    models = scan_models(models_dir)
    try:
        default_agent, default_config = check_settings(default_agent, default_config or {}, models,
                                                       extra_agents)
    except ValueError as e:
        raise ValueError(f"default agent: {e}") from None
    hosts = allowed_hosts(host, allow_hosts)
    app = FastAPI(title="ai2048", docs_url=None, redoc_url=None, openapi_url=None)
    store = GameStore(limits.max_games, limits.game_ttl)
    cache = AgentCache(limits.max_agents, models)
    pool = ThreadPoolExecutor(max_workers=limits.workers, thread_name_prefix="ai2048-agent")
    slots = threading.BoundedSemaphore(limits.max_queue)
    app.state.store, app.state.cache, app.state.limits, app.state.models = store, cache, limits, models
    app.state.default = (default_agent, default_config)
    app.state.extra_agents = extra_agents
    app.state.agent_rules = {**WEB_AGENTS, **(extra_agents or {})}
    listed: list[list[dict[str, Any]]] = []  # GET /api/agents, computed once (it imports every agent)

    def agents_listing() -> list[dict[str, Any]]:
        if not listed:
            listed.append(listing(models, extra_agents))
        return listed[0]

    app.state.listing = agents_listing  # ai2048.ui.warmup computes it before the server listens
    inflight = [0]  # agent requests running or waiting
    counting = threading.Lock()
    app.state.inflight = lambda: inflight[0]
    static = resources.files("ai2048.ui") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.exception_handler(ApiError)
    async def api_error(_: Request, e: ApiError) -> JSONResponse:
        return JSONResponse({"error": e.message}, status_code=e.status)

    @app.exception_handler(Exception)
    async def internal_error(_: Request, e: Exception) -> JSONResponse:
        return JSONResponse({"error": f"internal error ({type(e).__name__}); the game is unchanged"},
                            status_code=500)

    app.add_middleware(Guard, hosts=hosts, body_timeout=limits.request_timeout)

    async def read_body(request: Request) -> dict[str, Any]:
        return parse_body(await request.body())

    def respond(gid: str, s: PlaySession, hint: Hint | None = None) -> dict[str, Any]:
        out = {"id": gid, **s.state()}
        if hint is not None:
            out["hint"] = hint.to_dict()
        return out

    def choice(s: PlaySession | None, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The checked (agent, settings) a request asks for (the game's own when it names none)."""
        if "agent" not in body and "config" not in body:
            return (s.agent_name, s.agent_config) if s is not None else (default_agent, default_config)
        base = s.agent_name if s is not None else default_agent
        try:
            return check_settings(body.get("agent", base), body.get("config", {}), models, extra_agents)
        except ValueError as e:
            raise ApiError(400, str(e)) from None

    def get_agent(agent: str, config: dict[str, Any]) -> tuple[Any, threading.Lock]:
        try:
            return cache.get(agent, config)
        except (ValueError, TypeError) as e:
            raise ApiError(400, f"cannot build agent {agent!r}: {e}") from None
        except (FileNotFoundError, ImportError) as e:
            raise ApiError(400, f"cannot build agent {agent!r}: {e}") from None

    async def off_loop(fn: Callable[[], Any], on_cancel: Callable[[], None] | None = None) -> Any:
        """Run ``fn`` on the agent pool; 503 when ``max_queue`` requests are running or waiting.

        The slot is given back when the work ends, not when the client stops waiting, so clients
        that hang up cannot pile work up; work cancelled before it started calls ``on_cancel``.
        """
        if not slots.acquire(blocking=False):
            raise ApiError(503, f"the server is busy ({limits.max_queue} agent requests running or waiting); "
                                "try again")
        with counting:
            inflight[0] += 1

        def done(f: Any) -> None:
            with counting:
                inflight[0] -= 1
            slots.release()
            if f.cancelled() and on_cancel is not None:
                on_cancel()

        future = pool.submit(fn)
        future.add_done_callback(done)
        return await asyncio.wrap_future(future)

    def locked(lock: threading.Lock) -> None:
        if not lock.acquire(blocking=False):
            raise ApiError(409, "this game is busy (a hint or AI move is running); "
                                "try again when it finishes")

    @app.get("/", response_class=HTMLResponse)
    def index() -> str:
        return (static / "index.html").read_text()

    @app.get("/api/agents")
    def agents() -> dict[str, Any]:
        return {"agents": agents_listing(), "default": default_agent}

    @app.post("/api/games")
    async def new_game(request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"seed", "agent", "config"})
        seed = _seed(body.get("seed"))
        agent, config = choice(None, body)
        if agent != default_agent or config != default_config:
            await off_loop(lambda: get_agent(agent, config))  # a bad model or setting fails now, clearly
        s = PlaySession(seed=seed, agent=agent, agent_config=config, max_undo=MAX_UNDO)
        return respond(store.add(s), s)

    @app.get("/api/games/{gid}")
    def get_game(gid: str) -> dict[str, Any]:
        s, lock = store.get(gid)
        locked(lock)
        try:
            return respond(gid, s)
        finally:
            lock.release()

    @app.post("/api/games/{gid}/move")
    async def move(gid: str, request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"action"})
        if "action" not in body:
            raise ApiError(400, "missing 'action': one of up, right, down, left (or 0..3)")
        s, lock = store.get(gid)
        locked(lock)
        try:
            try:
                moved = s.move(body["action"])
            except (ValueError, TypeError) as e:
                raise ApiError(400, str(e)[:200]) from None
            if not moved:
                legal = ", ".join(s.state()["legal"]) or "none: the game is over"
                raise ApiError(409, f"{body['action']} does not move any tile; legal moves: {legal}")
            return respond(gid, s)
        finally:
            lock.release()

    @app.post("/api/games/{gid}/undo")
    async def undo(gid: str, request: Request) -> dict[str, Any]:
        _check_fields(await read_body(request), set())
        s, lock = store.get(gid)
        locked(lock)
        try:
            if not s.undo():
                raise ApiError(409, "nothing to undo")
            return respond(gid, s)
        finally:
            lock.release()

    def agent_work(gid: str, s: PlaySession, lock: threading.Lock, agent: str, config: dict[str, Any],
                   steps: int) -> dict[str, Any]:
        """Hint (``steps`` 0) or up to ``steps`` AI moves within the time budget; runs on the pool."""
        t0 = time.monotonic()
        try:
            built, agent_lock = get_agent(agent, config)
            s.agent_name, s.agent_config = agent, config
            hint, stopped = None, None
            with agent_lock:
                try:
                    if steps == 0:
                        hint = s.hint(built)
                    for i in range(steps):
                        hint = s.ai_move(built)
                        if s.is_over:
                            break
                        if i + 1 < steps and time.monotonic() - t0 > limits.budget:
                            stopped = (f"time budget of {limits.budget:g} s per request reached after "
                                       f"{i + 1} move(s)")
                            break
                except (ValueError, TypeError) as e:
                    raise ApiError(400, f"agent {agent!r} failed: {e}") from None
            out = respond(gid, s, hint)
            if stopped:
                out["stopped"] = stopped
            return out
        finally:
            lock.release()

    async def agent_call(gid: str, body: dict[str, Any], steps: int) -> dict[str, Any]:
        s, lock = store.get(gid)
        agent, config = choice(s, body)
        locked(lock)
        try:
            def work() -> dict[str, Any]:
                return agent_work(gid, s, lock, agent, config, steps)

            return await off_loop(work, on_cancel=lock.release)  # type: ignore[no-any-return]
        except ApiError as e:
            if e.status == 503:
                lock.release()
            raise

    @app.post("/api/games/{gid}/hint")
    async def hint(gid: str, request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"agent", "config"})
        return await agent_call(gid, body, 0)

    @app.post("/api/games/{gid}/ai")
    async def ai(gid: str, request: Request) -> dict[str, Any]:
        body = await read_body(request)
        _check_fields(body, {"agent", "config", "steps"})
        steps = body.get("steps", 1)
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
            raise ApiError(400, f"'steps' must be a whole number in 1..{MAX_STEPS}, got {str(steps)[:40]}")
        return await agent_call(gid, body, steps)

    @app.get("/api/games/{gid}/record")
    def record(gid: str) -> dict[str, Any]:
        s, lock = store.get(gid)
        locked(lock)
        try:
            return s.record("serve").to_dict()
        finally:
            lock.release()

    return app


__all__ = ["MAX_BODY_BYTES", "MODEL_PREFIX", "AgentCache", "ApiError", "GameStore", "Guard", "Limits",
           "allowed_hosts", "create_app", "parse_body"]
