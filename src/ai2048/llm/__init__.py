"""The doors for language-model agents: an OpenEnv server of the text env (``ai2048 serve-env``), an MCP
server (``ai2048 mcp``), and the strategy-code harness (``ai2048 strategy``); docs/llm.md shows each.

The text env itself is :class:`ai2048.envs.text.TextGame2048Env` (``ai2048/TextGame2048-v0``). The
OpenEnv and MCP modules need the ``llm`` extra (``pip install 'ai2048[llm]'``); the harness needs
only Linux.
"""

from typing import Any


def json_kind(value: Any) -> str:
    """What JSON calls a parsed value (object, array, string, number, boolean, null), for messages
    that tell a client what it sent."""
    if isinstance(value, bool):
        return "boolean"
    kinds = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
    return kinds.get(type(value), "null" if value is None else type(value).__name__)


__all__ = ["json_kind"]
