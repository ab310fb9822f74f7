"""The ``ntuple`` agent: a trained n-tuple network, greedy (depth 1) or inside expectimax.

``make_agent("ntuple", weights=RUN_DIR)`` plays the move with the largest ``r + V(after-state)``
(seed 004; Szubert & Jaśkowski 2014). ``depth=2, 3, ...`` runs the expectimax search of
:mod:`ai2048.search.expectimax` with the network as its after-state evaluator (with the
transposition table); depth D is the literature's "D-ply" search (depth 2: max-chance-max).
``downgrade=True`` values boards holding a 32768 after tile-downgrading (Guei et al. 2022).
``tie_order="004"`` breaks ties between equal values as seed 004's ``np.argmax`` over
[up, down, left, right] does (default: the lower action number, up, right, down, left).
``illegal_action="penalty"`` plays as seed 004's unmasked argmax: a move that changes nothing is
scored ``-1 + V(board)`` and may be chosen (evaluate it with ``illegal_move="penalty"``, seed 004's
rules; ``ai2048 eval --preset seed004-exact``).
Without ``weights`` it plays a shipped network (:mod:`ai2048.models`): ``model=NAME`` or the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ai2048.agents.base import BaseAgent
from ai2048.agents.options import DEPTH, ORDER, P_TWO_SEARCH, PROB_CUTOFF, TT_BITS, WEB, agent_options, option
from ai2048.agents.seed_actions import best_in_order, check_order
from ai2048.agents.simple import named, playable
from ai2048.checkpoint import read_json
from ai2048.checks import Option
from ai2048.models import compact, store
from ai2048.ntuple.codegen import ILLEGAL_ACTIONS, KernelOptions, specialized
from ai2048.ntuple.network import KINDS, Network, load_file
from ai2048.ntuple.patterns import parse_patterns, pattern_name
from ai2048.rules import P_TWO, Action
from ai2048.search.expectimax import Expectimax


def load_ntuple_network(weights: str | Path, patterns: str | None = None) -> Network:
    """The network in a run directory (its ``weights.npz``), a weights file or a compact ``.ntz`` file,
    checked.

    A run directory whose ``config.json`` names other patterns than its weights file is an error.
    """
    path = Path(weights)
    if path.suffix == compact.SUFFIX:
        return store.load_path(path, patterns)
    if path.is_dir():
        cfg_path = path / "config.json"
        if cfg_path.is_file():
            cfg = read_json(cfg_path, "run config")
            cfg = cfg.get("config", cfg)
            if "patterns" in cfg:
                want = pattern_name(parse_patterns(str(cfg["patterns"])))
                if patterns is not None and pattern_name(parse_patterns(patterns)) != want:
                    raise ValueError(f"{path} was trained with patterns {want}, not the requested {patterns}")
                patterns = want
        path = path / "weights.npz"
    net, _ = load_file(path, patterns=patterns)
    return net


DOWNGRADES = ("none", "lowest", "highest", "residual", "rooted")
"""``downgrade``'s modes, in the kernels' numbering (0 .. 4); ``True`` is ``"lowest"``. Residual is
for a network trained with a residual late stage (``train ntuple --downgrade residual``,
``kernels.base_value``); rooted closes the highest gap of the board being decided, on every board
its search values (``kernels.ntuple_value_rooted``)."""
ROOTED = DOWNGRADES.index("rooted")

DOWNGRADE = Option("how the network values boards past its training", "flag", choices=DOWNGRADES,
                   source="Guei et al. 2022 (tile-downgrading); the highest-gap, residual and rooted "
                   "variants are this toolkit's")
"""``downgrade`` of the n-tuple and endgame agents: a flag (``True``: ``"lowest"``) or a mode's name."""
MODEL = Option("a shipped network's name (see `ai2048 models`)", source="this toolkit's trained networks",
               allowed="a name, or None for the default one (only without weights)")


def play_rules(tie_order: str = "clockwise", illegal_action: str = "mask") -> tuple:
    """The kernels' ``rules`` (:attr:`ai2048.ntuple.codegen.KernelOptions.rules`) an agent with these
    settings plays with: its tie order, and seed 004's unmasked moves (with its full-board end, as
    the trainer's seed004-exact runs play them) for ``illegal_action="penalty"``."""
    order = tuple(int(a) for a in check_order(tie_order))
    if illegal_action == "penalty":
        return KernelOptions(end_on_full_board=True, illegal_penalty=True, tie_order=order).rules
    return KernelOptions(tie_order=order).rules


class NTupleAgent(BaseAgent):
    """A trained n-tuple network playing 2048.

    Each option's help and values are declared once in the signature (``ai2048 agents ntuple``
    prints them). Every ``downgrade`` mode values a board in its own stage (``ntuple.kernels.view``).
    """

    @agent_options
    def __init__(
        self,
        weights: str | Path | Network | None = option(
            None, "the run directory of `ai2048 train ntuple` (or its weights.npz or a .ntz file)",
            allowed="a path, or None to play a shipped network (model)",
            source="seed 004 (TD learning of n-tuple networks, Szubert & Jaśkowski 2014)"),
        depth: int = option(
            1, DEPTH, web=(None, 3), source="seed 004 plays 1-ply; deeper search as in Yeh et al. 2016",
            help="1 = 1-ply: greedy on the network's values; D >= 2 = D-ply expectimax with the network at "
            "the leaves (2-ply: max-chance-max)"),
        downgrade: bool | str = option(
            False, DOWNGRADE, web=WEB, web_choices=(),
            help="value boards with their large tiles lowered: true/'lowest' with a 32768 (lowest gap "
            "closed), 'highest' from a 16384 (each board's highest gap closed), 'rooted' from a 16384 (the "
            "highest gap of the board being decided closed on every board its search values); 'residual' "
            "for a network trained with --downgrade residual"),
        prob_cutoff: float = option(1e-4, PROB_CUTOFF, web=(1e-4, None)),
        tt_bits: int = option(20, TT_BITS),
        p_two: float = option(P_TWO, P_TWO_SEARCH, help="probability of a 2 assumed by before-state values "
                              "and the search", source="seed 004's allpopup: 9 twos to 1 four"),
        patterns: str | None = option(
            None, "the pattern set the weights must have (a mismatch is an error)",
            allowed="a pattern-set name, or None to accept the file's",
            source="seed 004's 4x6 tuples and others (`ai2048 train ntuple --help`)"),
        model: str | None = option(None, MODEL),
        models_dir: str | Path | None = option(
            None, "the folder to look shipped networks up in",
            allowed="a path, or None for the package's (or $AI2048_MODELS)", source="this toolkit"),
        tie_order: str = option(
            "clockwise", ORDER, source="seed 004's argmax takes the first of up, down, left, right (004); "
            "clockwise = the lower action number", web=None),
        illegal_action: str = option(
            "mask", "mask: only moves that change the board; penalty: a move that changes nothing scores -1 "
            "plus the board's value and may be chosen (1-ply; evaluate with --illegal-move penalty)",
            "choice", choices=ILLEGAL_ACTIONS, source="seed 004's argmax does not mask moves"),
    ) -> None:
        self.depth = depth
        self.order = check_order(tie_order)
        self.illegal_action = illegal_action  # evaluate() refuses "penalty" where such moves are rejected
        self.penalty = illegal_action == "penalty"
        if self.penalty and self.depth != 1:
            raise ValueError(
                f"illegal_action='penalty' plays seed 004's 1-ply player; depth={depth} searches legal moves "
                "only: use depth=1, or illegal_action='mask'"
            )
        self.p_two = p_two
        self.downgrade = DOWNGRADES.index(downgrade) if isinstance(downgrade, str) else int(downgrade)
        if weights is not None and model is not None:
            raise ValueError(
                f"give weights (a run directory or file) or model (a shipped name), not both: {weights!r}, "
                f"{model!r}"
            )
        if weights is None:
            self.net = store.shared(model, models_dir)
            if patterns is not None and pattern_name(parse_patterns(patterns)) != self.net.patterns:
                raise ValueError(
                    f"shipped network {model or store.default_name(models_dir)!r} has patterns "
                    f"{self.net.patterns}, "
                    f"not the requested {patterns}"
                )
        elif isinstance(weights, Network):  # loaded once and shared read-only (the web's --models runs)
            if patterns is not None and pattern_name(parse_patterns(patterns)) != weights.patterns:
                raise ValueError(f"the network has patterns {weights.patterns}, not the requested {patterns}")
            self.net = weights
        else:
            self.net = load_ntuple_network(weights, patterns)
        if self.net.kind == "before" and self.downgrade:  # its kernels read the board as it is, at any depth
            raise ValueError(f"downgrade={downgrade!r} reads after-states, and this network values "
                             "before-states: play it with downgrade=none, or give an after-state network")
        self._built = (tie_order, illegal_action, prob_cutoff, tt_bits)
        self._build()

    def _build(self) -> None:
        """The compiled parts: the kernels the network plays with and, at depth >= 2, its search."""
        tie_order, illegal_action, prob_cutoff, tt_bits = self._built
        self.k = specialized(self.net.tuples)  # the network's own kernels (every rule variant's)
        self.rules = play_rules(tie_order, illegal_action)
        self.search: Expectimax | None = None
        if self.depth >= 2:
            k = self.net.k
            if self.net.kind == "before":
                ev = k.ntuple_value_before
            else:
                ev = (k.ntuple_value, k.ntuple_value_downgraded, k.ntuple_value_late,
                      k.ntuple_value_residual, k.ntuple_value_rooted)[self.downgrade]
            data: tuple = self.net.data()
            if self.net.kind == "before":  # its after-states are valued at the search's spawn odds
                data = (*data, float(self.p_two))
            hook = None
            if self.downgrade == ROOTED:  # the search's map is fixed at its root: set_root_gap
                data, hook = (*data, np.zeros(2, np.int64)), k.set_root_gap  # data[-1]: the gaps
            self.search = Expectimax(
                ev,
                data,
                root_hook=hook,
                p_two=self.p_two,
                prob_cutoff=prob_cutoff,
                reward_weight=1.0,
                tt_bits=tt_bits,
            )

    def __getstate__(self) -> dict[str, Any]:
        """Pickled as its network and settings; the kernels module and the search (compiled code)
        are built again on unpickling."""
        state = dict(vars(self))
        del state["k"], state["search"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._build()

    def values(self, board: int) -> np.ndarray:
        """[4] value of each move (``-inf`` where illegal; with ``illegal_action="penalty"`` a move
        that changes nothing is worth -1 plus the board's value)."""
        b = playable(board)
        if self.search is not None:
            return self.search.search(int(b), depth=self.depth).values
        n = self.net
        v = self.k.move_values(np.uint64(b), KINDS.index(n.kind), self.p_two, n.w, n.runs, n.nruns, n.tbase,
                               n.stage_arr, self.downgrade, self.rules)
        return np.where(np.isnan(v), -np.inf, v)

    def act(self, board: int) -> Action:
        b = playable(board)
        if self.search is None:
            n = self.net
            a, _, _, _, _ = self.k.greedy_move(
                b, KINDS.index(n.kind), self.p_two, n.w, n.runs, n.nruns, n.tbase, n.stage_arr,
                self.downgrade, self.rules,
            )
            return Action(int(a))
        return best_in_order(self.values(int(b)), self.order)

    def explain(self, board: int) -> dict[str, float]:
        return named(self.values(board))

    def game_kernel(self) -> Any:
        """Whole games in numba: the same moves as ``act`` at any depth (ties in ``tie_order``)."""
        from ai2048.search.games import expectimax_kernel, ntuple_kernel

        if self.search is not None:
            return expectimax_kernel(self.search, self.depth, tuple(int(a) for a in self.order))
        n = self.net
        return ntuple_kernel(self.k, KINDS.index(n.kind), self.p_two, n.data(), self.downgrade, self.rules)
