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
from numba import njit

import ai2048
from ai2048 import evaluate_fast
from ai2048.agents.base import make_agent
from ai2048.agents.simple import GreedyAgent
from ai2048.evaluate import EvalError, evaluate, game_seeds, play_game
from ai2048.evaluate_fast import kernel_of, kernel_stream
from ai2048.ntuple.network import Network
from ai2048.rules import Action
from ai2048.search.games import GameKernel, bind, play_batch

SMALL = "0123,4567,5410,26ae"


def _strip(rec: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in rec.items() if k not in ("seconds", "index")}


def _python_loop(agent: Any, seed: int, games: int, max_moves: int | None) -> list[dict[str, Any]]:
    """The records the Python loop gives (``play_game`` per game seed, as ``evaluate`` without a kernel)."""
    return [_strip(play_game(agent, s, max_moves=max_moves)) for s in game_seeds(seed, games)]


def _assert_same_games(
    agent: Any, games: int, max_moves: int | None = None, workers: int = 2, seed: int = 5
) -> None:
    assert kernel_of(agent) is not None
    fast = evaluate(agent, games=games, seed=seed, workers=workers, progress=False, max_moves=max_moves)
    assert [r["index"] for r in fast.records] == list(range(games))
    assert [_strip(r) for r in fast.records] == _python_loop(agent, seed, games, max_moves)
    assert all(r["seconds"] >= 0 for r in fast.records)


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


def test_kernel_stream__ctrl_c_stops_the_threads_at_the_next_move() -> None:
    kernel = kernel_of(make_agent("expectimax", depth=4, prob_cutoff=0.0, tt_bits=10))  # tens of ms a move
    todo = list(enumerate(game_seeds(0, 40)))
    before = threading.active_count()
    warm = kernel_stream(kernel, "x", todo[:1], 0.9, 3, 1)
    assert next(warm)[0] == 0  # compiled (or loaded from the cache) before the timing below
    warm.close()
    stream = kernel_stream(kernel, "x", todo, 0.9, None, 2)
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        next(stream)  # a game takes far longer than the timer
    assert time.perf_counter() - t0 < 5
    assert threading.active_count() == before


def test_fast_path__sigterm_keeps_the_finished_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM while the kernels play: the run stops, keeping exactly the finished games."""
    played = []
    original = evaluate_fast.play_games

    def play_then_signal(*args: Any) -> Any:
        out = original(*args)
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
