"""Specialised kernels for one pattern set: the feature loops unrolled with constant masks.

The generic kernels in :mod:`ai2048.ntuple.kernels` loop over tuples and runs read from arrays;
the CPU then waits on each table lookup in turn. Unrolled, the 8 x K indices of a board are a
tuple of independent mask-and-shift expressions and their weights are summed as a balanced tree,
so loads and additions overlap (this is what TDL2048's templates do). Where the CPU has BMI2, a
tuple of ascending cells that spans several runs reads its index with one ``pext``
(:mod:`ai2048.engine.intrinsics`). The indices are unsigned, so numba indexes the table without
its test for negative indices, and the per-move kernels are compiled without reference counting
(``HOT``: nothing in them allocates once the features are a tuple). The specialised module is
the kernels source with the block between ``# <features>`` and ``# </features>`` replaced; it
is written once to a cache folder (``$AI2048_CACHE`` or ``~/.cache/ai2048``) so numba can cache
its compiled code, keyed by a hash of the pattern set, the generated code and the engine and
kernel sources. Its constants are module globals and the TC update is written out rather than
inlined by numba: numba interprets, copies and types every inlined copy again, which is most of a
first compilation (docs/ntuple-lab.md).

A rule variant (:class:`KernelOptions`: seed 004's full-board end, its -1 for unchanged-board
moves, a discount, a tie order) is the kernels' last argument (:attr:`KernelOptions.rules`), of one
numba type for every variant: a pattern set's kernels compile once for all of them. (Each variant
was once a module of its own with the options as frozen globals, and compiling a variant's move
choice took 20 to 35 CPU-seconds; the flags and tie ranks read at run time cost under 3% of
training or 1-ply play speed, docs/ntuple-lab.md.)
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from numba.core.cpu import CPUTargetOptions

from ai2048 import checks
from ai2048.checkpoint import atomic_write
from ai2048.engine.intrinsics import HAS_PEXT
from ai2048.ntuple import kernels
from ai2048.ntuple.patterns import pattern_name, tuple_runs

_LOADED: dict[str, ModuleType] = {}
_NO_NRT_OPTION = hasattr(CPUTargetOptions, "_nrt")
"""numba's (private) ``_nrt`` option, behind :data:`ai2048.ntuple.kernels.HOT` in generated modules:
where a numba release drops it, the kernels compile with reference counting (slower, the same values)."""
_ENGINE_FILES = ("board.py", "moves.py", "spawn.py", "rng.py", "tables.py", "intrinsics.py")
DEFAULT_ORDER = (0, 1, 2, 3)
"""The default tie order: the lower action number (up, right, down, left) wins."""
ILLEGAL_ACTIONS = ("mask", "penalty")
"""``illegal_action`` of the trainer and the agent: moves that leave the board unchanged are never
chosen (mask), or are scored -1 and followed by a spawn as seed 004's unmasked argmax plays them
(penalty, :attr:`KernelOptions.illegal_penalty`)."""


@dataclass(frozen=True)
class KernelOptions:
    """Rule variants of the kernels, handed to them as :attr:`rules`.

    Attributes:
        end_on_full_board: seed 004's ``board.end()``: a full board or a 32768 ends the game.
        illegal_penalty: seed 004's unmasked moves: an unchanged board scores -1 and still spawns
            (needs ``end_on_full_board``, which ends the game before a full board could repeat).
        gamma: discount of the TD targets, in (0, 1].
        tie_order: the four actions (``rules.Action`` numbers) in the order ties are broken.
    """

    end_on_full_board: bool = False
    illegal_penalty: bool = False
    gamma: float = 1.0
    tie_order: tuple[int, ...] = DEFAULT_ORDER

    def __post_init__(self) -> None:
        order = tuple(int(a) for a in self.tie_order)
        if sorted(order) != [0, 1, 2, 3]:
            raise ValueError(f"tie_order={self.tie_order!r} must name each action 0..3 once")
        object.__setattr__(self, "tie_order", order)
        checks.number("gamma", self.gamma, 0.0, 1.0, lo_open=True, why="1 = no discount")
        if self.illegal_penalty and not self.end_on_full_board:
            raise ValueError(
                "illegal_penalty needs end_on_full_board (seed 004 plays them together): on a full "
                "board an unchanged move spawns nothing and could repeat forever"
            )

    @property
    def rules(self) -> tuple[bool, bool, float, tuple[int, ...], tuple[int, ...]]:
        """The kernels' ``rules`` argument: (end_on_full_board, illegal_penalty, gamma, tie order,
        each action's rank in it), always of the same Python types, so every variant calls the
        kernels compiled for the first."""
        rank = tuple(self.tie_order.index(a) for a in range(4))
        return (bool(self.end_on_full_board), bool(self.illegal_penalty), float(self.gamma),
                tuple(int(a) for a in self.tie_order), rank)


DEFAULT_RULES = KernelOptions().rules
"""The kernels' ``rules`` under the standard rules (no full-board end, no penalty, no discount, the
default tie order)."""


def _u64(v: int) -> str:
    """The name of the module global holding ``np.uint64(v)`` (:func:`feature_source` defines it):
    numba reads a global as a typed constant, where ``np.uint64(v)`` written inline is a call for it
    to resolve at every one of the hundreds of places the features are inlined."""
    return f"_U{v:x}"


def _index_expr(cells: Sequence[int], runs: list[tuple[int, int, int]], x: str, use_pext: bool) -> str:
    """Source of one tuple's table index (uint64) on board ``x``: ``pext`` when that is one
    instruction instead of several runs, else each run's shift and mask."""
    if use_pext and len(runs) > 1 and list(cells) == sorted(cells):
        mask = sum(0xF << (4 * c) for c in cells)
        return f"pext({x}, {_u64(mask)})"
    parts = []
    for src, mask, dst in runs:
        e = f"(({x} >> {_u64(src)}) & {_u64(mask)})" if src else f"({x} & {_u64(mask)})"
        if dst:
            e = f"({e} << {_u64(dst)})"
        parts.append(e)
    return "(" + " | ".join(parts) + ")"


@functools.cache
def _tc_statements() -> tuple[str, ...]:
    """The statements of ``kernels._tc_step``'s body (its one spelling: read from its source)."""
    fn = ast.parse(inspect.getsource(kernels._tc_step.py_func)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) else fn.body  # without the docstring
    return tuple(f"    {ast.unparse(st)}" for st in body)


def _tc_source(index: str) -> list[str]:
    """:func:`_tc_statements` on weight ``index``, written out. Inlined by numba instead, every copy
    is interpreted, copied and typed again: 32 a TC update, most of a minute of a first compilation."""
    return [f"    i = {index}", *_tc_statements()]


def _tree(terms: list[str]) -> str:
    """``terms`` summed as a balanced tree, so the additions do not wait on one another."""
    while len(terms) > 1:
        terms = [
            f"({terms[i]} + {terms[i + 1]})" if i + 1 < len(terms) else terms[i]
            for i in range(0, len(terms), 2)
        ]
    return terms[0]


def feature_source(tuples: Sequence[Sequence[int]], use_pext: bool = HAS_PEXT) -> str:
    """Python source of ``HOT`` and of ``features``, ``fsum``, ``fadd``, ``ftc`` and ``fprefetch``
    unrolled for ``tuples``."""
    runs, nruns, tbase, _ = tuple_runs(tuples)
    exprs = []
    for k in range(len(tuples)):
        rk = [(int(runs[k, j, 0]), int(runs[k, j, 1]), int(runs[k, j, 2])) for j in range(int(nruns[k]))]
        exprs.append((int(tbase[k]), tuples[k], rk))
    count = 8 * len(tuples)
    indices = [
        f"        o + {_u64(tb) + ' + ' if tb else ''}{_index_expr(t, rk, f'x{i}', use_pext)},"
        for tb, t, rk in exprs
        for i in range(8)
    ]
    body = "\n".join(indices)
    names = sorted(set(re.findall(r"\b_U[0-9a-f]+\b", body)), key=lambda n: int(n[2:], 16))
    lines = [
        *(f"{n} = np.uint64({int(n[2:], 16):#x})" for n in names),
        'HOT: dict = {"_nrt": False}' if _NO_NRT_OPTION else "HOT: dict = {}",
        '"""No reference counting in the per-move kernels: nothing in them allocates (kernels.HOT)."""',
        "",
        "",
        '@njit(cache=True, inline="always")',
        "def features(b: np.uint64, off: np.int64, runs: np.ndarray, nruns: np.ndarray, "
        "tbase: np.ndarray) -> tuple:",
        f'    """The {count} weight indices of ``b``\'s features (unrolled for one pattern set), unsigned:',
        "    numba indexes an array with a signed integer through a test for negative indices",
        '    (``w[-1]``), a few more instructions at every table read."""',
        "    o = np.uint64(off)",
        "    x0, x1, x2, x3, x4, x5, x6, x7 = _isos(b)",
        "    return (",
        *indices,
        "    )",
        "",
        "",
        '@njit(cache=True, inline="always")',
        "def fsum(w: np.ndarray, idx: tuple) -> np.float64:",
        '    """Sum of the weights at ``idx`` (float64, as a balanced tree)."""',
        f"    return {_tree([f'np.float64(w[idx[{i}]])' for i in range(count)])}",
        "",
        "",
        '@njit(cache=True, inline="always")',
        "def fadd(w: np.ndarray, idx: tuple, step: np.float32) -> None:",
        '    """Add ``step`` to the weight at every index of ``idx``."""',
        *[f"    w[idx[{i}]] += step" for i in range(count)],
        "",
        "",
        '@njit(cache=True, inline="always")',
        "def ftc(w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, idx: tuple, step: np.float32, "
        "err: np.float64) -> None:",
        '    """``_tc_step`` at every index of ``idx``, written out."""',
        *[line for i in range(count) for line in _tc_source(f"idx[{i}]")],
        "",
        "",
        '@njit(cache=True, inline="always")',
        "def fprefetch(w: np.ndarray, idx: tuple) -> None:",
        '    """Start loading the weight at every index of ``idx`` (numba compiles a loop over a tuple',
        '    into one indirect jump per element)."""',
        *[f"    prefetch(w, idx[{i}])" for i in range(count)],
    ]
    return "\n".join(lines) + "\n"


def _cache_dir() -> Path:
    root = os.environ.get("AI2048_CACHE") or Path.home() / ".cache" / "ai2048"
    return Path(root) / "ntuple"


def specialized(tuples: Sequence[Sequence[int]]) -> ModuleType:
    """The kernels module specialised for ``tuples``, generated, cached and imported once (every
    rule variant plays it, with its :attr:`KernelOptions.rules`)."""
    name = pattern_name(tuples)
    template = Path(kernels.__file__).read_text()
    engine_dir = Path(kernels.__file__).parent.parent / "engine"
    digest = hashlib.sha256(f"{name} pext={HAS_PEXT}".encode())
    digest.update(template.encode())
    digest.update(feature_source(tuples).encode())  # a change to this generator is a new module too
    for f in _ENGINE_FILES:
        digest.update((engine_dir / f).read_bytes())
    key = digest.hexdigest()[:16]
    if key in _LOADED:
        return _LOADED[key]
    head, rest = template.split("# <features>", 1)
    _, tail = rest.split("# </features>", 1)
    source = (
        f'"""Generated by ai2048.ntuple.codegen for patterns {name}; do not edit."""\n'
        + head.split('"""', 2)[2]
        + "# <features>\n"
        + feature_source(tuples)
        + "# </features>"
        + tail
    )
    path = _cache_dir() / f"kernels_{key}.py"
    if not path.is_file() or path.read_text() != source:
        atomic_write(path, lambda f: f.write(source), mode="w")
    module = import_generated(path)
    _LOADED[key] = module
    return module


def import_generated(path: Path) -> ModuleType:
    """Import a generated module ``kernels_<key>.py`` under the name its numba cache was written
    for (``ai2048_ntuple_kernels_<key>``); benchmarks load another revision's module this way."""
    modname = f"ai2048_ntuple_kernels_{path.stem.removeprefix('kernels_')}"
    spec = importlib.util.spec_from_file_location(modname, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module
