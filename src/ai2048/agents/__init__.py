"""Agents: one module per family, all built by name through the registry in :mod:`.base`."""

from __future__ import annotations

from ai2048.agents.base import Agent, BaseAgent, available, config_keys, load_agent, make_agent, register

__all__ = ["Agent", "BaseAgent", "available", "config_keys", "load_agent", "make_agent", "register"]

# Registrations: name, "module:factory", one-line description. Each family adds its own lines.
