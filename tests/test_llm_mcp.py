"""``ai2048 mcp``: the tools through the MCP SDK's own client (in memory, and one session over stdio
with the real command): seeded games, moves as text, hints from ai2048's agents within the web's
ranges, a whole game played by hints, and mistakes answered as tool errors that say what to do."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp.server.mcpserver")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

import ai2048  # noqa: E402
from ai2048.board_io import from_tiles  # noqa: E402
from ai2048.llm.mcp_server import McpLimits, create_mcp_server  # noqa: E402


def run(calls):
    """Run ``calls(client)`` against a fresh in-memory server (greedy hints by default)."""

    async def main():
        async with Client(create_mcp_server("greedy", McpLimits(max_games=4))) as client:
            return await asyncio.wait_for(calls(client), 120)

    return asyncio.run(main())


async def call(client, tool, **args):
    result = await client.call_tool(tool, args)
    if result.is_error:
        return "error: " + result.content[0].text
    return result.structured_content


def test_tools__are_listed_with_their_descriptions():
    async def calls(c):
        return {t.name: t.description for t in (await c.list_tools()).tools}

    tools = run(calls)
    assert set(tools) == {"new_game", "read_board", "move", "hint", "agents"}
    assert "up, down, left or right" in tools["move"]


def test_new_game__same_seed_same_board_and_the_text_is_the_board():
    async def calls(c):
        return [await call(c, "new_game", seed=5) for _ in range(2)] + [await call(c, "new_game", seed=6)]

    a, b, other = run(calls)
    assert a["board"] == b["board"] and a["game_id"] != b["game_id"] and a["board"] != other["board"]
    assert a["text"] == ai2048.envs.text.describe_board(from_tiles(a["board"]))
    assert a["legal_moves"] and a["score"] == 0 and not a["over"]


def test_move__reads_answers_like_the_text_env_and_refuses_with_reasons():
    async def calls(c):
        gid = (await call(c, "new_game", seed=3))["game_id"]
        out = [await call(c, "move", game_id=gid, move=m) for m in ("Move: left", '{"move": "up"}', "jump")]
        board = await call(c, "read_board", game_id=gid)
        out += [board, await call(c, "move", game_id="nope", move="up"), await call(c, "new_game", seed=-1)]
        return out

    left, up, jump, board, unknown, bad_seed = run(calls)
    assert left["move"] == "left" and up["move"] == "up" and board["moves"] == 2
    assert board["board"] == up["board"] and up["score"] == left["score"] + up["gained"]
    assert jump.startswith("error: ") and "no move found in 'jump'" in jump
    assert "no game 'nope'" in unknown and "start a new game" in unknown
    assert "must be a whole number in 0..2**64-1" in bad_seed


def test_move__an_illegal_move_names_the_legal_ones():
    async def calls(c):
        gid = (await call(c, "new_game", seed=3))["game_id"]
        await call(c, "move", game_id=gid, move="left")
        return await call(c, "move", game_id=gid, move="left"), await call(c, "read_board", game_id=gid)

    again, board = run(calls)
    if "left" in board["legal_moves"]:
        pytest.skip("left is still legal after one left move on this board")
    assert "left does not move any tile; legal moves: " in again


def test_hint__from_any_web_agent_within_its_ranges():
    async def calls(c):
        gid = (await call(c, "new_game", seed=9))["game_id"]
        return [await call(c, "hint", game_id=gid),
                await call(c, "hint", game_id=gid, agent="expectimax", config={"depth": 2}),
                await call(c, "hint", game_id=gid, agent="expectimax", config={"depth": 99}),
                await call(c, "hint", game_id=gid, agent="expectimax", config={"weights": "/etc/passwd"}),
                await call(c, "hint", game_id=gid, agent="rm -rf"),
                await call(c, "agents")]

    greedy, expectimax, deep, path, unknown, agents = run(calls)
    assert greedy["hint"]["agent"] == "greedy" and greedy["hint"]["action"] in greedy["legal_moves"]
    assert expectimax["hint"]["agent"] == "expectimax" and set(expectimax["hint"]["values"]) <= {
        "up", "right", "down", "left"}
    assert "depth=99 is out of range" in deep and "never from a path" in path
    assert "unknown agent 'rm -rf'" in unknown
    names = {a["name"]: a for a in agents["result"]}
    assert names["greedy"]["default"] and "expectimax" in names


def test_play__a_whole_game_by_hints_ends_in_a_bounded_loop():
    async def calls(c):
        state = await call(c, "new_game", seed=1)
        gid = state["game_id"]
        for _ in range(3000):
            if state["over"]:
                return state, await call(c, "move", game_id=gid, move="up")
            h = (await call(c, "hint", game_id=gid))["hint"]
            state = await call(c, "move", game_id=gid, move=h["action"])
        raise AssertionError("the game did not end")

    final, after = run(calls)
    assert final["over"] and final["legal_moves"] == [] and final["text"].endswith("Game over.")
    assert "is over" in after and "new_game" in after


def test_store__games_beyond_the_cap_are_dropped_least_recent_first():
    async def calls(c):
        ids = [(await call(c, "new_game", seed=i))["game_id"] for i in range(5)]
        return [await call(c, "read_board", game_id=g) for g in ids]

    first, *rest = run(calls)
    assert isinstance(first, str) and "no game" in first and all(isinstance(r, dict) for r in rest)


@pytest.mark.slow  # a fresh interpreter importing ai2048, mcp and fastapi: seconds of CPU
def test_stdio__the_real_command_serves_the_tools():
    src = str(Path(ai2048.__file__).resolve().parents[1])
    params = StdioServerParameters(command=sys.executable, args=["-m", "ai2048", "mcp", "--agent", "greedy"],
                                   env={**os.environ, "PYTHONPATH": src})

    async def main():
        async with Client(params) as c:
            state = await call(c, "new_game", seed=2)
            return state, await call(c, "hint", game_id=state["game_id"])

    state, hinted = asyncio.run(asyncio.wait_for(main(), 300))
    assert state["moves"] == 0 and hinted["hint"]["action"] in state["legal_moves"]


@pytest.mark.parametrize(("argv", "match"), [
    (["mcp", "--agent", "nope"], "unknown agent 'nope'"),
    (["mcp", "--max-games", "0"], "--max-games=0 must be a whole number >= 1"),
    (["mcp", "--game-ttl", "inf"], "--game-ttl=inf must be a finite number > 0"),
])
def test_cli__bad_options_are_named(argv, match):
    from ai2048.cli import check

    with pytest.raises(ValueError, match=match):
        check(argv)


def test_new_game__refuses_a_seed_of_text_or_true_and_arguments_it_does_not_take():
    async def calls(c):
        return [await call(c, "new_game", seed="12"), await call(c, "new_game", seed=True),
                await call(c, "new_game", sed=12), await call(c, "read_board", game_id="x", extra=1),
                await call(c, "new_game", seed=12)]

    text, true, typo, extra, fine = run(calls)
    assert "seed='12' must be a whole number" in text and "seed=True must be a whole number" in true
    assert "new_game takes no argument 'sed'; its arguments: seed" in typo
    assert "read_board takes no argument 'extra'; its arguments: game_id" in extra
    assert str(fine["seed"]) == "12"  # the web state writes seeds as text (64-bit)


BAD_LINES = [
    ("[" * 250 + "]" * 250, -32600, None, "batches are not supported"),
    ('{"a":' * 250 + "1" + "}" * 250, -32600, None, "jsonrpc must be"),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": ' + '{"a":' * 250 + "1" + "}" * 251,
     -32700, 1, "nested too deep"),
    ("{not json", -32700, None, "the line is not JSON"),
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600, None, "batches are not supported"),
    ('{"jsonrpc": "1.0", "id": 2, "method": "ping"}', -32600, 2, 'jsonrpc must be "2.0"'),
    ('{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": "x"}', -32600, 3, "params must be an object"),
    ('{"jsonrpc": "2.0", "id": {}, "method": "ping"}', -32600, None, "id must be a string or an integer"),
    ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None, "id must be a string or an integer"),
    ('"ping"', -32600, None, "a JSON-RPC message is a JSON object, not a string"),
    ('{"jsonrpc": "2.0", "id": 4}', -32600, 4, "not a JSON-RPC 2.0 request"),
]


@pytest.mark.parametrize(("line", "code", "rid", "says"), BAD_LINES)
def test_lines__that_the_server_cannot_read_get_a_json_rpc_error(line, code, rid, says):
    from ai2048.llm.mcp_server import line_error

    err = line_error(line)
    assert err is not None and (err.error.code, err.id) == (code, rid) and says in err.error.message
    assert line_error('{"jsonrpc": "2.0", "id": 5, "method": "ping"}') is None


def test_lines__are_answered_through_the_transport_s_own_stream():
    import anyio

    from ai2048.llm.mcp_server import _CheckedLines

    good = '{"jsonrpc": "2.0", "id": 5, "method": "ping"}\n'

    async def main():
        async def source():
            for line in ("{bad\n", "\n", good, "[]\n"):
                yield line

        lines = _CheckedLines(source())
        send, receive = anyio.create_memory_object_stream(10)
        lines.reply = send
        lines.ready.set()
        passed = [line async for line in lines]
        send.close()
        return passed, [m.message.error.code async for m in receive]

    assert asyncio.run(main()) == ([good], [-32700, -32600])


@pytest.mark.slow  # a fresh interpreter importing ai2048, mcp and fastapi: seconds of CPU
def test_stdio__every_line_of_the_real_command_gets_an_answer():
    import json
    import subprocess

    src = str(Path(ai2048.__file__).resolve().parents[1])
    proc = subprocess.Popen([sys.executable, "-m", "ai2048", "mcp", "--agent", "greedy"], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": src})
    try:
        out, _ = proc.communicate("".join(line + "\n" for line, *_ in BAD_LINES), timeout=300)
    finally:
        proc.kill()
    answers = [json.loads(line) for line in out.splitlines()]
    assert [(a["error"]["code"], a["id"]) for a in answers] == [(c, r) for _, c, r, _ in BAD_LINES]


def test_move__two_32768s_merge_into_65536_shown_exactly():
    rows = [[32768, 32768, 0, 0], [2, 0, 0, 0], [0] * 4, [0] * 4]

    async def calls(c):
        start = await call(c, "new_game", seed=4, board=rows)
        return start, await call(c, "move", game_id=start["game_id"], move="left")

    start, after = run(calls)
    assert start["board"] == rows and "left" in start["legal_moves"]
    assert start["text"].splitlines()[1].split() == ["32768", "32768", ".", "."]
    assert after["board"][0][0] == 65536 and (after["score"], after["gained"], after["max_tile"]) == (
        65536, 65536, 65536)
    assert after["text"].splitlines()[1].split()[0] == "65536"


@pytest.mark.parametrize(("board", "says"), [
    ([[262144, 0, 0, 0]] + [[0] * 4] * 3,
     "tile value 262144 at cell 0 (row 0, column 0) is not a power of two in 2..131072"),
    ([131072, 131072] + [0] * 14, "a second 131072 at cell 1 (row 0, column 1)"),
    ([[2, 4], [8, 16]], "board must be 4 rows of 4 tile values"),
    ([3] + [0] * 15, "tile value 3 at cell 0"),
    ([0] * 10**5, "board must be 4 rows of 4 tile values"),
])
def test_new_game__a_bad_board_is_refused_naming_the_cell(board, says):
    async def calls(c):
        return await call(c, "new_game", board=board)

    out = run(calls)
    assert out.startswith("error: ") and says in out
