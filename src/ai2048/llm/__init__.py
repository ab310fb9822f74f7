"""The doors for language-model agents: an OpenEnv server of the text env (``ai2048 serve-env``), an MCP
server (``ai2048 mcp``), and the strategy-code harness (``ai2048 strategy``); docs/llm.md shows each.

The text env itself is :class:`ai2048.envs.text.TextGame2048Env` (``ai2048/TextGame2048-v0``). The
OpenEnv and MCP modules need the ``llm`` extra (``pip install 'ai2048[llm]'``); the harness needs
only Linux.

The public names of its modules (each module's ``__all__``) are re-exported here and imported on
first use (PEP 562 module ``__getattr__``): ``import ai2048.llm`` needs no extra, and a name from the
OpenEnv or MCP modules fails on first use, with their import error, where the extra is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ai2048.lazy import exports

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from ai2048.llm.baselines import PHRASINGS, agent_move, phrase, play_openenv, play_text_env
    from ai2048.llm.mcp_server import GUIDE, McpLimits, create_mcp_server, line_error, serve_stdio
    from ai2048.llm.openenv_env import (
        Game2048Action,
        Game2048Client,
        Game2048Environment,
        Game2048Observation,
        Game2048State,
    )
    from ai2048.llm.openenv_server import DEFAULT_PORT, EnvServerLimits, create_env_app, serve, uvicorn_config
    from ai2048.llm.sandbox import (
        VERDICTS,
        SandboxLimits,
        Stop,
        StrategyProcess,
        Verdict,
        check_code,
        check_host,
    )
    from ai2048.llm.strategy import MAX_ANSWER_CHARS, StrategyResult, score_strategy

_LAZY: dict[str, tuple[str, str]] = {
    "PHRASINGS": ("baselines", "PHRASINGS"),
    "agent_move": ("baselines", "agent_move"),
    "phrase": ("baselines", "phrase"),
    "play_openenv": ("baselines", "play_openenv"),
    "play_text_env": ("baselines", "play_text_env"),
    "GUIDE": ("mcp_server", "GUIDE"),
    "McpLimits": ("mcp_server", "McpLimits"),
    "create_mcp_server": ("mcp_server", "create_mcp_server"),
    "line_error": ("mcp_server", "line_error"),
    "serve_stdio": ("mcp_server", "serve_stdio"),
    "Game2048Action": ("openenv_env", "Game2048Action"),
    "Game2048Client": ("openenv_env", "Game2048Client"),
    "Game2048Environment": ("openenv_env", "Game2048Environment"),
    "Game2048Observation": ("openenv_env", "Game2048Observation"),
    "Game2048State": ("openenv_env", "Game2048State"),
    "DEFAULT_PORT": ("openenv_server", "DEFAULT_PORT"),
    "EnvServerLimits": ("openenv_server", "EnvServerLimits"),
    "create_env_app": ("openenv_server", "create_env_app"),
    "serve": ("openenv_server", "serve"),
    "uvicorn_config": ("openenv_server", "uvicorn_config"),
    "SandboxLimits": ("sandbox", "SandboxLimits"),
    "Stop": ("sandbox", "Stop"),
    "StrategyProcess": ("sandbox", "StrategyProcess"),
    "VERDICTS": ("sandbox", "VERDICTS"),
    "Verdict": ("sandbox", "Verdict"),
    "check_code": ("sandbox", "check_code"),
    "check_host": ("sandbox", "check_host"),
    "MAX_ANSWER_CHARS": ("strategy", "MAX_ANSWER_CHARS"),
    "StrategyResult": ("strategy", "StrategyResult"),
    "score_strategy": ("strategy", "score_strategy"),
}
"""Public name -> (module of this package, its name there)."""

__all__ = [
    "DEFAULT_PORT",
    "EnvServerLimits",
    "GUIDE",
    "Game2048Action",
    "Game2048Client",
    "Game2048Environment",
    "Game2048Observation",
    "Game2048State",
    "MAX_ANSWER_CHARS",
    "McpLimits",
    "PHRASINGS",
    "SandboxLimits",
    "Stop",
    "StrategyProcess",
    "StrategyResult",
    "VERDICTS",
    "Verdict",
    "agent_move",
    "check_code",
    "check_host",
    "create_env_app",
    "create_mcp_server",
    "line_error",
    "phrase",
    "play_openenv",
    "play_text_env",
    "score_strategy",
    "serve",
    "serve_stdio",
    "uvicorn_config",
]


__getattr__, __dir__ = exports(__name__, _LAZY)
