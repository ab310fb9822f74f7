"""Speed of the language-model doors, each figure with its ratio to a baseline measured in the same run:

- ``text``: the text env (``ai2048/TextGame2048-v0``, answers as move names) against the Gymnasium env
  (``ai2048/Game2048-v0``), the same first-legal-move loop through ``gymnasium.make`` (target: the text
  env within 2x, i.e. a ratio >= 0.5);
- ``server``: ``ai2048 serve-env`` (a subprocess on a free 127.0.0.1 port) played by openenv-core's
  client: one client (the baseline), then ``--clients`` at once spread over ``--client-procs``
  processes (target: >= 2,000 steps/s with 16 clients), and the in-process text env for scale;
- ``harness``: ``score_strategy`` on ``--games`` games of a simple strategy (a fixed move cycle), its
  process start-up timed apart, against the same games played in this process without a sandbox
  (target: 100 games in <= 5 s plus start-up).

    python benchmarks/bench_llm.py [--what text|server|harness|all] [--seconds 5] [--clients 16]
        [--client-procs 2] [--games 100]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import time
from typing import Any

import gymnasium as gym
import numpy as np

from ai2048.envs import ENV_ID, TEXT_ENV_ID
from ai2048.rules import ACTION_NAMES

CYCLE = "import itertools\nMOVES = itertools.cycle(['up', 'left', 'down', 'right'])\n" \
        "def strategy(board):\n    return next(MOVES)\n"
"""The harness's simple strategy: a fixed cycle of moves (an illegal one ends the game)."""


def env_rate(env_id: str, seconds: float) -> float:
    """Steps/s of ``gymnasium.make(env_id)`` playing the first legal move (as a name for the text env)."""
    env = gym.make(env_id)
    text = env_id == TEXT_ENV_ID
    _, info = env.reset(seed=0)
    steps, t0 = 0, time.perf_counter()
    while True:
        for _ in range(1000):
            a = int(np.argmax(info["action_mask"]))
            _, _, terminated, truncated, info = env.step(ACTION_NAMES[a] if text else a)
            if terminated or truncated:
                _, info = env.reset()
        steps += 1000
        if time.perf_counter() - t0 > seconds:
            return steps / (time.perf_counter() - t0)


def bench_text(seconds: float) -> float:
    env_rate(ENV_ID, 0.5)  # compiled kernels loaded, caches warm
    env_rate(TEXT_ENV_ID, 0.5)
    base = env_rate(ENV_ID, seconds)
    text = env_rate(TEXT_ENV_ID, seconds)
    print(f"Gymnasium env (baseline): {base:,.0f} steps/s")
    print(f"text env: {text:,.0f} steps/s = {text / base:.2f}x the Gymnasium env "
          "(target >= 0.50x: within 2x)")
    return text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _clients(url: str, n: int, seconds: float, ready: Any) -> int:
    """Steps ``n`` clients of this process make in ``seconds``, counted from the moment every client of
    every process is connected and reset (``ready``: a barrier)."""
    from ai2048.llm.openenv_env import Game2048Action, Game2048Client

    envs = [Game2048Client(base_url=url) for _ in range(n)]
    results = [await env.reset(seed=i) for i, env in enumerate(envs)]
    await asyncio.get_running_loop().run_in_executor(None, ready.wait)
    end = time.perf_counter() + seconds
    counts = [0] * n

    async def play(i: int) -> None:
        result = results[i]
        while time.perf_counter() < end:
            if result.done:
                result = await envs[i].reset()
            result = await envs[i].step(Game2048Action(message=result.observation.legal_moves[0]))
            counts[i] += 1

    await asyncio.gather(*(play(i) for i in range(n)))
    for env in envs:
        await env.close()
    return sum(counts)


def _client_proc(url: str, n: int, seconds: float, ready: Any, out: Any) -> None:
    out.put(asyncio.run(_clients(url, n, seconds, ready)))


def server_rate(url: str, clients: int, procs: int, seconds: float) -> float:
    """Steps/s of ``clients`` clients spread over ``procs`` processes, all stepping at once."""
    ctx = mp.get_context("spawn")
    procs = max(1, min(procs, clients))
    shares = [clients // procs + (i < clients % procs) for i in range(procs)]
    ready, out = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=_client_proc, args=(url, k, seconds, ready, out)) for k in shares]
    for w in workers:
        w.start()
    steps = sum(out.get(timeout=600) for _ in workers)
    for w in workers:
        w.join()
    return steps / seconds


def bench_server(seconds: float, clients: int, procs: int, text_rate: float | None) -> None:
    import httpx

    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ai2048", "serve-env", "--port", str(port), "--max-sessions",
         str(clients + 8), "--max-connections", str(clients + 32)],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise RuntimeError("ai2048 serve-env did not start within two minutes")
        server_rate(url, 1, 1, 1.0)  # the server's first session
        one = server_rate(url, 1, 1, seconds)
        many = server_rate(url, clients, procs, seconds)
        print(f"OpenEnv server, 1 client (baseline): {one:,.0f} steps/s")
        print(f"OpenEnv server, {clients} clients in {procs} process(es): {many:,.0f} steps/s = "
              f"{many / one:.2f}x one client (target >= 2,000 steps/s)")
        if text_rate:
            print(f"  = {many / text_rate:.3f}x the in-process text env")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def bench_harness(games: int) -> None:
    from ai2048.evaluate import game_seeds
    from ai2048.game import Game, IllegalMoveError
    from ai2048.llm.sandbox import StrategyProcess
    from ai2048.llm.strategy import score_strategy

    t0 = time.perf_counter()
    with StrategyProcess(CYCLE) as proc:
        proc.ask(1)
    start = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = score_strategy(CYCLE, games=games, seed=0)
    total = time.perf_counter() - t0
    assert res.ok, res.verdict.message
    t0 = time.perf_counter()
    scores, i = [], 0
    for s in game_seeds(0, games):  # the baseline: the same cycle (one cycle for all games) played here
        g = Game(seed=s)
        while not g.is_over:
            a, i = (0, 3, 2, 1)[i % 4], i + 1  # up, left, down, right
            try:
                g.step(a)
            except IllegalMoveError:
                break
        scores.append(g.score)
    local = time.perf_counter() - t0
    assert scores == [r["score"] for r in res.result.records]
    moves = sum(r["moves"] for r in res.result.records)
    print(f"harness start-up (process, limits, seccomp, one answer): {start:.3f} s")
    print(f"harness: {games} games ({moves:,} moves) in {total:.2f} s with start-up, {total - start:.2f} s "
          f"without (target <= 5 s plus start-up); the same games in this process: {local:.3f} s "
          f"= {(total - start) / local:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--what", choices=["text", "server", "harness", "all"], default="all")
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--client-procs", type=int, default=2)
    ap.add_argument("--games", type=int, default=100)
    args = ap.parse_args()
    if args.seconds <= 0 or args.clients < 1 or args.client_procs < 1 or args.games < 1:
        ap.error("--seconds must be > 0 and --clients, --client-procs, --games >= 1")
    text = None
    if args.what in ("text", "all"):
        text = bench_text(args.seconds)
    if args.what in ("server", "all"):
        bench_server(args.seconds, args.clients, args.client_procs, text)
    if args.what in ("harness", "all"):
        bench_harness(args.games)


if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    main()
