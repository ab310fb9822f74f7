"""uvicorn's HTTP/1.1 protocol with the two limits it lacks: open connections, and time to send a request.

uvicorn arms no timer while a request's head arrives: a client that connects and sends nothing, or
one header byte every few seconds (slowloris), holds its connection forever, and its keep-alive
timer is cancelled by any byte received. Enough such clients use up the process's file
descriptors and nobody else is served. :func:`protocol_class` gives each connection
``request_timeout`` seconds to send a complete request head (from the connection's start or the
end of the previous response), and closes at once a connection beyond ``max_connections``
(WebSocket connections count too). The body's time is bounded by :class:`ai2048.ui.guard.Guard`;
a WebSocket's by uvicorn's pings (``ai2048 serve-env`` sets them).
"""

from __future__ import annotations

from typing import Any


def protocol_class(max_connections: int = 64, request_timeout: float = 10.0) -> type:
    """An ``uvicorn.Config(http=...)`` protocol class: at most ``max_connections`` open connections,
    ``request_timeout`` seconds for each request head."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):  # type: ignore[misc]
        """uvicorn's h11 protocol with a connection cap and a request-head timeout."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.close()  # too many open: refused before reading anything
                return
            self._arm_head_timer()

        def _arm_head_timer(self) -> None:
            """Close the connection unless a new request head arrives within ``request_timeout``."""
            waiting_after = self.cycle  # the request answered last (None: a fresh connection)

            def expire() -> None:
                if self.cycle is waiting_after and not self.transport.is_closing():
                    self.transport.close()

            old = getattr(self, "_head_timer", None)
            if old is not None:
                old.cancel()
            self._head_timer = self.loop.call_later(request_timeout, expire)

        def connection_lost(self, exc: Exception | None) -> None:
            timer = getattr(self, "_head_timer", None)
            if timer is not None:
                timer.cancel()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            self._arm_head_timer()  # before uvicorn starts a pipelined request: that one is new
            super().on_response_complete()

        def handle_websocket_upgrade(self, event: Any) -> None:
            """The head arrived and the connection is now a WebSocket: its time bounds are the
            WebSocket protocol's (pings), so the head timer must not close it later."""
            timer = getattr(self, "_head_timer", None)
            if timer is not None:
                timer.cancel()
            super().handle_websocket_upgrade(event)

    return GuardedH11Protocol


__all__ = ["protocol_class"]
