"""Whole games in numba: the fast path of ``evaluate`` plays the same games, moves and records as
the Python loop (``play_game``) for every kernel-backed agent, and stops cleanly."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from numba import njit

import ai2048
from ai2048.agents.base import make_agent
from ai2048.agents.simple import GreedyAgent
from ai2048.engine.board import count_empty, reaches, seed004_end
from ai2048.evaluate import EvalError, EvalResult, Rules, evaluate, game_seeds, play_game
from ai2048.evaluate import ends_early as python_ends_early
from ai2048.evaluate import kernel as evaluate_fast
from ai2048.evaluate import local as evaluate_local
from ai2048.evaluate.kernel import kernel_of, kernel_stream
from ai2048.ntuple.network import Network
from ai2048.rules import Action
from ai2048.search.games import GameKernel, bind, end_rule_args, play_batch
from ai2048.search.games import ends_early as kernel_ends_early

SMALL = "0123,4567"
"""The pattern set the n-tuple trainer's tests compile (their play kernels are shared); the tuple
shapes themselves are checked against a slow reference in test_ntuple_network."""


def _strip(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in ("seconds", "index")}


def _python_loop(agent: Any, seed: int, games: int, max_moves: int | None,
                 **rules: Any) -> list[dict[str, Any]]:
    """The records the Python loop gives (``play_game`` per game seed, as ``evaluate`` without a kernel),
    with the end rules ``rules`` (``goal_tile``, ``end_on_full_board``)."""
    return [_strip(play_game(agent, s, max_moves=max_moves, **rules)) for s in game_seeds(seed, games)]


_TIMING = ("moves_per_s", "ms_per_move", "game_seconds", "wall_seconds", "load_seconds")


def _assert_same_games(
    agent: Any, games: int, max_moves: int | None = None, workers: int = 2, seed: int = 5, **rules: Any
) -> list[dict[str, Any]]:
    """The fast path (and only it: the Python loop's ``play_game`` is switched off meanwhile) gives the
    Python loop's records and summary, timings aside; returns the records."""
    assert kernel_of(agent) is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(evaluate_local, "play", _no_python_loop)  # every one-game-at-a-time path plays with it
        fast = evaluate(agent, games=games, seed=seed, workers=workers, progress=False, max_moves=max_moves,
                        **rules)
    assert [r["index"] for r in fast.records] == list(range(games))
    want = _python_loop(agent, seed, games, max_moves, **rules)
    assert [_strip(r) for r in fast.records] == want
    assert all(r["seconds"] >= 0 for r in fast.records)
    slow = EvalResult(agent="x", config={}, seed=seed, games_requested=games,
                      records=[{"index": i, **r, "seconds": 1.0} for i, r in enumerate(want)])
    assert _untimed(fast.summary()) == _untimed(slow.summary())
    return want


def _untimed(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in _TIMING}


def _no_python_loop(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("evaluate played a kernel-backed agent in the Python loop")


@pytest.fixture(scope="module")
def weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small after-state network with random weights (seeded), as a weights file."""
    net = Network(SMALL, stages=(9,))
    net.w[:] = np.random.default_rng(0).normal(0.0, 50.0, net.w.size).astype(np.float32)
    path = tmp_path_factory.mktemp("net") / "weights.npz"
    net.save(path)
    return path


@pytest.mark.parametrize(("name", "config", "games", "max_moves"), [
    ("random", {}, 8, None),
    ("greedy", {}, 6, None),
    ("greedy", {"order": "clockwise"}, 4, None),
    ("expectimax", {"depth": 1, "heuristic": "seed003"}, 3, 200),
    ("expectimax", {"depth": 2, "tt_bits": 10}, 2, 60),
    ("expectimax", {"min_depth": 1, "max_depth": 2, "depth_offset": 3, "tt_bits": 0}, 2, 60),
    ("expectimax-seed003", {"depth": 1}, 3, 100),
    ("minimax", {"depth": 2, "time_limit": None}, 3, 300),
    ("minimax", {"depth": 2, "time_limit": None, "prune": False, "fours": True}, 2, 100),
])
def test_fast_path__same_games_and_moves_as_the_python_loop(name: str, config: dict, games: int,
                                                           max_moves: int | None) -> None:
    _assert_same_games(make_agent(name, **config), games, max_moves)


@pytest.mark.parametrize("config", [{}, {"downgrade": True}, {"depth": 2, "tt_bits": 10}])
def test_fast_path__ntuple_same_games_as_the_python_loop(weights: Path, config: dict) -> None:
    agent = make_agent("ntuple", weights=str(weights), **config)
    _assert_same_games(agent, 3 if config.get("depth") else 6, max_moves=80 if config.get("depth") else None)


def test_fast_path__before_state_ntuple_network(tmp_path: Path) -> None:
    net = Network("0123,4567", kind="before")
    net.w[:] = np.random.default_rng(1).normal(0.0, 20.0, net.w.size).astype(np.float32)
    net.save(tmp_path / "w.npz")
    _assert_same_games(make_agent("ntuple", weights=str(tmp_path / "w.npz")), 4)


END_RULES = [(2048, False), (4096, False), (None, True), (2048, True), (128, False), (256, True)]
"""(goal_tile, end_on_full_board): seeds 000/003's goal, seed 004's full-board end, both, and goals the
weak agents reach."""


def _ended_by_a_rule(rec: dict[str, Any], max_moves: int | None, goal: int | None, full: bool) -> bool:
    """The record's last board is one where the Python loop stops: no legal move, the move cap, the
    goal tile (reached exactly: a tile first reaches it by one merge or a spawned 4) or a full board.
    A goal of 2 or 4 can stand on the start board already; the rule is checked after a move, so such
    a game stops after its first move, whose merge may double the goal (two 4s: an 8)."""
    b = int(rec["final_board"], 16)
    at_goal = goal is not None and (rec["max_tile"] == goal
                                    or (goal <= 4 and rec["moves"] == 1 and rec["max_tile"] <= 2 * goal))
    return (ai2048.is_over(b) or rec["moves"] == max_moves or at_goal
            or (full and (int(count_empty(np.uint64(b))) == 0 or rec["max_tile"] >= 32768)))


@settings(max_examples=400, deadline=None)
@given(cells=st.lists(st.integers(0, 15), min_size=16, max_size=16),
       goal_exp=st.one_of(st.none(), st.integers(1, 15)), full=st.booleans())
def test_kernel_ends_early__agrees_with_the_python_rule_on_any_board(cells: list[int], goal_exp: int | None,
                                                                     full: bool) -> None:
    """The kernels' word-wise rule (``search.games.ends_early``) against ``evaluate.ends_early`` (a
    loop over the cells), on any board of exponents 0..15: empty cells, 15s, a tile at the goal."""
    board = sum(e << (4 * i) for i, e in enumerate(cells))
    goal = None if goal_exp is None else 1 << goal_exp
    want = python_ends_early(board, goal, full)
    assert kernel_ends_early(np.uint64(board), *end_rule_args(goal, full)[:2]) is want
    if goal_exp is not None:
        assert reaches(np.uint64(board), goal_exp) is (max(cells) >= goal_exp)
    assert seed004_end(np.uint64(board)) is (min(cells) > 0 or max(cells) == 15)


@pytest.mark.parametrize("seed", [5, 11])
@pytest.mark.parametrize(("goal", "full"), END_RULES)
@pytest.mark.parametrize(("name", "config", "games", "max_moves"), [
    ("random", {}, 8, None),
    ("greedy", {}, 6, None),
    ("greedy", {"order": "clockwise"}, 4, None),
    ("expectimax", {"depth": 1}, 3, None),
    ("minimax", {"depth": 2, "time_limit": None}, 2, None),  # reaches 2048 in about 1,000 moves
])
def test_fast_path__end_rules_same_games_as_the_python_loop(
    name: str, config: dict, games: int, max_moves: int | None, goal: int | None, full: bool, seed: int
) -> None:
    """Goal tiles 2048/4096 and seed 004's full-board end stay on the fast path, with the Python loop's
    games, moves, records and summary (issue 17)."""
    recs = _assert_same_games(make_agent(name, **config), games, max_moves, seed=seed, goal_tile=goal,
                              end_on_full_board=full)
    assert all(_ended_by_a_rule(r, max_moves, goal, full) for r in recs)
    if goal is not None:
        assert all(r["max_tile"] <= goal for r in recs)
    if (name, goal, full, seed) == ("minimax", 2048, False, 5):  # the rule bites: game 2 stops at 2048
        assert [r["max_tile"] for r in recs] == [512, 2048]


@pytest.mark.parametrize(("goal", "full"), [(64, False), (None, True), (128, True), (2048, False)])
@pytest.mark.parametrize("config", [{}, {"downgrade": True}, {"depth": 2, "tt_bits": 10}])
def test_fast_path__ntuple_end_rules_same_games_as_the_python_loop(weights: Path, config: dict,
                                                                   goal: int | None, full: bool) -> None:
    agent = make_agent("ntuple", weights=str(weights), **config)
    deep = bool(config.get("depth"))
    _assert_same_games(agent, 3 if deep else 6, max_moves=80 if deep else None, seed=7, goal_tile=goal,
                       end_on_full_board=full)


def test_fast_path__end_rules_in_games_split_over_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rule that ends a game exactly where a kernel call's action buffer is full, or in a later call."""
    monkeypatch.setattr(evaluate_fast, "_BUFFER", 7)
    for name in ("greedy", "random"):
        for goal, full in ((64, False), (None, True), (32, True)):
            agent = make_agent(name)
            for workers in (1, 2):
                _assert_same_games(agent, 5, workers=workers, seed=3, goal_tile=goal, end_on_full_board=full)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(["random", "greedy"]), goal_exp=st.one_of(st.none(), st.integers(2, 15)),
       full=st.booleans(), seed=st.integers(0, 2**32), games=st.integers(1, 4),
       max_moves=st.one_of(st.none(), st.integers(1, 300)), workers=st.integers(1, 2))
# a start board of two 4s: the goal 4 stands before the first move, which makes an 8
@example(name="random", goal_exp=2, full=False, seed=2186928, games=4, max_moves=None, workers=1)
def test_fast_path__any_end_rules_property(name: str, goal_exp: int | None, full: bool, seed: int, games: int,
                                           max_moves: int | None, workers: int) -> None:
    goal = None if goal_exp is None else 1 << goal_exp
    recs = _assert_same_games(make_agent(name), games, max_moves, workers=workers, seed=seed, goal_tile=goal,
                              end_on_full_board=full)
    assert all(_ended_by_a_rule(r, max_moves, goal, full) for r in recs)


@pytest.mark.slow
@pytest.mark.parametrize(("goal", "full"), [(2048, False), (4096, False), (None, True), (4096, True)])
def test_fast_path__shipped_ntuple_reaches_the_goal_tiles_as_the_python_loop(goal: int | None,
                                                                              full: bool) -> None:
    """The default shipped 4x6 network at 1 ply reaches 2048 and 4096, so the goal rules end most
    games (about 950 and 1,900 moves) rather than leaving them to the standard end."""
    agent = _shipped()
    recs = _assert_same_games(agent, 6, seed=1, goal_tile=goal, end_on_full_board=full)
    if goal is not None and not full:
        assert sum(r["max_tile"] == goal for r in recs) >= 4


_SHIPPED: list[Any] = []


def _shipped() -> Any:
    if not _SHIPPED:
        _SHIPPED.append(make_agent("ntuple"))
    return _SHIPPED[0]


def test_fast_path__one_or_two_workers_and_long_games_split_over_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Games longer than the action buffer are continued (per-game kernels keep their RNG stream)."""
    monkeypatch.setattr(evaluate_fast, "_BUFFER", 7)
    for name in ("greedy", "random"):
        agent = make_agent(name)
        one = evaluate(agent, games=5, seed=9, workers=1, progress=False)
        assert [_strip(r) for r in one.records] == _python_loop(agent, 9, 5, None)
        two = evaluate(agent, games=5, seed=9, workers=2, progress=False)
        assert [_strip(r) for r in two.records] == [_strip(r) for r in one.records]
        assert one.summary()["tiles"] == two.summary()["tiles"]


def test_fast_path__max_moves_and_records_replay() -> None:
    res = evaluate("greedy", games=3, seed=2, max_moves=7, progress=False)
    assert [r["moves"] for r in res.records] == [7, 7, 7]
    assert all(len(r["actions"]) == 7 for r in res.records)
    full = evaluate("greedy", games=2, seed=2, progress=False)
    for rec in full.records:
        assert ai2048.is_over(int(rec["final_board"], 16))
        assert rec["max_tile"] == max(ai2048.to_tiles(int(rec["final_board"], 16)).flatten())


def test_kernel_of__none_where_the_kernel_would_not_play_the_agents_moves() -> None:
    class Contrary(GreedyAgent):
        def act(self, board: int) -> Action:
            return ai2048.Game(board=board).legal_actions()[-1]

    assert kernel_of(Contrary()) is None
    patched = GreedyAgent()
    patched.act = lambda board: Action.UP  # type: ignore[method-assign]
    assert kernel_of(patched) is None
    assert kernel_of(make_agent("expectimax", time_budget=0.01)) is None  # timing decides its depth
    assert kernel_of(make_agent("minimax")) is None  # default: 0.2 s per move
    assert kernel_of(make_agent("montecarlo")) is None
    # a subclass keeps the Python loop, so it plays its own moves
    res = evaluate(Contrary(), games=2, seed=1, progress=False, max_moves=20)
    assert [_strip(r) for r in res.records] == _python_loop(Contrary(), 1, 2, 20)


@njit(cache=True)
def _always_up(b: np.uint64, ctx: tuple) -> int:
    return 0


class AlwaysUpKernel(GreedyAgent):
    """A faulty kernel: UP every move, illegal once UP stops changing the board."""

    def game_kernel(self) -> GameKernel:
        return GameKernel(bind(play_batch, CHOOSE=_always_up), lambda seed: ())


def test_fast_path__an_illegal_choice_stops_with_eval_error_naming_the_board() -> None:
    with pytest.raises(EvalError, match=r"chose no legal move on board 0x[0-9a-f]{16} \(move \d+\)") as info:
        evaluate(AlwaysUpKernel(), games=3, seed=0, progress=False)
    assert info.value.result.error
    # the setting that chooses such moves on purpose, and how to play it (issue 46)
    for words in ("illegal_action=penalty", "--preset seed004-exact", "--set illegal_action=mask",
                  "evaluate it without its kernel"):
        assert words in str(info.value)


def test_kernel_stream__ctrl_c_stops_the_threads_at_the_next_move() -> None:
    kernel = kernel_of(make_agent("expectimax", depth=4, prob_cutoff=0.0, tt_bits=10))  # tens of ms a move
    todo = list(enumerate(game_seeds(0, 40)))
    before = threading.active_count()
    warm = kernel_stream(kernel, "x", todo[:1], Rules(p_two=0.9, max_moves=3), 1)
    assert next(warm)[0] == 0  # compiled (or loaded from the cache) before the timing below
    warm.close()
    stream = kernel_stream(kernel, "x", todo, Rules(p_two=0.9), 2)
    sent: list[float] = []

    def interrupt() -> None:
        sent.append(time.perf_counter())
        os.kill(os.getpid(), signal.SIGINT)

    threading.Timer(0.5, interrupt).start()
    with pytest.raises(KeyboardInterrupt):
        for _ in stream:  # a game takes seconds; one that ends before the signal is simply consumed
            pass
    assert sent and time.perf_counter() - sent[0] < 5  # stopped at the next move, not the game's end
    assert threading.active_count() == before


def test_fast_path__sigterm_keeps_the_finished_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM while the kernels play: the run stops, keeping exactly the finished games."""
    played = []
    original = evaluate_fast.play_games

    def play_then_signal(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        played.append(1)
        if len(played) == 3:
            time.sleep(0.5)  # the main thread collects the finished batches first
            os.kill(os.getpid(), signal.SIGTERM)
        return out

    monkeypatch.setattr(evaluate_fast, "play_games", play_then_signal)
    agent = make_agent("greedy")
    before = signal.getsignal(signal.SIGTERM)
    res = evaluate(agent, games=3000, seed=4, workers=1, progress=False)
    assert res.interrupted and 1 <= res.games < 3000
    assert signal.getsignal(signal.SIGTERM) is before
    ref = {s: _strip(play_game(agent, s)) for s in [r["seed"] for r in res.records[:5]]}
    assert [_strip(r) for r in res.records[:5]] == [ref[r["seed"]] for r in res.records[:5]]


def test_cli_bench__eval_section_times_an_ntuple_run(weights: Path, tmp_path: Path, capsys: Any) -> None:
    from ai2048.cli import main

    assert main(["bench", "--only", "eval"]) == 2
    assert "--ntuple RUN" in capsys.readouterr().err
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_text('{"agent": "ntuple"}')
    (run / "weights.npz").write_bytes(weights.read_bytes())
    out = tmp_path / "bench.json"
    assert main(["bench", "--only", "eval", "--ntuple", str(run), "--games", "10", "--seconds", "0.05",
                 "--json", str(out)]) == 0
    figs = {f["key"]: f for f in json.loads(out.read_text())["figures"]}
    assert figs["eval_ntuple"]["value"] > 0 and figs["eval_ntuple"]["baseline_value"] > 0


def test_game_kernel__rooted_downgrade_plays_acts_moves_from_a_late_board() -> None:
    """``downgrade="rooted"`` fixes its map at each search's root (a root hook); the whole-game kernel
    calls the hook too, so from a board holding a 16384 it plays exactly the moves ``act`` chooses."""
    from ai2048.engine.board import pack
    from ai2048.engine.moves import move
    from ai2048.engine.spawn import spawn

    agent = make_agent("ntuple", depth=2, downgrade="rooted", tt_bits=12)
    kernel = kernel_of(agent)
    assert kernel is not None
    start = int(pack(np.array([10, 12, 13, 14, 10, 2, 1, 0, 1, 3, 1, 0, 2, 0, 0, 0])))
    boards, scores, moves, status, nacts, acts = evaluate_fast._buffers(1, 60)
    boards[0] = start
    states = np.array([11], np.uint64)
    kernel.play(kernel.context(None), boards, states.copy(), scores, moves, status, acts, nacts, 60, 0.9,
                np.zeros(1, np.int64), *end_rule_args(None, False), np.zeros(1, np.int64), True)
    assert nacts[0] == 60
    b, st = np.uint64(start), states.copy()
    for a in acts[0, :60]:
        assert int(agent.act(int(b))) == int(a)
        b = spawn(move(b, np.int64(a))[0], st, 0.9)
    assert int(b) == int(boards[0])
    one, two = kernel.context(None)[0], kernel.context(None)[0]  # threads: a root gap each
    assert one[-1] is not two[-1] and one[0] is two[0]


def test_fast_path__rooted_downgrade_plays_the_python_loops_games_on_two_threads() -> None:
    _assert_same_games(make_agent("ntuple", depth=2, downgrade="rooted", tt_bits=14), games=4, workers=2,
                       seed=31)
