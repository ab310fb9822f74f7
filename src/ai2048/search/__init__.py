"""Every search of ai2048, each a module of numba kernels (or torch array programs) on uint64 boards.

- :mod:`.expectimax`: expectimax over move-then-spawn with a pluggable leaf evaluator, a
  transposition table and a probability cutoff (nneonneo/2048-ai, seed 003).
- :mod:`.minimax`: minimax with alpha-beta, the spawn as an adversary (seed 003).
- :mod:`.montecarlo`: random playouts after each first move (seed 002 part 3).
- :mod:`.lazyzero`: LazyZero's root-only PUCT with policy rollouts (seed 001; torch).
- :mod:`.chance_mcts`: MCTS with chance nodes, its trees as preallocated arrays (torch).
- :mod:`.heuristics`: leaf evaluators (nneonneo's, seed 003's); :mod:`.specialise` compiles a
  search once per evaluator; :mod:`.games` plays whole games inside numba; :mod:`.streams` gives
  each game of a batch its own random stream.

Submodules are imported when named (``from ai2048.search import expectimax``), so a numba-only
search never imports torch. Searches import only the engine, ``envs`` (the torch env's tensors)
and ``rules``, never agents or trainers (``tests/test_layering.py``).
"""

__all__ = [
    "chance_mcts",
    "expectimax",
    "games",
    "heuristics",
    "lazyzero",
    "minimax",
    "montecarlo",
    "specialise",
    "streams",
]
