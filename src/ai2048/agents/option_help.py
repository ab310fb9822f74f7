"""One line of help for every config key of every registered agent: what it does, where it comes
from (seed or paper), and the values it accepts. The defaults are read from the factories'
signatures (:func:`ai2048.agents.base.config_keys`), so they are never written twice.

``ai2048 agents NAME`` prints these lines and the web page's agent help reuses them
(``GET /api/agents``). ``tests/test_agents_help.py`` checks that every key of every registered
agent has a line here and that no line names a key an agent does not take.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from ai2048.agents.base import available, config_keys


@dataclass(frozen=True)
class OptionHelp:
    """What an option does, the seed or paper it comes from, and the values it accepts."""

    what: str
    source: str
    allowed: str


_ORDERS = "'000', '001', '002', '003', '004' (a seed's action order) or 'clockwise'"
ORDER = OptionHelp("tie-break order between moves of equal value: the first in this order wins",
                   "each seed's action numbering (agents/seed_actions.py)", _ORDERS)
P_TWO_SEARCH = OptionHelp("probability of a 2 that the search assumes at spawns (the game's own odds are "
                          "0.9)",
                          "2048 rules; seed 003's code spawns 2s only (1.0)", "a float in [0, 1]")
SEED = OptionHelp("seed of the agent's own random stream (each game of an evaluation reseeds it)",
                  "this toolkit (every random source takes a seed)", "an integer >= 0, or None for OS "
                                                                     "entropy")
WEIGHTS_RUN = OptionHelp("the run directory of a trained network (its meta.json/config.json and weights)",
                         "this toolkit's `ai2048 train ...` output", "a path to a run directory (required)")
DEVICE = OptionHelp("torch device the network runs on", "this toolkit",
                    "'cpu', 'cuda', 'cuda:N' or 'auto' (an absent GPU is an error)")
THREADS = OptionHelp("torch CPU threads", "this toolkit", "an integer >= 1, or 0 for torch's default")
SEARCH_THREADS = OptionHelp("torch CPU threads of the network calls", "this toolkit",
                            "an integer from 1 to the machine's cores (at most 64)")
IN_FLIGHT = OptionHelp("games each evaluation process (each of --workers) searches at once (one network "
                       "call for all of them); the moves are those of one-at-a-time play", "this toolkit",
                       "an integer >= 1")
PROB_CUTOFF = OptionHelp("chance nodes whose cumulative probability falls below this become leaves "
                         "(probability pruning)", "nneonneo/2048-ai", "a float in [0, 1]; 0 = exact search")
TT_BITS = OptionHelp("log2 of the transposition-table size", "nneonneo/2048-ai",
                     "an integer in 0..28; 0 turns the table off")

OPTIONS: dict[str, dict[str, OptionHelp]] = {
    "random": {"seed": SEED},
    "greedy": {"order": OptionHelp(
        "tie-break order between moves with the same immediate reward",
        "seed 004's demo takes the first best of up, down, left, right", _ORDERS)},
    "reflex-seed003": {},
    "expectimax": {
        "depth": OptionHelp("moves (each followed by a spawn) searched ahead: D = D-ply; 'adaptive' picks it "
                            "per board from the number of distinct tiles",
                            "nneonneo/2048-ai (adaptive rule); seed 003 uses 2",
                            "an integer >= 1 or 'adaptive'"),
        "time_budget": OptionHelp("seconds per move: deepen 1, 2, ... up to max_depth while time is left "
                                  "(overrides depth)", "iterative deepening, as seed 003's minimax",
                                  "a positive float, or None for a fixed depth"),
        "heuristic": OptionHelp("the built-in evaluation of leaf boards", "'nneonneo': nneonneo/2048-ai; "
                                "'seed003': seed 003's five-term heuristic", "'nneonneo' or 'seed003'"),
        "weights": OptionHelp("heuristic weights over the defaults: a dict of fields, or a named set",
                              "nneonneo's published constants ('published') or this toolkit's tuned ones",
                              "'tuned', 'published', a dict (nneonneo: lost, empty, merges, monotonicity, "
                              "mono_power, sum, sum_power; seed003: max_log2, free, adjacent_equal, edges, "
                              "gradient), or None"),
        "p_two": P_TWO_SEARCH,
        "prob_cutoff": PROB_CUTOFF,
        "tt_bits": TT_BITS,
        "depth_offset": OptionHelp("with depth='adaptive': subtract this from nneonneo's depth rule",
                                   "this toolkit (speed/strength trade)", "an integer (negative searches "
                                                                          "deeper)"),
        "min_depth": OptionHelp("with depth='adaptive': the shallowest depth used", "this toolkit",
                                "an integer >= 1, at most max_depth"),
        "max_depth": OptionHelp("the deepest depth: the adaptive rule's cap and time_budget's limit",
                                "this toolkit", "an integer >= min_depth"),
        "evaluator": OptionHelp("Python API only: a custom numba after-state evaluator replacing the "
                                "heuristic "
                                "(see ai2048.search.expectimax); not settable from the command line",
                                "this toolkit", "a numba @njit function, or None for the built-in heuristic"),
        "data": OptionHelp("Python API only: the data tuple passed to a custom evaluator", "this toolkit",
                           "a tuple (only with evaluator), or None"),
        "reward_weight": OptionHelp("weight of the moves' rewards added to leaf values; None means 0 with a "
                                    "built-in heuristic and 1 with a custom evaluator (value = future score)",
                                    "this toolkit", "a float >= 0, or None"),
        "order": ORDER,
    },
    "expectimax-seed003": {
        "depth": OptionHelp("moves (each followed by a spawn) searched ahead: D = D-ply",
                            "seed 003: depth 2 (2-ply)",
                            "an integer >= 1"),
        "p_two": OptionHelp("probability of a 2 at chance nodes", "seed 003's text places a 2 or a 4; its "
                                                                  "code "
                            "(ParkerD559) 2s only: p_two=1.0", "a float in [0, 1]"),
        "prob_cutoff": PROB_CUTOFF,
        "tt_bits": TT_BITS,
        "order": ORDER,
    },
    "minimax": {
        "depth": OptionHelp("moves searched ahead (the tile placements between them are the adversary's); "
                            "with time_limit the deepest allowed", "seed 003 (depth 4 plays best here: "
                                                                   "docs/search.md)",
                            "an integer >= 1, or None (no cap; needs time_limit)"),
        "time_limit": OptionHelp("seconds per move: deepen 1, 2, ... within it", "seed 003: 0.2 s per move",
                                 "a positive float, or None for a fixed depth"),
        "prune": OptionHelp("alpha-beta pruning (the same move as without it under every tie order, "
                            "fewer nodes)", "seed 003: with and without alpha-beta", "true or false"),
        "fours": OptionHelp("the adversary may also place 4s", "seed 003 places 2s only "
                                                               "(false)", "true or false"),
        "weights": OptionHelp("utility weights [smoothness, monotonicity, ln-empty, max4tile]",
                              "seed 003's minimax utility", "a list of 4 floats, or None for the seed's"),
        "order": ORDER,
        "node_budget": OptionHelp("nodes (moves tried) per move over every depth: deepen 1, 2, ... within "
                                  "it, the same on any machine", "seed 003's cut-off shrinks with the nodes "
                                  "expanded (docs/search.md)", "an integer >= 1, or None"),
    },
    "montecarlo": {
        "playouts": OptionHelp("random playouts per legal first move; a move's value is their mean final "
                               "score",
                               "seed 002 part 3 (p-mckenzie/2048), budget per first move (about 4x the "
                               "seed's "
                               "simulation_size)", "an integer in 1..100,000"),
        "playouts_total": OptionHelp("the seed's budget instead: this many playouts in all, each starting "
                                     "with a "
                                     "uniformly random legal move; moves no playout tried are not chosen",
                                     "seed 002 part 3: simulation_size (5, 20, 50, 100, 150 in its runs)",
                                     "an integer in 1..400,000 (replaces playouts), or None"),
        "p_two": OptionHelp("probability of a 2 at the playouts' spawns", "2048 rules", "a float in [0, 1]"),
        "seed": SEED,
        "order": OptionHelp("tie-break order between moves of equal mean", "seed 002 tries w, a, s, "
                                                                           "d", _ORDERS),
    },
    "lazyzero": {
        "weights": OptionHelp("the run directory written by `ai2048 train "
                              "lazyzero`", "seed 001 (lowrollr/turbozero)",
                              "a path to a run directory (required)"),
        "rollouts": OptionHelp("policy rollouts per move", "seed 001: num_policy_rollouts (500 in its 2048 "
                                                           "config)",
                               "an integer >= 1, or None for the run's test setting"),
        "depth": OptionHelp("rollout depth, counting the root's PUCT action", "seed 001: rollout_depth (3)",
                            "an integer >= 1, or None for the run's setting"),
        "puct": OptionHelp("PUCT exploration constant C at the root", "seed 001: puct_coeff (1.0)",
                           "a float >= 0, or None for the run's setting"),
        "temperature": OptionHelp("move choice from visit counts: 0 = most visited, > 0 samples N^(1/T)",
                                  "seed 001: temperature (0 at test)", "a float >= 0"),
        "device": DEVICE,
        "seed": SEED,
        "threads": SEARCH_THREADS,
        "games_in_flight": IN_FLIGHT,
    },
    "lazyzero-random": {
        "rollouts": OptionHelp("rollouts per move", "seed 001's random_rollout_lazy_mcts baseline",
                               "an integer >= 1"),
        "depth": OptionHelp("rollout depth, counting the root's action; leaves are scored by a random "
                            "playout",
                            "seed 001's baseline", "an integer >= 1"),
        "puct": OptionHelp("PUCT exploration constant C (priors are uniform)", "seed 001: puct_coeff",
                           "a float >= 0"),
        "temperature": OptionHelp("move choice from visit counts: 0 = most visited, > 0 samples N^(1/T)",
                                  "seed 001: temperature", "a float >= 0"),
        "device": DEVICE,
        "seed": SEED,
        "threads": SEARCH_THREADS,
        "games_in_flight": IN_FLIGHT,
    },
    "lazyzero-chance": {
        "weights": OptionHelp("the LazyZero run directory whose network guides the search",
                              "seed 001's network; chance nodes as in Stochastic MuZero (Antonoglou et al. "
                              "2022)",
                              "a path to a run directory (required)"),
        "simulations": OptionHelp("MCTS simulations per move", "this toolkit", "an integer >= 1"),
        "puct": OptionHelp("PUCT exploration constant", "AlphaZero (Silver et al. 2018)", "a finite float "
                                                                                          ">= 0"),
        "device": DEVICE,
        "seed": SEED,
        "threads": SEARCH_THREADS,
        "games_in_flight": IN_FLIGHT,
    },
    "dqn": {
        "weights": OptionHelp("the run directory written by `ai2048 train "
                              "dqn`", "seed 000 (IsacPasianotto/2048-DRL)",
                              "a path to a run directory (required)"),
        "device": DEVICE,
        "threads": THREADS,
        "policy": OptionHelp("'greedy' plays the best legal Q; 'entropy' samples softmax(Q·α·log(t+1)) over "
                             "legal "
                             "moves with the training's action counts t, as seed 000 tested", "seed 000: "
                             "kind_action='entropy' is stochastic at test time", "'greedy' or 'entropy'"),
        "seed": OptionHelp("seed of the 'entropy' policy's draws", "this toolkit",
                           "an integer >= 0, or None for OS entropy"),
    },
    "qnet": {
        "weights": OptionHelp("the run directory written by `ai2048 train qnet`", "seed 003's Q-network",
                              "a path to a run directory (required)"),
        "device": DEVICE,
        "threads": THREADS,
    },
    "policy": {
        "weights": OptionHelp("the run directory written by `ai2048 train policy`", "seed 002's policy MLP "
                              "(p-mckenzie/2048)", "a path to a run directory (required)"),
        "device": DEVICE,
        "threads": THREADS,
    },
    "ntuple": {
        "weights": OptionHelp("the run directory of `ai2048 train ntuple` (or its weights.npz or a .ntz "
                              "file)",
                              "seed 004 (TD learning of n-tuple networks, Szubert & Jaśkowski 2014)",
                              "a path, or None to play a shipped network (model)"),
        "depth": OptionHelp("1 = 1-ply: greedy on the network's values; D >= 2 = D-ply expectimax with the "
                            "network at the leaves (2-ply: max-chance-max)",
                            "seed 004 plays 1-ply; deeper search as in Yeh et al. 2016", "an integer >= 1"),
        "downgrade": OptionHelp("value boards with their large tiles lowered: true/'lowest' with a 32768 "
                                "(lowest gap closed), 'highest' from a 16384 (highest gap closed); "
                                "'residual' for a network trained with --downgrade residual",
                                "Guei et al. 2022; the highest-gap and residual variants are this toolkit's",
                                "true, false, 'none', 'lowest', 'highest' or 'residual'"),
        "prob_cutoff": PROB_CUTOFF,
        "tt_bits": TT_BITS,
        "p_two": OptionHelp("probability of a 2 assumed by before-state values and the search",
                            "seed 004's allpopup: 9 twos to 1 four", "a float in [0, 1]"),
        "patterns": OptionHelp("the pattern set the weights must have (a mismatch is an error)",
                               "seed 004's 4x6 tuples and others (`ai2048 train ntuple --help`)",
                               "a pattern-set name, or None to accept the file's"),
        "model": OptionHelp("a shipped network's name (see `ai2048 models`)", "this toolkit's trained "
                                                                              "networks",
                            "a name, or None for the default one (only without weights)"),
        "models_dir": OptionHelp("the folder to look shipped networks up in", "this toolkit",
                                 "a path, or None for the package's (or $AI2048_MODELS)"),
        "tie_order": OptionHelp("tie-break order between moves of equal value: the first in this order wins",
                                "seed 004's argmax takes the first of up, down, left, right (004); "
                                "clockwise = the lower action number",
                                _ORDERS),
        "illegal_action": OptionHelp("mask: only moves that change the board; penalty: a move that changes "
                                     "nothing scores -1 plus the board's value and may be chosen (1-ply; "
                                     "evaluate with --illegal-move penalty)",
                                     "seed 004's argmax does not mask moves", "mask or penalty"),
    },
    "endgame": {
        "depth": OptionHelp("the n-tuple network search's depth away from the tables (3 = 3-ply, "
                            "2 = 2-ply: max-chance-max)",
                            "Yeh et al. 2016; macroxue/2048-ai searches between lookups", "an integer >= 1"),
        "tables": OptionHelp("the endgame tables to play from (`ai2048 tables` lists them)",
                             "macroxue/2048-ai's lookup tables; game-difficulty/2048EndgameTablebase's "
                             "formation tables (method only)", "'default' or comma-separated table names"),
        "tables_dir": OptionHelp("the folder the tables were built in", "this toolkit",
                                 "a path, or None for $AI2048_TABLES or the user cache"),
        "downgrade": OptionHelp("how the network values boards past its training: 'highest' (a board "
                                "holding a 16384 with its highest gap closed), 'lowest' (Guei et al.), "
                                "'residual' (a network trained with a residual late stage), or false",
                                "Guei et al. 2022 (tile-downgrading); the highest-gap and residual "
                                "variants are this toolkit's",
                                "'highest', 'lowest', 'residual', 'none', true or false"),
        "min_value": OptionHelp("a table's move is played only when its success probability is above this",
                                "this toolkit", "a float in [0, 1)"),
        "model": OptionHelp("a shipped network's name (see `ai2048 models`)",
                            "this toolkit's trained networks",
                            "a name, or None for the default one (only without weights)"),
        "weights": OptionHelp("an n-tuple run directory or network file to search with instead",
                              "seed 004 (TD learning of n-tuple networks)", "a path, or None"),
        "prob_cutoff": PROB_CUTOFF,
        "tt_bits": TT_BITS,
        "p_two": OptionHelp("probability of a 2; must be the one the tables were solved for",
                            "2048 rules", "a float in (0, 1]"),
    },
}
"""Help for every config key of every registered agent, by agent then key."""


def option_help(name: str) -> list[dict[str, Any]]:
    """Agent ``name``'s options in signature order: key, default (None and ``required`` when there is
    none), what, source, allowed. Unknown agents raise as :func:`make_agent` does."""
    keys = config_keys(name)
    if name not in OPTIONS:  # registered outside the package (a plugin or a test): no help to show
        return [{"key": k, "default": None if d is inspect.Parameter.empty else d,
                 "required": d is inspect.Parameter.empty, "what": "", "source": "", "allowed": ""}
                for k, d in keys.items()]
    table = OPTIONS[name]
    missing = [k for k in keys if k not in table]
    if missing:
        raise KeyError(f"agent {name!r} has no help for option(s) {', '.join(missing)} (add them to OPTIONS)")
    out = []
    for key, default in keys.items():
        h = table[key]
        required = default is inspect.Parameter.empty
        out.append({"key": key, "default": None if required else default, "required": required,
                    "what": h.what, "source": h.source, "allowed": h.allowed})
    return out


def format_option_help(name: str) -> str:
    """``ai2048 agents NAME``'s text: the agent's description, then one block per option."""
    rows = option_help(name)
    lines = [f"{name}: {available()[name]}"]
    if not rows:
        lines.append("no options")
    for row in rows:
        head = f"{row['key']} (required)" if row["required"] else f"{row['key']}={row['default']!r}"
        if not row["what"]:
            lines.append(f"  {head}")
            continue
        lines.append(f"  {head}  allowed: {row['allowed']}")
        lines.append(f"      {row['what']} [from: {row['source']}]")
    return "\n".join(lines)
