"""Seed 004's rules as n-tuple options: the full-board end, moporgic's -1 for an unchanged board,
the first-index tie order (up, down, left, right) and a discount γ, in the trainer, its kernels
and the agent; checked against ``seed_vectors.json`` and a slow reference of a training game."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import ai2048
from ai2048 import engine
from ai2048.agents import make_agent
from ai2048.agents.seed_actions import best_in_order
from ai2048.cli import main
from ai2048.cli.train import trainer_parser
from ai2048.engine.rng import seed_state
from ai2048.evaluate import EvalError, evaluate, game_seeds, play_game
from ai2048.evaluate.kernel import kernel_of
from ai2048.ntuple import kernels as generic
from ai2048.ntuple.codegen import DEFAULT_RULES, KernelOptions
from ai2048.ntuple.network import Network, load_file
from ai2048.rules import SEED_ORDERS, Action
from ai2048.train import get_trainer
from ai2048.train.ntuple import (
    EVAL_SEED,
    PRESET_HELP,
    PRESETS,
    NTupleConfig,
    final_evaluation,
    kernel_options,
    run,
)
from test_ntuple_network import ref_train_game

DATA = Path(__file__).parent / "data"
VECTOR_ORDER = ("up", "down", "left", "right")
PATTERNS = "0123,4567"
TINY = NTupleConfig(patterns=PATTERNS, games=60, chunk=20, checkpoint_every=20, seed=3)
SEED004 = KernelOptions(end_on_full_board=True, illegal_penalty=True, tie_order=(0, 2, 3, 1))
"""Seed 004's rules (``--preset seed004-exact``'s kernels)."""
DISCOUNT = KernelOptions(gamma=0.9)
ORDER004 = tuple(int(a) for a in SEED_ORDERS["004"])


@pytest.fixture(scope="module")
def vectors() -> list[dict]:
    return json.loads((DATA / "seed_vectors.json").read_text())["vectors"]


# ---------------------------------------------------------------- known answers from seed_vectors.json


def test_end_flag__equals_seed004_end_on_all_200_vector_boards(vectors: list[dict]) -> None:
    got = [bool(generic.seed004_end(np.uint64(ai2048.encode(v["board"])))) for v in vectors]
    assert got == [v["seed004_end_flag"] for v in vectors]
    assert sum(f and not v["terminal"] for f, v in zip(got, vectors, strict=True)) == 45  # full, merges left


def test_raw_return__moporgic_vectors_under_the_penalty_rule(vectors: list[dict]) -> None:
    """With zero weights a move's value is its reward: moporgic's return (-1 for an unchanged
    board) under ``illegal_action=penalty``; the default rule marks the same moves unplayable."""
    net = Network(PATTERNS)
    args = (0, 0.9, net.w, net.runs, net.nruns, net.tbase, net.stage_arr, 0)
    for v in vectors:
        b = np.uint64(ai2048.encode(v["board"]))
        seed, ours = net.k.move_values(b, *args, SEED004.rules), net.k.move_values(b, *args, DEFAULT_RULES)
        for name in VECTOR_ORDER:
            a, m = int(Action[name.upper()]), v["moves"][name]
            assert seed[a] == m["moporgic_raw_return"], (v["id"], name)
            assert (np.isnan(ours[a]) and not m["legal"]) or ours[a] == m["reward"], (v["id"], name)


def test_end_on_full_board__a_full_vector_board_with_merges_ends_at_once(vectors: list[dict]) -> None:
    v = next(v for v in vectors if v["seed004_end_flag"] and not v["terminal"])
    b = np.uint64(ai2048.encode(v["board"]))
    moves = {}
    for name, opts in (("seed004", SEED004), ("default", KernelOptions())):
        net = Network(PATTERNS)
        e = np.zeros(1, np.float32)
        _, _, moves[name] = net.k.play_game_train(
            b, net.w, e, e, np.ones(1, np.int64), net.runs, net.nruns, net.tbase, net.stage_arr, 0, False,
            False, False, 0.1 / net.features, 0.0, 0.9, seed_state(1), np.zeros(4096, np.uint64),
            np.zeros(4096, np.int64), np.zeros(4, np.uint64), np.zeros(1, np.int64), 15, False, 0, opts.rules,
        )
    assert moves["seed004"] == 0 and moves["default"] >= 1


# ---------------------------------------------------------------- tie order


def test_tie_order__known_answers_with_equal_values(tmp_path: Path) -> None:
    """Zero weights: values are rewards. Up-left ties go up either way; left-right and right-down
    ties go right under the default order and left / down under seed 004's."""
    Network(PATTERNS).save(tmp_path / "zero.npz")
    cases = [  # (board cells, default move, seed 004 move)
        ({0: 1, 1: 1, 4: 1}, Action.UP, Action.UP),
        ({12: 1, 13: 1}, Action.RIGHT, Action.LEFT),
        ({0: 1}, Action.RIGHT, Action.DOWN),
    ]
    zero = str(tmp_path / "zero.npz")
    agents = {o: make_agent("ntuple", weights=zero, tie_order=o) for o in ("clockwise", "004")}
    net = Network(PATTERNS)
    for cells, default, seed in cases:
        b = ai2048.encode([cells.get(i, 0) for i in range(16)])
        assert agents["clockwise"].act(b) == default and agents["004"].act(b) == seed
        a, *_ = net.k.greedy_move(
            np.uint64(b), 0, 0.9, net.w, net.runs, net.nruns, net.tbase, net.stage_arr, 0, SEED004.rules
        )
        assert a == seed  # the trainer's move under seed004-exact
        for order, agent in agents.items():
            assert best_in_order(agent.values(b), SEED_ORDERS[order]) == agent.act(b)


def test_tie_order__agent_fast_path_plays_the_python_loops_games(tmp_path: Path) -> None:
    """A network with few distinct values (many ties): whole games in numba equal the Python loop
    for seed 004's order at depth 1 and 2, and differ from the default order's games."""
    net = Network(PATTERNS)
    net.w[:] = np.random.default_rng(2).integers(0, 2, net.w.size).astype(np.float32)
    net.save(tmp_path / "w.npz")
    played = {}
    configs: tuple[dict, ...] = (
        {"tie_order": "004"}, {"tie_order": "clockwise"}, {"tie_order": "004", "depth": 2, "tt_bits": 8}
    )
    for config in configs:
        agent = make_agent("ntuple", weights=str(tmp_path / "w.npz"), **config)
        assert kernel_of(agent) is not None
        games, cap = (2, 40) if "depth" in config else (4, None)
        fast = evaluate(agent, games=games, seed=5, workers=2, progress=False, max_moves=cap)
        strip = [_untimed(r) for r in fast.records]
        slow = [{k: v for k, v in play_game(agent, s, max_moves=cap).items() if k not in ("seconds", "index")}
                for s in game_seeds(5, games)]
        assert strip == slow
        played[tuple(sorted(config.items()))] = [r["moves"] for r in strip]
    assert played[(("tie_order", "004"),)] != played[(("tie_order", "clockwise"),)]


def test_tie_order__eval_cli_takes_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Network(PATTERNS).save(tmp_path / "zero.npz")
    out = tmp_path / "res.json"
    assert main(["eval", "ntuple", "--set", f"weights={tmp_path / 'zero.npz'}", "--set", "tie_order=004",
                 "--games", "3", "--no-progress", "--out", str(out)]) == 0
    assert main(["eval", "ntuple", "--set", f"weights={tmp_path / 'zero.npz'}", "--set", "tie_order=up",
                 "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "tie_order='up' is not one of '000', '001', '002', '003', '004', 'clockwise'" in err


# ---------------------------------------------------------------- training against a slow reference


@pytest.mark.parametrize(
    "opts,kind,online",
    [
        (DISCOUNT, "after", False), (DISCOUNT, "after", True), (DISCOUNT, "before", False),
        (DISCOUNT, "before", True), (SEED004, "after", False), (SEED004, "after", True),
        (SEED004, "before", False),
    ],
    ids=["gamma-after-backward", "gamma-after-online", "gamma-before-backward", "gamma-before-online",
         "seed004-after-backward", "seed004-after-online", "seed004-before-backward"],
)
def test_train_game__equals_slow_reference(opts: KernelOptions, kind: str, online: bool) -> None:
    """Three games from random weights (so unchanged-board moves get chosen under the penalty):
    the kernel's score, recorded rewards and weights equal the slow reference's."""
    fast, slow = Network(PATTERNS, kind=kind), Network(PATTERNS, kind=kind)
    fast.w[:] = slow.w[:] = np.random.default_rng(4).normal(0.0, 30.0, fast.w.size).astype(np.float32)
    start = fast.w.copy()
    s1, s2 = seed_state(7), seed_state(7)
    penalties = 0
    for _ in range(3):
        b0 = np.uint64(engine.new_board(s1, 0.9))
        e = np.zeros(1, np.float32)
        buf_r = np.zeros(1 << 14, np.int64)
        score, _, moves = fast.k.play_game_train(
            b0, fast.w, e, e, np.ones(1, np.int64), fast.runs, fast.nruns, fast.tbase, fast.stage_arr,
            0 if kind == "after" else 1, online, False, False, 0.1 / fast.features, 0.0, 0.9, s1,
            np.zeros(1 << 14, np.uint64), buf_r, np.zeros(4, np.uint64), np.zeros(1, np.int64), 15, False, 0,
            opts.rules,
        )
        ref_score, rewards = ref_train_game(slow, s2, kind, online, opts=opts)
        assert (score, moves) == (ref_score, len(rewards))
        if not online:
            assert buf_r[:moves].tolist() == rewards
        penalties += rewards.count(-1)
        assert np.allclose(fast.w, slow.w, rtol=1e-5, atol=1e-4)
    assert (penalties > 0) == opts.illegal_penalty
    assert not np.array_equal(fast.w, start)


def test_gamma__discounted_weights_differ_from_undiscounted() -> None:
    """The same game and weights trained with γ = 0.9 and γ = 1 end with different values."""
    got = {}
    for opts in (DISCOUNT, KernelOptions()):
        net = Network(PATTERNS)
        net.w[:] = np.random.default_rng(4).normal(0.0, 30.0, net.w.size).astype(np.float32)
        e = np.zeros(1, np.float32)
        net.k.play_game_train(
            np.uint64(engine.new_board(seed_state(3), 0.9)), net.w, e, e, np.ones(1, np.int64), net.runs,
            net.nruns, net.tbase, net.stage_arr, 0, False, False, False, 0.1 / net.features, 0.0, 0.9,
            seed_state(4), np.zeros(1 << 14, np.uint64), np.zeros(1 << 14, np.int64), np.zeros(4, np.uint64),
            np.zeros(1, np.int64), 15, False, 0, opts.rules,
        )
        got[opts.gamma] = net.w
    assert not np.array_equal(got[0.9], got[1.0])


# ---------------------------------------------------------------- the trainer and its config


def test_trainer__seed004_exact_trains_evaluates_saves_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    args = ["train", "ntuple", "--preset", "seed004-exact", "--patterns", PATTERNS, "--games", "20",
            "--chunk", "20", "--checkpoint-every", "20", "--eval-games", "5", "--out", str(out)]
    assert main(args) == 0
    saved = json.loads((out / "config.json").read_text())
    assert {k: saved[k] for k in ("end_on_full_board", "tie_order", "illegal_action", "gamma")} == {
        "end_on_full_board": True, "tie_order": "004", "illegal_action": "penalty", "gamma": 1.0}
    trained = json.loads((out / "eval.json").read_text())
    assert main(["eval", str(out), "--preset", "seed004-exact", "--games", "5", "--no-progress", "--out",
                 str(tmp_path / "e.json")]) == 0  # the trainer's evaluation is this command's
    again = json.loads((tmp_path / "e.json").read_text())
    untimed = [[{k: v for k, v in g.items() if k != "seconds"} for g in r["games"]] for r in (trained, again)]
    assert len(untimed[0]) == 5 and untimed[0] == untimed[1]
    assert {k: trained[k] for k in ("config", "seed", "end_on_full_board", "illegal_move")} == {
        "config": {"weights": str(out), "tie_order": "004", "illegal_action": "penalty"}, "seed": 0,
        "end_on_full_board": True, "illegal_move": "penalty"}
    assert main(["train", "ntuple", "--out", str(out), "--resume", "--games", "40"]) == 0
    net, _ = load_file(out / "weights.npz")
    assert np.count_nonzero(net.w) > 0
    assert kernel_options(NTupleConfig(**PRESETS["seed004-exact"])) == SEED004


def test_trainer__options_change_the_weights_and_defaults_do_not(tmp_path: Path) -> None:
    """Each option trains other weights than the defaults; defaults equal the trainer before the
    options existed (hashes of its weights, commit 9298dff, same machine rules)."""
    base = {name: _weights_hash(run(cfg, tmp_path / name)) for name, cfg in DEFAULT_RUNS.items()}
    assert base == BEFORE_OPTIONS
    varied = run(replace(TINY, gamma=0.9), tmp_path / "gamma")
    assert _weights_hash(varied) != base["after-backward"]


def _weights_hash(out: Path) -> str:
    net, _ = load_file(out / "weights.npz")
    return hashlib.sha256(np.ascontiguousarray(net.w).tobytes()).hexdigest()[:16]


DEFAULT_RUNS = {
    "after-backward": TINY,
    "after-online": replace(TINY, update="online"),
    "before-backward-quirk": replace(TINY, state="before", seed004_double_reward=True, games=20),
    "tc-lam-stages": replace(
        TINY, tc=True, alpha=1.0, lam=0.5, stages=(6,), restart_prob=0.5, restart_tile=5
    ),
}
BEFORE_OPTIONS = {
    "after-backward": "cab0385ed09b7d50",
    "after-online": "88b9dea6b7d345a5",
    "before-backward-quirk": "d87489b05a958e79",
    "tc-lam-stages": "8072794460037140",
}


@pytest.mark.parametrize(
    "bad,match",
    [
        ({"gamma": 0.0}, r"gamma=0.0 must be a finite number in \(0, 1\]"),
        ({"gamma": 1.5}, r"gamma=1.5 must be a finite number in \(0, 1\]"),
        ({"gamma": float("nan")}, "gamma=nan must be a finite number"),
        ({"tie_order": "005"}, "tie_order='005' is not one of '000', '001', '002', '003', '004', "
                               "'clockwise'"),
        ({"tie_order": 4}, "tie_order=4 is not one of '000'"),
        ({"illegal_action": "noop"}, "illegal_action='noop' is not one of 'mask', 'penalty'"),
        ({"illegal_action": "penalty"}, "needs end_on_full_board=true"),
        ({"end_on_full_board": "yes"}, "end_on_full_board='yes' must be True or False"),
    ],
)
def test_config__bad_values_name_the_problem(bad: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        replace(TINY, **bad)


@pytest.mark.parametrize(
    "bad,match",
    [
        ({"gamma": 0.0}, "gamma"), ({"gamma": float("inf")}, "gamma"),
        ({"tie_order": (0, 0, 1, 2)}, "each action"), ({"illegal_penalty": True}, "needs"),
    ],
)
def test_kernel_options__bad_values_raise(bad: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        KernelOptions(**bad)


def test_agent__bad_tie_order_raises(tmp_path: Path) -> None:
    Network(PATTERNS).save(tmp_path / "zero.npz")
    with pytest.raises(ValueError, match="tie_order='udlr' is not one of '000'"):
        make_agent("ntuple", weights=str(tmp_path / "zero.npz"), tie_order="udlr")


def test_config__help_lists_the_options_and_old_configs_get_defaults() -> None:
    text = trainer_parser(get_trainer("ntuple")).format_help()
    for flag in ("--end-on-full-board", "--tie-order", "--gamma", "--illegal-action", "seed004-exact"):
        assert flag in text
    # docs/ntuple.md at 100,000 games: the double-counted reward costs nothing there (it once said "most
    # of the seed's gap is its double-counted reward")
    before = " ".join(PRESET_HELP["seed004-before"].split())
    assert "costs nothing measurable" in before and "most of" not in before
    old = json.loads((DATA / "ntuple_run_v1" / "config.json").read_text())
    old = old.get("config", old)
    assert not {"end_on_full_board", "tie_order", "gamma", "illegal_action"} & set(old)
    names = {f.name for f in dataclasses.fields(NTupleConfig)}
    cfg = NTupleConfig(**{k: v for k, v in old.items() if k in names})
    assert kernel_options(cfg) == KernelOptions()


# ---------------------------------------------------------------- evaluating under seed 004's rules


SEED004_RULES = {"end_on_full_board": True, "illegal_move": "penalty"}


def _noisy_network(tmp_path: Path) -> str:
    """Random weights, so that moves that change nothing win now and then under the penalty rule."""
    net = Network(PATTERNS)
    net.w[:] = np.random.default_rng(4).normal(0.0, 30.0, net.w.size).astype(np.float32)
    net.save(tmp_path / "noisy.npz")
    return str(tmp_path / "noisy.npz")


def _untimed(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in ("seconds", "index")}


def _penalties(record: dict) -> int:
    """The record's moves that changed nothing, counted by replaying it under the penalty rule."""
    g, n = ai2048.Game(seed=record["seed"]), 0
    for ch in record["actions"]:
        n += g.step("urdl".index(ch), penalty=True) == -1
    assert (g.score, g.moves, hex(g.board)) == (record["score"], record["moves"], record["final_board"])
    return n


def test_eval_penalty__fast_path_python_loop_and_the_trainers_evaluation_play_the_same_games(
    tmp_path: Path,
) -> None:
    """An agent that may choose unchanged moves (``illegal_action=penalty``) under seed 004's rules:
    whole games in numba equal the Python loop's, and the trainer's own evaluation of a
    ``seed004-exact`` run plays them as ``evaluate`` does (its scores count each -1, as ``eval``'s)."""
    agent = make_agent("ntuple", weights=_noisy_network(tmp_path), tie_order="004", illegal_action="penalty")
    assert kernel_of(agent) is not None
    fast = evaluate(agent, games=6, seed=5, workers=2, progress=False, **SEED004_RULES)
    strip = [_untimed(r) for r in fast.records]
    slow = [{k: v for k, v in play_game(agent, s, **SEED004_RULES).items() if k != "seconds"}
            for s in game_seeds(5, 6)]
    assert strip == slow
    penalties = [_penalties(r) for r in fast.records]
    assert sum(penalties) > 0
    net, _ = load_file(tmp_path / "noisy.npz")
    cfg = NTupleConfig(**{**PRESETS["seed004-exact"], "patterns": PATTERNS, "eval_games": 6})
    trainer = final_evaluation(cfg, net, tmp_path / "noisy")
    own = evaluate(agent, games=6, seed=EVAL_SEED, workers=1, progress=False, **SEED004_RULES)
    assert trainer is not None
    assert [_untimed(r) for r in trainer.records] == [_untimed(r) for r in own.records]
    assert sum(_penalties(r) for r in trainer.records) > 0


def test_eval_penalty__under_the_standard_rule_the_agent_is_refused_before_any_game(tmp_path: Path) -> None:
    """Without ``illegal_move="penalty"`` such an agent would stop the run at its first unchanged move
    (in both paths): it is refused before any game, naming the setting and the fix."""
    agent = make_agent("ntuple", weights=_noisy_network(tmp_path), illegal_action="penalty")
    fix = r"illegal_action=penalty chooses moves that change nothing.*illegal_move='penalty'.*=mask"
    for rules in ({}, {"end_on_full_board": True}):
        with pytest.raises(ValueError, match=fix) as info:
            evaluate(agent, games=3, seed=5, progress=False, **rules)
        assert not isinstance(info.value, EvalError)  # refused, not stopped mid-way
        with pytest.raises(ValueError, match=fix):
            play_game(agent, game_seeds(5, 1)[0], **rules)


def _seed004_run(tmp_path: Path) -> Path:
    """A run directory as ``train ntuple --preset seed004-exact`` leaves one (noisy weights, so that
    unchanged moves win now and then; ``meta.json``'s ``info.plays`` with seed 004's settings)."""
    run = tmp_path / "run"
    run.mkdir()
    Path(_noisy_network(tmp_path)).rename(run / "weights.npz")
    meta = {"format": "ai2048.run/2", "agent": "ntuple", "trainer": "ntuple",
            "info": {"plays": {"tie_order": "004", "illegal_action": "penalty"}}}
    (run / "meta.json").write_text(json.dumps(meta))
    return run


def test_eval_cli__a_seed004_run_under_other_rules_masks_its_moves_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``eval RUN`` of a run trained under seed 004's rules, without them: it plays
    ``illegal_action=mask`` (issue 46: it stopped with "chose no legal move" after a few moves), keeps
    the run's tie order, says so on stderr, and plays the games of the settings it names."""
    run = _seed004_run(tmp_path)
    weights = run / "weights.npz"
    for rules in ([], ["--end-on-full-board"]):
        out = tmp_path / f"run{len(rules)}.json"
        assert main(["eval", str(run), *rules, "--games", "3", "--seed", "5", "--no-progress",
                     "--out", str(out)]) == 0
        err = capsys.readouterr().err
        assert "plays illegal_action=mask" in err and "--preset seed004-exact" in err
        res = json.loads(out.read_text())
        assert {k: res["config"][k] for k in ("tie_order", "illegal_action")} == {
            "tie_order": "004", "illegal_action": "mask"}
        named = tmp_path / f"named{len(rules)}.json"
        assert main(["eval", "ntuple", "--set", f"weights={weights}", "--set", "tie_order=004", *rules,
                     "--games", "3", "--seed", "5", "--no-progress", "--out", str(named)]) == 0
        by_name = json.loads(named.read_text())
        assert [g["actions"] for g in res["games"]] == [g["actions"] for g in by_name["games"]]
    # under its own rules it plays its own settings, with no note
    assert main(["eval", str(run), "--preset", "seed004-exact", "--games", "3", "--seed", "5",
                 "--no-progress", "--out", str(tmp_path / "own.json")]) == 0
    assert "note:" not in capsys.readouterr().err
    own = json.loads((tmp_path / "own.json").read_text())
    assert own["config"]["illegal_action"] == "penalty" and sum(_penalties(r) for r in own["games"]) > 0
    assert main(["arena", str(run), "greedy", "--games", "2", "--no-progress"]) == 0
    assert "plays illegal_action=mask" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["eval", "arena", "watch"])
def test_cli__an_unmasked_setting_under_the_standard_rules_is_refused_naming_the_flags(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _seed004_run(tmp_path)
    argv = {"eval": ["eval", str(run), "--set", "illegal_action=penalty", "--games", "2", "--no-progress"],
            "arena": ["arena", "greedy", f"{run}:illegal_action=penalty", "--games", "2", "--no-progress"],
            "watch": ["watch", "ntuple", "--set", f"weights={run}", "--set", "illegal_action=penalty",
                      "--max-moves", "2"]}[command]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "illegal_action=penalty chooses moves that change nothing" in captured.err
    assert "--preset seed004-exact" in captured.err and "--set illegal_action=mask" in captured.err
    assert "score" not in captured.out  # before any game


def test_game_step_penalty__costs_one_point_spawns_and_refuses_a_full_board() -> None:
    g = ai2048.Game(board=ai2048.encode([1] + [0] * 15), seed=3)
    assert g.step(Action.UP, penalty=True) == -1  # a lone 2 in the corner: up changes nothing
    assert (g.score, g.moves) == (-1, 1) and np.count_nonzero(ai2048.decode(g.board)) == 2
    full = ai2048.Game(board=ai2048.encode([1, 2, 1, 2, 2, 1, 2, 1] * 2), seed=3)
    with pytest.raises(ai2048.IllegalMoveError, match="not a legal move"):
        full.step(Action.UP, penalty=True)


def test_eval_cli__preset_seed004_exact_sets_the_rules_and_the_agents_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weights = _noisy_network(tmp_path)
    out = tmp_path / "res.json"
    assert main(["eval", "ntuple", "--set", f"weights={weights}", "--preset", "seed004-exact", "--games", "3",
                 "--seed", "5", "--no-progress", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert (res["end_on_full_board"], res["illegal_move"]) == (True, "penalty")
    assert {k: res["config"][k] for k in ("tie_order", "illegal_action")} == {"tie_order": "004",
                                                                                "illegal_action": "penalty"}
    assert "unchanged moves cost 1 and spawn" in capsys.readouterr().out
    assert sum(_penalties(r) for r in res["games"]) > 0
    # the same games by the flags and settings the preset stands for
    assert main(["eval", "ntuple", "--set", f"weights={weights}", "--set", "tie_order=004", "--set",
                 "illegal_action=penalty", "--end-on-full-board", "--illegal-move", "penalty", "--games", "3",
                 "--seed", "5", "--no-progress", "--out", str(tmp_path / "flags.json")]) == 0
    flags = json.loads((tmp_path / "flags.json").read_text())
    assert [g["actions"] for g in flags["games"]] == [g["actions"] for g in res["games"]]
    # arena: agents without those settings (greedy) play legal moves under the same rules
    assert main(["arena", "greedy", f"ntuple:weights={weights}", "--preset", "seed004-exact", "--games", "2",
                 "--no-progress"]) == 0


@pytest.mark.parametrize(
    "extra,match",
    [
        (["--illegal-move", "penalty"], "--illegal-move penalty needs --end-on-full-board"),
        (["--preset", "seed004-exact", "--illegal-move", "reject"], "contradicts --preset seed004-exact"),
        (["--preset", "seed004-exact", "--record", "best"], "leave --record out"),
    ],
)
def test_eval_cli__bad_rule_flags_name_the_fix(extra: list[str], match: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "greedy", "--games", "1", "--no-progress", *extra]) == 2
    assert match in capsys.readouterr().err


@pytest.mark.parametrize("agent,match", [("", "the agent is empty"), ("nope", "unknown agent 'nope'")])
def test_eval_cli__preset_names_a_bad_agent_as_without_it(agent: str, match: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", agent, "--preset", "seed004-exact", "--games", "1", "--no-progress"]) == 2
    assert match in capsys.readouterr().err
