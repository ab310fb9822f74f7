"""Turn a training run and its evaluation results into a shipped network: ``NAME.ntz`` + card.

    ai2048 models pack runs/long1 --name 4x6-tc-lambda --eval-1ply e1.json --eval-2ply e2.json \\
        --command "ai2048 train ntuple --preset tc ..." --default

Steps: read the run (``config.json``, ``meta.json``, ``weights.npz``, all checked); keep as
float32 every weight of every 1-ply choice on calibration positions from the network's own games
(:func:`ai2048.models.agreement.hot_indices`: the weights most positions use); choose the finest
fixed-point step whose file fits ``max_mib``; check the moves on fresh positions (kept in the
file), adding the decision weights of any that disagree; write the file, decode it back and
compare; write the card as JSON and markdown.
"""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ai2048.checkpoint import (
    atomic_write,
    check_output_file,
    check_regular_file,
    read_run_config,
    read_run_meta,
    write_json,
)
from ai2048.checks import number, whole
from ai2048.models import agreement, compact
from ai2048.models.card import CARD_FORMAT, check_name, check_same_run, evaluation, markdown, ply
from ai2048.models.store import card as shipped_card
from ai2048.models.store import default_name, models_dir, names
from ai2048.ntuple.network import Network, load_file
from ai2048.ntuple.patterns import PRESETS, parse_patterns, pattern_name
from ai2048.rules import MAX_EXPONENT, MAX_TILE_EXPONENT, P_TWO, RULES_VERSION, RULES_VERSIONS

ATTEMPTS = 8
"""Fresh check sets tried: the disagreeing positions of each join the exact set, and the card
records every set's agreement (the first is the format's honest rate)."""

STEPS = tuple(2.0**k for k in range(-8, 5))
"""Fixed-point steps tried, finest first: 2**-8 (every weight within 0.002) to 16."""

LIMITS = [
    f"Its features read a cell up to exponent {MAX_EXPONENT}: a tile of {1 << MAX_EXPONENT} or more is one "
    f"value to it (rules version {RULES_VERSION} keeps the exact value beside the board), and two equal "
    "such tiles are shown to it as two 16384s so that it plans their merge. Past the first 32768 it "
    "plays positions it rarely trained on.",
    "It values boards under the spawn odds it was trained with; other odds (p_two) play, uncalibrated.",
    "It is one fixed network: it does not adapt to an opponent placing tiles (minimax) or to other "
    "board sizes.",
    "Deeper search (3-ply and beyond: depth >= 3) is stronger but far slower: 2-ply (depth 2) is the "
    "setting the card's tables measure.",
]


def machine() -> str:
    """This machine in words: CPU model, cores, OS (for the card's training row)."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"


def read_run(run: str | Path) -> tuple[Network, dict[str, Any], dict[str, Any]]:
    """(float32 network, config, meta) of an ``ai2048 train ntuple`` run directory, each checked."""
    run = Path(run)
    if not run.is_dir():
        raise FileNotFoundError(f"run directory {run} does not exist")
    for f in ("config.json", "meta.json", "weights.npz"):
        check_regular_file(run / f, "run file", missing=(
            f"{run} has no {f}: it is not a finished `ai2048 train ntuple` run directory"))
    cfg = read_run_config(run)  # the tolerant readers: every layout `train ntuple` has written
    meta = read_run_meta(run)
    if not isinstance(cfg, dict) or not isinstance(meta, dict):
        raise ValueError(f"{run}/config.json and meta.json must be JSON objects")
    if meta.get("trainer") != "ntuple":
        raise ValueError(
            f"{run} is a run of trainer {meta.get('trainer')!r}; only n-tuple networks are packed"
        )
    if meta.get("rules_version") not in RULES_VERSIONS:
        raise ValueError(
            f"{run}/meta.json says rules version {meta.get('rules_version')}; this ai2048 plays versions "
            f"{', '.join(map(str, RULES_VERSIONS))}: retrain under the current rules"
        )
    net, _ = load_file(run / "weights.npz", patterns=str(cfg.get("patterns", "4x6")))
    stages = tuple(int(s) for s in cfg.get("stages", ()))
    if net.stages != stages or net.kind != cfg.get("state", "after"):
        raise ValueError(
            f"{run}/weights.npz holds stages {list(net.stages)} of {net.kind}-states, but config.json says "
            f"{list(stages)} of {cfg.get('state')}-states"
        )
    return net, cfg, meta


def command_of(cfg: dict[str, Any]) -> str:
    """A command that repeats the run, written from its config (when the real one was not recorded);
    each value shell-quoted, so an empty one (``--init ''``) or a list stays one argument."""
    parts = ["ai2048 train ntuple"]
    for k, v in cfg.items():
        if isinstance(v, bool):
            v = str(v).lower()
        elif isinstance(v, list):
            v = "[" + ",".join(map(str, v)) + "]"
        parts.append(f"--{k.replace('_', '-')} {shlex.quote(str(v))}")
    return " ".join(parts + ["--out", "RUN"])


def _entropy_bytes(d: np.ndarray) -> float:
    """Order-0 entropy of the integers ``d``, in bytes (lzma lands a little under it)."""
    _, counts = np.unique(d, return_counts=True)
    p = counts / d.size
    return float(-(p * np.log2(p)).sum() * d.size / 8)


def _first_step(w: np.ndarray, nstages: int, fill: float, budget: int, index_bytes: int) -> float:
    """The finest step in :data:`STEPS` predicted to fit ``budget`` bytes: the codes' entropy at
    2**-6, one bit an entry more or less for each halving or doubling of the step."""
    _, d = compact.stage_deltas(w, nstages, fill, 2.0**-6)
    if not d.size:
        return STEPS[0]
    h = _entropy_bytes(d)
    for st in STEPS:
        bits = max(h * 8 / d.size + (-6 - np.log2(st)), 1.0)
        if index_bytes + bits * d.size / 8 <= 0.95 * budget:
            return st
    return STEPS[-1]


def training_record(
    cfg: dict[str, Any],
    meta: dict[str, Any],
    command: str | None,
    wall_seconds: float | None,
    machine_text: str | None,
    directory: str | Path | None,
) -> dict[str, Any]:
    """The card's ``training`` entry: this run, and the parts before it when it began with ``--init``.

    A run started from a shipped network (``--init shipped`` or a name) continues that network's
    training, so its card sums the parts (games, kernel seconds, wall seconds) and lists each one
    under ``parts``; the fields outside ``parts`` describe the totals and the last part's command,
    seed and config. A run started from a path records the path as ``init`` (its history is not known).
    """
    part: dict[str, Any] = {
        "command": command or command_of(cfg),
        "seed": cfg.get("seed"),
        "games": int(meta["progress"].get("games", 0)),
        "train_seconds": float(meta["progress"].get("time", 0.0)),
        "wall_seconds": wall_seconds,
        "machine": machine_text or machine(),
        "config": cfg,
    }
    spec = str(cfg.get("init") or "")
    if not spec:
        return part
    if spec != "shipped" and spec not in names(directory):
        return {**part, "init": spec}
    name = default_name(directory) if spec == "shipped" else spec
    before = shipped_card(name, directory)["training"]
    earlier_parts = before.get("parts", [{k: v for k, v in before.items() if k != "parts"}])
    parts = [*earlier_parts, {**part, "init": name}]
    walls = [p.get("wall_seconds") for p in parts]
    return {
        **part,
        "games": sum(int(p["games"]) for p in parts),
        "train_seconds": sum(float(p["train_seconds"]) for p in parts),
        "wall_seconds": None if None in walls else float(sum(walls)),  # type: ignore[arg-type]
        "init": name,
        "parts": parts,
    }


def check_pack_options(name: str, *, max_mib: float = 64.0, positions: int = 100_000, checks: int = 1000,
                       step: float | None = None, wall_seconds: float | None = None,
                       codec: str = "zlib") -> None:
    """The checks :func:`pack` makes on its options before it reads anything (a ValueError names the
    fix); ``ai2048 models pack`` makes them before the run directory is read."""
    check_name(name)
    number("max_mib", max_mib, 0, 4096, lo_open=True)
    whole("positions", positions, 1)
    whole("checks", checks, 1)
    if step is not None:
        compact.check_step(step, "0.25 or 1")
    if wall_seconds is not None:
        number("wall_seconds", wall_seconds, 0)
    if codec not in compact.CODECS:
        raise ValueError(f"codec must be one of {', '.join(compact.CODECS)}, got {codec!r}")


def check_pack_outputs(name: str, directory: str | Path | None = None) -> list[Path]:
    """The files :func:`pack` writes (``NAME.ntz``, ``NAME.json``, ``NAME.md`` in the models folder),
    each checked before the run is read: a folder, device, FIFO or socket in a file's place, a symlink to
    nothing, or a folder that cannot be written is a ValueError naming it."""
    check_name(name)
    folder = models_dir(directory)
    paths = [folder / f"{name}{compact.SUFFIX}", folder / f"{name}.json", folder / f"{name}.md"]
    for path in paths:
        check_output_file(path, "models pack output", fix="remove it, or choose another --name or --dir")
    return paths


def pack(
    run: str | Path,
    name: str,
    *,
    eval_1ply: str | Path | None = None,
    eval_depth2: str | Path | None = None,
    command: str | None = None,
    summary: str = "",
    default: bool = False,
    directory: str | Path | None = None,
    machine_text: str | None = None,
    wall_seconds: float | None = None,
    max_mib: float = 64.0,
    step: float | None = None,
    codec: str = "zlib",
    positions: int = 100_000,
    checks: int = 1000,
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Pack run directory ``run`` as shipped network ``name`` into ``directory``; returns the card.

    Args:
        eval_1ply, eval_depth2: result files (``ai2048 eval --out``) of the 1-ply and 2-ply agent
            (``depth=1`` and ``depth=2``).
        command: the training command as run (default: one written from config.json).
        default: mark it the network ``make_agent("ntuple")`` plays.
        max_mib: largest file allowed; the step is the finest that fits (or ``step``).
        positions: calibration positions; ``checks``: fresh positions whose moves must all agree.
        seed: seed of the games the positions come from.
    """
    check_pack_options(name, max_mib=max_mib, positions=positions, checks=checks, step=step,
                       wall_seconds=wall_seconds, codec=codec)
    check_pack_outputs(name, directory)
    evals = {}  # read first: a wrong result file is found before minutes of packing
    if eval_1ply is not None:
        evals[ply(1)] = evaluation(eval_1ply, depth=1)
    if eval_depth2 is not None:
        evals[ply(2)] = evaluation(eval_depth2, depth=2)
    t_start = time.perf_counter()
    for ev in evals.values():
        check_same_run(ev, run)
    net, cfg, meta = read_run(run)
    training = training_record(cfg, meta, command, wall_seconds, machine_text, directory)
    nstages = len(net.stages) + 1
    fill = float(np.float32(float(cfg.get("init_value", 0.0)) / net.features))
    p_two = float(cfg.get("p_two", P_TWO))
    out_dir = models_dir(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    touched = int((net.w != np.float32(fill)).sum())
    log(f"{run}: patterns {net.patterns}, stages {list(net.stages)}, {touched:,} of {net.w.size:,} "
        f"weights touched ({100 * touched / net.w.size:.2f}%)")

    cal = agreement.game_positions(net, positions, seed=seed, p_two=p_two)
    want_cal = agreement.greedy_moves(net, cal, p_two=p_two)
    hot = agreement.hot_indices(net, cal, p_two)
    hot_bytes = 6 * hot.size  # about 2 bytes of index gap and 4 of float32 value each
    log(f"{hot.size:,} weights decide the {positions:,} calibration positions' moves: kept as float32 "
        f"(about {hot_bytes / 2**20:.1f} MiB)")
    budget = int(max_mib * 2**20)
    if step is None:
        x, _ = compact.stage_deltas(net.w, nstages, fill, STEPS[-1])
        compress = compact.CODECS[codec][0]
        index_bytes = len(compress(np.packbits(x != 0).tobytes() + x[x != 0].tobytes()))
        first = _first_step(net.w, nstages, fill, budget, index_bytes + hot_bytes)
        log(f"index {index_bytes / 2**20:.1f} MiB; the finest step predicted to fit {max_mib} MiB "
            f"is {first:g}")
        steps = [s for s in STEPS if s >= first]
    else:
        steps = [step]
    for st in steps:
        base = compact.stored_weights(net.w, nstages, fill, st)

        def stored(ex: np.ndarray, base: np.ndarray = base) -> np.ndarray:
            out = base.copy()
            out[ex] = net.w[ex]
            return out

        exact, rounds = agreement.calibrate(net, cal, stored, p_two=p_two, want=want_cal, exact=hot)
        log(f"step {st:g}: calibration on {positions:,} positions, disagreements per round {rounds}, "
            f"{exact.size:,} weights kept exact")
        tries = []
        for attempt in range(ATTEMPTS):
            board = agreement.game_positions(net, checks, seed=seed + 1 + attempt, p_two=p_two)
            want = agreement.greedy_moves(net, board, p_two=p_two)
            got = agreement.greedy_moves(net, board, stored(exact), p_two=p_two)
            bad = np.flatnonzero(got != want)
            tries.append({"seed": seed + 1 + attempt, "agree": int(checks - bad.size)})
            if not bad.size:
                break
            log(f"  {bad.size} of {checks} fresh positions disagree: their decision weights join the "
                "exact set")
            deciding = [agreement.decision_indices(net, int(board[i]), p_two) for i in bad]
            exact = np.union1d(exact, np.concatenate(deciding))
        else:
            raise RuntimeError(
                f"moves on fresh positions still disagree after {ATTEMPTS} sets: {tries}; choose a finer "
                "--step (and a larger --max-mib) or more --positions"
            )
        sections = compact.encode(
            net, step=st, fill=fill, exact=exact, check_boards=board, check_moves=want, p_two=p_two,
            codec=codec,
        )
        size = sum(a.nbytes for a in sections.values()) + 4096
        log(f"  encoded: about {size / 2**20:.1f} MiB")
        if size <= budget:
            break
    else:
        raise ValueError(
            f"{run} does not fit in {max_mib} MiB even at step {steps[-1]:g}; raise max_mib or choose a "
            "coarser step"
        )

    path = out_dir / f"{name}{compact.SUFFIX}"
    atomic_write(path, lambda f: np.savez(f, **sections))  # type: ignore[arg-type]
    nbytes = path.stat().st_size
    if nbytes > budget:
        path.unlink()
        raise ValueError(
            f"{path} came to {nbytes / 2**20:.1f} MiB, over {max_mib} MiB; choose a coarser step"
        )
    sha = compact.sha256_file(path)
    t0 = time.perf_counter()
    header, w, cb, cm = compact.decode(path, sha256=sha, size=nbytes)
    load_s = time.perf_counter() - t0
    if not np.array_equal(w, stored(exact)):
        raise RuntimeError(f"{path} decodes to other weights than were encoded: a bug in the compact format")
    back = Network(net.patterns, stages=net.stages, kind=net.kind, weights=w)
    if not np.array_equal(agreement.greedy_moves(back, cb, p_two=p_two), cm):
        raise RuntimeError(f"{path} does not replay its own check moves after decoding")
    log(f"wrote {path}: {nbytes / 2**20:.2f} MiB, decoded in {load_s:.2f} s, moves agree on {checks} "
        "fresh positions")

    preset = next((k for k, v in PRESETS.items() if pattern_name(parse_patterns(v)) == net.patterns), None)
    card = {
        "format": CARD_FORMAT,
        "name": name,
        "default": bool(default),
        "summary": summary or (
            f"{preset or 'custom'} n-tuple network, {len(net.stages) + 1} weight stage(s), "
            f"{int(meta['progress'].get('games', 0)):,} training games."
        ),
        "agent": "ntuple",
        "file": {"name": path.name, "bytes": nbytes, "sha256": sha},
        "network": {
            "patterns": net.patterns, "preset": preset, "stages": list(net.stages), "kind": net.kind,
            "entries": int(net.w.size), "touched": touched, "touched_fraction": touched / net.w.size,
            "values": f"fixed point, step {st:g} (2^{int(np.log2(st))}), stage deltas",
            "step": st, "stored_entries": int(header["touched"]), "exact_entries": int(exact.size),
            "codec": codec,
        },
        "rules": {"rules_version": RULES_VERSION, "p_two": p_two, "max_tile": 1 << MAX_TILE_EXPONENT},
        "training": training,
        "evaluation": evals,
        "agreement": {
            "positions": checks, "agree": checks, "attempts": tries, "calibration_positions": positions,
            "calibration_rounds": rounds, "seed": seed,
        },
        "limits": LIMITS,
        "packed": {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "seconds": round(time.perf_counter() - t_start, 1),
        },
    }
    write_json(out_dir / f"{name}.json", card)
    text = markdown(card)
    atomic_write(out_dir / f"{name}.md", lambda f: f.write(text), mode="w")
    return card
