"""The examples in the docs are run, so the documented API cannot drift from the code: docs/engine.md's
doctests, the README's Python usage and docs/search.md's agent and evaluation examples (with small
sizes)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "engine.md"


def test_engine_doc__examples_pass():
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _shrunk(code: str, sizes: dict[str, str]) -> str:
    """``code`` with the doc's sizes replaced by test sizes; each doc size must still be there, so an
    edited example is noticed rather than run at full size."""
    for big, small in sizes.items():
        assert big in code, f"the example no longer says {big!r}; update the test's sizes"
        code = code.replace(big, small)
    return code


def test_readme_usage__runs(tmp_path, monkeypatch, capsys):
    """README.md's ``## Usage`` block, top to bottom, with 8 envs and 2 evaluation games."""
    monkeypatch.chdir(tmp_path)
    section = (ROOT / "README.md").read_text().split("\n## Usage\n", 1)[1].split("\n## ", 1)[0]
    blocks = _python_blocks(section)
    assert len(blocks) == 1
    code = _shrunk(blocks[0], {"num_envs=4096": "num_envs=8",
                               "games=100, seed=1, workers=2": "games=2, seed=1, workers=1"})
    namespace: dict[str, Any] = {}
    exec(compile(code, "README.md (Usage)", "exec"), namespace)
    ai2048 = namespace["ai2048"]
    assert namespace["new"] == ai2048.encode([2, 2] + [0] * 14)  # the comment's [2 2 4 .] -> [4 4 . .]
    assert ai2048.move(namespace["b"], ai2048.Action.LEFT)[1] == 4
    assert namespace["venv"].num_envs == 8
    assert namespace["result"].summary()["games"] == 2
    assert "score" in capsys.readouterr().out


def test_search_doc_examples__run(tmp_path, monkeypatch, capsys):
    """docs/search.md's hint-and-move example and its evaluation example (3 games)."""
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks((ROOT / "docs" / "search.md").read_text())
    first = next(b for b in blocks if 'make_agent("expectimax", depth=3)' in b)
    evaluation = next(b for b in blocks if "ai2048.evaluate(" in b)
    namespace: dict[str, Any] = {}
    exec(compile(first, "docs/search.md", "exec"), namespace)
    assert namespace["g"].moves == 1
    assert capsys.readouterr().out.startswith("{")
    exec(compile(_shrunk(evaluation, {"games=100, seed=1, workers=2": "games=3, seed=1, workers=1"}),
                 "docs/search.md", "exec"), namespace)
    assert (tmp_path / "result.json").is_file() and namespace["res"].summary()["games"] == 3
