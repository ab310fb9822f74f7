"""The strategy-code harness: scores are the games' (against the same strategy played here), runs are
seeded, and hostile code (crash, hang, CPU spin, memory bomb, fork bomb, file reads and deletes,
sockets, signals, imports, garbage answers) ends in a clear verdict with the host untouched; the
kernel's barriers hold with the audit hook left out."""

from __future__ import annotations

import os
import re
import sys
import time

import pytest

import ai2048
from ai2048.evaluate import game_seeds
from ai2048.llm.sandbox import SandboxLimits, Stop, StrategyProcess, check_code
from ai2048.llm.strategy import score_strategy
from ai2048.rules import Action

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only")

FAST = SandboxLimits(move_seconds=0.5, start_seconds=10.0, cpu_seconds=5, memory_mb=128)
ROOMY = SandboxLimits(move_seconds=10.0, start_seconds=30.0, cpu_seconds=5, memory_mb=128)
"""For verdicts other than a timeout: a loaded machine must not turn them into one."""

ORDER = """
ORDER = {order!r}
def slide(row):
    tiles = [t for t in row if t]
    out, i = [], 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            out.append(2 * tiles[i]); i += 2
        else:
            out.append(tiles[i]); i += 1
    return out + [0] * (4 - len(out))
def after(board, m):
    if m in ("left", "right"):
        return [slide(r) if m == "left" else slide(r[::-1])[::-1] for r in board]
    cols = [list(c) for c in zip(*board)]
    cols = [slide(c) if m == "up" else slide(c[::-1])[::-1] for c in cols]
    return [list(r) for r in zip(*cols)]
def strategy(board):
    return next(m for m in ORDER if after(board, m) != board)
"""


def reference(order: tuple[str, ...], seed: int, games: int) -> list[tuple[int, int, int]]:
    """(score, moves, max tile) of each game played here with the first legal move in ``order``."""
    out = []
    for s in game_seeds(seed, games):
        g = ai2048.Game(seed=s)
        while not g.is_over:
            mask = ai2048.legal_mask(g.board)
            g.step(next(Action[m.upper()] for m in order if mask[Action[m.upper()]]))
        out.append((g.score, g.moves, g.max_tile))
    return out


def test_score__is_the_score_of_the_same_games_played_here():
    order = ("down", "left", "right", "up")
    res = score_strategy(ORDER.format(order=order), games=12, seed=5, limits=ROOMY)
    assert res.ok and res.verdict.message == "12 games played"
    got = [(r["score"], r["moves"], r["max_tile"]) for r in res.result.records]
    assert got == reference(order, 5, 12)
    assert all(r["end"] == "game_over" for r in res.result.records)
    assert res.score == pytest.approx(sum(g[0] for g in got) / 12)
    assert "verdict: ok" in res.format() and res.to_dict()["verdict"]["kind"] == "ok"


def test_score__the_code_s_random_is_seeded_by_the_run():
    code = "import random\ndef strategy(board):\n    return random.choice(['up', 'down', 'left', 'right'])\n"
    runs = [score_strategy(code, games=4, seed=s, limits=ROOMY).result.records for s in (1, 1, 2)]
    assert runs[0] == [dict(r, seconds=a["seconds"]) for r, a in zip(runs[1], runs[0], strict=True)]
    assert [r["actions"] for r in runs[0]] != [r["actions"] for r in runs[2]]


def test_score__answers_are_read_like_a_model_s_even_over_several_lines():
    """A label, reasoning then the move on its last line, JSON, and an int, in turn (u, l, d, r)."""
    answers = "['Move: up', 'thinking...\\nleft', '{\"move\": \"down\"}', 1]"
    code = f"import itertools\nC = itertools.cycle({answers})\ndef strategy(board):\n    return next(C)\n"
    res = score_strategy(code, games=4, seed=0, limits=ROOMY)
    assert res.ok
    played = [r["actions"] for r in res.result.records]
    assert all(a in "uldr" * 1000 for a in played) and max(map(len, played)) >= 4


def test_score__an_illegal_move_ends_that_game_only():
    res = score_strategy("def strategy(board):\n    return 'L'\n", games=20, seed=0, limits=ROOMY)
    assert res.ok and res.result.games == 20
    assert {r["end"] for r in res.result.records} == {"illegal"}
    assert all(set(r["actions"]) <= {"l"} for r in res.result.records)


@pytest.mark.parametrize(("body", "kind", "says"), [
    ("return 1/0", "crash", "raised ZeroDivisionError: division by zero on move 1 (line 3: return 1/0)"),
    ("return strategy(board)", "crash", "raised RecursionError"),
    ("import os; os._exit(0)", "crash", "exited (code 0) instead of answering"),
    ("while True: pass", "timeout", "took more than 0.5 s to answer one board"),
    ("import time; time.sleep(60)", "timeout", "took more than 0.5 s"),
    ("x = [bytearray(10**7) for _ in range(10**4)]", "memory", "out of memory (128 MiB allowed)"),
    ("import os\n    while True: os.fork()", "forbidden", "tried to start a process (os.fork"),
    ("return open('/etc/passwd').read()", "forbidden", "tried to open a file (open: '/etc/passwd')"),
    ("import socket; return 'up'", "forbidden", "tried to import a module (import: 'socket')"),
    ("__import__('_socket'); return 'up'", "forbidden", "tried to import a module (import: '_socket')"),
    ("import os; os.kill(os.getpid(), 9)", "forbidden", "tried to signal another process"),
    ("import os; os.listdir('/')", "forbidden", "tried to use the file system (os.listdir"),
    ("import os; os.system('true')", "forbidden", "tried to run a program (os.system"),
    ("import sys; sys.settrace(None)", "forbidden", "tried to reach into the interpreter (sys.settrace"),
    ("return None", "bad_move", "returned None, not a move"),
    ("return ['up']", "bad_move", "returned ('up'), not a move"),
    ("return 7", "bad_move", "the int 7 (moves are 0..3"),
    ("return 10**5000", "bad_move", "returned <an int of 16610 bits>, not a move"),
    ("class Lie:\n        __class__ = property(lambda s: str)\n        def __str__(s): return 'up'\n"
     "    return Lie()", "bad_move", "returned <Lie>, not a move"),
    ("return True", "bad_move", "returned True, not a move"),
    ("return 'jump'", "bad_move", "no move found in 'jump'"),
    ("return 'up' * 600", "bad_move", "returned '" ),
    ("import os; os.write(3, b'garbage\\n')", "protocol", "sent b'garbage', which is not an answer"),
])
def test_verdicts__hostile_or_broken_code_ends_clearly(body, kind, says):
    code = f"def strategy(board):\n    board = board\n    {body}\n"
    res = score_strategy(code, games=3, seed=0, limits=FAST if kind == "timeout" else ROOMY)
    assert res.verdict.kind == kind, res.verdict.message
    assert says in res.verdict.message
    assert res.result.error.startswith(kind) and res.result.games == 0


@pytest.mark.parametrize(("code", "says"), [
    ("def strategy(board)\n    return 'up'\n", "SyntaxError: expected ':' while loading the code (line 1"),
    ("x = 1\n", "defines no function strategy(board) while loading the code"),
    ("import os\nos.remove('x')\ndef strategy(b): return 'up'\n", None),
    ("raise ValueError('no')\n", "ValueError: no while loading the code (line 1"),
])
def test_verdicts__code_that_fails_to_load(code, says):
    res = score_strategy(code, games=2, limits=ROOMY)
    assert res.verdict.kind == ("forbidden" if says is None else "crash")
    assert says is None or says in res.verdict.message


FORGED = "import os; os.write(3, b'x {\"setup_error\": \"forged\"}\\n')"


@pytest.mark.parametrize("code", [
    f"def strategy(board):\n    {FORGED}\n    return 'up'\n",
    f"{FORGED}\ndef strategy(board):\n    return 'up'\n",
    "class Lie:\n    __class__ = property(lambda s: str)\n"
    "    def __str__(s): return 'up\\nx {\"setup_error\": \"forged\"}'\n"
    "def strategy(board):\n    return Lie()\n",
])
def test_verdicts__a_forged_set_up_report_is_a_protocol_verdict_not_a_host_error(code):
    """Only the report sent before the code runs can say the host cannot run the sandbox."""
    res = score_strategy(code, games=2, limits=ROOMY)
    assert res.verdict.kind in ("protocol", "bad_move"), res.verdict.message
    assert res.verdict.kind == ("bad_move" if "Lie" in code else "protocol")


def test_verdicts__cpu_limit_kills_a_spinning_strategy():
    t0 = time.monotonic()
    limits = SandboxLimits(move_seconds=30, cpu_seconds=1, memory_mb=64)
    res = score_strategy("def strategy(board):\n    while True: pass\n", games=1, limits=limits)
    assert res.verdict.kind == "cpu" and "used its 1 s of CPU time" in res.verdict.message
    assert time.monotonic() - t0 < 20


def test_verdicts__start_up_hang_and_output_are_bounded():
    limits = SandboxLimits(start_seconds=0.5, move_seconds=0.5)
    res = score_strategy("while True: pass\n", games=1, limits=limits)
    assert res.verdict.kind == "timeout" and "to start and run the code's top level" in res.verdict.message
    code = "def strategy(b):\n    print('x' * 10**6)\n    return 1 / 0\n"
    res = score_strategy(code, games=1, limits=ROOMY)
    assert res.verdict.kind == "crash" and len(res.verdict.detail["output"]) == 4096


@pytest.mark.parametrize(("body", "error"), [
    ("open({path!r}).read()", "PermissionError"),
    ("import os; os.remove({path!r})", "PermissionError"),
    ("import os; os.fork()", "PermissionError"),
    ("import os; os.kill({parent}, 0)", "PermissionError"),
    ("import socket", "PermissionError"),
])
def test_kernel_barriers__hold_without_the_audit_hook(tmp_path, body, error):
    """seccomp refuses files, processes, signals and (through the import's file) sockets by itself."""
    victim = tmp_path / "keep.txt"
    victim.write_text("data")
    code = f"def strategy(board):\n    {body.format(path=str(victim), parent=os.getpid())}\n    return 'up'\n"
    with pytest.raises(Stop) as stop, StrategyProcess(code, ROOMY, audit=False) as proc:
        proc.ask(ai2048.encode([1, 1] + [0] * 14))
    assert stop.value.verdict.kind == "crash" and error in stop.value.verdict.message
    assert victim.read_text() == "data"


def test_kernel_barriers__the_process_runs_in_an_empty_folder_without_our_environment(monkeypatch):
    monkeypatch.setenv("AI2048_TEST_SECRET", "hunter2")
    code = ("import os\nSEEN = (os.environ.get('AI2048_TEST_SECRET'), sorted(os.environ))\n"
            "def strategy(board):\n    raise ValueError(repr(SEEN))\n")
    with pytest.raises(Stop) as stop, StrategyProcess(code, ROOMY) as proc:
        proc.ask(1)
    message = stop.value.verdict.message
    assert "None" in message and "hunter2" not in message and "HOME" not in message
    with pytest.raises(Stop) as stop, StrategyProcess("import os\ndef strategy(b): return os.getcwd()\n",
                                                       ROOMY, audit=False) as proc:
        proc.ask(1)
    assert "PermissionError" in stop.value.verdict.message  # not even its own folder's name


def test_process__is_killed_and_its_folder_removed_after_a_verdict():
    proc = StrategyProcess("def strategy(b):\n    while True: pass\n", FAST)
    folder = proc._dir
    assert not os.path.exists(folder)  # gone once the process started: no kill of ours can leave it
    with pytest.raises(Stop):
        proc.ask(1)
    assert proc.proc.returncode is not None and not os.path.exists(folder)


@pytest.mark.parametrize(("kw", "match"), [
    ({"move_seconds": 0}, "move_seconds=0 must be"), ({"move_seconds": float("nan")}, "move_seconds=nan"),
    ({"cpu_seconds": 1.5}, "cpu_seconds=1.5 must be a whole number"), ({"memory_mb": 0}, "memory_mb=0"),
    ({"numpy": "yes"}, "numpy='yes' must be True or False"),
])
def test_limits__bad_values_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        SandboxLimits(**kw)


@pytest.mark.parametrize(("args", "error", "match"), [
    ({"code": b"def strategy(b): pass"}, TypeError, "must be text"),
    ({"code": "x" * 200_001}, ValueError, "at most 200,000 are read"),
    ({"code": "a\x00b"}, ValueError, "NUL"),
    ({"code": "", "games": 0}, ValueError, "games"),
    ({"code": "", "total_seconds": float("inf")}, ValueError, "total_seconds=inf"),
])
def test_arguments__bad_ones_raise_before_any_process(args, error, match):
    with pytest.raises(error, match=match):
        score_strategy(**args)
    if "games" not in args and "total_seconds" not in args:
        with pytest.raises(error, match=match):
            check_code(args["code"])


def test_numpy__can_be_allowed():
    code = "import numpy as np\ndef strategy(board):\n    return ['up', 'down'][int(np.sum(board)) % 2]\n"
    assert score_strategy(code, games=1, limits=ROOMY).verdict.kind == "forbidden"
    res = score_strategy(code, games=2, limits=SandboxLimits(numpy=True, memory_mb=256))
    assert res.ok, res.verdict.message


def test_cli__scores_a_file_and_writes_the_verdict(tmp_path, capsys):
    import json

    from ai2048.cli import main

    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(ORDER.format(order=("down", "left", "right", "up")))
    bad.write_text("def strategy(board):\n    return open('/etc/shadow').read()\n")
    out = tmp_path / "res" / "good.json"
    assert main(["strategy", str(good), "--games", "3", "--seed", "5", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "verdict: ok: 3 games played" in printed
    assert "strategy:good.py" in printed and "reach %" in printed
    saved = json.loads(out.read_text())
    assert saved["verdict"]["kind"] == "ok" and [g["score"] for g in saved["games"]] == [
        s for s, _, _ in reference(("down", "left", "right", "up"), 5, 3)]
    assert main(["strategy", str(bad), "--games", "2"]) == 1
    printed = capsys.readouterr().out
    assert "verdict: forbidden: the strategy tried to open a file (open: '/etc/shadow')" in printed


@pytest.mark.parametrize(("argv", "match"), [
    (["--games", "0"], "--games=0 must be a whole number >= 1"),
    (["--move-seconds", "0"], "--move-seconds=0.0 must be"),
    (["--memory-mb", "0"], "--memory-mb=0 must be"),
    (["--total-seconds", "0"], "--total-seconds=0.0 must be a finite number > 0"),
])
def test_cli__bad_options_are_named_before_any_game(tmp_path, argv, match):
    from ai2048.cli import check

    f = tmp_path / "s.py"
    f.write_text("def strategy(b): return 'up'\n")
    with pytest.raises(ValueError, match=match):
        check(["strategy", str(f), *argv])
    with pytest.raises(FileNotFoundError, match="missing.py does not exist; give the Python file that"):
        check(["strategy", str(tmp_path / "missing.py")])
    with pytest.raises(IsADirectoryError, match="is a folder; give the Python file in it that defines"):
        check(["strategy", str(tmp_path)])
    with pytest.raises(ValueError, match="--resume needs --out"):
        check(["strategy", str(f), "--resume"])


def test_cli__the_code_s_exception_text_reaches_the_terminal_escaped(tmp_path, capsys):
    from ai2048.cli import main

    f = tmp_path / "s.py"
    f.write_text("def strategy(board):\n    print('\\x1b]8;;http://x\\x07')\n"
                 "    raise ValueError('\\x1b[2J\\x1b[31mred')\n")
    assert main(["strategy", str(f), "--games", "1", "--move-seconds", "10"]) == 1
    printed = capsys.readouterr().out
    assert "ValueError: \\x1b[2J\\x1b[31mred" in printed and "\x1b" not in printed


STOPPABLE = """import random, time
def strategy(board):
    time.sleep(0.1)
    return random.choice(['up', 'down', 'left', 'right'])
"""


def _start(tmp_path, *extra):
    """``ai2048 strategy`` in a process of its own, its temporary folders under tmp_path/tmp."""
    import subprocess

    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "ai2048", "strategy", str(tmp_path / "s.py"), "--games", "8", "--seed", "3",
            "--max-moves", "6", "--move-seconds", "10", "--out", str(tmp_path / "r.json"), *extra]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_games(path, n, proc, seconds=120.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if path.exists() and len(path.read_text().splitlines()) > n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{path} did not get {n} games")


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_cli__a_stopped_run_keeps_its_games_and_a_resume_plays_only_the_rest(tmp_path, sig):
    """SIGTERM writes --out with the games so far; SIGKILL leaves them streamed; neither leaves the
    working folder; --resume replays the kept games and finishes the run as an unstopped one would."""
    import json
    import signal

    (tmp_path / "s.py").write_text(STOPPABLE)
    games = tmp_path / "r.games.jsonl"
    proc = _start(tmp_path)
    _wait_for_games(games, 2, proc)
    proc.send_signal(getattr(signal, sig))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == (130 if sig == "SIGTERM" else -9), err
    kept = [json.loads(line) for line in games.read_text().splitlines()[1:]]
    assert 2 <= len(kept) < 8
    if sig == "SIGTERM":
        saved = json.loads((tmp_path / "r.json").read_text())
        assert saved["interrupted"] and saved["verdict"]["kind"] == "ok"
        assert [g["index"] for g in saved["games"]] == [g["index"] for g in kept]
        assert "finish the run with the same command and --resume" in out
    time.sleep(0.5)  # the strategy process dies with its parent (PR_SET_PDEATHSIG)
    assert list((tmp_path / "tmp").iterdir()) == []
    proc = _start(tmp_path, "--resume")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"resuming: {len(kept)} finished game(s) kept" in err and not games.exists()
    resumed = json.loads((tmp_path / "r.json").read_text())["games"]
    whole = score_strategy(STOPPABLE, games=8, seed=3, max_moves=6, limits=ROOMY).result.records
    assert [(g["index"], g["actions"], g["end"]) for g in resumed] == [
        (g["index"], g["actions"], g["end"]) for g in whole]
    assert {g["end"] for g in whole} >= {"illegal"}  # a kept game that a move ended early replays too


def test_cli__a_resume_refuses_kept_games_of_other_code_or_edited(tmp_path, capsys):
    import json

    from ai2048.cli import main

    (tmp_path / "s.py").write_text(STOPPABLE)
    proc = _start(tmp_path)
    _wait_for_games(tmp_path / "r.games.jsonl", 1, proc)
    proc.kill()
    proc.wait()
    argv = ["strategy", str(tmp_path / "s.py"), "--games", "8", "--seed", "3", "--max-moves", "6",
            "--out", str(tmp_path / "r.json")]

    def refused(extra: list[str], says: str) -> None:
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert re.search(says, err), err

    refused([], "pass --resume to finish that run")
    lines = (tmp_path / "r.games.jsonl").read_text().splitlines()
    game = json.loads(lines[1])
    game["score"] += 4
    (tmp_path / "r.games.jsonl").write_text("\n".join([lines[0], json.dumps(game)]) + "\n")
    refused(["--resume"], "game 0 in .* does not hold")
    (tmp_path / "s.py").write_text(STOPPABLE + "# another\n")
    refused(["--resume"], "holds another evaluation .*code_sha256")
