"""A new user's journeys end to end (eval, arena, watch, replay, train, resume, plot), each test the
regression test of a problem found by playing them for real at small sizes."""

from __future__ import annotations

import pytest

from ai2048.cli import main


@pytest.mark.parametrize("bad", ["bogus", "expectimax:depth=1,nope=3", "dqn", "minimax:depth=0"])
def test_cli_arena__a_bad_later_agent_fails_before_any_game(bad: str, monkeypatch, capsys) -> None:
    """``arena greedy BAD``: the error about BAD comes before greedy plays a game (it used to come
    after greedy's whole evaluation, which was then thrown away)."""
    import ai2048.cli.eval as cli_eval

    def no_games(*args, **kwargs):
        raise AssertionError("a game was started before every agent was checked")

    monkeypatch.setattr(cli_eval, "evaluate", no_games)
    assert main(["arena", "greedy", bad, "--games", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "ai2048 arena: error:" in err and "a game was started" not in err


@pytest.mark.parametrize("name", ["dqn", "qnet", "policy"])
@pytest.mark.parametrize("threads", ["x", -3, 1.5, True])
def test_net_agents__bad_threads_is_named_before_the_weights_are_read(name: str, threads: object,
                                                                      tmp_path) -> None:
    """``--set threads=x`` used to end in "'>=' not supported between instances of 'str' and 'int'";
    a negative count was taken silently as torch's default."""
    from ai2048.agents import make_agent

    message = r"threads=.* must be a whole number >= 0 \(0 keeps torch's default\)"
    with pytest.raises(ValueError, match=message):
        make_agent(name, weights=str(tmp_path / "no-run"), threads=threads)


def test_cli_eval__a_run_directory_with_set_weights_is_a_clear_error(tmp_path, capsys) -> None:
    """``ai2048 eval RUN --set weights=OTHER`` used to print make_agent's "got multiple values for
    keyword argument 'weights'"."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_text('{"agent": "ntuple"}')
    assert main(["eval", str(run), "--set", "weights=/elsewhere", "--games", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "cannot be set as well" in err and "multiple values" not in err


def test_cli_arena__the_table_has_a_row_for_every_tile_between_the_agents() -> None:
    """An agent whose games all end at 128-256 beside one whose games all reach 1024: the table used
    to jump from 256 to 1024 (no agent's own table held a 512 row)."""
    from ai2048.cli.arena import table
    from ai2048.evaluate import EvalResult

    def result(name: str, tiles: list[int]) -> EvalResult:
        games = [{"index": i, "seed": i, "score": t, "moves": 1, "max_tile": t, "seconds": 0.1}
                 for i, t in enumerate(tiles)]
        return EvalResult(agent=name, config={}, seed=0, games_requested=len(tiles), records=games)

    text = table([result("low", [128, 256]), result("high", [1024, 2048])])
    rows = {line.split("%")[0].strip(): line.split("%")[1].split() for line in text.splitlines()
            if line.startswith(">=")}
    assert list(rows) == [f">= {t}" for t in (128, 256, 512, 1024, 2048)]
    assert rows[">= 512"] == ["0.0", "100.0"]


_TORCH_AGENT_EVAL = """
import torch
from ai2048.agents.base import BaseAgent
from ai2048.evaluate import evaluate
from ai2048.game import legal_mask
from ai2048.rules import Action

class TorchAgent(BaseAgent):
    name = "torch-agent"

    def __init__(self) -> None:
        torch.set_num_threads(2)  # as make_agent("dqn", weights=RUN, threads=2)
        self.x = torch.ones(1 << 18)  # large enough for torch to use its thread pool

    def act(self, board):
        float(self.x.exp().sum())
        return Action(int(legal_mask(board).argmax()))

res = evaluate(TorchAgent(), games=2, seed=1, workers=2, progress=False, max_moves=3)
print("games", res.games)
"""


def test_evaluate__workers_fork_after_torch_ran_on_several_threads(tmp_path) -> None:
    """``ai2048 eval DQN_RUN --set threads=2 --workers 2`` hung for ever: the forked workers waited
    for torch's OpenMP thread pool, which does not survive fork. Workers now run torch on one thread."""
    pytest.importorskip("torch")
    import multiprocessing
    import os
    import signal
    import subprocess
    import sys

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("the hang needs fork")
    proc = subprocess.Popen([sys.executable, "-c", _TORCH_AGENT_EVAL], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("evaluate with 2 worker processes hung after torch ran on 2 threads")
    assert proc.returncode == 0, err
    assert "games 2" in out


def test_torch_threads__a_capped_process_never_raises_the_thread_count(monkeypatch) -> None:
    """The batched search agents set their ``threads`` around each network call; in an evaluation's
    forked worker (capped at one thread) that must not bring the thread pool back."""
    torch = pytest.importorskip("torch")
    from ai2048.search import streams

    monkeypatch.setattr(streams, "_THREAD_CAP", None)
    before = torch.get_num_threads()
    streams.cap_torch_threads(1)
    with streams.torch_threads(2):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("stopped", ["interrupted", "running"])
def test_loop__a_stopped_run_resumed_at_its_total_is_saved_completed(stopped: str, tmp_path, capsys) -> None:
    """``train policy --epochs 100000`` stopped at epoch 9 (Ctrl-C, or killed: status running), then
    ``--resume --epochs 8``: nothing is left to train, and meta.json used to keep saying interrupted
    (or running) for ever, silently."""
    from ai2048.checkpoint import read_run_meta
    from ai2048.train import Trainer
    from ai2048.train.config import RunConfig
    from ai2048.train.run import Counters, Loop, write_meta

    tiny = Trainer("tiny", "", RunConfig, run=print)

    class Saved:  # the checkpoint file: step 9 of 8
        def read(self, path):  # noqa: ANN001, ANN202
            return {"counters": {"epoch": 9, "elapsed": 1.0}}

        def write(self, path, state) -> None:  # noqa: ANN001
            saves.append("checkpoint")

    def loop_at_nine() -> Loop:
        loop = Loop(tmp_path, RunConfig(progress=False), tiny, True, total=8,
                    counters=Counters(epoch=0, elapsed=0.0), step="epoch", unit="epoch", checkpoint=Saved())
        loop.track(counters=loop.counters)
        return loop

    write_meta(tmp_path, "tiny", "tiny", stopped, {"step": 9, "games": 9, "time": 1.0})
    saves: list[str] = []
    loop = loop_at_nine()
    with loop:
        assert not loop.running()
    loop.finish()
    assert saves == ["checkpoint"] and read_run_meta(tmp_path)["status"] == "completed"
    assert "nothing to train: the run in" in capsys.readouterr().out
    again = loop_at_nine()
    with again:
        assert not again.running()
    again.finish()
    assert saves == ["checkpoint"]  # a completed run resumed with nothing to do is not rewritten
    assert "already holds 9 epochs (its total is 8)" in capsys.readouterr().out


_SLOW_AGENT_EVAL = """
import time
from ai2048.agents.base import BaseAgent
from ai2048.evaluate import evaluate
from ai2048.game import legal_mask
from ai2048.rules import Action

class SlowAgent(BaseAgent):
    name = "slow"

    def act(self, board):
        time.sleep(0.1)  # a game takes tens of seconds
        return Action(int(legal_mask(board).argmax()))

evaluate(SlowAgent(), games=4, seed=1, workers=2, progress=False)
"""


def _children(pid: int) -> list[int]:
    from pathlib import Path

    kids = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(x) for x in kids.read_text().split()] if kids.exists() else []


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    from pathlib import Path

    status = Path(f"/proc/{pid}/status")
    try:
        state = next(line for line in status.read_text().splitlines() if line.startswith("State:"))
    except (FileNotFoundError, ProcessLookupError, StopIteration):
        return False
    return "Z" not in state.split()[1]


_DISTILL_TINY = """
import sys
sys.path.insert(0, sys.argv[1])
from conftest import tiny_table_spec
from ai2048.cli import main
from ai2048.tables import formations

spec = tiny_table_spec()
formations.TABLES[spec.name] = (spec, 1000)
sys.exit(main(["tables", "distill", spec.name, "--dir", sys.argv[2], "--games", "1000000", "--workers", "2",
               "--set", "depth=1", "--no-progress", "--out", sys.argv[3]]))
"""


@pytest.mark.parametrize("command", ["eval", "pool", "distill"])
def test_workers__end_with_a_killed_parent(command: str, tmp_path, request) -> None:
    """``kill -9`` of ``ai2048 eval --workers N`` left its workers playing on (minutes for a slow
    agent), then dying with BrokenPipeError tracebacks; now they end with it, and those of ``ai2048
    pool`` and ``ai2048 tables distill`` (they play in the same worker pool) too. The distillation plays
    on a tiny table, never the real ones."""
    import os
    import signal
    import subprocess
    import sys
    import time

    if not sys.platform.startswith("linux"):
        pytest.skip("the parent-death signal is Linux's")
    argv = {
        "eval": ["-c", _SLOW_AGENT_EVAL],
        # a random agent never reaches 32768: games until killed
        "pool": ["-m", "ai2048", "pool", "random", "--tile", "32768", "--games", "1000000", "--workers", "2",
                 "--out", str(tmp_path / "pool.json")],
    }.get(command) or ["-c", _DISTILL_TINY, os.path.dirname(os.path.abspath(__file__)),
                       str(request.getfixturevalue("tiny_tables")), str(tmp_path / "distilled")]
    err = (tmp_path / "stderr").open("w+")
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=err, text=True,
                            env={**os.environ, "NUMBA_NUM_THREADS": "1"})
    try:
        deadline = time.monotonic() + 120
        while len(_children(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = _children(proc.pid)
        assert len(workers) == 2, (tmp_path / "stderr").read_text()[-2000:] or "no workers started"
        time.sleep(1.0)  # the workers are inside their games
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [w for w in workers if _alive(w)]
        for w in left:
            os.kill(w, signal.SIGKILL)
        assert not left, f"{command}'s workers kept playing after it was killed"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        err.close()


@pytest.mark.parametrize("overrides", [{}, {"stages": (13, 14), "init": "shipped"}, {"init": "runs/my run"}])
def test_models_pack__the_card_s_training_command_runs_as_written(overrides: dict) -> None:
    """A model card's training command (written from config.json) held ``--init  --out RUN`` for a run
    without --init: the empty value vanished, so the command did not parse."""
    import dataclasses
    import shlex

    from ai2048.cli.train import build_config, trainer_parser
    from ai2048.models.pack import command_of
    from ai2048.train import get_trainer
    from ai2048.train.ntuple import NTupleConfig

    cfg = NTupleConfig(games=3000, seed=1, chunk=500, checkpoint_every=1000, **overrides)
    words = shlex.split(command_of(json_ready(dataclasses.asdict(cfg))))
    assert words[:3] == ["ai2048", "train", "ntuple"]
    trainer = get_trainer("ntuple")
    assert build_config(trainer, trainer_parser(trainer).parse_args(words[3:])) == cfg


def json_ready(d: dict) -> dict:
    """A config dict as config.json reads back (tuples become lists)."""
    import json

    return json.loads(json.dumps(d))


def test_cli_models__dir_before_the_name_lists_that_folder(tmp_path, capsys) -> None:
    """``ai2048 models --dir DIR`` (the listing, as its help describes --dir) was refused with
    "unrecognized arguments: --dir"; only ``models NAME --dir DIR`` worked."""
    assert main(["models", "--dir", str(tmp_path)]) == 0
    assert f"no shipped networks in {tmp_path}" in capsys.readouterr().out
    assert main(["models", "--dir", str(tmp_path), "--json", "nope"]) == 2
    assert f"no shipped network named 'nope' in {tmp_path}" in capsys.readouterr().err


SMALL = "0123,4567"
"""Two 4-tuples: the smallest n-tuple kernels to compile."""


def test_train_ntuple__a_signal_in_the_final_evaluation_stops_it_cleanly(tmp_path, monkeypatch,
                                                                          capsys) -> None:
    """``train ntuple --eval-games N``: Ctrl-C in the final evaluation (one numba call for all N
    games) waited for every game; SIGTERM killed the process without a word. Both now stop it (a
    signal before the games start, or at the kernels' next move), say how to evaluate the saved
    network, and leave the run completed."""
    import importlib
    import json
    import os
    import signal
    import threading

    from ai2048.train import ntuple as train_ntuple

    package = importlib.import_module("ai2048.evaluate")  # (ai2048.evaluate is the function)
    real = package.evaluate

    def before_the_games(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # `kill PID` as the final evaluation starts
        return real(*args, **kwargs)

    def during_the_games(*args, **kwargs):
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM)).start()  # `kill PID` while it plays
        return real(*args, **kwargs)

    handler = signal.getsignal(signal.SIGTERM)
    for n, evaluate in enumerate((before_the_games, during_the_games)):
        monkeypatch.setattr(package, "evaluate", evaluate)
        cfg = train_ntuple.NTupleConfig(patterns=SMALL, games=40, chunk=20, checkpoint_every=20,
                                        eval_games=200_000)
        out = train_ntuple.run(cfg, tmp_path / f"run{n}")
        said = capsys.readouterr().out
        assert "final evaluation stopped; the trained network is saved in" in said
        assert f"ai2048 eval {out} --games 200000" in said
        assert not (out / "eval.json").exists()
        assert json.loads((out / "meta.json").read_text())["status"] == "completed"
    assert signal.getsignal(signal.SIGTERM) is handler


def test_lazy_search__a_stop_abandons_the_search_at_the_roots() -> None:
    torch = pytest.importorskip("torch")
    from ai2048.envs.torch_env import EngineBatch
    from ai2048.search.lazyzero import SearchStopped, lazy_search

    env = EngineBatch(3, seed=1)
    roots = env.boards().copy()

    def uniform(states):
        n = states.shape[0]
        return torch.zeros(n, 4), torch.zeros(n)

    asked: list[int] = []

    def third() -> bool:
        asked.append(1)
        return len(asked) >= 3

    with pytest.raises(SearchStopped):
        lazy_search(env, uniform, rollouts=50, depth=2, puct=1.0, generator=torch.Generator().manual_seed(0),
                    stop=third)
    assert len(asked) == 3 and (env.boards() == roots).all()


def test_train_lazyzero__a_signal_stops_the_run_within_a_rollout(tmp_path, monkeypatch) -> None:
    """The default (GPU) settings on a CPU spend minutes on one move's search; Ctrl-C or SIGTERM
    waited for the move (ten minutes in a journey with --preset gpu), now for one rollout."""
    pytest.importorskip("torch")
    import json
    import os
    import signal

    from ai2048.train import lazyzero

    real = lazyzero.lazy_search
    asked: list[int] = []

    def signalled(*args, stop=None, **kwargs):
        if not asked:
            os.kill(os.getpid(), signal.SIGTERM)  # `kill PID` while the first move is searched

        def counting() -> bool:
            asked.append(1)
            return stop()

        return real(*args, stop=counting, **kwargs)

    monkeypatch.setattr(lazyzero, "lazy_search", signalled)
    cfg = lazyzero.LazyZeroConfig(**{**lazyzero.PRESETS["tiny"], "num_envs": 4, "episodes_per_epoch": 4,
                                     "epochs": 1, "rollouts": 100_000, "replay_min_games": 1,
                                     "minibatch_size": 16, "device": "cpu", "tensorboard": False,
                                     "progress": False})
    out = lazyzero.run(cfg, tmp_path / "lz")
    assert asked == [1]  # asked before the first rollout, which never ran
    meta = json.loads((out / "meta.json").read_text())
    assert meta["status"] == "interrupted" and meta["progress"]["step"] == 0


def test_cli_replay__a_folder_is_named_as_a_folder(tmp_path, capsys) -> None:
    """``ai2048 replay RUN_DIR`` said the folder "does not exist"."""
    assert main(["replay", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"record {tmp_path} is a folder" in err and "does not exist" not in err


def test_cli_train_ntuple__progress_false_hides_the_bar_as_for_every_trainer(tmp_path, capsys) -> None:
    """``--progress false`` worked for dqn, qnet, policy and lazyzero; ntuple refused it
    ("unrecognized arguments")."""
    out = tmp_path / "nt"
    argv = ["train", "ntuple", "--patterns", SMALL, "--games", "40", "--chunk", "20",
            "--checkpoint-every", "20", "--progress", "false", "--out", str(out)]
    assert main(argv) == 0
    assert "game/s" not in capsys.readouterr().err
    resume = ["train", "ntuple", "--games", "60", "--progress", "true", "--out", str(out), "--resume"]
    assert main(resume) == 0


def test_build_agent__one_config_for_every_spelling_of_a_run_path(tmp_path, monkeypatch) -> None:
    """``eval RUN/ --out r.json --resume`` after ``eval RUN --out r.json`` (a shell's completion adds
    the slash) was refused: "holds another evaluation (config: file {'weights': 'RUN'}, now
    {'weights': 'RUN/'})"."""
    from ai2048.cli._agents import choose_agent

    out = tmp_path / "nt"
    assert main(["train", "ntuple", "--patterns", SMALL, "--games", "20", "--chunk", "20",
                 "--checkpoint-every", "20", "--progress", "false", "--out", str(out)]) == 0
    monkeypatch.chdir(tmp_path)
    configs = [choose_agent(spec, {}).config for spec in ("nt", "nt/", "./nt", "nt//")]
    assert configs == [{"weights": "nt"}] * 4
    named = [choose_agent("ntuple", {"weights": w}).config for w in ("nt", "nt/", "./nt")]
    assert named == [{"weights": "nt"}] * 3


def test_cli_set__a_number_past_pythons_digit_limit_is_named(capsys) -> None:
    """``--set x=<5000 digits>`` printed Python's int-limit message, naming neither --set nor the key."""
    assert main(["eval", "greedy", "--games", "1", "--set", "depth=" + "9" * 5000]) == 2
    err = capsys.readouterr().err
    assert "--set depth: 999999999999... is a number of 5000 characters" in err and "Traceback" not in err


ESCAPES = "\x1b[2J\x1b[31m\x1b]8;;https://example.invalid\x07link\x1b]8;;\x07\u202e"


def _card_folder(tmp_path, edit=None):
    """A models folder holding a copy of the shipped card (and an empty network file beside it)."""
    import json
    from pathlib import Path

    import ai2048.models as models

    shipped = Path(models.__file__).parent / "networks" / f"{models.default_name()}.json"
    card = json.loads(shipped.read_text())
    card["name"], card["file"]["name"] = "net", "net.ntz"
    if edit is not None:
        edit(card)
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "net.json").write_text(json.dumps(card))
    (folder / "net.ntz").write_bytes(b"")
    return folder


@pytest.mark.parametrize(("edit", "message"), [
    (lambda c: c["evaluation"]["2-ply"].pop("games"), "evaluation '2-ply': it lacks 'games'"),
    (lambda c: c["evaluation"]["1-ply"].update(score_mean="x"), "score_mean='x' is not a finite number"),
    (lambda c: c["evaluation"]["2-ply"].update(tiles=[{"tile": 2}]), "'tiles' is not a list of rows"),
    (lambda c: c.update(evaluation=[]), "'evaluation' is a list, not an object"),
])
def test_cli_models__a_card_whose_evaluation_lacks_fields_is_named(edit, message, tmp_path, capsys) -> None:
    """Before: `ai2048 models` and `ai2048 models NAME` ended in a KeyError traceback. Now NAME is a
    clear error, and the list shows the other networks and says which card it skipped."""
    folder = _card_folder(tmp_path, edit)
    assert main(["models", "net", "--dir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert message in err and "reinstall it" in err and "Traceback" not in err, err
    assert main(["models", "--dir", str(folder)]) == 0
    assert "skipped net: model card 'net'" in capsys.readouterr().err


def test_cli_models__a_card_without_a_shown_field_is_named(tmp_path, capsys) -> None:
    folder = _card_folder(tmp_path, lambda c: c["network"].pop("entries"))
    assert main(["models", "net", "--dir", str(folder)]) == 2
    assert "model card 'net' has no 'entries' field" in capsys.readouterr().err


def test_cli_models_and_replay__text_from_files_is_shown_with_its_escapes_escaped(tmp_path, capsys) -> None:
    """Before: a card's summary or a record's agent holding terminal escapes (clear screen, colours, an
    OSC 8 link, a bidi override) was printed raw, and the terminal obeyed it."""
    from ai2048.agents import make_agent
    from ai2048.records import record_game

    def evil(card):
        card["summary"] = f"summary {ESCAPES}"
        card["network"]["preset"] = f"4x6{ESCAPES}"

    folder = _card_folder(tmp_path, evil)
    rec = record_game(make_agent("greedy"), seed=1, max_moves=3, agent_name=f"agent{ESCAPES}")
    path = rec.save(tmp_path / "rec.json")
    for argv in (["models", "net", "--dir", str(folder)], ["models", "--dir", str(folder)],
                 ["replay", str(path), "--delay", "0"]):
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, argv
        assert "\\x1b[2J" in out or "\\x1b[" in out, (argv, out)
    assert main(["replay", str(tmp_path / f"no{ESCAPES}.json")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b[2J" in err
