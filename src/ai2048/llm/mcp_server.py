"""``ai2048 mcp``: 2048 as MCP tools (the ``mcp`` SDK), so a chat assistant can play, over stdio.

Tools: ``new_game`` (a seed and a start position are optional), ``read_board``, ``move`` (the move
as text, read like the text env reads an answer: ``"left"``, ``"Move: up"``, ``{"move": "down"}``),
``hint`` (what an ai2048 agent would play here, and its value of each move) and ``agents`` (the agents
and shipped networks a hint may name). Every result carries the board as text (the text env's
observation) and as a grid, both with exact tile values (65536 and 131072 under rules version 1).

A hint runs an agent for whoever drives the server, so it is bounded the way the web app bounds
one: only the web's agents with settings inside their ranges, trained networks by model name
(never a path), built agents kept in a small cache (:mod:`ai2048.ui.limits`,
:class:`ai2048.ui.state.AgentCache`). Games are kept in the web app's bounded store (least
recently used dropped beyond ``max_games``, idle ones after ``game_ttl`` seconds). A mistake (an
unknown game, an unreadable or illegal move, a setting out of range, an argument the tool does not
take, a seed that is text or true) is a tool error whose text says what to do, which the model reads.
Over stdio every line gets an answer: one that is not a JSON-RPC 2.0 message the server reads (not
JSON, nested too deep, a batch, another ``jsonrpc`` version, params that are not an object, an id
that is not a string or a number) gets a JSON-RPC error response saying why
(:func:`line_error`), where the SDK would drop it and leave the client waiting.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from io import TextIOWrapper
from typing import Annotated, Any

import anyio
import mcp_types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import Field, ValidationError

from ai2048 import checks
from ai2048.board_io import exact_from_tiles, render_text
from ai2048.checkpoint import json_kind
from ai2048.checks import check_fields, setting
from ai2048.envs.text import INSTRUCTIONS
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


def _describe(s: PlaySession, legal: list[str], note: str | None = None) -> str:
    """The game as the text env's observation writes a board (score and moves, the tiles, the legal
    moves, ``note``), from the game's exact position: 65536 and 131072 shown as such, and the merge of
    two 32768s counted among the legal moves (a board's nibbles alone show neither)."""
    text = (f"score {s.score}  moves {s.moves}\n{render_text(s.board, s.supers)}\n"
            f"legal moves: {', '.join(legal) or 'none (game over)'}")
    return text if note is None else f"{text}\n{note}"


def start_position(board: Any) -> tuple[int, int]:
    """``(board, supers)`` of a grid of tile values (4 rows of 4, or 16 in a row; 0 for empty, up to
    131072), as the tools show a board; its size is checked before any conversion, and a bad tile is
    named by its cell (:func:`ai2048.board_io.exact_from_tiles`)."""
    rows_of_4 = isinstance(board, list) and len(board) == 4 and all(
        isinstance(r, list) and len(r) == 4 for r in board)
    if not rows_of_4 and not (isinstance(board, list) and len(board) == 16):
        raise ValueError("board must be 4 rows of 4 tile values (or 16 in a row), 0 for an empty cell, as "
                         "the tools show a board")
    try:
        return exact_from_tiles(board)
    except (TypeError, ValueError) as e:
        raise type(e)(f"board: {e}") from None


def _state(gid: str, s: PlaySession, note: str | None = None) -> dict[str, Any]:
    """A game as a tool result: its id, the board as text (with ``note``) and as a grid of exact tile
    values, the numbers."""
    st = s.state()
    return {"game_id": gid, "text": _describe(s, st["legal"], note), "board": st["board"],
            "score": st["score"], "moves": st["moves"], "max_tile": st["max_tile"], "over": st["over"],
            "legal_moves": st["legal"], "seed": st["seed"]}


class StrictServer(MCPServer):
    """The SDK's server, refusing a tool call with arguments the tool does not take (the SDK drops them,
    so a misspelt ``seed`` would start an unseeded game without a word)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = next((t for t in await self.list_tools() if t.name == name), None)
        if tool is not None:
            takes = tool.input_schema.get("properties", {})
            unknown = sorted(set(arguments) - set(takes))
            if unknown:
                raise ToolError(f"{name} takes no argument {', '.join(map(repr, unknown))}; its arguments: "
                                f"{', '.join(takes) or 'none'}")
        return await super().call_tool(name, arguments, context)


def line_error(line: str) -> mcp_types.JSONRPCError | None:
    """The JSON-RPC error answering a line that is not a message the server reads, else None.

    JSON-RPC 2.0 answers an unreadable line with -32700 and a malformed message with -32600 (the id
    echoed when it is readable); the SDK would drop either without an answer.
    """
    parse, invalid = mcp_types.PARSE_ERROR, mcp_types.INVALID_REQUEST

    def error(code: int, message: str, rid: Any = None) -> mcp_types.JSONRPCError:
        data = mcp_types.ErrorData(code=code, message=message)
        return mcp_types.JSONRPCError(jsonrpc="2.0", id=rid, error=data)

    too_deep = "parse error: the JSON is nested too deep; send one flat JSON-RPC message per line"
    try:
        msg = json.loads(line)
    except RecursionError:
        return error(parse, too_deep)
    except ValueError as e:
        return error(parse, f"parse error: the line is not JSON ({e}); send one JSON-RPC message per line")
    if isinstance(msg, list):
        return error(invalid, "batches are not supported: send one JSON-RPC message per line")
    if not isinstance(msg, dict):
        return error(invalid, f"a JSON-RPC message is a JSON object, not a {json_kind(msg)}")
    rid = msg.get("id")
    if "id" in msg and (isinstance(rid, bool) or not isinstance(rid, (str, int))):
        return error(invalid, f"id must be a string or an integer, not a {json_kind(rid)}")
    if msg.get("jsonrpc") != "2.0":
        return error(invalid, f"jsonrpc must be \"2.0\", got {str(msg.get('jsonrpc'))[:20]!r}", rid)
    if "params" in msg and not isinstance(msg["params"], dict):
        return error(invalid, f"params must be an object (named arguments), not a {json_kind(msg['params'])}",
                     rid)
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as e:
        first = e.errors()[0]
        if "recursion" in str(first.get("msg", "")):
            return error(parse, too_deep, rid)
        return error(invalid, f"not a JSON-RPC 2.0 request, notification or response: "
                              f"{first.get('msg', 'malformed')}", rid)
    return None


class _CheckedLines:
    """stdin as the SDK's stdio transport reads it, each unreadable line answered by :func:`line_error`
    through ``reply`` (the transport's own write stream, so answers never interleave) instead."""

    def __init__(self, stdin: Any) -> None:
        self.stdin = stdin
        self.reply: Any = None
        self.ready = anyio.Event()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.stdin:
            if not line.strip():  # not a message: nothing to answer, and the SDK would drop it too
                continue
            err = line_error(line)
            if err is None:
                yield line
                continue
            await self.ready.wait()
            await self.reply.send(SessionMessage(err))


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
    server = StrictServer(name="ai2048", instructions=GUIDE, log_level="WARNING")

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
    def new_game(seed: Annotated[Any, Field(json_schema_extra={"type": ["integer", "null"], "minimum": 0})]
                 = None,
                 board: Annotated[Any, Field(json_schema_extra={"type": ["array", "null"]})] = None
                 ) -> dict[str, Any]:
        """Start a new 2048 game (the same seed gives the same game); returns its game_id and board.
        board: start from this position instead, as the results show one (4 rows of 4 tile values, 0 for
        empty, up to 131072); the seed still draws the new tiles."""
        try:
            seed = checks.seed("seed", seed)
            position = start_position(board) if board is not None else None
        except (TypeError, ValueError) as e:
            raise ToolError(str(e)) from None
        s = PlaySession(seed=seed, agent=default[0], agent_config=default[1], max_undo=0)
        if position is not None:
            s.start_at(*position)
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
    """Run the MCP server on stdin/stdout until the client closes it (every line answered)."""
    server = create_mcp_server(agent, limits)

    async def main() -> None:
        lines = _CheckedLines(anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8",
                                                            errors="replace")))
        async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            lines.reply = write_stream
            lines.ready.set()
            low = server._lowlevel_server  # what MCPServer.run_stdio_async runs
            await low.run(read_stream, write_stream, low.create_initialization_options())

    anyio.run(main)


__all__ = ["GUIDE", "McpLimits", "create_mcp_server", "line_error", "serve_stdio"]
