"""The ``lazyzero-chance`` agent: the chance-node MCTS of :mod:`ai2048.search.chance_mcts` with a LazyZero
network.

A thin wrapper: the search (trees as arrays, numba selection and backup, one network call per
simulation for all games in the batch) lives in :mod:`ai2048.search.chance_mcts`; this class adds
the most-visited move with random ties from each game's own stream, ``threads`` and
``games_in_flight`` (see :class:`ai2048.agents.lazyzero.BatchedSearchAgent`).
"""

from __future__ import annotations

import numpy as np

from ai2048.agents.lazyzero import GAMES_IN_FLIGHT, BatchedSearchAgent, load_lazyzero_network
from ai2048.rules import P_TWO
from ai2048.search.chance_mcts import Evaluator, chance_mcts
from ai2048.search.streams import check_threads

__all__ = ["ChanceMCTSAgent", "chance_mcts", "make_chance_mcts"]


class ChanceMCTSAgent(BatchedSearchAgent):
    """Plays the most visited move of :func:`~ai2048.search.chance_mcts.chance_mcts` (random ties)."""

    name = "lazyzero-chance"

    def __init__(self, evaluate: Evaluator, *, simulations: int, puct: float, device: str, seed: int | None,
                 threads: int = 1, games_in_flight: int = 1, p_two: float = P_TWO) -> None:
        if isinstance(simulations, bool) or not isinstance(simulations, int) or simulations < 1:
            raise ValueError(f"simulations must be a positive int, got {simulations!r}")
        if not (puct >= 0 and np.isfinite(puct)):
            raise ValueError(f"puct must be finite and >= 0, got {puct}")
        self.evaluate, self.simulations, self.puct, self.p_two = (
            evaluate,
            simulations,
            float(puct),
            float(p_two),
        )
        self._setup(device, seed, threads, games_in_flight)

    def _visits(self, boards: np.ndarray, states: np.ndarray) -> np.ndarray:
        return chance_mcts(
            boards,
            self.evaluate,
            simulations=self.simulations,
            puct=self.puct,
            p_two=self.p_two,
            device=self.device,
        )


def make_chance_mcts(weights: str, simulations: int = 200, puct: float = 1.25, device: str = "cpu",
                     seed: int | None = None, threads: int = 1,
                     games_in_flight: int = GAMES_IN_FLIGHT) -> ChanceMCTSAgent:
    """Chance-node MCTS with the network of LazyZero run directory ``weights``."""
    if weights is None:
        raise ValueError(
            "lazyzero-chance needs weights=RUN_DIR (a directory written by `ai2048 train lazyzero`)"
        )
    from ai2048.nets.resnet import FusedPolicyValue

    check_threads(threads)
    model, _ = load_lazyzero_network(weights, device)
    return ChanceMCTSAgent(
        FusedPolicyValue(model),
        simulations=simulations,
        puct=puct,
        device=device,
        seed=seed,
        threads=threads,
        games_in_flight=games_in_flight,
    )
