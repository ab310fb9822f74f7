"""Chained midpoint restarts in n-tuple training (``chain_restarts``/``chain_at``; issue 15).

The rule, as ziap/2048-tdl's ``src/network/learning.h`` (L58-91) plays it: a training episode of
``n`` moves keeps its after-states ``path[0..n-1]`` (``path[i]`` is the board after move ``i + 1``,
before that move's spawn). Once it is learned, if ``n > L`` a new episode starts from
``path[floor(at * n)]`` plus one random spawn; it is played and learned like any episode and is
restarted from its own ``floor(at * n')`` in turn, until an episode has ``n <= L`` moves. Only the
fresh game counts as a game. (TDL2048+'s ``restart`` mode uses ``path[floor(at * (n - 1))]`` and
restarts while ``n >= L``; at L = 10, at = 0.5 the two differ by one move at odd n.)
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ai2048.checkpoint import read_jsonl
from ai2048.cli import main
from ai2048.engine.spawn import new_board, spawn
from ai2048.ntuple.codegen import DEFAULT_RULES
from ai2048.ntuple.hogwild import train_chunk
from ai2048.ntuple.network import Network, load_file
from ai2048.train.ntuple import MAX_MOVES, NTupleConfig, run

TINY = NTupleConfig(patterns="0123,4567", games=60, chunk=20, checkpoint_every=20, seed=3)
CHAIN = replace(TINY, chain_restarts=10)


def chain_starts(lengths: list[int], min_len: int, at: float) -> list[int]:
    """Slow reference of the schedule: ``lengths[i]`` is the number of moves of episode ``i`` of a
    chain (0: the fresh game); returns, for every episode that is restarted, the index of the
    after-state in it where the next episode begins: ``floor(at * n)`` (float64, as the kernel
    computes it) while ``n > min_len``. An episode listed after one that is not restarted is an error."""
    starts = []
    for i, n in enumerate(lengths):
        if n <= min_len:
            if i != len(lengths) - 1:
                raise ValueError(f"episode {i} has {n} <= {min_len} moves: the chain ends there")
            break
        starts.append(math.floor(at * n))
    return starts


def replay_starts(n: int, min_len: int, at: float) -> list[int]:
    """The start indices in the fresh game's moves if every restarted episode replayed the rest of
    the game (a restart from ``path[k]`` then has the ``n - k - 1`` moves after move ``k + 1``)."""
    out: list[int] = []
    base = 0
    while n > min_len:
        k = math.floor(at * n)
        out.append(base + k)
        base += k + 1
        n -= k + 1
    return out


def test_reference__known_answers() -> None:
    assert chain_starts([40, 19, 9], 10, 0.5) == [20, 9]
    assert chain_starts([11, 10], 10, 0.5) == [5]
    assert chain_starts([10], 10, 0.5) == [] and chain_starts([0], 10, 0.5) == []
    assert chain_starts([40, 30, 12, 3], 10, 0.25) == [10, 7, 3]
    with pytest.raises(ValueError, match="chain ends"):
        chain_starts([40, 5, 30], 10, 0.5)
    assert replay_starts(40, 10, 0.5) == [20, 30]  # 20 + 1 + floor(19 / 2); then 9 moves are left
    assert replay_starts(100, 10, 0.5) == [50, 75, 88, 94]
    assert replay_starts(10, 10, 0.5) == []


def _setup() -> tuple:
    """A zero 0123,4567 network, its kernels and a worker's buffers."""
    net = Network("0123,4567")
    state = np.array([np.random.SeedSequence([5, 0]).generate_state(1, np.uint64)[0]], dtype=np.uint64)
    buf_b, buf_r = np.zeros(MAX_MOVES, np.uint64), np.zeros(MAX_MOVES, np.int64)
    pool, pool_n = np.zeros(4, np.uint64), np.zeros(1, np.int64)
    ready, f32 = np.ones(1, np.int64), np.zeros(1, np.float32)
    return net, state, buf_b, buf_r, pool, pool_n, ready, f32


def _worker(online: bool, games: int, chain: int, at: float = 0.5) -> tuple:
    """``games`` games of one worker from a zero network: (weights, RNG state, score, tile, moves,
    chained moves)."""
    net, state, buf_b, buf_r, pool, pool_n, ready, f32 = _setup()
    outs = [np.zeros(games, np.int64) for _ in range(4)]
    net.k.train_worker(
        games, net.w, f32, f32, ready, net.runs, net.nruns, net.tbase, net.stage_arr, 0, online, False, False,
        0.1 / net.features, 0.0, 0.9, state, buf_b, buf_r, pool, pool_n, 15, 0.0,
        outs[0], outs[1], outs[2], np.zeros(games, np.bool_), chain, at, outs[3], 0, DEFAULT_RULES,
    )
    return net.w, state, *outs


@pytest.mark.parametrize("online", [False, True])
def test_kernel__restarts_from_the_midpoint_after_state_plus_one_spawn(online: bool) -> None:
    """One game played by the kernel equals a Python driver of the chain: the fresh game, then each
    episode from ``buf_b[floor(at * n)]`` (chain_starts) plus one spawn from the worker's RNG."""
    w, st, score, tile, moves, chained = _worker(online, 1, 10)
    net, state, buf_b, buf_r, pool, pool_n, ready, f32 = _setup()
    args = (net.w, f32, f32, ready, net.runs, net.nruns, net.tbase, net.stage_arr, 0, online, False, False,
            0.1 / net.features, 0.0, 0.9, state, buf_b, buf_r, pool, pool_n, 15, True, 0, DEFAULT_RULES)
    b = np.uint64(new_board(state, 0.9))  # numba hands a uint64 back as a Python int
    sc, mx, n = net.k.play_game_train(b, *args)
    assert (sc, mx, n) == (score[0], tile[0], moves[0])
    lengths = [int(n)]
    while len(starts := chain_starts(lengths, 10, 0.5)) == len(lengths):
        after = buf_b[starts[-1]]
        b = np.uint64(spawn(after, state, 0.9))
        cells = [((int(after) >> 4 * c) & 15, (int(b) >> 4 * c) & 15) for c in range(16)]
        assert [(x, y) for x, y in cells if x != y] in ([(0, 1)], [(0, 2)])  # one new 2 or 4
        _, _, n = net.k.play_game_train(b, *args)
        lengths.append(int(n))
    assert len(lengths) >= 3 and chained[0] == sum(lengths[1:]) > 0
    assert np.array_equal(w, net.w) and np.array_equal(st, state)


def test_kernel__chain_trains_more_moves_reproducibly_and_off_is_unchanged() -> None:
    off = _worker(False, 30, 0)
    on = _worker(False, 30, 10)
    again = _worker(False, 30, 10)
    assert all(np.array_equal(a, b) for a, b in zip(on, again, strict=True))
    assert off[5].sum() == 0 and on[5].sum() > on[4].sum() // 2
    assert on[2][0] == off[2][0] and on[4][0] == off[4][0]  # the first fresh game is the same game
    assert not np.array_equal(on[0], off[0])
    net = Network("0123,4567")  # train_chunk without the chain arguments: the trainer as before them
    state = np.array([np.random.SeedSequence([5, 0]).generate_state(1, np.uint64)[0]], dtype=np.uint64)
    f32, outs = np.zeros(1, np.float32), [np.zeros(30, np.int64) for _ in range(3)]
    train_chunk(
        net.k, np.array([30]), net.w, f32, f32, np.ones(1, np.int64), net.runs, net.nruns, net.tbase,
        net.stage_arr, 0, False, False, False, 0.1 / net.features, 0.0, 0.9, state,
        np.zeros((1, MAX_MOVES), np.uint64), np.zeros((1, MAX_MOVES), np.int64), np.zeros((1, 4), np.uint64),
        np.zeros(1, np.int64), 15, 0.0, outs[0], outs[1], outs[2], np.zeros(30, np.bool_),
    )
    assert np.array_equal(net.w, off[0]) and np.array_equal(outs[2], off[4])


def test_run__counts_fresh_games_logs_chain_moves_and_resumes_exactly(tmp_path: Path) -> None:
    a = run(CHAIN, tmp_path / "a")
    b = run(CHAIN, tmp_path / "b")
    plain = run(TINY, tmp_path / "plain")
    wa, wb, wp = (load_file(p / "weights.npz")[0].w for p in (a, b, plain))
    assert np.array_equal(wa, wb) and not np.array_equal(wa, wp)
    recs = read_jsonl(a / "metrics.jsonl")
    assert [r["games"] for r in recs] == [20, 40, 60]
    assert all(r["chain_moves"] > 0 for r in recs)
    assert all("chain_moves" not in r for r in read_jsonl(plain / "metrics.jsonl"))
    assert json.loads((a / "meta.json").read_text())["progress"]["games"] == 60
    part = run(replace(CHAIN, games=40), tmp_path / "part")
    run(CHAIN, part, resume=True)
    assert np.array_equal(load_file(part / "weights.npz")[0].w, wa)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"chain_at": 0.0}, r"chain_at=0.0 must be a finite number in \(0, 1\)"),
        ({"chain_at": 1.0}, r"chain_at=1.0 must be a finite number in \(0, 1\)"),
        ({"chain_at": float("nan")}, "chain_at=nan must be a finite number"),
        ({"chain_restarts": -1}, "chain_restarts=-1 must be a whole number >= 0"),
        ({"chain_restarts": 1.5}, "chain_restarts=1.5 must be a whole number"),
        ({"chain_restarts": 10, "restart_prob": 0.1}, "two restart schemes"),
        ({"chain_restarts": 10, "state": "before"}, "set state=after"),
    ],
)
def test_config__bad_chain_values_raise(bad: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        replace(TINY, **bad)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--chain-at", "1"], "chain_at=1.0 must be a finite number in (0, 1)"),
        (["--chain-at", "nan"], "chain_at=nan must be a finite number"),
        (["--chain-restarts", "-1"], "chain_restarts=-1 must be a whole number >= 0"),
        (["--set", "chain_restarts=1.5"], "chain_restarts=1.5 must be a whole number"),
        (["--chain-restarts", "10", "--restart-prob", "0.1"], "two restart schemes"),
    ],
)
def test_cli__bad_chain_values_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    out = tmp_path / "bad"
    args = ["train", "ntuple", "--patterns", "0123,4567", "--games", "20", "--out", str(out), *flags]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (out / "weights.npz").exists()


def test_cli__chain_run_finishes_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    common = ["--chunk", "25", "--checkpoint-every", "25"]
    args = ["train", "ntuple", "--patterns", "0123,4567", "--games", "50", "--chain-restarts", "10", *common]
    assert main([*args, "--out", str(out)]) == 0
    assert main(["train", "ntuple", "--out", str(out), "--resume", "--games", "75"]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["progress"]["games"] == 75 and meta["status"] == "completed"
    assert json.loads((out / "config.json").read_text())["chain_restarts"] == 10
    recs = read_jsonl(out / "metrics.jsonl")
    assert [r["games"] for r in recs] == [25, 50, 75] and all(r["chain_moves"] > 0 for r in recs)


def test_resume__run_directory_without_chain_fields_loads(tmp_path: Path) -> None:
    out = run(replace(TINY, games=20), tmp_path / "old")
    cfg = json.loads((out / "config.json").read_text())
    del cfg["chain_restarts"], cfg["chain_at"]
    (out / "config.json").write_text(json.dumps(cfg))
    run(replace(TINY, games=40), out, resume=True)
    assert json.loads((out / "meta.json").read_text())["progress"]["games"] == 40
