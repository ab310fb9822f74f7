"""N-tuple TD learning (seed 004; Szubert & Jaśkowski 2014; Jaśkowski 2018; Guei et al. 2022).

One readable loop: build the network, then train in chunks of ``chunk`` games. Each chunk is one
call of the Hogwild kernel (``workers`` threads playing their own games on shared weights);
after it the loop (:class:`ai2048.train.run.Loop`) logs seed 004's table to ``metrics.jsonl``,
updates the progress bar and, every ``checkpoint_every`` games, writes ``weights.npz`` (weights plus
everything needed to continue: RNG states, restart pools, TC accumulators, games done) and
``meta.json`` atomically.
``--resume`` continues from the last checkpoint; with ``workers=1`` it reproduces the
uninterrupted run exactly. Ctrl-C or SIGTERM stops within ``STOP_GAMES`` games, saves, and exits.

    ai2048 train ntuple --patterns 4x6 --games 100000 --alpha 0.1 --seed 0 --out runs/4x6
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.agents.seed_actions import check_order
from ai2048.checks import check_fields, setting
from ai2048.evaluate.pool import RestartPool, read_pool
from ai2048.ntuple import memory
from ai2048.ntuple.codegen import ILLEGAL_ACTIONS, KernelOptions, specialized
from ai2048.ntuple.hogwild import train_chunk
from ai2048.ntuple.network import KINDS, Network, load_file, read_into, read_shape, save_streamed
from ai2048.ntuple.patterns import parse_patterns, pattern_name, tuple_runs
from ai2048.rules import P_TWO, SEED_ORDERS
from ai2048.stats import reach_rate, tile_table_percent
from ai2048.train import Trainer
from ai2048.train.config import BUDGET_HELP, RunConfig
from ai2048.train.run import Counters, Loop, RunDir, start

MAX_MOVES = 1 << 18
"""Longest possible game: the tile sum grows by >= 2 a move and is at most 16 * 32768."""

DOWNGRADES = ("none", "highest", "residual")
"""``downgrade`` of the trainer; :data:`DG` gives the kernels' ``dg`` of each (``kernels.view``)."""
DG = {"none": 0, "highest": 2, "residual": 3}

POOL = 1000
"""Saved late-game boards kept per worker for restarts."""

STOP_GAMES = 200
"""Games per worker and kernel call: Ctrl-C or SIGTERM is looked at between calls, so a stop waits
for at most this many games a worker (a few seconds late in training) whatever ``chunk`` is; a
stopped chunk is logged and saved with the games it played."""


@dataclass(frozen=True)
class NTupleConfig(RunConfig):
    """Settings of an n-tuple TD run (defaults: seed 004's 4x6 after-state TD(0), α = 0.1)."""

    duration: float = setting(0.0, BUDGET_HELP + "; n-tuple runs count the seconds in the training kernels",
                              lo=0)
    checkpoint_every: int = setting(10_000, "games between checkpoints", lo=1)

    patterns: str = setting("4x6", "tuple set: 4x6, 5x6, 8x6, 4x5, 2x4+2x6, or hex cells like 012345,456789")
    games: int = setting(100_000, "training games in total", lo=1)
    alpha: float = setting(
        0.1,
        "learning rate of a state's value, spread over its features (alpha/F a weight)",
        lo=0, lo_open=True,
    )
    workers: int = setting(
        1, "threads playing games on shared weights (Hogwild); 1 is exactly reproducible", lo=1,
        hi=64,
    )
    state: str = setting("after", "values of after-states (Szubert & Jaśkowski) or before-states (seed 004)",
                         choices=KINDS)
    update: str = setting(
        "backward",
        "backward: sweep each finished game from its end (seed 004); online: after every move",
        choices=("backward", "online"),
    )
    lam: float = setting(0.0, "TD(λ) λ, with backward updates (0 = TD(0))", lo=0, hi=1)
    seed004_double_reward: bool = setting(
        False,
        "seed 004's before-state bug: target r_t + r_t+1 + V(s_t+1) (backward only)",
    )
    tc: bool = setting(False, "temporal coherence: per-weight rates |E|/A (Jaśkowski 2018); use alpha=1.0")
    init_value: float = setting(
        0.0,
        "optimistic initial value of every state (OTD, Guei et al. 2022 use 320000)",
    )
    stages: tuple[int, ...] = setting(
        (),
        "multistage: tile exponents opening new weights, e.g. [13,14]; promoted from below",
    )
    restart_prob: float = setting(
        0.0,
        "chance a game starts from a saved late-game board (Jaśkowski 2018's restarts)",
        lo=0, hi=1,
    )
    restart_tile: int = setting(13, "exponent whose first appearance saves the board for restarts", lo=1,
                                hi=15)
    chain_restarts: int = setting(
        0,
        "chained midpoint restarts, L (ziap/2048-tdl and TDL2048+'s restart mode; 10 in "
        "both): an episode of more than L moves is followed by one from its after-state at "
        "chain_at of its moves plus a spawn, restarted in turn; not counted as games; 0 = off",
        lo=0,
    )
    chain_at: float = setting(
        0.5,
        "where a chained restart begins: after-state floor(chain_at * n) of an n-move "
        "episode, in (0, 1) (0.5 in both references)",
        lo=0, hi=1, lo_open=True, hi_open=True,
    )
    restart_pool: str = setting(
        "",
        "a restart pool file (`ai2048 pool`): the workers' restart boards start as its boards (split "
        "between them), kept in the checkpoint; needs restart_prob > 0, may go with chain_restarts",
    )
    downgrade: str = setting(
        "none",
        "how boards holding a 16384 are valued: none (as they are); highest (their highest gap closed, "
        "in their own stage: kernels.view); residual (a stage above the first learns a correction, from "
        "zero, to the first stage's value of the board with its highest gap closed: kernels.base_value); "
        "`ai2048 eval RUN` plays the network the same way (meta.json's info.plays)",
        choices=DOWNGRADES,
    )
    p_two: float = setting(P_TWO, "probability a spawned tile is a 2", lo=0, hi=1, lo_open=True)
    chunk: int = setting(1000, "games per metrics record (and per kernel call)", lo=1)
    eval_games: int = setting(
        0,
        "1-ply games to evaluate the final network on, under the run's rules: the games and result file "
        "of `ai2048 eval RUN --games N` (eval.json)",
        lo=0,
    )
    end_on_full_board: bool = setting(
        False,
        "seed 004's board.end(): a game ends at a full board or a 32768 even if merges remain",
    )
    tie_order: str = setting(
        "clockwise",
        "action order that breaks ties of equal value: clockwise (up, right, down, left) "
        "or a seed's, e.g. 004 (up, down, left, right)",
        choices=tuple(SEED_ORDERS),
    )
    gamma: float = setting(1.0, "discount γ of the TD targets, in (0, 1] (seed 004: 1)", lo=0,
                           hi=1, lo_open=True)
    illegal_action: str = setting(
        "mask",
        "mask: only board-changing moves; penalty: seed 004's unmasked moves, an unchanged "
        "board scores -1 and spawns (needs end_on_full_board)",
        choices=ILLEGAL_ACTIONS,
    )
    init: str = setting(
        "",
        "start from trained weights: 'shipped' (the default shipped network), a shipped name "
        "(`ai2048 models`), a run directory or a weights/.ntz file; patterns, stages, state must match",
    )

    def __post_init__(self) -> None:
        if isinstance(self.patterns, int):
            object.__setattr__(self, "patterns", str(self.patterns))
        if isinstance(self.stages, (list, int)):
            object.__setattr__(self, "stages", tuple(np.atleast_1d(self.stages).tolist()))
        check_fields(self)
        parse_patterns(self.patterns)
        if self.chain_restarts and self.restart_prob > 0 and not self.restart_pool:
            raise ValueError(
                f"chain_restarts={self.chain_restarts} and restart_prob={self.restart_prob} are two restart "
                "schemes; use one (set restart_prob=0 or chain_restarts=0)"
            )
        if self.restart_pool and self.restart_prob == 0:
            raise ValueError(f"restart_pool={self.restart_pool!r} needs restart_prob > 0 (the share of games "
                             "that start from its boards; 1 = all)")
        if self.downgrade != "none" and self.state != "after":
            raise ValueError(f"downgrade={self.downgrade!r} reads after-states; set state=after or "
                             "downgrade=none")
        if self.downgrade == "residual" and not self.stages:
            raise ValueError("downgrade='residual' trains a stage above the first: give stages, "
                             "e.g. --stages 14")
        if self.chain_restarts and self.state != "after":
            raise ValueError(
                "chain_restarts restart from an episode's after-states (as ziap/2048-tdl and TDL2048+ do); "
                "set state=after or chain_restarts=0"
            )
        if self.illegal_action == "penalty" and not self.end_on_full_board:
            raise ValueError(
                "illegal_action='penalty' needs end_on_full_board=true, as in seed 004 (on a full board an "
                "unchanged move spawns nothing and could repeat forever)"
            )
        if not isinstance(self.init, str):
            raise ValueError(f"init={self.init!r} must be 'shipped', a shipped network's name or a path")
        if self.checkpoint_every % self.chunk:
            raise ValueError(
                f"checkpoint_every={self.checkpoint_every} must be a multiple of chunk={self.chunk}"
            )
        if self.update == "online" and self.lam > 0:
            raise ValueError("lam > 0 needs update='backward' (λ-returns are computed in the backward sweep)")
        if self.seed004_double_reward and (self.state != "before" or self.update != "backward"):
            raise ValueError(
                "seed004_double_reward reproduces a before-state backward bug: "
                "set state=before, update=backward"
            )
        st = [checks.whole("stages", s, 1, 15, why="tile exponents, e.g. [13, 14]") for s in self.stages]
        if st != sorted(set(st)):
            raise ValueError(f"stages={st} must be increasing tile exponents in 1..15 (e.g. [13, 14])")


PRESETS: dict[str, dict[str, Any]] = {
    "seed004": {"patterns": "4x6", "alpha": 0.1, "state": "after", "update": "backward"},
    "seed004-before": {"patterns": "4x6", "alpha": 0.1, "state": "before", "update": "backward"},
    "seed004-exact": {
        "patterns": "4x6", "alpha": 0.1, "state": "after", "update": "backward", "end_on_full_board": True,
        "tie_order": "004", "illegal_action": "penalty",
    },
    "tc": {"patterns": "4x6", "alpha": 1.0, "tc": True, "update": "backward", "workers": 2},
    "otd": {"patterns": "4x6", "alpha": 0.1, "init_value": 320000.0, "update": "backward", "workers": 2},
    "otd-tc-ms": {
        "patterns": "4x6", "alpha": 1.0, "tc": True, "init_value": 320000.0, "stages": (14,),
        "restart_prob": 0.1, "update": "backward", "workers": 2,
    },
}
"""Named recipes: seed 004 (after/before-state), TC (Jaśkowski 2018), OTD (Guei et al. 2022), and
the combination with multistage weights (a second stage from 16384) and restarts."""

PRESET_HELP: dict[str, str] = {
    "seed004": "seed 004 / TDL2048+: 4x6 after-state TD(0), α 0.1, backward updates, standard rules "
    "(results: docs/ntuple.md)",
    "seed004-before": "seed 004's before-state learner with the correct target: learns more slowly than "
    "after-state and ends behind it at the seed's 100k games; the seed's double-counted reward "
    "(--seed004-double-reward true) slows early learning but costs nothing measurable there",
    "seed004-exact": "seed 004's rules too: games end at a full board, ties go up/down/left/right, moves "
    "are unmasked (-1)",
    "tc": "4x6 temporal coherence (Jaśkowski 2018), α 1.0, two Hogwild workers: the fastest learner here",
    "otd": "optimistic initialisation (Guei et al. 2022): every state starts at 320,000",
    "otd-tc-ms": "OTD + TC + a second weight stage from 16384 + restarts from 8192 positions",
}


class TrainState:
    """Everything a run carries between chunks (a tracked state): ``weights.npz`` holds it whole.

    The file's arrays: ``w`` float32 [(stages + 1) * table] (the weights) and the network's header
    (``format``, ``rules_version``, ``patterns``, ``stages``, ``kind``), then ``train_states`` uint64
    [workers] (each worker's SplitMix64 state), ``train_pools`` uint64 [workers, POOL] and
    ``train_pool_n`` int64 [workers] (late-game boards saved for restarts), ``train_ready`` int64
    [stages + 1] (which stages have opened), ``train_e``, ``train_a`` float32 [(stages + 1) * table]
    (TC accumulators; [1] without TC), ``train_done`` int64 [] (games) and ``train_elapsed`` float64
    [] (seconds in the training kernels). :attr:`c` holds the last two as the loop's counters.

    ``net`` is None for a resumed run: its network is read from the checkpoint (:class:`WeightsFile`).
    """

    def __init__(self, cfg: NTupleConfig, net: Network | None) -> None:
        w = cfg.workers
        self.cfg = cfg
        self.c = Counters(done=0, elapsed=0.0)
        self.states = np.array(
            [np.random.SeedSequence([cfg.seed, k]).generate_state(1, np.uint64)[0] for k in range(w)],
            dtype=np.uint64,
        )
        self.pools = np.zeros((w, POOL), dtype=np.uint64)
        self.pool_n = np.zeros(w, dtype=np.int64)
        self.ready = np.zeros(len(cfg.stages) + 1, dtype=np.int64)
        self.ready[0] = 1
        self.e_acc = self.a_acc = np.zeros(1, dtype=np.float32)
        self.net: Network
        if net is None:
            return
        self._attach(net)
        if cfg.init:  # a stage that already holds weights is not promoted over again
            fill = np.float32(cfg.init_value / net.features)  # what Network fills an untouched weight with
            self.ready[1:] = [
                int(np.any(net.w[s * net.table : (s + 1) * net.table] != fill))
                for s in range(1, len(self.ready))
            ]

    def fill_pools(self, pool: RestartPool) -> None:
        """Start the workers' restart pools as ``pool``'s boards, dealt in turn (each worker at most
        :data:`POOL`)."""
        w = self.cfg.workers
        for i in range(w):
            mine = pool.boards[i::w][:POOL]
            self.pools[i, : mine.size] = mine
            self.pool_n[i] = mine.size

    def _attach(self, net: Network) -> None:
        self.net = net
        if self.cfg.tc:  # (w, E, A) records: one cache line per feature in a TC step (Network.tc_arrays)
            self.e_acc, self.a_acc = net.tc_arrays()

    def state_dict(self) -> dict[str, np.ndarray]:
        return {
            "w": self.net.w, **self.net.header(),
            "train_states": self.states, "train_pools": self.pools, "train_pool_n": self.pool_n,
            "train_ready": self.ready, "train_e": self.e_acc, "train_a": self.a_acc,
            "train_done": np.array(self.c["done"], dtype=np.int64),
            "train_elapsed": np.array(self.c["elapsed"]),
        }

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Take what :meth:`WeightsFile.read` gives: the network (TC accumulators filled) and the arrays."""
        self._attach(saved["net"])
        self.states[:] = saved["train_states"]
        self.pools[:] = saved["train_pools"]
        self.pool_n[:] = saved["train_pool_n"]
        self.ready[:] = saved["train_ready"]
        self.c.update(done=int(saved["train_done"]), elapsed=float(saved["train_elapsed"]))


class WeightsFile:
    """``weights.npz`` as the run's checkpoint (:class:`ai2048.train.run.CheckpointFile`): written
    streamed and atomically; read with every check of a weights file, the table streamed into TC
    records when the run uses them, so a resume never holds a second table."""

    EXTRA = ("train_states", "train_pools", "train_pool_n", "train_ready", "train_done", "train_elapsed")

    def __init__(self, cfg: NTupleConfig) -> None:
        self.cfg = cfg

    def write(self, path: Path, state: dict[str, np.ndarray]) -> None:
        save_streamed(path, state)

    def read(self, path: Path) -> dict[str, Any]:
        cfg = self.cfg
        net, arrays = load_file(path, patterns=cfg.patterns, extra=self.EXTRA, tc=cfg.tc)
        if net.stages != tuple(cfg.stages) or net.kind != cfg.state:
            raise ValueError(
                f"{path} has stages {net.stages} / kind {net.kind}, "
                f"config says {tuple(cfg.stages)} / {cfg.state}"
            )
        workers = arrays["train_states"].size
        if workers != cfg.workers:
            raise ValueError(f"{path} was saved by {workers} worker(s); resume it with --workers {workers}")
        if read_shape(path, "train_e") != ((net.w.size,) if cfg.tc else (1,)):  # (no table copy read)
            raise ValueError(f"{path} does not hold temporal-coherence state matching tc={cfg.tc}")
        if cfg.tc:  # streamed into the records, 1 MiB at a time
            e_acc, a_acc = net.tc_arrays()
            read_into(path, "train_e", e_acc)
            read_into(path, "train_a", a_acc)
        return {"net": net, **arrays}


def new_network(cfg: NTupleConfig, src: Network | None) -> Network:
    """A new run's network: fresh (every weight ``init_value / features``), or ``--init``'s ``src``
    (trained itself when it fits the run as it is; else copied in, stages it lacks left fresh)."""
    if src is not None and src.stages == tuple(cfg.stages) and not cfg.tc and src.w.flags.c_contiguous:
        return Network(cfg.patterns, stages=cfg.stages, kind=cfg.state, weights=src.w)
    net = Network(cfg.patterns, stages=cfg.stages, kind=cfg.state, init_value=cfg.init_value, tc=cfg.tc)
    if src is not None:  # the source's stages; stages it lacks are promoted when they open
        np.copyto(net.w[: src.w.size], src.w)
    return net


def restart_pool(cfg: NTupleConfig) -> RestartPool:
    """``--restart-pool``'s file, checked against the run: the pattern set of the network that made it,
    enough boards for every worker, each holding the restart tile."""
    pool = read_pool(cfg.restart_pool)
    mine = pattern_name(parse_patterns(cfg.patterns))
    if pool.patterns is not None and pool.patterns != mine:
        raise ValueError(f"restart pool {cfg.restart_pool} comes from a network with patterns "
                         f"{pool.patterns}; "
                         f"this run trains {mine}: make a pool with a network of the run's patterns")
    if pool.boards.size < cfg.workers:
        raise ValueError(f"restart pool {cfg.restart_pool} holds {pool.boards.size} boards for {cfg.workers} "
                         "workers: make it from more games or use fewer workers")
    if pool.tile < 1 << cfg.restart_tile:
        raise ValueError(f"restart pool {cfg.restart_pool} holds boards from {pool.tile}, below restart_tile "
                         f"{cfg.restart_tile} ({1 << cfg.restart_tile}): the run's own restart boards would "
                         f"join others; set --restart-tile {pool.tile.bit_length() - 1}")
    if pool.boards.size > POOL * cfg.workers:
        print(f"restart pool: {POOL * cfg.workers} of its {pool.boards.size} boards used ({POOL} a worker)",
              file=sys.stderr)
    return pool


def _init_network(cfg: NTupleConfig) -> Network:
    """``--init``: the trained network a new run starts from, checked against the run's config.

    The TC accumulators start at zero (a shipped file holds weights only), so the first updates of
    each weight take TC's full rate.
    """
    from ai2048 import models
    from ai2048.agents.ntuple import load_ntuple_network

    spec = cfg.init
    if spec == "shipped" or spec in models.names():
        name = models.default_name() if spec == "shipped" else spec
        src, what = models.load(name), f"shipped network {name!r}"
    elif Path(spec).exists():
        src, what = load_ntuple_network(spec), str(spec)
    else:
        raise ValueError(
            f"--init {spec!r} is neither 'shipped', a shipped network "
            f"(available: {', '.join(models.names()) or 'none'}) "
            "nor an existing run directory or weights file"
        )
    # the run may add stages above the source's (a late-game stage on a shipped network: Yeh et al.
    # 2016's multistage TD); each new stage is promoted from the one below when it first opens
    stages = list(cfg.stages)
    extends = list(src.stages) == stages[:len(src.stages)] and all(
        s > max(src.stages, default=0) for s in stages[len(src.stages):])
    differ = [
        f"{k}: {what} has {a}, the config says {b}"
        for k, a, b in (("patterns", src.patterns, pattern_name(parse_patterns(cfg.patterns))),
                        ("stages", list(src.stages), stages if not extends else list(src.stages)),
                        ("state", src.kind, cfg.state))
        if a != b
    ]
    if differ:
        raise ValueError(f"cannot --init from {what}: {'; '.join(differ)}; set the config to match it "
                         "(--stages may add stages above the source's)")
    return src


def kernel_options(cfg: NTupleConfig) -> KernelOptions:
    """The rule variant ``cfg`` trains under; its :attr:`~KernelOptions.rules` are the kernels' last
    argument."""
    return KernelOptions(
        end_on_full_board=cfg.end_on_full_board,
        illegal_penalty=cfg.illegal_action == "penalty",
        gamma=cfg.gamma,
        tie_order=tuple(int(a) for a in check_order(cfg.tie_order)),
    )


def _warm_args(cfg: NTupleConfig) -> tuple[Any, ...]:
    """Tiny arrays and ``cfg``'s scalars for ``train_worker``: one call compiles (or loads) exactly
    the variant the run trains with, before any large array exists."""
    runs, nruns, tbase, _ = tuple_runs(parse_patterns(cfg.patterns))
    f32, i64, u64 = np.zeros(1, np.float32), np.zeros(1, np.int64), np.zeros(1, np.uint64)
    rec = np.zeros((2, 3), np.float32)  # TC trains on columns of records: the strided variant (2 rows:
    # numpy calls a 1-element view contiguous)
    w, e, a = (rec[:, 0], rec[:, 1], rec[:, 2]) if cfg.tc else (f32, f32, f32)
    return (
        0, w, e, a, np.ones(len(cfg.stages) + 1, np.int64), runs, nruns, tbase,
        np.array(cfg.stages, np.int64), KINDS.index(cfg.state), cfg.update == "online", cfg.tc,
        cfg.seed004_double_reward, 0.1, cfg.lam, cfg.p_two, u64.copy(), u64.copy(), i64.copy(), u64.copy(),
        i64.copy(), cfg.restart_tile, cfg.restart_prob, i64.copy(),
        i64.copy(), i64.copy(), np.zeros(1, np.bool_), cfg.chain_restarts, cfg.chain_at, i64.copy(),
        DG[cfg.downgrade], kernel_options(cfg).rules,
    )


EVAL_SEED = 0
"""Seed of the final evaluation's games: ``ai2048 eval``'s default, so ``eval.json`` holds the games
``ai2048 eval RUN --games N`` plays (with the run's rules: :func:`eval_command`)."""


def eval_settings(cfg: NTupleConfig) -> dict[str, Any]:
    """The ``ntuple`` agent's settings that choose moves as the run trains (those not at their default)."""
    sets: dict[str, Any] = {}
    if cfg.tie_order != "clockwise":
        sets["tie_order"] = cfg.tie_order
    if cfg.illegal_action != "mask":
        sets["illegal_action"] = cfg.illegal_action
    if cfg.p_two != P_TWO:
        sets["p_two"] = cfg.p_two
    if cfg.downgrade != "none":
        sets["downgrade"] = cfg.downgrade
    return sets


def eval_rules(cfg: NTupleConfig) -> dict[str, Any]:
    """The rules of the final evaluation's games (``evaluate``'s keywords): the run's own."""
    return {"p_two": cfg.p_two, "end_on_full_board": cfg.end_on_full_board,
            "illegal_move": "penalty" if cfg.illegal_action == "penalty" else "reject"}


def eval_command(cfg: NTupleConfig, out: str | Path) -> str:
    """The ``ai2048 eval`` command line that plays the final evaluation's games and writes its result."""
    words = ["ai2048", "eval", os.path.normpath(out), "--games", str(cfg.eval_games)]
    if cfg.p_two != P_TWO:
        words += ["--p-two", repr(cfg.p_two)]
    if cfg.end_on_full_board:
        words.append("--end-on-full-board")
    if cfg.illegal_action == "penalty":
        words += ["--illegal-move", "penalty"]
    for key, value in eval_settings(cfg).items():
        words += ["--set", f"{key}={value}"]
    return shlex.join(words)


@dataclass(frozen=True)
class KernelCall:
    """A kernel a run calls, with warm-up arguments that compile (or load) exactly its signature, and
    the generated module its compiled marker (``ntuple.memory``) sits beside."""

    module: Path
    """The generated kernels module the kernel belongs to (or, for the evaluation, plays)."""
    function: str
    """The kernel's name in the marker."""
    kernel: Any
    """The numba dispatcher."""
    args: tuple[Any, ...]
    """Tiny warm-up arguments typed as the run calls it."""
    indexed: bool = True
    """Whether numba's cache index lies beside ``module`` (not for the evaluation's game loop, which
    numba caches beside :mod:`ai2048.search.games`)."""


def kernel_calls(cfg: NTupleConfig) -> list[KernelCall]:
    """The kernels a run of ``cfg`` calls: ``train_worker``, and where the run evaluates its network at
    the end (``eval_games``) the ``ntuple`` agent's whole-game loop (:func:`final_evaluation`), typed
    as the evaluation calls it on a C-contiguous float32 table (TC's records are evaluated as a copy)."""
    tuples = parse_patterns(cfg.patterns)
    k = specialized(tuples)
    calls = [KernelCall(Path(str(k.__file__)), "train_worker", k.train_worker, _warm_args(cfg))]
    if cfg.eval_games:
        from ai2048.agents.ntuple import play_rules
        from ai2048.evaluate.kernel import load_args
        from ai2048.search.games import ntuple_kernel

        rules = play_rules(cfg.tie_order, cfg.illegal_action)  # the agent's
        runs, nruns, tbase, _ = tuple_runs(tuples)
        data = (np.zeros(1, np.float32), runs, nruns, tbase, np.array(cfg.stages, np.int64))
        game = ntuple_kernel(k, KINDS.index(cfg.state), cfg.p_two, data, 0, rules)
        calls.append(KernelCall(Path(str(k.__file__)), game.play.py_func.__qualname__, game.play,
                                load_args(game, cfg.p_two), indexed=False))
    return calls


def compile_child(config_json: str, parent: int) -> None:
    """Entry of the child process :func:`compile_kernels` starts: compile the run's kernels
    (:func:`kernel_calls`) for the config given as JSON into numba's cache, writing each one's
    marker after it (``ntuple.memory``)."""
    memory.die_with_parent(parent)
    cfg = NTupleConfig(**json.loads(config_json))
    for call in kernel_calls(cfg):
        call.kernel(*call.args)
        memory.mark_compiled(call.module, call.function, memory.kernel_signature(call.args))


def compile_kernels(cfg: NTupleConfig) -> ModuleType:
    """The kernels of ``cfg``'s pattern set (``codegen.specialized``), compiled or loaded from the
    cache on tiny arrays before the weight table exists, so the compiler's memory is given back
    before the table is allocated (the run's peak is then the table's).

    Every kernel the run calls is made ready here, the final evaluation's too (``eval_games``:
    compiled after training it would add the compiler's memory to the table's). Kernels not in the
    cache yet are compiled by a child process (``ntuple.memory``): numba keeps LLVM's memory after
    compiling (more than a 4x6 table), the child's goes with it; this process then loads them. Where the
    cache folder is not writable they compile here."""
    t0 = time.perf_counter()
    print(
        "n-tuple kernels: loading (the first run of a pattern set compiles them; cached after)",
        file=sys.stderr,
    )
    k = specialized(parse_patterns(cfg.patterns))
    calls = kernel_calls(cfg)
    module = Path(str(k.__file__))
    cached = all(memory.is_compiled(c.module, c.function, memory.kernel_signature(c.args), indexed=c.indexed)
                 for c in calls)
    if not cached and memory.writable(module.parent):
        print("n-tuple kernels: compiling in a child process (minutes on a busy machine)", file=sys.stderr)
        memory.compile_in_child(
            "import sys; from ai2048.train.ntuple import compile_child; "
            "compile_child(sys.argv[1], int(sys.argv[2]))",
            [json.dumps(dataclasses.asdict(cfg)), str(os.getpid())],
            f"compiling the n-tuple kernels for {cfg.patterns} (cache {module.parent})",
        )
    elif not cached:
        print(
            f"n-tuple kernels: {module.parent} is not writable, compiling in this process "
            "(its peak memory is then about 300 MiB higher)",
            file=sys.stderr,
        )
    for call in calls:
        call.kernel(*call.args)
    memory.release_compiler_memory()  # the compiler's freed heap and LLVM's library pages, before the table
    print(f"n-tuple kernels: ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return k


def run(config: NTupleConfig, out: Path, resume: bool = False, opened: RunDir | None = None) -> Path:
    """Train (or continue training) an n-tuple network into run directory ``out``."""
    out, cfg = Path(out), config
    src = _init_network(cfg) if cfg.init and not resume else None  # a wrong --init fails before any write
    pool = restart_pool(cfg) if cfg.restart_pool and not resume else None  # a wrong pool too
    resumed = start(out, cfg, TRAINER, resume, opened)
    k = compile_kernels(cfg)  # Network(...) below gets this module, compiled
    st = TrainState(cfg, None if resumed else new_network(cfg, src))  # resumed: read from the checkpoint
    if pool is not None and not resumed:
        st.fill_pools(pool)
    del src  # a table the size of the network's, not kept while training
    loop = Loop(
        out, cfg, TRAINER, resumed, total=cfg.games, counters=st.c, step="done", clock="counted",
        smoothing=0.1, first_save="checkpoint", checkpoint=WeightsFile(cfg),
        info=lambda: {"patterns": st.net.patterns, "state": cfg.state, "stages": list(cfg.stages),
                      "plays": eval_settings(cfg)},
    )
    loop.track(st)
    net, w = st.net, cfg.workers
    buf_b = np.zeros((w, MAX_MOVES), dtype=np.uint64)
    buf_r = np.zeros((w, MAX_MOVES), dtype=np.int64)
    alpha_f = cfg.alpha / net.features
    rules = kernel_options(cfg).rules

    def play(g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, int]:
        """Play up to ``g`` games in kernel calls of at most STOP_GAMES a worker, looking at the stop
        flag between them; returns the results of the games played (score, tile, moves, restarted, moves
        of their chained restarts), the seconds and their number (less than ``g`` after a stop)."""
        score, tile, moves = np.zeros(g, np.int64), np.zeros(g, np.int64), np.zeros(g, np.int64)
        restarted = np.zeros(g, np.bool_)
        chained = np.zeros(g, np.int64)
        t0 = time.perf_counter()
        done = 0
        while done < g and not (done and loop.stopping):
            n = min(g - done, STOP_GAMES * w)
            counts = np.array([n // w + (i < n % w) for i in range(w)], dtype=np.int64)
            part = slice(done, done + n)
            train_chunk(
                k, counts, net.w, st.e_acc, st.a_acc, st.ready, net.runs, net.nruns, net.tbase, net.stage_arr,
                KINDS.index(cfg.state), cfg.update == "online", cfg.tc, cfg.seed004_double_reward, alpha_f,
                cfg.lam,
                cfg.p_two, st.states, buf_b, buf_r, st.pools, st.pool_n, cfg.restart_tile, cfg.restart_prob,
                score[part], tile[part], moves[part], restarted[part], cfg.chain_restarts, cfg.chain_at,
                chained[part], DG[cfg.downgrade], rules,
            )
            done += n
        return (score[:done], tile[:done], moves[:done], restarted[:done], chained[:done],
                time.perf_counter() - t0, done)

    with loop:  # Ctrl-C or SIGTERM: stop within STOP_GAMES games a worker, save; or stop the evaluation
        while loop.running():
            score, tile, moves, restarted, chained, dt, g = play(min(cfg.chunk, cfg.games - st.c["done"]))
            st.c["elapsed"] += dt
            st.c["done"] += g
            fresh = ~restarted
            played = int(moves.sum() + chained.sum())  # every move learned, chained restarts' too
            extra: dict[str, Any] = {"chain_moves": int(chained.sum())} if cfg.chain_restarts else {}
            if restarted.any():  # where restarted games end: the late game's conversion
                extra["restart_tiles"] = tile_table_percent(tile[restarted])
                extra["restart_score_mean"] = float(score[restarted].mean())  # scored from the restart
                extra["restart_moves_mean"] = float(moves[restarted].mean())
            loop.log({
                "games_per_s": g / dt, "moves_per_s": played / dt,
                "restarted": int(restarted.sum()), **extra,
                "score_mean": float(score[fresh].mean()) if fresh.any() else None,
                "score_max": int(score[fresh].max()) if fresh.any() else None,
                "score_min": int(score[fresh].min()) if fresh.any() else None,
                "moves_mean": float(moves[fresh].mean()) if fresh.any() else None,
                "tiles": tile_table_percent(tile[fresh]) if fresh.any() else [],
            })
            loop.bar.update(g)
            loop.bar.set_postfix_str(
                f"{g / dt:.0f} games/s {played / dt / 1e6:.2f}M moves/s score "
                f"{float(score[fresh].mean()) if fresh.any() else 0:.0f} "
                + " ".join(f"{t}:{reach_rate(tile[fresh], t):.0f}%" for t in (2048, 4096, 8192, 16384))
                + (f" restarts 32768:{reach_rate(tile[restarted], 32768):.0f}%" if restarted.any() else "")
            )
            loop.checkpoint()
        loop.finish()
        if cfg.eval_games and loop.status == "completed":  # under the run's rules, as seed 004's testAgent
            result = final_evaluation(cfg, net, out)
            if result is None:
                print(f"final evaluation stopped; the trained network is saved in {out} (evaluate it with "
                      f"`{eval_command(cfg, out)}`)", flush=True)
                return out
            result.save(out / "eval.json")
            print(result.format())
            print(f"(the games of `{eval_command(cfg, out)}`)")
    return out


def final_evaluation(cfg: NTupleConfig, net: Network, out: Path) -> Any:
    """The trained network's ``eval_games`` games played as ``ai2048 eval`` plays them
    (:func:`eval_command`): the ``ntuple`` agent at depth 1 with the run's settings, game seeds from
    :data:`EVAL_SEED`, the run's rules, the same :class:`~ai2048.evaluate.EvalResult`; None when
    Ctrl-C or SIGTERM stopped it (the network is saved). The first Ctrl-C or SIGTERM stops it, inside
    the training loop's handlers too (they would wait for a second one)."""
    from ai2048.agents.ntuple import NTupleAgent
    from ai2048.evaluate import evaluate, sigterm_as_interrupt

    previous = sigterm_as_interrupt()  # a signal before the games start stops it too
    interrupt = _interrupt_on_sigint()
    try:
        if not net.w.flags.c_contiguous:  # TC's records: a contiguous copy, the kernel compiled ahead
            net = Network(cfg.patterns, stages=cfg.stages, kind=cfg.state, weights=net.contiguous_weights())
        agent: Any = NTupleAgent(weights=net, **eval_settings(cfg))
        agent.name = "ntuple"
        agent.config = {"weights": os.path.normpath(out), **eval_settings(cfg)}  # as `ai2048 eval RUN`
        result = evaluate(agent, games=cfg.eval_games, seed=EVAL_SEED, workers=cfg.workers, progress=False,
                           **eval_rules(cfg))
    except KeyboardInterrupt:
        return None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if interrupt is not None:
            signal.signal(signal.SIGINT, interrupt)
    return None if result.interrupted else result


def _interrupt_on_sigint() -> Any:
    """Ctrl-C raises KeyboardInterrupt from now on (Python's own handler); returns the handler it
    replaced, or None outside the main thread (where handlers cannot be set)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.default_int_handler)


TRAINER = Trainer(
    name="ntuple",
    description="N-tuple network TD learning (seed 004; TC, OTD, multistage, restarts, Hogwild)",
    config_cls=NTupleConfig,
    run=run,
    presets=PRESETS,
    checkpoint="weights.npz",
    preset_help=PRESET_HELP,
    resumable=(*RunConfig.RESUMABLE, "games", "workers", "eval_games"),
)

__all__ = ["NTupleConfig", "PRESETS", "TRAINER", "run"]
