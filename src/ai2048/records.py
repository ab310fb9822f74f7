"""Game records: a whole game in a few kilobytes of JSON that replays exactly.

``Game(seed)`` draws every tile from one seeded stream, so the seed and the actions determine the
game. A record also keeps what the game looked like — the spawned tiles (cell, exponent) and the
score after every move — so that :meth:`GameRecord.replay` can check every step and name the first
move at which a tampered or foreign record stops agreeing with the rules.

On disk (``format`` ``"ai2048.game-record"``, ``version`` 1)::

    {"format": "ai2048.game-record", "version": 1, "rules_version": 1,
     "seed": 7, "p_two": 0.9, "start_board": "0x0000000000100001",
     "actions": "ulld...",          # one letter a move: u r d l (Action order UP RIGHT DOWN LEFT)
     "spawns": "a1 32 ...",         # one "<cell hex><exponent>" token a move, cell = 4*row + col
     "scores": [0, 4, 4, ...],      # cumulative score after each move
     "moves": 123, "final_score": 1234, "final_board": "0x...", "max_tile": 256,
     "agent": "expectimax", "agent_config": {"depth": 2}, "meta": {...}}

Boards are written as hex strings because JSON readers in browsers lose integers above 2**53. A game
that passed 32768 also has ``"final_supers"``, the exact values of its final board's tiles of 32768 or
more (:mod:`ai2048.engine.supertiles`). A record of rules version 0 (two 32768s did not merge)
replays under that version, exactly as it was played.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks, engine
from ai2048.board_io import check_action, check_board, check_rules
from ai2048.checkpoint import atomic_write, read_json
from ai2048.engine.replay import replay_boards
from ai2048.engine.supertiles import exact_max_exponent, exact_move
from ai2048.game import Game
from ai2048.rules import ACTION_CHARS, CAPPED_RULES, MAX_EXPONENT, P_TWO, RULES_VERSION, Action

RECORD_FORMAT = "ai2048.game-record"
RECORD_VERSION = 1


class RecordError(ValueError):
    """A record that is missing, foreign, corrupt, or does not replay; the message names the file."""


def actions_to_str(actions: Sequence[Any]) -> str:
    """``[Action.UP, 3, 3] -> "ull"``: the compact action string used in records and eval results."""
    return "".join(ACTION_CHARS[check_action(a)] for a in actions)


def str_to_actions(text: str) -> np.ndarray:
    """``"ull" -> array([0, 3, 3], uint8)``; any other letter raises, naming it and its position."""
    if not isinstance(text, str):
        raise TypeError(
            f"an action string must be a str of the letters {ACTION_CHARS!r}, got {type(text).__name__}"
        )
    codes = np.frombuffer(text.lower().encode("utf-8", "replace"), dtype=np.uint8)
    out = _ACTION_CODES[codes] if codes.size == len(text) else np.full(len(text), 255, np.uint8)
    bad = np.flatnonzero(out == 255)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"action string has {text[i]!r} at position {i}; use the letters u, r, d, l (up, right, down, "
            "left)"
        )
    return out


_ACTION_CODES = np.full(256, 255, dtype=np.uint8)
for _k, _ch in enumerate(ACTION_CHARS):
    _ACTION_CODES[ord(_ch)] = _k


def _board_hex(b: int) -> str:
    return f"0x{int(b):016x}"


def _parse_board(v: Any) -> int:
    """A board from JSON: a hex string ``"0x..."`` (as written) or an integer."""
    return int(check_board(int(v, 16) if isinstance(v, str) else v))


def json_int(v: Any, what: str) -> int:
    """``v`` if it is a JSON integer; a float (``4.0``), bool or string raises TypeError naming ``what``.

    Records hold whole numbers only: a float score would be truncated silently by ``int``.
    """
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{what} must be a whole number, got {type(v).__name__} {v!r}")
    return v


_REQUIRED = object()


def _json_field(d: dict[str, Any], key: str, kinds: tuple[type, ...], default: Any = _REQUIRED) -> Any:
    """``d[key]`` after checking its JSON type; ``default`` when absent or null (KeyError without one)."""
    v = d[key] if default is _REQUIRED else d.get(key)
    if v is None and default is not _REQUIRED:
        return default
    if not isinstance(v, kinds):
        names = " or ".join(
            {"str": "a string", "dict": "an object", "list": "a list"}[k.__name__] for k in kinds
        )
        raise TypeError(f"field {key!r} must be {names}, got {type(v).__name__} {str(v)[:40]!r}")
    return v


def _max_tile(b: int, supers: int = 0) -> int:
    e = int(exact_max_exponent(np.uint64(b), np.int64(supers)))
    return 1 << e if e else 0


def max_tiles(boards: np.ndarray, supers: np.ndarray | None = None) -> np.ndarray:
    """[N] uint64 boards (and their [N] supers, the exact values of tiles past 32768) -> [N] int64
    largest tile value of each (0 for an empty board)."""
    b = np.asarray(boards, dtype=np.uint64)
    shifts = np.arange(0, 64, 4, dtype=np.uint64)
    e = ((b[:, None] >> shifts[None, :]) & np.uint64(0xF)).max(axis=1).astype(np.int64)
    if supers is not None:
        s = np.asarray(supers, dtype=np.int64)
        extra = ((s[:, None] >> np.arange(0, 32, 2, dtype=np.int64)[None, :]) & 3).max(axis=1)
        e = np.where(e == MAX_EXPONENT, e + extra, e)
    return np.where(e > 0, np.left_shift(np.int64(1), e), 0)


def _spawn_arrays(after: np.ndarray, boards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`_spawn_of`: ([n] cells, [n] exponents) for [n] after-states and boards."""
    diff = np.asarray(after, np.uint64) ^ np.asarray(boards, np.uint64)
    shifts = np.arange(0, 64, 4, dtype=np.uint64)
    nib = (diff[:, None] >> shifts[None, :]) & np.uint64(0xF)
    cells = np.argmax(nib != 0, axis=1)
    exps = np.take_along_axis(nib, cells[:, None], axis=1)[:, 0].astype(np.int64)
    return cells.astype(np.int64), exps


def _spawn_of(after: int, board: int) -> tuple[int, int]:
    """The (cell, exponent) that turned the after-state ``after`` into ``board``."""
    diff = int(after) ^ int(board)
    cell = (diff.bit_length() - 1) // 4
    return cell, (int(board) >> (4 * cell)) & 0xF


@dataclass(frozen=True)
class Trajectory:
    """A replayed game: ``boards`` [n+1] (before each move, then final), ``scores`` [n+1], ``actions`` [n]."""

    boards: np.ndarray
    afterstates: np.ndarray
    scores: np.ndarray
    actions: np.ndarray
    supers: np.ndarray | None = None
    """[n+1] the exact values of each board's tiles past 32768 (None: all zero)."""

    @property
    def max_tiles(self) -> np.ndarray:
        """[n+1] largest tile value on the board before each move and at the end."""
        return max_tiles(self.boards, self.supers)

    @property
    def final_supers(self) -> int:
        """The final board's supers (0 when no tile is past 32768)."""
        return 0 if self.supers is None or not len(self.supers) else int(self.supers[-1])

    def spawns(self) -> list[tuple[int, int]]:
        """(cell, exponent) of the tile spawned after each move."""
        cells, exps = _spawn_arrays(self.afterstates, self.boards[1:])
        return list(zip(cells.tolist(), exps.tolist(), strict=True))


def replay_actions(seed: int, actions: Sequence[Any] | np.ndarray | str, p_two: float = P_TWO,
                   penalty: bool = False, rules: int = RULES_VERSION) -> Trajectory:
    """Re-play ``actions`` in a fresh ``Game(seed=seed, p_two=p_two, rules=rules)``; an illegal action
    raises.

    The numba kernel makes the same calls as :class:`ai2048.Game`, so this is that game, fast. With
    ``penalty`` a move that changes nothing is replayed as seed 004 plays it (``Game.step(a,
    penalty=True)``: -1, and a tile spawns), for the results of ``eval --illegal-move penalty``.
    """
    acts = (
        str_to_actions(actions)
        if isinstance(actions, str)
        else np.array([check_action(a) for a in actions], np.uint8)
    )
    seed = checks.seed("seed", seed, optional=False)
    p = np.float64(checks.probability("p_two", p_two))
    exact = check_rules(rules) != CAPPED_RULES
    boards, after, scores, bad, supers = replay_boards(engine.seed_state(seed), p, acts, bool(penalty), exact)
    if bad >= 0:
        board = int(boards[bad])
        raise ValueError(
            f"move {int(bad) + 1} ({Action(int(acts[bad])).name}) is illegal on board {_board_hex(board)}: "
            "these actions do not come from this seed"
        )
    return Trajectory(boards=boards, afterstates=after, scores=scores, actions=acts, supers=supers)


def replay_differences(game: dict[str, Any], t: Trajectory) -> list[str]:
    """How a game's recorded ``score``, ``moves``, ``max_tile`` and ``final_board`` (those present) differ
    from its replay ``t``, one phrase each ("max_tile 256, but the file says 512"); [] when they agree.

    An eval result, a games stream or a plot input is checked against its replay with this, so an
    edited figure cannot pass as the game's own.
    """
    final = int(t.boards[-1])
    replayed: dict[str, int] = {"score": int(t.scores[-1]), "moves": len(t.actions),
                                "max_tile": _max_tile(final, t.final_supers), "final_board": final}
    if t.final_supers or "final_supers" in game:
        replayed["final_supers"] = t.final_supers
    out = []
    for key, value in replayed.items():
        if key not in game:
            continue
        said = game[key]
        if key == "final_board":
            try:
                same = _parse_board(said) == value
            except (TypeError, ValueError):
                same = False
            shown = _board_hex(value)
        else:
            same = not isinstance(said, bool) and said == value
            shown = str(value)
        if not same:
            out.append(f"{key} {shown}, but the file says {str(said)[:40]}")
    return out


def new_seed() -> int:
    """A fresh random seed (from OS entropy) that a record can store, so every game replays."""
    return int(np.random.SeedSequence().generate_state(1, np.uint64)[0])


@dataclass
class GameRecord:
    """One game: enough to replay it (seed, p_two, actions) and to check the replay (the rest)."""

    seed: int
    actions: list[int]
    spawns: list[tuple[int, int]]
    scores: list[int]
    start_board: int
    p_two: float = P_TWO
    agent: str | None = None
    agent_config: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    rules_version: int = RULES_VERSION
    final_board: int = -1
    """The board at the end; rebuilt from start board, moves and spawns when not given."""
    final_supers: int = -1
    """The exact values of the final board's tiles past 32768 (:mod:`ai2048.engine.supertiles`);
    rebuilt with ``final_board`` when not given."""
    source: str | None = field(default=None, compare=False)
    """The file the record was loaded from (not saved), named in error messages."""

    def __post_init__(self) -> None:
        if self.final_board < 0:
            b, s = self.start_board, 0
            exact = self.rules_version != CAPPED_RULES
            for a, (cell, e) in zip(self.actions, self.spawns, strict=False):
                if exact:
                    nb, ns, _ = exact_move(np.uint64(b), np.int64(s), np.int64(a))
                else:
                    nb, ns = engine.move(np.uint64(b), np.int64(a))[0], 0
                b, s = int(nb) | (e << (4 * cell)), int(ns)
            self.final_board = b
            if self.final_supers < 0:
                self.final_supers = s
        if self.final_supers < 0:
            self.final_supers = 0

    @property
    def moves(self) -> int:
        return len(self.actions)

    @property
    def final_score(self) -> int:
        return self.scores[-1] if self.scores else 0

    @property
    def max_tile(self) -> int:
        return _max_tile(self.final_board, self.final_supers)

    @classmethod
    def from_actions(
        cls,
        seed: int,
        actions: Sequence[Any] | str,
        *,
        p_two: float = P_TWO,
        agent: str | None = None,
        agent_config: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        rules: int = RULES_VERSION,
    ) -> GameRecord:
        """Build the record of the game that ``actions`` play from ``seed`` (replaying it)."""
        t = replay_actions(seed, actions, p_two, rules=rules)
        return cls(
            seed=int(seed),
            actions=[int(a) for a in t.actions],
            spawns=t.spawns(),
            scores=[int(s) for s in t.scores[1:]],
            start_board=int(t.boards[0]),
            p_two=float(p_two),
            agent=agent,
            agent_config=dict(agent_config or {}),
            meta=dict(meta or {}),
            rules_version=check_rules(rules),
            final_board=int(t.boards[-1]),
            final_supers=t.final_supers,
        )

    def _where(self) -> str:
        return f"record {self.source}" if self.source else "record"

    def replay(self) -> Trajectory:
        """Re-play the actions from the seed and check the start board, every spawn and every score.

        Raises :class:`RecordError` naming the file and the first move that differs.
        """
        where = self._where()
        try:
            exact = check_rules(self.rules_version) != CAPPED_RULES
        except ValueError:
            raise RecordError(
                f"{where} was made under rules version {self.rules_version}, but this ai2048 plays rules "
                f"versions {CAPPED_RULES} and {RULES_VERSION}; it cannot be replayed here"
            ) from None
        if not (len(self.actions) == len(self.spawns) == len(self.scores)):
            raise RecordError(
                f"{where} is inconsistent: {len(self.actions)} actions, {len(self.spawns)} spawns, "
                f"{len(self.scores)} scores (one of each per move)"
            )
        acts64 = np.array(self.actions, dtype=np.int64)
        out_of_range = np.flatnonzero((acts64 < 0) | (acts64 > 3))
        if out_of_range.size:
            i = int(out_of_range[0])
            raise RecordError(f"{where} is corrupt: action {int(acts64[i])} at move {i + 1} is not 0..3")
        acts = acts64.astype(np.uint8)
        boards, after, scores, bad, supers = replay_boards(
            engine.seed_state(self.seed), np.float64(self.p_two), acts, False, exact)
        if int(boards[0]) != self.start_board:
            raise RecordError(
                f"{where} does not replay: its start board {_board_hex(self.start_board)} differs from "
                f"seed {self.seed}'s start board {_board_hex(int(boards[0]))}"
            )
        n = len(acts) if bad < 0 else int(bad)
        cells, exps = _spawn_arrays(after[:n], boards[1 : n + 1])
        rec_spawns = np.array(self.spawns[:n], dtype=np.int64).reshape(n, 2)
        wrong_spawn = np.flatnonzero((rec_spawns[:, 0] != cells) | (rec_spawns[:, 1] != exps))
        wrong_score = np.flatnonzero(np.array(self.scores[:n], dtype=np.int64) != scores[1 : n + 1])
        first = min(wrong_spawn[:1].tolist() + wrong_score[:1].tolist(), default=None)
        if first is not None:
            i = int(first)
            at = f"{where} does not replay at move {i + 1} ({Action(int(acts[i])).name}): "
            if wrong_spawn.size and wrong_spawn[0] == i:
                raise RecordError(
                    at + f"it records a spawn at cell {self.spawns[i][0]} with exponent {self.spawns[i][1]}, "
                    f"the seed gives cell {int(cells[i])} with exponent {int(exps[i])}"
                )
            raise RecordError(at + f"it records score {self.scores[i]}, the rules give {int(scores[i + 1])}")
        if bad >= 0:
            raise RecordError(
                f"{where} does not replay at move {int(bad) + 1}: {Action(int(acts[bad])).name} is illegal "
                "on board "
                f"{_board_hex(int(boards[bad]))}"
            )
        if int(boards[-1]) != self.final_board:
            raise RecordError(
                f"{where} does not replay: its final board {_board_hex(self.final_board)} differs from "
                f"the replayed final board {_board_hex(int(boards[-1]))}"
            )
        if int(supers[-1]) != self.final_supers:
            raise RecordError(
                f"{where} does not replay: its final tiles past 32768 (final_supers {self.final_supers:#x}) "
                f"differ from the replay's ({int(supers[-1]):#x})"
            )
        return Trajectory(boards=boards, afterstates=after, scores=scores, actions=acts, supers=supers)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (see the module docstring)."""
        d = {
            "format": RECORD_FORMAT,
            "version": RECORD_VERSION,
            "rules_version": self.rules_version,
            "seed": self.seed,
            "p_two": self.p_two,
            "start_board": _board_hex(self.start_board),
            "actions": actions_to_str(self.actions),
            "spawns": " ".join(f"{c:x}{e}" for c, e in self.spawns),
            "scores": list(self.scores),
            "moves": self.moves,
            "final_score": self.final_score,
            "final_board": _board_hex(self.final_board),
            "max_tile": self.max_tile,
            "agent": self.agent,
            "agent_config": self.agent_config,
            "meta": self.meta,
        }
        if self.final_supers:
            d["final_supers"] = self.final_supers
        return d

    @classmethod
    def from_dict(cls, d: Any, source: str | None = None) -> GameRecord:
        """Parse the JSON form; anything foreign or malformed raises :class:`RecordError`."""
        where = f"record {source}" if source else "record"
        if not isinstance(d, dict) or d.get("format") != RECORD_FORMAT:
            found = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise RecordError(
                f"{where} is not an ai2048 game record (format {found!r}, expected {RECORD_FORMAT!r}); "
                "records are written by `ai2048 play`, `watch` and `eval --record`"
            )
        if d.get("version") != RECORD_VERSION:
            raise RecordError(
                f"{where} has record version {d.get('version')!r}; this ai2048 reads version {RECORD_VERSION}"
            )
        try:
            spawns = []
            for tok in _json_field(d, "spawns", (str,)).split():
                if len(tok) != 2 or tok[0] not in "0123456789abcdefABCDEF" or not tok[1].isdigit():
                    raise ValueError(f"spawn token {tok!r} is not <cell hex><exponent>")
                spawns.append((int(tok[0], 16), int(tok[1])))
            scores = _json_field(d, "scores", (list,))
            for name in ("start_board", "final_board"):
                if name in d and (isinstance(d[name], bool) or not isinstance(d[name], (str, int))):
                    raise TypeError(f"field {name!r} must be a hex string such as '0x0000000000000011'")
            rec = cls(
                seed=checks.seed("seed", d["seed"], optional=False),
                actions=[int(a) for a in str_to_actions(d["actions"])],
                spawns=spawns,
                scores=[json_int(s, f"score {i + 1}") for i, s in enumerate(scores)],
                start_board=_parse_board(d["start_board"]),
                p_two=checks.probability("p_two", d.get("p_two", P_TWO)),
                agent=_json_field(d, "agent", (str,), None),
                agent_config=dict(_json_field(d, "agent_config", (dict,), {})),
                meta=dict(_json_field(d, "meta", (dict,), {})),
                rules_version=json_int(d.get("rules_version", RULES_VERSION), "rules_version"),
                final_board=_parse_board(d["final_board"]) if "final_board" in d else -1,
                final_supers=json_int(d["final_supers"], "final_supers") if "final_supers" in d else -1,
                source=source,
            )
        except KeyError as e:
            raise RecordError(f"{where} is corrupt: it has no {e.args[0]!r} field") from e
        except (TypeError, ValueError) as e:
            raise RecordError(f"{where} is corrupt: {e}") from e
        return rec

    def save(self, path: str | Path) -> Path:
        """Write the record as JSON atomically (temp file + rename); returns the path."""
        path = Path(path)
        text = "{\n" + ",\n".join(
            f"  {json.dumps(k)}: {json.dumps(v, default=_json_value)}" for k, v in self.to_dict().items()
        ) + "\n}\n"
        atomic_write(path, lambda f: f.write(text), mode="w")
        return path

    @classmethod
    def load(cls, path: str | Path) -> GameRecord:
        """Read a record; a missing, non-JSON or foreign file raises an error naming it."""
        path = Path(path)
        d = read_record_json(path)
        return cls.from_dict(d, source=str(path))


def read_record_json(path: Path) -> Any:
    """The JSON in ``path``: missing -> FileNotFoundError, not JSON -> :class:`RecordError`, both naming
    it."""
    try:
        return read_json(path, "record")
    except ValueError as e:
        raise RecordError(str(e)) from e


def _json_value(o: Any) -> Any:
    """numpy scalars as numbers, anything else JSON lacks (paths, enums) as its text."""
    if isinstance(o, np.generic):
        return o.item()
    return str(o)


def load_record(path: str | Path) -> GameRecord:
    """Shorthand for :meth:`GameRecord.load`."""
    return GameRecord.load(path)


Policy = Callable[[int], Any]


def _policy_of(agent: Any) -> Policy:
    if hasattr(agent, "act"):
        return agent.act  # type: ignore[no-any-return]
    if callable(agent):
        return agent  # type: ignore[no-any-return]
    raise TypeError(
        f"expected an agent with act(board) or a callable board -> action, got {type(agent).__name__}"
    )


class GameRecorder:
    """A :class:`Game` that remembers its moves and spawns, with undo; ``.record()`` gives the record.

    Undo restores the whole game including its random stream, so the record of an undone game is
    still exactly the replay of its seed and remaining actions. ``max_undo``: how many of the last
    moves can be taken back (None: all); each kept move holds a copy of the game (about 2 KiB), so a
    server holding many long games bounds it.
    """

    def __init__(self, seed: int | None = None, p_two: float = P_TWO, *, undo: bool = True,
                 max_undo: int | None = None, rules: int = RULES_VERSION) -> None:
        if max_undo is not None:
            checks.whole("max_undo", max_undo, 0, why="or None for no bound")
        self._keep_history = undo and max_undo != 0
        self.seed = new_seed() if seed is None else checks.seed("seed", seed, optional=False)
        self.game = Game(seed=self.seed, p_two=p_two, rules=rules)
        self.start_board = self.game.board
        self.actions: list[int] = []
        self.spawns: list[tuple[int, int]] = []
        self.scores: list[int] = []
        self._history: deque[Game] = deque(maxlen=max_undo)

    @property
    def board(self) -> int:
        return self.game.board

    @property
    def can_undo(self) -> bool:
        return bool(self._history)

    def step(self, action: Any) -> int:
        """Play a legal ``action`` (an illegal one raises ``IllegalMoveError``); returns the reward."""
        a = check_action(action)
        before = copy.deepcopy(self.game) if self._keep_history else None
        after = self.game.after(a)[0]
        reward = self.game.step(a)
        if before is not None:
            self._history.append(before)
        self.actions.append(a)
        self.spawns.append(_spawn_of(after, self.game.board))
        self.scores.append(self.game.score)
        return reward

    def undo(self) -> bool:
        """Take back the last move (and its spawn); False if there is nothing to undo."""
        if not self._history:
            return False
        self.game = self._history.pop()
        self.actions.pop()
        self.spawns.pop()
        self.scores.pop()
        return True

    def record(
        self,
        agent: str | None = None,
        agent_config: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> GameRecord:
        """The record of the game so far."""
        return GameRecord(
            seed=self.seed,
            actions=list(self.actions),
            spawns=list(self.spawns),
            scores=list(self.scores),
            start_board=self.start_board,
            p_two=self.game.p_two,
            agent=agent,
            agent_config=dict(agent_config or {}),
            meta=dict(meta or {}),
            rules_version=self.game.rules,
            final_board=self.game.board,
            final_supers=self.game.supers,
        )


def record_game(
    agent: Any,
    seed: int | None = None,
    *,
    p_two: float = P_TWO,
    max_moves: int | None = None,
    agent_name: str | None = None,
    agent_config: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
    on_move: Callable[[GameRecorder], None] | None = None,
) -> GameRecord:
    """Play one game with ``agent`` (``act(board)`` or a callable) from ``seed`` and return its record.

    The agent is reset with the game's seed when it has ``reset``. ``on_move`` is called after every
    move (``watch`` redraws the board there). An illegal move raises, naming the agent and the board.
    """
    if max_moves is not None:
        checks.whole("max_moves", max_moves, 0, why="or None to play to the end")
    rec = GameRecorder(seed, p_two, undo=False)
    if hasattr(agent, "reset"):
        agent.reset(rec.seed)
    policy = _policy_of(agent)
    name = agent_name or getattr(agent, "name", None) or type(agent).__name__
    while not rec.game.is_over and (max_moves is None or rec.game.moves < max_moves):
        view, forced = rec.game.to_play()
        a = forced if forced >= 0 else policy(view)
        try:
            rec.step(a)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"agent {name!r} chose {a!r} on board {_board_hex(rec.board)} (move {rec.game.moves + 1}): "
                f"{e}"
            ) from e
        if on_move is not None:
            on_move(rec)
    return rec.record(agent=name, agent_config=agent_config, meta=meta)
