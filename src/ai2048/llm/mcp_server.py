"""``ai2048 mcp``: 2048 as MCP tools (the ``mcp`` SDK), so a chat assistant can play, over stdio.

Tools: ``new_game`` (a seed is optional), ``read_board``, ``move`` (the move as text, read like the
text env reads an answer: ``"left"``, ``"Move: up"``, ``{"move": "down"}``), ``hint`` (what an ai2048
agent would play here, and its value of each move) and ``agents`` (the agents and shipped networks a
hint may name). Every result carries the board as text (the text env's observation) and as a grid.

A hint runs an agent for whoever drives the server, so it is bounded the way the web app bounds
one: only the web's agents with settings inside their ranges, trained networks by model name
(never a path), built agents kept in a small cache (:mod:`ai2048.ui.limits`,
:class:`ai2048.ui.state.AgentCache`). Games are kept in the web app's bounded store (least
recently used dropped beyond ``max_games``, idle ones after ``game_ttl`` seconds). A mistake (an
unknown game, an unreadable or illegal move, a setting out of range) is a tool error whose text
says what to do, which the model reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from ai2048 import checks
from ai2048.checks import check_fields, setting
from ai2048.envs.text import INSTRUCTIONS, describe_board
from ai2048.envs.text_actions import AnswerError, parse_move
from ai2048.rules import ACTION_NAMES
from ai2048.ui.limits import check_settings, default_agent, listing, scan_models
from ai2048.ui.session import PlaySession
from ai2048.ui.state import AgentCache, ApiError, GameStore

GUIDE = (INSTRUCTIONS + " Start with new_game, then call move with the game_id and your move until the "
         "game is over; read_board shows the board again, hint asks an ai2048 agent what it would play.")


@dataclass(frozen=True)
class McpLimits:
    """How many games and built agents the server keeps, and for how long an idle game stays."""

    max_games: int = setting(64, "games kept (least recently used dropped)", lo=1)
    game_ttl: float = setting(3600.0, "seconds an untouched game is kept", lo=0, lo_open=True, why="seconds")
    max_agents: int = setting(4, "built agents kept (least recently used dropped)", lo=1)

    def __post_init__(self) -> None:
        check_fields(self)


def _state(gid: str, s: PlaySession, note: str | None = None) -> dict[str, Any]:
    """A game as a tool result: its id, the board as text (with ``note``) and as a grid, the numbers."""
    st = s.state()
    return {"game_id": gid, "text": describe_board(s.board, s.score, s.moves, note), "board": st["board"],
            "score": st["score"], "moves": st["moves"], "max_tile": st["max_tile"], "over": st["over"],
            "legal_moves": st["legal"], "seed": st["seed"]}


def create_mcp_server(agent: str | None = None, limits: McpLimits | None = None) -> MCPServer:
    """The MCP server; ``agent`` is the default hint agent (default: the web app's default)."""
    limits = limits or McpLimits()
    models = scan_models(None)
    try:
        default = check_settings(agent or default_agent(), {}, models)
    except ValueError as e:
        raise ValueError(f"default hint agent: {e}") from None
    store = GameStore(limits.max_games, limits.game_ttl)
    cache = AgentCache(limits.max_agents, models)
    server = MCPServer(name="ai2048", instructions=GUIDE, log_level="WARNING")

    def game(game_id: str) -> tuple[PlaySession, Any]:
        if not isinstance(game_id, str) or len(game_id) > 64:
            raise ToolError("game_id must be the id new_game returned")
        try:
            s, lock = store.get(game_id)
        except ApiError as e:
            raise ToolError(e.message) from None
        if not lock.acquire(timeout=30):
            raise ToolError("this game is busy (a hint is running); try again")
        return s, lock

    @server.tool()
    def new_game(seed: int | None = None) -> dict[str, Any]:
        """Start a new 2048 game (the same seed gives the same game); returns its game_id and board."""
        try:
            seed = checks.seed("seed", seed)
        except (TypeError, ValueError) as e:
            raise ToolError(str(e)) from None
        s = PlaySession(seed=seed, agent=default[0], agent_config=default[1], max_undo=0)
        return _state(store.add(s), s)

    @server.tool()
    def read_board(game_id: str) -> dict[str, Any]:
        """The board of a game, with its score, moves and legal moves."""
        s, lock = game(game_id)
        try:
            return _state(game_id, s)
        finally:
            lock.release()

    @server.tool()
    def move(game_id: str, move: str) -> dict[str, Any]:
        """Play one move: up, down, left or right (as text; "Move: left" works too)."""
        try:
            action = parse_move(move)
        except (AnswerError, TypeError) as e:
            raise ToolError(str(e)) from None
        s, lock = game(game_id)
        try:
            if s.is_over:
                raise ToolError(f"game {game_id} is over (score {s.score}); start another with new_game")
            before = s.score
            if not s.move(action):
                legal = ", ".join(s.state()["legal"])
                raise ToolError(f"{ACTION_NAMES[action]} does not move any tile; legal moves: {legal}")
            note = "Game over." if s.is_over else None
            return {**_state(game_id, s, note), "move": ACTION_NAMES[action], "gained": s.score - before}
        finally:
            lock.release()

    @server.tool()
    def hint(game_id: str, agent: str | None = None, config: dict[str, Any] | None = None) -> dict[str, Any]:
        """What an ai2048 agent would play now and its value of each legal move. agent: a name from the
        agents tool (default: the server's); config: its settings, each within its listed range."""
        try:
            name, settings = check_settings(agent or default[0], config or {}, models) if agent or config \
                else default
            built, agent_lock = cache.get(name, settings)
        except (ValueError, TypeError, FileNotFoundError, ImportError) as e:
            raise ToolError(str(e)) from None
        s, lock = game(game_id)
        try:
            with agent_lock:
                h = s.hint(built)
            out = h.to_dict()
            out["agent"] = name
            return {**_state(game_id, s), "hint": out}
        finally:
            lock.release()

    @server.tool()
    def agents() -> list[dict[str, Any]]:
        """The agents a hint may name (with their settings' ranges), and the default."""
        return [{"name": a["name"], "description": a["description"], "ranges": a["ranges"],
                 "default": a["name"] == default[0]} for a in listing(models)]

    return server


def serve_stdio(agent: str | None = None, limits: McpLimits | None = None) -> None:
    """Run the MCP server on stdin/stdout until the client closes it."""
    create_mcp_server(agent, limits).run("stdio")


__all__ = ["GUIDE", "McpLimits", "create_mcp_server", "serve_stdio"]
