"""Whole games inside numba: the move loop of ``ai2048.evaluate.play_game`` with an agent's choice
compiled in, so evaluating a kernel-backed agent never returns to Python between moves.

A *chooser* is a numba function ``choose(board: uint64, ctx: tuple) -> int64``: the action the
agent plays on ``board`` (-1 when no move is legal); ``ctx`` holds its weights, tables and scratch
arrays. :func:`bind` compiles a template with named globals bound to numba functions (as
:mod:`ai2048.search.specialise` binds evaluators), so :func:`play_batch` is compiled once per
chooser with the chooser inlined, and cached on disk when everything bound is cached.

Games follow ``Game(seed)`` exactly: the RNG state is the game seed, the board starts with
``new_board`` and every legal move is followed by ``spawn``; so the same seed and the same choices
give the same game and the same record as the Python loop. The seeds' end rules are played here
too (:func:`ends_early`: a goal tile, seeds 000 and 003; seed 004's full-board end), checked once
per move only when asked for, and seed 004's unmasked moves (a move that changes nothing costs 1
point and a tile still spawns) when asked for. Agents return a :class:`GameKernel` from ``game_kernel()``;
:mod:`ai2048.evaluate.kernel` plays with it.
"""

# mypy: disable-error-code="arg-type,return-value,assignment,name-defined"
# (numba kernels mix Python and numpy scalar types that mypy cannot reconcile)
from __future__ import annotations

import hashlib
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from ai2048.engine.board import count_empty, reaches, seed004_end
from ai2048.engine.moves import is_over, move
from ai2048.engine.spawn import new_board, spawn
from ai2048.engine.supertiles import look_again, loop_move, needs_exact, view_and_forced
from ai2048.search import expectimax as _ex
from ai2048.search import minimax as _mm
from ai2048.search.specialise import _source_hash, is_jitted, unbound_evaluator

RUNNING, OVER, ILLEGAL = 0, 1, 2
"""Per-game status written by :func:`play_batch`: still playing, finished, stopped by a bad choice."""

CHOOSE: Callable[..., int] = unbound_evaluator
"""The chooser :func:`play_batch` calls; :func:`bind` binds it per agent family."""
GREEDY: Callable[..., Any] = unbound_evaluator
"""An n-tuple kernels module's ``greedy_choice``, bound in :func:`choose_ntuple`."""
ROOT: Callable[..., Any] = unbound_evaluator
"""A compiled search root (expectimax ``root_values`` or ``minimax_root``), bound in the search choosers."""
HOOK: Callable[..., Any] = unbound_evaluator
"""An expectimax search's ``root_hook``, bound in :func:`expectimax_kernel` (:func:`no_hook` when none)."""


@njit(cache=True)
def no_hook(b: np.uint64, data: tuple) -> None:
    """The root hook of a search that has none."""


def end_rule_args(goal_tile: int | None, end_on_full_board: bool,
                  illegal_move: str = "reject") -> tuple[int, bool, bool]:
    """The rules as :func:`play_batch` takes them: (goal exponent, 0 = no goal tile; full-board end;
    seed 004's unchanged-move penalty).

    ``goal_tile`` is a checked power of two (:func:`ai2048.evaluate.check_end_rules`) or None;
    ``illegal_move`` is ``reject`` or ``penalty`` (:func:`ai2048.evaluate.check_illegal_move`).
    """
    goal = 0 if goal_tile is None else int(goal_tile).bit_length() - 1
    return goal, bool(end_on_full_board), illegal_move == "penalty"


@njit(cache=True, inline="always")
def ends_early(b: np.uint64, goal_exp: int, full_end: bool) -> bool:
    """True when ``b`` (after a move and its spawn) ends the game by a seed's rule: a tile of at least
    ``2**goal_exp`` (seeds 000 and 003; ``goal_exp`` > 0), or, with ``full_end``, no empty cell or a
    32768 (seed 004's ``end()``); as :func:`ai2048.evaluate.ends_early`, in a few word operations."""
    if goal_exp > 0 and reaches(b, goal_exp):
        return True
    return full_end and seed004_end(b)


def play_batch(  # kernel template: compiled per chooser by ``bind`` (CHOOSE is bound there)
    ctx: tuple, boards: np.ndarray, states: np.ndarray, scores: np.ndarray, moves: np.ndarray,
    status: np.ndarray, acts: np.ndarray, nacts: np.ndarray, max_moves: int, p_two: float, stop: np.ndarray,
    goal_exp: int, full_end: bool, penalty: bool, supers: np.ndarray, exact: bool,
) -> None:
    """Play every RUNNING game ``i`` on from ``boards[i]`` (0 = not started: ``new_board``) for at
    most ``acts.shape[1]`` moves, writing its actions to ``acts[i, :nacts[i]]``.

    ``states[i]`` is game ``i``'s RNG state (its seed before the first call); boards, states,
    scores, moves and status are updated in place, so a game longer than the buffer is continued
    by calling again. A game ends when the chooser finds no legal move, after ``max_moves`` moves
    (0 = no limit), or, after a move and its spawn, by the end rules ``goal_exp`` and ``full_end``
    (:func:`end_rule_args`, :func:`ends_early`; not looked at when both are off). A choice that
    changes nothing stops the game as ILLEGAL, unless ``penalty`` (seed 004): then it costs 1 point
    and a tile still spawns (on a board with an empty cell). ``stop[0] != 0`` (set by another
    thread) returns at the next move. With ``exact`` (rules version 1) ``supers[i]`` holds the exact
    values of game ``i``'s tiles of 32768 or more (:mod:`ai2048.engine.supertiles`): two equal ones
    merge, and the chooser sees the :func:`~ai2048.engine.supertiles.planning_view`.
    """
    cap = acts.shape[1]
    rules = goal_exp > 0 or full_end
    for i in range(boards.size):
        n = 0
        if status[i] == RUNNING:
            st = states[i : i + 1]
            b = boards[i]
            s = np.int64(supers[i])
            if b == 0:
                b = new_board(st, p_two)
            slow = exact and needs_exact(b, s)
            while n < cap and stop[0] == 0:
                if max_moves > 0 and moves[i] >= max_moves:
                    status[i] = OVER
                    break
                view, a = b, np.int64(-1)
                if slow:  # two tiles of 32768 or more: the planning view
                    view, a = view_and_forced(b, s)
                if a < 0:
                    if exact and view != b and is_over(view):
                        status[i] = OVER
                        break
                    a = CHOOSE(view, ctx)
                if a < 0:
                    status[i] = OVER if is_over(b) else ILLEGAL
                    break
                if a > 3:
                    status[i] = ILLEGAL
                    break
                nb, ns, r = loop_move(b, s, slow, a)
                if nb == b and ns == s:
                    if not penalty or count_empty(b) == 0:
                        status[i] = ILLEGAL
                        acts[i, n] = a
                        break
                    r = np.int64(-1)
                b = spawn(nb, st, p_two)
                s = ns
                slow = look_again(b, s, slow, r, exact)
                scores[i] += r
                moves[i] += 1
                acts[i, n] = a
                n += 1
                if rules and ends_early(b, goal_exp, full_end):
                    status[i] = OVER
                    break
            boards[i] = b
            supers[i] = s
        nacts[i] = n


@njit(cache=True, inline="always")
def best_in_order(values: np.ndarray, order: np.ndarray) -> int:
    """The action with the largest value, ties to the first in ``order``; ``-inf`` = illegal; -1 if none
    (as :func:`ai2048.agents.seed_actions.best_in_order`)."""
    best = np.int64(-1)
    best_v = -np.inf
    for a in order:
        v = values[a]
        if v == -np.inf:
            continue
        if best < 0 or v > best_v:
            best = np.int64(a)
            best_v = v
    return best


@njit(cache=True)
def choose_greedy(b: np.uint64, ctx: tuple) -> int:
    """The ``greedy`` agent: the largest immediate reward, ties to the first in ``ctx[0]`` (an order)."""
    order = ctx[0]
    best = np.int64(-1)
    best_r = np.int64(-1)
    for a in order:
        nb, r = move(b, a)
        if nb != b and (best < 0 or r > best_r):
            best = np.int64(a)
            best_r = r
    return best


@njit(cache=True)
def choose_random(b: np.uint64, ctx: tuple) -> int:
    """The ``random`` agent: a uniform legal move drawn as ``ctx[0].integers(number legal)`` (a numpy
    Generator, so the draws are those of ``RandomAgent.act``)."""
    rng = ctx[0]
    legal = np.empty(4, np.int64)
    n = 0
    for a in range(4):
        nb, _ = move(b, a)
        if nb != b:
            legal[n] = a
            n += 1
    if n == 0:
        return np.int64(-1)
    return legal[rng.integers(0, n)]


def choose_ntuple(b: np.uint64, ctx: tuple) -> int:  # template: GREEDY is bound by ``bind``
    """An n-tuple network's 1-ply move: ``ctx = (kind, p_two, w, runs, nruns, tbase, stages, downgrade,
    rules)``."""
    kind, p_two, w, runs, nruns, tbase, stages, dg, rules = ctx
    return GREEDY(b, kind, p_two, w, runs, nruns, tbase, stages, dg, rules)[0]


def choose_expectimax(b: np.uint64, ctx: tuple) -> int:  # template: ROOT is bound by ``bind``
    """An expectimax move as :class:`ai2048.search.expectimax.Expectimax` makes it (its root hook,
    its root values), then the agent's tie-break: ``ctx = (data, depth (0 = adaptive), offset,
    min_depth, max_depth, p_two, cutoff, reward_weight, tt, tt_f, stats, order)``."""
    data, depth, offset, lo, hi, p_two, cutoff, rw, tt, tt_f, stats, order = ctx
    HOOK(b, data)
    d = depth
    if d <= 0:
        d = min(max(max(4, _ex.distinct_tiles(b) - 1) - offset, lo), hi)
    stats[_ex.GEN] += 1
    stats[_ex.ABORTED] = 0
    stats[_ex.LIMIT] = 0
    return best_in_order(ROOT(data, b, d, p_two, cutoff, rw, tt, tt_f, stats), order)


def choose_minimax(b: np.uint64, ctx: tuple) -> int:  # template: ROOT is bound by ``bind``
    """A fixed-depth minimax move: ``ctx = (data, depth, prune, fours, stats, order)``."""
    data, depth, prune, fours, stats, order = ctx
    stats[_mm.ABORTED] = 0
    stats[_mm.LIMIT] = 0
    return best_in_order(ROOT(data, b, depth, prune, fours, stats, order), order)


def _cached(fn: Any) -> bool:
    """True when the numba function ``fn`` caches its compiled code on disk."""
    return type(getattr(fn, "_cache", None)).__name__ not in ("NullCache", "NoneType")


_BOUND: dict[tuple[Any, ...], Any] = {}


def bind(template: Callable[..., Any], **names: Any) -> Any:
    """``template`` compiled (nogil) with each global in ``names`` bound to the numba function given.

    The copy's name carries a hash of what is bound (module, name and source file of each), so it
    is cached on disk side by side with other bindings, when every bound function is cached itself
    (package kernels, generated n-tuple modules); memoised per binding in this process.
    """
    for k, fn in names.items():
        if not is_jitted(fn):
            raise TypeError(f"{k} must be a numba @njit function, got {type(fn).__name__}")
    key = (template, *sorted(names.items(), key=lambda kv: kv[0]))
    if key in _BOUND:
        return _BOUND[key]
    ident = ";".join(
        f"{k}={fn.py_func.__module__}.{fn.py_func.__qualname__}:{_source_hash(fn)}"
        for k, fn in sorted(names.items())
    )
    tag = hashlib.sha1(ident.encode()).hexdigest()[:12]
    scope = dict(template.__globals__)
    scope.update(names)
    copy = types.FunctionType(template.__code__, scope, template.__name__, template.__defaults__)
    copy.__qualname__ = f"{template.__name__}__{tag}"
    copy.__doc__ = template.__doc__
    inline = "never" if template is play_batch else "always"  # choosers: inlined into the game loop
    out = njit(cache=all(_cached(fn) for fn in names.values()), nogil=True, inline=inline)(copy)
    _BOUND[key] = out
    return out


@dataclass(frozen=True)
class GameKernel:
    """How an agent plays whole games in numba.

    ``play`` is :func:`play_batch` compiled for the agent's chooser. ``context(seed)`` builds the
    chooser's ``ctx``: once per thread with ``None`` (fresh scratch such as a transposition table),
    or, when ``per_game``, once per game with the game's seed (agents reseeded by ``reset(seed)``).
    """

    play: Any
    context: Callable[[int | None], tuple]
    per_game: bool = False


def order_array(order: Sequence[int]) -> np.ndarray:
    """An action order (e.g. ``SEED_ORDERS["004"]``) as the int64 array the choosers take."""
    return np.array([int(a) for a in order], dtype=np.int64)


def greedy_kernel(order: Sequence[int]) -> GameKernel:
    """Games of the ``greedy`` agent with tie-break ``order``."""
    arr = order_array(order)
    return GameKernel(bind(play_batch, CHOOSE=choose_greedy), lambda seed: (arr,))


def random_kernel() -> GameKernel:
    """Games of the ``random`` agent: each game draws from ``np.random.default_rng(game seed)``."""
    return GameKernel(bind(play_batch, CHOOSE=choose_random), lambda seed: (np.random.default_rng(seed),),
                      per_game=True)


def ntuple_kernel(module: Any, kind: int, p_two: float, data: tuple, downgrade: int,
                  rules: tuple) -> GameKernel:
    """1-ply games of an n-tuple network: the ``greedy_choice`` of its kernels ``module``
    (:mod:`ai2048.ntuple.codegen`, the move ``act`` plays) under ``rules``
    (:attr:`ai2048.ntuple.codegen.KernelOptions.rules`), ``kind`` (0 after-state, 1 before-state
    values) and ``data = (w, runs, nruns, tbase, stages)``."""
    choose = bind(choose_ntuple, GREEDY=module.greedy_choice)
    ctx = (np.int64(kind), float(p_two), *data, np.int64(downgrade), rules)
    return GameKernel(bind(play_batch, CHOOSE=choose), lambda seed: ctx)


def expectimax_kernel(search: _ex.Expectimax, depth: int, order: Sequence[int], offset: int = 1,
                      min_depth: int = 2, max_depth: int = 8) -> GameKernel:
    """Games of an expectimax agent at a fixed ``depth`` (0 = nneonneo's adaptive rule with ``offset``
    and bounds), breaking ties in ``order``; every thread gets its own transposition table."""
    choose = bind(choose_expectimax, ROOT=search._root, HOOK=search.root_hook or no_hook)
    arr = order_array(order)

    def context(seed: int | None) -> tuple:
        size = (1 << search.tt_bits) if search.tt_bits else 0
        tt = np.zeros((size, 4), dtype=np.uint64)
        stats = np.zeros(8, dtype=np.int64)
        stats[_ex.SHIFT] = 64 - search.tt_bits
        return (search.thread_data(), np.int64(depth), np.int64(offset), np.int64(min_depth),
                np.int64(max_depth), search.p_two, search.prob_cutoff, search.reward_weight, tt,
                tt.view(np.float64), stats, arr)

    return GameKernel(bind(play_batch, CHOOSE=choose), context)


def minimax_kernel(search: _mm.Minimax, depth: int, order: Sequence[int]) -> GameKernel:
    """Games of a fixed-depth minimax agent breaking ties in ``order`` (its root searches in that
    order, which keeps alpha-beta's choice exact; see :mod:`ai2048.search.minimax`)."""
    choose = bind(choose_minimax, ROOT=search._root)
    arr = order_array(order)
    return GameKernel(
        bind(play_batch, CHOOSE=choose),
        lambda seed: (search.data, np.int64(depth), search.prune, search.fours, np.zeros(4, np.int64), arr),
    )
