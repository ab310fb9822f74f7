"""``ai2048 eval``: play N seeded games with an agent and print seed 004's table with intervals."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ai2048 import checks
from ai2048.checkpoint import check_output_file
from ai2048.cli._agents import ChosenAgent, choose_agent
from ai2048.cli._common import (
    add_set_argument,
    check_out_dir,
    check_out_file,
    parse_sets,
    printable,
)
from ai2048.evaluate import (
    ILLEGAL_MOVES,
    MAX_MOVES,
    MAX_WORKERS,
    EvalError,
    EvalResult,
    check_end_rules,
    check_illegal_move,
    evaluate,
)
from ai2048.evaluate.stream import GameStream, stream_path
from ai2048.rules import CAPPED_RULES, MAX_EXPONENT, P_TWO, RULES_VERSION, RULES_VERSIONS

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "seed004-exact": {
        "rules": {"end_on_full_board": True, "illegal_move": "penalty"},
        "agent": {"tie_order": "004", "illegal_action": "penalty"},
    },
}
"""``--preset``: the game rules it sets, and the settings it gives agents that have them (a ``--set``
of the same key wins). ``seed004-exact`` plays seed 004's test: a game ends at a full board, and a
move that changes nothing may be chosen (-1 point, a tile spawns) by an n-tuple network breaking
ties up, down, left, right (``ai2048 train ntuple --preset seed004-exact`` trains under these rules)."""


def goal_tile_value(text: str) -> int:
    """``--goal-tile``'s value: a power of two in 4..32768 written as an integer, else an argparse
    error naming the value and what to give instead (before any agent is built)."""
    tiles = f"a power of two in 4..{2**MAX_EXPONENT}"
    leave = "or leave --goal-tile out to play every game to the end"
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a whole number; give {tiles} such as 2048, {leave}"
        ) from None
    try:
        goal, _ = check_end_rules(value, False)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value} is not {tiles}; give one such as 2048, {leave}") from None
    assert goal is not None
    return goal


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    """Options shared by ``eval`` and ``arena``."""
    p.add_argument("--games", type=int, default=100, help="number of games (default 100)")
    p.add_argument("--seed", type=int, default=0, help="evaluation seed; game i gets a seed derived from it")
    p.add_argument("--workers", type=int, default=1,
                   help="parallel workers, 1..256 (default 1): threads for agents that play whole games in "
                   "numba, else processes")
    p.add_argument("--max-moves", type=int, default=None,
                   help="stop each game after this many moves (1..10**9; default: play to the end)")
    p.add_argument("--goal-tile", type=goal_tile_value, default=None, metavar="N",
                   help="stop a game when a tile reaches N, a power of two in 4..32768 (seeds 000 and 003 "
                   "stop at 2048); default: play until no move is legal. Kernel-backed agents keep "
                   "their numba speed")
    p.add_argument("--end-on-full-board", action="store_true",
                   help="stop a game when the board is full even if merges remain, or holds a 32768 "
                   "(seed 004's end rule); default: play until no move is legal")
    p.add_argument("--illegal-move", choices=ILLEGAL_MOVES, default=None,
                   help="a move that changes nothing: reject (default: the run stops with an error naming "
                   "the agent) or penalty (seed 004: it costs 1 point and a tile still spawns; needs "
                   "--end-on-full-board)")
    p.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="seed004-exact: seed 004's test rules (--end-on-full-board --illegal-move penalty) "
                   "and, for agents with these settings, tie_order=004 and illegal_action=penalty "
                   "(a --set of either wins); `ai2048 train ntuple --preset seed004-exact` trains "
                   "under the same rules")
    p.add_argument("--p-two", type=float, default=P_TWO, help="probability that a spawned tile is a 2")
    p.add_argument("--rules", type=int, choices=RULES_VERSIONS, default=RULES_VERSION,
                   help=f"rules version (default {RULES_VERSION}: tiles go past 32768 to 131072; "
                   f"{CAPPED_RULES}: games stop growing at 32768, two 32768s do not merge)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local processes, or tasks on a Ray cluster (pip install 'ai2048[ray]')")
    p.add_argument("--address", default=None, help="Ray cluster address (with --backend ray; default: auto)")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "eval",
        help="evaluate an agent over N seeded games",
        description="Play N games with AGENT (a registered name or a run directory) and print the tile "
        "table (reach and end rates with Wilson 95%% intervals), score and speed. Ctrl-C keeps the "
        "finished games; with --out they are also streamed to disk as they finish, and --resume plays "
        "only the games a stopped or killed run lacks.",
    )
    p.add_argument("agent", help="agent name (see `ai2048 agents`) or a run directory with meta.json")
    add_set_argument(p)
    add_eval_arguments(p)
    p.add_argument("--out", type=Path, default=None,
                   help="write the result JSON here (atomically; a regular file only, /dev/null is "
                   "refused); finished games stream to OUT's .games.jsonl beside it as they finish, so a "
                   "killed run keeps them")
    p.add_argument("--resume", action="store_true",
                   help="with --out: keep the finished games of an interrupted or killed run (its "
                   ".games.jsonl) and play only the rest, with the same seeds")
    p.add_argument("--record", choices=("best",), default=None,
                   help="'best': save the best and the worst game as replayable records")
    p.add_argument("--records", type=Path, default=None,
                   help="folder for --record files (default: beside --out, else ./records)")
    p.set_defaults(func=run, check=check)


def check_eval_arguments(args: argparse.Namespace) -> None:
    """Reject bad shared options before an agent is built or a game played."""
    checks.whole("--games", args.games, 1)
    checks.whole("--workers", args.workers, 1, MAX_WORKERS)
    checks.whole("--seed", args.seed, 0)
    if args.max_moves is not None:
        checks.whole("--max-moves", args.max_moves, 1, MAX_MOVES)
    checks.probability("--p-two", args.p_two)
    if args.goal_tile is not None:  # parsed by goal_tile_value; checked again for namespaces built in code
        try:
            check_end_rules(args.goal_tile, False)
        except (TypeError, ValueError) as e:
            raise ValueError(f"--goal-tile {args.goal_tile!r}: {e}") from None
    apply_preset_rules(args)


def apply_preset_rules(args: argparse.Namespace) -> None:
    """``--preset``'s rules into ``args`` (``--end-on-full-board``, ``--illegal-move``), then
    ``--illegal-move`` resolved (default ``reject``) and checked against ``--end-on-full-board``.
    A flag that contradicts the preset is an error, not silently overridden."""
    preset = getattr(args, "preset", None)
    illegal = getattr(args, "illegal_move", None)
    if preset is not None:
        rules = PRESETS[preset]["rules"]
        if illegal is not None and illegal != rules["illegal_move"]:
            raise ValueError(f"--illegal-move {illegal} contradicts --preset {preset} (which plays "
                             f"--illegal-move {rules['illegal_move']}); drop one of them")
        args.end_on_full_board = args.end_on_full_board or rules["end_on_full_board"]
        illegal = rules["illegal_move"]
    args.illegal_move = illegal or "reject"
    if args.illegal_move == "penalty" and not args.end_on_full_board:
        raise ValueError(
            "--illegal-move penalty needs --end-on-full-board, as seed 004 plays them together (on a full "
            "board a move that changes nothing has no cell to spawn in); add --end-on-full-board, or use "
            "--preset seed004-exact"
        )
    check_illegal_move(args.illegal_move, args.end_on_full_board)


def choose_with_preset(args: argparse.Namespace, spec: str, sets: dict[str, Any]) -> ChosenAgent:
    """The agent ``spec`` names with ``sets``, checked once (:func:`~ai2048.cli._agents.choose_agent`),
    plus ``--preset``'s agent settings that it has and ``sets`` lacks, fitted to the rules (a run trained
    under seed 004's rules masks its moves under the standard ones, with a note on stderr); a setting
    that does not fit the rules is refused, naming the flag to add (:func:`check_agent_fits`). Call after
    :func:`check_eval_arguments`, which resolves ``args.illegal_move``."""
    preset = getattr(args, "preset", None)
    return choose_agent(spec, sets, PRESETS[preset]["agent"] if preset is not None else None,
                        illegal_move=args.illegal_move)


def run_eval(args: argparse.Namespace, built: tuple[Any, str, dict[str, Any]], stream_to: Path | None = None,
             resume: bool = False) -> EvalResult:
    """Evaluate one agent, ``built`` (:meth:`ChosenAgent.build`'s triple), with the shared options;
    returns the EvalResult (or raises EvalError).

    With ``stream_to`` every finished game is appended to that JSON-lines file as it finishes
    (:mod:`ai2048.evaluate.stream`); with ``resume`` the games already there are kept and not replayed.
    """
    agent, name, cfg = built
    agent.name = name
    agent.config = cfg
    stream = None
    done = None
    if stream_to is not None:
        stream = GameStream(stream_to, {"agent": name, "config": cfg, "seed": args.seed,
                                        "p_two": args.p_two, "max_moves": args.max_moves,
                                        "games_requested": args.games, "goal_tile": args.goal_tile,
                                        "end_on_full_board": args.end_on_full_board,
                                        "illegal_move": args.illegal_move, "rules_version": args.rules})
        if resume:
            done = stream.load()
            print(f"resuming: {len(done)} finished game(s) kept from {stream_to}", file=sys.stderr)
        elif stream_to.exists():
            raise ValueError(
                f"{stream_to} holds the finished games of an earlier run with --out {args.out}; pass "
                "--resume to finish that run, or delete the file to start afresh"
            )
        stream.open(done)
    try:
        result = evaluate(
            agent, games=args.games, seed=args.seed, workers=args.workers,
            progress=not args.no_progress, p_two=args.p_two, max_moves=args.max_moves,
            goal_tile=args.goal_tile, end_on_full_board=args.end_on_full_board,
            illegal_move=args.illegal_move, rules=args.rules, backend=args.backend, address=args.address,
            done=done, on_game=stream.write if stream is not None else None,
        )
    finally:
        if stream is not None:
            stream.close()
    return result


def check(args: argparse.Namespace) -> ChosenAgent:
    """Every check ``run`` makes before the agent is built or a game played; returns the agent, checked
    once, for ``run`` to build once."""
    check_eval_arguments(args)
    check_games_out(args)
    if args.record == "best":
        if args.illegal_move == "penalty":
            raise ValueError(
                "--record best writes game records, which replay under the standard rules; a game with "
                "seed 004's unchanged moves (--illegal-move penalty) does not replay: leave --record out"
            )
        check_out_dir(args.records, "--records")
    return choose_with_preset(args, args.agent, parse_sets(args.sets))


def check_games_out(args: argparse.Namespace) -> None:
    """``--out``, the games file that streams beside it, and ``--resume`` (which needs ``--out``)."""
    check_out_file(args.out)
    if args.out is not None:
        check_output_file(stream_path(args.out), "--out's games file",
                          fix="remove it or choose another --out")
    if args.resume and args.out is None:
        raise ValueError(
            "--resume needs --out: it continues the run whose games stream beside that result file"
        )


def run(args: argparse.Namespace) -> int:
    chosen = check(args)
    games_file = stream_path(args.out) if args.out is not None else None
    try:
        result = run_eval(args, chosen.build(), games_file, args.resume)
        code = 0
    except EvalError as e:
        result = e.result
        print(f"ai2048 eval: error: {printable(e)}", file=sys.stderr)
        code = 1
    print(result.format())
    if args.out is not None:
        result.save(args.out)
        print(f"result written to {args.out}")
        if games_file is not None and code == 0 and not result.interrupted:
            games_file.unlink(missing_ok=True)  # complete: the result holds every game
        elif games_file is not None:
            print(f"finished games kept in {games_file}; finish the run with the same command and --resume")
    if args.record == "best" and result.games:
        folder = args.records or (args.out.parent if args.out else Path("records"))
        for path in save_best_worst(result, folder):
            print(f"record saved to {path} (replay: ai2048 replay {path})")
    return 130 if result.interrupted and code == 0 else code


def save_best_worst(result: EvalResult, folder: Path) -> list[Path]:
    """Write the best and the worst game of ``result`` as :class:`ai2048.records.GameRecord` files."""
    from ai2048.records import GameRecord

    best, worst = result.best_and_worst()
    paths = []
    for kind, rec in (("best", best), ("worst", worst)):
        gr = GameRecord.from_actions(
            rec["seed"], rec["actions"], p_two=result.p_two, agent=result.agent,
            agent_config=dict(result.config),
            meta={"eval_seed": result.seed, "game_index": rec["index"], "kind": kind},
        )
        paths.append(gr.save(folder / f"{result.agent}-{kind}-game{rec['index']}.json"))
    return paths
