"""Distilled endgame tables: the table positions the ``endgame`` agent looks up in real games.

Inside a formation the agent reads, for each move, one table position (:func:`ai2048.tables.lookup
.looked_up`), and games visit a small corner of each table (docs/tables.md measures it). ``ai2048 tables
distill`` plays seeded games with the built tables, keeps every position they looked up with its
value, and writes each table's part as one small file (:func:`ai2048.tables.store.write_distilled`);
shipped in the package, those files let the agent play where no table is built. A decision whose
positions a distilled table does not all hold goes to the network's search, so on the positions
it holds the agent decides exactly as with the full tables (game-difficulty/2048EndgameTablebase
ships such a distilled table with its standalone agent; this code is our own).

    ai2048 tables distill --games 2800 --seed 920000 --set depth=2 --set downgrade=highest \
        --workers 2 --out src/ai2048/tables/distilled
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.evaluate.local import worker_stream
from ai2048.game import Game


def distill_game(agent: Any, seed: int) -> dict[str, np.ndarray]:
    """Game ``seed`` played by the endgame ``agent``: the unique keys each table looked up to decide
    its moves (:meth:`~ai2048.agents.endgame.EndgameAgent.looked_up`)."""
    agent.reset(seed)
    g = Game(seed=seed)
    found: dict[str, list[np.ndarray]] = {}
    while not g.is_over:
        view, forced = g.to_play()
        for name, keys in agent.looked_up(view).items():
            found.setdefault(name, []).append(keys)
        g.step(forced if forced >= 0 else agent.act(view))
    return {name: np.unique(np.concatenate(parts)) for name, parts in found.items()}


def collect(config: dict[str, Any], *, games: int, seed: int, workers: int = 1,
            progress: bool = True) -> dict[str, np.ndarray]:
    """Play ``games`` games of ``make_agent("endgame", **config)`` (seeds ``seed``, ``seed + 1``, ...)
    in ``workers`` processes; returns each table's looked-up keys (sorted, unique, zeros dropped)."""
    from ai2048.agents import make_agent
    from ai2048.checks import whole

    whole("games", games, lo=1)
    whole("workers", workers, lo=1, hi=256)
    whole("seed", seed, lo=0)
    agent = make_agent("endgame", **config)
    built_tables(agent)  # a bad setting or a missing table fails here, before any game
    found: dict[str, list[np.ndarray]] = {}
    label = "distill: games" if progress else None
    with contextlib.closing(worker_stream(agent, distill_game, range(seed, seed + games), workers,
                                          progress=label)) as stream:  # the workers end with it
        for got in stream:
            for name, keys in got.items():
                found.setdefault(name, []).append(keys)
    out = {}
    for name, parts in found.items():
        keys = np.unique(np.concatenate(parts))
        out[name] = keys[keys != 0]
    return out


def built_tables(agent: Any) -> list[Any]:
    """The endgame agent's tables, each a built one (not a distilled copy)."""
    from ai2048.tables import store

    for table in agent.tables:
        if table.meta.get("distilled"):
            raise ValueError(f"table {table.spec.name} is not built (the agent reads its distilled copy): "
                             f"distill from built tables; run: {store.build_command(table.spec.name)}")
    return list(agent.tables)


def write(config: dict[str, Any], looked: dict[str, np.ndarray], out: str | Path,
          info: dict[str, Any]) -> dict[str, int]:
    """Write every table's distilled file into folder ``out``; returns the positions each kept."""
    from ai2048.agents.endgame import load_tables
    from ai2048.tables import formations, store

    spec = config.get("tables", "default")
    names = formations.DEFAULT if spec == "default" else tuple(n.strip() for n in str(spec).split(","))
    tables = load_tables(names, config.get("tables_dir"))
    for table in tables:
        if table.meta.get("distilled"):
            raise ValueError(f"table {table.spec.name} is not built: run "
                             f"{store.build_command(table.spec.name)}")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    kept = {}
    for table in tables:
        keys = looked.get(table.spec.name, np.zeros(0, np.uint64))
        kept[table.spec.name] = store.write_distilled(folder / f"{table.spec.name}.npz", table, keys, info)
    return kept
