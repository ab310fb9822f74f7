"""The evaluation harness: seeds, determinism across workers, errors, intervals, JSON round trip."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import pytest

import ai2048
from ai2048.agents.base import BaseAgent
from ai2048.agents.simple import GreedyAgent
from ai2048.evaluate import EvalError, EvalResult, evaluate, game_seeds, play_game
from ai2048.evaluate.kernel import kernel_of
from ai2048.records import replay_actions
from ai2048.rules import Action
from ai2048.stats import wilson


def test_game_seeds__do_not_depend_on_the_number_of_games() -> None:
    assert game_seeds(5, 3) == game_seeds(5, 10)[:3]
    assert game_seeds(5, 3) != game_seeds(6, 3)
    assert len(set(game_seeds(0, 100))) == 100


def test_evaluate__same_seed_same_games_on_one_or_two_workers() -> None:
    one = evaluate("random", games=6, seed=11, workers=1, progress=False)
    two = evaluate("random", games=6, seed=11, workers=2, progress=False)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in one.records]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in two.records]
    other = evaluate("random", games=6, seed=12, workers=1, progress=False)
    assert [r["score"] for r in other.records] != [r["score"] for r in one.records]


def test_evaluate__records_replay_to_the_same_game() -> None:
    res = evaluate("greedy", games=3, seed=2, progress=False)
    for rec in res.records:
        t = replay_actions(rec["seed"], rec["actions"])
        assert int(t.scores[-1]) == rec["score"]
        assert f"0x{int(t.boards[-1]):016x}" == rec["final_board"]
        assert len(rec["actions"]) == rec["moves"]
        assert ai2048.is_over(int(rec["final_board"], 16))


def test_evaluate__max_moves_stops_games() -> None:
    res = evaluate("greedy", games=2, seed=0, max_moves=5, progress=False)
    assert [r["moves"] for r in res.records] == [5, 5]


class StubbornAgent(BaseAgent):
    """Plays legal moves for its first ``legal_moves`` moves of a game, then always UP (often illegal)."""

    def __init__(self, legal_moves: int) -> None:
        self.legal_moves = legal_moves
        self.n = 0

    def reset(self, seed: int | None = None) -> None:
        self.n = 0

    def act(self, board: int) -> Action:
        self.n += 1
        if self.n > self.legal_moves:
            return Action.UP
        return ai2048.Game(board=board).legal_actions()[0]


def test_evaluate__an_illegal_move_names_the_agent_and_board_and_keeps_results() -> None:
    agent = StubbornAgent(legal_moves=3)
    agent.name = "stubborn"
    with pytest.raises(EvalError, match=r"agent 'stubborn' chose .*UP.* on board 0x[0-9a-f]{16}") as info:
        evaluate(agent, games=5, seed=0, progress=False, max_moves=None)
    assert isinstance(info.value.result, EvalResult)
    assert info.value.result.error


def test_evaluate__finished_games_survive_a_later_failure() -> None:
    class FailsOnThirdGame(StubbornAgent):
        games = 0

        def reset(self, seed: int | None = None) -> None:
            super().reset(seed)
            FailsOnThirdGame.games += 1
            self.legal_moves = 0 if FailsOnThirdGame.games == 3 else 10_000

    with pytest.raises(EvalError) as info:
        evaluate(FailsOnThirdGame(0), games=4, seed=1, progress=False, max_moves=20)
    assert info.value.result.games == 2


class SlowToLoad(BaseAgent):
    """Greedy, but its very first move takes ``load`` seconds, as a numba agent's first call loads or
    compiles its kernels; later games (and forked workers) find it loaded."""

    def __init__(self, load: float) -> None:
        self.load, self.loaded, self.inner = load, False, GreedyAgent()

    def act(self, board: int) -> Action:
        if not self.loaded:
            time.sleep(self.load)
            self.loaded = True
        return self.inner.act(board)


@pytest.mark.parametrize("workers", [1, 2])
def test_evaluate__loading_the_agent_is_timed_apart_from_the_games(workers: int) -> None:
    """Before, the first game carried the load (0.25-0.6 s for a cached kernel, 18 s compiling a 2-ply
    network), skewing per-game times and moves/s; now it is ``load_seconds``, said apart."""
    res = evaluate(SlowToLoad(0.5), games=2, seed=1, workers=workers, progress=False, max_moves=30)
    assert res.load_seconds >= 0.5
    assert all(r["seconds"] < 0.5 for r in res.records)
    assert res.summary()["load_seconds"] == res.load_seconds
    assert f"+ {res.load_seconds:.2f} s loading the agent" in res.format()


@pytest.mark.parametrize("name,config", [("greedy", {"order": "002"}), ("random", {})])
def test_evaluate__a_game_kernel_is_loaded_before_the_clock_with_the_games_own_types(name: str,
                                                                                     config: dict) -> None:
    """The load is the call the games make (one compiled signature, none added by the games)."""
    agent = ai2048.make_agent(name, **config)
    res = evaluate(agent, games=3, seed=1, workers=2, progress=False)
    assert res.games == 3 and res.load_seconds > 0
    assert len(kernel_of(agent).play.signatures) == 1


@pytest.mark.parametrize("kwargs,match", [
    ({"games": 0}, "games=0"),
    ({"games": -3}, "games"),
    ({"workers": 0}, "workers"),
    ({"seed": -1}, "seed"),
    ({"max_moves": 0}, "max_moves"),
    ({"backend": "mpi"}, "backend"),
])
def test_evaluate__rejects_bad_arguments(kwargs: dict, match: str) -> None:
    args = {"games": 1, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        evaluate("random", progress=False, **args)


def test_evaluate__rejects_unknown_agents_and_keys() -> None:
    with pytest.raises(ValueError, match="available agents"):
        evaluate("nope", games=1, progress=False)
    with pytest.raises(ValueError, match="valid keys"):
        evaluate("greedy", games=1, progress=False, config={"depth": 2})


def test_wilson__known_values() -> None:
    lo, hi = wilson(57, 100)
    assert lo == pytest.approx(0.4721, abs=1e-4) and hi == pytest.approx(0.6627, abs=1e-4)
    assert wilson(10, 10) == (pytest.approx(10 / (10 + 1.959964**2)), 1.0)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(0, 0) == (0.0, 1.0)


def _fake(tiles: list[int]) -> EvalResult:
    recs = [{"index": i, "seed": i, "score": 100 * t, "moves": t, "max_tile": t, "final_board": "0x0",
             "seconds": 1.0, "actions": ""} for i, t in enumerate(tiles)]
    return EvalResult(agent="x", config={}, seed=0, games_requested=len(tiles), records=recs)


def test_tile_table__is_seed_004s_reach_and_end_rates() -> None:
    table = _fake([512, 1024, 1024, 2048]).tile_table()
    assert [r["tile"] for r in table] == [512, 1024, 2048]
    assert [r["reach_rate"] for r in table] == [1.0, 0.75, 0.25]
    assert [r["end_rate"] for r in table] == [0.25, 0.5, 0.25]
    assert table[1]["reach_ci"] == list(wilson(3, 4))


def test_summary__mean_standard_error_and_speed() -> None:
    s = _fake([512, 1024, 1024, 2048]).summary()
    scores = np.array([51200, 102400, 102400, 204800])
    assert s["score_mean"] == scores.mean()
    assert s["score_se"] == pytest.approx(scores.std(ddof=1) / 2)
    assert s["score_median"] == 102400 and s["score_max"] == 204800
    assert s["moves_per_s"] == pytest.approx((512 + 1024 + 1024 + 2048) / 4.0)


def test_eval_result__json_round_trip(tmp_path) -> None:
    res = evaluate("greedy", games=2, seed=4, progress=False)
    path = res.save(tmp_path / "r.json")
    back = EvalResult.load(path)
    assert back.records == json.loads(json.dumps(res.records))
    assert back.summary() == json.loads(json.dumps(res.summary()))
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(ValueError, match="not an ai2048 evaluation result"):
        EvalResult.load(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError):
        EvalResult.load(tmp_path / "missing.json")


def test_play_game__resets_the_agent_with_the_game_seed() -> None:
    a = play_game(ai2048.make_agent("random"), 99)
    b = play_game(ai2048.make_agent("random", seed=123), 99)
    assert a["actions"] == b["actions"]


def _stopped_on_third_game(stop: Callable[[], None]) -> BaseAgent:
    """A StubbornAgent that calls ``stop()`` at every move of its third game."""

    class StoppedOnThirdGame(StubbornAgent):
        games = 0

        def reset(self, seed: int | None = None) -> None:
            super().reset(seed)
            StoppedOnThirdGame.games += 1

        def act(self, board: int) -> Action:
            if StoppedOnThirdGame.games == 3:
                stop()
            return super().act(board)

    return StoppedOnThirdGame(10_000)


def _raise_interrupt() -> None:
    raise KeyboardInterrupt


def test_evaluate__ctrl_c_keeps_the_finished_games() -> None:
    res = evaluate(_stopped_on_third_game(_raise_interrupt), games=5, seed=0, progress=False, max_moves=10)
    assert res.interrupted and res.games == 2
    assert "interrupted" in res.format()


def test_evaluate__sigterm_keeps_the_finished_games_and_restores_the_handler() -> None:
    before = signal.getsignal(signal.SIGTERM)
    res = evaluate(_stopped_on_third_game(lambda: os.kill(os.getpid(), signal.SIGTERM)), games=5, seed=0,
                   progress=False, max_moves=10)
    assert res.interrupted and res.games == 2
    assert signal.getsignal(signal.SIGTERM) is before


def test_cli_eval__killed_in_the_background_writes_the_finished_games(tmp_path) -> None:
    """A background job has SIGINT ignored; `kill` (SIGTERM) must still save the result file."""
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-c", "import sys; from ai2048.cli import main; sys.exit(main(sys.argv[1:]))",
           "eval", "greedy", "--games", "100000", "--seed", "1", "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert proc.stderr is not None
        seen = ""
        while "eval greedy" not in seen:  # the progress bar appears once SIGTERM is handled
            ch = proc.stderr.read(1)
            assert ch, f"eval ended before it started: {seen}"
            seen += ch
        proc.send_signal(signal.SIGTERM)
        stdout, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert "interrupted" in stdout
    res = EvalResult.load(out)
    assert res.interrupted and res.games < 100000


def test_result_format__the_tile_table_grows_to_131072_and_capped_rules_are_said() -> None:
    from ai2048.evaluate.result import EvalResult

    games = [{"score": s, "moves": 10, "seconds": 0.1, "max_tile": t}
             for s, t in ((1_000_000, 32768), (2_000_000, 65536), (3_500_000, 131072))]
    res = EvalResult(agent="x", config={}, seed=0, games_requested=3, records=games)
    rows = {line.split()[0]: line.split()[1] for line in res.format().splitlines()[2:-1]}
    assert rows == {"32768": "100.0", "65536": "66.7", "131072": "33.3"}
    assert "two 32768s do not merge" not in res.format()
    capped = EvalResult(agent="x", config={}, seed=0, games_requested=3, rules_version=0, records=games[:1])
    assert "(rules version 0: two 32768s do not merge)" in capped.format().splitlines()[0]
