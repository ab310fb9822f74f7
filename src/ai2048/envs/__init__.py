"""Gymnasium environments: ``ai2048/Game2048-v1`` (single) and its native vector env, and
``ai2048/TextGame2048-v1`` (text in, text out, for language models).

The version is the rules version (:data:`ai2048.rules.RULES_VERSION`): ``-v1`` plays tiles past
32768 up to 131072; ``-v0`` (``ai2048/Game2048-v0``, ``ai2048/TextGame2048-v0``) is the same env
with ``rules=0``, the capped rules runs made before version 1 played, kept registered as Gymnasium
keeps an env's older versions. Importing :mod:`ai2048` registers them, so
``gymnasium.make("ai2048/Game2048-v1")`` works.
"""

from __future__ import annotations

import gymnasium as gym

from ai2048.envs.env import Game2048Env
from ai2048.envs.options import EnvOptions
from ai2048.envs.text import TextGame2048Env
from ai2048.envs.vector import Game2048VectorEnv
from ai2048.rules import RULES_VERSION, RULES_VERSIONS

ENV_ID = f"ai2048/Game2048-v{RULES_VERSION}"
TEXT_ENV_ID = f"ai2048/TextGame2048-v{RULES_VERSION}"
ENV_IDS = {rules: f"ai2048/Game2048-v{rules}" for rules in RULES_VERSIONS}
"""The single env's id for each rules version (``ENV_IDS[0]``: the capped rules)."""
TEXT_ENV_IDS = {rules: f"ai2048/TextGame2048-v{rules}" for rules in RULES_VERSIONS}
"""The text env's id for each rules version."""

for _rules in RULES_VERSIONS:
    _kwargs = {} if _rules == RULES_VERSION else {"rules": _rules}
    if ENV_IDS[_rules] not in gym.registry:
        gym.register(
            id=ENV_IDS[_rules],
            entry_point="ai2048.envs.env:Game2048Env",
            vector_entry_point="ai2048.envs.vector:Game2048VectorEnv",
            kwargs=_kwargs,
        )
    if TEXT_ENV_IDS[_rules] not in gym.registry:
        gym.register(id=TEXT_ENV_IDS[_rules], entry_point="ai2048.envs.text:TextGame2048Env", kwargs=_kwargs)

__all__ = ["ENV_ID", "ENV_IDS", "TEXT_ENV_ID", "TEXT_ENV_IDS", "EnvOptions", "Game2048Env",
           "Game2048VectorEnv", "TextGame2048Env"]
