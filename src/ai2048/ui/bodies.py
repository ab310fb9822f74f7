"""The web API's request bodies: bounded JSON, then one pydantic model per route.

:func:`parse_body` reads the bytes the guard let through (at most its ``max_body``) as a JSON object
with bounds the standard parser lacks: nesting depth, digits in a number, no NaN or Infinity. A
route's model then says which fields it takes and their ranges; :func:`read` is the dependency that
does both and answers 400 with one message per problem (an unknown field, a missing or bad value).
Agent names and settings are checked by the server's one settings check
(:meth:`ai2048.ui.state.WebState.check`), not here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai2048.rules import Action
from ai2048.ui.session import parse_action
from ai2048.ui.state import ApiError

MAX_JSON_DEPTH = 16
MAX_NUMBER_CHARS = 40
MAX_STEPS = 100
"""AI moves one request may ask for (``POST /api/games/{id}/ai``'s ``steps``)."""


def json_depth(raw: bytes) -> int:
    """The deepest nesting of ``[``/``{`` in JSON text (brackets inside strings do not count)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == 0x5C:  # backslash
                escaped = True
            elif ch == 0x22:
                in_string = False
        elif ch == 0x22:
            in_string = True
        elif ch in (0x5B, 0x7B):
            depth += 1
            deepest = max(deepest, depth)
        elif ch in (0x5D, 0x7D):
            depth -= 1
    return deepest


def _number(text: str, kind: type) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        raise ApiError(400, f"request body holds a number of {len(text)} characters; numbers may have at "
                       f"most {MAX_NUMBER_CHARS}")
    value = kind(text)
    if kind is float and not math.isfinite(value):
        raise ApiError(400, f"request body holds {text}, which is not a finite number")
    return value


def _constant(name: str) -> Any:
    raise ApiError(400, f"request body holds {name}, which is not JSON (NaN and Infinity are not numbers)")


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or ApiError 400: bad JSON, too deep, huge numbers, NaN, non-object."""
    if not raw.strip():
        return {}
    depth = json_depth(raw)
    if depth > MAX_JSON_DEPTH:
        raise ApiError(400, f"request body is nested {depth} deep; at most {MAX_JSON_DEPTH} levels are "
                            "accepted")
    try:
        text = raw.decode("utf-8")
        body = json.loads(text, parse_int=lambda s: _number(s, int), parse_float=lambda s: _number(s, float),
                          parse_constant=_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ApiError(400, f"request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"request body must be a JSON object, got {type(body).__name__}")
    return body


class Body(BaseModel):
    """A request body: only its own fields, no conversions (``true`` is not 1, ``2.0`` not 2).
    A field's ``description`` completes "'NAME' must be ..." in its error."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class AgentChoice(Body):
    """``{"agent"?, "config"?}``: the agent and settings to play with (the game's own when neither is
    given); checked by the server's settings check."""

    agent: Any = None
    config: Any = None

    def named(self) -> bool:
        """Whether the request names an agent or settings."""
        return bool({"agent", "config"} & self.model_fields_set)


class NewGame(AgentChoice):
    """``POST /api/games``: ``{"seed"?, "agent"?, "config"?}`` (a seed may be a decimal string)."""

    seed: int | None = Field(None, ge=0, lt=1 << 64, description="a whole number in 0..2**64-1")

    @field_validator("seed", mode="before")
    @classmethod
    def _seed_text(cls, v: Any) -> Any:
        """``""`` is no seed; a decimal string of at most 30 characters is its number."""
        if v == "":
            return None
        if isinstance(v, str) and len(v) <= 30:
            try:
                return int(v.strip())
            except ValueError:
                return v
        return v


class Move(Body):
    """``POST /api/games/{id}/move``: ``{"action"}``."""

    action: Action = Field(description="one of up, right, down, left (or 0..3)")

    @field_validator("action", mode="before")
    @classmethod
    def _action(cls, v: Any) -> Action:
        try:
            return parse_action(v)
        except TypeError as e:  # pydantic reports ValueError; any other exception would be a 500
            raise ValueError(str(e)[:200]) from None
        except ValueError as e:
            raise ValueError(str(e)[:200]) from None


class AiSteps(AgentChoice):
    """``POST /api/games/{id}/ai``: ``{"agent"?, "config"?, "steps"?}``."""

    steps: int = Field(1, ge=1, le=MAX_STEPS, description=f"a whole number in 1..{MAX_STEPS}")


class Empty(Body):
    """A body with no fields (``POST /api/games/{id}/undo``)."""


B = TypeVar("B", bound=Body)


def read(model: type[B]) -> Callable[[Request], Awaitable[B]]:
    """The dependency that reads a request's body as ``model``, or answers 400 saying what is wrong."""

    async def body(request: Request) -> B:
        data = parse_body(await request.body())
        try:
            return model.model_validate(data)
        except ValidationError as e:
            raise ApiError(400, problem(model, e)) from None

    return body


def problem(model: type[Body], error: ValidationError) -> str:
    """One message for a body that ``model`` refused: its unknown fields first, else its first bad one."""
    errors = error.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        names = ", ".join(repr(k)[1:-1][:40] for k in unknown[:5])
        allowed = ", ".join(sorted(model.model_fields)) or "none"
        return f"unknown field(s) {names}; allowed: {allowed}"
    first = errors[0]
    name = str(first["loc"][0]) if first["loc"] else "body"
    described = model.model_fields[name].description if name in model.model_fields else None
    cause = (first.get("ctx") or {}).get("error")
    if cause is not None:
        return str(cause)
    if first["type"] == "missing":
        return f"missing {name!r}: {described}"
    shown = json.dumps(first["input"])
    return f"{name!r} must be {described}, got {shown if len(shown) <= 40 else shown[:37] + '...'}"


__all__ = ["MAX_STEPS", "AgentChoice", "AiSteps", "Body", "Empty", "Move", "NewGame", "parse_body", "read"]
