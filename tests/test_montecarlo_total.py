"""``montecarlo`` with ``playouts_total``: seed 002 part 3's budget (``simulation_size`` playouts in
all, each a random game from the board, grouped by first move)."""

from __future__ import annotations

import numpy as np
import pytest

from ai2048 import Game, engine
from ai2048.agents import make_agent
from ai2048.engine.rng import seed_state
from ai2048.engine.spawn import random_legal_action, random_play, spawn
from ai2048.search.montecarlo import playout_values_total


def _reference(b: np.uint64, total: int, state: np.ndarray, p_two: float) -> tuple[np.ndarray, np.ndarray]:
    """The seed's loop in Python on the same random stream: (mean per first move, playouts per first move)."""
    scores: dict[int, list[float]] = {a: [] for a in range(4)}
    for _ in range(total):
        a, nb, r = random_legal_action(b, state)
        start = spawn(nb, state, np.float64(p_two))
        _, score, _ = random_play(start, state, np.float64(p_two))
        scores[int(a)].append(float(r + score))
    means = np.array([np.mean(scores[a]) if scores[a] else -np.inf for a in range(4)])
    return means, np.array([len(scores[a]) for a in range(4)])


def _boards(n: int) -> list[np.uint64]:
    out = []
    for seed in range(n):
        g = Game(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(int(rng.integers(0, 60))):
            if g.is_over:
                break
            g.step(int(rng.choice(g.legal_actions())))
        if not g.is_over:
            out.append(np.uint64(g.board))
    return out


@pytest.mark.parametrize("total", [1, 3, 50, 600])  # 600: across kernel calls of CHUNK playouts
def test_playout_values_total__matches_the_seeds_loop(total: int) -> None:
    for i, b in enumerate(_boards(12)):
        got = playout_values_total(b, total, seed_state(i), 0.9)
        want, counts = _reference(b, total, seed_state(i), 0.9)
        np.testing.assert_array_equal(got, want)
        assert counts.sum() == total
        legal = engine.legal_bits(b)
        assert all(legal >> a & 1 for a in range(4) if counts[a])  # only legal first moves are played


def test_playout_values_total__splits_the_budget_uniformly_over_legal_moves() -> None:
    b = _boards(1)[0]
    _, counts = _reference(b, 4000, seed_state(7), 0.9)
    legal = [a for a in range(4) if engine.legal_bits(b) >> a & 1]
    share = 4000 / len(legal)
    for a in range(4):
        if a in legal:
            assert abs(counts[a] - share) < 5 * np.sqrt(share)
        else:
            assert counts[a] == 0


def test_montecarlo_agent__playouts_total_plays_a_legal_move_and_repeats_with_its_seed() -> None:
    agent = make_agent("montecarlo", playouts_total=5, seed=3)
    g = Game(seed=11)
    moves = []
    for _ in range(20):
        a = agent.act(g.board)
        assert a in g.legal_actions()
        moves.append(int(a))
        g.step(a)
    agent.reset(3)
    g = Game(seed=11)
    again = []
    for _ in range(20):
        again.append(int(agent.act(g.board)))
        g.step(again[-1])
    assert again == moves
    total = make_agent("montecarlo", playouts_total=1, seed=0)
    assert len(total.explain(Game(seed=2).board)) == 1  # one playout: one first move has a value


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "5"])
def test_montecarlo_agent__bad_playouts_total_is_a_clear_error(bad: object) -> None:
    with pytest.raises(ValueError, match="playouts_total"):
        make_agent("montecarlo", playouts_total=bad)


def test_playout_values__the_same_in_kernel_calls_of_any_size(monkeypatch) -> None:
    """Decisions run in short kernel calls (so Ctrl-C is seen); the values are those of one long call."""
    from ai2048.search import montecarlo

    b = _boards(1)[0]
    monkeypatch.setattr(montecarlo, "CHUNK", 7)
    small = montecarlo.playout_values(b, 600, seed_state(3), 0.9)
    monkeypatch.setattr(montecarlo, "CHUNK", 10**6)
    np.testing.assert_array_equal(small, montecarlo.playout_values(b, 600, seed_state(3), 0.9))


def test_montecarlo__a_long_decision_stops_at_ctrl_c() -> None:
    """Before: the playouts ran in one kernel call holding the GIL, so Ctrl-C and SIGTERM waited for
    the whole decision (with playouts=10**12, forever)."""
    import _thread
    import threading
    import time

    agent = make_agent("montecarlo", playouts_total=400_000, seed=1)  # seconds of playouts
    board = _boards(1)[0]
    make_agent("montecarlo", playouts=1).act(board)  # kernels compiled before the clock starts
    timer = threading.Timer(0.1, _thread.interrupt_main)
    t0 = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        agent.act(board)
    assert time.perf_counter() - t0 < 1.0
    timer.join()
