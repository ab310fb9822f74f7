"""Gymnasium environments: ``ai2048/Game2048-v0`` (single) and its native vector env, and
``ai2048/TextGame2048-v0`` (text in, text out, for language models).

Importing :mod:`ai2048` registers them, so ``gymnasium.make("ai2048/Game2048-v0")`` works.
"""

from __future__ import annotations

import gymnasium as gym

from ai2048.envs.env import Game2048Env
from ai2048.envs.options import EnvOptions
from ai2048.envs.text import TextGame2048Env
from ai2048.envs.vector import Game2048VectorEnv
from ai2048.rules import RULES_VERSION

ENV_ID = f"ai2048/Game2048-v{RULES_VERSION}"
TEXT_ENV_ID = f"ai2048/TextGame2048-v{RULES_VERSION}"

if ENV_ID not in gym.registry:
    gym.register(
        id=ENV_ID,
        entry_point="ai2048.envs.env:Game2048Env",
        vector_entry_point="ai2048.envs.vector:Game2048VectorEnv",
    )

if TEXT_ENV_ID not in gym.registry:
    gym.register(id=TEXT_ENV_ID, entry_point="ai2048.envs.text:TextGame2048Env")

__all__ = ["ENV_ID", "TEXT_ENV_ID", "EnvOptions", "Game2048Env", "Game2048VectorEnv", "TextGame2048Env"]
