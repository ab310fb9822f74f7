"""The ``endgame`` agent: the shipped n-tuple network's expectimax away from the formations, the
endgame tables inside them.

Before each move the agent asks whether the board, under any of its 8 symmetries, is in a table's
formation (:func:`ai2048.tables.lookup.match`: the anchor holds the table's target, the other
fixed cells larger tiles, the free cells smaller ones). If so it plays the move whose table value
(the probability of building the target beside the anchor without moving a large tile) is the
largest (moves of exactly equal value are told apart by the network's search), as long as that
value is above ``min_value``; otherwise, and when no table applies, the
network's search moves (macroxue/2048-ai plays this way: a search drives the large tiles into
place, lookups build the next one). The network never trained on boards holding two very large
tiles, so by default its search reads every board through the map that closes the highest gap of
the board being decided (``16384 4096 2048`` as ``8192 4096 2048``; ``ntuple.kernels.set_root_gap``):
one map for the whole search, so the merges that fill the gap read as the progress they are.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.agents.base import BaseAgent
from ai2048.agents.ntuple import DOWNGRADE, MODEL, NTupleAgent
from ai2048.agents.options import DEPTH, P_TWO_SEARCH, PROB_CUTOFF, TT_BITS, agent_options, option
from ai2048.agents.simple import named, playable
from ai2048.engine.board import max_exponent
from ai2048.engine.moves import four_moves
from ai2048.ntuple.kernels import LATE_DOWNGRADE_FROM
from ai2048.rules import P_TWO, Action
from ai2048.tables import formations, store
from ai2048.tables.lookup import looked_up, match, move_values

_LOADED: dict[tuple[str, str], store.Table] = {}


def check_table_names(tables: Any) -> tuple[str, ...]:
    """A set (``"default"``, ``"large"``), or a comma-separated list (or sequence) of registered table
    names and sets."""
    if isinstance(tables, str):
        parts: tuple[str, ...] = tuple(t.strip() for t in tables.split(",") if t.strip())
    elif isinstance(tables, (list, tuple)) and all(isinstance(t, str) for t in tables):
        parts = tuple(tables)
    else:
        raise TypeError(f"tables must be 'default', 'large' or comma-separated table names, got {tables!r}")
    if not parts:
        raise ValueError("tables is empty: name at least one table (see `ai2048 tables`), or 'default'")
    names = formations.expand(parts)
    seen: dict[tuple[str, int], str] = {}
    for n in names:  # one table decides each formation and target
        s = formations.spec(n)
        other = seen.setdefault((s.formation.name, s.target), n)
        if other != n:
            raise ValueError(f"tables {other} and {n} both serve formation {s.formation.name} at target "
                             f"{2 ** s.target}: name one of them")
    return names


def load_tables(names: tuple[str, ...], directory: str | Path | None,
                verify: bool = False) -> list[store.Table]:
    """The tables ``names``, loaded once per process (memory-mapped, so processes share the pages);
    a table not built in ``directory`` is read from its distilled copy shipped in the package
    (``ai2048 tables distill``), if there is one."""
    out = []
    root = str(store.tables_dir(directory))
    for n in names:
        key = (root, n)
        if key not in _LOADED:
            try:
                _LOADED[key] = store.load(n, directory, verify=verify)
            except store.TableNotBuilt:
                shipped = store.load_distilled(n)
                if shipped is None:
                    raise
                _LOADED[key] = shipped
        out.append(_LOADED[key])
    return out


class EndgameAgent(BaseAgent):
    """The shipped network's search with endgame tables.

    Each option's help and values are declared once in the signature (``ai2048 agents endgame``
    prints them); docs/tables.md gives the strength at each depth and what ``downgrade`` does.
    """

    @agent_options
    def __init__(
        self,
        depth: int = option(
            3, DEPTH, web=(None, 3),
            help="the n-tuple network search's depth away from the tables (3 = 3-ply, 2 = 2-ply: "
            "max-chance-max)", source="Yeh et al. 2016; macroxue/2048-ai searches between lookups"),
        tables: str = option(
            "default", "the endgame tables to play from (`ai2048 tables` lists them): a set, 'default' or "
            "'large' (the 11-free-cell tables too; `ai2048 tables build large`), or table names",
            allowed="'default', 'large' or comma-separated table names",
            source="macroxue/2048-ai's lookup tables; game-difficulty/2048EndgameTablebase's formation "
            "tables (method only)"),
        tables_dir: str | Path | None = option(
            None, "the folder the tables were built in", source="this toolkit",
            allowed="a path, or None for $AI2048_TABLES or the user cache"),
        min_value: float = option(
            0.0, "a table's move is played only when its success probability is above this", "number", lo=0,
            hi=1, hi_open=True, web=(None, 0.99), source="this toolkit"),
        model: str | None = option(None, MODEL),
        weights: str | Path | None = option(
            None, "an n-tuple run directory or network file to search with instead",
            allowed="a path, or None", source="seed 004 (TD learning of n-tuple networks)"),
        prob_cutoff: float = option(1e-4, PROB_CUTOFF, web=(1e-4, None)),
        tt_bits: int = option(20, TT_BITS),
        p_two: float = option(P_TWO, P_TWO_SEARCH, web=None, help="probability of a 2; must be the one the "
                              "tables were solved for", source="2048 rules"),
        late_depth: int | None = option(
            None, "the network search's depth once the board holds a 16384 or more (the game to 32768)",
            "whole", lo=1, hi=6, none="depth throughout", web=None,
            source="this toolkit: the search deepened where the conversion is decided"),
        downgrade: bool | str = option(
            "rooted", DOWNGRADE, help="how the network values boards past its training: 'rooted' (every "
            "board of a search read with the tiles above the highest gap of the board being decided "
            "lowered), 'highest' (each board with its own highest gap closed), 'lowest' (Guei et al.), "
            "'residual' (a network trained with a residual late stage), or false"),
        dispatch: str = option(
            "target", "which table plays where several apply: 'target' (the one of the largest target with "
            "a move above min_value: the further goal) or 'value' (the highest success probability)",
            "choice", choices=("target", "value"), web=None,
            source="game-difficulty/2048EndgameTablebase's dispatcher (method only)"),
    ) -> None:
        names = check_table_names(tables)
        self.min_value = float(min_value)
        self.dispatch = dispatch
        self.p_two = p_two
        for n in names:
            if formations.spec(n).p_two != self.p_two:
                solved = formations.spec(n).p_two
                raise ValueError(f"table {n} is solved for p_two={solved}, not {self.p_two}")
        store.checked_dir(tables_dir, "tables_dir")
        self._where = (names, tables_dir)
        self._load()
        self.search = NTupleAgent(weights=weights, model=model, depth=depth, prob_cutoff=prob_cutoff,
                                  tt_bits=tt_bits, p_two=self.p_two, downgrade=downgrade)
        self.late = self.search  # the network's search from a 16384 on: the same, or a deeper one
        if late_depth is not None and late_depth != depth:  # one network, shared read-only
            self.late = NTupleAgent(weights=self.search.net, depth=late_depth, prob_cutoff=prob_cutoff,
                                    tt_bits=tt_bits, p_two=self.p_two, downgrade=downgrade)
        self.table_moves = 0
        self.moves = 0
        self.table_values(self._in_formation(self.tables[0]))  # the lookup kernels load here, not mid-game
        distilled = [t.spec.name for t in self.tables if t.meta.get("distilled")]
        if distilled:  # once per process (Python's default filter): the first agent built says it
            where = store.tables_dir(tables_dir)
            warnings.warn(store.DistilledTablesWarning(
                f"endgame: {', '.join(distilled)} not built in {where}: playing from the small distilled "
                "copies shipped in the package, weaker than the built tables (docs/tables.md gives both "
                f"rates). Build them once for the full strength: "
                f"{store.build_command(' '.join(distilled), tables_dir)}"), stacklevel=3)

    def _load(self) -> None:
        """The tables (memory-mapped, shared by the process's agents) and their formations."""
        self.tables = load_tables(*self._where)
        self.by_target: dict[tuple[str, int], store.Table] = {}
        for t in self.tables:
            self.by_target[(t.spec.formation.name, t.spec.target)] = t
        self.rules = {t.spec.name: t.spec.rules() for t in self.tables}
        forms = {t.spec.formation.name: t.spec.formation for t in self.tables}
        self.formations = [(f, f.places, f.anchors) for f in forms.values()]

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its settings and network search; the tables are loaded again by name on
        unpickling (a table is gigabytes on disk, not copied into the pickle)."""
        state = dict(vars(self))
        for k in ("tables", "by_target", "formations", "rules"):
            del state[k]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._load()

    @staticmethod
    def _in_formation(table: store.Table) -> int:
        """The table's first position as a board: its walls replaced by distinct large tiles."""
        f = table.spec.formation
        key = int(table.keys[0]) if table.keys.size else int(f.fixed_mask)
        large = iter(range(15, table.spec.target, -1))
        for q in f.fixed:
            e = table.spec.target if q == f.anchor else next(large)
            key = (key & ~(0xF << (4 * q))) | (e << (4 * q))
        return key

    def _matches(self, b: np.uint64) -> Iterator[tuple[Any, int, int, Any]]:
        """(table, symmetry, target, the table's rules) of every table whose formation ``b`` is in."""
        for f, places, anchors in self.formations:
            for s in range(8):
                t = int(match(b, np.int64(s), places, anchors))
                table = self.by_target.get((f.name, t)) if t else None
                if table is not None:
                    yield table, s, t, self.rules[table.spec.name]

    def decision(self, board: int) -> tuple[str | None, np.ndarray | None]:
        """(the name of the table that plays ``board``, or None where the network's search does; the
        best applicable table's value of each move, NaN: illegal or unknown, or None when the board is
        in no table's formation). The one spelling of the rule: a table plays when the best of its
        values is above ``min_value``, and ``dispatch`` picks among the tables that apply."""
        b = np.uint64(board)
        best: np.ndarray | None = None
        name: str | None = None
        best_rank = (-2, -1.0)
        legal: np.ndarray | None = None
        for table, s, t, rules in self._matches(b):
            v = move_values(b, np.int64(s), rules, table.keys, table.values, table.offsets)
            if table.meta.get("distilled"):  # a position it lacks is unknown: decide knowing all
                legal = four_moves(b) != b if legal is None else legal
                if np.isnan(v[legal]).any():
                    continue
            top = float(np.nanmax(v, initial=-1.0))
            # "target": the largest target whose table has a move above min_value (its goal is the
            # further one: 443-512 over 442-256 on the same board); "value": the highest value
            rank = (t if self.dispatch == "target" and top > self.min_value else -1, top)
            if best is None or rank > best_rank:
                best, best_rank, name = v, rank, table.spec.name
        return (name if best_rank[1] > self.min_value else None), best

    def table_values(self, board: int) -> np.ndarray | None:
        """[4] the best applicable table's value of each move (NaN: illegal or unknown), or None when
        the board is in no table's formation."""
        return self.decision(board)[1]

    def decider(self, board: int) -> str | None:
        """The name of the table whose move ``act`` plays on ``board``, or None for the network's search
        (no table applies, or none has a move above ``min_value``)."""
        return self.decision(board)[0]

    def looked_up(self, board: int) -> dict[str, np.ndarray]:
        """The keys each table reads to decide ``board`` (:func:`ai2048.tables.lookup.looked_up`), by
        table name: what ``ai2048 tables distill`` keeps of the games it plays."""
        b = np.uint64(board)
        found: dict[str, list[np.ndarray]] = {}
        for table, s, _, rules in self._matches(b):
            found.setdefault(table.spec.name, []).append(looked_up(b, np.int64(s), rules))
        return {name: np.concatenate(parts) for name, parts in found.items()}

    def searcher(self, board: int) -> NTupleAgent:
        """The network search that plays ``board``: ``late_depth``'s once it holds a 16384 or more."""
        return self.late if int(max_exponent(np.uint64(board))) >= LATE_DOWNGRADE_FROM else self.search

    def act(self, board: int) -> Action:
        b = playable(board)
        self.moves += 1
        name, v = self.decision(int(b))
        if name is not None and v is not None:
            self.table_moves += 1
            return self._table_move(int(b), v)
        return self.searcher(int(b)).act(int(b))

    def _table_move(self, board: int, v: np.ndarray) -> Action:
        """The table's best move; moves the table values exactly alike (building a small target is
        often certain by several moves) are told apart by the network's search, not by action order."""
        tied = np.nan_to_num(v, nan=-1.0) == np.nanmax(v)
        if tied.sum() == 1:
            return Action(int(np.argmax(tied)))
        searched = np.asarray(self.searcher(board).values(board), dtype=float)
        return Action(int(np.argmax(np.where(tied, searched, -np.inf))))

    def explain(self, board: int) -> dict[str, float]:
        name, v = self.decision(int(playable(board)))
        if name is not None and v is not None:
            return named(np.where(np.isnan(v), -np.inf, v))
        return self.searcher(int(playable(board))).explain(board)
