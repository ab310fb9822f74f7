"""Evaluation and arena result files: reading and checking them, and the numbers their figures
show (moves to each milestone tile by replaying each game from its seed, action shares by move
number, the mean final board)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.checkpoint import read_json
from ai2048.plots.common import PlotInputError
from ai2048.records import ACTION_CHARS, max_tiles, replay_actions
from ai2048.rules import P_TWO

EVAL_FORMAT = "ai2048.eval-result"
ARENA_FORMAT = "ai2048.arena"
MILESTONES = (256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


def load_result(path: str | Path) -> dict[str, Any]:
    """An eval result or arena JSON; missing, corrupt or foreign files raise, naming the file."""
    p = Path(path)
    try:
        d = read_json(p, "result")
    except ValueError as e:
        raise PlotInputError(str(e)) from e
    if not isinstance(d, dict) or d.get("format") not in (EVAL_FORMAT, ARENA_FORMAT):
        found = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise PlotInputError(
            f"{p} is not an ai2048 evaluation or arena result (format {found!r}); plot takes a run "
            "directory, a result of `ai2048 eval --out` or `ai2048 arena --out`"
        )
    results = d["results"] if d["format"] == ARENA_FORMAT else [d]
    for r in results:
        games = r.get("games") if isinstance(r, dict) else None
        if not isinstance(games, list) or not games:
            raise PlotInputError(f"{p} holds no games to plot")
        for i, g in enumerate(games):
            if not isinstance(g, dict) or not all(k in g for k in ("seed", "score", "moves", "max_tile")):
                raise PlotInputError(f"{p}: game {i} lacks seed/score/moves/max_tile; the file is corrupt")
    return d



def milestone_moves(result: dict[str, Any], source: str = "result") -> dict[int, list[int]]:
    """{tile: [move at which each game that reached it first had it]}, by replaying the actions.

    Raises naming the game whose actions do not replay to its recorded score.
    """
    out: dict[int, list[int]] = {}
    p_two = float(result.get("p_two", P_TWO))
    for i, g in enumerate(result["games"]):
        acts = g.get("actions")
        if not isinstance(acts, str):
            raise PlotInputError(f"{source}: game {i} has no action string; cannot derive time to milestones")
        try:
            t = replay_actions(int(g["seed"]), acts, p_two)
        except (ValueError, TypeError) as e:
            raise PlotInputError(f"{source}: game {i} does not replay: {e}") from e
        if int(t.scores[-1]) != int(g["score"]):
            raise PlotInputError(
                f"{source}: game {i} replays to score {int(t.scores[-1])} but records {g['score']}; "
                "the file was altered"
            )
        mt = max_tiles(t.boards)
        for tile in MILESTONES:
            hit = np.flatnonzero(mt >= tile)
            if hit.size:
                out.setdefault(tile, []).append(int(hit[0]))
    return out


def action_shares(games: Sequence[dict[str, Any]], bins: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Share of each action by move number: (bin starts [B], shares [4, B]) over games still playing."""
    strings = [g.get("actions") or "" for g in games]
    longest = max((len(s) for s in strings), default=0)
    if longest == 0:
        return np.zeros(0), np.zeros((4, 0))
    width = max(1, math.ceil(longest / bins))
    nb = math.ceil(longest / width)
    counts = np.zeros((4, nb))
    for s in strings:
        codes = np.frombuffer(s.lower().encode(), dtype=np.uint8)
        idx = np.full(256, -1, dtype=np.int64)
        for k, ch in enumerate(ACTION_CHARS):
            idx[ord(ch)] = k
        a = idx[codes]
        ok = a >= 0
        np.add.at(counts, (a[ok], np.arange(len(a))[ok] // width), 1)
    total = counts.sum(axis=0)
    return np.arange(nb) * width, counts / np.maximum(total, 1)


def mean_board(games: Sequence[dict[str, Any]]) -> np.ndarray:
    """[4, 4] mean exponent (log2 tile) of the final boards."""
    finals = [g["final_board"] for g in games if "final_board" in g]
    boards = np.array([int(b, 16) if isinstance(b, str) else int(b) for b in finals], dtype=np.uint64)
    if boards.size == 0:
        return np.full((4, 4), np.nan)
    shifts = np.arange(0, 64, 4, dtype=np.uint64)
    e = (boards[:, None] >> shifts[None, :]) & np.uint64(0xF)
    return e.astype(np.float64).mean(axis=0).reshape(4, 4)


def replayed_milestones(result: dict[str, Any], source: str) -> dict[int, list[int]]:
    """:func:`milestone_moves` when every game has its actions, else {} (no milestone figure)."""
    if all(isinstance(g.get("actions"), str) for g in result["games"]):
        return milestone_moves(result, source)
    return {}

