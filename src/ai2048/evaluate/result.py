"""An evaluation's result: every finished game's record, the rules and agent that played them, the
summary (seed 004's tile table with Wilson 95% intervals, score mean ± standard error, median and
max, moves per game, moves/s, time per move), and the JSON file ``ai2048 eval --out`` writes.

The agent's kernels are loaded (or compiled) before the clock starts: ``load_seconds`` says how
long that took, apart from the per-game times, moves/s and wall time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.checkpoint import read_json, write_json
from ai2048.evaluate.core import Rules
from ai2048.rules import CAPPED_RULES, P_TWO, RULES_VERSION
from ai2048.stats import tile_table

RESULT_FORMAT = "ai2048.eval-result"


class EvalError(RuntimeError):
    """An evaluation stopped by a faulty agent; ``result`` holds the games finished before."""

    def __init__(self, message: str, result: EvalResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class EvalResult:
    """Every finished game (``records``, in game order) and what produced them."""

    agent: str
    config: dict[str, Any]
    seed: int
    games_requested: int
    p_two: float = P_TWO
    max_moves: int | None = None
    goal_tile: int | None = None
    end_on_full_board: bool = False
    illegal_move: str = "reject"
    rules_version: int = RULES_VERSION
    records: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    error: str | None = None
    wall_seconds: float = 0.0
    load_seconds: float = 0.0
    workers: int = 1

    @property
    def games(self) -> int:
        return len(self.records)

    @property
    def rules(self) -> Rules:
        """The rules the games were played under."""
        return Rules(p_two=self.p_two, max_moves=self.max_moves, goal_tile=self.goal_tile,
                     end_on_full_board=self.end_on_full_board, illegal_move=self.illegal_move,
                     rules=self.rules_version)

    def tile_table(self) -> list[dict[str, Any]]:
        """Seed 004's table of the final max tiles (:func:`ai2048.stats.tile_table`)."""
        return tile_table([r["max_tile"] for r in self.records])

    def summary(self) -> dict[str, Any]:
        """Score mean ± standard error, median, max; moves per game; moves/s; ms per move; tile table.

        Times are the games' own: ``load_seconds`` (loading or compiling the agent's kernels, before
        the clock started) is apart."""
        n = self.games
        if n == 0:
            return {"games": 0}
        scores = np.array([r["score"] for r in self.records], dtype=np.float64)
        moves = np.array([r["moves"] for r in self.records], dtype=np.float64)
        secs = float(sum(r["seconds"] for r in self.records))
        total_moves = float(moves.sum())
        return {
            "games": n,
            "score_mean": float(scores.mean()),
            "score_se": float(scores.std(ddof=1) / math.sqrt(n)) if n > 1 else 0.0,
            "score_median": float(np.median(scores)),
            "score_max": int(scores.max()),
            "score_min": int(scores.min()),
            "moves_mean": float(moves.mean()),
            "moves_per_s": total_moves / secs if secs > 0 else float("inf"),
            "ms_per_move": 1000.0 * secs / total_moves if total_moves else 0.0,
            "game_seconds": secs,
            "wall_seconds": self.wall_seconds,
            "load_seconds": self.load_seconds,
            "tiles": self.tile_table(),
        }

    def format(self) -> str:
        """The summary as text: a header line, the tile table, then the score and speed lines."""
        s = self.summary()
        head = (f"{self.agent} {self.config or ''}  games {self.games}/{self.games_requested}  "
                f"seed {self.seed}")
        rules = [f"stop at {self.goal_tile}"] if self.goal_tile is not None else []
        rules += ["end on a full board"] if self.end_on_full_board else []
        rules += ["unchanged moves cost 1 and spawn"] if self.illegal_move == "penalty" else []
        rules += [f"rules version {CAPPED_RULES}: two 32768s do not merge"] \
            if self.rules_version == CAPPED_RULES else []
        if rules:
            head += f"  ({', '.join(rules)})"
        if self.interrupted:
            head += "  (interrupted)"
        if self.error:
            head += f"  (stopped: {self.error})"
        if not self.games:
            return head + "\nno finished games"
        lines = [head, f"{'tile':>6} {'reach %':>8} {'95% CI':>15} {'end %':>7} {'95% CI':>15}"]
        for row in s["tiles"]:
            lo, hi = row["reach_ci"]
            elo, ehi = row["end_ci"]
            lines.append(
                f"{row['tile']:>6} {100 * row['reach_rate']:>8.1f} {f'{100 * lo:.1f}-{100 * hi:.1f}':>15} "
                f"{100 * row['end_rate']:>7.1f} {f'{100 * elo:.1f}-{100 * ehi:.1f}':>15}"
            )
        lines.append(
            f"score {s['score_mean']:.0f} ± {s['score_se']:.0f} (median {s['score_median']:.0f}, "
            f"max {s['score_max']})  moves/game {s['moves_mean']:.0f}  {s['moves_per_s']:.1f} moves/s  "
            f"{s['ms_per_move']:.2f} ms/move  (+ {self.load_seconds:.2f} s loading the agent)"
        )
        return "\n".join(lines)

    def best_and_worst(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The records of the highest- and lowest-scoring games."""
        if not self.records:
            raise ValueError("no finished games")
        ordered = sorted(self.records, key=lambda r: r["score"])
        return ordered[-1], ordered[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RESULT_FORMAT,
            "version": 1,
            "rules_version": self.rules_version,
            "agent": self.agent,
            "config": self.config,
            "seed": self.seed,
            "games_requested": self.games_requested,
            "p_two": self.p_two,
            "max_moves": self.max_moves,
            "goal_tile": self.goal_tile,
            "end_on_full_board": self.end_on_full_board,
            "illegal_move": self.illegal_move,
            "interrupted": self.interrupted,
            "error": self.error,
            "wall_seconds": self.wall_seconds,
            "load_seconds": self.load_seconds,
            "workers": self.workers,
            "summary": self.summary(),
            "games": self.records,
        }

    def save(self, path: str | Path) -> Path:
        """Write the result as JSON, atomically (temp file + rename)."""
        write_json(path, self.to_dict())
        return Path(path)

    @classmethod
    def load(cls, path: str | Path) -> EvalResult:
        """Read a result written by :meth:`save`; a foreign or corrupt file raises, naming it."""
        d = read_json(path, "evaluation result")
        if not isinstance(d, dict) or d.get("format") != RESULT_FORMAT:
            raise ValueError(f"{path} is not an ai2048 evaluation result (no format {RESULT_FORMAT!r})")
        try:
            return cls(
                agent=d["agent"], config=d["config"], seed=d["seed"], games_requested=d["games_requested"],
                p_two=d["p_two"], max_moves=d["max_moves"], records=list(d["games"]),
                interrupted=d["interrupted"], error=d["error"], wall_seconds=d["wall_seconds"],
                # goal_tile, end_on_full_board, illegal_move and load_seconds are absent in older results
                workers=d["workers"], goal_tile=d.get("goal_tile"),
                end_on_full_board=bool(d.get("end_on_full_board", False)),
                illegal_move=d.get("illegal_move", "reject"),
                rules_version=d.get("rules_version", CAPPED_RULES), load_seconds=d.get("load_seconds", 0.0),
            )
        except KeyError as e:
            raise ValueError(
                f"evaluation result {path} lacks the key {e}; it is truncated or from another tool"
            ) from e
