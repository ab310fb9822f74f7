"""The ``lazyzero-chance`` agent: the chance-node MCTS of :mod:`ai2048.search.chance_mcts` with a LazyZero
network.

A thin wrapper: the search (trees as arrays, numba selection and backup, one network call per
simulation for all games in the batch) lives in :mod:`ai2048.search.chance_mcts`; this class adds
the most-visited move with random ties from each game's own stream, ``threads`` and
``games_in_flight`` (see :class:`ai2048.agents.lazyzero.BatchedSearchAgent`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ai2048 import checks
from ai2048.agents.lazyzero import GAMES_IN_FLIGHT, BatchedSearchAgent, load_lazyzero_network
from ai2048.agents.options import (
    DEVICE,
    IN_FLIGHT,
    PUCT,
    REQUIRED,
    SEARCH_THREADS,
    SEED,
    WEIGHTS_RUN,
    agent_options,
    option,
)
from ai2048.rules import P_TWO
from ai2048.search.streams import check_threads

if TYPE_CHECKING:
    from ai2048.search.chance_mcts import Evaluator

__all__ = ["ChanceMCTSAgent", "make_chance_mcts"]


class ChanceMCTSAgent(BatchedSearchAgent):
    """Plays the most visited move of :func:`~ai2048.search.chance_mcts.chance_mcts` (random ties)."""

    name = "lazyzero-chance"

    def __init__(self, evaluate: Evaluator, *, simulations: int, puct: float, device: str, seed: int | None,
                 threads: int = 1, games_in_flight: int = 1, p_two: float = P_TWO) -> None:
        self.evaluate = evaluate
        self.simulations = checks.whole("simulations", simulations, 1)
        self.puct = checks.number("puct", puct, 0)
        self.p_two = checks.probability("p_two", p_two, zero=False)
        self._setup(device, seed, threads, games_in_flight)

    def _visits(self, boards: np.ndarray, states: np.ndarray) -> np.ndarray:
        from ai2048.search.chance_mcts import chance_mcts

        return chance_mcts(
            boards,
            self.evaluate,
            simulations=self.simulations,
            puct=self.puct,
            p_two=self.p_two,
            device=self.device,
        )


@agent_options
def make_chance_mcts(
    weights: str = option(
        REQUIRED, WEIGHTS_RUN, help="the LazyZero run directory whose network guides the search",
        source="seed 001's network; chance nodes as in Stochastic MuZero (Antonoglou et al. 2022)"),
    simulations: int = option(200, "MCTS simulations per move", "whole", lo=1, web=(None, 800),
                              source="this toolkit"),
    puct: float = option(1.25, PUCT, help="PUCT exploration constant",
                         source="AlphaZero (Silver et al. 2018)"),
    device: str = option("cpu", DEVICE),
    seed: int | None = option(None, SEED),
    threads: int = option(1, SEARCH_THREADS),
    games_in_flight: int = option(GAMES_IN_FLIGHT, IN_FLIGHT),
) -> ChanceMCTSAgent:
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
