"""Score ``strategy(board) -> move`` code (a language model's answer to "write a 2048 strategy") by N
seeded games, the code locked in a :class:`~ai2048.llm.sandbox.StrategyProcess`.

The games are played here, in the trusted process, with the engine; the strategy process only
answers moves. ``board`` is a list of 4 rows of 4 tile values (0 for empty; a fresh list each
call); the answer is a move name as the text env reads it (``"up"``, ``"L"``, ``"Move: left"``) or an
int in ai2048's numbering (UP=0, RIGHT=1, DOWN=2, LEFT=3). A move that changes nothing ends that
game (``"end": "illegal"`` in its record); anything that is not a move ends the run with the
``bad_move`` verdict. Game ``i`` is ``Game(game_seeds(seed, games)[i])``, the games
``ai2048 eval --seed`` plays, and before each game the process's ``random`` (and numpy) is seeded
with that game's seed: a run is reproducible, and a game played again alone (a resumed run) is the
same game unless the code keeps state between games. The result is an
:class:`~ai2048.evaluate.EvalResult` (tile table with Wilson intervals, score mean and standard
error) of the games finished, plus the verdict. Ctrl-C or SIGTERM stops the run and keeps the games
finished (``result.interrupted``); ``on_game`` sees each as it finishes, and ``done`` (games of a
stopped run, by index) are kept and not played again.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai2048 import checks
from ai2048.envs.text_actions import AnswerError, move_index
from ai2048.evaluate import EvalResult, game_seeds, sigterm_as_interrupt
from ai2048.game import Game, IllegalMoveError
from ai2048.llm.sandbox import SandboxLimits, Stop, StrategyProcess, Verdict
from ai2048.rules import ACTION_CHARS

MAX_ANSWER_CHARS = 1024
"""Longest string answer read from a strategy (the process sends at most this much)."""


@dataclass
class StrategyResult:
    """A scored strategy: the ``verdict`` (kind "ok" when every game finished) and the games played."""

    verdict: Verdict
    result: EvalResult

    @property
    def ok(self) -> bool:
        """The verdict is "ok" and the run was not stopped before its last game."""
        return self.verdict.kind == "ok" and not self.result.interrupted

    @property
    def interrupted(self) -> bool:
        """Stopped by Ctrl-C or SIGTERM: the verdict is of the games finished so far."""
        return self.result.interrupted

    @property
    def score(self) -> float:
        """Mean score of the finished games (0 when none finished): a reward for the model."""
        return float(self.result.summary().get("score_mean", 0.0))

    def format(self) -> str:
        return f"verdict: {self.verdict.kind}: {self.verdict.message}\n{self.result.format()}"

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict.to_dict(), **self.result.to_dict()}


def _move(answer: str | int) -> int:
    """The move index of a strategy's answer, or :class:`Stop` with the bad_move verdict."""
    if isinstance(answer, int):
        if 0 <= answer <= 3:
            return answer
        why = f"the int {answer} (moves are 0..3: UP=0, RIGHT=1, DOWN=2, LEFT=3, or their names)"
    else:
        try:
            return move_index(answer, MAX_ANSWER_CHARS)
        except AnswerError as e:
            why = str(e)
    raise Stop(Verdict("bad_move", f"the strategy answered {why}"))


def play(proc: StrategyProcess, seed: int, max_moves: int | None, deadline: float) -> dict[str, Any]:
    """One game from ``Game(seed)``, the strategy (its ``random`` seeded with ``seed``) asked for every
    move; its record (as :func:`ai2048.evaluate.play_game` writes one, plus ``"end"``)."""
    g = Game(seed=seed)
    actions = bytearray()
    end = "game_over"
    t0 = time.perf_counter()
    proc.new_game(seed)
    while not g.is_over:
        if max_moves is not None and g.moves >= max_moves:
            end = "max_moves"
            break
        if time.monotonic() > deadline:
            raise Stop(Verdict("timeout", "the games took longer than the run's time budget"))
        view, forced = g.to_play()  # two equal tiles of 32768 or more show as 16384s (Game.view)
        a = forced if forced >= 0 else _move(proc.ask(view))
        try:
            g.step(a)
        except IllegalMoveError:
            end = "illegal"
            break
        actions.append(ord(ACTION_CHARS[a]))
    rec = {"seed": int(seed), "score": int(g.score), "moves": int(g.moves), "max_tile": int(g.max_tile),
           "final_board": f"0x{g.board:016x}", "seconds": time.perf_counter() - t0,
           "actions": actions.decode(), "end": end}
    if g.supers:
        rec["final_supers"] = g.supers
    return rec


def score_strategy(code: str, games: int = 100, seed: int = 0, limits: SandboxLimits | None = None,
                   max_moves: int | None = None, total_seconds: float = 300.0, *,
                   done: dict[int, dict[str, Any]] | None = None,
                   on_game: Callable[[dict[str, Any]], None] | None = None) -> StrategyResult:
    """Play ``games`` seeded games with the strategy in ``code``; never raises for what the code does
    (that is the verdict), only for bad arguments and a host that cannot run the sandbox (OSError).

    ``total_seconds`` bounds the whole run (start-up included): games not finished by then are not
    scored and the verdict is "timeout". ``done``: games already played (by game index, as a stopped
    run's ``on_game`` saw them), kept and not played again. ``on_game(record)``: called as each game
    finishes (``ai2048 strategy --out`` streams them to disk). Ctrl-C or SIGTERM stops the run: the
    result holds the games finished, with ``interrupted`` set.
    """
    games = checks.whole("games", games, 1)
    seed = checks.whole("seed", seed, 0)
    if max_moves is not None:
        max_moves = checks.whole("max_moves", max_moves, 1)
    checks.number("total_seconds", total_seconds, 0, lo_open=True)
    limits = limits or SandboxLimits()
    result = EvalResult(agent="strategy", config={}, seed=seed, games_requested=games, max_moves=max_moves)
    by_index = {i: r for i, r in (done or {}).items() if 0 <= i < games}
    t0 = time.monotonic()
    deadline = t0 + total_seconds
    verdict = Verdict("ok", f"{games} games played")
    todo = [(i, s) for i, s in enumerate(game_seeds(seed, games)) if i not in by_index]
    previous_sigterm = sigterm_as_interrupt()
    try:
        if todo:
            with StrategyProcess(code, limits, seed) as proc:
                for i, s in todo:
                    by_index[i] = {"index": i, **play(proc, s, max_moves, deadline)}
                    if on_game is not None:
                        on_game(by_index[i])
    except Stop as stop:
        verdict = stop.verdict
        verdict.detail.setdefault("games_finished", len(by_index))
    except KeyboardInterrupt:
        result.interrupted = True
        verdict = Verdict("ok", f"{len(by_index)} of {games} games played before the run was stopped")
    finally:
        if previous_sigterm is not None:
            signal.signal(signal.SIGTERM, previous_sigterm)
    result.records = [by_index[i] for i in sorted(by_index)]
    result.wall_seconds = time.monotonic() - t0
    if verdict.kind != "ok":
        result.error = f"{verdict.kind}: {verdict.message}"
    return StrategyResult(verdict, result)


__all__ = ["MAX_ANSWER_CHARS", "StrategyResult", "score_strategy"]
