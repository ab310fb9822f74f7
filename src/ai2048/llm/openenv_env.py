"""The text env as an OpenEnv environment, and its client (the ``llm`` extra: openenv-core).

:class:`Game2048Environment` is what ``ai2048 serve-env`` serves: one
:class:`~ai2048.envs.text.TextGame2048Env` per session. An action is the model's answer as text
(:class:`Game2048Action`, ``message``); an observation (:class:`Game2048Observation`) carries the
board as text (the prompt), the same board as a grid, the score, the legal moves and what was
wrong with the last answer, with ``reward`` and ``done``. :class:`Game2048Client` is openenv-core's
``EnvClient`` for it::

    with Game2048Client(base_url="http://127.0.0.1:8049").sync() as env:
        result = env.reset(seed=3)
        result = env.step(Game2048Action(message="Move: left"))
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from ai2048.board_io import exact_tiles
from ai2048.envs.text import TextGame2048Env


class Game2048Action(Action):
    """The model's answer: a move as text (``"up"``, ``"Move: left"``, ``{"move": "down"}``, ...)."""

    message: str = Field(..., description="the model's answer, naming one move: up, down, left or right")


class Game2048Observation(Observation):
    """One state of the game as the model sees it (``text``) and as a program reads it (the rest)."""

    text: str = Field("", description="the board as text, with score, moves, legal moves and any note")
    board: list[list[int]] = Field(default_factory=list,
                                   description="exact tile values (up to 131072) by row, 0 for empty")
    score: int = 0
    moves: int = 0
    max_tile: int = 0
    legal_moves: list[str] = Field(default_factory=list)
    move: str | None = Field(None, description="the move the last answer played, if any")
    invalid: str | None = Field(None, description="why the last answer was not played, if it was not")
    invalid_count: int = Field(0, description="invalid answers in a row")
    ended_by: str | None = Field(None, description="game_over, end_rule or invalid, when the episode ended")


class Game2048State(State):
    """The session's episode: id, steps, and the seed it was reset with (None: a fresh one)."""

    seed: int | None = None


class Game2048Environment(Environment):  # type: ignore[type-arg]
    """One text-env game per session; runs on the server's event loop (a step is microseconds of work,
    so no thread is spent on it)."""

    SUPPORTS_CONCURRENT_SESSIONS = True
    REQUIRES_SINGLE_THREAD_EXECUTOR = True  # sessions are built and closed on one shared thread

    def __init__(self, **env_options: Any) -> None:
        super().__init__()
        self.env = TextGame2048Env(**env_options)
        self._state = Game2048State()
        self._started = False

    def _observation(self, text: str, reward: float | None, done: bool,
                     info: dict[str, Any]) -> Game2048Observation:
        return Game2048Observation(
            text=text, board=exact_tiles(info["board"], info.get("supers", 0)).tolist(),
            score=info["score"], moves=info["moves"], max_tile=info["max_tile"],
            legal_moves=list(info["legal_moves"]), move=info["move"],
            invalid=info["invalid"], invalid_count=info["invalid_count"], ended_by=info.get("ended_by"),
            reward=reward, done=done)

    def reset(  # type: ignore[override]
        self, seed: int | None = None, episode_id: str | None = None
    ) -> Game2048Observation:
        """A new game (``seed`` as the Gymnasium env checks it)."""
        text, info = self.env.reset(seed=seed)
        self._started = True
        self._state = Game2048State(episode_id=episode_id, step_count=0, seed=seed)
        return self._observation(text, None, "ended_by" in info, info)  # a seeded start always has a move

    def step(  # type: ignore[override]
        self, action: Game2048Action, timeout_s: float | None = None
    ) -> Game2048Observation:
        """Read and play the answer (the text env's rule for invalid answers)."""
        if not self._started:
            raise ValueError("reset the game before the first step (send a reset message)")
        text, reward, terminated, truncated, info = self.env.step(action.message)
        self._state.step_count += 1
        return self._observation(text, float(reward), bool(terminated or truncated), info)

    async def reset_async(self, seed: int | None = None,  # type: ignore[override]
                          episode_id: str | None = None) -> Game2048Observation:
        return self.reset(seed=seed, episode_id=episode_id)

    async def step_async(self, action: Game2048Action,  # type: ignore[override]
                         timeout_s: float | None = None) -> Game2048Observation:
        return self.step(action)

    @property
    def state(self) -> Game2048State:
        return self._state


class Game2048Client(EnvClient[Game2048Action, Game2048Observation, Game2048State]):
    """openenv-core's WebSocket client for ``ai2048 serve-env`` (``.sync()`` for a blocking one)."""

    def _step_payload(self, action: Game2048Action) -> dict[str, Any]:
        return {"message": action.message}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[Game2048Observation]:
        obs = Game2048Observation(**payload.get("observation", {}), reward=payload.get("reward"),
                                  done=payload.get("done", False))
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> Game2048State:
        return Game2048State(**payload)


__all__ = ["Game2048Action", "Game2048Client", "Game2048Environment", "Game2048Observation",
           "Game2048State"]
