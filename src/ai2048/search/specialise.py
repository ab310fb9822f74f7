"""Compile a search kernel once per leaf evaluator, with the evaluator bound as a global.

A numba function that receives another jitted function as an argument cannot be cached on disk
(the argument's type names a process-local object), so every process would recompile the search
for several seconds. Instead each search module writes its kernels as plain functions that call
the global name ``EVALUATE``; :func:`specialise` copies them with ``EVALUATE`` bound to one
evaluator and compiles the copies, so numba inlines the evaluator and can cache the result.

Only evaluators that live in the ``ai2048`` package are cached on disk. Numba's cache notices
changes to the search module's own file only, so the compiled copy's name carries a hash of the
evaluator's source file: editing the evaluator (or anything in its file) compiles afresh. Helpers
it imports from other files are not covered (the package's caveat: after editing such a kernel,
delete the ``__pycache__`` folders under ``src/ai2048``). A user's own evaluator is compiled
fresh in each process.
"""

from __future__ import annotations

import hashlib
import inspect
import types
from collections.abc import Callable
from typing import Any

from numba import njit


def unbound_evaluator(board: Any, data: Any) -> float:
    """What ``EVALUATE`` names in a kernel template until :func:`specialise` binds a real evaluator."""
    raise RuntimeError("a search kernel template was called directly; use the module's kernels(evaluate)")


_COMPILED: dict[tuple[str, Any], dict[str, Any]] = {}


def is_jitted(fn: Any) -> bool:
    """True for a numba ``@njit`` dispatcher."""
    return hasattr(fn, "py_func") and callable(fn)


def _source_hash(fn: Any) -> str:
    """First 10 hex digits of the SHA-1 of the file that defines ``fn`` (empty if unknown)."""
    try:
        path = inspect.getsourcefile(fn.py_func)
        with open(path or "", "rb") as f:
            return hashlib.sha1(f.read()).hexdigest()[:10]
    except (OSError, TypeError):
        return "nosource"


def specialise(family: str, templates: dict[str, Callable[..., Any]], evaluate: Any) -> dict[str, Any]:
    """{name: compiled kernel} with ``EVALUATE`` bound to ``evaluate`` in every template.

    The templates call each other (and recurse) through their global names, which resolve to the
    specialised copies. Results are memoised per (family, evaluator) in this process.
    """
    if not is_jitted(evaluate):
        raise TypeError("evaluate must be a numba @njit function (board uint64, data tuple) -> float64")
    key = (family, evaluate)
    if key in _COMPILED:
        return _COMPILED[key]
    first = next(iter(templates.values()))
    scope = dict(first.__globals__)
    scope["EVALUATE"] = evaluate
    module = getattr(evaluate, "__module__", "") or ""
    cache = module.startswith("ai2048.")
    tag = f"{module}.{evaluate.__name__}".replace(".", "_") + "_" + _source_hash(evaluate)
    out: dict[str, Any] = {}
    for name, fn in templates.items():
        copy = types.FunctionType(fn.__code__, scope, name, fn.__defaults__)
        copy.__qualname__ = f"{name}__{tag}"
        copy.__doc__ = fn.__doc__
        out[name] = scope[name] = njit(cache=cache)(copy)
    _COMPILED[key] = out
    return out
