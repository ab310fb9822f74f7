"""Late-game restart pools: the first board holding a tile in each of an agent's seeded games.

A pool is where training and measurement start when the late game is what they are about: the
n-tuple trainer restarts games from it (``train ntuple --restart-pool FILE``, Jaśkowski 2018's
restarts from positions the player itself reaches) and ``benchmarks/late_game_conversion.py``
plays every board on to measure the 16384 -> 32768 conversion. Game ``i`` is played with seed
``seed + i`` until its largest tile first reaches ``tile``; that board and the score so far join
the pool (games that end before it, or at it, give none: a pool board has a move to play).

A pool read back holds only boards a game reaches (:func:`check_reachable`): one has a 2 or a 4 (the
tile spawned after the last move), a legal move, and the score and move count its tiles imply; a
pool edited to sixteen 32768s or a board with no move is refused, naming the board.

The file is JSON, written atomically:
``{"format", "rules_version", "tile", "agent", "config", "patterns", "seed", "games", "boards":
[{"seed", "board", "score", "moves"}, ...]}``; ``patterns`` names the n-tuple pattern set of the
agent's network (None for an agent without one), so a trainer can refuse boards from another.

    ai2048 pool ntuple --set depth=2 --tile 16384 --games 1000 --seed 700000 --out pool16k.json
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.checkpoint import read_json, write_json
from ai2048.evaluate.local import worker_stream
from ai2048.game import Game, is_over
from ai2048.records import max_tiles
from ai2048.rules import P_TWO, RULES_VERSION, RULES_VERSIONS

POOL_FORMAT = "ai2048-restart-pool/1"


@dataclass(frozen=True)
class RestartPool:
    """A pool file's boards and what made them."""

    boards: np.ndarray
    """uint64 [n]: the first board of each game holding ``tile``."""
    scores: np.ndarray
    """int64 [n]: the game's score when that board appeared."""
    tile: int
    agent: str
    config: dict[str, Any]
    patterns: str | None
    path: Path | None = None

    def to_json(self, seed: int, games: int, seeds: list[int], moves: list[int]) -> dict[str, Any]:
        return {
            "format": POOL_FORMAT, "rules_version": RULES_VERSION, "tile": self.tile, "agent": self.agent,
            "config": self.config, "patterns": self.patterns, "seed": seed, "games": games,
            "boards": [{"seed": s, "board": int(b), "score": int(c), "moves": m}
                       for s, b, c, m in zip(seeds, self.boards, self.scores, moves, strict=True)],
        }


def read_pool(path: str | Path) -> RestartPool:
    """A pool file, checked: its format and rules version, and at least one board, each holding the
    pool's tile. Errors name the file and the fix."""
    path = Path(path)
    if path.exists() and not path.is_file():
        raise ValueError(f"restart pool {path} is not a file; name the JSON file `ai2048 pool` wrote")
    if not path.is_file():
        raise ValueError(f"restart pool {path} does not exist; make one with "
                         f"`ai2048 pool ntuple --out {path}`")
    data = read_json(path, "restart pool")
    if data.get("format") != POOL_FORMAT:
        raise ValueError(f"{path} is not a restart pool (format {data.get('format')!r}, expected "
                         f"{POOL_FORMAT!r}); make one with `ai2048 pool`")
    if data.get("rules_version") not in RULES_VERSIONS:  # its boards hold at most one 32768: either serves
        raise ValueError(f"restart pool {path} was made under rules version {data.get('rules_version')}, "
                         f"this ai2048 plays versions {', '.join(map(str, RULES_VERSIONS))}; make the pool "
                         "again with `ai2048 pool`")
    tile = checks.tile(f"restart pool {path}: tile", data.get("tile"),
                       why="make the pool again with `ai2048 pool`")
    rows = data.get("boards")
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"restart pool {path} holds no boards (none of its games reached {tile}); "
                         "make it from more games or a stronger agent")
    for i, r in enumerate(rows):
        try:
            if not isinstance(r, dict):
                raise ValueError(f"it is a {type(r).__name__}, not an object")
            check_reachable(r.get("board"), r.get("score"), r.get("moves"))
        except ValueError as e:
            raise ValueError(f"restart pool {path}: board {i} is not a board a game reaches: {e}; the file "
                             "was edited or damaged: make the pool again with `ai2048 pool`") from None
    boards = np.array([r["board"] for r in rows], dtype=np.uint64)
    scores = np.array([r["score"] for r in rows], dtype=np.int64)
    top = max_tiles(boards)
    if (top < tile).any():
        i = int(np.argmax(top < tile))
        raise ValueError(f"restart pool {path}: board {i} has largest tile {int(top[i])}, below the pool's "
                         f"tile {tile}; make the pool again with `ai2048 pool`")
    if (scores < 0).any():
        raise ValueError(f"restart pool {path}: a board has a negative score; make the pool again")
    patterns = data.get("patterns")
    return RestartPool(boards, scores, tile, str(data.get("agent")), dict(data.get("config") or {}),
                       None if patterns is None else str(patterns), path)


def _whole(name: str, value: Any, hi: int) -> int:
    if value is None:
        raise ValueError(f"it has no {name}")
    return checks.whole(name, value, 0, hi)


def check_reachable(board: Any, score: Any, moves: Any = None) -> None:
    """Raise ValueError unless ``board`` (with ``score`` and, when given, ``moves``) is a position a
    standard game reaches with a move still to play.

    Exact invariants of every game: the tile spawned after each move stays on the board (so it holds
    a 2 or a 4); each tile 2**k cost between (k-2)*2**k points (built from spawned 4s) and
    (k-1)*2**k (from 2s), and the score is the sum of those costs; the tiles sum to the spawns,
    2 or 4 for each of the ``moves + 2`` (two at the start).
    """
    b = _whole("board", board, (1 << 64) - 1)
    score = _whole("score", score, 1 << 62)
    ks = [(b >> (4 * i)) & 0xF for i in range(16)]
    if not any(k in (1, 2) for k in ks):
        raise ValueError(f"board {b:#018x} holds no 2 or 4 (a game's last spawn is one)")
    lo = sum((k - 2) << k for k in ks if k >= 2)
    hi = sum((k - 1) << k for k in ks if k >= 1)
    if not lo <= score <= hi:
        raise ValueError(f"score {score} is not one its tiles make ({lo}..{hi})")
    if moves is not None:
        moves = _whole("moves", moves, 1 << 40)
        total = sum(1 << k for k in ks if k)
        if not 2 * (moves + 2) <= total <= 4 * (moves + 2):
            raise ValueError(f"its tiles sum to {total}, which {moves} moves cannot spawn "
                             f"({2 * (moves + 2)}..{4 * (moves + 2)})")
    if is_over(b):
        raise ValueError(f"board {b:#018x} has no legal move (the game is over there)")


def first_board(agent: Any, task: tuple[int, int]) -> tuple[int, int, int, int] | None:
    """Game ``seed`` played by ``agent`` (reset with the seed) until its largest tile reaches ``tile``,
    ``task = (seed, tile)``: (seed, board, score, moves), or None if it ended before."""
    seed, tile = task
    g = Game(seed=seed)
    if hasattr(agent, "reset"):  # as every evaluation plays a game: the agent's own randomness from the seed
        agent.reset(seed)
    moves = 0
    while not g.is_over:
        view, forced = g.to_play()
        g.step(forced if forced >= 0 else agent.act(view))
        moves += 1
        if g.max_tile >= tile:  # a board with no move left is no place to restart from
            return None if g.is_over else (seed, int(g.board), int(g.score), moves)
    return None


def make_pool(agent: str, config: dict[str, Any], *, tile: int = 16384, games: int = 1000, seed: int = 0,
              workers: int = 1, progress: bool = True) -> tuple[RestartPool, dict[str, Any]]:
    """Play ``games`` games of ``agent`` (seeds ``seed``, ``seed + 1``, ...) in ``workers`` processes
    and keep the first board of each that holds ``tile``; returns the pool and its file's JSON."""
    checks.whole("games", games, lo=1)
    checks.whole("workers", workers, lo=1, hi=256)
    checks.whole("seed", seed, lo=0)
    tile = checks.tile("tile", tile, why="e.g. 16384")
    from ai2048.agents import make_agent

    player = make_agent(agent, **config)  # a bad agent or setting fails here, before any game
    inner = getattr(player, "search", player)  # the endgame agent plays its network through an NTupleAgent
    net = getattr(player, "net", None) or getattr(inner, "net", None)
    patterns = getattr(net, "patterns", None)
    tasks = [(seed + i, tile) for i in range(games)]
    label = f"pool: first {tile}" if progress else None
    with contextlib.closing(worker_stream(player, first_board, tasks, workers, ordered=True,
                                          progress=label)) as stream:  # the workers end with it
        found = [r for r in stream if r is not None]
    seeds, boards, scores, moves = (list(c) for c in zip(*found, strict=True)) if found else ([], [], [], [])
    pool_ = RestartPool(np.array(boards, np.uint64), np.array(scores, np.int64), tile, agent, dict(config),
                        None if patterns is None else str(patterns))
    return pool_, pool_.to_json(seed, games, seeds, moves)


def pool_from_games(path: str | Path, tile: int = 32768) -> tuple[RestartPool, dict[str, Any]]:
    """The pool of an evaluation's games already played (``eval --out`` writes them: the result JSON, or
    the games file beside it while it runs): each game that reached ``tile`` replayed from its seed
    and actions to the first board holding it. No game is played, so a pool of 32768s (the start of
    the game past 32768) costs one replay of the games an evaluation played anyway."""
    from ai2048.checkpoint import read_jsonl
    from ai2048.evaluate.stream import STREAM_FORMAT
    from ai2048.records import replay_actions

    tile = checks.tile("tile", tile, why="e.g. 32768")
    path = Path(path)
    games: Any
    if path.suffix == ".jsonl":
        lines = read_jsonl(path)
        if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != STREAM_FORMAT:
            raise ValueError(f"{path} is not an evaluation's games file (`ai2048 eval --out R.json` writes "
                             "R.games.jsonl)")
        head, games = lines[0], lines[1:]
    else:
        head = read_json(path, "evaluation result")
        games = head.get("games") if isinstance(head, dict) else None
        if not isinstance(games, list):
            raise ValueError(f"{path} is not an evaluation result with its games (`ai2048 eval --out`)")
    rules = head.get("rules_version", 0)
    p_two = head.get("p_two", P_TWO)
    found = []
    for i, g in enumerate(games):
        if not isinstance(g, dict) or not isinstance(g.get("max_tile"), int) or g["max_tile"] < tile:
            continue
        try:
            t = replay_actions(g["seed"], g["actions"], p_two, rules=rules)
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}: game {i} does not replay: {e}") from None
        k = int(np.argmax(t.max_tiles >= tile))
        if t.max_tiles[k] < tile or (t.supers is not None and t.supers[k]):
            raise ValueError(f"{path}: game {i} says max_tile {g['max_tile']}, but its actions do not reach "
                             f"{tile} as its first tile past 32768")
        if k < len(t.actions):  # the game went on from it: a board with a move
            found.append((int(g["seed"]), int(t.boards[k]), int(t.scores[k]), k))
    if not found:
        raise ValueError(f"{path}: none of its {len(games)} games reached {tile}")
    seeds, boards, scores, moves = (list(c) for c in zip(*found, strict=True))
    pool_ = RestartPool(np.array(boards, np.uint64), np.array(scores, np.int64), tile, str(head.get("agent")),
                        dict(head.get("config") or {}), None)
    return pool_, pool_.to_json(int(head.get("seed", 0)), len(games), seeds, moves)


def save_pool(path: str | Path, data: dict[str, Any]) -> None:
    """Write a pool's JSON atomically."""
    write_json(path, data)
