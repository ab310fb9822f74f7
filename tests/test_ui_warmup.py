"""``ai2048 serve`` warms up before it announces its address (issue 35): every kernel a request can
reach is compiled or loaded first, the ``/api/agents`` answer is computed once, the page shows a
loading state until its first board, a port in use is named before any warm-up, and Ctrl-C during
the warm-up exits cleanly. The browser test measures the first board after "ready"
(``tests/test_ui_browser.py``).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="fastapi comes with the 'ui' extra: pip install 'ai2048[ui]'")

from fastapi.testclient import TestClient  # noqa: E402

from _ui_server_helpers import cli_env, read_until, serve_cli  # noqa: E402
from ai2048.ui.limits import MODEL_SETTINGS, WARM_UP, WEB_AGENTS, check_setting, check_settings, scan_models  # noqa: E402
from ai2048.ui.server import create_app  # noqa: E402


def test_warm_up_table__covers_every_web_agent_and_model_agent_with_legal_settings() -> None:
    models = scan_models(None)
    assert set(WEB_AGENTS) | set(MODEL_SETTINGS) <= set(WARM_UP)
    for name, configs in WARM_UP.items():
        assert configs, name
        for config in configs:
            if name in WEB_AGENTS:
                assert check_settings(name, config, models)[1] == config
            else:  # a model agent: the settings its models accept
                rules = MODEL_SETTINGS[name]
                assert {k: check_setting(k, rules[k], v) for k, v in config.items()} == config


def test_agents_listing__computed_once_and_served_as_computed() -> None:
    app = create_app(default_agent="random")
    first = app.state.web.listing()
    assert app.state.web.listing() is first
    c = TestClient(app, base_url="http://127.0.0.1")
    body = c.get("/api/agents").json()
    assert body["default"] == "random"
    assert [a["name"] for a in body["agents"]] == [a["name"] for a in first]


def test_page__shows_a_loading_state_until_its_first_board() -> None:
    html = TestClient(create_app(default_agent="random"), base_url="http://127.0.0.1").get("/").text
    assert '<body class="loading">' in html and "Loading&hellip;" in html
    for button in ("new", "undo", "hint", "ai", "autoplay"):
        assert f'<button id="{button}" disabled>' in html


def test_warm_up__names_a_broken_model_and_goes_on(tmp_path: Path, monkeypatch) -> None:
    """A model that cannot be loaded is one line of the warm-up (its requests get the error as a 400);
    the other models are warmed, and only the default agent stays built."""
    from _ui_server_helpers import dqn_model_run
    from ai2048.ui import limits
    from ai2048.ui.warmup import warm_up

    pytest.importorskip("torch")
    monkeypatch.setattr(limits, "_shipped", dict)  # the run directories below only
    dqn_model_run(tmp_path / "good")
    dqn_model_run(tmp_path / "broken")
    (tmp_path / "broken" / "model.pt").write_bytes(b"not a torch file")
    app = create_app(default_agent="greedy", models_dir=tmp_path)
    said: list[str] = []
    assert warm_up(app, said.append) > 0
    assert len(said) == 1 and said[0].startswith("model model:broken cannot be loaded")
    assert len(app.state.web.cache) == 1  # the default agent
    c = TestClient(app, base_url="http://127.0.0.1")
    game = c.post("/api/games", json={"seed": 1}).json()["id"]
    assert c.post(f"/api/games/{game}/hint", json={"agent": "model:good"}).status_code == 200
    r = c.post(f"/api/games/{game}/hint", json={"agent": "model:broken"})
    assert r.status_code == 400 and "cannot build agent 'model:broken'" in r.json()["error"]


def test_serve__a_port_in_use_is_named_before_the_warm_up(capsys) -> None:
    from ai2048.cli import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--agent", "random"]) == 2
    out = capsys.readouterr()
    assert f"cannot listen on 127.0.0.1:{port}" in out.err and "pick another --port" in out.err
    assert "warming up" not in out.out and "Traceback" not in out.err


def test_serve__refuses_connections_until_ready_and_ctrl_c_during_the_warm_up_exits_cleanly() -> None:
    with serve_cli() as (proc, port):
        read_until(proc, "warming up", 120)
        with pytest.raises(ConnectionRefusedError):  # bound (the port is taken) but not listening yet
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert "web app on" not in out  # stopped before it was ready
    assert time.monotonic() - t0 < 30


def test_serve__a_ctrl_c_swallowed_inside_the_warm_up_still_stops_it(monkeypatch, capsys) -> None:
    """Regression: a Ctrl-C that landed in a ctypes callback of numba's cache loading was printed and
    swallowed there, and the server went on to serve. The warm-up remembers it and stops at its next step."""
    import uvicorn

    from ai2048.cli import main
    from ai2048.ui import warmup

    real, calls = warmup._decide, []

    def decide_swallowing_an_interrupt(agent, name, config) -> None:
        calls.append(name)
        if len(calls) == 1:
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)  # the handler runs here
            except KeyboardInterrupt:
                pass  # as "Exception ignored on calling ctypes callback function" does
        real(agent, name, config)

    monkeypatch.setattr(warmup, "_decide", decide_swallowing_an_interrupt)
    monkeypatch.setattr(uvicorn.Server, "run", lambda *a, **k: pytest.fail("served after a Ctrl-C"))
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert main(["serve", "--port", str(port), "--agent", "random"]) == 130
    out = capsys.readouterr()
    assert "interrupted" in out.err and "web app on" not in out.out
    assert calls == ["random"]  # the default agent's decision; the next step stopped
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


NO_COMPILE_SCRIPT = textwrap.dedent('''
    import json, sys
    from fastapi.testclient import TestClient
    from numba.core import dispatcher, sigutils
    from ai2048.ui.limits import SEED_MAX, WARM_UP, WEB_AGENTS, default_agent
    from ai2048.ui.server import create_app
    from ai2048.ui.warmup import warm_up

    app = create_app(default_agent=default_agent(), models_dir=sys.argv[1])
    warm_up(app)
    compiled = []
    original = dispatcher.Dispatcher.compile

    def compile(self, sig):
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) not in self.overloads:
            compiled.append(self.py_func.__qualname__)
        return original(self, sig)

    dispatcher.Dispatcher.compile = compile

    def probes(s):  # s: an option as the web takes it (checks.Option.web_option)
        extra = list(s.choices) + ([None] if s.none is not None else [])
        if s.kind == "flag":
            return [False, True]
        if s.kind == "choice":
            return extra
        if s.kind == "seed":
            return [None, 0, SEED_MAX]
        if s.kind == "whole":
            return sorted({int(s.lo), int(min(s.lo + 1, s.hi)), int(s.hi)}) + extra
        return [s.lo, s.hi] + extra

    c = TestClient(app, base_url="http://127.0.0.1")
    game = c.post("/api/games", json={"seed": 3}).json()["id"]
    for move in ("left", "up", "right", "down"):
        c.post(f"/api/games/{game}/move", json={"action": move})
    c.post(f"/api/games/{game}/undo", json={})
    c.get(f"/api/games/{game}/record")
    c.post(f"/api/games/{game}/ai", json={"steps": 2})
    listed = {a["name"]: a for a in c.get("/api/agents").json()["agents"]}
    rules = {name: WEB_AGENTS.get(name) for name in listed}
    for name, model in app.state.web.models.items():
        rules["model:" + name] = model.settings
    asked = 0
    for name, settings in rules.items():
        kind = app.state.web.models[name[6:]].agent if name.startswith("model:") else name
        for base in WARM_UP.get(kind, ({},)):
            for key, setting in settings.items():
                for value in probes(setting):
                    config = {**base, key: value}
                    before = len(compiled)
                    r = c.post(f"/api/games/{game}/hint", json={"agent": name, "config": config})
                    asked += r.status_code == 200
                    if len(compiled) > before:
                        print(json.dumps({"agent": name, "config": config, "kernels": compiled[before:]}))
    print(json.dumps({"asked": asked, "kernels": len(compiled)}))
''')


def _model_runs(root: Path) -> Path:
    """A --models folder with a run of every model agent: n-tuple networks of both kinds (a layout
    of their own), a DQN, and a LazyZero network offered as lazyzero and as lazyzero-chance."""
    import shutil

    import torch

    from _ui_server_helpers import dqn_model_run
    from ai2048.nets.resnet import PolicyValueResNet, ResNetConfig
    from ai2048.ntuple.network import Network
    from ai2048.train.lazyzero import PRESETS, LazyZeroConfig
    from ai2048.train.run import write_meta

    for kind in ("after", "before"):
        run = root / f"nt-{kind}"
        run.mkdir(parents=True)
        Network("01,23", kind=kind).save(run / "weights.npz")
        (run / "meta.json").write_text(json.dumps({"agent": "ntuple"}))
    dqn_model_run(root / "dqn")
    lz = root / "lz"
    lz.mkdir()
    config = LazyZeroConfig(**{**PRESETS["tiny"], "device": "cpu"})
    (lz / "config.json").write_text(json.dumps(config.__dict__))
    torch.manual_seed(0)
    fields = ResNetConfig.__dataclass_fields__
    net = PolicyValueResNet(ResNetConfig(**{k: getattr(config, k) for k in fields}))
    torch.save(net.state_dict(), lz / "model.pt")
    shutil.copytree(lz, root / "lz-chance")
    progress = {"step": 0, "games": 0, "time": 0.0}
    write_meta(lz, "lazyzero", "lazyzero", "completed", progress)
    write_meta(root / "lz-chance", "lazyzero-chance", "lazyzero", "completed", progress)
    return root


@pytest.mark.slow
def test_warm_up__no_request_compiles_a_kernel_afterwards(tmp_path: Path) -> None:
    """After the warm-up, a hint with every agent and model at each warm-up entry, with each setting
    at the ends of its range and each of its choices, and the game requests, compile nothing: every
    kernel they reach was compiled (or loaded from numba's cache) before the server listened.
    Before, each agent's first request compiled its kernels (5-37 s on a fresh install)."""
    pytest.importorskip("torch")
    models = _model_runs(tmp_path / "models")
    proc = subprocess.run([sys.executable, "-c", NO_COMPILE_SCRIPT, str(models)], capture_output=True,
                          text=True, env=cli_env(), timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    summary = lines[-1]
    assert summary["asked"] > 200  # the requests were answered (not refused before any work)
    assert lines[:-1] == [] and summary["kernels"] == 0, lines
