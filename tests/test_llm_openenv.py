"""``ai2048 serve-env``: a real server on 127.0.0.1 played by openenv-core's own client (many games at
once, agents through the door, same seed = same game as the local text env), and its guards: Host and
Origin on WebSocket handshakes and requests, message and body sizes, the session and connection caps,
a client that never reads, bad seeds and answers answered with errors that keep the session."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import time

import gymnasium as gym
import pytest

pytest.importorskip("openenv.core.env_server.http_server")
websockets = pytest.importorskip("websockets")
httpx = pytest.importorskip("httpx")

from _ui_server_helpers import serving  # noqa: E402
from ai2048.agents import make_agent  # noqa: E402
from ai2048.cli import check  # noqa: E402
from ai2048.envs import TEXT_ENV_ID  # noqa: E402
from ai2048.llm.baselines import play_openenv, play_text_env  # noqa: E402
from ai2048.llm.openenv_env import Game2048Action, Game2048Client  # noqa: E402
from ai2048.llm.openenv_server import EnvServerLimits, create_env_app, uvicorn_config  # noqa: E402

LIMITS = EnvServerLimits(max_sessions=16, max_connections=24, session_ttl=60, request_timeout=2.0,
                         max_message=8192, ping_seconds=0.5)


@pytest.fixture(scope="module")
def server():
    app = create_env_app({"max_chars": 2000}, LIMITS)
    config = lambda port: uvicorn_config(app, "127.0.0.1", port, LIMITS, log_level="critical")  # noqa: E731
    with serving(app, config) as url:
        yield url, app


def _until(predicate, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_games__sixteen_clients_at_once_each_play_to_the_end(server):
    url, app = server

    async def game(seed: int) -> tuple[int, int]:
        async with Game2048Client(base_url=url) as env:
            result = await env.reset(seed=seed)
            for _ in range(5000):  # a game of first-legal moves ends long before
                if result.done:
                    return result.observation.moves, result.observation.score
                result = await env.step(Game2048Action(message=f"Move: {result.observation.legal_moves[0]}"))
            raise AssertionError("a game did not end")

    async def games() -> list[tuple[int, int]]:
        return await asyncio.wait_for(asyncio.gather(*(game(s) for s in range(16))), 120)

    results = asyncio.run(games())
    assert all(moves > 20 for moves, _ in results) and len(set(results)) > 1
    assert _until(lambda: app.state.env_server.active_sessions == 0)


@pytest.mark.parametrize("agent", ["greedy", "random"])
def test_agents__play_the_same_game_over_openenv_as_in_the_local_text_env(server, agent):
    url, _ = server
    with Game2048Client(base_url=url).sync() as client:
        remote = play_openenv(make_agent(agent), client, seed=7)
    local = play_text_env(make_agent(agent), gym.make(TEXT_ENV_ID, max_chars=2000).unwrapped, seed=7)
    assert remote == local and remote["ended_by"] == "game_over" and remote["invalid"] == 0


def test_sessions__outlive_the_request_head_timeout(server):
    """The head timer (2 s here) bounds a request's head, not a WebSocket session: it is cancelled at the
    upgrade (before, every session was closed 2 s after it began)."""
    url, _ = server
    with Game2048Client(base_url=url).sync() as env:
        env.reset(seed=3)
        time.sleep(LIMITS.request_timeout + 1.0)
        assert env.step(Game2048Action(message="left")).observation.moves <= 1


def test_answers__invalid_ones_are_explained_and_bounded(server):
    url, _ = server
    with Game2048Client(base_url=url).sync() as env:
        first = env.reset(seed=1).observation
        steps = [env.step(Game2048Action(message=m)) for m in ("jump", "x" * 2001, "up\x00", "ＵＰ")]
    assert [s.observation.invalid_count for s in steps] == [1, 2, 3, 0]
    assert "no move found in 'jump'" in steps[0].observation.invalid
    assert "2001 characters long; at most 2000 are read" in steps[1].observation.invalid
    assert "control character U+0000" in steps[2].observation.invalid
    assert steps[3].observation.move == "up" and steps[0].observation.board == first.board
    assert "Your answer was not played" in steps[0].observation.text


def test_errors__bad_seeds_and_early_steps_are_answered_and_the_session_goes_on(server):
    url, _ = server
    with Game2048Client(base_url=url).sync() as env:
        with pytest.raises(RuntimeError, match="reset the game before the first step"):
            env.step(Game2048Action(message="up"))
        for seed, says in ((-1, "seed=-1 must be a whole number >= 0"),
                           ("3", "seed='3' must be a whole number"), (1.5, "seed=1.5 must be")):
            with pytest.raises(RuntimeError, match=says):
                env.reset(seed=seed)
        assert env.reset(seed=2).observation.moves == 0
        assert env.state().seed == 2


def test_sessions__beyond_the_cap_get_capacity_reached(server):
    url, app = server

    async def run() -> str:
        clients = [Game2048Client(base_url=url) for _ in range(LIMITS.max_sessions)]
        try:
            for c in clients:
                await c.connect()
                await c.reset(seed=0)
            async with websockets.connect(url.replace("http", "ws") + "/ws") as extra:
                return str(await extra.recv())  # the server speaks first: the session was refused
        finally:
            for c in clients:
                await c.close()

    assert "CAPACITY_REACHED" in asyncio.run(asyncio.wait_for(run(), 60))
    assert _until(lambda: app.state.env_server.active_sessions == 0)
    with Game2048Client(base_url=url).sync() as env:  # served again once they left
        assert env.reset(seed=0).observation.moves == 0


@pytest.mark.parametrize(("headers", "status"), [
    ({}, b"101"), ({"Host": "evil.example:80"}, b"421"), ({"Origin": "http://evil.example"}, b"403"),
    ({"Sec-Fetch-Site": "cross-site"}, b"403"), ({"Origin": "http://127.0.0.1:1"}, b"403"),
])
def test_guards__websocket_handshakes_from_other_sites_are_refused(server, headers, status):
    url, app = server
    s, head = _raw_websocket(url, headers)
    s.close()
    assert head.split(b" ")[1] == status
    assert status == b"101" or b"only" in head or b"refused" in head  # the reason, as the web app gives it
    assert _until(lambda: app.state.env_server.active_sessions == 0)


def test_guards__http_requests_are_checked_like_the_web_app_s(server):
    url, _ = server
    with httpx.Client(base_url=url) as c:
        assert c.get("/health").json() == {"status": "healthy"}
        assert c.get("/health", headers={"Host": "evil.example"}).status_code == 421
        assert c.post("/reset", json={}, headers={"Origin": "http://evil.example"}).status_code == 403
        assert c.post("/reset", content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
        big = json.dumps({"action": {"message": "x" * LIMITS.max_message}})
        r = c.post("/step", content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and "at most 8192 bytes" in r.json()["error"]
        assert c.get("/docs").status_code == 404 and c.get("/openapi.json").status_code == 404
        assert "up" in c.post("/reset", json={"seed": 4}).json()["observation"]["legal_moves"]


def test_guards__oversized_and_binary_messages_end_the_session_clearly(server):
    url, app = server

    async def send(payload: str | bytes) -> tuple[int | None, str]:
        async with websockets.connect(url.replace("http", "ws") + "/ws", max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            await ws.recv()
            await ws.send(payload)
            try:
                reply = await asyncio.wait_for(ws.recv(), 10)
            except websockets.exceptions.ConnectionClosed as e:
                return e.rcvd.code if e.rcvd else None, ""
            return None, str(reply)

    step = json.dumps({"type": "step", "data": {"message": "up" + " " * LIMITS.max_message}})
    assert asyncio.run(send(step)) == (1009, "")  # message too big
    code, reply = asyncio.run(send(b"\x00\xff binary"))
    assert code is not None or "SESSION_ERROR" in reply or "error" in reply
    assert _until(lambda: app.state.env_server.active_sessions == 0)


def _raw_websocket(url: str, headers: dict[str, str] | None = None) -> tuple[socket.socket, bytes]:
    """A WebSocket handshake sent by hand (``headers`` may replace Host): the socket and the answer's
    head (and body, when the handshake was refused)."""
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=5)
    fields = {"Host": f"{host}:{port}", "Upgrade": "websocket", "Connection": "Upgrade",
              "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version": "13",
              **(headers or {})}
    lines = "".join(f"{k}: {v}\r\n" for k, v in fields.items())
    s.sendall(f"GET /ws HTTP/1.1\r\n{lines}\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(1)
        if not chunk:
            break
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        s.settimeout(2)
        try:
            while chunk := s.recv(4096):
                head += chunk
        except TimeoutError:
            pass
    return s, head


def _frame(text: str) -> bytes:
    data, mask = text.encode(), os.urandom(4)
    n = len(data)
    size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return bytes([0x81]) + size + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_clients__one_that_never_reads_or_answers_pings_is_dropped(server):
    url, app = server
    s, head = _raw_websocket(url)
    assert head.startswith(b"HTTP/1.1 101")
    try:
        s.sendall(_frame(json.dumps({"type": "reset", "data": {"seed": 0}})))
        for _ in range(50):
            s.sendall(_frame(json.dumps({"type": "step", "data": {"message": "left"}})))
        assert _until(lambda: app.state.env_server.active_sessions == 1, 5)
        # pings every 0.5 s, no pong within 0.5 s: the server drops the session
        assert _until(lambda: app.state.env_server.active_sessions == 0, 10)
    finally:
        s.close()


def test_connections__beyond_the_cap_are_closed_at_once(server):
    url, _ = server
    host, port = url.removeprefix("http://").split(":")
    held = [socket.create_connection((host, int(port)), timeout=5) for _ in range(LIMITS.max_connections + 4)]
    try:
        closed = 0
        for s in held[LIMITS.max_connections:]:
            s.settimeout(2)
            try:
                closed += s.recv(1) == b""
            except (ConnectionResetError, TimeoutError):
                closed += 1
        assert closed == 4
    finally:
        for s in held:
            s.close()
    time.sleep(0.2)
    with httpx.Client(base_url=url) as c:
        assert c.get("/health").status_code == 200


def test_limits__reach_the_server():
    app = create_env_app({}, EnvServerLimits(session_ttl=7.0, max_sessions=3))
    server = app.state.env_server
    assert server.max_concurrent_envs == 3 and server._session_idle_timeout_s == 7.0


@pytest.mark.parametrize(("argv", "match"), [
    (["serve-env", "--port", "0"], "not a TCP port"),
    (["serve-env", "--max-sessions", "0"], "--max-sessions=0 must be a whole number in 1..16,777,216"),
    (["serve-env", "--session-ttl", "nan"], r"--session-ttl=nan must be a finite number > 0 \(seconds\)"),
    (["serve-env", "--max-message", "100"], r"--max-message=100 must be a whole number in 4096..16,777,216 "
                                            r"\(bytes; an observation needs 4096\)"),
    (["serve-env", "--ping", "0"], r"--ping=0.0 must be a finite number > 0 \(seconds\)"),
    (["serve-env", "--set", "colour=red"], "unknown text env option"),
    (["serve-env", "--set", "max_invalid=-1"], "max_invalid=-1 must be"),
    (["serve-env", "--set", "obs_format=xml"], "obs_format='xml' is not one of"),
])
def test_cli__bad_options_are_named_before_serving(argv, match):
    with pytest.raises(ValueError, match=match):
        check(argv)


def test_docs__the_client_example_runs(server, capsys):
    from test_api_docs import ROOT, _python_blocks, _shrunk

    url, _ = server
    block = next(b for b in _python_blocks((ROOT / "docs" / "llm.md").read_text()) if "Game2048Client(" in b)
    exec(compile(_shrunk(block, {"http://127.0.0.1:8049": url}), "docs/llm.md", "exec"), {})
    score, ended_by = capsys.readouterr().out.split()
    assert int(score) > 0 and ended_by == "game_over"


def test_http__a_stateless_step_is_a_4xx_that_says_games_live_in_a_websocket_session(server):
    url, _ = server
    with httpx.Client(base_url=url) as c:
        r = c.post("/step", json={"action": {"message": "left"}})
    assert r.status_code == 400 and "a game lives in a WebSocket session: connect to /ws" in r.json()["error"]


@pytest.mark.parametrize(("message", "kind"), [("[1, 2]", "array"), ('"step"', "string"), ("5", "number"),
                                               ("null", "null"), ("true", "boolean")])
def test_messages__json_that_is_not_an_object_is_explained_and_the_session_goes_on(server, message, kind):
    url, _ = server

    async def run() -> tuple[dict, dict]:
        async with websockets.connect(url.replace("http", "ws") + "/ws") as ws:
            await ws.send(message)
            error = json.loads(await asyncio.wait_for(ws.recv(), 10))
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            return error, json.loads(await asyncio.wait_for(ws.recv(), 10))

    error, reset = asyncio.run(run())
    assert error["type"] == "error" and error["data"]["message"].startswith("each message must be a JSON")
    assert f"this one is a JSON {kind}" in error["data"]["message"]
    assert reset["data"]["observation"]["moves"] == 0


def test_sessions__a_reaped_session_s_websocket_is_closed_so_the_cap_holds():
    limits = EnvServerLimits(max_sessions=1, session_ttl=0.5, ping_seconds=5)
    app = create_env_app({}, limits)
    config = lambda port: uvicorn_config(app, "127.0.0.1", port, limits, log_level="critical")  # noqa: E731

    async def run(url: str) -> tuple[int | None, str]:
        async with websockets.connect(url.replace("http", "ws") + "/ws") as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            await ws.recv()
            try:
                await asyncio.wait_for(ws.recv(), 30)  # the reaper runs every 5 s
            except websockets.exceptions.ConnectionClosed as e:
                return (e.rcvd.code, e.rcvd.reason) if e.rcvd else (None, "")
            return None, "still open"

    with serving(app, config) as url:
        code, reason = asyncio.run(run(url))
        assert code == 1001 and "idle for over 0.5 s and ended; connect again" in reason
        assert _until(lambda: app.state.env_server.active_sessions == 0)
        with Game2048Client(base_url=url).sync() as env:  # the one slot is free again
            assert env.reset(seed=0).observation.moves == 0


def test_agent_move__gives_the_agent_the_game_s_view_or_plays_the_forced_move():
    from ai2048 import Action, Game
    from ai2048.board_io import exact_from_tiles
    from ai2048.llm.baselines import agent_move

    seen = []

    class Recorder:
        def act(self, board):
            seen.append(board)
            return Action.LEFT

    pair = exact_from_tiles([65536, 65536, 0, 0, 2] + [0] * 11)
    assert agent_move(Recorder(), *pair) == Action.LEFT
    assert seen == [Game(seed=0, board=pair[0], supers=pair[1]).view] and seen[0] != pair[0]  # two 16384s

    class Never:
        def act(self, board):
            raise AssertionError("the view has no move: the loop plays the forced one unasked")

    full = exact_from_tiles([65536, 65536, 16384, 2, 2, 4, 8, 16, 4, 8, 16, 32, 8, 16, 32, 64])
    assert agent_move(Never(), *full) == Action.RIGHT


def test_observation__grid_holds_the_exact_tiles_of_info_s_position():
    from ai2048.board_io import exact_from_tiles
    from ai2048.llm.openenv_env import Game2048Environment

    env = Game2048Environment()
    board, supers = exact_from_tiles([131072, 65536, 32768, 2] + [0] * 12)
    info = {"board": board, "supers": supers, "score": 7, "moves": 1, "max_tile": 131072,
            "legal_moves": ["down"], "move": "up", "invalid": None, "invalid_count": 0}
    obs = env._observation("text", 0.0, False, info)
    assert obs.board[0] == [131072, 65536, 32768, 2] and obs.max_tile == 131072
    env.close()
