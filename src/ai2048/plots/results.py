"""Evaluation and arena result files: reading and checking them, and the numbers their figures
show (moves to each milestone tile by replaying each game from its seed, action shares by move
number, the mean final board)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.board_io import check_position
from ai2048.checkpoint import read_json
from ai2048.plots.common import PlotInputError, finite_number
from ai2048.records import ACTION_CHARS, max_tiles, replay_actions, replay_differences
from ai2048.rules import CAPPED_RULES, P_TWO, RULES_VERSIONS

EVAL_FORMAT = "ai2048.eval-result"
ARENA_FORMAT = "ai2048.arena"
MILESTONES = (128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
"""The tiles whose first appearance the milestone figures time (seed 003 times 128 ... 2048)."""


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
    if d["format"] == ARENA_FORMAT:
        results = d.get("results")
        if not isinstance(results, list) or not results:
            raise PlotInputError(
                f"{p} is an arena file without a non-empty list of results; the file is corrupt")
    else:
        results = [d]
    for j, r in enumerate(results):
        where = f"{p} (agent {j})" if d["format"] == ARENA_FORMAT else str(p)
        games = r.get("games") if isinstance(r, dict) else None
        if not isinstance(games, list) or not games:
            raise PlotInputError(f"{where} holds no games to plot")
        _check_fields(r, where)
        for i, g in enumerate(games):
            if not isinstance(g, dict) or not all(k in g for k in ("seed", "score", "moves", "max_tile")):
                raise PlotInputError(
                    f"{where}: game {i} lacks seed/score/moves/max_tile; the file is corrupt")
            _check_game(g, f"{where}: game {i}")
    return d


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_fields(r: dict[str, Any], where: str) -> None:
    """The result-level fields the figures and labels read: wrong types raise, naming the file."""
    if "config" in r and r["config"] is not None and not isinstance(r["config"], dict):
        raise PlotInputError(
            f"{where}: config is a {type(r['config']).__name__}, not an object; the file is corrupt")
    if "p_two" in r and r["p_two"] is not None and not (finite_number(r["p_two"]) and 0 <= r["p_two"] <= 1):
        raise PlotInputError(
            f"{where}: p_two={r['p_two']!r} is not a probability in [0, 1]; the file is corrupt")


def _check_game(g: dict[str, Any], where: str) -> None:
    """One game's fields: whole numbers >= 0 for seed/score/moves/max_tile, finite seconds >= 0, an action
    string and a 64-bit final board when present; anything else raises, naming the game."""
    for k in ("seed", "score", "moves", "max_tile"):
        if not _is_int(g[k]) or g[k] < 0 or (k == "seed" and g[k] >= 1 << 64):
            raise PlotInputError(
                f"{where}: {k}={g[k]!r} is not a whole number >= 0{' below 2**64' if k == 'seed' else ''}; "
                "the file is corrupt"
            )
    secs = g.get("seconds")
    if secs is not None and not (finite_number(secs) and secs >= 0):
        raise PlotInputError(
            f"{where}: seconds={g['seconds']!r} is not a finite number >= 0; the file is corrupt")
    if "actions" in g and g["actions"] is not None and not isinstance(g["actions"], str):
        raise PlotInputError(
            f"{where}: actions is a {type(g['actions']).__name__}, not a string; the file is corrupt")
    if "final_board" in g:
        b = g["final_board"]
        try:
            v = int(b, 16) if isinstance(b, str) else b if _is_int(b) else -1
        except ValueError:
            v = -1
        if not 0 <= v < 1 << 64:
            raise PlotInputError(f"{where}: final_board={b!r} is not a 64-bit board (hex string or integer); "
                                 "the file is corrupt")
        if "final_supers" in g:  # the exact values of its tiles past 32768 (rules version 1)
            try:
                check_position(v, g["final_supers"])
            except (TypeError, ValueError) as e:
                raise PlotInputError(f"{where}: final_supers={g['final_supers']!r} does not fit final_board "
                                     f"({e}); the file is corrupt") from None



def milestone_moves(result: dict[str, Any], source: str = "result") -> dict[int, list[int]]:
    """{tile: [move at which each game that reached it first had it]}, by replaying the actions.

    Raises naming the game whose actions do not replay to its recorded score.
    """
    out: dict[int, list[int]] = {}
    p_two = float(result.get("p_two", P_TWO))
    penalty = result.get("illegal_move") == "penalty"  # seed 004's rule: unchanged moves were played
    rules = result.get("rules_version", CAPPED_RULES)  # a result from before the field: capped games
    if rules not in RULES_VERSIONS:
        raise PlotInputError(f"{source}: rules_version {rules!r} is not one this ai2048 plays "
                             f"({', '.join(map(str, RULES_VERSIONS))})")
    for i, g in enumerate(result["games"]):
        acts = g.get("actions")
        if not isinstance(acts, str):
            raise PlotInputError(f"{source}: game {i} has no action string; cannot derive time to milestones")
        try:
            t = replay_actions(int(g["seed"]), acts, p_two, penalty, rules=rules)
        except (ValueError, TypeError) as e:
            raise PlotInputError(f"{source}: game {i} does not replay: {e}") from e
        differ = replay_differences(g, t)
        if differ:
            raise PlotInputError(f"{source}: game {i} replays to {'; '.join(differ)}; the file was altered")
        mt = max_tiles(t.boards, t.supers)
        for tile in MILESTONES:
            hit = np.flatnonzero(mt >= tile)
            if hit.size:
                out.setdefault(tile, []).append(int(hit[0]))
    return out


def game_seconds(games: Sequence[dict[str, Any]]) -> np.ndarray | None:
    """[n] seconds of each game, or None when a game lacks a finite time (then no timing figure)."""
    secs = np.array([g.get("seconds", np.nan) for g in games], dtype=np.float64)
    return secs if secs.size and np.isfinite(secs).all() else None


def runtime_by_tile(games: Sequence[dict[str, Any]]) -> dict[int, float]:
    """{largest tile at the end: mean seconds of the games that ended on it} (seed 003's average time
    to finish a game against its max tile); {} when the games carry no times."""
    secs = game_seconds(games)
    if secs is None:
        return {}
    tiles = np.array([int(g["max_tile"]) for g in games])
    return {int(t): float(secs[tiles == t].mean()) for t in np.unique(tiles)}


def milestone_seconds(games: Sequence[dict[str, Any]], milestones: dict[int, list[int]]) -> dict[int, float]:
    """{tile: median seconds to first reach it over the games that did} (seed 003's time to each
    milestone): the move it first appeared at (``milestones``, :func:`milestone_moves`) times the
    games' mean seconds a move, since a game records its total time only; {} without times."""
    secs = game_seconds(games)
    if secs is None or not milestones:
        return {}
    per_move = float(secs.sum()) / max(sum(int(g["moves"]) for g in games), 1)
    return {t: float(np.median(moves)) * per_move for t, moves in sorted(milestones.items())}


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
    """[4, 4] mean exact exponent (log2 tile) of the final boards: a 65536 counts 16, a 131072 17 (their
    ``final_supers``, checked by load_result)."""
    kept = [g for g in games if "final_board" in g]  # checked by load_result
    finals = [g["final_board"] for g in kept]
    boards = np.array([int(b, 16) if isinstance(b, str) else int(b) for b in finals], dtype=np.uint64)
    if boards.size == 0:
        return np.full((4, 4), np.nan)
    supers = np.array([int(g.get("final_supers", 0)) for g in kept], dtype=np.int64)
    shifts = np.arange(0, 64, 4, dtype=np.uint64)
    e = ((boards[:, None] >> shifts[None, :]) & np.uint64(0xF)).astype(np.int64)
    e += (supers[:, None] >> np.arange(0, 32, 2, dtype=np.int64)[None, :]) & 3  # 0 but on a 15
    return e.astype(np.float64).mean(axis=0).reshape(4, 4)


def replayed_milestones(result: dict[str, Any], source: str) -> dict[int, list[int]]:
    """:func:`milestone_moves` when every game has its actions, else {} (no milestone figure)."""
    if all(isinstance(g.get("actions"), str) for g in result["games"]):
        return milestone_moves(result, source)
    return {}

