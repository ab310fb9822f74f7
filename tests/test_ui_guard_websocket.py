"""``ui.guard.Guard`` in front of a WebSocket route (as ``ai2048 serve-env`` uses it): a handshake
for another Host (DNS rebinding) or from another site (a browser page opening a socket to loopback)
is refused with the status and reason a request would get; a same-site handshake is served. The
guard's body limit and JSON-path settings apply to plain requests."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="fastapi comes with the 'ui' extra: pip install 'ai2048[ui]'")

from fastapi import FastAPI, WebSocket  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402
from starlette.testclient import WebSocketDenialResponse  # noqa: E402

from ai2048.ui.guard import Guard, allowed_hosts  # noqa: E402


def _client(**guard) -> TestClient:
    app = FastAPI()

    @app.websocket("/ws")
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        await ws.send_text(await ws.receive_text())
        await ws.close()

    @app.post("/step")
    async def step() -> dict[str, bool]:
        return {"ok": True}

    app.add_middleware(Guard, hosts=allowed_hosts(None, ("testserver",)), **guard)  # the test client's name
    return TestClient(app)


@pytest.mark.parametrize(("headers", "status", "says"), [
    ({"host": "evil.example"}, 421, "this server answers only to"),
    ({"origin": "http://evil.example"}, 403, "cross-origin request from 'http://evil.example' refused"),
    ({"sec-fetch-site": "cross-site"}, 403, "cross-site request refused"),
])
def test_websocket__handshakes_for_other_hosts_or_sites_are_refused(headers, status, says):
    client = _client()
    with pytest.raises(WebSocketDenialResponse) as refused, client.websocket_connect("/ws", headers=headers):
        pass
    assert refused.value.status_code == status and says in refused.value.json()["error"]


def test_websocket__a_same_site_handshake_is_served():
    with _client().websocket_connect("/ws", headers={"origin": "http://testserver"}) as ws:
        ws.send_text("hello")
        assert ws.receive_text() == "hello"


def test_guard__body_limit_and_json_paths_are_settings():
    c = _client(max_body=64, json_paths="/")
    assert c.post("/step", json={"a": "x" * 10}).json() == {"ok": True}
    r = c.post("/step", json={"a": "x" * 100})
    assert r.status_code == 413 and "at most 64 bytes" in r.json()["error"]
    assert c.post("/step", content=b"{}", headers={"content-type": "text/plain"}).status_code == 415
    assert _client().post("/step", content=b"{}", headers={"content-type": "text/plain"}).status_code == 200
