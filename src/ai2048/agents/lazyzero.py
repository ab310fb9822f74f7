"""LazyZero agents (seed 001: lowrollr/turbozero): thin wrappers around :mod:`ai2048.search.lazyzero`.

``lazyzero`` plays by LazyZero search with a trained network, ``lazyzero-random`` is seed 001's
random-rollout baseline (no network). Both search a whole batch of games at once
(``act_batch``), give every game its own random stream (``reset_slot``), so that
``ai2048.evaluate`` can play ``games_in_flight`` games through one network call per rollout step
and still get the games one-at-a-time play gives, and run torch with ``threads`` threads.

This module also reads LazyZero run directories (:func:`load_lazyzero_network`); the trainer in
:mod:`ai2048.train.lazyzero` writes them. It imports torch only when an agent is built or a network
read, so reading the agents' options (``ai2048 agents``, the web app's settings) does not.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ai2048 import checks
from ai2048.agents.base import BaseAgent
from ai2048.agents.options import (
    DEVICE,
    IN_FLIGHT,
    PUCT,
    REQUIRED,
    SEARCH_THREADS,
    SEED,
    TEMPERATURE,
    WEIGHTS_RUN,
    agent_options,
    option,
)
from ai2048.board_io import check_board, check_boards
from ai2048.rules import ACTION_NAMES, P_TWO, Action
from ai2048.search.streams import GameStreams, check_threads, torch_threads

if TYPE_CHECKING:
    import torch

    from ai2048.search.lazyzero import Evaluator

WEIGHTS = "model.pt"
"""The network weights file of a LazyZero run directory (a ``state_dict``)."""
NETWORK_KEYS = ("channels", "blocks", "head_channels", "head_blocks", "kernel_size", "policy_fc", "value_fc",
                "value_activation")
"""The keys of a run's ``config.json`` that size its network."""
GAMES_IN_FLIGHT = 32
"""Games an evaluation plays at once by default: one-at-a-time play's games, one network call for all."""


def network_config(config: dict[str, Any]) -> Any:
    """The :class:`~ai2048.nets.resnet.ResNetConfig` stored in a run's ``config.json`` dict."""
    from ai2048.nets.resnet import ResNetConfig

    missing = [k for k in NETWORK_KEYS if k not in config]
    if missing:
        raise ValueError(
            f"run config lacks network keys {missing}; it was not written by `ai2048 train lazyzero`"
        )
    return ResNetConfig(**{k: config[k] for k in NETWORK_KEYS})


def load_lazyzero_network(
    run_dir: str | Path, device: str | torch.device = "cpu"
) -> tuple[Any, dict[str, Any]]:
    """(trained PolicyValueResNet in eval mode on ``device``, the run's config dict) from a LazyZero run
    directory.

    The weights are read with ``weights_only=True`` (``load_torch_file``) onto the CPU first, so a
    checkpoint written on
    a GPU loads on a CPU-only machine; a network whose shape differs from the run's config is a
    ValueError naming both.
    """
    import torch

    from ai2048.checkpoint import check_regular_file, read_json
    from ai2048.nets.device import resolve_device
    from ai2048.nets.files import load_torch_file
    from ai2048.nets.resnet import PolicyValueResNet

    dev = resolve_device(device)  # a missing CUDA device is an error before anything is read
    run = Path(run_dir)
    config = read_json(run / "config.json", "LazyZero run config")
    cfg = network_config(config)
    path = run / WEIGHTS
    check_regular_file(path, "LazyZero network file",
                       missing=f"{path} does not exist; is {run} a finished or checkpointed LazyZero run?")
    state = load_torch_file(path, "LazyZero network file")
    if not isinstance(state, dict):
        raise ValueError(f"{path} holds a {type(state).__name__}, not a network state_dict")
    with torch.device("meta"):  # shapes only: a config.json of a few bytes can name a network of terabytes
        probe = PolicyValueResNet(cfg).state_dict()
    own = {k: tuple(v.shape) for k, v in probe.items()}
    got = {k: tuple(v.shape) for k, v in state.items() if isinstance(v, torch.Tensor)}
    if own != got:
        differ = sorted(k for k in set(own) | set(state) if own.get(k) != got.get(k))
        raise ValueError(
            f"{path} does not fit the network in {run / 'config.json'} ({cfg}): "
            + ", ".join(f"{k} {got.get(k)} != {own.get(k)}" for k in differ[:5])
        )
    model = PolicyValueResNet(cfg)
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise ValueError(f"{path} does not fit the network in {run / 'config.json'} ({cfg}): {e}") from e
    model.to(dev).eval()
    return model, config


class BatchedSearchAgent(BaseAgent):
    """Shared by the batched search agents: per-game streams, torch threads, ``games_in_flight``.

    ``act_batch(boards)`` searches all boards together with the agent's own rows of streams;
    ``act_batch(boards, slots)`` uses the streams of game slots started by ``reset_slot(slot,
    seed)``, each equal to what ``reset(seed)`` gives a single game. Subclasses provide
    ``_visits(boards, states) -> [B, 4]``.
    """

    temperature = 0.0

    def _setup(self, device: str, seed: int | None, threads: int, games_in_flight: int) -> None:
        from ai2048.nets.device import resolve_device

        self.device = resolve_device(device)
        self.threads = check_threads(threads)
        self.games_in_flight = checks.whole("games_in_flight", games_in_flight, 1)
        self.streams = GameStreams(seed)

    def _visits(self, boards: np.ndarray, states: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def reset(self, seed: int | None = None) -> None:
        self.streams.reset(seed)

    def reset_slot(self, slot: int, seed: int) -> None:
        """Start game slot ``slot`` with the random stream ``reset(seed)`` gives a single game."""
        self.streams.reset_slot(slot, seed)

    def act_batch(self, boards: np.ndarray, slots: np.ndarray | None = None) -> np.ndarray:
        """[N] uint64 boards -> [N] int64 moves, one batched search for all of them.

        ``slots`` (int [N]): the game slot of each board (see ``reset_slot``); None uses the
        agent's own streams, row ``i`` for board ``i``.
        """
        from ai2048.search.lazyzero import batch_legal_bits, choose_moves

        boards = check_boards(boards)
        legal = batch_legal_bits(boards)
        if (legal == 0).any():
            raise ValueError(f"act_batch got a board with no legal move (the game is over): "
                             f"{int(boards[np.argmax(legal == 0)]):#018x}")
        states = self.streams.rows(len(boards)) if slots is None else self.streams.gather(np.asarray(slots))
        with torch_threads(self.threads):
            visits = self._visits(boards, states)
        moves = choose_moves(visits.astype(np.float64), legal, float(self.temperature), states)
        if slots is not None:
            self.streams.scatter(np.asarray(slots), states)
        return moves

    def act(self, board: int) -> Action:
        return Action(int(self.act_batch(np.array([check_board(board)], dtype=np.uint64))[0]))

    def explain(self, board: int) -> dict[str, float]:
        """Share of the search's visits per legal move."""
        from ai2048.search.lazyzero import batch_legal_bits

        b = np.array([check_board(board)], dtype=np.uint64)
        with torch_threads(self.threads):
            visits = self._visits(b, self.streams.rows(1))[0]
        bits = int(batch_legal_bits(b)[0])
        total = float(visits.sum()) or 1.0
        return {ACTION_NAMES[a]: float(visits[a]) / total for a in range(4) if (bits >> a) & 1}


class LazyZeroAgent(BatchedSearchAgent):
    """Plays by LazyZero search with a trained network (or, with ``evaluate=None``, the random-rollout
    baseline)."""

    name = "lazyzero"

    def __init__(
        self,
        evaluate: Evaluator | None,
        *,
        rollouts: int,
        depth: int,
        puct: float,
        temperature: float,
        device: str,
        seed: int | None,
        threads: int = 1,
        games_in_flight: int = 1,
        p_two: float = P_TWO,
    ) -> None:
        self.evaluate = evaluate
        self.rollouts, self.depth = checks.whole("rollouts", rollouts, 1), checks.whole("depth", depth, 1)
        self.puct = checks.number("puct", puct, 0)
        self.temperature = checks.number("temperature", temperature, 0)
        self.p_two = checks.probability("p_two", p_two, zero=False)
        self._setup(device, seed, threads, games_in_flight)

    def _visits(self, boards: np.ndarray, states: np.ndarray) -> np.ndarray:
        from ai2048.search.lazyzero import lazy_search_boards

        return lazy_search_boards(boards, self.evaluate, states, rollouts=self.rollouts, depth=self.depth,
                                  puct=self.puct, p_two=self.p_two, device=self.device)


@agent_options
def make_lazyzero(
    weights: str = option(REQUIRED, WEIGHTS_RUN, help="the run directory written by `ai2048 train lazyzero`",
                          source="seed 001 (lowrollr/turbozero)"),
    rollouts: int | None = option(
        None, "policy rollouts per move", "whole", lo=1, none="the run's test setting", web=(None, 400),
        web_none=False, source="seed 001: num_policy_rollouts (500 in its 2048 config)"),
    depth: int | None = option(None, "rollout depth, counting the root's PUCT action", "whole", lo=1,
                               none="the run's setting", web=(None, 4), web_none=False,
                               source="seed 001: rollout_depth (3)"),
    puct: float | None = option(None, PUCT, none="the run's setting", web_none=False,
                                source="seed 001: puct_coeff (1.0)"),
    temperature: float = option(0.0, TEMPERATURE, source="seed 001: temperature (0 at test)"),
    device: str = option("cpu", DEVICE),
    seed: int | None = option(None, SEED),
    threads: int = option(1, SEARCH_THREADS),
    games_in_flight: int = option(GAMES_IN_FLIGHT, IN_FLIGHT),
) -> LazyZeroAgent:
    """LazyZero with the network of run directory ``weights``; search settings default to the run's test
    settings."""
    if weights is None:
        raise ValueError("lazyzero needs weights=RUN_DIR (a directory written by `ai2048 train lazyzero`)")
    from ai2048.nets.resnet import FusedPolicyValue

    check_threads(threads)
    model, config = load_lazyzero_network(weights, device)
    return LazyZeroAgent(
        FusedPolicyValue(model),
        rollouts=config["test_rollouts"] if rollouts is None else rollouts,
        depth=config["rollout_depth"] if depth is None else depth,
        puct=config["puct"] if puct is None else puct,
        temperature=temperature,
        device=device,
        seed=seed,
        threads=threads,
        games_in_flight=games_in_flight,
    )


@agent_options
def make_random_rollout(
    rollouts: int = option(100, "rollouts per move", "whole", lo=1, web=(None, 400),
                           source="seed 001's random_rollout_lazy_mcts baseline"),
    depth: int = option(2, "rollout depth, counting the root's action; leaves are scored by a random playout",
                        "whole", lo=1, web=(None, 4), source="seed 001's baseline"),
    puct: float = option(1.0, PUCT, help="PUCT exploration constant C (priors are uniform)",
                         source="seed 001: puct_coeff"),
    temperature: float = option(0.0, TEMPERATURE, source="seed 001: temperature"),
    device: str = option("cpu", DEVICE),
    seed: int | None = option(None, SEED),
    threads: int = option(1, SEARCH_THREADS),
    games_in_flight: int = option(GAMES_IN_FLIGHT, IN_FLIGHT),
) -> LazyZeroAgent:
    """Seed 001's random-rollout LazyZero baseline: no network, leaves scored by random playouts."""
    return LazyZeroAgent(
        None,
        rollouts=rollouts,
        depth=depth,
        puct=puct,
        temperature=temperature,
        device=device,
        seed=seed,
        threads=threads,
        games_in_flight=games_in_flight,
    )
