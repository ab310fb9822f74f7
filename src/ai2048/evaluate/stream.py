"""Finished games of an evaluation streamed to disk as they finish, so a killed run loses none.

``ai2048 eval --out R.json`` writes ``R.games.jsonl`` beside the result: a header line naming
the evaluation (agent, config, seed, spawn odds, move cap) and then one line per finished game,
flushed as each game ends. A run stopped by SIGKILL (or a crash) leaves every finished game in
that file, and ``--resume`` plays only the games it lacks, after replaying each kept game from its
seed and actions (:func:`check_game`: an edited line is refused, naming the game). Game ``i``
always has the seed :func:`ai2048.evaluate.core.game_seeds` gives it, so a resumed evaluation holds
exactly the games an uninterrupted one would have played. A torn last line (killed mid-write) is dropped.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import IO, Any

import numpy as np

from ai2048.checkpoint import check_regular_file, read_jsonl
from ai2048.engine.supertiles import exact_legal_bits
from ai2048.evaluate.core import Rules, game_seeds
from ai2048.records import replay_actions, replay_differences
from ai2048.rules import CAPPED_RULES, MAX_EXPONENT

STREAM_FORMAT = "ai2048.eval-games"
_SAME = ("agent", "config", "seed", "p_two", "max_moves", "goal_tile", "end_on_full_board", "illegal_move",
         "rules_version")
"""Header fields a resumed evaluation must share with the stream (the number of games may grow)."""
_ABSENT = {"end_on_full_board": False, "illegal_move": "reject", "rules_version": CAPPED_RULES}
"""What a header written before a field existed means by its absence."""


def stream_path(out: str | Path) -> Path:
    """The games file beside a result file: ``R.json -> R.games.jsonl``."""
    out = Path(out)
    return out.with_name(out.stem + ".games.jsonl")


class GameStream:
    """Append-only JSON-lines file of one evaluation's finished games (see the module docstring)."""

    def __init__(self, path: str | Path, header: dict[str, Any], may_stop: bool = False) -> None:
        """``may_stop``: a game whose record says ``"end": "illegal"`` may stop before it is over (the
        strategy harness ends a game at a move that changes nothing)."""
        self.path = Path(path)
        self.header = {"format": STREAM_FORMAT, "version": 1, **header}
        self.may_stop = may_stop
        self._file: IO[str] | None = None

    def load(self) -> dict[int, dict[str, Any]]:
        """The finished games already in the file (by game index), after checking it is this evaluation's.

        Raises ValueError naming the file and the setting that differs.
        """
        check_regular_file(self.path, "games file", missing=(
            f"cannot resume: {self.path} does not exist (it is written beside --out while games finish); "
            "run without --resume to start the evaluation"))
        lines = read_jsonl(self.path)
        if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != STREAM_FORMAT:
            raise ValueError(f"cannot resume: {self.path} is not an ai2048 evaluation games file")
        head = lines[0]
        pairs = [(k, head.get(k, _ABSENT.get(k)), self.header.get(k, _ABSENT.get(k))) for k in _SAME]
        differ = [f"{k}: file {old!r}, now {new!r}" for k, old, new in pairs if _plain(old) != _plain(new)]
        if differ:
            raise ValueError(
                f"cannot resume: {self.path} holds another evaluation ({'; '.join(differ)}); "
                "resume with the same agent and options, or choose another --out"
            )
        games = max(_count(head.get("games_requested")), _count(self.header.get("games_requested")))
        done: dict[int, dict[str, Any]] = {}
        for rec in lines[1:]:
            i = rec.get("index") if isinstance(rec, dict) else None
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < games:
                raise ValueError(f"cannot resume: {self.path} holds a malformed game line {str(rec)[:80]!r} "
                                 f"(an index in 0..{games - 1} is expected)")
            done[i] = rec
        seeds = game_seeds(int(head["seed"]), max(done, default=-1) + 1)
        rules = header_rules(self.header)
        for i, rec in done.items():
            try:
                check_game(rec, seeds[i], rules, stopped=self.may_stop and rec.get("end") == "illegal")
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"cannot resume: game {i} in {self.path} does not hold: {e}; the file was edited or "
                    f"damaged: delete that line to play game {i} again, or the file to start afresh"
                ) from None
        return done

    def open(self, done: dict[int, dict[str, Any]] | None = None) -> None:
        """Start the file afresh holding the header and the ``done`` games (atomically), then append to it."""
        from ai2048.checkpoint import atomic_write, output_target

        done = done or {}
        lines = [self.header] + [done[i] for i in sorted(done)]
        text = "".join(json.dumps(r) + "\n" for r in lines)
        atomic_write(self.path, lambda f: f.write(text), mode="w")
        # kept open for the run, closed in close(); a regular file (or a link's target) only
        self._file = open(output_target(self.path, "games file"), "a")  # noqa: SIM115

    def write(self, record: dict[str, Any]) -> None:
        """Append one finished game and flush it to the OS (a SIGKILL right after keeps it)."""
        if self._file is None:
            raise RuntimeError("GameStream.write before open")
        self._file.write(json.dumps(record) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Flush the file to disk and close it."""
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            self._file = None

    def remove(self) -> None:
        """Delete the file (the evaluation finished and its result is saved)."""
        self.close()
        self.path.unlink(missing_ok=True)


def header_rules(header: dict[str, Any]) -> Rules:
    """The :class:`~ai2048.evaluate.core.Rules` a stream header names (a field it lacks: its
    meaning before the field existed)."""
    got = {k: header.get(k, _ABSENT.get(k)) for k in ("p_two", "max_moves", "goal_tile", "end_on_full_board",
                                                       "illegal_move")}
    got["rules"] = header.get("rules_version", CAPPED_RULES)
    return Rules(**{k: v for k, v in got.items() if v is not None})


def check_game(rec: dict[str, Any], seed: int, rules: Rules, stopped: bool = False) -> None:
    """Raise ValueError unless ``rec`` is the game its seed and actions give under ``rules``
    (``stopped``: a game ended by its player's unchanged move, which must leave a game not over).

    The actions are replayed from ``seed`` (the seed game ``index`` of the evaluation gets), and the
    score, moves, max tile and final board must be the replay's; the game must end where the rules
    end it (no legal move, the move cap or an end rule at its last move, never before). An edited
    score, seed or action list would otherwise go straight into the resumed result.
    """
    for key, kinds in (("seed", int), ("actions", str), ("score", int), ("moves", int), ("max_tile", int),
                       ("final_board", str), ("seconds", (int, float))):
        v = rec.get(key)
        if v is None:
            raise ValueError(f"it has no {key!r}")
        if isinstance(v, bool) or not isinstance(v, kinds):
            raise ValueError(f"{key}={str(v)[:40]!r} is a {type(v).__name__}")
    if rec["seed"] != seed:
        raise ValueError(f"seed {rec['seed']} is not the seed this evaluation gives it ({seed})")
    if not (math.isfinite(rec["seconds"]) and rec["seconds"] >= 0):
        raise ValueError(f"seconds={rec['seconds']!r} is not a time")
    t = replay_actions(seed, rec["actions"], p_two=rules.p_two, rules=rules.rules)  # an illegal move raises
    n = len(t.actions)
    over = exact_legal_bits(np.uint64(t.boards[-1]), np.int64(t.final_supers)) == 0
    differ = replay_differences(rec, t)
    if differ:
        raise ValueError(f"its actions replay to {'; '.join(differ)}")
    cap, goal, full = rules.max_moves, rules.goal_tile, rules.end_on_full_board
    ended = end_rule_hits(t.boards[1:], goal, full)
    if cap is not None and n > cap:
        raise ValueError(f"it has {n} moves, more than --max-moves {cap}")
    if n > 1 and ended[:-1].any():
        raise ValueError(f"it goes on after move {int(np.argmax(ended)) + 1}, where the end rules end it")
    if stopped:
        if over or (cap is not None and n >= cap):
            raise ValueError(f"it says a move that changes nothing ended it after move {n}, where the "
                             "game had ended anyway")
    elif not (over or (cap is not None and n == cap) or (n and ended[-1])):
        raise ValueError(f"it stops after move {n}, but the game is not over there")


def end_rule_hits(boards: np.ndarray, goal_tile: int | None, end_on_full_board: bool) -> np.ndarray:
    """[N] bool: where :func:`ai2048.evaluate.core.ends_early` holds for each board, for whole games
    at once."""
    b = np.asarray(boards, dtype=np.uint64)
    nibbles = (b[:, None] >> np.arange(0, 64, 4, dtype=np.uint64)[None, :]) & np.uint64(0xF)
    top = nibbles.max(axis=1).astype(np.int64) if len(b) else np.zeros(0, np.int64)
    hit = np.zeros(len(b), dtype=bool)
    if goal_tile is not None:
        hit |= top >= int(goal_tile).bit_length() - 1
    if end_on_full_board:
        hit |= (nibbles != 0).all(axis=1) | (top >= MAX_EXPONENT)
    return hit


def _count(v: Any) -> int:
    """A header's ``games_requested`` as a count (0 when absent or not a whole number)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _plain(v: Any) -> Any:
    """A value as it reads back from JSON (tuples become lists), for comparing a header with a run."""
    return json.loads(json.dumps(v))
