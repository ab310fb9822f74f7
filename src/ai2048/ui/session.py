"""One interactive game with undo, hints and AI moves: the state behind the terminal and web UIs.

Both front ends hold a :class:`PlaySession` and only draw it, so they behave the same way and the
game logic is tested once.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from ai2048.agents import make_agent
from ai2048.game import IllegalMoveError
from ai2048.records import GameRecord, GameRecorder
from ai2048.rules import P_TWO, Action

ACTION_KEYS: dict[str, Action] = {
    "up": Action.UP,
    "right": Action.RIGHT,
    "down": Action.DOWN,
    "left": Action.LEFT,
}


def parse_action(value: Any) -> Action:
    """An action from ``0..3``, an :class:`Action`, or a name (``"up"``, ``"LEFT"``); else ValueError."""
    if isinstance(value, str):
        key = value.strip().lower()
        if key in ACTION_KEYS:
            return ACTION_KEYS[key]
        raise ValueError(f"unknown action {value!r}; use up, right, down or left (or 0..3)")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"action must be a name (up/right/down/left) or an int 0..3, "
                        f"got {type(value).__name__}")
    if not 0 <= value <= 3:
        raise ValueError(f"action {value} is out of range: use 0..3 (UP=0, RIGHT=1, DOWN=2, LEFT=3)")
    return Action(value)


@dataclass(frozen=True)
class Hint:
    """What an agent would play here and why: its action and its value for each legal move."""

    agent: str
    action: Action | None
    values: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "action": self.action.name.lower() if self.action is not None else None,
            "values": self.values,
        }

    def describe(self) -> str:
        """``"expectimax: LEFT  (left 1234.5, up 1100.0)"``."""
        if self.action is None:
            return f"{self.agent}: no legal move"
        vals = ", ".join(f"{k} {format_value(v)}" for k, v in sorted(self.values.items(), key=_by_value))
        return f"{self.agent}: {self.action.name}" + (f"  ({vals})" if vals else "")


def format_value(v: float | None) -> str:
    """A move value for people: ``1,585,010`` for big values, 4 significant digits for small, ``-`` for
    none."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def _by_value(item: tuple[str, float | None]) -> float:
    return -(item[1] if item[1] is not None else -math.inf)


def _clean_values(values: dict[Any, Any]) -> dict[str, float | None]:
    """Move values as {lower-case move name: finite float or None} (JSON has no inf/nan)."""
    out: dict[str, float | None] = {}
    for k, v in (values or {}).items():
        name = Action(k).name.lower() if isinstance(k, int) else str(k).lower()
        f = float(v)
        out[name] = f if math.isfinite(f) else None
    return out


class PlaySession:
    """A game a person plays, with undo, a hint agent and AI moves; writes records on request."""

    def __init__(
        self,
        seed: int | None = None,
        p_two: float = P_TWO,
        agent: str = "expectimax",
        agent_config: dict[str, Any] | None = None,
        max_undo: int | None = None,
    ) -> None:
        self.p_two = p_two
        self.max_undo = max_undo  # moves that can be taken back (None: all; the web server bounds it)
        self.recorder = GameRecorder(seed, p_two, max_undo=max_undo)
        self.agent_name = agent
        self.agent_config = dict(agent_config or {})
        self._agent_key = ""
        self._agent_obj: Any = None  # the one agent this session built (a new setting replaces it)
        self.last_hint: Hint | None = None
        self.ai_moves = 0
        self.from_position = False  # started at a given position (start_at): no replayable record

    # state
    @property
    def board(self) -> int:
        """The board (a 15 is a tile of 32768 or more: its exact value is in :attr:`supers`)."""
        return self.recorder.board

    @property
    def supers(self) -> int:
        """The exact values of the board's tiles of 32768 or more (``Game.supers``)."""
        return self.recorder.game.supers

    @property
    def score(self) -> int:
        return self.recorder.game.score

    @property
    def moves(self) -> int:
        return self.recorder.game.moves

    @property
    def max_tile(self) -> int:
        return self.recorder.game.max_tile

    @property
    def seed(self) -> int:
        return self.recorder.seed

    @property
    def is_over(self) -> bool:
        return self.recorder.game.is_over

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot: exact tile values [4][4] (up to 131072), score, moves, best tile, legal
        moves, seed."""
        return {
            "board": self.recorder.game.tiles.tolist(),
            "score": self.score,
            "moves": self.moves,
            "max_tile": self.max_tile,
            "over": self.is_over,
            "legal": [a.name.lower() for a in self.recorder.game.legal_actions()],
            "can_undo": self.recorder.can_undo,
            "seed": str(self.seed),
            "agent": self.agent_name,
            "agent_config": self.agent_config,
        }

    # actions
    def new_game(self, seed: int | None = None) -> None:
        """Start again (a fresh random seed unless one is given)."""
        self.recorder = GameRecorder(seed, self.p_two, max_undo=self.max_undo)
        self.last_hint = None
        self.ai_moves = 0
        self.from_position = False
        if self._agent_obj is not None and hasattr(self._agent_obj, "reset"):
            self._agent_obj.reset(self.seed)

    def start_at(self, board: Any, supers: Any = 0) -> None:
        """Play this new game on from the exact position ``(board, supers)`` (checked by
        :func:`ai2048.board_io.check_position`; tiles past 32768 in ``supers``, as ``Game.supers``); the
        seed still draws the spawns. Such a game is no replay of its seed, so :meth:`record` refuses it."""
        if self.moves:
            raise ValueError(f"start_at sets the position of a new game; this one has {self.moves} moves: "
                             "start a new game first")
        self.recorder.game.set_position(board, supers)
        self.from_position = True
        self.last_hint = None

    def move(self, action: Any) -> bool:
        """Play ``action``; False (and nothing changes) if it does not move any tile."""
        try:
            self.recorder.step(parse_action(action))
        except IllegalMoveError:
            return False
        self.last_hint = None
        return True

    def undo(self) -> bool:
        """Take back the last move; False if there is none."""
        done = self.recorder.undo()
        if done:
            self.last_hint = None
        return done

    def set_agent(self, name: str, config: dict[str, Any] | None = None) -> None:
        """Choose the hint/AI agent; builds it now so a bad name or config fails here, clearly."""
        config = dict(config or {})
        self._agent(name, config)
        self.agent_name, self.agent_config = name, config

    def _agent(self, name: str, config: dict[str, Any]) -> Any:
        """The agent for (name, config): kept while they stay the same, so a session holds one agent."""
        key = name + json.dumps(config, sort_keys=True, default=str)
        if key != self._agent_key:
            agent = make_agent(name, **config)
            if hasattr(agent, "reset"):
                agent.reset(self.seed)
            self._agent_key, self._agent_obj = key, agent
        return self._agent_obj

    def position_seed(self) -> int:
        """A seed for this game and move number: an agent shared between games (the web server's) is
        reseeded with it before each decision, so its hint here does not depend on other games."""
        return (self.seed ^ (self.moves * 0x9E3779B97F4A7C15)) % (1 << 63)

    def hint(self, agent: Any = None) -> Hint:
        """What the current agent would play now, with its move values.

        ``agent``: an agent built elsewhere (the web server's shared, bounded cache) to use instead
        of the session's own; it is reseeded with :meth:`position_seed` before ``act`` and ``explain``.
        """
        shared = agent is not None
        if agent is None:
            agent = self._agent(self.agent_name, self.agent_config)
        if self.is_over:
            hint = Hint(self.agent_name, None, {})
        else:
            # the agent plays the game's view (two equal tiles of 32768 or more shown as 16384s, so it
            # plans their merge); where the view has no move, the move every game loop plays unasked
            view, forced = self.recorder.game.to_play()
            if forced >= 0:
                hint = Hint(self.agent_name, Action(forced), {})
            else:
                reset = getattr(agent, "reset", None) if shared else None
                if reset is not None:
                    reset(self.position_seed())
                action = Action(int(agent.act(view)))
                explain = getattr(agent, "explain", None)
                if reset is not None and explain is not None:
                    reset(self.position_seed())
                values = _clean_values(explain(view)) if explain is not None else {}
                hint = Hint(self.agent_name, action, values)
        self.last_hint = hint
        return hint

    def ai_move(self, agent: Any = None) -> Hint:
        """Let the agent play one move; returns the hint it acted on (action None if the game is over)."""
        hint = self.hint(agent)
        if hint.action is not None:
            if not self.move(hint.action):
                sup = f" (supers {self.supers:#x})" if self.supers else ""
                raise ValueError(
                    f"agent {self.agent_name!r} chose {hint.action.name}, which is illegal on board "
                    f"{self.board:#018x}{sup}"
                )
            self.ai_moves += 1
            self.last_hint = hint
        return hint

    def record(self, source: str) -> GameRecord:
        """The game so far as a record; ``meta`` says who played (``source``) and how many AI moves."""
        if self.from_position:
            raise ValueError("this game started at a given position (start_at), so its seed and moves do not "
                             "replay it: it has no record")
        agent = self.agent_name if self.ai_moves else "human"
        config = self.agent_config if self.ai_moves else {}
        return self.recorder.record(agent=agent, agent_config=config,
                                    meta={"source": source, "ai_moves": self.ai_moves})
