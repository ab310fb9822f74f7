"""Model cards: what a shipped network is, how it was made, how strong it is, what it cannot do.

A card is JSON (``NAME.json``, the record the code reads) with a markdown twin (``NAME.md``,
generated from the JSON by :func:`markdown`). Evaluation tables come from the result files of
``ai2048 eval --out`` or a training run's ``eval.json``, normalised by :func:`evaluation`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from ai2048.checkpoint import read_json
from ai2048.stats import wilson

CARD_FORMAT = "ai2048.model-card/1"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
"""Model names: letters, digits, ``.``, ``_``, ``-`` (no path separators: names are looked up, never
joined blindly)."""
RESERVED = ("pack", "shipped")
"""Words the CLI and ``--init`` give a meaning of their own."""

_EVAL_FORMAT = "ai2048.eval-result"
_OLD_KEY = re.compile(r"^depth (\d+)$")
_PLY_KEY = re.compile(r"^(\d+)-ply$")


def ply(depth: int) -> str:
    """The card's name of an evaluation at search ``depth``: ``depth=D`` searches D move layers, what
    the literature calls D-ply (2-ply: max-chance-max)."""
    return f"{depth}-ply"


def ply_key(key: str) -> str:
    """An evaluation's key as cards write it now: cards packed before wrote ``depth 2`` for the
    2-ply table, and still load."""
    m = _OLD_KEY.match(key)
    return ply(int(m.group(1))) if m else key


def _title(key: str) -> str:
    """An evaluation's heading, naming the ply and the option that plays it: ``2-ply (depth 2)``."""
    label = ply_key(key)
    m = _PLY_KEY.match(label)
    return f"{label} (depth {m.group(1)})" if m else label


def check_name(name: Any) -> str:
    """``name`` if it is a valid model name, else a ValueError saying what a name may hold."""
    if not isinstance(name, str) or not NAME_RE.match(name) or name in RESERVED:
        raise ValueError(
            f"model name {name!r} is not valid: use 1-64 letters, digits, '.', '_' or '-', starting "
            f"with a letter or digit, and not {' or '.join(map(repr, RESERVED))}"
        )
    return name


def _rows_from_counts(counts: dict[int, int], games: int) -> list[dict[str, Any]]:
    rows = []
    for tile in sorted(counts):
        k = counts[tile]
        lo, hi = wilson(k, games)
        rows.append(
            {
                "tile": tile,
                "reached": k,
                "reach": 100.0 * k / games,
                "reach_lo": 100.0 * lo,
                "reach_hi": 100.0 * hi,
            }
        )
    return rows


def evaluation(path: str | Path, depth: int) -> dict[str, Any]:
    """One evaluation table for a card from a result file, checked to be at ``depth``.

    Reads ``ai2048 eval --out`` results (format ``ai2048.eval-result``; the agent's ``depth``
    setting, 1 if absent) and ``eval.json`` of ``ai2048 train ntuple --eval-games`` (1-ply).
    Tile rows: share of games whose largest tile reached the tile, in %, with Wilson 95% bounds.
    """
    path = Path(path)
    d = read_json(path, "evaluation result")
    if not isinstance(d, dict):
        raise ValueError(f"evaluation result {path} is not a JSON object")
    try:
        if d.get("format") == _EVAL_FORMAT:
            if d.get("agent") not in (None, "ntuple"):
                raise ValueError(
                    f"evaluation result {path} is of agent {d.get('agent')!r}, not an n-tuple network"
                )
            found = int((d.get("config") or {}).get("depth", 1))
            s = d["summary"]
            games = int(s["games"])
            counts = {int(r["tile"]): int(r["reached"]) for r in s["tiles"]}
            out = {
                "games": games, "seed": d.get("seed"), "p_two": d.get("p_two"),
                "rules_version": d.get("rules_version"), "interrupted": bool(d.get("interrupted")),
                "score_mean": float(s["score_mean"]), "score_se": float(s["score_se"]),
                "score_median": float(s["score_median"]), "score_max": int(s["score_max"]),
                "moves_per_s": float(s["moves_per_s"]), "workers": d.get("workers"),
                "weights": (d.get("config") or {}).get("weights"),
            }
        elif "depth" in d and "tiles" in d and "max_exponents" in d:
            found = int(d["depth"])
            games = int(d["games"])
            tiles = [1 << int(e) for e in d["max_exponents"]]
            counts = {int(r["tile"]): sum(t >= int(r["tile"]) for t in tiles) for r in d["tiles"]}
            out = {
                "games": games,
                "seed": d.get("seed"),
                "p_two": None,
                "rules_version": None,
                "interrupted": False,
                "score_mean": float(d["score_mean"]),
                "score_se": float(d["score_sem"]),
                "score_median": float(d["score_median"]),
                "score_max": int(d["score_max"]),
                "moves_per_s": float(d["moves_per_s"]),
                "workers": None,
                "weights": None,
            }
        else:
            raise ValueError(
                f"{path} is not an evaluation result: write one with `ai2048 eval ntuple --set weights=RUN "
                "--set depth=D --games N --out FILE`"
            )
    except (KeyError, TypeError) as e:
        raise ValueError(f"evaluation result {path} lacks {e}; it is truncated or from another tool") from e
    if found != depth:
        raise ValueError(f"evaluation result {path} was played at depth {found}, not depth {depth}")
    if games < 1:
        raise ValueError(f"evaluation result {path} holds no finished games")
    out["depth"] = depth
    out["source"] = path.name
    out["tiles"] = _rows_from_counts(counts, games)
    return out


def check_same_run(ev: dict[str, Any], run: str | Path) -> None:
    """Raise unless evaluation ``ev`` (when it names its weights) played the network of ``run``."""
    weights = ev.get("weights")
    if not weights:
        return
    w, r = Path(weights), Path(run)
    if w.exists():
        same = w.resolve() in (r.resolve(), (r / "weights.npz").resolve())
    else:
        same = w.name in (r.name, "weights.npz") and (w.name != "weights.npz" or w.parent.name == r.name)
    if not same:
        raise ValueError(
            f"evaluation result {ev['source']} played weights {weights}, not the run {run} being packed"
        )


def reach(ev: dict[str, Any] | None, tile: int) -> float | None:
    """% of an evaluation's games reaching ``tile`` (0 if above every row, None without an evaluation)."""
    if not ev:
        return None
    rows = ev["tiles"]
    if rows and tile < rows[0]["tile"]:
        return 100.0
    return next((r["reach"] for r in rows if r["tile"] == tile), 0.0)


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def check_evaluations(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The card's evaluation tables, each checked to hold what :func:`headline` and :func:`markdown`
    show (a ValueError names the card, the table and the field: a hand-edited card without a field
    used to end ``ai2048 models`` in a KeyError)."""
    name = card.get("name")
    evs = card.get("evaluation", {})
    fix = "the card is truncated or hand-edited: reinstall it"
    if not isinstance(evs, dict):
        raise ValueError(f"model card {name!r}: 'evaluation' is a {type(evs).__name__}, not an object; {fix}")
    labels: dict[str, str] = {}
    for key, ev in evs.items():
        where = f"model card {name!r}, evaluation {key!r}"
        if ply_key(key) in labels:
            raise ValueError(f"{where} is the same table as {labels[ply_key(key)]!r}; {fix}")
        labels[ply_key(key)] = key
        if not isinstance(ev, dict):
            raise ValueError(f"{where} is a {type(ev).__name__}, not an object; {fix}")
        problems = [f"it lacks {f!r}" if f not in ev else f"{f}={repr(ev[f])[:40]} is not {what}"
                    for fields, ok, what in ((("games", "score_max"), _whole, "a whole number"),
                                             (("score_mean", "score_se", "score_median", "moves_per_s"),
                                              _finite, "a finite number"))
                    for f in fields if not ok(ev.get(f))]
        rows = ev.get("tiles")
        if not isinstance(rows, list) or not all(
                isinstance(r, dict) and _whole(r.get("tile")) and _whole(r.get("reached"))
                and all(_finite(r.get(f)) for f in ("reach", "reach_lo", "reach_hi")) for r in rows):
            problems.append("'tiles' is not a list of rows with tile, reached, reach, reach_lo and reach_hi")
        if problems:
            raise ValueError(f"{where}: {'; '.join(problems)}; {fix}")
    return evs


def _shown(card: dict[str, Any], build: Any) -> Any:
    """``build(card)``, a missing or mistyped field becoming a ValueError naming the card."""
    check_evaluations(card)
    try:
        return build(card)
    except KeyError as e:
        raise ValueError(f"model card {card.get('name')!r} has no {e.args[0]!r} field where one is shown; "
                         "the card is truncated or hand-edited: reinstall it") from None
    except (TypeError, ValueError, AttributeError, IndexError) as e:
        raise ValueError(f"model card {card.get('name')!r} cannot be shown ({e}); the card is truncated or "
                         "hand-edited: reinstall it") from None


HEADLINE_TILES = (16384, 32768, 65536, 131072)
"""The tiles whose reach % a headline gives for each evaluation (65536 and 131072: rules version 1)."""


def headline(card: dict[str, Any]) -> dict[str, Any]:
    """The figures ``ai2048 models`` lists: size, patterns, and each evaluation's mean and top tiles."""
    return dict(_shown(card, _headline))


def _headline(card: dict[str, Any]) -> dict[str, Any]:
    net = card["network"]
    out: dict[str, Any] = {
        "name": card["name"], "default": bool(card.get("default")), "MiB": card["file"]["bytes"] / 2**20,
        "patterns": net.get("preset") or net["patterns"], "stages": net["stages"],
    }
    for key, ev in card.get("evaluation", {}).items():
        out[ply_key(key)] = {
            "games": ev["games"], "score_mean": ev["score_mean"], "moves_per_s": ev["moves_per_s"],
            **{str(t): reach(ev, t) for t in HEADLINE_TILES},
        }
    return out


def _eval_md(title: str, ev: dict[str, Any]) -> list[str]:
    lines = [
        f"### {title}: {ev['games']} games (seed "
        f"{ev.get('seed')}{', interrupted' if ev.get('interrupted') else ''})",
        "",
        "| tile | reached | reach % | 95% Wilson interval |",
        "|---:|---:|---:|:---:|",
    ]
    for r in ev["tiles"]:
        lines.append(
            f"| {r['tile']} | {r['reached']} | {r['reach']:.1f} | {r['reach_lo']:.1f} – {r['reach_hi']:.1f} |"
        )
    lines += [
        "",
        f"Mean score {ev['score_mean']:,.0f} ± {ev['score_se']:,.0f} (standard error), median "
        f"{ev['score_median']:,.0f}, best {ev['score_max']:,}; {ev['moves_per_s']:,.0f} moves/s"
        + (f" (workers: {ev['workers']})" if ev.get("workers") else "") + f". Source: `{ev['source']}`.",
        "",
    ]
    return lines


def markdown(card: dict[str, Any]) -> str:
    """The card as markdown, every figure taken from the JSON."""
    return str(_shown(card, _markdown))


def _markdown(card: dict[str, Any]) -> str:
    net, rules, tr, f = card["network"], card["rules"], card["training"], card["file"]
    ag = card.get("agreement", {})
    lines = [
        f"# Model card: `{card['name']}`",
        "",
        card.get("summary", ""),
        "",
        "| | |",
        "|---|---|",
        f"| file | `{f['name']}`, {f['bytes']:,} bytes, SHA-256 `{f['sha256']}` |",
        f"| agent | `{card['agent']}` (n-tuple network, values of {net['kind']}-states) |",
        f"| patterns | {net.get('preset') or 'custom'}: `{net['patterns']}` |",
        f"| stages | {net['stages'] or 'one'} (tile exponents opening a new set of weights) |",
        f"| weights | {net['entries']:,} entries, {net['touched']:,} touched "
        f"({100 * net['touched_fraction']:.2f}%) |",
        f"| stored as | {net['values']}, {net['exact_entries']:,} entries kept as float32, sections "
        f"{net['codec']}-compressed |",
        f"| rules | version {rules['rules_version']}, a spawned tile is a 2 with probability "
        f"{rules['p_two']} |",
        f"| training command | `{tr['command']}` |",
        f"| seed | {tr['seed']} |",
        f"| games | {tr['games']:,} |",
        f"| training time | {tr['train_seconds'] / 60:.1f} min in the kernels"
        + (f", {tr['wall_seconds'] / 60:.1f} min wall" if tr.get("wall_seconds") else "")
        + " |",
        f"| machine | {tr['machine']} |",
    ]
    if ag:
        earlier = ", ".join(f"{t['agree']}/{ag['positions']}" for t in ag.get("attempts", [])[:-1])
        lines.append(
            f"| moves vs float32 | same 1-ply move on {ag['agree']} of {ag['positions']} fresh positions "
            "from its own "
            f"games (the weights of every choice on {ag['calibration_positions']:,} other positions kept as "
            "float32"
            + (
                f"; earlier fresh sets, whose disagreeing positions then joined the exact weights: {earlier}"
                if earlier
                else ""
            )
            + ") |"
        )
    parts = tr.get("parts") or []
    if parts:
        lines += ["", "## Training parts", "",
                  "| part | started from | command | games | kernel min | wall min |",
                  "|---|---|---|---:|---:|---:|"]
        for i, p in enumerate(parts, 1):
            wall = f"{p['wall_seconds'] / 60:.1f}" if p.get("wall_seconds") else ""
            start = p.get("init") or "an empty network"
            lines.append(f"| {i} | {start} | `{p['command']}` | {p['games']:,} | "
                         f"{p['train_seconds'] / 60:.1f} | {wall} |")
    lines += ["", "## Evaluation", ""]
    evs = card.get("evaluation", {})
    if not evs:
        lines += ["No evaluation was recorded with this network.", ""]
    for key, ev in evs.items():
        lines += _eval_md(_title(key), ev)
    lines += ["## What it cannot do", ""]
    lines += [f"- {x}" for x in card.get("limits", [])]
    lines += [
        "",
        "## Use",
        "",
        "```",
        f"ai2048 watch ntuple --set model={card['name']} --set depth=2",
        f"python -c \"import ai2048.models as m; agent = m.make('{card['name']}', depth=2)\"",
        f"ai2048 train ntuple --init {card['name']} --patterns {net.get('preset') or net['patterns']}"
        + (f" --stages {','.join(map(str, net['stages']))}" if net["stages"] else "")
        + f" --lam {float(tr.get('config', {}).get('lam', 0.0)):g} --alpha 0.005 --out runs/more",
        "```",
        "",
        "To train it further, use a small plain α as above: the file holds weights only, so temporal "
        "coherence (`--tc`) would restart every weight's rate at 1 and undo much of the training.",
        "",
    ]
    return "\n".join(lines)


def check_card(card: Any, path: str | Path) -> dict[str, Any]:
    """``card`` if it is a model card with the keys the code reads, else an error naming ``path``."""
    if not isinstance(card, dict) or card.get("format") != CARD_FORMAT:
        raise ValueError(f"{path} is not an ai2048 model card (format {CARD_FORMAT!r})")
    missing = [k for k in ("name", "file", "network", "rules", "training") if k not in card]
    file = card.get("file", {})
    for key in ("file", "network"):
        if not isinstance(card.get(key, {}), dict):
            raise ValueError(f"model card {path} has a {key} entry that is not an object; reinstall it")
    missing += [f"file.{k}" for k in ("name", "bytes", "sha256") if k not in file]
    if missing:
        raise ValueError(
            f"model card {path} lacks {', '.join(missing)}; it is truncated or hand-edited: reinstall it"
        )
    size, sha = file["bytes"], file["sha256"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 0 or not isinstance(sha, str) or \
            not re.fullmatch(r"[0-9a-fA-F]{64}", sha):
        raise ValueError(
            f"model card {path} has file.bytes {str(size)[:40]!r} and file.sha256 {str(sha)[:80]!r}; they "
            "must be a whole number of bytes and 64 hex digits: it is corrupt or hand-edited, reinstall it"
        )
    return card
