"""Adversarial inputs to ``ai2048 plot``, ``tune``, ``bench`` and the envs: each gets a clear error
naming the file or option (never a traceback), or a correct result."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("matplotlib", reason="plots need matplotlib: pip install 'ai2048[plot]'")

from ai2048.cli import main  # noqa: E402

GAME = {"seed": 1, "score": 0, "moves": 0, "max_tile": 4, "final_board": "0x0000000000000011",
        "seconds": 0.01}


def _result(**game: object) -> dict:
    return {"format": "ai2048.eval-result", "agent": "x", "config": {}, "p_two": 0.9,
            "games": [{**GAME, **game}]}


@pytest.mark.parametrize(
    ("doc", "expect"),
    [
        ({"format": "ai2048.arena"}, "non-empty list of results"),
        ({"format": "ai2048.arena", "results": []}, "non-empty list of results"),
        ({**_result(), "config": "abc"}, "config is a str"),
        ({**_result(), "p_two": "abc"}, "p_two='abc' is not a probability"),
        (_result(score=float("inf")), "game 0: score=inf"),
        (_result(score="12"), "game 0: score='12'"),
        (_result(max_tile=float("nan")), "game 0: max_tile=nan"),
        (_result(moves="abc"), "game 0: moves='abc'"),
        (_result(seed=-1), "game 0: seed=-1"),
        (_result(final_board=-1), "final_board=-1 is not a 64-bit board"),
        (_result(final_board="zz"), "final_board='zz'"),
        (_result(seconds="abc"), "seconds='abc'"),
        (_result(actions=5), "actions is a int"),
    ],
)
def test_plot_result_of_wrong_shape_is_named(tmp_path, capsys, doc, expect):
    """A result file with a field of the wrong type or value: one error naming the file and the field
    (before: KeyError/ZeroDivisionError/OverflowError tracebacks, or int()'s message with no file)."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    assert main(["plot", str(path), "--out", str(tmp_path / "figs")]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and expect in err and "Traceback" not in err


def _run(tmp_path, lines: list[str]):
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.jsonl").write_text("".join(line + "\n" for line in lines))
    return run


def test_plot_run_with_bad_values_skips_them(tmp_path):
    """Non-numbers in a seed-004 tiles table or in LazyZero's fields are left out like any other value that
    is not a number (before: int()/float() errors without the file's name)."""
    run = _run(tmp_path, [
        '{"step": 1, "score_mean": 100, "tiles": [{"tile": "x", "reach": 5}, 7, null]}',
        '{"step": 2, "score_mean": 120, "tiles": [{"tile": 64, "reach": "a"}, {"tile": 32, "reach": 50}]}',
        '{"epoch": 1, "moves_mean": 10, "moves_max": 20, "high_tile_mean": 64, "high_tile_max": 128, '
        '"epoch_seconds": "abc", "step": 3, "score_mean": 130}',
    ])
    out = tmp_path / "figs"
    assert main(["plot", str(run), "--out", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert names >= {"training_score.png", "training_reach.png", "lazyzero_curve.png"}


def test_plot_lazyzero_field_not_a_number_is_named(tmp_path, capsys):
    run = _run(tmp_path, ['{"epoch": 1, "moves_mean": "x", "moves_max": 2, "high_tile_mean": 4, '
                          '"high_tile_max": 8, "epoch_seconds": "abc"}'])
    assert main(["plot", str(run), "--out", str(tmp_path / "figs")]) == 2
    err = capsys.readouterr().err
    assert "metrics.jsonl has no score" in err and "could not convert" not in err


def test_plot_window_past_the_log(tmp_path):
    """--window larger than the log (even past int64) is one window (before: a numpy casting error)."""
    run = _run(tmp_path, [json.dumps({"episode": i, "score": 10 * i, "max_tile": 64, "actions": [1, 2, 3, 4]})
                          for i in range(1, 41)])
    out = tmp_path / "figs"
    assert main(["plot", str(run), "--out", str(out), "--window", str(10**20)]) == 0
    assert (out / "training_actions.png").is_file()


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--seed", "-1"], "seed=-1 must be a whole number >= 0"),
        (["--start", '{"empty": Infinity}'], "empty=inf must be a finite number"),
        (["--start", '{"empty": NaN}'], "empty=nan must be a finite number"),
        (["--start", '{"empty": "x"}'], "empty='x' must be a finite number"),
        (["--start", '{"empty": true}'], "empty=True must be a finite number"),
        (["--start", '{"empty": 1e308}'], "past float32's range"),  # tuned on infinite tables before
        (["--start", '{"mono_power": 1000}'], "past float32's range"),
    ],
)
def test_tune_bad_values_named_before_any_game(capsys, args, expect):
    """Before: --seed -1 failed with numpy's bare 'expected non-negative integer', an infinite start weight
    tuned and printed weights='{"empty": Infinity}' (not JSON), a string one a '>' TypeError message."""
    assert main(["tune", "--games", "1", "--generations", "1", "--population", "1", "--validate", "0",
                 *args]) == 2
    out = capsys.readouterr()
    assert expect in out.err and "gen " not in out.out


def test_nneonneo_weights_must_be_finite():
    """The heuristic's weights reject inf/NaN/strings at construction (``--set weights=`` of eval too)."""
    from ai2048.search.heuristics import NneonneoWeights

    for bad in (float("inf"), float("nan"), "1", True):
        with pytest.raises(ValueError, match="must be a finite number"):
            NneonneoWeights(empty=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["--only", "moves", "--boards", str(10**12)], "boards=1,000,000,000,000 must be at most"),
        (["--only", "moves", "--boards", str(10**23)], "must be at most 67,108,864"),
        (["--only", "selfplay", "--games", str(10**12)], "games=1,000,000,000,000 must be at most"),
    ],
)
def test_bench_huge_counts_named_before_measuring(capsys, args, expect):
    """Before: a MemoryError, an OverflowError or numpy's 'Unable to allocate 7.28 TiB' traceback."""
    assert main(["bench", "--seconds", "0.01", *args]) == 2
    assert expect in capsys.readouterr().err


def test_env_reset_takes_numpy_seeds_and_names_bad_ones():
    """Before: ``reset(seed=np.int64(3))`` and ``make_vec(...).reset(seed=np.arange(3))`` raised
    Gymnasium's 'Seed must be a python integer' (a plain int seed for make_vec worked), and
    ``reset(seed=True)`` played seed 1."""
    import gymnasium as gym
    import numpy as np

    import ai2048.envs  # noqa: F401

    env = gym.make("ai2048/Game2048-v0")
    assert np.array_equal(env.reset(seed=np.int64(3))[0], env.reset(seed=3)[0])
    venv = gym.make_vec("ai2048/Game2048-v0", num_envs=3)
    assert np.array_equal(venv.reset(seed=np.arange(3))[0], venv.reset(seed=[0, 1, 2])[0])
    assert np.array_equal(venv.reset(seed=np.int64(5))[0], venv.reset(seed=5)[0])
    for bad, err in ((True, TypeError), (1.5, TypeError), (-1, ValueError), (float("nan"), TypeError)):
        with pytest.raises(err, match="seed"):
            env.reset(seed=bad)
    with pytest.raises(ValueError, match="seed=-1 must be a whole number >= 0"):
        venv.reset(seed=[0, -1, 2])
    with pytest.raises(TypeError, match="seed must be"):
        venv.reset(seed="abc")


def test_torch_envs_name_bad_seeds_and_p_two():
    """Before: TorchEnv2048(seed=1.5) played seed 1, seed='1', True and -1 were taken, seed=2**64 failed with
    torch's 'Overflow when unpacking long long'; p_two='0.5' was float()-ed."""
    pytest.importorskip("torch")
    from ai2048.envs.torch_env import EngineBatch, TorchEnv2048

    for cls in (TorchEnv2048, EngineBatch):
        for seed in (1.5, "1", True, -1):
            with pytest.raises((TypeError, ValueError), match="seed"):
                cls(2, seed=seed)
        for p_two in ("0.5", None):
            with pytest.raises(TypeError, match=r"p_two=.* must be a finite number in \(0, 1\]"):
                cls(2, p_two=p_two)
    with pytest.raises(ValueError, match=r"seed=18446744073709551616 must be a whole number in 0..2\*\*64-1"):
        TorchEnv2048(2, seed=2**64)


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["eval", "greedy", "--workers", "1000000", "--no-progress"],
         "--workers=1000000 must be a whole number in 1..256"),
        (["arena", "greedy", "random", "--workers", "257", "--no-progress"],
         "--workers=257 must be a whole number in 1..256"),
        (["tune", "--workers", "1000000"], "workers=1000000 must be a whole number in 1..256"),
        (["eval", "greedy", "--max-moves", str(10**30), "--no-progress"],
         "--max-moves=1" + "0" * 30 + " must be a whole number in 1..1,000,000,000"),
        (["eval", "montecarlo", "--set", "playouts=1000000000000", "--no-progress"],
         "playouts=1000000000000 must be a whole number in 1..100,000"),
        (["watch", "montecarlo", "--set", "playouts_total=400001"], "must be a whole number in 1..400,000"),
    ],
)
def test_huge_requests_named_before_any_game(capsys, args, expect):
    """Before: --workers 1000000 started a thread per worker until 2.3 GB, deaf to Ctrl-C; playouts=10**12
    never finished a move; --max-moves 10**30 ended in a numba TypingError traceback."""
    assert main(args if args[0] == "watch" else [*args, "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err, err


def test_evaluate__counts_past_the_bounds_are_named():
    from ai2048.evaluate import evaluate

    with pytest.raises(ValueError, match="max_moves=10{30} must be a whole number in 1..1,000,000,000"):
        evaluate("greedy", games=1, max_moves=10**30, progress=False)
    with pytest.raises(ValueError, match="workers=1000 must be a whole number in 1..256"):
        evaluate("greedy", games=1, workers=1000, progress=False)


def test_env_options_and_spawn_outcomes_take_numpy_numbers_and_name_a_bad_boards_option():
    """Before: EnvOptions(illegal_penalty=np.float32(1.0)) said 'must be a finite number', spawn_outcomes(b,
    np.int64(1)) 'p_two must be a float', and make_vec's reset(options={'boards': 5}) raised a bare
    "object of type 'int' has no len()"."""
    import gymnasium as gym
    import numpy as np

    import ai2048.envs  # noqa: F401
    from ai2048.envs.options import EnvOptions
    from ai2048.game import spawn_outcomes

    opts = EnvOptions(illegal_penalty=np.float32(1.5), goal_reward=np.int64(2048), p_two=np.float32(0.5))
    assert (opts.illegal_penalty, opts.goal_reward, opts.p_two) == (1.5, 2048.0, 0.5)
    assert type(opts.illegal_penalty) is float
    assert spawn_outcomes(np.uint64(0x11), np.int64(1)) == spawn_outcomes(0x11, 1.0)
    for bad in (np.bool_(True), "0.5"):
        with pytest.raises((TypeError, ValueError), match="illegal_penalty"):
            EnvOptions(illegal_penalty=bad)
    venv = gym.make_vec("ai2048/Game2048-v0", num_envs=3)
    for boards in (5, "abc", np.uint64(17)):
        with pytest.raises(TypeError, match=r"options\['boards'\] must be a list or array of 3 boards"):
            venv.reset(options={"boards": boards})


@pytest.mark.parametrize("agent", ["random", "montecarlo", "lazyzero-random"])
def test_set_seed_minus_one_is_named_for_every_agent(agent, capsys):
    """Before: montecarlo and lazyzero-random took seed=-1 silently (masked to 2**64-1), random failed with
    numpy's bare 'expected non-negative integer'."""
    assert main(["eval", agent, "--set", "seed=-1", "--games", "1", "--no-progress"]) == 2
    assert "seed=-1 must be a whole number in 0..2**64-1 or None" in capsys.readouterr().err
