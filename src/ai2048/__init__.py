"""ai2048: a fast 2048 engine, Gymnasium environments and agents that play it.

The public API, re-exported explicitly; internals live behind it.
"""

from __future__ import annotations

from ai2048 import envs
from ai2048.agents import load_agent, make_agent
from ai2048.board_io import decode, encode, from_tiles, render_text, to_tiles
from ai2048.evaluate import EvalResult, evaluate
from ai2048.game import Game, IllegalMoveError, is_over, legal_mask, move, spawn_outcomes
from ai2048.rules import MAX_EXPONENT, P_TWO, RULES_VERSION, Action

__version__ = "0.1.0"

__all__ = [
    "envs",
    "MAX_EXPONENT",
    "P_TWO",
    "RULES_VERSION",
    "Action",
    "EvalResult",
    "Game",
    "IllegalMoveError",
    "decode",
    "encode",
    "evaluate",
    "from_tiles",
    "is_over",
    "legal_mask",
    "load_agent",
    "make_agent",
    "move",
    "render_text",
    "spawn_outcomes",
    "to_tiles",
]
