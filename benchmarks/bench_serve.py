"""Load test of ``ai2048 serve``: the server's memory under many games, agents and large bodies, and the
latency of a plain request while heavy agent requests run, against the same request on the idle
server in the same run (the baseline).

It starts ``ai2048 serve`` as a subprocess on a free 127.0.0.1 port (default limits) and reads the
server's RSS from ``/proc``; Linux only:

    python benchmarks/bench_serve.py [--games 600] [--hints 300] [--bodies 200]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import httpx

MAX_BODY = 16 * 1024


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def latencies(c: httpx.Client, path: str, stop: threading.Event | None, n: int = 100) -> list[float]:
    out = []
    while (stop is None and len(out) < n) or (stop is not None and not stop.is_set()):
        t0 = time.perf_counter()
        r = c.get(path)
        out.append(time.perf_counter() - t0)
        assert r.status_code == 200, r.text
        time.sleep(0.01)
    return out


def summary(xs: list[float]) -> str:
    xs = sorted(xs)
    p99 = xs[min(len(xs) - 1, int(0.99 * len(xs)))]
    return (
        f"median {statistics.median(xs) * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
        f"max {xs[-1] * 1e3:.1f} ms ({len(xs)} requests)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=600)
    ap.add_argument("--hints", type=int, default=300)
    ap.add_argument("--bodies", type=int, default=200)
    args = ap.parse_args()
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from ai2048.cli import main; sys.exit(main())",
            "serve",
            "--port",
            str(port),
            "--agent",
            "random",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, timeout=60) as c:
            for _ in range(600):
                try:
                    if c.get("/api/agents").status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            gid = c.post("/api/games", json={"seed": 4}).json()["id"]
            c.post(f"/api/games/{gid}/hint", json={"agent": "expectimax", "config": {"depth": 2}})
            idle = latencies(c, f"/api/games/{gid}", None)
            rss0 = rss_mib(proc.pid)
            t0 = time.perf_counter()
            for _ in range(args.games):
                c.post("/api/games", json={})
            gid = c.post("/api/games", json={"seed": 4}).json()["id"]
            peak = rss0
            for i in range(args.hints):
                agent, config = (
                    ("expectimax", {"depth": 2, "p_two": round(0.3 + i / 1000, 3), "tt_bits": 20})
                    if i % 10 == 0
                    else ("montecarlo", {"playouts": 1 + i})
                )
                r = c.post(f"/api/games/{gid}/hint", json={"agent": agent, "config": config})
                assert r.status_code == 200, r.text
                peak = max(peak, rss_mib(proc.pid))
            pad = json.dumps({"action": "left", "pad": "x" * (MAX_BODY - 64)}).encode()
            codes = set()
            for _ in range(args.bodies):
                codes.add(
                    c.post(
                        f"/api/games/{gid}/move", content=pad, headers={"Content-Type": "application/json"}
                    ).status_code
                )
                codes.add(
                    c.post(
                        f"/api/games/{gid}/move",
                        content=pad * 2,
                        headers={"Content-Type": "application/json"},
                    ).status_code
                )
            load_s = time.perf_counter() - t0
            rss1 = rss_mib(proc.pid)
            t1 = time.perf_counter()
            r = c.post(f"/api/games/{gid}/hint", json={"agent": "montecarlo", "config": {"playouts": 300000}})
            refused = (r.status_code, time.perf_counter() - t1)

            stop = threading.Event()

            def heavy() -> None:
                with httpx.Client(base_url=url, timeout=120) as h:
                    for seed in range(4):
                        g = h.post("/api/games", json={"seed": 100 + seed}).json()["id"]
                        h.post(
                            f"/api/games/{g}/ai",
                            json={"agent": "montecarlo", "config": {"playouts": 2000}, "steps": 100},
                        )
                        h.post(f"/api/games/{g}/hint", json={"agent": "expectimax", "config": {"depth": 6}})
                stop.set()

            workers = [threading.Thread(target=heavy) for _ in range(2)]
            for w in workers:
                w.start()
            busy = latencies(c, f"/api/games/{gid}", stop)
            for w in workers:
                w.join()
        print(
            f"load: {args.games} games, {args.hints} hints ({args.hints // 10} expectimax tt_bits=20 "
            "configs, the rest "
            f"montecarlo configs), {args.bodies} 16 KiB bodies + {args.bodies} oversized ({sorted(codes)}) "
            f"in {load_s:.1f} s"
        )
        print(
            f"server RSS: {rss0:.0f} MiB before, peak {peak:.0f} MiB, {rss1:.0f} MiB after "
            f"(+{rss1 - rss0:.0f} MiB)"
        )
        print(f"playouts=300000 hint: HTTP {refused[0]} in {refused[1] * 1e3:.1f} ms")
        print(f"plain GET, idle server (baseline): {summary(idle)}")
        print(
            f"plain GET, 2 clients running montecarlo AI x100 and expectimax depth-6 hints: {summary(busy)}"
        )
        print(f"ratio busy/idle median: {statistics.median(busy) / statistics.median(idle):.1f}x, "
              f"max busy {max(busy) * 1e3:.0f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    main()
