"""Docstring examples are run, so the prose cannot drift from the code."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["ai2048.board_io", "ai2048.checks", "ai2048.game"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests__pass(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
