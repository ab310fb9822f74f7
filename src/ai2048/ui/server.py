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

API (JSON in, JSON out; a game's state is ``{"id", "board" [4][4] exact tile values (up to 131072),
"score", "moves", "max_tile", "over", "legal", "can_undo", "seed", "agent", "agent_config"}``):

- ``GET  /api/agents`` -> ``{"agents": [{"name", "description", "model", "config", "ranges"}], "default"}``
- ``POST /api/games`` ``{"seed"?: int, "agent"?: str, "config"?: {}}`` -> state
- ``GET  /api/games/{id}`` -> state
- ``POST /api/games/{id}/move`` ``{"action": "up"|"right"|"down"|"left"|0..3}`` -> state (409 if illegal)
- ``POST /api/games/{id}/undo`` -> state (409 if there is nothing to undo)
- ``POST /api/games/{id}/hint`` ``{"agent"?: str, "config"?: {}}`` -> state + ``"hint"``
- ``POST /api/games/{id}/ai`` ``{"agent"?: str, "config"?: {}, "steps"?: 1..100}`` -> state + ``"hint"``
  (+ ``"stopped"`` when the time budget ended the steps early)
- ``GET  /api/games/{id}/record`` -> the game record (replay it with ``ai2048 replay``)

The app is put together here from its parts: :mod:`ai2048.ui.guard` (Host, Origin, body bounds),
:mod:`ai2048.ui.bodies` (request bodies), :mod:`ai2048.ui.state` (games, agents, the agent pool),
:mod:`ai2048.ui.routes` (one function per route) and :mod:`ai2048.ui.limits` (what may be asked for).
FastAPI comes with the ``ui`` extra; ``ai2048 serve`` checks for it before importing this module.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from ai2048.checks import Option
from ai2048.ui import routes
from ai2048.ui.guard import Guard, allowed_hosts
from ai2048.ui.limits import scan_models
from ai2048.ui.state import ApiError, Limits, WebState, default_choice


def create_app(default_agent: str = "expectimax", default_config: dict[str, Any] | None = None,
               max_games: int = 256, *, models_dir: str | Path | None = None, host: str | None = None,
               allow_hosts: tuple[str, ...] = (), limits: Limits | None = None,
               extra_agents: dict[str, dict[str, Option]] | None = None) -> FastAPI:
    """The FastAPI application (``uvicorn`` serves it; tests use ``TestClient``).

    ``models_dir``: run directories offered as ``model:NAME``; ``host``: the address served (its name
    is accepted as a Host header besides loopback); ``extra_agents``: more agents offered, with the
    ranges of their settings (tests use it). The default agent and its settings are checked as a
    request's are (ValueError ``"default agent: ..."``). ``app.state.web`` holds the games and agents.
    """
    limits = limits or Limits(max_games=max_games)
    models = scan_models(models_dir)
    default = default_choice(default_agent, default_config or {}, models, extra_agents)
    app = FastAPI(title="ai2048", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.web = WebState(limits, models, default, extra_agents)
    app.include_router(routes.router)
    app.mount("/static", StaticFiles(directory=str(routes.STATIC)), name="static")
    app.add_exception_handler(ApiError, routes.api_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, routes.internal_error)
    app.add_middleware(Guard, hosts=allowed_hosts(host, allow_hosts), body_timeout=limits.request_timeout)
    return app


__all__ = ["create_app"]
