"""Start-up: ``import ai2048`` loads no numba or Gymnasium, every public name still imports on
first use, the Gymnasium ids are registered whichever is imported first, and the numpy-built row
tables give every row's log reward as a slow slide does."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import ai2048
from ai2048.engine import tables


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_import__loads_neither_numba_nor_gymnasium() -> None:
    out = _python(
        "import sys, ai2048\n"
        "print(sorted(m for m in ('numba', 'gymnasium', 'ai2048.engine') if m in sys.modules))"
    )
    assert out.strip() == "[]"


def test_import__gymnasium_after_ai2048_finds_the_env_ids() -> None:
    out = _python(
        "import ai2048, gymnasium as gym\n"
        "from ai2048.envs import ENV_ID\n"
        "env = gym.make(ENV_ID)\n"
        "obs, _ = env.reset(seed=3)\n"
        "print(ENV_ID in gym.registry, obs.shape)\n"
    )
    assert out.split() == ["True", "(4,", "4)"]


def test_import__gymnasium_before_ai2048_finds_the_env_ids() -> None:
    out = _python(
        "import gymnasium as gym, ai2048\nprint(sorted(k for k in gym.registry if k.startswith('ai2048/')))"
    )
    assert "ai2048/Game2048-v" in out


def test_public_names__every_one_imports_and_unknown_names_fail() -> None:
    for name in ai2048.__all__:
        assert getattr(ai2048, name) is not None
    assert set(ai2048.__all__) <= set(dir(ai2048))
    assert ai2048.Game(seed=1).score == 0
    with pytest.raises(AttributeError, match="no attribute 'Gamez'"):
        ai2048.Gamez  # noqa: B018 (the lookup is the test)


def test_star_import__gives_the_public_api() -> None:
    out = _python(
        "from ai2048 import *\nprint(Game.__name__, evaluate.__name__, envs.__name__, MAX_EXPONENT)"
    )
    assert out.split() == ["Game", "evaluate", "ai2048.envs", "15"]


def test_evaluate__stays_the_function_whichever_name_is_imported_first() -> None:
    """Importing the submodule ai2048.evaluate (for EvalResult, or by any other module) binds it on
    the package; the public name must stay the function."""
    out = _python(
        "import ai2048\nai2048.EvalResult\nimport ai2048.evaluate\n"
        "from ai2048.evaluate import evaluate as f\n"
        "print(callable(ai2048.evaluate), ai2048.evaluate is f, type(ai2048.envs).__name__)"
    )
    assert out.split() == ["True", "True", "module"]


def _slow_log_reward(cells: list[int]) -> int:
    """Sum of the exponents of the tiles a left slide creates (seed 000's log reward)."""
    tiles = [c for c in cells if c]
    total, i = 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < 15:
            total += tiles[i] + 1
            i += 2
        else:
            i += 1
    return total


def test_log_reward_tables__every_row_equals_a_slow_slide() -> None:
    rows = range(65536)
    cells = [[(r >> (4 * c)) & 15 for c in range(4)] for r in rows]
    left = np.array([_slow_log_reward(c) for c in cells])
    right = np.array([_slow_log_reward(c[::-1]) for c in cells])
    assert np.array_equal(tables.LEFT_LOG_REWARD, left) and np.array_equal(tables.RIGHT_LOG_REWARD, right)
    assert not tables.LEFT_ROW.flags.writeable


def test_python_m_ai2048__runs_the_command_line() -> None:
    """``python -m ai2048`` is the ``ai2048`` script: its help lists the subcommands, and a usage error
    exits 2 as the script does."""
    ok = subprocess.run([sys.executable, "-m", "ai2048", "--help"], capture_output=True, text=True,
                        timeout=600)
    assert ok.returncode == 0, ok.stderr
    assert "train" in ok.stdout and "eval" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "ai2048", "no-such-command"], capture_output=True, text=True,
                         timeout=600)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
