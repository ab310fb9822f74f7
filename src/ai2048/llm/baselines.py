"""ai2048's agents as players behind the language-model doors: each move goes in as text, phrased the
ways models phrase it, so the reader, the env and the servers are exercised by real players.

:func:`play_text_env` plays one game of the text env (``ai2048/TextGame2048-v0``) with any agent;
:func:`play_openenv` plays one through an OpenEnv client of ``ai2048 serve-env``. The scoring table
in docs/llm.md comes from :func:`play_text_env` (``benchmarks/llm_baselines.py``).
"""

from __future__ import annotations

from typing import Any

from ai2048.board_io import exact_from_tiles
from ai2048.game import Game
from ai2048.rules import ACTION_NAMES

PHRASINGS = ("{}", "Move: {}", '{{"move": "{}"}}', "Merging matters most.\nMove: **{}**",
             "<answer>{}</answer>", "Thinking it over...\n{}",
             '{{"name": "move", "arguments": {{"direction": "{}"}}}}')
"""How an agent's move is written, in turn: bare, labelled, JSON, reasoning then a label, a tag, a last
line, a tool call."""


def phrase(action: int, turn: int) -> str:
    """``action`` written the ``turn``-th way of :data:`PHRASINGS` (upper case every third turn)."""
    name = ACTION_NAMES[int(action)]
    return PHRASINGS[turn % len(PHRASINGS)].format(name.upper() if turn % 3 == 2 else name)


def agent_move(agent: Any, board: int, supers: int = 0) -> int:
    """The move ``agent`` plays on the exact position ``(board, supers)``: it is given the position's
    :attr:`~ai2048.game.Game.view` (two equal tiles of 32768 or more shown as 16384s, so it plans their
    merge), as every game loop gives it, and where the view has no move the one every loop plays unasked."""
    view, forced = Game(seed=0, board=board, supers=supers).to_play()
    return forced if forced >= 0 else int(agent.act(view))


def _summary(score: int, moves: int, max_tile: int, invalid: int, ended_by: str | None) -> dict[str, Any]:
    return {"score": score, "moves": moves, "max_tile": max_tile, "invalid": invalid, "ended_by": ended_by}


def play_text_env(agent: Any, env: Any, seed: int, max_steps: int = 100_000) -> dict[str, Any]:
    """One game of the text env ``env`` (reset with ``seed``) with ``agent``, its moves phrased as text;
    returns score, moves, max tile, invalid answers and how it ended."""
    if hasattr(agent, "reset"):
        agent.reset(seed)
    _, info = env.reset(seed=seed)
    invalid = 0
    for turn in range(max_steps):
        move = agent_move(agent, info["board"], info.get("supers", 0))
        _, _, terminated, truncated, info = env.step(phrase(move, turn))
        invalid += info["invalid"] is not None
        if terminated or truncated:
            break
    return _summary(info["score"], info["moves"], info["max_tile"], invalid, info.get("ended_by"))


def play_openenv(agent: Any, client: Any, seed: int, max_steps: int = 100_000) -> dict[str, Any]:
    """One game through a synchronous OpenEnv client (``Game2048Client(...).sync()``, connected)."""
    from ai2048.llm.openenv_env import Game2048Action

    if hasattr(agent, "reset"):
        agent.reset(seed)
    result = client.reset(seed=seed)
    invalid = 0
    for turn in range(max_steps):
        move = agent_move(agent, *exact_from_tiles(result.observation.board))
        result = client.step(Game2048Action(message=phrase(move, turn)))
        invalid += result.observation.invalid is not None
        if result.done:
            break
    obs = result.observation
    return _summary(obs.score, obs.moves, obs.max_tile, invalid, obs.ended_by)


__all__ = ["PHRASINGS", "agent_move", "phrase", "play_openenv", "play_text_env"]
