"""Agents: one module per family, all built by name through the registry in :mod:`.base`."""

from __future__ import annotations

from ai2048.agents.base import Agent, BaseAgent, available, config_keys, load_agent, make_agent, register

__all__ = ["Agent", "BaseAgent", "available", "config_keys", "load_agent", "make_agent", "register"]

# Registrations: name, "module:factory", one-line description. Each family adds its own lines.
register("random", "ai2048.agents.simple:RandomAgent", "uniform over the legal moves (baseline)")
register(
    "greedy",
    "ai2048.agents.simple:GreedyAgent",
    "largest immediate reward, ties up/down/left/right (seed 004 demo)",
)
register(
    "expectimax",
    "ai2048.agents.search:ExpectimaxAgent",
    "expectimax, nneonneo heuristic with tuned weights, adaptive depth, TT (strong default)",
)
register(
    "expectimax-seed003",
    "ai2048.agents.search:seed003_expectimax",
    "seed 003 expectimax: depth 2, its five-term heuristic (p_two=1.0: 2s only, as its code)",
)
register(
    "reflex-seed003",
    "ai2048.agents.reflex:ReflexAgent",
    "seed 003 ReflexAgent: one ply, empty cells + max tile + equal neighbours",
)
register(
    "minimax",
    "ai2048.agents.search:MinimaxAgent",
    "seed 003 minimax with alpha-beta, depth 4 within 0.2 s per move, spawn as adversary",
)
register(
    "montecarlo",
    "ai2048.agents.search:MonteCarloAgent",
    "seed 002 part 3: random playouts per first move, best mean score",
)
register(
    "lazyzero",
    "ai2048.agents.lazyzero:make_lazyzero",
    "seed 001 LazyZero: PUCT root + policy rollouts with a trained ResNet (weights=RUN_DIR)",
)
register(
    "lazyzero-random",
    "ai2048.agents.lazyzero:make_random_rollout",
    "seed 001 baseline: LazyZero search with random-playout leaf values, no network",
)
register("dqn", "ai2048.agents.deeprl:DQNAgent", "DQN trained by `ai2048 train dqn` (weights=RUN_DIR; torch)")
register(
    "qnet",
    "ai2048.agents.deeprl:QNetAgent",
    "seed 003's Q-network trained by `ai2048 train qnet` (weights=RUN_DIR; torch)",
)
register(
    "policy",
    "ai2048.agents.deeprl:PolicyAgent",
    "seed 002's policy MLP trained by `ai2048 train policy` (weights=RUN_DIR; torch)",
)
register(
    "lazyzero-chance",
    "ai2048.agents.chance_mcts:make_chance_mcts",
    "stochastic MCTS with chance nodes (spawns from the engine) using a LazyZero network (weights=RUN_DIR)",
)
register(
    "ntuple",
    "ai2048.agents.ntuple:NTupleAgent",
    "n-tuple network from `ai2048 train ntuple` (weights=RUN_DIR; depth=1 greedy, >=2 expectimax)",
)
register(
    "endgame",
    "ai2048.agents.endgame:EndgameAgent",
    "the shipped n-tuple network's expectimax, endgame tables in their formations (`ai2048 tables build`)",
)
