"""``TextGame2048Env``: 2048 for language models, registered as ``ai2048/TextGame2048-v1`` (tiles up to
131072; ``-v0`` is the same env with ``rules=0``, capped at 32768).

The observation is the board as text (``obs_format="text"``, the default; the prompt format in
docs/llm.md) or the same state as a JSON object in text (``obs_format="json"``); the action is the
model's answer as text, read by :func:`ai2048.envs.text_actions.parse_move`. An answer that names
no move, or a move that changes nothing, is *invalid*: the board stays, the reward is
``-invalid_penalty``, the observation says what was wrong, and after ``max_invalid`` invalid
answers in a row the next one ends the episode (``terminated``, ``info["ended_by"] == "invalid"``).
That one rule gives the three usual ones: a retry budget (the default, 3), end at the first
(``max_invalid=0``) or a penalty with no end (``max_invalid=None``, ``invalid_penalty > 0``).

``info`` has the single env's keys (``action_mask``, ``score``, ``max_tile``, ``moves``, ``board``,
``supers``, ``illegal``) plus ``legal_moves`` (names), ``move`` (the move played, or None),
``invalid`` (why the answer was not played, or None), ``invalid_kind`` ("unparsable" or
"illegal"), ``invalid_count`` (in a row) and, when the episode ends, ``ended_by``: "game_over" (no
legal move), "end_rule" (``goal_tile`` or ``end_on_full_board``) or "invalid". Seeds and the game
options are the single env's (:class:`EnvOptions`). ``reset(options={"board": ...})`` takes a
packed board (an int, with ``"supers"`` for its tiles past 32768) or a grid of tile values (4 rows
of 4, or 16 in a row; 0 for empty; up to 131072), the values every observation, the OpenEnv server
and the MCP tools show: a board a program was shown resets to that position. A board with no
legal move ends the episode at once (``info["ended_by"] == "game_over"`` from ``reset``; a step
after it changes nothing and says so).
"""

from __future__ import annotations

import json
import string
from dataclasses import fields
from typing import Any

import numpy as np
from gymnasium import spaces

from ai2048 import checks
from ai2048.board_io import exact_from_tiles, exact_tiles
from ai2048.checks import Option
from ai2048.engine.batch import observe_single
from ai2048.envs.env import Game2048Env
from ai2048.envs.options import EnvOptions
from ai2048.envs.text_actions import HOW, MAX_ANSWER_CHARS, AnswerError, move_index
from ai2048.rules import ACTION_NAMES, CAPPED_RULES, MAX_TILE_EXPONENT, RULES_VERSION

OBS_FORMATS = ("text", "json")
_REPLACED = ("obs_mode", "planes", "illegal_action", "illegal_penalty")
OPTION_NAMES = ("obs_format", "max_invalid", "invalid_penalty", "max_chars",
                *(f.name for f in fields(EnvOptions) if f.name not in _REPLACED))
"""Every keyword the text env takes (its own, then the single env's game options it keeps)."""
MAX_OBS_CHARS = 1024
"""Longest observation: the board, its header and legal moves, and a note on an invalid answer."""
CHARSET = string.printable
"""Every character an observation holds (notes quote answers with ASCII escapes)."""

INSTRUCTIONS = (
    "You are playing 2048 on a 4x4 board. A move slides every tile up, down, left or right; two equal "
    "tiles that meet merge into one tile of their sum, and the merged value is added to the score. After "
    "each move a new tile (2, or sometimes 4) appears on an empty cell. A move that changes nothing is "
    "not allowed; the game ends when no move changes the board. Empty cells are shown as '.'. Reply with "
    "one move: up, down, left or right (for example 'Move: left')."
)
"""A system prompt that goes with the text observation (docs/llm.md shows it in use)."""

_LEGAL = [tuple(ACTION_NAMES[a] for a in range(4) if bits >> a & 1) for bits in range(16)]
_LEGAL_TEXT = [", ".join(names) or "none (game over)" for names in _LEGAL]
_ROWS: tuple[dict[int, str], dict[int, str]] = ({}, {})  # row -> its text, 4 and 5 columns a cell
_ROW_TILES: dict[int, tuple[int, ...]] = {}


def _draw_row(row: int, wide: int) -> str:
    exps = ((row >> (4 * c)) & 0xF for c in range(4))
    text = " ".join((str(1 << e) if e else ".").rjust(4 + wide) for e in exps)
    _ROWS[wide][row] = text
    return text


def _row_tiles(row: int) -> tuple[int, ...]:
    tiles = _ROW_TILES.get(row)
    if tiles is None:
        tiles = tuple((1 << e) if e else 0 for e in ((row >> (4 * c)) & 0xF for c in range(4)))
        _ROW_TILES[row] = tiles
    return tiles


def board_text(board: int, max_exponent: int, supers: int = 0) -> str:
    """The board as :func:`ai2048.board_io.render_text` draws it (tile values, '.' for empty, one row
    a line), from a cache of rows: the text env draws one a step. A position with a 65536 or a 131072
    (``supers``, :mod:`ai2048.engine.supertiles`) is drawn from its exact tiles."""
    if supers:
        return _exact_text(board, supers)
    wide = int(max_exponent >= 14)  # 16384 and 32768 need a fifth column
    rows = _ROWS[wide]
    r0, r1, r2, r3 = board & 0xFFFF, board >> 16 & 0xFFFF, board >> 32 & 0xFFFF, board >> 48
    return (f"{rows.get(r0) or _draw_row(r0, wide)}\n{rows.get(r1) or _draw_row(r1, wide)}\n"
            f"{rows.get(r2) or _draw_row(r2, wide)}\n{rows.get(r3) or _draw_row(r3, wide)}")


def _exact_text(board: int, supers: int) -> str:
    """Tile values of an exact position, one row a line, as wide as its widest value (131072: 6)."""
    tiles = exact_tiles(board, supers)
    width = max(4, *(len(str(int(v))) for v in tiles.flat))
    rows = (" ".join(str(int(v)).rjust(width) if v else ".".rjust(width) for v in row) for row in tiles)
    return "\n".join(rows)


def board_grid(board: int, supers: int = 0) -> list[list[int]]:
    """The position as a JSON-ready [4][4] list of exact tile values (0 for empty)."""
    if supers:
        return exact_tiles(board, supers).tolist()
    return [list(_row_tiles((board >> (16 * r)) & 0xFFFF)) for r in range(4)]


def describe(board: int, max_exponent: int, score: int, moves: int, legal_bits: int,
             note: str | None = None, obs_format: str = "text", supers: int = 0) -> str:
    """The observation text: the position (``board`` and its ``supers``) with its score, moves and
    legal moves, and ``note`` (what was wrong with the last answer) when there is one."""
    if obs_format == "json":
        state: dict[str, Any] = {"board": board_grid(board, supers), "score": score, "moves": moves,
                                 "max_tile": (1 << max_exponent) if max_exponent else 0,
                                 "legal_moves": list(_LEGAL[legal_bits])}
        if note is not None:
            state["note"] = note
        return json.dumps(state, separators=(",", ":"))
    text = (f"score {score}  moves {moves}\n{board_text(board, max_exponent, supers)}\n"
            f"legal moves: {_LEGAL_TEXT[legal_bits]}")
    return text if note is None else f"{text}\n{note}"


def describe_board(board: int, score: int = 0, moves: int = 0, note: str | None = None,
                   obs_format: str = "text", supers: int = 0, rules: int = RULES_VERSION) -> str:
    """:func:`describe` for a position alone (its legal moves, under ``rules``, and largest tile read
    with the engine)."""
    bits, m = observe_single(np.uint64(board), np.int64(supers), rules != CAPPED_RULES,
                             np.empty((4, 4), np.uint8))
    return describe(int(board), int(m), score, moves, int(bits), note, obs_format, supers)


_NO_MOVE = "Game over: no move changes this board."
_MAX_INVALID = Option("invalid answers allowed in a row before the next one ends the episode", "whole", lo=0,
                      none="never end, only the penalty",
                      why="invalid answers allowed in a row; 0 ends the episode at the first")


def check_max_invalid(value: Any) -> int | None:
    """``max_invalid`` as an int >= 0 or None, else an error naming the three choices."""
    return _MAX_INVALID.check("max_invalid", value)



class TextGame2048Env(Game2048Env):
    """2048 with text in and text out, for language models (see the module docstring for the rule on
    invalid answers and the ``info`` keys).

    Args:
        obs_format: "text" (the board drawn as text) or "json" (a JSON object in text).
        max_invalid: invalid answers allowed in a row before the next one ends the episode; None never ends.
        invalid_penalty: subtracted from the reward of an invalid answer (finite, >= 0).
        max_chars: longest answer read; a longer one is invalid, unread.
        **options: the single env's game options (reward_mode, goal_tile, p_two, ...; not obs_mode or the
            illegal-action options, which this rule replaces).
    """

    def __init__(self, render_mode: str | None = None, obs_format: str = "text", max_invalid: int | None = 3,
                 invalid_penalty: float = 0.0, max_chars: int = MAX_ANSWER_CHARS, **options: Any) -> None:
        taken = sorted(set(options) & set(_REPLACED))
        if taken:
            raise ValueError(f"{', '.join(taken)}: not options of the text env (its observation is text; "
                             "invalid answers follow max_invalid and invalid_penalty)")
        if obs_format not in OBS_FORMATS:
            raise ValueError(f"obs_format={obs_format!r} is not one of {', '.join(OBS_FORMATS)}")
        pen = checks.number("invalid_penalty", invalid_penalty, 0)
        max_chars = checks.whole("max_chars", max_chars, 1, 1 << 20)
        super().__init__(render_mode=render_mode, **options)
        self.obs_format = obs_format
        self.max_invalid = check_max_invalid(max_invalid)
        self.invalid_penalty = float(pen)
        self.max_chars = max_chars
        self.observation_space = spaces.Text(MAX_OBS_CHARS, min_length=1, charset=CHARSET)
        self.action_space = spaces.Text(max_chars, min_length=0, charset=CHARSET)
        self.invalid_count = 0

    def _observe(self, note: str | None = None) -> str:
        return describe(int(self._board), self._max_exp, self.score, self.moves, self._bits, note,
                        self.obs_format, int(self._supers))

    def reset(  # type: ignore[override]
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """A new game (or ``options["board"]``: a packed board, with ``options["supers"]``, or tile values
        up to 131072, as the observations show them); the observation is its text."""
        given = (options or {}).get("board")
        if isinstance(given, (list, tuple)) or (isinstance(given, np.ndarray) and given.shape != ()):
            if (options or {}).get("supers") is not None:
                raise ValueError("reset option supers: not taken with a grid of tile values, which is exact")
            try:
                board, sup = exact_from_tiles(given)
            except (TypeError, ValueError) as e:
                raise type(e)(f"reset option board: {e}; the text env reads a grid as tile values (0, 2, 4, "
                              f"..., {2**MAX_TILE_EXPONENT}), as its observations show the board") from None
            options = {**(options or {}), "board": board, "supers": sup}
        _, info = super().reset(seed=seed, options=options)
        self.invalid_count = 0
        info.update(legal_moves=_LEGAL[self._bits], move=None, invalid=None, invalid_kind=None,
                    invalid_count=0)
        if not self._bits:
            info["ended_by"] = "game_over"
            return self._observe(_NO_MOVE), info
        return self._observe(), info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:  # type: ignore[override]
        """Read ``action`` (the model's answer) and play it, or apply the invalid-answer rule."""
        if not self._bits:  # reset to a board with no legal move: the game is over, no answer counts
            info = self._info(False)
            info.update(legal_moves=_LEGAL[0], move=None, invalid=None, invalid_kind=None,
                        invalid_count=self.invalid_count, ended_by="game_over")
            return self._observe(_NO_MOVE), 0.0, True, False, info
        try:
            a = move_index(action, self.max_chars)
        except AnswerError as e:
            return self._invalid("unparsable", str(e))
        if not self._bits >> a & 1:
            return self._invalid("illegal", f"{ACTION_NAMES[a]} does not move any tile; legal moves: "
                                            f"{_LEGAL_TEXT[self._bits]}")
        _, reward, terminated, truncated, info = super().step(a)
        self.invalid_count = 0
        info.update(legal_moves=_LEGAL[self._bits], move=ACTION_NAMES[a], invalid=None, invalid_kind=None,
                    invalid_count=0)
        if terminated:
            info["ended_by"] = "game_over" if not self._bits else "end_rule"
        return self._observe(), reward, terminated, truncated, info

    def _invalid(self, kind: str, reason: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        self.invalid_count += 1
        ended = self.max_invalid is not None and self.invalid_count > self.max_invalid
        info = self._info(kind == "illegal")
        info.update(legal_moves=_LEGAL[self._bits], move=None, invalid=reason, invalid_kind=kind,
                    invalid_count=self.invalid_count)
        if ended:
            info["ended_by"] = "invalid"
            note = f"Your answer was not played: {reason}. The game is over: too many invalid answers."
        elif self.max_invalid is None:
            note = f"Your answer was not played: {reason}. Try again."
        else:
            left = self.max_invalid - self.invalid_count + 1
            note = (f"Your answer was not played: {reason}. Try again ({left} more invalid answer"
                    f"{'s end' if left != 1 else ' ends'} the game).")
        return self._observe(note), -self.invalid_penalty if self.invalid_penalty else 0.0, ended, False, info

    def render(self) -> str | Any:
        """"ansi": the observation text (``obs_format="text"``); "rgb_array": a picture."""
        if self.render_mode == "ansi":
            return describe(int(self._board), self._max_exp, self.score, self.moves, self._bits,
                            supers=int(self._supers)) + "\n"
        return super().render()


__all__ = ["HOW", "INSTRUCTIONS", "OBS_FORMATS", "OPTION_NAMES", "TextGame2048Env", "board_grid",
           "board_text", "describe", "describe_board"]
