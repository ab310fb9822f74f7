"""The web app's trust boundary against a real server on 127.0.0.1 (issue 18).

Host and Origin checks (DNS rebinding, cross-site requests), JSON-only API posts, models chosen by
name only (never a path, no file-existence oracle, a crafted pickle in the models folder refused
without running), bounded settings (``threads: 10000`` never reaches torch), JSON bombs answered
400 with the pipelined request behind them still served, a full work queue answered 503, the per
request time budget, idle games expiring, and a fuzz test of the request bodies: a clear 4xx or
success, never a 500.
"""

from __future__ import annotations

import json
import threading
import time
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi comes with the 'ui' extra: pip install 'ai2048[ui]'")
pytest.importorskip("uvicorn", reason="uvicorn comes with the 'ui' extra: pip install 'ai2048[ui]'")
httpx = pytest.importorskip("httpx", reason="the tests talk to the server with httpx")
torch = pytest.importorskip("torch")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from _ui_server_helpers import SLOW_AGENT, dqn_model_run, raw_exchange, serving  # noqa: E402
from ai2048.ui.bodies import parse_body  # noqa: E402
from ai2048.ui.guard import MAX_BODY_BYTES  # noqa: E402
from ai2048.ui.server import create_app  # noqa: E402
from ai2048.ui.session import PlaySession  # noqa: E402
from ai2048.ui.state import GameStore, Limits  # noqa: E402

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("models")
    dqn_model_run(root / "tiny-dqn")
    evil = root / "evil"
    evil.mkdir()
    (evil / "meta.json").write_text(json.dumps({"agent": "dqn"}))
    from test_safe_loading import evil_file

    evil_file(evil / "model.pt", root.parent / "PWNED-by-models-dir")
    (root / "not-a-run").mkdir()
    return root


@pytest.fixture(scope="module")
def server(models_dir: Path):
    app = create_app(default_agent="random", models_dir=models_dir, extra_agents=SLOW_AGENT,
                     limits=Limits(max_games=64, max_agents=4, workers=2, max_queue=4, budget=0.5))
    with serving(app) as url:
        yield url, app


@pytest.fixture()
def client(server):
    url, _ = server
    with httpx.Client(base_url=url, timeout=30) as c:
        yield c


def new_game(client: httpx.Client, **body) -> str:
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    return r.json()["id"]


def error(r: httpx.Response, status: int) -> str:
    assert r.status_code == status, (r.status_code, r.text)
    assert "Traceback" not in r.text
    return r.json()["error"]


# Host, Origin, content type


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST", "127.0.0.1"]
)
def test_host__loopback_names_are_served(client: httpx.Client, server, host: str) -> None:
    port = server[0].rsplit(":", 1)[1]
    r = client.get("/api/agents", headers={"Host": host.format(port=port)})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:{port}",
        "127.0.0.1.evil.example",
        "localhost.evil:{port}",
        "192.168.1.7:{port}",
        "",
        "[::2]:{port}",
    ],
)
def test_host__dns_rebinding_names_get_421(client: httpx.Client, server, host: str) -> None:
    port = server[0].rsplit(":", 1)[1]
    message = error(client.get("/api/agents", headers={"Host": host.format(port=port)}), 421)
    assert "this server answers only to" in message and "--allow-host" in message
    message = error(client.post("/api/games", json={}, headers={"Host": host.format(port=port)}), 421)


def test_host__the_configured_host_and_allow_host_are_served(models_dir: Path) -> None:
    from fastapi.testclient import TestClient

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        app = create_app(default_agent="random", host="10.1.2.3", allow_hosts=("box.lan",))
    for base, status in [("http://10.1.2.3:8048", 200), ("http://box.lan", 200), ("http://127.0.0.1", 200),
                         ("http://10.1.2.4:8048", 421)]:
        assert TestClient(app, base_url=base).get("/api/agents").status_code == status, base
    wildcard = create_app(default_agent="random", host="0.0.0.0")
    assert TestClient(wildcard, base_url="http://0.0.0.0:8048").get("/api/agents").status_code == 421


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:1", "https://localhost.evil"])
def test_origin__cross_origin_requests_get_403(client: httpx.Client, origin: str) -> None:
    gid = new_game(client)
    for r in (client.post("/api/games", json={}, headers={"Origin": origin}),
              client.post(f"/api/games/{gid}/ai", json={}, headers={"Origin": origin}),
              client.get(f"/api/games/{gid}", headers={"Origin": origin})):
        assert "cross-origin request" in error(r, 403)
    assert client.get(f"/api/games/{gid}").json()["moves"] == 0  # the AI move was not played
    r = client.post("/api/games", json={}, headers={"Sec-Fetch-Site": "cross-site"})
    assert "cross-site request refused" in error(r, 403)


def test_origin__the_page_itself_is_served(client: httpx.Client, server) -> None:
    r = client.post("/api/games", json={}, headers={"Origin": server[0], "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    "ctype",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonx"],
)
def test_content_type__api_posts_need_json(client: httpx.Client, ctype: str | None) -> None:
    headers = {"Content-Type": ctype} if ctype else {}
    r = client.post("/api/games", content=b'{"seed": 1}', headers=headers)
    assert "Content-Type: application/json" in error(r, 415)
    r = client.post(
        "/api/games", content=b'{"seed": 1}', headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert r.status_code == 200


# models by name only


def test_models__listed_by_name_and_played(client: httpx.Client) -> None:
    names = {a["name"]: a for a in client.get("/api/agents").json()["agents"]}
    assert {"model:tiny-dqn", "model:evil"} <= set(names) and "model:not-a-run" not in names
    assert names["model:tiny-dqn"]["model"] is True and "policy" in names["model:tiny-dqn"]["ranges"]
    assert not {"dqn", "qnet", "policy", "lazyzero", "ntuple"} & set(names)  # networks only as models
    gid = new_game(client, seed=3)
    r = client.post(f"/api/games/{gid}/hint", json={"agent": "model:tiny-dqn"})
    assert r.status_code == 200, r.text
    hint = r.json()["hint"]
    assert hint["agent"] == "model:tiny-dqn" and hint["action"] in hint["values"]


@pytest.mark.parametrize("key", ["weights", "path", "run", "data", "patterns"])
def test_models__a_path_in_the_config_is_refused(client: httpx.Client, models_dir: Path, key: str) -> None:
    gid = new_game(client)
    for agent in ("model:tiny-dqn", "random", "expectimax"):
        body = {"agent": agent, "config": {key: str(models_dir / "evil" / "model.pt")}}
        message = error(client.post(f"/api/games/{gid}/hint", json=body), 400)
        assert f"setting '{key}' is not accepted" in message and "never from a path" in message


def test_models__unknown_names_get_one_message_whatever_exists_on_disk(
    client: httpx.Client, models_dir: Path
) -> None:
    gid = new_game(client)
    messages = set()
    for name in ("nope", str(models_dir / "tiny-dqn"), "../models/tiny-dqn", "/etc/passwd", "/no/such/file",
                 "tiny-dqn/../tiny-dqn", "not-a-run"):
        message = error(client.post(f"/api/games/{gid}/hint", json={"agent": "model:" + name}), 400)
        assert message.startswith("unknown model '")
        messages.add(message.split("'; ", 1)[1])  # the same words after the name, whatever is on disk
    import ai2048.models

    # shipped networks are listed too, and the endgame agent (its distilled tables ship)
    listed = sorted([*ai2048.models.names(), "endgame", "evil", "tiny-dqn"])
    assert messages == {"models on this server: " + ", ".join(f"model:{n}" for n in listed)}
    message = error(
        client.post(f"/api/games/{gid}/hint", json={"agent": "dqn", "config": {"weights": "x"}}), 400
    )
    assert "unknown agent 'dqn'" in message and "model:NAME" in message


def test_models__a_crafted_pickle_in_the_models_folder_is_refused_without_running(
        client: httpx.Client, models_dir: Path) -> None:
    gid = new_game(client)
    message = error(client.post(f"/api/games/{gid}/hint", json={"agent": "model:evil"}), 400)
    assert "not a safe ai2048 model file" in message
    assert not (models_dir.parent / "PWNED-by-models-dir").exists()


def test_models__a_models_folder_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such directory"):
        create_app(models_dir=tmp_path / "nope")


# bounded work and settings


@pytest.mark.parametrize(("agent", "config", "message"), [
    ("montecarlo", {"playouts": 300000}, "playouts must be a whole number in 1..2000"),
    ("montecarlo", {"playouts": 2.5}, "playouts=2.5 is out of range"),
    ("expectimax", {"tt_bits": 24}, "tt_bits must be a whole number in 0..20"),
    ("expectimax", {"depth": 9}, "depth must be a whole number in 1..6 or 'adaptive'"),
    ("expectimax", {"p_two": 1e300}, "p_two must be a number in (0, 1]"),
    ("expectimax", {"p_two": 0}, "p_two must be a number in (0, 1]"),  # was: passed here, failed to build
    ("expectimax", {"evaluator": "os.system"}, "is not accepted"),
    ("minimax", {"time_limit": 100}, "time_limit must be a number in 0.01..1"),
    ("model:tiny-dqn", {"threads": 10000}, "setting 'threads' is fixed by the server"),
    ("model:tiny-dqn", {"device": "cuda"}, "setting 'device' is fixed by the server"),
    ("model:tiny-dqn", {"policy": "boltzmann"}, "policy must be one of 'greedy', 'entropy'"),
    ("random", {"seed": -1}, "seed must be a whole number in 0..2**63-1"),
    ("random", {"sed": 1}, "agent 'random' has no web setting 'sed'; settings: seed"),
])
def test_settings__out_of_range_is_400_before_any_work(
    client: httpx.Client, agent: str, config: dict, message: str
) -> None:
    threads = torch.get_num_threads()
    gid = new_game(client)
    assert message in error(client.post(f"/api/games/{gid}/ai", json={"agent": agent, "config": config}), 400)
    assert torch.get_num_threads() == threads
    assert client.get(f"/api/games/{gid}").json()["moves"] == 0


def test_json_bombs__clear_400_and_the_pipelined_request_behind_is_served(
    server, client: httpx.Client
) -> None:
    url, _ = server
    huge = b'{"seed": ' + b"7" * 5001 + b"}"
    deep = b"[" * 8000 + b"]" * 8000
    assert "numbers may have at most 40" in error(client.post("/api/games", content=huge, headers=JSON), 400)
    assert "nested 8000 deep" in error(client.post("/api/games", content=deep, headers=JSON), 400)
    assert "not a finite number" in error(
        client.post("/api/games", content=b'{"seed": 1e999}', headers=JSON), 400
    )
    assert "NaN" in error(client.post("/api/games", content=b'{"seed": NaN}', headers=JSON), 400)
    host = url.removeprefix("http://")
    for body in (huge, deep):
        first = (f"POST /api/games HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        second = f"GET /api/agents HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        assert raw_exchange(url, first + second, responses=2) == [
            b"HTTP/1.1 400 Bad Request",
            b"HTTP/1.1 200 OK",
        ]


def test_bodies__over_the_limit_get_413(client: httpx.Client) -> None:
    gid = new_game(client)
    body = json.dumps({"action": "left", "pad": "x" * MAX_BODY_BYTES}).encode()
    assert "too large" in error(client.post(f"/api/games/{gid}/move", content=body, headers=JSON), 413)
    chunks = iter([b"{" + b" " * 1024] * 20)
    assert "too large" in error(client.post(f"/api/games/{gid}/move", content=chunks, headers=JSON), 413)


def test_busy__a_full_queue_gets_503_and_a_busy_game_409(client: httpx.Client, server) -> None:
    url, app = server
    gids = [new_game(client, seed=10) for _ in range(6)]  # LEFT is legal at the start
    results: list[int] = []

    def slow(gid: str) -> None:
        with httpx.Client(base_url=url, timeout=30) as c:
            results.append(
                c.post(
                    f"/api/games/{gid}/hint", json={"agent": "ui-test-slow", "config": {"delay": 0.6}}
                ).status_code
            )

    threads = [threading.Thread(target=slow, args=(g,)) for g in gids[:4]]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 20
    while app.state.web.inflight < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    message = error(
        client.post(f"/api/games/{gids[4]}/hint", json={"agent": "ui-test-slow", "config": {"delay": 0.6}}),
        503,
    )
    assert "the server is busy (4 agent requests running or waiting)" in message
    busy = [
        client.post(f"/api/games/{g}/undo", json={}) for g in gids[:4]
    ]  # 409 either way: busy or nothing to undo
    assert any("this game is busy" in error(r, 409) for r in busy)
    t0 = time.monotonic()
    assert client.get("/api/agents").status_code == 200 and time.monotonic() - t0 < 1.0
    for t in threads:
        t.join()
    assert sorted(results) == [200] * 4
    assert client.post(f"/api/games/{gids[0]}/move", json={"action": "left"}).status_code == 200


def test_budget__ai_steps_stop_when_the_time_budget_is_spent(client: httpx.Client) -> None:
    gid = new_game(client, seed=5)
    r = client.post(
        f"/api/games/{gid}/ai", json={"agent": "ui-test-slow", "config": {"delay": 0.1}, "steps": 100}
    )
    assert r.status_code == 200, r.text
    state = r.json()
    assert 2 <= state["moves"] < 20 and "time budget of 0.5 s per request reached" in state["stopped"]


def test_agents__the_shared_cache_is_bounded(client: httpx.Client, server) -> None:
    _, app = server
    gid = new_game(client, seed=1)
    for playouts in range(1, 12):
        r = client.post(
            f"/api/games/{gid}/hint", json={"agent": "montecarlo", "config": {"playouts": playouts}}
        )
        assert r.status_code == 200, r.text
    assert len(app.state.web.cache) == 4


def test_hints__a_shared_agent_gives_each_game_its_own_reproducible_hint(client: httpx.Client) -> None:
    a, b = new_game(client, seed=11), new_game(client, seed=11)
    body = {"agent": "montecarlo", "config": {"playouts": 7}}
    first = client.post(f"/api/games/{a}/hint", json=body).json()["hint"]
    client.post(
        f"/api/games/{new_game(client, seed=12)}/hint", json=body
    )  # another game uses the same agent between
    assert client.post(f"/api/games/{b}/hint", json=body).json()["hint"] == first


def test_store__idle_games_expire_and_the_count_is_bounded() -> None:
    now = [0.0]
    store = GameStore(max_games=3, ttl=10.0, clock=lambda: now[0])
    ids = [store.add(PlaySession(seed=i)) for i in range(3)]
    now[0] = 6.0
    store.get(ids[0])
    now[0] = 12.0  # ids[1], ids[2] idle for 12 s
    store.add(PlaySession(seed=9))
    assert len(store) == 2
    store.get(ids[0])
    for gid in ids[1:]:
        with pytest.raises(Exception, match="no game"):
            store.get(gid)
    for i in range(10):
        store.add(PlaySession(seed=i))
    assert len(store) == 3


def test_parse_body__limits() -> None:
    assert parse_body(b'{"a": [1, {"b": "[[[["}]}') == {"a": [1, {"b": "[[[["}]}
    assert parse_body(b"  ") == {}
    assert parse_body(b'{"x": "' + b"\\\"[" * 50 + b'"}')["x"].startswith('"[')


def test_limits__bad_server_options_are_errors() -> None:
    with pytest.raises(ValueError, match="workers=0 must be a whole number >= 1"):
        Limits(workers=0)
    with pytest.raises(ValueError, match=r"budget=nan must be a finite number > 0 \(seconds\)"):
        Limits(budget=float("nan"))
    with pytest.raises(ValueError, match="max_queue=True must be a whole number >= 1"):
        Limits(max_queue=True)
    with pytest.raises(ValueError, match="default agent: setting playouts=100000 is out of range"):
        create_app(default_agent="montecarlo", default_config={"playouts": 100000})


# fuzz: every request body gets a clear answer

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["up", "left", "adaptive", "greedy", "model:tiny-dqn", "003"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_keys = st.sampled_from(["seed", "agent", "config", "steps", "action", "x"])
_agents = st.sampled_from(
    [
        "random",
        "greedy",
        "montecarlo",
        "expectimax-seed003",
        "minimax",
        "model:tiny-dqn",
        "model:nope",
        "dqn",
        "ui-test-slow",
    ]
)
_settings = st.dictionaries(
    st.sampled_from(
        [
            "seed",
            "playouts",
            "depth",
            "p_two",
            "order",
            "delay",
            "policy",
            "threads",
            "weights",
            "tt_bits",
            "prune",
            "x",
        ]
    ),
    _values,
    max_size=3,
)
_bodies = st.one_of(
    st.dictionaries(_keys, _values, max_size=4),
    st.fixed_dictionaries({"agent": _agents, "config": _settings}, optional={"steps": st.integers(-2, 102)}),
    _values,
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(["games", "move", "undo", "hint", "ai"]), body=_bodies,
       raw=st.one_of(st.none(), st.binary(max_size=40)))
def test_fuzz__every_body_gets_success_or_a_clear_4xx(
    client: httpx.Client, path: str, body, raw: bytes | None
) -> None:
    gid = new_game(client, seed=2)
    url = "/api/games" if path == "games" else f"/api/games/{gid}/{path}"
    if isinstance(body, dict) and "config" in body and isinstance(body["config"], dict):
        body["config"].pop("delay", None)  # keep the fuzz quick
    content = raw if raw is not None else json.dumps(body).encode()
    r = client.post(url, content=content, headers=JSON)
    assert r.status_code in (200, 400, 404, 409, 413, 503), (r.status_code, r.text, content[:200])
    if r.status_code != 200:
        message = r.json()["error"]
        assert isinstance(message, str) and message and "Traceback" not in message


# a bounded load test on the real server


def test_load__memory_stays_bounded_and_plain_requests_stay_fast(client: httpx.Client, server) -> None:
    """Many games, many distinct agents (16 expectimax tables of 2**20 entries), large bodies: the
    store and the agent cache stay at their caps and RSS grows little; a plain request answers in
    well under a second while heavy agent requests run."""
    from _ui_server_helpers import rss_bytes

    _, app = server
    gid = new_game(client, seed=4)
    client.post(f"/api/games/{gid}/hint", json={"agent": "expectimax", "config": {"depth": 2}})  # warm up
    before = rss_bytes()
    for _ in range(150):
        new_game(client)
    gid = new_game(client, seed=4)  # the LRU store dropped the first one
    for i in range(16):
        config = {"depth": 2, "p_two": 0.5 + i / 100, "tt_bits": 20}
        assert (
            client.post(f"/api/games/{gid}/hint", json={"agent": "expectimax", "config": config}).status_code
            == 200
        )
    pad = json.dumps({"action": "left", "pad": "x" * (MAX_BODY_BYTES - 64)}).encode()
    for _ in range(40):
        assert client.post(f"/api/games/{gid}/move", content=pad, headers=JSON).status_code == 400
        assert (
            client.post(f"/api/games/{gid}/move", content=pad + b" " * 100, headers=JSON).status_code == 413
        )
    grown = rss_bytes() - before
    assert len(app.state.web.store) <= 64 and len(app.state.web.cache) <= 4
    assert grown < 300 * 2**20, f"RSS grew by {grown / 2**20:.0f} MiB"

    heavy_done = threading.Event()

    def heavy() -> None:
        with httpx.Client(base_url=server[0], timeout=60) as c:
            g = c.post("/api/games", json={"seed": 8}).json()["id"]
            for _ in range(3):
                c.post(
                    f"/api/games/{g}/ai",
                    json={"agent": "montecarlo", "config": {"playouts": 2000}, "steps": 100},
                )
        heavy_done.set()

    t = threading.Thread(target=heavy)
    t.start()
    time.sleep(0.2)
    latencies = []
    while not heavy_done.is_set():
        t0 = time.monotonic()
        assert client.get(f"/api/games/{gid}").status_code == 200
        latencies.append(time.monotonic() - t0)
        time.sleep(0.02)
    t.join()
    assert latencies and max(latencies) < 1.0, (
        f"a plain request took {max(latencies):.2f} s during heavy work"
    )


def test_models__shipped_networks_are_listed_and_played_by_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import types

    from fastapi.testclient import TestClient

    from ai2048.agents import make_agent

    made = []
    fake = types.ModuleType("ai2048.models")
    fake.names = lambda: ["net-a", "../evil"]  # type: ignore[attr-defined]
    fake.default_name = lambda: "net-a"  # type: ignore[attr-defined]
    fake.make = lambda name, **cfg: made.append((name, cfg)) or make_agent("greedy")  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "ai2048.models", fake)
    import ai2048

    monkeypatch.setattr(ai2048, "models", fake, raising=False)
    from ai2048.ui.limits import default_agent

    assert default_agent() == "model:net-a"  # `ai2048 serve` plays the shipped network by default
    c = TestClient(create_app(default_agent="model:net-a", default_config={"depth": 2}), base_url="http://localhost")
    agents = {a["name"]: a for a in c.get("/api/agents").json()["agents"]}
    assert (
        "model:net-a" in agents
        and "model:../evil" not in agents
        and "depth" in agents["model:net-a"]["ranges"]
    )
    gid = c.post("/api/games", json={"seed": 1}).json()["id"]
    r = c.post(f"/api/games/{gid}/ai", json={})
    assert r.status_code == 200 and r.json()["agent"] == "model:net-a" and made == [("net-a", {"depth": 2})]
    assert (
        "depth must be a whole number in 1..3"
        in c.post(f"/api/games/{gid}/hint", json={"config": {"depth": 9}}).json()["error"]
    )
    fake.default_name = lambda: (_ for _ in ()).throw(FileNotFoundError("none shipped"))  # type: ignore[attr-defined]
    assert default_agent() == "expectimax"
    clash = tmp_path / "models"
    dqn_model_run(clash / "net-a")
    with pytest.raises(ValueError, match="folder 'net-a' has the name of a shipped model"):
        create_app(models_dir=clash)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--models", "/no/such/models"], "--models /no/such/models: no such directory"),
        (
            ["--agent", "montecarlo", "--set", "playouts=300000"],
            "default agent: setting playouts=300000 is out of range",
        ),
        (["--agent", "dqn", "--set", "weights=/tmp/x"], "unknown agent 'dqn'; available agents:"),
        (["--workers", "0"], "--workers=0 must be a whole number >= 1"),
        (["--max-games", "0"], "--max-games=0 must be a whole number >= 1"),
        (["--game-ttl", "nan"], "--game-ttl=nan must be a finite number > 0 (seconds)"),
        (["--request-timeout", "nan"], "--request-timeout=nan must be a finite number > 0 (seconds)"),
        (["--request-timeout", "0"], "--request-timeout=0.0 must be a finite number > 0 (seconds)"),
        (["--max-connections", "0"], "--max-connections=0 must be a whole number >= 1"),
    ],
)
def test_serve_cli__bad_options_are_errors_before_serving(
    capsys: pytest.CaptureFixture, args: list[str], message: str
) -> None:
    from ai2048.cli import main

    assert main(["serve", "--port", "1", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_session__holds_one_agent_whatever_settings_it_went_through() -> None:
    s = PlaySession(seed=3, agent="montecarlo")
    for playouts in range(1, 30):
        s.set_agent("montecarlo", {"playouts": playouts})
        s.hint()
    assert s._agent_obj.playouts == 29 and not hasattr(s, "_agents")  # one agent, not one per setting


def test_busy__clients_that_hang_up_do_not_free_slots_or_leave_games_locked(
    client: httpx.Client, server
) -> None:
    url, app = server
    gids = [new_game(client, seed=10) for _ in range(5)]
    slow = {"agent": "ui-test-slow", "config": {"delay": 0.3}}
    for gid in gids[:4]:
        with httpx.Client(base_url=url, timeout=0.05) as c, pytest.raises(httpx.TimeoutException):
            c.post(f"/api/games/{gid}/hint", json=slow)
    assert (
        app.state.web.inflight <= 4
    )  # work still running or waiting keeps its slot; work never started is dropped
    deadline = time.monotonic() + 20
    while app.state.web.inflight and time.monotonic() < deadline:
        time.sleep(0.02)
    assert app.state.web.inflight == 0
    for gid in gids:
        assert client.post(f"/api/games/{gid}/move", json={"action": "left"}).status_code == 200
    assert client.post(f"/api/games/{gids[0]}/hint", json=slow).status_code == 200
