"""Issue 14 (memory): a run with ``eval_games`` makes its evaluation kernel ready before the weight
table exists (compiled in the first run's child process with the training kernel), so the trainer
never compiles after training, with the table live. Issue 34: that evaluation is ``ai2048 eval``'s
(:mod:`ai2048.evaluate`): ``eval.json`` holds the games and the result of ``ai2048 eval RUN``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai2048.cli import main
from ai2048.ntuple import codegen, memory
from ai2048.ntuple.network import Network
from ai2048.ntuple.patterns import parse_patterns
from ai2048.train import ntuple as train_ntuple
from ai2048.train.ntuple import NTupleConfig, eval_command, final_evaluation, kernel_calls, run

SMALL = "0123,4567"
"""Two 4-tuples (2 x 16^4 weights): the smallest kernels to compile."""


def _signatures(dispatcher: Any) -> set[str]:
    """The signatures a numba dispatcher has compiled or loaded, written as ``memory.kernel_signature``."""
    return {"(" + ", ".join(map(str, sig)) + ")" for sig in dispatcher.signatures}


@pytest.mark.parametrize(
    "cfg",
    [
        NTupleConfig(patterns=SMALL, eval_games=10),
        NTupleConfig(patterns=SMALL, eval_games=10, tc=True, alpha=1.0),
        NTupleConfig(patterns=SMALL, eval_games=10, stages=(13, 14), state="before", p_two=0.75),
        NTupleConfig(patterns=SMALL, eval_games=10, end_on_full_board=True, tie_order="004",
                     illegal_action="penalty"),
    ],
    ids=["plain", "tc", "stages-before", "seed004-exact"],
)
def test_kernel_calls__eval_warm_up_is_the_game_loop_the_evaluation_plays(cfg: NTupleConfig,
                                                                          tmp_path: Path) -> None:
    """The evaluation's warm-up is the agent's game loop (the same dispatcher) typed exactly as the
    final evaluation calls it (TC's records are evaluated as a contiguous copy): after an evaluation
    it holds that one signature and no other."""
    calls = kernel_calls(cfg)
    assert [c.function for c in calls][0] == "train_worker" and len(calls) == 2
    game = calls[1]
    assert game.function.startswith("play_batch__") and not game.indexed
    net = Network(cfg.patterns, stages=cfg.stages, kind=cfg.state, tc=cfg.tc)
    result = final_evaluation(cfg, net, tmp_path / "run")
    assert result is not None and result.games == 10
    assert _signatures(game.kernel) == {memory.kernel_signature(game.args)}
    assert game.args[1].size == 0  # the warm-up plays no game


def test_kernel_calls__no_evaluation_kernel_without_eval_games() -> None:
    assert [c.function for c in kernel_calls(NTupleConfig(patterns=SMALL))] == ["train_worker"]


@pytest.mark.parametrize(
    ("settings", "command"),
    [
        ({}, "ai2048 eval runs/x --games 7"),
        ({"p_two": 0.75}, "ai2048 eval runs/x --games 7 --p-two 0.75 --set p_two=0.75"),
        ({"end_on_full_board": True, "tie_order": "004", "illegal_action": "penalty"},
         "ai2048 eval runs/x --games 7 --end-on-full-board --illegal-move penalty --set tie_order=004 "
         "--set illegal_action=penalty"),
    ],
    ids=["default", "p_two", "seed004-exact"],
)
def test_eval_command__names_the_games_and_rules(settings: dict[str, Any], command: str) -> None:
    cfg = NTupleConfig(patterns=SMALL, eval_games=7, **settings)
    assert eval_command(cfg, "runs/x/") == command


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ``$AI2048_CACHE`` (the generated kernels and numba's cache of them live there), this
    process's generated modules forgotten for the test and restored after it."""
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv("AI2048_CACHE", str(cache))
    monkeypatch.setattr(codegen, "_LOADED", {})
    before = {k: v for k, v in sys.modules.items() if k.startswith("ai2048_ntuple_kernels_")}
    yield cache / "ntuple"
    for name in [k for k in sys.modules if k.startswith("ai2048_ntuple_kernels_")]:
        del sys.modules[name]
    sys.modules.update(before)


def test_first_run_with_eval__child_compiles_the_eval_kernel_trainer_only_loads(
    empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first run (empty cache) with ``eval_games``: one child process compiles both kernels; when
    the trainer evaluates, the evaluation kernel's marker is already there, and the trainer's
    kernels were all loaded from numba's cache (no miss, one signature each: nothing compiled in
    this process). ``eval.json`` is what ``ai2048 eval RUN --games N`` writes: the same games and
    result, timings aside."""
    children: list[str] = []
    real_child = memory.compile_in_child

    def child(code: str, args: list[str], what: str) -> None:
        children.append(what)
        real_child(code, args, what)

    evaluated: list[bool] = []
    real_evaluation = train_ntuple.final_evaluation

    def evaluation(cfg: NTupleConfig, net: Network, out: Path) -> Any:
        c = kernel_calls(cfg)[1]
        evaluated.append(memory.is_compiled(c.module, c.function, memory.kernel_signature(c.args),
                                            indexed=c.indexed))
        return real_evaluation(cfg, net, out)

    monkeypatch.setattr(memory, "compile_in_child", child)
    monkeypatch.setattr(train_ntuple, "final_evaluation", evaluation)
    cfg = NTupleConfig(patterns=SMALL, games=40, chunk=20, eval_games=30, seed=3)
    out = run(cfg, tmp_path / "run")

    assert len(children) == 1 and SMALL in children[0]
    assert evaluated == [True]  # the marker existed before the trainer evaluated
    k = codegen.specialized(parse_patterns(SMALL))
    assert Path(str(k.__file__)).parent == empty_cache
    for call in kernel_calls(cfg):
        dispatcher = call.kernel
        assert not dispatcher.stats.cache_misses, call.function  # a miss is a compile in the trainer
        assert sum(dispatcher.stats.cache_hits.values()) == 1, call.function
        assert len(dispatcher.signatures) == 1, call.function  # the evaluation used the warm-up's

    res = json.loads((out / "eval.json").read_text())
    assert main(["eval", str(out), "--games", "30", "--no-progress", "--out", str(tmp_path / "e.json")]) == 0
    cli = json.loads((tmp_path / "e.json").read_text())
    timing = ("seconds", "moves_per_s", "ms_per_move", "game_seconds", "wall_seconds", "load_seconds")

    def untimed(d: dict[str, Any]) -> dict[str, Any]:
        return {k: untimed(v) if isinstance(v, dict) else v for k, v in d.items() if k not in timing}

    assert len(res["games"]) == 30 and res["seed"] == train_ntuple.EVAL_SEED
    assert res["config"] == {"weights": str(out)}
    assert [untimed(g) for g in res["games"]] == [untimed(g) for g in cli["games"]]
    assert {k: v for k, v in untimed(res).items() if k != "games"} == {
        k: v for k, v in untimed(cli).items() if k != "games"}
