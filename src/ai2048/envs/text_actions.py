"""A language model's answer -> one move: read strictly (one documented grammar) and forgivingly
(the ways models actually write a move).

Accepted, after Unicode NFKC (full-width letters become ASCII), dropping invisible format
characters (zero-width spaces, BOM, bidi marks, emoji variation selectors) and case folding:

- a bare move: ``up``, ``down``, ``left``, ``right``, their letters ``u d l r``, or an arrow
  ``↑ ↓ ← →`` (``⬆ ⬇ ⬅ ➡`` too), optionally quoted, bold or bracketed and ending in ``.`` or ``!``;
- a labelled move anywhere in the text: ``Move: up``, ``action = L``, ``final answer: left``,
  ``move right``; the **last** label wins, so reasoning before the answer may name other moves;
- a tag: ``<answer>up</answer>`` or ``<move>up</move>`` (the last one wins);
- the last non-empty line as a bare move (reasoning above, the move alone at the end);
- JSON (a ```json fence is fine): ``{"move": "up"}``, ``{"action": ...}``, ``{"direction": ...}``, or
  a tool call ``{"name": "move", "arguments": {"direction": "up"}}`` (``arguments`` may be a JSON
  string, and the call may sit under ``"function"``), the value itself a bare move.

Refused, each with a reason: an answer longer than ``max_chars`` (read no further), control
characters (NUL, ESC, ...) or lone surrogates, anything else (``"jump"``, ``"uр"`` with a Cyrillic
``р``, ``{"move": 0}``: numbers are not read, as move numberings differ between programs). The
``ai2048/TextGame2048`` env applies its invalid-answer rule to every refusal; the strategy harness
reads a strategy's string answers the same way.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from ai2048.rules import ACTION_NAMES, Action

MAX_ANSWER_CHARS = 4096
"""Longest answer read by default: room for a short chain of thought ending in ``Move: up``."""

_WORDS: dict[str, Action] = {}
for _a in Action:
    _name = ACTION_NAMES[_a]
    _WORDS[_name] = _a
    _WORDS[_name[0]] = _a
for _arrow, _a in (("↑", Action.UP), ("↓", Action.DOWN), ("←", Action.LEFT), ("→", Action.RIGHT),
                   ("⬆", Action.UP), ("⬇", Action.DOWN), ("⬅", Action.LEFT), ("➡", Action.RIGHT)):
    _WORDS[_arrow] = _a

_EXACT: dict[str, int] = {}
for _w, _a in _WORDS.items():
    for _form in {_w, _w.upper(), _w.capitalize()}:
        _EXACT[_form] = int(_a)
"""The common exact answers as plain ints, looked up before any normalisation (a step's fast path)."""

_DIRECTION = r"(up|down|left|right|u|d|l|r|↑|↓|←|→|⬆|⬇|⬅|➡)"
_LABEL = re.compile(
    r"(?<![a-z])(?:final\s+answer|answer|move|action|direction)\s*(?:is\s*)?[:=]?\s*[*_\"'`(\[]*\s*"
    + _DIRECTION + r"(?![a-z0-9_])",
    re.ASCII,
)
_TAG = re.compile(r"<(answer|move)>(.*?)</\1>", re.S)
_FENCE = re.compile(r"^```[a-z]*\s*(.*?)\s*```$", re.S)
_WRAP = " \t\r\n\"'`*_()[]{}<>.!"
_JSON_KEYS = ("move", "action", "direction")
_TOOL_ARGS = ("arguments", "parameters", "args", "input")


class AnswerError(ValueError):
    """An answer that names no move; the message says why and what is read."""


HOW = 'answer with one move: up, down, left or right (or "Move: up", or {"move": "up"})'


def parse_move(text: Any, max_chars: int = MAX_ANSWER_CHARS) -> Action:
    """The move a model's answer names, or :class:`AnswerError` saying why it names none.

    A non-string raises TypeError (a program error, not a model's answer).
    """
    return Action(move_index(text, max_chars))


def move_index(text: Any, max_chars: int = MAX_ANSWER_CHARS) -> int:
    """:func:`parse_move` as a plain int 0..3 (the env's step path: no enum on the way)."""
    if text.__class__ is str:
        hit = _EXACT.get(text)
        if hit is not None:
            return hit
    elif not isinstance(text, str):
        raise TypeError(f"an answer must be text (str), got {type(text).__name__}")
    if len(text) > max_chars:
        raise AnswerError(f"the answer is {len(text)} characters long; at most {max_chars} are read")
    clean = _normalise(text)
    move = _bare(clean)
    if move is None and clean.startswith(("{", "```")):
        move = _json_move(clean)
    if move is None:
        tags = _TAG.findall(clean)
        if tags:
            move = _bare(tags[-1][1])
    if move is None:
        labels = _LABEL.findall(clean)
        if labels:
            move = _WORDS[labels[-1]]
    if move is None:
        lines = [line for line in clean.splitlines() if line.strip(_WRAP)]
        if len(lines) > 1:
            move = _bare(lines[-1])
    if move is None:
        raise AnswerError(f"no move found in {_quote(text)}; {HOW}")
    return int(move)


def _normalise(text: str) -> str:
    """NFKC, invisible format characters dropped, case folded; control characters and lone
    surrogates raise (they are never part of a sincere answer)."""
    for ch in text:
        o = ord(ch)
        if 0xD800 <= o <= 0xDFFF:
            raise AnswerError(f"the answer holds a lone surrogate U+{o:04X}, which is not text; {HOW}")
        if (o < 0x20 and ch not in "\t\n\r") or 0x7F <= o < 0xA0:
            raise AnswerError(f"the answer holds the control character U+{o:04X}; {HOW}")
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Mn"))
    return text.casefold().strip()


def _bare(text: str) -> Action | None:
    """A move that is the whole of ``text`` once quotes, emphasis, brackets and end punctuation go."""
    core = text.strip(_WRAP)
    if core.startswith(("move ", "move:")):
        core = core[4:].strip(_WRAP + ":")
    return _WORDS.get(core)


def _json_move(text: str) -> Action | None:
    """The move of a JSON answer or tool call, None if it is not one (AnswerError if it is JSON
    that names no move)."""
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None
    call = obj.get("function", obj) if isinstance(obj, dict) else None
    if isinstance(call, dict) and "name" in call:
        args = next((call[k] for k in _TOOL_ARGS if k in call), None)
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except (ValueError, RecursionError):
                args = None
        obj = args
    if isinstance(obj, dict):
        for key in _JSON_KEYS:
            value = obj.get(key)
            if isinstance(value, str):
                move = _bare(_normalise(value))
                if move is not None:
                    return move
    raise AnswerError(f"the JSON answer {_quote(text)} names no move; {HOW}")


def _quote(text: str, limit: int = 60) -> str:
    """``text`` shown in a message: ASCII only (escapes for the rest), at most about ``limit`` chars."""
    shown = ascii(text[:limit])
    return shown + ("..." if len(text) > limit else "")


__all__ = ["HOW", "MAX_ANSWER_CHARS", "AnswerError", "move_index", "parse_move"]
