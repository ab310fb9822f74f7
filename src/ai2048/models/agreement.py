"""Do two weight arrays of one network play the same 1-ply moves? Positions, moves and the fix.

float16 rounds a weight by up to 2**-11 of its size, so a move value ``r + V`` (a sum of 8k
weights) can move by a few units; where two moves' values lie closer than that the rounded
network may pick the other move. :func:`calibrate` finds such positions in the network's own
games and keeps the weights that decide them as float32 until every calibration position agrees.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ai2048 import engine
from ai2048.ntuple.codegen import DEFAULT_RULES
from ai2048.ntuple.network import KINDS, Network
from ai2048.ntuple.patterns import isomorphic_patterns
from ai2048.rules import P_TWO

_SALT = 15
"""Salt of the position games' seeds: ``SeedSequence([seed, 15])``, apart from the trainer's games
(``SeedSequence([seed, worker])``) and evaluations' (:func:`ai2048.evaluate.game_seeds`)."""


def game_states(seed: int, games: int, salt: int = _SALT) -> np.ndarray:
    """[games] uint64 RNG states, one per game, derived from ``seed`` and ``salt`` (same seed, same games)."""
    return np.random.SeedSequence([int(seed), salt]).generate_state(games, np.uint64)


def greedy_moves(
    net: Network, boards: np.ndarray, w: np.ndarray | None = None, p_two: float = P_TWO
) -> np.ndarray:
    """[N] int8 1-ply moves of ``net`` (with weights ``w`` instead of ``net.w`` if given); -1 if over."""
    w = net.w if w is None else w
    kind = KINDS.index(net.kind)
    out = np.empty(len(boards), np.int8)
    k = net.k
    for i, b in enumerate(np.asarray(boards, dtype=np.uint64)):
        a, _, _, _, _ = k.greedy_move(b, kind, p_two, w, net.runs, net.nruns, net.tbase, net.stage_arr, 0,
                                      DEFAULT_RULES)
        out[i] = a
    return out


def game_positions(net: Network, n: int, seed: int, p_two: float = P_TWO, min_games: int = 4) -> np.ndarray:
    """[n] uint64 positions drawn uniformly from the network's own 1-ply games (seeded).

    Plays at least ``min_games`` games and enough for ``4 n`` positions, so the draw covers the
    openings and the endgames of several games.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    kind = KINDS.index(net.kind)
    k = net.k
    seen: list[np.ndarray] = []
    total, g = 0, 0
    while g < min_games or total < 4 * n:
        state = game_states(seed, g + 1)[g : g + 1].copy()
        b = np.uint64(engine.new_board(state, p_two))
        boards = []
        while True:
            a, nb, _, _, _ = k.greedy_move(
                b, kind, p_two, net.w, net.runs, net.nruns, net.tbase, net.stage_arr, 0, DEFAULT_RULES
            )
            if a < 0:
                break
            boards.append(b)
            b = np.uint64(engine.spawn(np.uint64(nb), state, p_two))
        seen.append(np.array(boards, dtype=np.uint64))
        total += len(boards)
        g += 1
    every = np.concatenate(seen)
    rng = np.random.default_rng([seed, _SALT])
    return every[np.sort(rng.choice(every.size, size=n, replace=False))]


def feature_indices(net: Network, board: int) -> np.ndarray:
    """[8k] int64 weight indices of ``board``'s features in its stage (numpy, from the patterns)."""
    cells = [(int(board) >> (4 * i)) & 15 for i in range(16)]
    stage = sum(max(cells) >= t for t in net.stages)
    off = stage * net.table
    idx = []
    for t, base in zip(net.tuples, net.tbase, strict=True):
        for iso in isomorphic_patterns(t):
            idx.append(off + int(base) + sum(cells[c] << (4 * j) for j, c in enumerate(iso)))
    return np.array(idx, dtype=np.int64)


def feature_indices_many(net: Network, boards: np.ndarray) -> np.ndarray:
    """[N, 8k] int64 weight indices of each board's features in its stage (:func:`feature_indices` for
    many)."""
    b = np.asarray(boards, dtype=np.uint64)
    cells = ((b[:, None] >> (np.uint64(4) * np.arange(16, dtype=np.uint64))) & np.uint64(15)).astype(np.int64)
    stage = (cells.max(1)[:, None] >= np.array(net.stages, dtype=np.int64)[None, :]).sum(1)
    off = stage * net.table
    cols = []
    for t, base in zip(net.tuples, net.tbase, strict=True):
        for iso in isomorphic_patterns(t):
            idx = off + int(base)
            for j, c in enumerate(iso):
                idx = idx + (cells[:, c] << (4 * j))
            cols.append(idx)
    return np.stack(cols, 1) if cols else np.zeros((b.size, 0), np.int64)


def hot_indices(net: Network, boards: np.ndarray, p_two: float = P_TWO) -> np.ndarray:
    """Sorted int64 indices of every weight that enters the 1-ply choice at any of ``boards``.

    Positions of a network's games share most of their features, so keeping these weights exact
    also fixes most near-ties of positions never seen (docs/ntuple.md, "Shipped networks").
    """
    boards = np.asarray(boards, dtype=np.uint64)
    if net.kind != "after":
        return np.unique(
            np.concatenate([decision_indices(net, int(b), p_two) for b in boards] or [np.zeros(0, np.int64)])
        )
    out = [np.zeros(0, np.int64)]
    for a in range(4):
        nb = np.array([engine.move(b, a)[0] for b in boards], dtype=np.uint64)
        out.append(np.unique(feature_indices_many(net, nb[nb != boards])))
    return np.unique(np.concatenate(out))


def decision_indices(net: Network, board: int, p_two: float = P_TWO) -> np.ndarray:
    """int64 indices of every weight that enters the 1-ply choice at ``board``: the features of
    each legal move's after-state (after-state networks) or of its spawn outcomes (before-state)."""
    out = []
    for a in range(4):
        nb, _ = engine.move(np.uint64(board), a)
        if int(nb) == int(board):
            continue
        if net.kind == "after":
            out.append(feature_indices(net, int(nb)))
        else:
            boards, _ = engine.spawn_outcomes(np.uint64(nb), p_two)
            out.extend(feature_indices(net, int(x)) for x in boards)
    return np.unique(np.concatenate(out)) if out else np.zeros(0, np.int64)


def calibrate(
    net: Network,
    boards: np.ndarray,
    stored: Callable[[np.ndarray], np.ndarray],
    p_two: float = P_TWO,
    max_rounds: int = 50,
    want: np.ndarray | None = None,
    exact: np.ndarray | None = None,
) -> tuple[np.ndarray, list[int]]:
    """Indices to keep exact so that ``stored(exact)`` plays ``net``'s move on every board.

    ``stored(exact)`` returns the weights a file with those exact entries decodes to; ``want``, the
    float32 network's moves if already known; ``exact``, indices kept exact from the start. Each round
    adds the decision weights of the boards that still disagree; making weights exact can move
    other boards' values, so it repeats until none disagree.

    Returns:
        exact: int64 sorted indices
        rounds: disagreements found in each round (the last is 0)
    """
    want = greedy_moves(net, boards, p_two=p_two) if want is None else want
    exact = np.zeros(0, np.int64) if exact is None else exact
    history: list[int] = []
    for _ in range(max_rounds):
        got = greedy_moves(net, boards, stored(exact), p_two=p_two)
        bad = np.flatnonzero(got != want)
        history.append(int(bad.size))
        if not bad.size:
            return exact, history
        exact = np.union1d(exact, np.concatenate([decision_indices(net, int(boards[i]), p_two) for i in bad]))
    raise RuntimeError(f"moves still disagree after {max_rounds} rounds of calibration: {history}")
