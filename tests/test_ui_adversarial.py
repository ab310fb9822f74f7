"""The web app against an attacker speaking raw HTTP to a real ``ai2048 serve`` in a subprocess.

What was broken (each has a test here):

- uvicorn arms no timer while a request's head arrives, and any byte cancels its keep-alive timer:
  a client that connected and sent nothing, or one header line every few seconds (slowloris), held
  its connection forever; enough of them used up the server's file descriptors. Now a request's
  head and its body each have ``--request-timeout`` seconds, and connections beyond
  ``--max-connections`` are closed at once (:mod:`ai2048.ui.protocol`).
- two Host (or Origin) headers in an HTTP/1.0 request: the guard checked the last, the app saw the
  first; now a 400. ``Host: [::1]evil`` passed as ``[::1]``; now a 421.
- a model that failed to build left one entry per distinct setting in the agent cache's table of
  builds in progress, for good.

What held up is tested too: h11 refuses two Host headers in HTTP/1.1, heads over 16 KiB and bad
Content-Lengths; static files never leave their folder; an absolute-form target is not proxied.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi comes with the 'ui' extra: pip install 'ai2048[ui]'")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn comes with the 'ui' extra: pip install 'ai2048[ui]'")

from _ui_server_helpers import free_port  # noqa: E402
from ai2048.ui.guard import _host_name  # noqa: E402
from ai2048.ui.server import create_app  # noqa: E402
from ai2048.ui.state import AgentCache, Limits  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"
TIMEOUT = 1.0  # the subprocess server's --request-timeout
CLOSED_WITHIN = 30.0  # generous: a closed connection is seen well before this on any machine


def wait_for_port(port: int, proc: subprocess.Popen | None = None, limit: float = 600.0) -> None:
    """Wait until ``ai2048 serve`` listens on ``port``; a server that exits fails at once. The limit
    is as generous as tests/test_ui_browser.py's: the server warms every web agent up before it
    listens, and this file runs among the first of a run (tests/conftest.py), from a cold cache a
    minute or more of compiling beside both workers."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"ai2048 serve exited: {proc.stderr.read() if proc.stderr else ''}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.1)
    raise RuntimeError("ai2048 serve did not start")


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    """``ai2048 serve --agent random --request-timeout 1`` on a free loopback port, in a subprocess."""
    p = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from ai2048.cli import main; sys.exit(main())", "serve",
         "--agent", "random", "--port", str(p), "--request-timeout", str(TIMEOUT)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        wait_for_port(p, proc)
        yield p
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=CLOSED_WITHIN)
    return s


def exchange(port: int, data: bytes) -> bytes:
    """Send ``data`` on a fresh connection; read one whole answer (or until the server closes)."""
    with connect(port) as s:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # refused before all was sent
            s.sendall(data)  # (not half-closed: uvicorn closes a connection at EOF, answered or not)
        out = b""
        while not _complete(out):
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
    return out


def _complete(buf: bytes) -> bool:
    """Whether ``buf`` starts with a whole answer (its head and its Content-Length body)."""
    head, sep, body = buf.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False  # no length: read until closed


def status(answer: bytes) -> int:
    assert answer.startswith(b"HTTP/1."), answer[:200]
    return int(answer.split(b" ", 2)[1])


def get(port: int, target: str = "/api/agents", host: str | None = None, extra: str = "",
        version: str = "1.1") -> bytes:
    host = f"127.0.0.1:{port}" if host is None else host
    head = f"GET {target} HTTP/{version}\r\n" + (f"Host: {host}\r\n" if host else "") + extra
    return exchange(port, (head + "Connection: close\r\n\r\n").encode("latin-1"))


def closed_by_server(s: socket.socket) -> bytes:
    """Everything the server sends until it closes ``s`` (fails the test after CLOSED_WITHIN seconds)."""
    out = b""
    try:
        while chunk := s.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    except TimeoutError:
        pytest.fail(f"the server kept the connection open for {CLOSED_WITHIN} s")
    return out


# slow and idle clients


def test_idle_connection__closed_after_the_request_timeout(port: int) -> None:
    with connect(port) as s:
        assert closed_by_server(s) == b""  # sent nothing: closed, no answer


def test_slowloris__a_trickled_head_is_cut_off_and_others_are_served_meanwhile(port: int) -> None:
    stop = threading.Event()
    with connect(port) as slow:
        slow.sendall(f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())

        def trickle() -> None:  # a header line every 0.2 s: each byte used to cancel every timer
            i = 0
            while not stop.is_set():
                try:
                    slow.sendall(f"X-Slow-{i}: x\r\n".encode())
                except OSError:
                    return
                i += 1
                time.sleep(0.2)

        t = threading.Thread(target=trickle, daemon=True)
        t.start()
        try:
            assert status(get(port)) == 200  # another client is served while the slow one trickles
            assert closed_by_server(slow) == b""
        finally:
            stop.set()
            t.join(timeout=5)


def test_slowloris__after_a_response_the_next_head_is_timed_too(port: int) -> None:
    with connect(port) as s:
        s.sendall(f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        answer = s.recv(65536)
        assert status(answer) == 200
        for _ in range(3):  # bytes of a next head: they cancelled uvicorn's keep-alive timer
            s.sendall(b"G")
            time.sleep(0.1)
        rest = closed_by_server(s)
        assert b"HTTP/1.1 200" not in rest


def test_slow_body__408_and_the_connection_closed(port: int) -> None:
    with connect(port) as s:
        s.sendall((f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                   "Content-Length: 100\r\n\r\n{").encode())
        answer = closed_by_server(s)
    assert status(answer) == 408 and b"request body not received within 1 s" in answer


def test_connection_cap__beyond_it_closed_at_once_and_served_again_after() -> None:
    from ai2048.ui.protocol import protocol_class

    app = create_app(default_agent="random", limits=Limits(max_connections=4, request_timeout=120))
    p = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=p, log_level="critical",
                                           http=protocol_class(4, 120.0)))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not server.started:  # (no probe connection: it would count against the cap)
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        held = [connect(p) for _ in range(4)]
        for s in held:  # each is open and served (keep-alive)
            s.sendall(f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n".encode())
            assert status(s.recv(65536)) == 200
        with connect(p) as extra:
            extra.sendall(f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\n\r\n".encode())
            assert closed_by_server(extra) == b""  # over the cap: closed unanswered
        for s in held:
            s.close()
        deadline = time.monotonic() + CLOSED_WITHIN
        while True:  # once they are gone, a new connection is served
            with connect(p) as s:
                s.sendall(f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{p}\r\nConnection: close\r\n\r\n"
                          .encode())
                answer = closed_by_server(s)
            if answer or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert status(answer) == 200
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# Host, Origin and the request line


@pytest.mark.parametrize("host", ["[::1]evil.example", "[::1]:80x", "localhost:8o48", "127.0.0.1:\u00b2",
                                  "evil.example@127.0.0.1", "127.0.0.1:80:80", "[::1"])
def test_host__names_with_junk_after_an_allowed_one_get_421(port: int, host: str) -> None:
    answer = get(port, host=host)
    assert status(answer) == 421 and b"this server answers only to" in answer


def test_host__parsing() -> None:
    assert _host_name("[::1]:8048") == "[::1]" and _host_name("LocalHost:1") == "localhost"
    assert _host_name("127.0.0.1") == "127.0.0.1" and _host_name("[::1]") == "[::1]"
    assert _host_name("[::1]evil") == "[::1]evil" and _host_name("localhost:") == "localhost"  # RFC 7230


def test_host__two_host_headers_are_refused(port: int) -> None:
    for version in ("1.1", "1.0"):  # h11 refuses them (held up)
        for first, second in ((f"evil.example:{port}", f"127.0.0.1:{port}"),
                              (f"127.0.0.1:{port}", "evil.example")):
            assert status(get(port, host=first, extra=f"Host: {second}\r\n", version=version)) == 400


def test_guard__two_host_headers_are_refused_behind_any_server() -> None:
    """Defence in depth: another ASGI server (uvicorn with httptools) does not refuse them; the guard
    checked the last Host while the app saw the first."""
    from fastapi.testclient import TestClient

    client = TestClient(create_app(default_agent="random"), base_url="http://127.0.0.1")
    for hosts in (["evil.example", "127.0.0.1"], ["127.0.0.1", "evil.example"]):
        r = client.get("/api/agents", headers=[("Host", h) for h in hosts])
        assert r.status_code == 400 and "2 Host headers" in r.json()["error"]


def test_origin__two_origin_headers_are_refused(port: int) -> None:
    extra = f"Origin: http://evil.example\r\nOrigin: http://127.0.0.1:{port}\r\n"
    answer = get(port, "/api/agents", extra=extra)
    assert status(answer) == 400 and b"2 Origin headers" in answer


def test_host__missing_on_http_1_0_gets_421_and_on_1_1_400(port: int) -> None:
    assert status(get(port, host="", version="1.0")) == 421
    assert status(get(port, host="")) == 400  # h11: Host is mandatory in HTTP/1.1


@pytest.mark.parametrize("target", [
    "/static/../server.py", "/static/%2e%2e/server.py", "/static/..%2fserver.py",
    "/static/..%2f..%2fui%2fserver.py",
    "/static//etc/passwd", "/static/%2fetc%2fpasswd", "/static/..\\server.py", "/static/....//server.py",
    "/static/app.js%00.png",
])
def test_static__never_leaves_its_folder(port: int, target: str) -> None:
    answer = get(port, target)
    assert status(answer) in (400, 404), answer[:300]
    assert b"def create_app" not in answer and b"root:" not in answer


def test_static__its_own_files_are_served(port: int) -> None:
    answer = get(port, "/static/app.js")
    assert status(answer) == 200 and len(answer) > 1000


def test_absolute_form_target_is_not_proxied(port: int) -> None:
    answer = get(port, "http://evil.example/api/agents")
    assert status(answer) == 404


@pytest.mark.parametrize(("head", "expected"), [
    # h11 buffers at most 16 KiB of an incomplete head; a head read whole in one read (up to 256 KiB)
    # is parsed: 20 KiB is answered, 1 MiB is refused
    ("GET /api/games/" + "a" * 20000 + " HTTP/1.1\r\nHost: {host}\r\n", 404),
    ("GET /api/games/" + "a" * 2**20 + " HTTP/1.1\r\nHost: {host}\r\n", 400),
    ("GET /api/agents HTTP/1.1\r\nHost: {host}\r\n" + "X-Big: " + "b" * 2**20 + "\r\n", 400),
    ("GET /api/agents HTTP/1.1\r\nHost: {host}\r\n" + "".join(f"X-{i}: y\r\n" for i in range(10**5)), 400),
    ("POST /api/games HTTP/1.1\r\nHost: {host}\r\nContent-Length: -1\r\n", 400),
    ("POST /api/games HTTP/1.1\r\nHost: {host}\r\nContent-Length: 99999999999999999999\r\n", 413),
    ("POST /api/games HTTP/1.1\r\nHost: {host}\r\nContent-Length: 5\r\nContent-Length: 6\r\n", 400),
])
def test_request_line_and_headers__oversized_or_malformed_get_4xx(
    port: int, head: str, expected: int
) -> None:
    data = (head.format(host=f"127.0.0.1:{port}") + "Connection: close\r\n\r\n").encode()
    assert status(exchange(port, data)) == expected
    assert status(get(port)) == 200  # the server is fine


def test_websocket_upgrade__answered_as_plain_http(port: int) -> None:
    """The app has no WebSocket route: ``ai2048 serve`` runs uvicorn with ``ws="none"``, so an Upgrade
    is not handed to uvicorn's WebSocket protocol (which has neither the cap nor the head timeout)."""
    head = (f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n")
    answer = exchange(port, head.encode())
    assert status(answer) == 200 and b'"agents"' in answer


def test_chunked_json_body__is_read_and_bounded(port: int) -> None:
    body = b'{"seed": 7}'
    chunks = b"".join(b"%x\r\n%s\r\n" % (1, body[i:i + 1]) for i in range(len(body))) + b"0\r\n\r\n"
    head = (f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
    answer = exchange(port, head + chunks)
    assert status(answer) == 200 and b'"seed":"7"' in answer


# bounded work


def test_minimax_without_a_time_limit__refused_before_any_work(port: int) -> None:
    """``time_limit: null`` with depth 5, no pruning and fours was one decision of 49-88 s holding the
    GIL: the whole server, plain GETs included, stopped answering for that long."""
    import json

    def post(path: str, body: dict) -> bytes:
        text = json.dumps(body)
        return exchange(port, (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: "
                               f"application/json\r\nContent-Length: {len(text)}\r\nConnection: close\r\n\r\n"
                               f"{text}").encode())

    gid = json.loads(post("/api/games", {}).partition(b"\r\n\r\n")[2])["id"]
    heavy = {"depth": 5, "time_limit": None, "prune": False, "fours": True}
    answer = post(f"/api/games/{gid}/hint", {"agent": "minimax", "config": heavy})
    assert status(answer) == 400 and b"time_limit must be a number in 0.01..1" in answer
    answer = post(f"/api/games/{gid}/hint", {"agent": "minimax", "config": {**heavy, "time_limit": 0.05}})
    assert status(answer) == 200 and b'"hint"' in answer  # deepens within the time limit instead


# the agent cache


def test_agent_cache__failed_builds_leave_nothing_behind() -> None:
    from ai2048.ui.limits import Model

    def broken(**config: object) -> object:
        raise ValueError("cannot load the network")

    cache = AgentCache(4, {"bad": Model("bad", "dqn", "broken", {}, broken)})
    for i in range(50):
        with pytest.raises(ValueError, match="cannot load"):
            cache.get("model:bad", {"seed": i})
    assert len(cache) == 0 and cache._building == {}


def test_models__agents_of_one_ntuple_run_share_its_network(tmp_path: Path) -> None:
    """One agent is cached per setting: each loaded its own copy of the run's table, so a client cycling
    ``p_two`` held ``--max-agents`` copies of a 512 MiB network (and loaded one per request)."""
    import json

    from ai2048.ntuple.network import Network

    run = tmp_path / "models" / "tiny-nt"
    run.mkdir(parents=True)
    Network("01,23").save(run / "weights.npz")
    (run / "meta.json").write_text(json.dumps({"agent": "ntuple"}))
    app = create_app(default_agent="random", models_dir=tmp_path / "models", limits=Limits(max_agents=8))
    agents = [app.state.web.cache.get("model:tiny-nt", {"p_two": p, "depth": d})[0]
              for p in (0.5, 0.7, 0.9) for d in (1, 2)]
    assert len(app.state.web.cache) == 6 and all(a.net is agents[0].net for a in agents)
    assert agents[0].net.patterns == "01,23"


def test_undo_history__bounded_on_the_web_and_the_record_stays_a_replay() -> None:
    """Each move kept for undo holds a copy of the game (~2 KiB): 256 web games of 10,000 moves kept
    5 GiB. The web keeps the last MAX_UNDO moves; the terminal keeps all."""
    from ai2048.records import GameRecorder
    from ai2048.ui.routes import MAX_UNDO
    from ai2048.ui.session import PlaySession

    r = GameRecorder(seed=3, max_undo=5)
    while r.game.moves < 12:
        r.step(r.game.legal_actions()[0])
    assert sum(r.undo() for _ in range(10)) == 5 and not r.can_undo and r.game.moves == 7
    record = r.record()
    assert record.replay().boards[-1] == r.game.board  # still exactly the replay of its actions
    with pytest.raises(ValueError, match="max_undo=.* must be a whole number"):
        GameRecorder(seed=1, max_undo=-1)
    assert not GameRecorder(seed=1, max_undo=0).can_undo

    from fastapi.testclient import TestClient

    app = create_app(default_agent="random")
    client = TestClient(app, base_url="http://127.0.0.1")
    gid = client.post("/api/games", json={"seed": 1}).json()["id"]
    s, _ = app.state.web.store.get(gid)
    assert s.recorder._history.maxlen == MAX_UNDO == 200
    s.new_game(seed=2)  # a new game in the session keeps the bound
    assert s.recorder._history.maxlen == MAX_UNDO and PlaySession(seed=1).recorder._history.maxlen is None
