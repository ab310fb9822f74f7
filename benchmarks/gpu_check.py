"""Issue 32's device check in one run: seed 001's CUDA path, tested, timed and trained within a budget.

Steps, each guarded (a failing step records its error and the next one runs), each capped by what is
left of ``--budget-s``, the figures written to ``OUT/gpu_check.json`` and ``OUT/gpu_check.md``
(atomically) after every step, so a run cut short still leaves what it measured:

1. ``tests``: the CUDA tests (test files that look at ``torch.cuda.is_available``, ``-k "cuda or gpu or
   device"``) in a pytest subprocess; pass/fail/skip counts.
2. ``env``: random-play steps/s of ``TorchEnv2048`` on the device beside the numba ``batch_step``
   kernel on the CPU, measured in the same run (``bench_torch_env.py``'s functions).
3. ``selfplay``: the trainer's self-play moves (``lazy_search`` + ``choose_actions``) with the ``gpu``
   preset's network, games and search: moves/s and games finished per second (the train step's
   games/s covers minutes).
4. ``bad_input``: a network saved on the GPU loads on the CPU and the reverse (same outputs), and
   ``device="cuda:7"`` on a machine with fewer GPUs is a clear error.
5. ``train``: ``ai2048.train.lazyzero.run`` with the ``gpu`` preset for what the budget leaves (at
   least ``--train-min-s``) through its ``duration`` budget; the files an agent loads are copied to
   ``OUT/lazyzero-gpu``.
6. ``eval_lazyzero_chance``, ``eval_lazyzero``: that network over ``--eval-games`` games through
   ``ai2048.evaluate`` with the chance-node MCTS and with LazyZero's own search, all games in flight.

``--dry-run`` shrinks every size (a few games, tiny search, seconds of training) and runs on the CPU
when there is no CUDA device, to try the whole script on any machine. Without it, a machine without
CUDA is refused before any work.

    python benchmarks/gpu_check.py [--budget-s 540] [--out DIR] [--dry-run] [--set KEY=VALUE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch

from ai2048 import checks
from ai2048.cli._common import add_set_argument, check_out_dir, parse_sets

ROOT = Path(__file__).resolve().parents[1]
TEST_SELECTION = "cuda or gpu or device"
MISSING_DEVICE = "cuda:7"


class Sizes(NamedTuple):
    """How big each step is; ``train_s`` None = what the budget leaves, at least ``train_min_s``."""

    tests_s: float
    env_games: tuple[int, ...]
    env_s: float
    overrides: dict[str, Any]  # over the gpu preset, for self-play and training
    selfplay_s: float
    train_s: float | None
    train_min_s: float
    eval_reserve_s: float
    eval_games: int
    eval_rollouts: int
    eval_simulations: int


FULL = Sizes(tests_s=240.0, env_games=(8192, 65536), env_s=3.0, overrides={}, selfplay_s=30.0, train_s=None,
             train_min_s=300.0, eval_reserve_s=120.0, eval_games=200, eval_rollouts=50, eval_simulations=100)
DRY = Sizes(tests_s=300.0, env_games=(256, 1024), env_s=0.5,
            overrides={"num_envs": 8, "rollouts": 4, "test_rollouts": 4, "episodes_per_epoch": 4,
                       "replay_min_games": 2, "replay_max_games": 64, "minibatch_size": 32, "test_games": 0},
            selfplay_s=2.0, train_s=5.0, train_min_s=5.0, eval_reserve_s=0.0, eval_games=4, eval_rollouts=4,
            eval_simulations=4)


class OutOfTime(KeyboardInterrupt):
    """A step's share of the budget is spent: ``ai2048.evaluate`` and the trainer stop on it as on
    Ctrl-C, keeping what they finished."""


def _out_of_time(signum: int, frame: Any) -> None:
    raise OutOfTime


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Report:
    """The figures so far, rewritten (JSON and markdown, atomically) after every step."""

    def __init__(self, out: Path, head: dict[str, Any]) -> None:
        self.out, self.t0 = out, time.monotonic()
        self.data: dict[str, Any] = {**head, "steps": {}}

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    def step(self, name: str, cap_s: float, fn: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Run ``fn(record)`` under an alarm of ``cap_s`` seconds; an error or the alarm is recorded with
        what ``fn`` had filled in so far."""
        rec: dict[str, Any] = {"ok": False, "started_s": round(self.elapsed(), 1)}
        print(f"[{self.elapsed():6.1f} s] {name} (at most {cap_s:.0f} s)", flush=True)
        t0 = time.monotonic()
        if cap_s < 1:
            rec["error"] = "skipped: the budget was spent before this step"
        else:
            old = signal.signal(signal.SIGALRM, _out_of_time)
            signal.setitimer(signal.ITIMER_REAL, cap_s)
            try:
                fn(rec)
                rec["ok"] = "error" not in rec
            except OutOfTime:
                rec["error"] = f"out of time: its share of the budget ({cap_s:.0f} s) was spent"
            except Exception as e:  # noqa: BLE001 (each step records its failure and the next one runs)
                rec["error"] = f"{type(e).__name__}: {e}"
                rec["traceback"] = traceback.format_exc()[-3000:]
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, old)
        rec["seconds"] = round(time.monotonic() - t0, 2)
        self.data["steps"][name] = rec
        self.data["elapsed_s"] = round(self.elapsed(), 1)
        self.write()
        print(f"{'':11}{name}: {'ok' if rec['ok'] else rec.get('error')} ({rec['seconds']} s)", flush=True)
        return rec

    def write(self) -> None:
        from ai2048.checkpoint import atomic_write, write_json

        write_json(self.out / "gpu_check.json", self.data)
        text = self.markdown()
        atomic_write(self.out / "gpu_check.md", lambda f: f.write(text), mode="w")

    def markdown(self) -> str:
        d = self.data
        lines = [f"# gpu_check{' (dry run)' if d['dry_run'] else ''}: {d['device_name']}", "",
                 f"torch {d['torch']} (CUDA {d['cuda']}), numba {d['numba']}, threads {d['threads']}, "
                 f"seed {d['seed']}, commit {d['commit']}, started {d['started']}, "
                 f"{d.get('elapsed_s', 0)} s of a {d['budget_s']:.0f} s budget", "",
                 f"    {d['command']}", ""]
        for name, rec in d["steps"].items():
            status = "ok" if rec["ok"] else f"FAILED: {rec.get('error', '')}"
            figures = ", ".join(f"{k} {_shown(v)}" for k, v in rec.items()  # long texts: in the JSON
                                if k not in ("ok", "error", "seconds", "started_s", "command")
                                and isinstance(v, (int, float, str, bool)) and len(str(v)) <= 100)
            lines.append(f"- **{name}** ({rec['seconds']} s): {status}" + (f"; {figures}" if figures else ""))
        return "\n".join(lines) + "\n"


def _shown(v: Any) -> str:
    if isinstance(v, float) and not isinstance(v, bool):
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.4g}"
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


# ----------------------------------------------------------------------------------------------- steps


def run_tests(rec: dict[str, Any], work: Path) -> None:
    """The CUDA tests in a pytest subprocess (this checkout's ``src`` first on the path)."""
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py")
                   if "cuda.is_available" in p.read_text())
    junit = work / "tests.xml"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q", "-k", TEST_SELECTION,
           f"--junitxml={junit}", *files]
    path = [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    rec["command"] = shlex.join(cmd[1:])
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    rec["returncode"] = proc.returncode
    rec["output_tail"] = (proc.stdout + proc.stderr)[-2000:]
    root = ET.parse(junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, f"{junit} holds no testsuite"
    counts = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
    rec.update(counts, passed=counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"])
    if proc.returncode != 0 or counts["failures"] or counts["errors"]:
        rec["error"] = (f"pytest exited {proc.returncode}: {counts['failures']} failed, "
                        f"{counts['errors']} errors")


def run_env(rec: dict[str, Any], device: torch.device, sizes: Sizes) -> None:
    """Random legal moves, finished games reset: numba ``batch_step`` (CPU) and ``TorchEnv2048`` (device)."""
    from ai2048.envs.torch_env import TorchEnv2048
    from bench_torch_env import env_steps_per_s, numba_steps_per_s

    rec["seconds_each"] = sizes.env_s
    for n in sizes.env_games:
        base = numba_steps_per_s(n, sizes.env_s)
        rec[f"numba_cpu_{n}_steps_per_s"] = base
        torch_rate = env_steps_per_s(TorchEnv2048(n, device, seed=0), sizes.env_s)
        rec[f"torch_{device.type}_{n}_steps_per_s"] = torch_rate
        rec[f"torch_over_numba_{n}"] = torch_rate / base


def _network(cfg: Any, device: torch.device) -> Any:
    from ai2048.nets.resnet import FusedPolicyValue, PolicyValueResNet

    torch.manual_seed(cfg.seed)
    return FusedPolicyValue(PolicyValueResNet(cfg.network()).to(device).eval())


def run_selfplay(rec: dict[str, Any], cfg: Any, device: torch.device, seconds: float) -> None:
    """The training loop's self-play moves (its search, move choice and env) on an untrained network: the
    cost of a move does not depend on the weights. The games start together, so a window shorter than a
    game counts few finished ones: ``moves_per_s`` is the rate, the train step's ``games_per_s`` the
    games a longer stretch finishes."""
    from ai2048.envs.torch_env import make_batch_env
    from ai2048.search.lazyzero import choose_actions, lazy_search

    fused = _network(cfg, device)
    env = make_batch_env(cfg.env_backend, cfg.num_envs, device, seed=cfg.seed)
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    rec.update(num_envs=cfg.num_envs, rollouts=cfg.rollouts, depth=cfg.rollout_depth, env=type(env).__name__)

    def move() -> int:
        legal = env.legal_actions()
        visits, _ = lazy_search(env, fused, rollouts=cfg.rollouts, depth=cfg.rollout_depth, puct=cfg.puct,
                                generator=gen)
        env.step(choose_actions(visits, legal, cfg.temperature, gen))
        done = int(env.terminated.sum())
        env.reset_terminated()
        return done

    t0 = time.perf_counter()
    move()  # compiles and warms up outside the clock
    _sync(device)
    rec["first_move_s"] = time.perf_counter() - t0
    steps = finished = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        finished += move()
        steps += 1
        wall = time.perf_counter() - t0
        rec.update(move_steps=steps, wall_s=wall, seconds_per_move_step=wall / steps,
                   moves_per_s=steps * cfg.num_envs / wall, games_finished=finished,
                   games_per_s=finished / wall)


def _tiny_run(out: Path, device: str, seed: int) -> Path:
    """A LazyZero run of about a second on ``device``, saved by the trainer as any run is."""
    from ai2048.train.config import make_config
    from ai2048.train.lazyzero import PRESETS, LazyZeroConfig, run

    cfg = make_config(LazyZeroConfig, PRESETS, "tiny", device=device, seed=seed, duration=1.0, num_envs=4,
                      rollouts=2, progress=False, tensorboard=False)
    return run(cfg, out)


def _storage_devices(path: Path) -> str:
    """The devices ``torch.save`` tagged the file's tensors with (``cuda:0`` for a network saved on a GPU)."""
    from ai2048.nets.files import load_torch_file

    tags: set[str] = set()

    def keep(storage: Any, tag: str) -> Any:
        tags.add(tag)
        return storage

    load_torch_file(path, "network file", map_location=keep)
    return ",".join(sorted(tags))


def run_bad_input(rec: dict[str, Any], device: torch.device, work: Path, seed: int) -> None:
    """Networks saved on one device load on the other with the same outputs; a missing GPU is refused."""
    from ai2048.agents.base import make_agent
    from ai2048.agents.lazyzero import WEIGHTS, load_lazyzero_network
    from ai2048.envs.torch_env import from_boards
    from ai2048.game import Game

    boards = from_boards(np.array([Game(seed=i).board for i in range(16)], dtype=np.uint64))
    problems = []
    for saved_on in dict.fromkeys([device.type, "cpu"]):
        run_dir = _tiny_run(work / f"saved-on-{saved_on}", saved_on, seed)
        rec[f"saved_on_{saved_on}_storages"] = _storage_devices(run_dir / WEIGHTS)
        outputs = {}
        for load_on in dict.fromkeys(["cpu", device.type]):
            model, _ = load_lazyzero_network(run_dir, load_on)
            placed = next(model.parameters()).device.type
            with torch.no_grad():
                outputs[load_on] = [t.cpu() for t in model(boards.to(placed))]
            rec[f"saved_on_{saved_on}_loaded_on_{load_on}"] = placed
            if placed != load_on:
                problems.append(f"saved on {saved_on}, asked for {load_on}, got {placed}")
        pairs = zip(outputs["cpu"], outputs[device.type], strict=True)
        diff = max(float((a - b).abs().max()) for a, b in pairs)
        rec[f"saved_on_{saved_on}_max_output_diff"] = diff
        if diff > 1e-2:  # GPU convolutions in TF32 round to about 1e-3; another network differs by far more
            problems.append(f"saved on {saved_on}: outputs differ across devices by {diff}")
    # a GPU this machine does not have: an agent and the trainer each refuse it, the trainer before any file
    if torch.cuda.device_count() > 7:
        rec["missing_device"] = f"not checked: this machine has {torch.cuda.device_count()} GPUs"
    else:
        want = "does not exist" if torch.cuda.is_available() else "no CUDA device"
        for where, call in (
            ("agent", lambda: make_agent("lazyzero", weights=str(run_dir), device=MISSING_DEVICE)),
            ("trainer", lambda: _tiny_run(work / "never", MISSING_DEVICE, seed)),
        ):
            try:
                call()
                problems.append(f"{where}: device={MISSING_DEVICE!r} was accepted")
            except ValueError as e:
                rec[f"missing_device_{where}_error"] = str(e)
                if want not in str(e):
                    problems.append(f"{where}: the error does not say {want!r}: {e}")
        if (work / "never").exists():
            problems.append(f"the trainer made {work / 'never'} before refusing {MISSING_DEVICE}")
    if problems:
        rec["error"] = "; ".join(problems)


def run_train(rec: dict[str, Any], cfg: Any, work: Path, out: Path) -> None:
    """Train ``cfg`` (its ``duration`` the budget) in ``work``; copy what an agent loads to ``out``."""
    from ai2048.agents.lazyzero import WEIGHTS
    from ai2048.checkpoint import atomic_path, read_json
    from ai2048.train.lazyzero import run

    rec.update(duration_s=cfg.duration, config=asdict(cfg))
    t0 = time.perf_counter()
    run_dir = run(cfg, work / "lazyzero-gpu")
    rec["wall_s"] = time.perf_counter() - t0
    meta = read_json(run_dir / "meta.json", "run metadata")
    progress = meta["progress"]
    rec.update(status=meta["status"], epochs=progress["step"], games=progress["games"],
               train_time_s=progress["time"], games_per_s=progress["games"] / max(progress["time"], 1e-9),
               replay_min_games=cfg.replay_min_games, learned=progress["games"] >= cfg.replay_min_games)
    metrics = run_dir / "metrics.jsonl"
    if metrics.exists() and metrics.read_text().strip():
        rec["last_epoch"] = json.loads(metrics.read_text().strip().splitlines()[-1])
    for name in ("config.json", "meta.json", WEIGHTS, "metrics.jsonl"):
        if (run_dir / name).exists():
            with atomic_path(out / name) as tmp:
                shutil.copyfile(run_dir / name, tmp)
    rec["checkpoint"] = str(out)


def run_eval(rec: dict[str, Any], agent: str, config: dict[str, Any], games: int, seed: int) -> None:
    """``games`` seeded games through ``ai2048.evaluate``, all in flight; reach rates with Wilson 95%."""
    from ai2048.agents.base import make_agent
    from ai2048.evaluate import evaluate

    rec.update(agent=agent, **config, eval_seed=seed)
    result = evaluate(make_agent(agent, **config), games=games, seed=seed, progress=False)
    summary = result.summary()
    rec.update(interrupted=result.interrupted, games=result.games, games_requested=games,
               **{k: summary[k] for k in ("score_mean", "score_se", "moves_mean", "moves_per_s",
                                          "wall_seconds", "load_seconds") if k in summary})
    rec["tiles"] = summary.get("tiles", [])
    for row in rec["tiles"]:
        if row["tile"] in (512, 1024, 2048, 4096, 8192):
            rec[f"reach_{row['tile']}"] = row["reach_rate"]
            rec[f"reach_{row['tile']}_ci"] = row["reach_ci"]
    if result.games < games:
        rec["error"] = f"{result.games} of {games} games finished (interrupted: {result.interrupted})"


# ------------------------------------------------------------------------------------------------ main


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget-s", type=float, default=540.0,
                   help="wall-clock seconds for the whole run (default 540: a 10-minute device call)")
    p.add_argument("--out", type=Path, default=os.environ.get("OUT") or None,
                   help="folder for gpu_check.json, gpu_check.md and the trained network (default: $OUT)")
    p.add_argument("--dry-run", action="store_true",
                   help="every size shrunk, on the CPU when there is no CUDA device (minutes in all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the training run")
    p.add_argument("--eval-seed", type=int, default=1_000_000,
                   help="seed of the first evaluation game (fresh to the training run's games)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads of torch, numba and the searches (default: all cores; 1 with --dry-run)")
    p.add_argument("--train-min-s", type=float, default=None,
                   help=f"least training seconds (default {FULL.train_min_s:.0f}; {DRY.train_min_s:.0f} dry)")
    p.add_argument("--eval-games", type=int, default=None,
                   help=f"games per evaluation (default {FULL.eval_games}; {DRY.eval_games} dry)")
    add_set_argument(p, "rollouts=100")  # LazyZero config values over the gpu preset (self-play, training)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not torch.cuda.is_available() and not args.dry_run:
        print(f"gpu_check: torch {torch.__version__} sees no CUDA device; run it on a GPU machine, or add "
              "--dry-run to try every step here on the CPU with small sizes", file=sys.stderr)
        return 2
    from ai2048.train.config import make_config
    from ai2048.train.lazyzero import PRESETS, LazyZeroConfig

    try:
        if args.out is None:
            raise ValueError("no output folder: give --out DIR (or set OUT)")
        out = check_out_dir(args.out)
        assert out is not None
        sizes = DRY if args.dry_run else FULL
        default_threads = 1 if args.dry_run else os.cpu_count() or 1
        threads = checks.whole("--threads", default_threads if args.threads is None else args.threads, 1)
        checks.number("--budget-s", args.budget_s, 0, lo_open=True)
        train_min_s = checks.number("--train-min-s", sizes.train_min_s if args.train_min_s is None
                                    else args.train_min_s, 0)
        checks.whole("--seed", args.seed, 0)
        checks.whole("--eval-seed", args.eval_seed, 0)
        eval_games = checks.whole("--eval-games", sizes.eval_games if args.eval_games is None
                                  else args.eval_games, 1)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        cfg = make_config(LazyZeroConfig, PRESETS, "gpu", **{
            **sizes.overrides, "device": str(device), "seed": args.seed, "threads": threads,
            "progress": False, "tensorboard": False, **parse_sets(args.sets)})
    except ValueError as e:
        print(f"gpu_check: {e}", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(threads)
    import numba

    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    report = Report(out, {
        "dry_run": args.dry_run, "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor()
        or platform.machine(),
        "torch": torch.__version__, "cuda": torch.version.cuda, "cudnn_tf32": torch.backends.cudnn.allow_tf32,
        "numba": numba.__version__,
        "python": platform.python_version(), "threads": threads, "seed": args.seed,
        "eval_seed": args.eval_seed, "commit": _commit(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "budget_s": args.budget_s,
        "command": shlex.join([Path(sys.executable).name, *sys.argv]),
    })
    deadline = report.t0 + args.budget_s

    def left() -> float:
        return deadline - time.monotonic()

    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        work = Path(tmp)
        report.step("tests", min(left(), sizes.tests_s), lambda r: run_tests(r, work))
        report.step("env", left(), lambda r: run_env(r, device, sizes))
        report.step("selfplay", left(), lambda r: run_selfplay(r, cfg, device, sizes.selfplay_s))
        report.step("bad_input", left(), lambda r: run_bad_input(r, device, work, args.seed))
        train_s = sizes.train_s or max(train_min_s, left() - sizes.eval_reserve_s)
        trained = replace(cfg, duration=train_s)
        # the trainer stops itself at its duration; the alarm only catches a move that overruns it badly
        report.step("train", train_s + 120, lambda r: run_train(r, trained, work, out / "lazyzero-gpu"))
        weights = str(out / "lazyzero-gpu")
        common = {"weights": weights, "device": str(device), "seed": args.seed, "threads": threads,
                  "games_in_flight": eval_games}
        chance = {**common, "simulations": sizes.eval_simulations}
        report.step("eval_lazyzero_chance", left() / 2, lambda r: run_eval(
            r, "lazyzero-chance", chance, eval_games, args.eval_seed))
        report.step("eval_lazyzero", left(), lambda r: run_eval(
            r, "lazyzero", {**common, "rollouts": sizes.eval_rollouts}, eval_games, args.eval_seed))
    failed = [k for k, v in report.data["steps"].items() if not v["ok"]]
    print(f"gpu_check: {report.elapsed():.0f} s; {out / 'gpu_check.json'}; "
          + (f"failed: {', '.join(failed)}" if failed else "every step ok"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
