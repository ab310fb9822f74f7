"""What the web app's routes share: its caps, its games, its built agents and its agent pool.

One :class:`WebState` per app (``app.state.web``; the routes reach it through a dependency).
Each game is held by one request at a time (:meth:`StoredGame.hold`: a busy game is a 409, never
a wait), each built agent makes one decision at a time (its lock), and agent work runs on a small
thread pool whose queue is bounded (:meth:`WebState.off_loop`: 503 when full). Every setting a
request names is checked once, by :func:`ai2048.ui.limits.check_settings` (:meth:`WebState.check`),
before any work.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

from ai2048.checks import Option, check_fields, setting
from ai2048.ui.limits import WEB_AGENTS, Model, build, check_settings, listing
from ai2048.ui.session import PlaySession

T = TypeVar("T")


@dataclass
class Limits:
    """The server's caps (``ai2048 serve`` options; docs/ui.md explains each)."""

    max_games: int = setting(256, "games kept in memory (least recently used dropped)", lo=1)
    game_ttl: float = setting(3600.0, "seconds an untouched game is kept", lo=0, lo_open=True, why="seconds")
    max_agents: int = setting(8, "built agents kept in memory (least recently used dropped)", lo=1)
    workers: int = setting(2, "threads running agents", lo=1)
    max_queue: int = setting(8, "agent requests running or waiting; more get 503", lo=1)
    budget: float = setting(2.0, "seconds of agent work per request: AI steps stop after it", lo=0,
                            lo_open=True, why="seconds")
    max_connections: int = setting(64, "open connections; more are closed at once (ai2048.ui.protocol)", lo=1)
    request_timeout: float = setting(10.0, "seconds a client may take to send a request's head, and its body",
                                     lo=0, lo_open=True, why="seconds")

    def __post_init__(self) -> None:
        check_fields(self)


class ApiError(Exception):
    """An error answered with ``status`` and a message for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class StoredGame(NamedTuple):
    """A stored game and its lock (``session, lock = store.get(gid)`` unpacks it)."""

    session: PlaySession
    lock: threading.Lock

    @contextmanager
    def hold(self) -> Iterator[PlaySession]:
        """The session, held by this request until the block ends; 409 while another holds it."""
        if not self.lock.acquire(blocking=False):
            raise ApiError(409, "this game is busy (a hint or AI move is running); "
                                "try again when it finishes")
        try:
            yield self.session
        finally:
            self.lock.release()


class GameStore:
    """Games by id: least recently used dropped beyond ``max_games``, idle ones after ``ttl`` seconds;
    one lock per game."""

    def __init__(self, max_games: int = 256, ttl: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_games = max_games
        self.ttl = ttl
        self.clock = clock
        self._games: OrderedDict[str, tuple[StoredGame, float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._games)

    def _expire(self) -> None:
        now = self.clock()
        while self._games:
            gid, (_, seen) = next(iter(self._games.items()))
            if now - seen <= self.ttl:
                break
            del self._games[gid]

    def add(self, session: PlaySession) -> str:
        gid = secrets.token_hex(8)
        with self._lock:
            self._expire()
            self._games[gid] = (StoredGame(session, threading.Lock()), self.clock())
            while len(self._games) > self.max_games:
                self._games.popitem(last=False)
        return gid

    def get(self, gid: str) -> StoredGame:
        """The game ``gid`` (now the most recently used), or 404."""
        with self._lock:
            self._expire()
            if gid not in self._games:
                raise ApiError(404, f"no game {gid[:40]!r} on this server (it may have expired); "
                                    "start a new game")
            game, _ = self._games.pop(gid)
            self._games[gid] = (game, self.clock())
            return game


class AgentCache:
    """Built agents by (name, settings), shared by every game; the least recently used is dropped
    beyond ``max_agents``. Each agent has a lock: one decision at a time."""

    def __init__(self, max_agents: int, models: dict[str, Model]) -> None:
        self.max_agents = max_agents
        self.models = models
        self._agents: OrderedDict[str, tuple[Any, threading.Lock]] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[str, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._agents)

    def get(self, agent: str, config: dict[str, Any]) -> tuple[Any, threading.Lock]:
        """The agent for checked settings, built on first use (in the calling worker thread)."""
        key = agent + json.dumps(config, sort_keys=True)
        with self._lock:
            if key in self._agents:
                self._agents.move_to_end(key)
                return self._agents[key]
            building = self._building.setdefault(key, threading.Lock())
        with building:  # two requests for a new agent build it once
            with self._lock:
                if key in self._agents:
                    return self._agents[key]
            try:
                built = build(agent, config, self.models)
            except BaseException:  # a failed build leaves no entry behind (settings are many: they pile up)
                with self._lock:
                    self._building.pop(key, None)
                raise
            entry = (built, threading.Lock())
            with self._lock:
                self._agents[key] = entry
                self._building.pop(key, None)
                while len(self._agents) > self.max_agents:
                    self._agents.popitem(last=False)
            return entry


def default_choice(agent: str, config: Any, models: dict[str, Model],
                   extra_agents: dict[str, dict[str, Option]] | None = None) -> tuple[str, dict[str, Any]]:
    """The server's default (agent, settings), checked as a request's are, or ValueError
    ``"default agent: ..."`` (``ai2048 serve`` checks its ``--agent`` and ``--set`` with it)."""
    try:
        return check_settings(agent, config, models, extra_agents)
    except ValueError as e:
        raise ValueError(f"default agent: {e}") from None


class WebState:
    """One web app's games, agents, agent pool and caps; the routes' only state."""

    def __init__(self, limits: Limits, models: dict[str, Model], default: tuple[str, dict[str, Any]],
                 extra_agents: dict[str, dict[str, Option]] | None = None) -> None:
        self.limits = limits
        self.models = models
        self.default = default  # (agent, settings), checked by default_choice
        self.extra_agents = extra_agents
        self.agent_names = (*WEB_AGENTS, *(extra_agents or {}))  # models are in ``models``
        self.store = GameStore(limits.max_games, limits.game_ttl)
        self.cache = AgentCache(limits.max_agents, models)
        self._pool = ThreadPoolExecutor(max_workers=limits.workers, thread_name_prefix="ai2048-agent")
        self._slots = threading.BoundedSemaphore(limits.max_queue)
        self._inflight = 0
        self._counting = threading.Lock()
        self._listed: list[dict[str, Any]] | None = None
        self._listing_lock = threading.Lock()

    @property
    def inflight(self) -> int:
        """Agent requests running or waiting on the pool."""
        return self._inflight

    def listing(self) -> list[dict[str, Any]]:
        """``GET /api/agents``'s list, computed once (it imports every agent's module);
        :func:`ai2048.ui.warmup.warm_up` computes it before the server listens."""
        with self._listing_lock:
            if self._listed is None:
                self._listed = listing(self.models, self.extra_agents)
            return self._listed

    def check(self, agent: Any, config: Any) -> tuple[str, dict[str, Any]]:
        """(agent, settings) a request asks for, checked against this server's agents and models and
        their ranges; 400 naming the setting and what is allowed."""
        try:
            return check_settings(agent, config, self.models, self.extra_agents)
        except ValueError as e:
            raise ApiError(400, str(e)) from None

    def agent(self, name: str, config: dict[str, Any]) -> tuple[Any, threading.Lock]:
        """The built agent for checked settings, and its lock; 400 when it cannot be built."""
        try:
            return self.cache.get(name, config)
        except (ValueError, TypeError, FileNotFoundError, ImportError) as e:
            raise ApiError(400, f"cannot build agent {name!r}: {e}") from None

    async def off_loop(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the agent pool; 503 when ``max_queue`` requests are running or waiting.

        It returns only when ``fn`` has ended, or raises CancelledError once it will never start, so
        a game held around it stays held while its work runs; the slot is given back when the work
        ends, so clients that hang up cannot pile work up.
        """
        if not self._slots.acquire(blocking=False):
            raise ApiError(503, f"the server is busy ({self.limits.max_queue} agent requests running or "
                                "waiting); try again")
        with self._counting:
            self._inflight += 1
        future = self._pool.submit(fn)
        future.add_done_callback(self._free_slot)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:  # passed on to ``future``: it is dropped unless it started
            while not future.done():  # started: it runs to its end, and this call with it
                try:
                    await asyncio.wait([asyncio.wrap_future(future)])
                except asyncio.CancelledError:
                    continue
            raise

    def _free_slot(self, _: Future[Any]) -> None:
        with self._counting:
            self._inflight -= 1
        self._slots.release()


__all__ = ["AgentCache", "ApiError", "GameStore", "Limits", "StoredGame", "WebState", "default_choice"]
