"""``benchmarks/gpu_check.py``, issue 32's device check: its dry run fills in every step's figures on the
CPU, a failing or overrunning step is recorded and the next one runs, and without ``--dry-run`` a machine
without CUDA is refused before any work."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_check.py"
STEPS = ["tests", "env", "selfplay", "bad_input", "train", "eval_lazyzero_chance", "eval_lazyzero"]


def _script(*args: str) -> subprocess.CompletedProcess[str]:
    path = [str(ROOT / "src"), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "NUMBA_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          timeout=3700)


def _module():  # noqa: ANN202 (the script, imported as a module)
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up there
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPT.parent))


@pytest.mark.slow  # about a minute on a quiet machine with a cold numba cache: the whole script, shrunk
def test_dry_run__every_step_records_its_figures(tmp_path):
    out = tmp_path / "out"
    proc = _script("--dry-run", "--out", str(out), "--seed", "3", "--budget-s", "3600")  # no step runs out
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((out / "gpu_check.json").read_text())
    steps = data["steps"]
    assert list(steps) == STEPS
    assert {k: v.get("error") for k, v in steps.items() if not v["ok"]} == {}
    assert data["dry_run"] is True and data["seed"] == 3 and data["torch"] == torch.__version__
    assert data["device_name"] and "--dry-run" in data["command"]
    tests = steps["tests"]
    assert tests["passed"] > 0 and tests["failures"] == tests["errors"] == 0
    assert tests["passed"] + tests["skipped"] == tests["tests"]
    device = data["device"].split(":")[0]
    env = steps["env"]
    assert all(env[f"numba_cpu_{n}_steps_per_s"] > 0 and env[f"torch_{device}_{n}_steps_per_s"] > 0
               for n in (256, 1024))
    assert steps["selfplay"]["move_steps"] >= 1 and steps["selfplay"]["moves_per_s"] > 0
    bad = steps["bad_input"]
    assert bad[f"saved_on_cpu_loaded_on_{device}"] == device and bad["saved_on_cpu_max_output_diff"] < 1e-4
    assert "cuda:7" in bad["missing_device_agent_error"] and "cuda:7" in bad["missing_device_trainer_error"]
    train = steps["train"]
    assert train["status"] == "completed" and train["config"]["seed"] == 3 and train["games"] >= 1
    assert {p.name for p in (out / "lazyzero-gpu").iterdir()} >= {"config.json", "meta.json", "model.pt"}
    for name, agent in (("eval_lazyzero_chance", "lazyzero-chance"), ("eval_lazyzero", "lazyzero")):
        ev = steps[name]
        assert ev["agent"] == agent and ev["games"] == ev["games_requested"] == 4 and not ev["interrupted"]
        assert ev["eval_seed"] == data["eval_seed"] == 1_000_000  # fresh to the training run's seed
        assert ev["moves_mean"] > 0 and ev["tiles"][-1]["reached"] >= 1
    summary = (out / "gpu_check.md").read_text()
    assert all(f"**{name}**" in summary for name in STEPS) and "FAILED" not in summary


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_without_dry_run__a_machine_without_cuda_is_refused_at_once(tmp_path, capsys):
    assert _module().main(["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "sees no CUDA device" in err and "--dry-run" in err
    assert not (tmp_path / "out").exists()


def test_step__a_failure_or_overrun_is_recorded_with_the_figures_so_far(tmp_path):
    gpu_check = _module()
    report = gpu_check.Report(tmp_path, {"dry_run": True, "device_name": "test", "torch": "t", "cuda": None,
                                         "numba": "n", "threads": 1, "seed": 0, "commit": None,
                                         "started": "now", "budget_s": 10.0, "command": "gpu_check"})

    def fails(rec: dict) -> None:
        rec["measured"] = 1.5
        raise RuntimeError("no kernel image is available")

    def overruns(rec: dict) -> None:
        rec["measured"] = 2
        time.sleep(30)

    report.step("fails", 60, fails)
    report.step("overruns", 1, overruns)
    report.step("skipped", 0.5, fails)
    report.step("fine", 60, lambda rec: rec.update(measured=3))
    saved = json.loads((tmp_path / "gpu_check.json").read_text())["steps"]
    assert [(k, v["ok"], v.get("measured")) for k, v in saved.items()] == [
        ("fails", False, 1.5), ("overruns", False, 2), ("skipped", False, None), ("fine", True, 3)]
    assert saved["fails"]["error"] == "RuntimeError: no kernel image is available"
    assert saved["overruns"]["error"].startswith("out of time") and saved["overruns"]["seconds"] < 5
    assert saved["skipped"]["error"].startswith("skipped")
    assert "FAILED: RuntimeError" in (tmp_path / "gpu_check.md").read_text()


@pytest.mark.parametrize(("args", "says"), [
    (["--budget-s", "nan"], "--budget-s=nan must be a finite number > 0"),
    (["--eval-games", "0"], "--eval-games=0 must be a whole number >= 1"),
    (["--threads", "0"], "--threads=0 must be a whole number >= 1"),
    (["--train-min-s", "-1"], "--train-min-s=-1.0 must be a finite number >= 0"),
    (["--eval-seed", "-1"], "--eval-seed=-1 must be a whole number >= 0"),
    (["--set", "rolouts=3"], "has no key(s) rolouts"),
    (["--set", "num_envs=0"], "num_envs"),
])
def test_bad_options__a_clear_error_before_any_work(tmp_path, capsys, args, says):
    assert _module().main(["--dry-run", "--out", str(tmp_path / "out"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu_check: ") and says in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
