"""Finished games of an evaluation streamed to disk as they finish, so a killed run loses none.

``ai2048 eval --out R.json`` writes ``R.games.jsonl`` beside the result: a header line naming
the evaluation (agent, config, seed, spawn odds, move cap) and then one line per finished game,
flushed as each game ends. A run stopped by SIGKILL (or a crash) leaves every finished game in
that file, and ``--resume`` plays only the games it lacks. Game ``i`` always has the seed
:func:`ai2048.evaluate.game_seeds` gives it, so a resumed evaluation holds exactly the games an
uninterrupted one would have played. A torn last line (killed mid-write) is dropped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from ai2048.checkpoint import read_jsonl

STREAM_FORMAT = "ai2048.eval-games"
_SAME = ("agent", "config", "seed", "p_two", "max_moves", "goal_tile", "end_on_full_board", "illegal_move")
"""Header fields a resumed evaluation must share with the stream (the number of games may grow)."""
_ABSENT = {"end_on_full_board": False, "illegal_move": "reject"}
"""What a header written before a field existed means by its absence."""


def stream_path(out: str | Path) -> Path:
    """The games file beside a result file: ``R.json -> R.games.jsonl``."""
    out = Path(out)
    return out.with_name(out.stem + ".games.jsonl")


class GameStream:
    """Append-only JSON-lines file of one evaluation's finished games (see the module docstring)."""

    def __init__(self, path: str | Path, header: dict[str, Any]) -> None:
        self.path = Path(path)
        self.header = {"format": STREAM_FORMAT, "version": 1, **header}
        self._file: IO[str] | None = None

    def load(self) -> dict[int, dict[str, Any]]:
        """The finished games already in the file (by game index), after checking it is this evaluation's.

        Raises ValueError naming the file and the setting that differs.
        """
        if not self.path.is_file():
            raise FileNotFoundError(
                f"cannot resume: {self.path} does not exist (it is written beside --out while games finish); "
                "run without --resume to start the evaluation"
            )
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
        done: dict[int, dict[str, Any]] = {}
        for rec in lines[1:]:
            i = rec.get("index") if isinstance(rec, dict) else None
            if (isinstance(i, bool) or not isinstance(i, int) or i < 0
                    or not isinstance(rec.get("score"), int)):
                raise ValueError(f"cannot resume: {self.path} holds a malformed game line {str(rec)[:80]!r}")
            done[i] = rec
        return done

    def open(self, done: dict[int, dict[str, Any]] | None = None) -> None:
        """Start the file afresh holding the header and the ``done`` games (atomically), then append to it."""
        from ai2048.checkpoint import atomic_write

        done = done or {}
        lines = [self.header] + [done[i] for i in sorted(done)]
        text = "".join(json.dumps(r) + "\n" for r in lines)
        atomic_write(self.path, lambda f: f.write(text), mode="w")
        self._file = open(self.path, "a")  # noqa: SIM115 - kept open for the run, closed in close()

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


def _plain(v: Any) -> Any:
    """A value as it reads back from JSON (tuples become lists), for comparing a header with a run."""
    return json.loads(json.dumps(v))
