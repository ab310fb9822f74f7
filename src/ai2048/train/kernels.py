"""Where the torch trainers used to find their two board helpers; both live in the engine now.

``exponents`` is :func:`ai2048.engine.board.exponents` and ``all_moves`` is
:func:`ai2048.engine.moves.all_moves`; stepping games is :class:`ai2048.envs.batch.GameBatch`.
Import them from there: this module goes once the trainers do.
"""

from __future__ import annotations

from ai2048.engine.board import exponents
from ai2048.engine.moves import all_moves

__all__ = ["all_moves", "exponents"]
