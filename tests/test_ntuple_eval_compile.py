"""Issue 14 (memory): a run with ``eval_games`` makes its evaluation kernel ready before the weight
table exists (compiled in the first run's child process with the training kernel), so the trainer
never compiles after training, with the table live; the evaluation's results are those of the
final network."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ai2048.ntuple import codegen, memory
from ai2048.ntuple.network import Network, load_file
from ai2048.ntuple.patterns import parse_patterns
from ai2048.ntuple.play import evaluate_greedy
from ai2048.train import ntuple as train_ntuple
from ai2048.train.ntuple import NTupleConfig, kernel_calls, run

SMALL = "0123,4567"
"""Two 4-tuples (2 x 16^4 weights): the smallest kernels to compile."""


def _eval_call_signature(net: Network, **kwargs: Any) -> str:
    """The signature ``evaluate_greedy`` calls ``play_games`` with for ``net`` (a recording stand-in
    for the kernels module; nothing runs)."""
    seen: list[tuple[Any, ...]] = []

    def play_games(*args: Any) -> None:
        seen.append(args)

    fake: Any = SimpleNamespace(play_games=play_games)
    evaluate_greedy(net, 3, kernels=fake, **kwargs)
    assert len(seen) == 1
    return memory.kernel_signature(seen[0])


@pytest.mark.parametrize(
    "cfg",
    [
        NTupleConfig(patterns=SMALL, eval_games=10),
        NTupleConfig(patterns=SMALL, eval_games=10, tc=True, alpha=1.0),
        NTupleConfig(patterns=SMALL, eval_games=10, stages=(13, 14), state="before", p_two=0.75),
    ],
    ids=["plain", "tc", "stages-before"],
)
def test_kernel_calls__eval_warm_up_has_the_signature_evaluate_greedy_calls(cfg: NTupleConfig) -> None:
    """The warm-up of ``play_games`` is typed exactly as the final evaluation's call (TC's records
    are evaluated as a contiguous copy), so the kernel made ready is the one the evaluation uses."""
    calls = dict(kernel_calls(cfg))
    assert list(calls) == ["train_worker", "play_games"]
    net = Network(cfg.patterns, stages=cfg.stages, kind=cfg.state, tc=cfg.tc)
    assert memory.kernel_signature(calls["play_games"]) == _eval_call_signature(net, p_two=cfg.p_two)
    assert calls["play_games"][0].size == 0  # the warm-up plays no game


def test_kernel_calls__no_evaluation_kernel_without_eval_games() -> None:
    assert [name for name, _ in kernel_calls(NTupleConfig(patterns=SMALL))] == ["train_worker"]


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
    this process). ``eval.json`` is the final network's evaluation, as a fresh one computes it."""
    children: list[str] = []
    real_child = memory.compile_in_child

    def child(code: str, args: list[str], what: str) -> None:
        children.append(what)
        real_child(code, args, what)

    evaluated: list[bool] = []

    def evaluate(net: Network, games: int, **kwargs: Any) -> dict[str, Any]:
        k = kwargs["kernels"]
        sig = memory.kernel_signature(train_ntuple._eval_args(cfg))
        evaluated.append(memory.is_compiled(Path(str(k.__file__)), "play_games", sig))
        return evaluate_greedy(net, games, **kwargs)

    monkeypatch.setattr(memory, "compile_in_child", child)
    monkeypatch.setattr(train_ntuple, "evaluate_greedy", evaluate)
    cfg = NTupleConfig(patterns=SMALL, games=40, chunk=20, eval_games=30, seed=3)
    out = run(cfg, tmp_path / "run")

    assert len(children) == 1 and SMALL in children[0]
    assert evaluated == [True]  # the marker existed before the trainer evaluated
    k = codegen.specialized(parse_patterns(SMALL), train_ntuple.kernel_options(cfg))
    assert Path(str(k.__file__)).parent == empty_cache
    for name in ("train_worker", "play_games"):
        dispatcher = getattr(k, name)
        assert not dispatcher.stats.cache_misses, name  # a miss is a compile in the trainer
        assert sum(dispatcher.stats.cache_hits.values()) == 1, name
        assert len(dispatcher.signatures) == 1, name  # the evaluation used the warm-up's signature

    res = json.loads((out / "eval.json").read_text())
    net, _ = load_file(out / "weights.npz", patterns=SMALL)
    again = evaluate_greedy(net, 30, seed=cfg.seed + 1, workers=1, p_two=cfg.p_two, kernels=k)
    timing = ("seconds", "moves_per_s")
    assert {key: v for key, v in res.items() if key not in timing} == {
        key: v for key, v in again.items() if key not in timing
    }
    assert res["games"] == 30 and len(res["scores"]) == 30
