"""The game's spawn odds are typed once, ``rules.P_TWO``, and every default reads them; a user's number
or flag is checked with :mod:`ai2048.checks`, never by hand.

Two checks of the odds: every registered agent and env, built or inspected, defaults to ``P_TWO``; and
no module under ``src/ai2048`` types a number where a ``p_two`` default belongs (a parameter, a
dataclass field, a ``--p-two`` option, a ``.get("p_two", ...)`` fallback, an argument in a call), read
with :mod:`ast`. The same scan finds a hand-written type check of a number or a flag (``isinstance(v,
bool)``, ``isinstance(v, (int, float))``, ``math.isfinite(v)`` in an ``if`` that raises) outside
``checks.py``.
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
    """(line, what) for every numeric literal standing as a default of the spawn odds in ``path``, or
    passed as them in a call (``f(b, p_two=0.9)``, or ``f(b, 0.9)`` where ``f``, defined in the same
    module, takes the odds at that place)."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    positions = {n.name: [a.arg for a in n.args.posonlyargs + n.args.args] for n in ast.walk(tree)
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in ast.walk(tree):
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
            found += [(node.lineno, f"argument {k.arg}={k.value.value!r}")  # type: ignore[attr-defined]
                      for k in node.keywords if k.arg and "p_two" in k.arg and _number(k.value)]
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            params = positions.get(callee, [])
            found += [(node.lineno, f"argument {params[i]}={a.value!r} of {callee}")  # type: ignore[attr-defined]
                      for i, a in enumerate(node.args[:len(params)]) if "p_two" in params[i] and _number(a)]
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
        "def value(b, p_two, stages): ...\n"
        "v = value(b, 0.9, s)\n"
        "g = Game(seed=1, p_two=0.5)\n"
        "w = value(b, P_TWO, 0.9) + ok(0.9, q=0.9)\n"
    )
    assert sorted(line for line, _ in literal_p_two_defaults(path)) == [1, 2, 4, 5, 6, 9, 10, 11]


HAND_CHECKED = {
    "board_io.py": "a board or action given to the API: one type dispatch over ints, arrays and Actions, "
                   "its messages naming ai2048.encode",
    "ui/session.py": "an action given by name or number, as board_io's",
    "records.py": "the fields of a JSON record being read (a file's content, not a setting)",
    "evaluate/stream.py": "the lines of a results file being resumed",
    "models/card.py": "a model card being read",
    "models/compact.py": "a compact network file's header being read",
    "tune.py": "a saved search being read",
    "ui/bodies.py": "the numbers in a request body (answered with 400)",
}
"""Modules whose type checks read data (a file, a request, a board), not a setting, and why."""

_NUMERIC_TYPES = {"bool", "bool_", "int", "float", "integer", "floating", "number"}


def _checks_a_number(node: ast.AST) -> bool:
    """A call that tests a scalar's numeric type or finiteness: ``isinstance(v, bool)``,
    ``isinstance(v, (int, np.integer))``, ``math.isfinite(v)``."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    if name == "isfinite":
        return True
    if name == "isinstance" and len(node.args) == 2:
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        return any((k.attr if isinstance(k, ast.Attribute) else getattr(k, "id", "")) in _NUMERIC_TYPES
                   for k in kinds)
    return False


def hand_written_checks(path: Path) -> list[tuple[int, str]]:
    """(line, test) of every ``if`` in ``path`` that tests a number's or a flag's type or finiteness and
    raises: a check :mod:`ai2048.checks` makes (``whole``, ``number``, ``flag``, ``tile``, ...). An
    array's ``np.isfinite(a).all()`` is not one."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    arrays = {id(n.value) for n in ast.walk(tree)
              if isinstance(n, ast.Attribute) and n.attr in ("all", "any")}
    arrays |= {id(a) for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr in ("all", "any") for a in n.args}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or not any(isinstance(x, ast.Raise) for s in node.body
                                                   for x in ast.walk(s)):
            continue
        if any(_checks_a_number(x) and id(x) not in arrays for x in ast.walk(node.test)):
            found.append((node.lineno, ast.unparse(node.test)[:80]))
    return found


def test_sources__no_module_checks_a_number_or_flag_by_hand():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel != "checks.py" and rel not in HAND_CHECKED and (hits := hand_written_checks(path)):
            found[rel] = hits
    assert not found, f"check a user's value with ai2048.checks (whole, number, flag, tile, ...): {found}"
    assert all((SRC / rel).is_file() and hand_written_checks(SRC / rel) for rel in HAND_CHECKED), \
        "an allowed module no longer checks by hand: drop it from HAND_CHECKED"


def test_hand_written_checks__catches_each_form(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        "if isinstance(v, bool) or not isinstance(v, int) or v < 1:\n    raise ValueError(v)\n"
        "if not math.isfinite(x):\n    raise ValueError(x)\n"
        "if isinstance(p, (np.integer, float)):\n    raise TypeError(p)\n"
        "if v < 1:\n    raise ValueError(v)\n"
        "if not np.isfinite(w).all():\n    raise ValueError(w)\n"
        "if isinstance(d, dict):\n    raise ValueError(d)\n"
        "if isinstance(v, bool):\n    v = int(v)\n"
    )
    assert [line for line, _ in hand_written_checks(path)] == [1, 3, 5]
