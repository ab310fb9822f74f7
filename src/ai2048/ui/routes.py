"""The web app's routes, one plain function each (:data:`router`; the API is listed in
:mod:`ai2048.ui.server`).

Each route takes its body as a checked model (:mod:`ai2048.ui.bodies`) and the app's
:class:`~ai2048.ui.state.WebState` through a dependency; it holds its game for as long as it uses
it (``with game.hold() as session``), agent work included, so two requests never play one game at
once. Errors are :class:`~ai2048.ui.state.ApiError`, answered as ``{"error": message}``.
"""

from __future__ import annotations

import time
from importlib import resources
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse

from ai2048.ui.bodies import AgentChoice, AiSteps, Empty, Move, NewGame, read
from ai2048.ui.session import Hint, PlaySession
from ai2048.ui.state import ApiError, WebState

MAX_UNDO = 200  # moves a web game can take back: each holds a copy of the game (~2 KiB); 256 games
# of 10,000 moves kept every one (5 GiB)
STATIC = resources.files("ai2048.ui") / "static"


async def web_state(request: Request) -> WebState:
    """The app's shared state (``app.state.web``, set by :func:`ai2048.ui.server.create_app`)."""
    return request.app.state.web  # type: ignore[no-any-return]


Web = Annotated[WebState, Depends(web_state)]
NewGameBody = Annotated[NewGame, Depends(read(NewGame))]
MoveBody = Annotated[Move, Depends(read(Move))]
EmptyBody = Annotated[Empty, Depends(read(Empty))]
HintBody = Annotated[AgentChoice, Depends(read(AgentChoice))]
AiBody = Annotated[AiSteps, Depends(read(AiSteps))]
router = APIRouter()


def respond(gid: str, s: PlaySession, hint: Hint | None = None) -> dict[str, Any]:
    """A game's state as the API answers it (with the hint, when there is one)."""
    out = {"id": gid, **s.state()}
    if hint is not None:
        out["hint"] = hint.to_dict()
    return out


def choice(web: WebState, body: AgentChoice, s: PlaySession | None) -> tuple[str, dict[str, Any]]:
    """The checked (agent, settings) a request asks for: the game's own (or the server's default for
    a new game) when it names none; settings alone are for the game's agent."""
    if not body.named():
        return (s.agent_name, s.agent_config) if s is not None else web.default
    base = s.agent_name if s is not None else web.default[0]
    fields = body.model_fields_set
    return web.check(body.agent if "agent" in fields else base, body.config if "config" in fields else {})


@router.get("/", response_class=HTMLResponse)
def index() -> str:
    return (STATIC / "index.html").read_text()


@router.get("/api/agents")
def agents(web: Web) -> dict[str, Any]:
    return {"agents": web.listing(), "default": web.default[0]}


@router.post("/api/games")
async def new_game(web: Web, body: NewGameBody) -> dict[str, Any]:
    agent, config = choice(web, body, None)
    if (agent, config) != web.default:
        await web.off_loop(lambda: web.agent(agent, config))  # a bad model or setting fails now, clearly
    s = PlaySession(seed=body.seed, agent=agent, agent_config=config, max_undo=MAX_UNDO)
    return respond(web.store.add(s), s)


@router.get("/api/games/{gid}")
def get_game(gid: str, web: Web) -> dict[str, Any]:
    with web.store.get(gid).hold() as s:
        return respond(gid, s)


@router.post("/api/games/{gid}/move")
async def move(gid: str, web: Web, body: MoveBody) -> dict[str, Any]:
    with web.store.get(gid).hold() as s:
        if not s.move(body.action):
            legal = ", ".join(s.state()["legal"]) or "none: the game is over"
            raise ApiError(409, f"{body.action.name.lower()} does not move any tile; legal moves: {legal}")
        return respond(gid, s)


@router.post("/api/games/{gid}/undo")
async def undo(gid: str, web: Web, _: EmptyBody) -> dict[str, Any]:
    with web.store.get(gid).hold() as s:
        if not s.undo():
            raise ApiError(409, "nothing to undo")
        return respond(gid, s)


@router.post("/api/games/{gid}/hint")
async def hint(gid: str, web: Web, body: HintBody) -> dict[str, Any]:
    return await agent_turn(web, gid, body, steps=0)


@router.post("/api/games/{gid}/ai")
async def ai(gid: str, web: Web, body: AiBody) -> dict[str, Any]:
    return await agent_turn(web, gid, body, steps=body.steps)


@router.get("/api/games/{gid}/record")
def record(gid: str, web: Web) -> dict[str, Any]:
    with web.store.get(gid).hold() as s:
        return s.record("serve").to_dict()


async def agent_turn(web: WebState, gid: str, body: AgentChoice, steps: int) -> dict[str, Any]:
    """A hint (``steps`` 0) or up to ``steps`` AI moves on the agent pool, the game held throughout."""
    game = web.store.get(gid)
    agent, config = choice(web, body, game.session)
    with game.hold() as s:
        return await web.off_loop(lambda: play(web, gid, s, agent, config, steps))


def play(web: WebState, gid: str, s: PlaySession, agent: str, config: dict[str, Any],
         steps: int) -> dict[str, Any]:
    """:func:`agent_turn`'s work, on a pool thread: AI steps stop when the time budget is spent."""
    t0 = time.monotonic()
    built, agent_lock = web.agent(agent, config)
    s.agent_name, s.agent_config = agent, config
    hint, stopped = None, None
    budget = web.limits.budget
    with agent_lock:
        try:
            if steps == 0:
                hint = s.hint(built)
            for i in range(steps):
                hint = s.ai_move(built)
                if s.is_over:
                    break
                if i + 1 < steps and time.monotonic() - t0 > budget:
                    stopped = f"time budget of {budget:g} s per request reached after {i + 1} move(s)"
                    break
        except (ValueError, TypeError) as e:
            raise ApiError(400, f"agent {agent!r} failed: {e}") from None
    out = respond(gid, s, hint)
    if stopped:
        out["stopped"] = stopped
    return out


async def api_error(_: Request, e: ApiError) -> JSONResponse:
    """An :class:`ApiError` as ``{"error": message}`` with its status."""
    return JSONResponse({"error": e.message}, status_code=e.status)


async def internal_error(_: Request, e: Exception) -> JSONResponse:
    """Anything else: a 500 that names the exception's type and shows no traceback."""
    return JSONResponse({"error": f"internal error ({type(e).__name__}); the game is unchanged"},
                        status_code=500)


__all__ = ["MAX_UNDO", "STATIC", "api_error", "internal_error", "router", "web_state"]
