"""Play N seeded games with any agent and summarise them: ``evaluate(agent, games=N, seed=S)``.

One path for every agent (:mod:`~ai2048.evaluate.harness`), one :class:`Rules` handed to each way of
playing and one record per game (:mod:`~ai2048.evaluate.core`):

- :mod:`~ai2048.evaluate.core`: the games' seeds, :class:`Rules` and its checks, a game's record;
- :mod:`~ai2048.evaluate.result`: :class:`EvalResult` (summary, tile table, the result file);
- :mod:`~ai2048.evaluate.local`: games one at a time (this process, worker processes, Ray tasks);
- :mod:`~ai2048.evaluate.batched`: games in flight, one batched search per move;
- :mod:`~ai2048.evaluate.kernel`: whole games in numba for agents with ``game_kernel()``;
- :mod:`~ai2048.evaluate.stream`: finished games streamed to disk (``eval --out``, ``--resume``);
- :mod:`~ai2048.evaluate.harness`: :func:`evaluate`, which picks the path and collects the games.

The modules import downwards in that order (core first); none imports this package's ``__init__``.
The batched, kernel and stream modules load on first use.
"""

from ai2048.evaluate.core import (
    ILLEGAL_MOVES,
    MAX_MOVES,
    MAX_WORKERS,
    SEED004_RULES_FIX,
    Rules,
    check_agent_fits,
    check_end_rules,
    check_illegal_move,
    check_max_moves,
    check_workers,
    ends_early,
    game_record,
    game_seeds,
)
from ai2048.evaluate.harness import evaluate, sigterm_as_interrupt
from ai2048.evaluate.local import one_torch_thread, play_game
from ai2048.evaluate.result import RESULT_FORMAT, EvalError, EvalResult

__all__ = [
    "ILLEGAL_MOVES",
    "MAX_MOVES",
    "MAX_WORKERS",
    "RESULT_FORMAT",
    "EvalError",
    "EvalResult",
    "SEED004_RULES_FIX",
    "Rules",
    "check_agent_fits",
    "check_end_rules",
    "check_illegal_move",
    "check_max_moves",
    "check_workers",
    "ends_early",
    "evaluate",
    "game_record",
    "game_seeds",
    "one_torch_thread",
    "play_game",
    "sigterm_as_interrupt",
]
