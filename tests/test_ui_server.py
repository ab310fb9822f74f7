"""The web API: games, moves, undo, hints and AI moves, and a clear 4xx for every bad request."""

from __future__ import annotations

import json
import warnings

import pytest

pytest.importorskip("fastapi", reason="fastapi comes with the 'ui' extra: pip install 'ai2048[ui]'")
pytest.importorskip("httpx", reason="the FastAPI TestClient needs httpx")

from _ui_test_agents import WEB_TEST_AGENTS  # noqa: E402  (registers ui-test-greedy)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from ai2048 import Action, Game, move, to_tiles  # noqa: E402
from ai2048.records import GameRecord  # noqa: E402
from ai2048.ui.guard import MAX_BODY_BYTES  # noqa: E402
from ai2048.ui.server import create_app  # noqa: E402

SEED = 10  # UP is illegal at the start


@pytest.fixture()
def client() -> TestClient:
    return local_client(create_app(default_agent="ui-test-greedy", extra_agents=WEB_TEST_AGENTS))


def local_client(app) -> TestClient:
    """A TestClient that sends this machine's Host (the server answers loopback names only)."""
    return TestClient(app, base_url="http://127.0.0.1:8048")


def new(client: TestClient, **body) -> dict:
    r = client.post("/api/games", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def test_new_game__seeded_board_matches_game(client: TestClient) -> None:
    s = new(client, seed=SEED)
    g = Game(seed=SEED)
    assert s["board"] == to_tiles(g.board).tolist()
    assert (s["score"], s["moves"], s["over"], s["seed"]) == (0, 0, False, str(SEED))
    assert s["legal"] == [a.name.lower() for a in g.legal_actions()]
    assert client.get(f"/api/games/{s['id']}").json() == s


def test_new_game__seed_as_string_and_random_seed(client: TestClient) -> None:
    assert new(client, seed=str(SEED))["seed"] == str(SEED)
    assert new(client)["seed"] != new(client)["seed"]


def test_move_and_undo__follow_the_game(client: TestClient) -> None:
    gid = new(client, seed=SEED)["id"]
    g = Game(seed=SEED)
    for a in (Action.LEFT, Action.DOWN, 2):
        r = client.post(
            f"/api/games/{gid}/move", json={"action": a.name.lower() if isinstance(a, Action) else a}
        )
        assert r.status_code == 200, r.text
        g.step(a)
        assert r.json()["board"] == to_tiles(g.board).tolist() and r.json()["score"] == g.score
    r = client.post(f"/api/games/{gid}/undo", json={})
    assert r.json()["moves"] == 2
    g2 = Game(seed=SEED)
    g2.step(Action.LEFT)
    g2.step(Action.DOWN)
    assert r.json()["board"] == to_tiles(g2.board).tolist()


def test_hint__gives_action_and_move_values(client: TestClient) -> None:
    s = new(client, seed=SEED)
    r = client.post(f"/api/games/{s['id']}/hint", json={"config": {"bonus": 1.5}})
    assert r.status_code == 200, r.text
    hint = r.json()["hint"]
    board = Game(seed=SEED).board
    assert hint["agent"] == "ui-test-greedy"
    assert hint["values"] == {
        a.name.lower(): move(board, a)[1] + 1.5 for a in (Action.RIGHT, Action.DOWN, Action.LEFT)
    }
    assert hint["action"] == max(
        hint["values"], key=lambda k: (hint["values"][k], -["up", "right", "down", "left"].index(k))
    )
    assert r.json()["moves"] == 0


def test_ai__plays_steps_until_over_and_record_replays(client: TestClient) -> None:
    gid = new(client, seed=SEED)["id"]
    r = client.post(f"/api/games/{gid}/ai", json={"agent": "random", "steps": 5})
    assert r.status_code == 200 and r.json()["moves"] == 5 and r.json()["agent"] == "random"
    while not r.json()["over"]:
        r = client.post(f"/api/games/{gid}/ai", json={"steps": 100})
        assert r.status_code == 200, r.text
    state = r.json()
    rec = GameRecord.from_dict(client.get(f"/api/games/{gid}/record").json())
    assert rec.moves == state["moves"] and rec.final_score == state["score"]
    assert rec.agent == "random" and rec.meta["source"] == "serve"
    assert rec.replay().scores[-1] == state["score"]
    r = client.post(f"/api/games/{gid}/ai", json={"steps": 1})
    assert r.status_code == 200 and r.json()["hint"]["action"] is None


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("move", b"{not json", 400, "not valid JSON"),
        ("move", b"[1, 2]", 400, "must be a JSON object"),
        (
            "move",
            json.dumps({"action": "up"}).encode(),
            409,
            "up does not move any tile; legal moves: right, down, left",
        ),
        ("move", json.dumps({"action": "sideways"}).encode(), 400, "unknown action 'sideways'"),
        ("move", json.dumps({"action": 7}).encode(), 400, "out of range"),
        ("move", json.dumps({"action": True}).encode(), 400, "action must be"),
        ("move", json.dumps({}).encode(), 400, "missing 'action'"),
        ("move", json.dumps({"action": "left", "x": 1}).encode(), 400, "unknown field(s) x; allowed: action"),
        ("move", json.dumps({"action": 0}).encode(), 409, "up does not move any tile"),
        ("undo", b"", 409, "nothing to undo"),
        ("undo", json.dumps({"steps": 1}).encode(), 400, "unknown field(s) steps; allowed: none"),
        ("hint", json.dumps({"steps": 1}).encode(), 400, "unknown field(s) steps; allowed: agent, config"),
        (
            "hint",
            json.dumps({"agent": "alphago"}).encode(),
            400,
            "unknown agent 'alphago'; available agents:",
        ),
        ("hint", json.dumps({"agent": 3}).encode(), 400, "'agent' must be an agent name"),
        (
            "hint",
            json.dumps({"config": {"depthh": 2}}).encode(),
            400,
            "has no web setting 'depthh'; settings: bonus",
        ),
        ("hint", json.dumps({"config": [1]}).encode(), 400, "'config' must be an object"),
        ("ai", json.dumps({"steps": 0}).encode(), 400, "'steps' must be a whole number in 1..100"),
        ("ai", json.dumps({"steps": 1000}).encode(), 400, "'steps' must be"),
        ("ai", b'{"steps": true}', 400, "'steps' must be a whole number in 1..100, got true"),
        ("ai", b'{"steps": 2.0}', 400, "'steps' must be a whole number in 1..100, got 2.0"),
        ("ai", b'{"steps": "3"}', 400, "'steps' must be a whole number in 1..100, got \"3\""),
        ("ai", b"x" * (MAX_BODY_BYTES + 1), 413, "too large"),
    ],
)
def test_bad_requests__4xx_with_message_and_server_stays_up(
    client: TestClient, path: str, body: bytes, status: int, message: str
) -> None:
    s = new(client, seed=SEED)
    r = client.post(
        f"/api/games/{s['id']}/{path}", content=body, headers={"Content-Type": "application/json"}
    )
    assert r.status_code == status, r.text
    assert message in r.json()["error"]
    after = client.get(f"/api/games/{s['id']}")
    assert after.status_code == 200 and after.json()["board"] == s["board"]


def test_bad_requests__new_game_and_unknown_game(client: TestClient) -> None:
    for body, message in [
        ({"seed": -1}, "'seed' must be a whole number"),
        ({"seed": "abc"}, "'seed' must be a whole number"),
        ({"seed": 1.5}, "'seed' must be"),
        ({"seed": True}, "'seed' must be a whole number in 0..2**64-1, got true"),
        ({"seed": 2**64}, "'seed' must be a whole number in 0..2**64-1, got 18446744073709551616"),
        ({"seed": "7" * 31}, "'seed' must be a whole number in 0..2**64-1, got \"7777"),
        ({"sed": 1}, "unknown field(s) sed"),
        ({"agent": "nope"}, "unknown agent 'nope'"),
    ]:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and message in r.json()["error"], r.text
    r = client.post("/api/games/ffff/move", json={"action": "left"})
    assert r.status_code == 404 and "no game 'ffff'" in r.json()["error"]


def test_oversized_declared_length__413(client: TestClient) -> None:
    gid = new(client, seed=SEED)["id"]
    chunks = iter([b"{" + b" " * 1024] * 20)
    r = client.post(f"/api/games/{gid}/move", content=chunks)
    assert r.status_code == 413 and "too large" in r.json()["error"]


def test_store__drops_least_recently_used_games() -> None:
    c = local_client(create_app(default_agent="ui-test-greedy", max_games=2, extra_agents=WEB_TEST_AGENTS))
    a, b = new(c, seed=1)["id"], new(c, seed=2)["id"]
    c.get(f"/api/games/{a}")
    new(c, seed=3)
    assert c.get(f"/api/games/{a}").status_code == 200
    assert c.get(f"/api/games/{b}").status_code == 404


def test_page__served_without_cdn(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for asset in ("/static/app.js", "/static/style.css"):
        r = client.get(asset)
        assert r.status_code == 200
    for text in (page.text, client.get("/static/app.js").text, client.get("/static/style.css").text):
        assert "http://" not in text and "https://" not in text


def test_agents__lists_registered_agents_with_settings(client: TestClient) -> None:
    data = client.get("/api/agents").json()
    by_name = {a["name"]: a for a in data["agents"]}
    assert data["default"] == "ui-test-greedy"
    assert by_name["ui-test-greedy"]["config"] == {"bonus": 0.0}
    assert {"random", "greedy", "expectimax"} <= set(by_name)


def test_montecarlo_playouts_total__listed_accepted_and_changes_the_agent(client: TestClient) -> None:
    mc = next(a for a in client.get("/api/agents").json()["agents"] if a["name"] == "montecarlo")
    assert mc["config"]["playouts_total"] is None
    assert mc["ranges"]["playouts_total"] == "a whole number in 1..8000 or null"  # 4 x playouts' 2000
    assert "simulation_size" in mc["help"]["playouts_total"]
    gid = new(client, seed=SEED)["id"]  # UP is illegal: three legal first moves

    def values(config: dict) -> dict:
        body = {"agent": "montecarlo", "config": {"seed": 3, **config}}
        r = client.post(f"/api/games/{gid}/hint", json=body)
        assert r.status_code == 200, r.text
        return r.json()["hint"]["values"]

    # the seed's budget: one playout in all tries one first move; one playout per first move tries all three
    assert len(values({"playouts_total": 1})) == 1
    assert len(values({"playouts": 1})) == 3
    assert len(values({"playouts": 1, "playouts_total": None})) == 3
    assert len(values({"playouts_total": 8000})) == 3
    assert client.get(f"/api/games/{gid}").json()["moves"] == 0


@pytest.mark.parametrize(("config", "message"), [
    (b'{"playouts_total": 8001}', "playouts_total must be a whole number in 1..8000 or null"),
    (b'{"playouts_total": 0}', "setting playouts_total=0 is out of range"),
    (b'{"playouts_total": 2.5}', "setting playouts_total=2.5 is out of range"),
    (b'{"playouts_total": "all"}', "setting playouts_total='all' is out of range"),
    (b'{"playouts_total": NaN}', "NaN"),
    (b'{"playouts_total": Infinity}', "Infinity"),
])
def test_montecarlo_playouts_total__out_of_range_is_400_before_any_work(
    client: TestClient, config: bytes, message: str
) -> None:
    s = new(client, seed=SEED)
    body = b'{"agent": "montecarlo", "steps": 1, "config": ' + config + b"}"
    r = client.post(f"/api/games/{s['id']}/ai", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert message in r.json()["error"]
    assert client.get(f"/api/games/{s['id']}").json()["moves"] == 0


def test_hold__a_cancelled_agent_request_keeps_its_game_until_its_work_ends() -> None:
    """The one lock idiom (``with game.hold()``) spans the agent work on the pool: a request cancelled
    while its work runs does not let go of the game (or its queue slot) before the work ends, and
    work cancelled before it started never runs and frees both at once."""
    import asyncio
    import threading

    from ai2048.ui.session import PlaySession
    from ai2048.ui.state import Limits, StoredGame, WebState

    web = WebState(Limits(workers=1, max_queue=2), {}, ("random", {}))
    ran: list[str] = []
    started, release = threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        release.wait(10)
        ran.append("slow")

    async def request(game: StoredGame, work) -> None:
        with game.hold():
            await web.off_loop(work)

    async def main() -> None:
        first, second = (StoredGame(PlaySession(seed=i), threading.Lock()) for i in (1, 2))
        running = asyncio.create_task(request(first, slow))
        while not started.is_set():
            await asyncio.sleep(0.01)
        waiting = asyncio.create_task(request(second, lambda: ran.append("never")))
        await asyncio.sleep(0.05)
        assert web.inflight == 2 and first.lock.locked() and second.lock.locked()
        waiting.cancel()
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting  # not started: dropped at once
        assert not second.lock.locked() and web.inflight == 1
        await asyncio.sleep(0.1)
        assert not running.done() and first.lock.locked()  # its work runs: the game stays held
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await running
        assert not first.lock.locked() and web.inflight == 0 and ran == ["slow"]

    asyncio.run(main())


def _set_position(client: TestClient, gid: str, tiles: list[int]) -> None:
    """Put game ``gid`` at the exact position of ``tiles`` (rules version 1: tiles past 32768)."""
    from ai2048.board_io import exact_from_tiles

    client.app.state.web.store.get(gid).session.start_at(*exact_from_tiles(tiles))


def test_web__tiles_past_32768_are_sent_exactly_and_two_32768s_merge_on_a_move(client: TestClient) -> None:
    gid = new(client, seed=SEED)["id"]
    _set_position(client, gid, [32768, 32768, 0, 0, 2] + [0] * 11)
    state = client.get(f"/api/games/{gid}").json()
    assert state["board"][0] == [32768, 32768, 0, 0] and "left" in state["legal"]
    r = client.post(f"/api/games/{gid}/move", json={"action": "left"})
    assert r.status_code == 200, r.text
    after = r.json()
    assert after["board"][0][0] == 65536 and (after["score"], after["max_tile"]) == (65536, 65536)
    gid = new(client, seed=SEED)["id"]
    _set_position(client, gid, [131072, 65536, 32768, 2] + [0] * 12)
    state = client.get(f"/api/games/{gid}").json()
    assert state["board"][0] == [131072, 65536, 32768, 2] and state["max_tile"] == 131072


def test_web__ai_plays_the_move_the_view_lacks_and_reaches_131072(client: TestClient) -> None:
    gid = new(client, seed=SEED)["id"]
    # full board: only the two 65536s merge; beside the 16384 the agent's view has no move
    _set_position(client, gid, [65536, 65536, 16384, 2, 2, 4, 8, 16, 4, 8, 16, 32, 8, 16, 32, 64])
    r = client.post(f"/api/games/{gid}/ai", json={"steps": 1})
    assert r.status_code == 200, r.text
    state = r.json()
    assert state["hint"]["action"] == "right" and state["board"][0][1:] == [131072, 16384, 2]
    assert (state["score"], state["max_tile"], state["moves"]) == (131072, 131072, 1)


def test_page__style_colours_every_tile_up_to_131072_as_colors_py(client: TestClient) -> None:
    from ai2048.ui.colors import TILE_COLORS

    css = client.get("/static/style.css").text
    for e in (16, 17):
        assert f'.cell[data-e="{e}"] {{ background: {TILE_COLORS[e][0]};' in css
