"""LazyZero search and agent (seed 001: lowrollr/turbozero ``core/algorithms/lazy_mcts.py``).

LazyZero grows no tree. For every game in a batch, at the root only: priors ``P`` = softmax of
the policy head over legal moves; visit counts ``N(a)`` and value sums ``W(a)`` start at 0. Each
rollout picks ``a = argmax Q(a) + c P(a) sqrt(sum N + 1) / (1 + N(a))`` with ``Q = W/N`` and
``Q = 1e8`` for unvisited legal moves (so each is tried once first; random tie-break), plays
it (spawn included), then samples ``depth - 1`` moves from the policy head, and scores the end
position with the value head (0 if the game is over). ``N(a) += 1``, ``W(a) += value``; the root
is restored. The move played is sampled with probability ``N^(1/T)`` (training) or the argmax of
``N`` (play, ``T = 0``). The network's value predicts log(moves left in the game).

The random-rollout baseline (seed 001's ``random_rollout_lazy_mcts``) runs the same loop with
uniform priors, uniform rollout moves, and the leaf scored by log(1 + moves of a random playout).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ai2048.agents.base import BaseAgent
from ai2048.board_io import check_board, check_boards
from ai2048.engine.batch import batch_random_play
from ai2048.envs.torch_env import EngineBatch, TorchEnv2048, make_batch_env, resolve_device, to_boards
from ai2048.rules import ACTION_NAMES, P_TWO, Action

Evaluator = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
"""[N, 1, 4, 4] states -> (policy logits [N, 4], value [N]); a network or a baseline."""

UNVISITED_Q = 1e8
"""Seed 001's ``very_positive_value``: unvisited legal root moves are tried first."""


def masked_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Softmax over legal moves only ([N, 4]); rows with no legal move come out uniform."""
    z = logits.masked_fill(~legal, -math.inf)
    none = ~legal.any(1, keepdim=True)
    z = torch.where(none, torch.zeros_like(z), z)
    return torch.softmax(z, dim=1)


def lazy_search(
    env: TorchEnv2048 | EngineBatch,
    evaluate: Evaluator,
    *,
    rollouts: int,
    depth: int,
    puct: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run LazyZero from every game's current position: (visit counts [N, 4], root value [N]).

    ``env`` is left at the root positions it started from. Costs ``rollouts * depth + 1``
    evaluations of the whole batch.
    """
    if rollouts < 1 or depth < 1:
        raise ValueError(f"rollouts and depth must be >= 1, got rollouts={rollouts}, depth={depth}")
    n = env.num_envs
    dev = env.device
    root = env.save()
    legal = env.legal_actions()
    logits, root_value = evaluate(env.states)
    priors = masked_softmax(logits, legal)
    visits = torch.zeros(n, 4, device=dev)
    wsum = torch.zeros(n, 4, device=dev)
    rows = torch.arange(n, device=dev)
    for _ in range(rollouts):
        q = torch.where(visits > 0, wsum / visits.clamp(min=1), UNVISITED_Q)
        u = q + puct * priors * torch.sqrt(visits.sum(1, keepdim=True) + 1) / (1 + visits)
        u = u + 1e-6 * torch.rand(n, 4, generator=generator, device=dev)
        a = u.masked_fill(~legal, -math.inf).argmax(1)
        env.step(a)
        for _ in range(depth - 1):
            lg, _ = evaluate(env.states)
            p = masked_softmax(lg, env.legal_actions())
            env.step(torch.multinomial(p, 1, generator=generator).squeeze(1))
        _, v = evaluate(env.states)
        v = v.masked_fill(env.terminated, 0.0)
        visits[rows, a] += 1
        wsum[rows, a] += v
        env.load(root)
    visits = visits * legal
    return visits, root_value


def choose_actions(visits: torch.Tensor, legal: torch.Tensor, temperature: float, generator: torch.Generator) -> torch.Tensor:
    """Moves from visit counts [N, 4]: sample ``N^(1/T)`` if ``T > 0``, else argmax with random ties."""
    if temperature > 0:
        w = visits.clamp(min=0) ** (1.0 / temperature)
        w = torch.where(w.sum(1, keepdim=True) > 0, w, legal.float() + (~legal.any(1, keepdim=True)).float())
        return torch.multinomial(w, 1, generator=generator).squeeze(1)
    noise = torch.rand(visits.shape, generator=generator, device=visits.device)
    return (visits + 1e-3 * noise).masked_fill(~legal, -math.inf).argmax(1)


class RandomRolloutEvaluator:
    """Seed 001's random-rollout baseline: uniform policy, value log(1 + moves of a random playout)."""

    def __init__(self, seed: int | None = None, p_two: float = P_TWO) -> None:
        self._rng = np.random.SeedSequence(seed)
        self.p_two = p_two

    def __call__(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = states.shape[0]
        boards = to_boards(states)
        rng = self._rng.spawn(1)[0].generate_state(n, np.uint64)
        _, _, moves = batch_random_play(boards, rng, self.p_two)
        value = torch.log1p(torch.from_numpy(moves).float()).to(states.device)
        return torch.zeros(n, 4, device=states.device), value


def load_network(run_dir: str | Path, device: str | torch.device = "cpu") -> tuple[Any, dict[str, Any]]:
    """(trained PolicyValueResNet in eval mode, the run's config dict) from a LazyZero run directory."""
    from ai2048.checkpoint import read_json
    from ai2048.nets.resnet import PolicyValueResNet, ResNetConfig
    from ai2048.train.lazyzero import WEIGHTS, network_config

    run = Path(run_dir)
    config = read_json(run / "config.json", "LazyZero run config")
    cfg: ResNetConfig = network_config(config)
    path = run / WEIGHTS
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; is {run} a finished or checkpointed LazyZero run?")
    model = PolicyValueResNet(cfg)
    state = torch.load(path, map_location="cpu", weights_only=True)
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise ValueError(f"{path} does not fit the network in {run / 'config.json'} ({cfg}): {e}") from e
    model.to(resolve_device(device)).eval()
    return model, config


class LazyZeroAgent(BaseAgent):
    """Plays by LazyZero search with a trained network (or the random-rollout baseline)."""

    name = "lazyzero"

    def __init__(self, evaluate: Evaluator, *, rollouts: int, depth: int, puct: float, temperature: float,
                 device: str, seed: int | None) -> None:
        for key, v in (("rollouts", rollouts), ("depth", depth)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{key} must be a positive int, got {v!r}")
        if puct < 0 or temperature < 0:
            raise ValueError(f"puct and temperature must be >= 0, got puct={puct}, temperature={temperature}")
        self.evaluate = evaluate
        self.rollouts, self.depth, self.puct, self.temperature = rollouts, depth, float(puct), float(temperature)
        self.device = resolve_device(device)
        self._seed = seed
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.generator = torch.Generator(device=self.device)
        if seed is None:
            self.generator.seed()
        else:
            self.generator.manual_seed(int(seed))
        self._env_seed = int(torch.randint(0, 2**62, (1,), generator=self.generator, device=self.device))

    def _search(self, boards: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        env = make_batch_env("auto", len(boards), self.device, self._env_seed)
        self._env_seed += 1
        env.set_boards(boards)
        visits, _ = lazy_search(env, self.evaluate, rollouts=self.rollouts, depth=self.depth, puct=self.puct,
                                generator=self.generator)
        return visits, env.legal_actions()

    def act_batch(self, boards: np.ndarray) -> np.ndarray:
        """[N] uint64 boards -> [N] int64 moves, one batched search for all of them."""
        boards = check_boards(boards)
        visits, legal = self._search(boards)
        if not bool(legal.any(1).all()):
            raise ValueError("act_batch got a board with no legal move (the game is over)")
        return choose_actions(visits, legal, self.temperature, self.generator).cpu().numpy().astype(np.int64)

    def act(self, board: int) -> Action:
        return Action(int(self.act_batch(np.array([check_board(board)], dtype=np.uint64))[0]))

    def explain(self, board: int) -> dict[str, float]:
        """Share of the search's visits per legal move."""
        visits, legal = self._search(np.array([check_board(board)], dtype=np.uint64))
        total = float(visits.sum()) or 1.0
        return {ACTION_NAMES[a]: float(visits[0, a]) / total for a in range(4) if bool(legal[0, a])}


def make_lazyzero(weights: str, rollouts: int | None = None, depth: int | None = None, puct: float | None = None,
                  temperature: float = 0.0, device: str = "cpu", seed: int | None = None) -> LazyZeroAgent:
    """LazyZero with the network of run directory ``weights``; search settings default to the run's test settings."""
    if weights is None:
        raise ValueError("lazyzero needs weights=RUN_DIR (a directory written by `ai2048 train lazyzero`)")
    from ai2048.nets.resnet import FusedPolicyValue

    model, config = load_network(weights, device)
    fused = FusedPolicyValue(model)
    return LazyZeroAgent(
        fused,
        rollouts=config["test_rollouts"] if rollouts is None else rollouts,
        depth=config["rollout_depth"] if depth is None else depth,
        puct=config["puct"] if puct is None else puct,
        temperature=temperature,
        device=device,
        seed=seed,
    )


def make_random_rollout(rollouts: int = 100, depth: int = 2, puct: float = 1.0, temperature: float = 0.0,
                        device: str = "cpu", seed: int | None = None) -> LazyZeroAgent:
    """Seed 001's random-rollout LazyZero baseline: no network, leaves scored by random playouts."""
    return LazyZeroAgent(RandomRolloutEvaluator(seed), rollouts=rollouts, depth=depth, puct=puct,
                         temperature=temperature, device=device, seed=seed)
