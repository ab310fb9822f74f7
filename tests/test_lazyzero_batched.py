"""Batched search (issue 19): the array/numba searches against the per-game ones, games in flight, bad
input."""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from _chance_mcts_reference import chance_mcts_reference  # noqa: E402
from ai2048 import Game, encode, legal_mask  # noqa: E402
from ai2048.agents import make_agent  # noqa: E402
from ai2048.agents.chance_mcts import ChanceMCTSAgent, make_chance_mcts  # noqa: E402
from ai2048.agents.lazyzero import LazyZeroAgent, load_lazyzero_network, make_lazyzero  # noqa: E402
from ai2048.envs.torch_env import EngineBatch  # noqa: E402
from ai2048.evaluate import evaluate, game_seeds  # noqa: E402
from ai2048.nets.resnet import FusedPolicyValue, PolicyValueResNet, ResNetConfig  # noqa: E402
from ai2048.search.chance_mcts import chance_mcts  # noqa: E402
from ai2048.search.lazyzero import lazy_search, lazy_search_boards  # noqa: E402
from ai2048.search.streams import check_threads  # noqa: E402
from ai2048.train.lazyzero import PRESETS, LazyZeroConfig  # noqa: E402

OVER = encode([1, 2, 1, 2, 2, 1, 2, 1] * 2)
_W = torch.arange(64, dtype=torch.float32).reshape(16, 4) / 37.0


def _net(states):
    """A deterministic row-wise stand-in for the network: no batch effects, no ties."""
    x = states.reshape(states.shape[0], 16)
    return torch.sin(x @ _W) * 3, torch.log1p((x == 0).sum(1).float() * 3 + x.sum(1) / 10)


def _count_net(states):
    """Value = number of tiles / 4: after a move and its spawn it does not depend on where the tile fell."""
    x = states.reshape(states.shape[0], 16)
    return torch.sin(x @ _W) * 3, (x > 0).sum(1).float() / 4


def _positions(n: int, seed: int, max_moves: int = 150) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for s in range(n):
        g = Game(seed=s)
        for _ in range(int(rng.integers(0, max_moves))):
            if g.is_over:
                break
            g.step(int(rng.choice(np.flatnonzero(legal_mask(g.board)))))
        out.append(g.board)
    return np.array(out, dtype=np.uint64)


@pytest.mark.parametrize(("simulations", "puct", "seed"), [(1, 1.25, 0), (40, 1.25, 1), (90, 0.3, 2)])
def test_chance_mcts__array_search_equals_the_per_game_reference(simulations, puct, seed):
    boards = np.concatenate([_positions(9, seed), [OVER, encode([1] * 15 + [0])]]).astype(np.uint64)
    got = chance_mcts(boards, _net, simulations=simulations, puct=puct)
    want = chance_mcts_reference(boards, _net, simulations=simulations, puct=puct)
    np.testing.assert_array_equal(got, want)
    legal = np.array([legal_mask(int(b)) for b in boards])
    assert (got[~legal] == 0).all()
    np.testing.assert_array_equal(got.sum(1), np.where(legal.any(1), simulations, 0))


def test_chance_mcts__a_game_searches_the_same_alone_or_in_a_batch():
    boards = _positions(6, 3)
    together = chance_mcts(boards, _net, simulations=30)
    for i, b in enumerate(boards):
        np.testing.assert_array_equal(chance_mcts(np.array([b]), _net, simulations=30)[0], together[i])


def test_lazy_search_boards__equals_the_torch_search_where_the_rollouts_are_deterministic():
    # depth 1 and a value that counts tiles: the spawn's place cannot matter, so both searches
    # must give the same visits whatever their random streams.
    boards = _positions(16, 0, max_moves=60)
    env = EngineBatch(len(boards), seed=0)
    env.set_boards(boards)
    want, _ = lazy_search(
        env, _count_net, rollouts=30, depth=1, puct=1.0, generator=torch.Generator().manual_seed(0)
    )
    got = lazy_search_boards(
        boards, _count_net, np.arange(16, dtype=np.uint64), rollouts=30, depth=1, puct=1.0
    )
    np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize("evaluator", [_net, None], ids=["network", "random-rollouts"])
def test_lazy_search_boards__per_game_streams_make_a_game_independent_of_its_batch(evaluator):
    boards = _positions(5, 4)
    seeds = np.array(game_seeds(7, 5), dtype=np.uint64)
    states = seeds.copy()
    together = lazy_search_boards(boards, evaluator, states, rollouts=12, depth=2, puct=1.0)
    legal = np.array([legal_mask(int(b)) for b in boards])
    assert legal.any(1).sum() >= 3
    assert ((states != seeds) == legal.any(1)).all()  # the streams of unfinished games advanced in place
    for i in range(5):
        alone = lazy_search_boards(
            boards[i : i + 1], evaluator, seeds[i : i + 1].copy(), rollouts=12, depth=2, puct=1.0
        )
        np.testing.assert_array_equal(alone[0], together[i])
    assert (together[~legal] == 0).all() and (together.sum(1) == np.where(legal.any(1), 12, 0)).all()


def test_lazy_search_boards__prefers_the_move_whose_leaves_score_higher():
    board = encode([1, 1, 0, 0] + [0] * 12)  # LEFT/RIGHT merge, UP is illegal

    def value(states):
        n = states.shape[0]
        return torch.zeros(n, 4), (states.reshape(n, 16) == 0).sum(1).float()

    visits = lazy_search_boards(
        np.array([board], np.uint64), value, np.zeros(1, np.uint64), rollouts=60, depth=1, puct=0.1
    )
    assert visits[0, 0] == 0 and visits[0].argmax() in (1, 3)


def _agents():
    return [
        LazyZeroAgent(_net, rollouts=6, depth=2, puct=1.0, temperature=0.0, device="cpu", seed=None,
                      games_in_flight=3),
        LazyZeroAgent(_net, rollouts=6, depth=2, puct=1.0, temperature=1.0, device="cpu", seed=None,
                      games_in_flight=3),
        ChanceMCTSAgent(_net, simulations=8, puct=1.25, device="cpu", seed=None, games_in_flight=3),
    ]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("index", range(3), ids=["lazyzero", "lazyzero-T1", "chance"])
def test_evaluate__games_in_flight_give_the_games_of_one_at_a_time_play(index, workers):
    """Batched in one process or in each of two worker processes: game for game the serial games."""
    batched = _agents()[index]
    single = _agents()[index]
    single.games_in_flight = 1
    a = evaluate(batched, games=5, seed=3, progress=False, max_moves=25, workers=workers)
    b = evaluate(single, games=5, seed=3, progress=False, max_moves=25)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in a.records]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in b.records]
    assert [r["seed"] for r in a.records] == game_seeds(3, 5)
    assert a.summary()["moves_per_s"] > 0


def test_evaluate__games_in_flight_refill_finished_slots_and_play_to_the_end():
    kw = {"rollouts": 3, "depth": 1, "seed": 0}
    batched = make_agent("lazyzero-random", games_in_flight=2, **kw)
    a = evaluate(batched, games=5, seed=1, progress=False)
    b = evaluate(make_agent("lazyzero-random", games_in_flight=1, **kw), games=5, seed=1, progress=False)
    assert [r["actions"] for r in a.records] == [r["actions"] for r in b.records]
    for r in a.records:  # every game replays to its recorded end, which is a finished game
        g = Game(seed=r["seed"])
        for ch in r["actions"]:
            g.step("urdl".index(ch))
        assert g.is_over and g.score == r["score"] and f"0x{g.board:016x}" == r["final_board"]


class _LogBatches(LazyZeroAgent):
    """Appends the size of every batched search to ``log`` (one line each, from any process)."""

    def __init__(self, log, **kw) -> None:
        super().__init__(None, rollouts=2, depth=1, puct=1.0, temperature=0.0, device="cpu", seed=None, **kw)
        self.log = str(log)

    def act_batch(self, boards, slots=None):
        with open(self.log, "a") as f:
            f.write(f"{len(boards)}\n")
        return super().act_batch(boards, slots)


def test_evaluate__each_worker_batches_its_games(tmp_path):
    """--workers 2 played each worker's games one at a time (batches of 1): the batching was lost."""
    log = tmp_path / "batches.txt"
    res = evaluate(_LogBatches(log, games_in_flight=3), games=6, seed=0, workers=2, progress=False,
                   max_moves=6)
    sizes = [int(x) for x in log.read_text().split()]
    assert max(sizes) == 3  # two workers, three games in flight each
    assert sum(sizes) == 1 + sum(r["moves"] for r in res.records)  # + the parent's warm-up move
    assert [r["index"] for r in res.records] == list(range(6)) and res.workers == 2


class _Boom(LazyZeroAgent):
    def act_batch(self, boards, slots=None):
        if slots is None:  # the parent's warm-up move
            return super().act_batch(boards, slots)
        raise RuntimeError("the agent broke")


def test_evaluate__an_agent_error_in_a_batching_worker_is_raised_in_the_caller():
    agent = _Boom(None, rollouts=1, depth=1, puct=1.0, temperature=0.0, device="cpu", seed=0,
                  games_in_flight=2)
    with pytest.raises(RuntimeError, match="the agent broke"):
        evaluate(agent, games=4, seed=0, workers=2, progress=False)


def test_act_batch__slots_must_be_started_and_boards_must_have_a_move():
    agent = _agents()[0]
    board = np.array([Game(seed=0).board], np.uint64)
    with pytest.raises(ValueError, match="slot 5 was never started"):
        agent.act_batch(board, np.array([5]))
    with pytest.raises(ValueError, match="no legal move"):
        agent.act_batch(np.array([OVER], np.uint64))
    agent.reset_slot(5, 11)
    single = _agents()[0]
    single.reset(11)
    assert agent.act_batch(board, np.array([5]))[0] == int(single.act(int(board[0])))


def test_threads__bounded_by_the_cores_and_64():
    cores = os.cpu_count() or 1
    assert check_threads(1) == 1 and check_threads(min(cores, 64)) == min(cores, 64)
    for bad in (0, -1, min(cores, 64) + 1, 65):
        with pytest.raises(ValueError, match=r"threads=.* must be a whole number in 1\.\.\d+ \(this machine"):
            check_threads(bad)
    with pytest.raises(TypeError, match="threads=1.5 must be a whole number"):
        check_threads(1.5)
    with pytest.raises(ValueError, match="threads"):
        make_agent("lazyzero-random", threads=cores + 1)


def test_threads__the_agent_runs_torch_with_its_setting_and_restores_it():
    seen = []

    def spy(states):
        seen.append(torch.get_num_threads())
        return _net(states)

    before = torch.get_num_threads()
    agent = LazyZeroAgent(
        spy, rollouts=2, depth=1, puct=1.0, temperature=0.0, device="cpu", seed=0, threads=1
    )
    agent.act(int(Game(seed=0).board))
    assert set(seen) == {1} and torch.get_num_threads() == before


# ---- run directories: devices and shapes ------------------------------------------------------


def _run_dir(tmp_path, cfg: ResNetConfig | None = None, **overrides):
    config = asdict(LazyZeroConfig(**{**PRESETS["tiny"], "device": "cpu", **overrides}))
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(config))
    net_cfg = cfg or ResNetConfig(**{k: config[k] for k in ResNetConfig.__dataclass_fields__})
    torch.manual_seed(0)
    model = PolicyValueResNet(net_cfg).eval()
    torch.save(model.state_dict(), run / "model.pt")
    return run, model


def test_load__device_cuda_without_cuda_is_a_clear_error(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    run, _ = _run_dir(tmp_path)
    for make in (make_lazyzero, make_chance_mcts):
        with pytest.raises(ValueError, match="asked for but torch sees no CUDA device"):
            make(str(run), device="cuda")


def test_load__a_network_of_another_shape_names_the_mismatch(tmp_path):
    run, _ = _run_dir(tmp_path, ResNetConfig(channels=4, blocks=1, head_channels=4, head_blocks=1))
    with pytest.raises(ValueError, match="does not fit the network in .*config.json"):
        load_lazyzero_network(run)


def test_load__a_checkpoint_written_on_a_gpu_loads_on_the_cpu(tmp_path, monkeypatch):
    # torch tags every storage with its device when saving; tagging them 'cuda:0' makes the file
    # a GPU-written one (loading it without map_location fails on a CPU-only machine).
    run, model = _run_dir(tmp_path)
    monkeypatch.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
    torch.save(model.state_dict(), run / "model.pt")
    monkeypatch.undo()
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(run / "model.pt", weights_only=True)
    loaded, _ = load_lazyzero_network(run, "cpu")
    x = torch.from_numpy(np.stack([np.arange(16) % 5] * 3).astype(np.float32)).view(3, 1, 4, 4)
    for got, want in zip(loaded(x), model(x), strict=True):
        torch.testing.assert_close(got, want)
    agent = make_lazyzero(str(run), rollouts=3, depth=1, seed=0)
    assert legal_mask(int(Game(seed=1).board))[int(agent.act(int(Game(seed=1).board)))]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_load__cpu_checkpoint_on_cuda_and_the_batched_search_agrees_across_devices(tmp_path):
    run, model = _run_dir(tmp_path)
    gpu, _ = load_lazyzero_network(run, "cuda")
    assert next(gpu.parameters()).device.type == "cuda"
    boards = _positions(6, 5)
    fused_cpu, fused_gpu = FusedPolicyValue(model), FusedPolicyValue(gpu)
    on_cpu = chance_mcts(boards, fused_cpu, simulations=20)
    on_gpu = chance_mcts(boards, fused_gpu, simulations=20, device="cuda")
    assert (on_cpu.sum(1) == on_gpu.sum(1)).all()
    agent = make_chance_mcts(str(run), simulations=10, device="cuda", seed=0, games_in_flight=3)
    res = evaluate(agent, games=3, seed=0, progress=False, max_moves=10)
    assert res.games == 3


def test_factories__play_games_in_flight_by_default():
    assert make_agent("lazyzero-random").games_in_flight == 32


class _StopAfter(LazyZeroAgent):
    """A LazyZero agent whose ``calls``-th batched search is a Ctrl-C."""

    def __init__(self, calls: int, **kw) -> None:
        super().__init__(None, rollouts=2, depth=1, puct=1.0, temperature=0.0, device="cpu", seed=None, **kw)
        self.left = calls

    def act_batch(self, boards, slots=None):
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt
        return super().act_batch(boards, slots)


def test_evaluate__ctrl_c_with_games_in_flight_keeps_the_finished_games():
    res = evaluate(_StopAfter(7, games_in_flight=2), games=4, seed=0, progress=False, max_moves=5)
    assert res.interrupted and res.games == 2
    assert [r["index"] for r in res.records] == [0, 1] and all(r["moves"] == 5 for r in res.records)


class _Illegal(LazyZeroAgent):
    def act_batch(self, boards, slots=None):
        return np.array([int(np.argmin(legal_mask(int(b)))) for b in boards], dtype=np.int64)


def test_evaluate__an_illegal_move_in_flight_stops_with_an_error_naming_the_agent_and_board():
    from ai2048.evaluate import EvalError

    agent = _Illegal(
        None, rollouts=1, depth=1, puct=1.0, temperature=0.0, device="cpu", seed=0, games_in_flight=3
    )
    for workers in (1, 2):
        with pytest.raises(EvalError, match=r"agent 'lazyzero' chose .* on board 0x[0-9a-f]{16}"):
            evaluate(agent, games=3, seed=0, progress=False, workers=workers)


def test_cli_eval__games_in_flight_from_set_values(tmp_path, capsys):
    from ai2048.cli import main

    run, _ = _run_dir(tmp_path)
    out = tmp_path / "res.json"
    assert (
        main(
            [
                "eval",
                "lazyzero-chance",
                "--set",
                f"weights={run}",
                "--set",
                "simulations=4",
                "--set",
                "games_in_flight=3",
                "--set",
                "threads=1",
                "--games",
                "4",
                "--max-moves",
                "6",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    saved = json.loads(out.read_text())
    assert saved["config"]["games_in_flight"] == 3
    assert [g["moves"] for g in saved["games"]] == [6] * 4
    assert "games 4/4" in capsys.readouterr().out
