"""The web app's door: only this machine's names, only its own page, bounded bodies.

:class:`Guard` is ASGI middleware in front of every request (``ai2048 serve`` and ``ai2048
serve-env`` put it there): a Host header other than the loopback names (or the ``--host`` and
``--allow-host`` names) is answered 421 (DNS rebinding), another Origin or a cross-site fetch 403,
a body over ``max_body`` 413, a body not sent within ``body_timeout`` 408, an API POST that is not
``application/json`` 415. WebSocket handshakes get the same Host and Origin checks.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from fastapi.responses import JSONResponse

MAX_BODY_BYTES = 16 * 1024
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")
WILDCARD = ("", "0.0.0.0", "::", "[::]")


def _host_name(host: str) -> str:
    """``"localhost:8048"`` -> ``"localhost"``; ``"[::1]:8048"`` -> ``"[::1]"`` (lower case).

    Anything after the name but a ``:PORT`` of ASCII digits (or an empty one) leaves the header
    whole (``"[::1]evil"``, ``"localhost:80x"``), so it matches no allowed name.
    """
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        name, rest = (host[: end + 1], host[end + 1 :]) if end > 0 else (host, "")
    elif host.count(":") == 1:
        name, rest = host.split(":")[0], host[host.index(":") :]
    else:
        return host
    port = rest[1:]
    if rest and not (rest.startswith(":") and (port == "" or (port.isascii() and port.isdigit()))):
        return host
    return name


def allowed_hosts(host: str | None, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """Host names the server answers: loopback, plus ``host`` (unless a wildcard) and ``extra``."""
    names = set(LOOPBACK)
    if host is not None and host not in WILDCARD:
        names.add(f"[{host}]" if ":" in host and not host.startswith("[") else host.lower())
    names.update(h.lower() for h in extra)
    return frozenset(names)


class Guard:
    """ASGI middleware in front of every request: Host (421), Origin and Sec-Fetch-Site (403), body
    size (413) and, for API posts (paths under ``json_paths``), the JSON content type (415). It reads
    a POST body once, bounded, and hands it on. A WebSocket handshake gets the same Host and Origin
    checks (a browser lets any page open a WebSocket to loopback): refused with the status and
    message where the server supports it, else closed before it is accepted."""

    def __init__(self, app: Any, hosts: frozenset[str], body_timeout: float = 10.0,
                 max_body: int = MAX_BODY_BYTES, json_paths: str = "/api/") -> None:
        self.app = app
        self.hosts = hosts
        self.body_timeout = body_timeout
        self.max_body = max_body
        self.json_paths = json_paths

    def problem(self, scope: dict[str, Any], headers: dict[str, str]) -> tuple[int, str] | None:
        names = [k.lower() for k, _ in scope["headers"]]
        for twice in (b"host", b"origin"):
            if names.count(twice) > 1:
                return 400, (f"the request has {names.count(twice)} {twice.decode().title()} headers; "
                             "send one")
        host = headers.get("host", "")
        if _host_name(host) not in self.hosts:
            return 421, (f"this server answers only to {', '.join(sorted(self.hosts))} "
                         f"(Host header {host[:60]!r}); start it with --host or --allow-host to serve "
                         "another name")
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in (f"http://{host.lower()}", f"https://{host.lower()}"):
            return 403, (f"cross-origin request from {origin[:60]!r} refused: only the page served here may "
                         "use this API")
        if headers.get("sec-fetch-site", "same-origin") == "cross-site":
            return 403, "cross-site request refused: only the page served here may use this API"
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            return 413, f"request body too large: at most {self.max_body} bytes"
        return None

    async def refuse_websocket(self, scope: dict[str, Any], receive: Any, send: Any,
                               found: tuple[int, str]) -> None:
        """Answer a refused WebSocket handshake: the HTTP status and message, or a close (403)."""
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        if "websocket.http.response" in scope.get("extensions", {}):
            body = json.dumps({"error": found[1]}).encode()
            await send({"type": "websocket.http.response.start", "status": found[0],
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        found = self.problem(scope, headers)
        if scope["type"] == "websocket":
            if found is not None:
                await self.refuse_websocket(scope, receive, send, found)
            else:
                await self.app(scope, receive, send)
            return
        if found is None and scope["method"] == "POST":
            body, more = b"", True
            deadline = time.monotonic() + self.body_timeout
            while more:
                try:  # a client trickling its body (slowloris) gives up its connection, not a worker
                    message = await asyncio.wait_for(receive(), max(0.0, deadline - time.monotonic()))
                except asyncio.TimeoutError:
                    response = JSONResponse(
                        {"error": f"request body not received within {self.body_timeout:g} s"},
                        status_code=408, headers={"Connection": "close"})
                    await response(scope, receive, send)
                    return
                if message["type"] == "http.disconnect":
                    return
                body += message.get("body", b"")
                more = message.get("more_body", False)
                if len(body) > self.max_body:
                    found = 413, f"request body too large: at most {self.max_body} bytes"
                    break
            ctype = headers.get("content-type", "").split(";")[0].strip().lower()
            if found is None and scope["path"].startswith(self.json_paths) and ctype != "application/json":
                found = 415, ("API requests must be sent as Content-Type: application/json, "
                              f"got {ctype[:60] or 'none'!r}")
            if found is None:
                replayed = False

                async def replay() -> dict[str, Any]:
                    nonlocal replayed
                    if not replayed:
                        replayed = True
                        return {"type": "http.request", "body": body, "more_body": False}
                    return await receive()  # type: ignore[no-any-return]

                await self.app(scope, replay, send)
                return
        if found is not None:
            await JSONResponse({"error": found[1]}, status_code=found[0])(scope, receive, send)
            return
        await self.app(scope, receive, send)


__all__ = ["LOOPBACK", "MAX_BODY_BYTES", "WILDCARD", "Guard", "allowed_hosts"]
