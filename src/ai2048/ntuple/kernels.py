"""N-tuple network kernels (numba): value, TD updates, self-play training and greedy play.

The network (Szubert & Jaśkowski 2014) is plain data:

    w       [S * T] float32  weights; stage s owns w[s*T : (s+1)*T]
    runs    [K, 7, 3] uint64 per tuple: (source shift, mask, destination shift) of each run
    nruns   [K]     int64    runs per tuple (see ``patterns.tuple_runs``)
    tbase   [K]     int64    offset of the tuple's table inside a stage
    stages  [S-1]   int64    tile exponents that open stages 1..S-1 (multistage TD, Wu et al. 2014)

``V(b) = sum_{g in D4} sum_k w[s(b)*T + tbase[k] + index_k(g(b))]`` where ``index_k`` packs the
nibbles of tuple ``k``'s cells (first cell in the low nibble) and ``s(b)`` counts the stage tiles reached by
``b``'s largest tile. The evaluator used by the expectimax search is ``ntuple_value(b, data)``
with ``data = (w, runs, nruns, tbase, stages)``.

Training is Hogwild (Niu et al. 2011): ``train_worker`` plays one worker's games and releases the
GIL; the trainer runs one per thread, each updating the shared weights without locks.
"""

# mypy: disable-error-code="arg-type,return-value,assignment"
# (numba kernels mix Python and numpy scalar types that mypy cannot reconcile)
from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

from ai2048.engine.board import (
    NIBBLE,
    flip,
    max_exponent,
    mirror,
    reaches,
    seed004_end,
    transpose,
)
from ai2048.engine.intrinsics import pext, prefetch  # noqa: F401 (pext: used by the generated feature code)
from ai2048.engine.moves import move
from ai2048.engine.rng import rand_below, rand_float
from ai2048.engine.spawn import empty_cells, new_board, next_spawn, spawn

_NEG = -1.0e300
AFTER = 0
BEFORE = 1

# Rule variants are the kernels' last argument, ``rules``: (end_on_full_board, illegal_penalty, gamma,
# order, rank), built by ntuple.codegen.KernelOptions.rules (one type for every variant, so they share
# one compilation).
#   end_on_full_board (bool): seed 004's board.end(): a game ends at a full board (or a 32768) even
#       if merges remain.
#   illegal_penalty (bool): seed 004's unmasked moves: a move that leaves the board unchanged may be
#       chosen; it scores -1 (moporgic's board.<dir>() return) and a tile still spawns.
#   gamma (float): discount of the TD targets (seed 004's eq. 1; its code uses 1).
#   order (4 ints): the actions in the order ties between equal values are broken (the first wins);
#   rank (4 ints): each action's place in ``order``.


@intrinsic
def unowned(typingctx: Any, arr: types.Array) -> Any:
    """``unowned(a)``: the same array with no reference count (its meminfo pointer null).

    Numba counts references to an array with atomic (``lock``) instructions where the array is
    handed to or inlined into a function, several times a move in the move choice and the TD
    step: each is a full memory fence that waits for the outstanding table reads, and with
    Hogwild workers each also moves the shared table's meminfo cache line between the cores
    (docs/ntuple-lab.md).
    The entry points take unowned views of their arguments, which the caller keeps alive for
    the whole call; counting a null meminfo is a test and a branch.
    """
    if not isinstance(arr, types.Array):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        return ary._getvalue()

    return arr(arr), codegen


@intrinsic
def opaque(typingctx: Any, x: types.Integer) -> Any:
    """``opaque(x)``: ``x``, through an empty inline-assembly statement the optimiser cannot see into.

    The move choice reads each after-state's features twice, once to prefetch their weights and
    once to sum them; without this, LLVM would compute the indices once and keep all 128 of the
    four after-states alive in between (16 registers: most went to the stack and back). With the
    second read on ``opaque(x)`` they are computed again (a ``pext`` or a mask and shift each).
    """
    if not isinstance(x, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        ty = args[0].type
        asm = ir.InlineAsm(ir.FunctionType(ty, [ty]), "", "=r,0")
        return builder.call(asm, [args[0]])

    return x(x), codegen


@njit(cache=True, inline="always")
def _isos(b: np.uint64) -> tuple:
    """The 8 symmetric images of ``b`` (the dihedral group D4), one transpose among them: the
    transposes of ``mirror(b)``, ``flip(b)`` and ``flip(mirror(b))`` are ``flip(t)``, ``mirror(t)`` and
    ``flip(mirror(t))`` of ``t = transpose(b)`` (the same images in the same order as transposing each)."""
    m = mirror(b)
    t = transpose(b)
    tm = mirror(t)
    return (b, m, flip(b), flip(m), t, flip(t), tm, flip(tm))


@njit(cache=True, inline="always")
def _index(x: np.uint64, runs: np.ndarray, nr: int, k: int) -> int:
    """Table index of tuple ``k`` on board ``x``: its nibbles packed by mask-and-shift runs."""
    idx = (x >> runs[k, 0, 0]) & runs[k, 0, 1]
    for j in range(1, nr):
        idx |= ((x >> runs[k, j, 0]) & runs[k, j, 1]) << runs[k, j, 2]
    return np.int64(idx)


@njit(cache=True, inline="always")
def scored_move(b: np.uint64, a: int, penalty: bool) -> tuple:
    """Move ``a``: (after-state, reward, playable). Playable means the board changed, or, with
    ``penalty`` (the rules' illegal_penalty), any move: an unchanged board then scores -1 as
    moporgic's board does."""
    nb, r = move(b, a)
    ok = nb != b
    if penalty and not ok:
        r = np.int64(-1)
        ok = True
    return nb, r, ok


@njit(cache=True, inline="always")
def stage_of(b: np.uint64, stages: np.ndarray) -> int:
    """Stage of ``b``: how many of the stage tile exponents its largest tile has reached."""
    s = np.int64(0)
    for t in stages:
        if reaches(b, t):
            s += 1
    return s


@njit(cache=True, inline="always")
def _tc_step(
    w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, i: int, step: np.float32, err: float
) -> None:
    """Temporal coherence (Beal & Smith 1999; Jaśkowski 2018) on weight ``i``: it moves by
    ``step * |E_i| / A_i`` (``step`` while ``A_i = 0``), then ``E_i += err``, ``A_i += |err|``.

    Written without a branch (``E_i`` is 0 wherever ``A_i`` is, ``A_i`` summing ``|err|``):
    ``ntuple.codegen`` writes these statements out at each of a pattern set's indices, and a
    branch there is 32 more blocks for numba to copy and type at every TC update."""
    a = a_acc[i]
    z = np.float32(a == 0.0)
    rate = (abs(e_acc[i]) + z) / (a + z)
    w[i] += step * rate
    e_acc[i] += err
    a_acc[i] += abs(err)


# <features> generic feature code; ntuple.codegen swaps in unrolled code for one pattern set
HOT: dict = {}
"""Extra ``njit`` options of the per-move kernels (``@njit(cache=True, **HOT)``): none here, where
``features`` allocates its array. A generated module, whose features are a tuple, sets ``_nrt=False``:
numba then emits no reference counting in them (the calls into ``NRT_incref`` / ``NRT_decref`` around
every array handed to a function, 48 in the move choice's code; each only tests a null pointer, the
arrays being :func:`unowned`, but each is a call that spills registers). Anything that would allocate
there fails to compile instead of leaking (measured: docs/ntuple-lab.md)."""


@njit(cache=True, inline="always")
def features(b: np.uint64, off: int, runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray) -> np.ndarray:
    """Weight indices of ``b``'s features in the stage starting at ``off``: every tuple read on
    each of the 8 symmetric images of the board (the same features as seed 004's index lists)."""
    xs = _isos(b)
    out = np.empty(8 * nruns.size, dtype=np.int64)
    for k in range(nruns.size):
        nr = nruns[k]
        for s in range(8):
            out[8 * k + s] = off + tbase[k] + _index(xs[s], runs, nr, k)
    return out


@njit(cache=True, inline="always")
def fsum(w: np.ndarray, idx: np.ndarray) -> float:
    """Sum of the weights at ``idx`` (float64)."""
    v = np.float64(0.0)
    for i in idx:
        v += w[i]
    return v


@njit(cache=True, inline="always")
def fadd(w: np.ndarray, idx: np.ndarray, step: np.float32) -> None:
    """Add ``step`` to the weight at every index of ``idx``."""
    for i in idx:
        w[i] += step


@njit(cache=True, inline="always")
def ftc(
    w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, idx: np.ndarray, step: np.float32, err: float
) -> None:
    """:func:`_tc_step` at every index of ``idx``."""
    for i in idx:
        _tc_step(w, e_acc, a_acc, i, step, err)


@njit(cache=True, inline="always")
def fprefetch(w: np.ndarray, idx: np.ndarray) -> None:
    """Start loading every weight at ``idx`` (see :mod:`ai2048.engine.intrinsics`)."""
    for i in idx:
        prefetch(w, i)
# </features>


@njit(cache=True, **HOT)
def value_at(
    b: np.uint64, off: int, w: np.ndarray, runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray
) -> float:
    """Sum of the feature weights of ``b`` in the stage starting at ``off``."""
    return fsum(w, features(b, off, runs, nruns, tbase))


# Inlining in numba's IR makes numba type every copy, which took most of the minutes of a first
# compilation: the per-move paths of after-state training (the move choice's four after-states,
# the online update, the backward sweep's step) are inlined, since handing 32 indices to a compiled
# function copies them through the stack; the functions used at many other places (a board's
# features in its stage, a TD step) are compiled once and called.


@njit(cache=True, **HOT)
def _features_of(
    x: np.uint64, stages: np.ndarray, table: int, dg: int, runs: np.ndarray, nruns: np.ndarray,
    tbase: np.ndarray,
) -> tuple:
    """:func:`features` of board ``x`` as :func:`view` reads it."""
    v, off = view(x, stages, table, dg)
    return features(v, off, runs, nruns, tbase)


@njit(cache=True, inline="always")
def _update(
    idx: np.ndarray, err: float, alpha_f: float, tc: bool, w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray
) -> None:
    """One TD step on the features ``idx`` with error ``err``: plain TD adds ``alpha/F * err`` to
    every weight (float32 adds, as the weights are: TDL2048+); temporal coherence scales that per
    weight (:func:`_tc_step`). Inlined: the online update and the backward sweep call it per move."""
    step = np.float32(alpha_f * err)
    if tc:
        ftc(w, e_acc, a_acc, idx, step, err)
    else:
        fadd(w, idx, step)


@njit(cache=True, **HOT)
def _learn(
    idx: np.ndarray, err: float, alpha_f: float, tc: bool, w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray
) -> float:
    """:func:`_update`, then the updated value of the features ``idx``."""
    _update(idx, err, alpha_f, tc, w, e_acc, a_acc)
    return fsum(w, idx)


@njit(cache=True)
def ntuple_value(b: np.uint64, data: tuple) -> float:
    """The network's value of board ``b``; ``data = (w, runs, nruns, tbase, stages)``.

    This is the evaluator the expectimax search plugs in (DESIGN.md "Evaluator" seam).
    """
    w, runs, nruns, tbase, stages = data
    table = w.size // (stages.size + 1)
    return value_at(b, stage_of(b, stages) * table, w, runs, nruns, tbase)


LATE_DOWNGRADE_FROM = 14
"""The exponent (16384) from which :func:`downgrade_top` lowers the large tiles."""


@njit(cache=True, inline="always")
def _exponents_present(b: np.uint64) -> np.int64:
    """Bit ``e`` set iff exponent ``e`` is on the board (no array: the move choice calls this)."""
    present = np.int64(0)
    t = b
    for _ in range(16):
        present |= np.int64(1) << np.int64(t & NIBBLE)
        t >>= np.uint64(4)
    return present


@njit(cache=True, inline="always")
def _lower_above(b: np.uint64, g: int) -> np.uint64:
    """Every tile above exponent ``g`` lowered by one."""
    x = np.uint64(b)
    out = np.uint64(0)
    for i in range(16):
        s = np.uint64(4 * i)
        e = np.uint64((x >> s) & np.uint64(NIBBLE))
        if e > np.uint64(g):
            e = np.uint64(e - np.uint64(1))
        out |= np.uint64(e << s)
    return out


@njit(cache=True)
def downgrade(b: np.uint64) -> np.uint64:
    """Tile-downgrading (Guei et al. 2022): with a 32768 on the board, close the lowest gap.

    Finds the smallest exponent ``g`` >= 1 missing from the board below its largest tile and
    lowers every tile above ``g`` by one, so the network sees a position like those it trained
    on. Boards without a 32768 (or without a gap) are returned unchanged.
    """
    present = _exponents_present(b)
    if not (present >> 15) & 1:
        return b
    g = 1
    while g < 15 and (present >> g) & 1:
        g += 1
    if g >= 15:
        return b
    return _lower_above(b, g)


@njit(cache=True)
def highest_gap(b: np.uint64) -> int:
    """The exponent :func:`downgrade_top` closes on ``b``: the largest ``g`` >= 1 missing below the
    board's largest tile when that tile's exponent is :data:`LATE_DOWNGRADE_FROM` or more; 0 (no
    change) below it or without a gap."""
    present = _exponents_present(b)
    top = 15
    while top > 1 and not (present >> top) & 1:
        top -= 1
    if top < LATE_DOWNGRADE_FROM:
        return 0
    g = top - 1
    while g >= 1 and (present >> g) & 1:
        g -= 1
    return max(g, 0)


@njit(cache=True)
def downgrade_top(b: np.uint64) -> np.uint64:
    """Late-game downgrading: with a 16384 or larger on the board, close the highest gap.

    Finds the largest exponent ``g`` >= 1 missing below the board's largest tile and lowers every
    tile above ``g`` by one: a board building its second 16384 beside the first (``16384 4096
    2048 ...``, no 8192) is valued as the network's familiar ``8192 4096 2048 ...``, a phase it
    trained on. Unlike :func:`downgrade` the small tiles stay as they are. Boards below
    :data:`LATE_DOWNGRADE_FROM` or without a gap are returned unchanged.
    """
    g = highest_gap(b)
    if g < 1:
        return b
    return _lower_above(b, g)


@njit(cache=True)
def lower_above(b: np.uint64, g: np.int64) -> np.uint64:
    """``b`` with every tile above exponent ``g`` lowered by one (``g`` < 1: unchanged): the map a
    search fixes at its root (:func:`ntuple_value_rooted`)."""
    if g < 1:
        return b
    return _lower_above(b, g)


@njit(cache=True)
def root_gaps(b: np.uint64) -> tuple[int, int]:
    """The two exponents the rooted map closes on ``b``: :func:`highest_gap` of ``b``, then of ``b``
    with that gap closed (0 when its largest tile is then below :data:`LATE_DOWNGRADE_FROM`). A
    board holding a 32768 thus reads with its largest tile at 8192, as one holding a 16384 does:
    one closure would leave a 16384 on top, the phase the network never learned to convert."""
    g1 = highest_gap(b)
    return g1, highest_gap(lower_above(b, np.int64(g1)))


@njit(cache=True, inline="always")
def lower_twice(b: np.uint64, g1: np.int64, g2: np.int64) -> np.uint64:
    """:func:`lower_above` ``g1``, then ``g2``: the map :func:`root_gaps` fixes."""
    return lower_above(lower_above(b, g1), g2)


RESIDUAL = 3
"""The kernels' ``dg`` of a residual late stage (:func:`base_value`): boards are read as they are."""
ROOTED = 4
"""The kernels' ``dg`` of ``downgrade="rooted"``: the 1-ply choice reads its four after-states through
the :func:`root_gaps` map of the board it moves from (as :func:`ntuple_value_rooted` in a search)."""
FIXED_MAP = 16
"""``dg`` of ``FIXED_MAP + g1 + 16 * g2``: :func:`lower_twice` ``g1, g2``; what :data:`ROOTED`
becomes once its board's gaps are known (:func:`rooted`)."""


@njit(cache=True, inline="always")
def rooted(b: np.uint64, dg: int) -> int:
    """``dg`` for the after-states of ``b``: :data:`ROOTED` becomes ``FIXED_MAP + g1 + 16 * g2`` of
    ``b``'s :func:`root_gaps`."""
    if dg == ROOTED:
        g1, g2 = root_gaps(b)
        return FIXED_MAP + g1 + 16 * g2
    return dg


@njit(cache=True, inline="always")
def downgrade_as(b: np.uint64, mode: int) -> np.uint64:
    """``b`` as the network's features read it: ``mode`` 0 as it is, 1 :func:`downgrade` (a ``True``
    flag reads as 1), 2 :func:`downgrade_top`, 3 (:data:`RESIDUAL`) as it is, and
    :data:`FIXED_MAP` + ``g1 + 16 * g2`` through :func:`lower_twice` ``g1, g2``."""
    if mode >= FIXED_MAP:
        m = mode - FIXED_MAP
        return lower_twice(b, np.int64(m & 15), np.int64(m >> 4))
    if mode == 1:
        return downgrade(b)
    if mode == 2:
        return downgrade_top(b)
    return b


@njit(cache=True, inline="always")
def view(b: np.uint64, stages: np.ndarray, table: int, dg: int) -> tuple:
    """The board whose features value ``b``, and their stage offset: ``b``'s stage is its own
    (:func:`stage_of` of ``b``), its features are read on ``downgrade_as(b, dg)``. A network trained
    with a late stage read through :func:`downgrade_top` (``stages=(14,)``, ``dg`` 2) thus keeps
    the stage apart from the boards the downgraded view resembles."""
    return downgrade_as(b, dg), stage_of(b, stages) * table


@njit(cache=True, inline="always")
def base_value(
    x: np.uint64, off: int, dg: int, w: np.ndarray, runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray
) -> float:
    """The fixed part of the value of board ``x`` in the stage at ``off``: with ``dg`` :data:`RESIDUAL`
    and a stage above the first, the first stage's value of :func:`downgrade_top` ``(x)``; else 0.

    A residual late stage learns only a correction on top of it: its weights start at zero, so it
    starts as the network's ``downgrade="highest"`` player, and it reads the board as it is, so boards
    that the downgrading maps to one (``16384 4096 2048`` and ``16384 8192 2048`` both read as
    ``8192 4096 2048``) keep values of their own. TD steps move the stage's weights only."""
    if dg == RESIDUAL and off > 0:
        return fsum(w, features(downgrade_top(x), 0, runs, nruns, tbase))
    return 0.0


@njit(cache=True)
def _value_as(b: np.uint64, data: tuple, dg: int) -> float:
    """The network's value of ``b`` read through :func:`view`, with its :func:`base_value`; ``data`` as
    :func:`ntuple_value`'s."""
    w, runs, nruns, tbase, stages = data
    x, off = view(b, stages, w.size // (stages.size + 1), dg)
    return value_at(x, off, w, runs, nruns, tbase) + base_value(x, off, dg, w, runs, nruns, tbase)


@njit(cache=True)
def ntuple_value_downgraded(b: np.uint64, data: tuple) -> float:
    """:func:`ntuple_value` of :func:`downgrade` ``(b)`` (Guei et al. 2022), in ``b``'s stage."""
    return _value_as(b, data, 1)


@njit(cache=True)
def ntuple_value_late(b: np.uint64, data: tuple) -> float:
    """:func:`ntuple_value` of :func:`downgrade_top` ``(b)``, in ``b``'s stage."""
    return _value_as(b, data, 2)


@njit(cache=True)
def ntuple_value_residual(b: np.uint64, data: tuple) -> float:
    """:func:`ntuple_value` of ``b`` plus its :func:`base_value` (a residual late stage)."""
    return _value_as(b, data, RESIDUAL)


@njit(cache=True)
def ntuple_value_rooted(b: np.uint64, data: tuple) -> float:
    """:func:`ntuple_value` of ``b`` read through the map its search fixed at the root
    (:func:`lower_twice` with the gaps ``data[5]``, :func:`set_root_gap`), in ``b``'s stage."""
    w, runs, nruns, tbase, stages, gap = data
    table = w.size // (stages.size + 1)
    return value_at(lower_twice(b, gap[0], gap[1]), stage_of(b, stages) * table, w, runs, nruns, tbase)


@njit(cache=True)
def set_root_gap(b: np.uint64, data: tuple) -> None:
    """Before a search from ``b``: fix the map :func:`ntuple_value_rooted` reads every board through
    to ``b``'s own (:func:`root_gaps`: its highest gap closed, twice with a 32768). With a map of its
    own per board (``downgrade="highest"``), a merge that fills the highest gap moves the gap down
    and reads as a loss of material, and the search shuns the merges that build the next large
    tile."""
    g1, g2 = root_gaps(b)
    data[5][0] = g1
    data[5][1] = g2


@njit(cache=True, **HOT)
def _td(
    b: np.uint64, target: float, stages: np.ndarray, table: int, dg: int, alpha_f: float, tc: bool,
    w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray,
    runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray,
) -> float:
    """One TD step moving ``V(b)`` (read through :func:`view`, with its :func:`base_value`) towards
    ``target``; returns the updated ``V(b)``."""
    x, off = view(b, stages, table, dg)
    idx = features(x, off, runs, nruns, tbase)
    base = base_value(x, off, dg, w, runs, nruns, tbase)
    return _learn(idx, target - base - fsum(w, idx), alpha_f, tc, w, e_acc, a_acc) + base


@njit(cache=True)
def _promote(
    s: int, table: int, w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, ready: np.ndarray, tc: bool
) -> None:
    """Weight promotion (Jaśkowski 2018): a stage's weights start as a copy of the stage below."""
    if ready[s]:
        return
    ready[s] = 1
    lo = (s - 1) * table
    hi = s * table
    for i in range(table):
        w[hi + i] = w[lo + i]
    if tc:
        for i in range(table):
            e_acc[hi + i] = e_acc[lo + i]
            a_acc[hi + i] = a_acc[lo + i]


@njit(cache=True)
def _before_value(
    nb: np.uint64, p_two: float, stages: np.ndarray, table: int,
    w: np.ndarray, runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray,
) -> float:
    """Expected value of the board after the spawn that follows after-state ``nb`` (seed 004, eq. 4)."""
    total = np.float64(0.0)
    n = 0
    cells = empty_cells(nb)
    while cells:
        b2, b4, cells = next_spawn(nb, cells)
        total += p_two * value_at(b2, stage_of(b2, stages) * table, w, runs, nruns, tbase)
        total += (1.0 - p_two) * value_at(b4, stage_of(b4, stages) * table, w, runs, nruns, tbase)
        n += 1
    return total / n if n > 0 else 0.0


@njit(cache=True)
def ntuple_value_before(b: np.uint64, data: tuple) -> float:
    """After-state evaluator of a before-state network: ``E[V(spawned board)]`` at the spawn odds the
    caller gives (seed 004, eq. 4); ``data = (w, runs, nruns, tbase, stages, p_two)``."""
    w, runs, nruns, tbase, stages, p_two = data
    return _before_value(b, p_two, stages, w.size // (stages.size + 1), w, runs, nruns, tbase)


@njit(cache=True, inline="always")
def _after(
    b: np.uint64, a: int, penalty: bool, stages: np.ndarray, table: int, dg: int, w: np.ndarray,
    runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray,
) -> tuple:
    """Move ``a`` from ``b``: (after-state, reward, playable (:func:`scored_move`), the board whose
    features value it and their stage offset (:func:`view`)); the features' weights are
    prefetched when playable. The indices are not kept (:func:`opaque`)."""
    nb, r, ok = scored_move(b, a, penalty)
    x = np.uint64(0)
    off = np.int64(0)
    if ok:
        x, off = view(nb, stages, table, dg)
        fprefetch(w, features(x, off, runs, nruns, tbase))
        if dg == RESIDUAL and off > 0:  # base_value's weights too
            fprefetch(w, features(downgrade_top(x), 0, runs, nruns, tbase))
    return nb, r, ok, x, off


@njit(cache=True, inline="always")
def _sum_again(
    w: np.ndarray, x: np.uint64, off: int, dg: int, runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray
) -> float:
    """The value of board ``x`` in the stage at ``off`` (with its :func:`base_value`), its indices
    computed afresh (:func:`opaque`)."""
    base = base_value(x, off, dg, w, runs, nruns, tbase)
    return fsum(w, features(opaque(x), off, runs, nruns, tbase)) + base


@njit(cache=True, **HOT)
def greedy_choice(
    b: np.uint64, kind: int, p_two: float, w: np.ndarray, runs: np.ndarray, nruns: np.ndarray,
    tbase: np.ndarray, stages: np.ndarray, dg: int, rules: tuple,
) -> tuple[int, np.uint64, int, float, np.uint64, int]:
    """1-ply choice: argmax over legal moves of ``r + V(after-state)`` (after-state network) or of
    ``r + E[V(next state)]`` (before-state network). Ties go to the first action of the rules' order
    (the lower action number by default; seed 004: up, down, left, right); with the rules'
    illegal_penalty a move that changes nothing is playable (:func:`scored_move`).

    An after-state network's four after-states have their weights prefetched together before
    any is summed, so the four sets of table reads overlap; the sums compute the indices again
    rather than keep them (:func:`opaque`). They are taken in action order, a tie going to the
    action of lower rank (the default order's ranks rise with the action, so a tie keeps the first).

    Returns (action or -1 if the game is over, after-state, reward, chosen value, the board and
    stage offset whose features value the chosen after-state (after-state networks; 0 and 0
    otherwise)).
    """
    _, penalty, _, order, rank = rules
    table = w.size // (stages.size + 1)
    best = _NEG
    zero = np.uint64(0)
    dg = rooted(b, dg)
    if kind == AFTER:  # written out: a loop over a tuple of the four results plays slower in numba
        n0, r0, k0, x0, o0 = _after(b, 0, penalty, stages, table, dg, w, runs, nruns, tbase)
        n1, r1, k1, x1, o1 = _after(b, 1, penalty, stages, table, dg, w, runs, nruns, tbase)
        n2, r2, k2, x2, o2 = _after(b, 2, penalty, stages, table, dg, w, runs, nruns, tbase)
        n3, r3, k3, x3, o3 = _after(b, 3, penalty, stages, table, dg, w, runs, nruns, tbase)
        j = -1
        rj = 4
        if k0:
            best, j, rj = r0 + _sum_again(w, x0, o0, dg, runs, nruns, tbase), 0, rank[0]
        if k1:
            v = r1 + _sum_again(w, x1, o1, dg, runs, nruns, tbase)
            if v > best or (v == best and rank[1] < rj):
                best, j, rj = v, 1, rank[1]
        if k2:
            v = r2 + _sum_again(w, x2, o2, dg, runs, nruns, tbase)
            if v > best or (v == best and rank[2] < rj):
                best, j, rj = v, 2, rank[2]
        if k3:
            v = r3 + _sum_again(w, x3, o3, dg, runs, nruns, tbase)
            if v > best or (v == best and rank[3] < rj):
                best, j, rj = v, 3, rank[3]
        if j == 0:
            return np.int64(0), n0, r0, best, x0, o0
        if j == 1:
            return np.int64(1), n1, r1, best, x1, o1
        if j == 2:
            return np.int64(2), n2, r2, best, x2, o2
        if j == 3:
            return np.int64(3), n3, r3, best, x3, o3
        return np.int64(-1), b, np.int64(0), best, zero, np.int64(0)
    best_a = np.int64(-1)
    best_b = b
    best_r = np.int64(0)
    for j in range(4):
        a = order[j]
        nb, r, ok = scored_move(b, a, penalty)
        if not ok:
            continue
        v = r + _before_value(nb, p_two, stages, table, w, runs, nruns, tbase)
        if v > best:
            best = v
            best_a = a
            best_b = nb
            best_r = r
    return best_a, best_b, best_r, best, zero, np.int64(0)


@njit(cache=True, **HOT)
def greedy_move(
    b: np.uint64, kind: int, p_two: float, w: np.ndarray, runs: np.ndarray, nruns: np.ndarray,
    tbase: np.ndarray, stages: np.ndarray, dg: int, rules: tuple,
) -> tuple[int, np.uint64, int, float]:
    """:func:`greedy_choice`'s (action or -1, after-state, reward, chosen value) and the feature
    indices of the chosen after-state (after-state networks; online TD updates it next move), or
    of the empty board."""
    a, nb, r, best, x, off = greedy_choice(b, kind, p_two, w, runs, nruns, tbase, stages, dg, rules)
    return a, nb, r, best, features(x, off, runs, nruns, tbase)


@njit(cache=True)
def move_values(
    b: np.uint64, kind: int, p_two: float, w: np.ndarray, runs: np.ndarray, nruns: np.ndarray,
    tbase: np.ndarray, stages: np.ndarray, dg: int, rules: tuple,
) -> np.ndarray:
    """[4] float64: ``r + V`` of each move as :func:`greedy_move` scores it; NaN for a move it
    cannot play (an illegal one, unless the rules' illegal_penalty)."""
    penalty = rules[1]
    table = w.size // (stages.size + 1)
    out = np.full(4, np.nan)
    dg = rooted(b, dg)
    for a in range(4):
        nb, r, ok = scored_move(b, a, penalty)
        if not ok:
            continue
        if kind == AFTER:
            x, off = view(nb, stages, table, dg)
            base = base_value(x, off, dg, w, runs, nruns, tbase)
            out[a] = r + value_at(x, off, w, runs, nruns, tbase) + base
        else:
            out[a] = r + _before_value(nb, p_two, stages, table, w, runs, nruns, tbase)
    return out


@njit(cache=True, **HOT)
def play_game_train(
    b: np.uint64, w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, ready: np.ndarray,
    runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray, stages: np.ndarray,
    kind: int, online: bool, tc: bool, quirk: bool, alpha_f: float, lam: float,
    p_two: float, state: np.ndarray, buf_b: np.ndarray, buf_r: np.ndarray,
    pool: np.ndarray, pool_n: np.ndarray, restart_tile: int, keep: bool, dg: int, rules: tuple,
) -> tuple[int, int, int]:
    """Play one self-play game from ``b`` with 1-ply greedy moves and learn from it.

    After-state TD(0) (Szubert & Jaśkowski 2014): ``V(s'_t) += α (r_{t+1} + V(s'_{t+1}) - V(s'_t))``,
    terminal target 0. Before-state TD(0) (seed 004): ``V(s_t) += α (r_t + V(s_{t+1}) - V(s_t))``;
    ``quirk`` reproduces seed 004's double-counted reward ``r_t + r_{t+1} + V(s_{t+1})``.
    ``online`` updates after every move; otherwise the episode is swept backwards at its end
    (seed 004, TDL2048), with λ-returns ``G_t = r + (1-λ) V(next) + λ G_{t+1}`` when ``lam > 0``.
    Boards whose largest tile first reaches ``restart_tile`` are saved to the worker's ``pool``.
    ``rules`` add seed 004's rules: the game ends at a full board (end_on_full_board), unchanged-board
    moves score -1 and spawn (illegal_penalty), and targets are discounted, ``r + gamma * V(next)``
    (λ-returns ``r + gamma ((1-λ) V + λ G)``); moves are chosen by :func:`greedy_choice` under them.
    Backward updates keep the episode in ``buf_b``/``buf_r``; online after-state updates keep the
    after-states in ``buf_b`` too when ``keep`` (chained restarts read them, :func:`train_worker`).

    Every board is valued and updated as :func:`view` reads it with ``dg``.

    Returns (score, largest exponent, moves).
    """
    end_on_full_board, _, gamma, _, _ = rules
    discounted = gamma != 1.0
    table = w.size // (stages.size + 1)
    multistage = stages.size > 0
    score = np.int64(0)
    moves = np.int64(0)
    n = 0
    prev = np.uint64(0)
    prev_x = prev  # online after-state TD: the board and stage offset of the previous after-state's features
    prev_off = np.int64(0)
    prev_r = np.int64(0)
    have_prev = False
    saved = reaches(b, restart_tile)
    while True:
        if end_on_full_board and seed004_end(b):
            break
        need = False  # a move makes at most a tile one above the largest: only then can it open a stage
        if multistage and dg != RESIDUAL:  # a residual stage starts at zero, not as a copy
            for s in range(1, ready.size):
                if ready[s] == 0 and reaches(b, stages[s - 1] - 1):
                    need = True
        if need:
            for a in range(4):
                nb, _ = move(b, a)
                s = stage_of(nb, stages)
                if s > 0 and ready[s] == 0:
                    _promote(s, table, w, e_acc, a_acc, ready, tc)
        a, nb, r, best, x, off = greedy_choice(b, kind, p_two, w, runs, nruns, tbase, stages, dg, rules)
        if a < 0:
            break
        if kind == AFTER:
            if online:  # V(s'_{t-1}) += α (r_t + V(s'_t) - V(s'_{t-1})), its features read again
                if have_prev:
                    goal = best
                    if discounted:
                        goal = r + gamma * (fsum(w, features(x, off, runs, nruns, tbase))
                                            + base_value(x, off, dg, w, runs, nruns, tbase))
                    prev_i = features(prev_x, prev_off, runs, nruns, tbase)
                    prev_v = fsum(w, prev_i) + base_value(prev_x, prev_off, dg, w, runs, nruns, tbase)
                    _update(prev_i, goal - prev_v, alpha_f, tc, w, e_acc, a_acc)
                prev = nb
                prev_x = x
                prev_off = off
                have_prev = True
                if keep:
                    buf_b[n] = nb
                    n += 1
            else:
                buf_b[n] = nb
                buf_r[n] = r
                n += 1
        else:
            if online:
                if have_prev:
                    vb = value_at(b, stage_of(b, stages) * table, w, runs, nruns, tbase)
                    if discounted:
                        vb = gamma * vb
                    _td(prev, prev_r + vb, stages, table, dg, alpha_f, tc, w, e_acc, a_acc, runs, nruns,
                        tbase)
                prev = b
                prev_r = r
                have_prev = True
            else:
                buf_b[n] = b
                buf_r[n] = r
                n += 1
        b = spawn(nb, state, p_two)
        score += r
        moves += 1
        if not saved and reaches(b, restart_tile):
            saved = True
            pool[pool_n[0] % pool.size] = b
            pool_n[0] += 1
    if online:
        if have_prev:
            target = 0.0 if kind == AFTER else np.float64(prev_r)
            _td(prev, target, stages, table, dg, alpha_f, tc, w, e_acc, a_acc, runs, nruns, tbase)
    elif n > 0:
        # Backward sweep; the weights of the board two steps ahead are prefetched while this one is updated.
        # Features, sums and updates inlined: handing the 32 indices to a compiled function
        # copies them through the stack at every step (docs/ntuple-lab.md).
        target = np.float64(0.0)
        for t in range(n - 1, -1, -1):
            if t > 1:
                x2, o2 = view(opaque(buf_b[t - 2]), stages, table, dg)
                i2 = features(x2, o2, runs, nruns, tbase)
                fprefetch(w, i2)
                if dg == RESIDUAL and o2 > 0:
                    fprefetch(w, features(downgrade_top(x2), 0, runs, nruns, tbase))
                if tc:
                    fprefetch(e_acc, i2)
                    fprefetch(a_acc, i2)
            x, o = view(buf_b[t], stages, table, dg)
            cur = features(x, o, runs, nruns, tbase)
            if kind == AFTER:
                base = base_value(x, o, dg, w, runs, nruns, tbase)
                _update(cur, target - base - fsum(w, cur), alpha_f, tc, w, e_acc, a_acc)
                vnew = fsum(w, cur) + base
                if discounted:
                    target = buf_r[t] + gamma * ((1.0 - lam) * vnew + lam * target)
                else:
                    target = buf_r[t] + (1.0 - lam) * vnew + lam * target
            else:
                goal = buf_r[t] + (gamma * target if discounted else target)
                vnew = _learn(cur, goal - fsum(w, cur), alpha_f, tc, w, e_acc, a_acc)
                target = (1.0 - lam) * vnew + lam * goal
                if quirk:
                    target += buf_r[t]
    return score, max_exponent(b), moves


@njit(cache=True, nogil=True)
def train_worker(
    count: int, w: np.ndarray, e_acc: np.ndarray, a_acc: np.ndarray, ready: np.ndarray,
    runs: np.ndarray, nruns: np.ndarray, tbase: np.ndarray, stages: np.ndarray,
    kind: int, online: bool, tc: bool, quirk: bool, alpha_f: float, lam: float,
    p_two: float, state: np.ndarray, buf_b: np.ndarray, buf_r: np.ndarray,
    pool: np.ndarray, pool_n: np.ndarray, restart_tile: int, restart_prob: float,
    out_score: np.ndarray, out_tile: np.ndarray, out_moves: np.ndarray, out_restart: np.ndarray,
    chain_min: int, chain_at: float, out_chain: np.ndarray, dg: int, rules: tuple,
) -> None:
    """One Hogwild worker: ``count`` self-play games (:func:`play_game_train`) on the shared
    weights. It releases the GIL, so the trainer runs one per thread.

    ``state`` (its RNG, one element), ``buf_*`` (episode buffer) and ``pool`` / ``pool_n`` (saved
    late-game boards; with probability ``restart_prob`` a game starts from one of them, Jaśkowski
    2018) belong to this worker. Game ``j`` writes its results at ``out_*[j]``.

    Chained midpoint restarts (ziap/2048-tdl ``learning.h``; TDL2048+'s ``restart`` mode), on when
    ``chain_min`` (L) > 0, after-state networks only: once an episode of ``n > L`` moves is learned,
    a new episode starts from its after-state ``buf_b[floor(chain_at * n)]`` plus a spawn drawn
    from ``state``, is played and learned the same way, and is itself restarted, until one has at
    most L moves. ``out_score``/``out_tile``/``out_moves`` are the fresh game's; ``out_chain[j]``
    counts the moves of its restarted episodes (their scores and tiles are not reported).
    ``dg`` is how every board is read (:func:`view`): 0 as it is, 2 a late stage through
    :func:`downgrade_top` (after-state networks); ``rules`` as :func:`play_game_train`'s.
    """
    w, e_acc, a_acc, ready = unowned(w), unowned(e_acc), unowned(a_acc), unowned(ready)
    runs, nruns, tbase, stages = unowned(runs), unowned(nruns), unowned(tbase), unowned(stages)
    state, buf_b, buf_r = unowned(state), unowned(buf_b), unowned(buf_r)
    pool, pool_n = unowned(pool), unowned(pool_n)
    keep = chain_min > 0
    for j in range(count):
        have = min(pool_n[0], pool.size)
        restart = False
        if restart_prob > 0.0 and have > 0 and rand_float(state) < restart_prob:
            b = pool[rand_below(state, have)]
            restart = True
        else:
            b = new_board(state, p_two)
        sc, mx, mv = play_game_train(
            b, w, e_acc, a_acc, ready, runs, nruns, tbase, stages, kind, online, tc, quirk, alpha_f, lam,
            p_two, state, buf_b, buf_r, pool, pool_n, restart_tile, keep, dg, rules,
        )
        out_score[j] = sc
        out_tile[j] = mx
        out_moves[j] = mv
        out_restart[j] = restart
        if keep:
            extra = np.int64(0)
            n = mv  # after-states in buf_b: one a move
            while n > chain_min:
                b = spawn(buf_b[np.int64(chain_at * n)], state, p_two)
                _, _, n = play_game_train(
                    b, w, e_acc, a_acc, ready, runs, nruns, tbase, stages, kind, online, tc, quirk, alpha_f,
                    lam, p_two, state, buf_b, buf_r, pool, pool_n, restart_tile, keep, dg, rules,
                )
                extra += n
            out_chain[j] = extra
