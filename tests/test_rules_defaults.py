"""The game's spawn odds are typed once, ``rules.P_TWO``, and every default reads them.

Two checks: every registered agent and env, built or inspected, defaults to ``P_TWO``; and no
module under ``src/ai2048`` types a number where a ``p_two`` default belongs (a parameter, a
dataclass field, a ``--p-two`` option, a ``.get("p_two", ...)`` fallback), read with :mod:`ast`.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import gymnasium as gym
import pytest

import ai2048  # noqa: F401  (registers the envs)
from ai2048.agents import available, config_keys, make_agent
from ai2048.envs import ENV_ID, TEXT_ENV_ID
from ai2048.rules import P_TWO

SRC = Path(__file__).resolve().parents[1] / "src" / "ai2048"

def literal_p_two_defaults(path: Path) -> list[tuple[int, str]]:
    """(line, what) for every numeric literal standing as a default of the spawn odds in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            a = node.args
            positional = a.posonlyargs + a.args
            pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults, strict=True))
            pairs += [(k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if d is not None]
            found += [(d.lineno, f"parameter {k.arg}={d.value!r}") for k, d in pairs
                      if "p_two" in k.arg and _number(d)]
        elif (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and "p_two" in node.target.id
        ):
            if node.value is not None and _number(node.value):
                found.append((node.lineno, f"field {node.target.id} = {node.value.value!r}"))  # type: ignore[attr-defined]
        elif isinstance(node, ast.Call):
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if any(isinstance(x, str) and "p-two" in x for x in args):  # argparse --p-two
                found += [(node.lineno, f"option default={k.value.value!r}")  # type: ignore[attr-defined]
                          for k in node.keywords if k.arg == "default" and _number(k.value)]
            if (isinstance(node.func, ast.Attribute) and node.func.attr == "get" and len(node.args) == 2
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value == "p_two"
                    and _number(node.args[1])):
                found.append((node.lineno, f'.get("p_two", {node.args[1].value!r})'))  # type: ignore[attr-defined]
    return found


def _number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    )


def _all_literals() -> dict[tuple[str, str], list[tuple[int, str]]]:
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        hits = literal_p_two_defaults(path)
        if hits:
            out[(str(path.relative_to(SRC)), "p_two")] = hits
    return out


def test_agents__every_registered_agent_with_spawn_odds_defaults_to_the_rules():
    """An agent's ``p_two`` option defaults to P_TWO; one built without options plays with P_TWO."""
    with_option = []
    for name in available():
        keys = config_keys(name)
        for key, default in keys.items():
            if "p_two" in key:
                assert default == P_TWO, (
                    f"agent {name!r}: {key}={default!r} by default, rules.P_TWO is {P_TWO}"
                )
                with_option.append(name)
        required = [k for k, v in keys.items() if v is inspect.Parameter.empty]
        # ntuple: a shipped network; endgame: that and tables built on the machine; both checked above
        if not required and name not in ("ntuple", "endgame"):
            if name.startswith("lazyzero"):
                pytest.importorskip("torch")
            agent = make_agent(name)
            assert getattr(agent, "p_two", P_TWO) == P_TWO, name
    assert {"expectimax", "expectimax-seed003", "montecarlo", "ntuple"} <= set(with_option)


def test_agents__the_network_searches_default_to_the_rules():
    """LazyZero and the chance-node MCTS need a trained run, so their classes are inspected."""
    pytest.importorskip("torch")
    from ai2048.agents.chance_mcts import ChanceMCTSAgent
    from ai2048.agents.lazyzero import LazyZeroAgent

    for cls in (LazyZeroAgent, ChanceMCTSAgent):
        assert inspect.signature(cls).parameters["p_two"].default == P_TWO, cls.__name__


def test_envs__the_single_text_and_vector_env_default_to_the_rules():
    for env_id in (ENV_ID, TEXT_ENV_ID):
        env = gym.make(env_id)
        try:
            assert env.unwrapped.options.p_two == P_TWO
        finally:
            env.close()
    vec = gym.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point")
    try:
        assert vec.unwrapped.options.p_two == P_TWO
    finally:
        vec.close()


def test_envs__the_torch_env_defaults_to_the_rules():
    torch_env = pytest.importorskip("ai2048.envs.torch_env")
    for cls in (torch_env.TorchEnv2048, torch_env.make_batch_env):
        assert inspect.signature(cls).parameters["p_two"].default == P_TWO


def test_sources__no_module_types_the_odds_where_a_default_reads_rules():
    found = _all_literals()
    assert not found, f"use rules.P_TWO, not a number: {found}"


def test_literal_p_two_defaults__catches_each_form(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "def f(b, p_two=0.9): ...\n"
        "def g(*, spawn_p_two: float = 1): ...\n"
        "class C:\n    p_two: float = 0.9\n"
        "p.add_argument('--p-two', type=float, default=0.9)\n"
        "x = d.get('p_two', 0.9)\n"
        "def ok(p_two=P_TWO, q=0.9, flag=True): ...\n"
    )
    assert [line for line, _ in literal_p_two_defaults(path)] == [1, 2, 4, 5, 6]
