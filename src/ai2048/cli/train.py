"""``ai2048 train NAME [--preset P] [--FIELD VALUE ...] [--set k=v] --out DIR [--resume]``.

Each trainer's flags come from its frozen ``Config`` dataclass (one flag per field, its help from
the field's ``metadata["help"]``), so the CLI and the config cannot drift apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import typing
from pathlib import Path
from typing import Any

from ai2048.checkpoint import hold_run, read_json
from ai2048.cli._common import add_set_argument, check_out_dir, parse_sets, parse_value
from ai2048.train import TRAINERS, Trainer, get_trainer


def _bool(text: str) -> bool:
    low = text.lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _converter(tp: Any) -> Any:
    if tp is bool:
        return _bool
    if tp in (int, float, str):
        return tp
    return parse_value


def trainer_parser(trainer: Trainer) -> argparse.ArgumentParser:
    """The parser of ``ai2048 train NAME``, one flag per config field."""
    epilog = None
    if trainer.presets:
        helps = trainer.preset_help or {}
        width = max(len(n) for n in trainer.presets)
        epilog = "presets (--preset NAME):\n" + "\n".join(
            f"  {n:<{width}}  {helps.get(n, '')}".rstrip() for n in sorted(trainer.presets)
        )
    p = argparse.ArgumentParser(prog=f"ai2048 train {trainer.name}", description=trainer.description, epilog=epilog,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, type=Path, help="run directory to create (or resume)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    if trainer.presets:
        p.add_argument("--preset", choices=sorted(trainer.presets), help="start from a named configuration")
    add_set_argument(p)
    hints = typing.get_type_hints(trainer.config_cls)
    for f in dataclasses.fields(trainer.config_cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else None
        p.add_argument(
            flag,
            dest=f"field_{f.name}",
            type=_converter(hints.get(f.name)),
            default=None,
            metavar=f.name.upper(),
            help=f"{f.metadata.get('help', '')} (default: {default!r})",
        )
    return p


def _same(saved: Any, value: Any) -> bool:
    """Whether a saved config value (read back from JSON) equals a preset's value."""
    if isinstance(saved, list | tuple) and isinstance(value, list | tuple):
        return len(saved) == len(value) and all(_same(a, b) for a, b in zip(saved, value, strict=True))
    return bool(saved == value)


def build_config(trainer: Trainer, args: argparse.Namespace, base: dict[str, Any] | None = None) -> Any:
    """Config from (saved run config or preset) <- --set values <- explicit flags; unknown keys raise."""
    values: dict[str, Any] = dict(base or {})
    preset = getattr(args, "preset", None)
    if preset and base is None:
        values.update(trainer.presets[preset])  # type: ignore[index]
    elif preset and base is not None:  # resuming: the saved config rules, and a preset that contradicts it is a mistake
        differ = [
            f"{k}: run {base[k]!r} vs preset {v!r}"
            for k, v in trainer.presets[preset].items()  # type: ignore[index]
            if k in base and not _same(base[k], v)
        ]
        if differ:
            raise ValueError(
                f"the run in {args.out} was not made with --preset {preset} ({'; '.join(differ)}); "
                "drop --preset to continue it with its own settings, or start a new --out"
            )
    values.update(parse_sets(args.sets))
    for f in dataclasses.fields(trainer.config_cls):
        v = getattr(args, f"field_{f.name}")
        if v is not None:
            values[f.name] = v
    names = {f.name for f in dataclasses.fields(trainer.config_cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(
            f"trainer {trainer.name!r} has no config key(s) {', '.join(unknown)}; valid keys: {', '.join(sorted(names))}"
        )
    return trainer.config_cls(**values)


RUN_FILES = ("config.json", "meta.json", "metrics.jsonl", "model.pt", "eval.json", "tb")
"""What trainers write besides their checkpoint; removed when a run without a checkpoint is restarted."""
CHECKPOINTS = ("checkpoint.pt", "weights.npz")
"""Every trainer's checkpoint file: a directory holding one holds progress that a fresh run must not replace."""


def _check_fresh(trainer: Trainer, out: Path) -> bool:
    """For a run without ``--resume``: refuse a directory that holds progress or another trainer's run.

    Returns True when ``out`` holds only the start of a run of this trainer that was killed before
    its first checkpoint (``config.json`` but no checkpoint): such a directory used to be a dead end
    (a rerun said it already holds a run, ``--resume`` found nothing to resume); now it restarts.
    """
    if not out.is_dir():
        return False
    meta = read_json(out / "meta.json", "run metadata") if (out / "meta.json").is_file() else {}
    other = meta.get("trainer")
    if other and other != trainer.name:
        raise ValueError(f"{out} holds a run of trainer {other!r}; choose another --out")
    if any((out / name).exists() for name in {trainer.checkpoint, *CHECKPOINTS}):
        raise ValueError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    if not (out / "config.json").is_file():
        return False
    saved = read_json(out / "config.json", "run config")
    foreign = sorted(set(saved) - {f.name for f in dataclasses.fields(trainer.config_cls)})
    if foreign:
        raise ValueError(
            f"{out} holds another program's run (its config.json has keys {', '.join(foreign[:5])} that trainer "
            f"{trainer.name!r} lacks); choose another --out"
        )
    return True


def _restart_without_checkpoint(out: Path) -> None:
    """Clear the files of a run that stopped before its first checkpoint (see :func:`_check_fresh`).

    Called while holding the run, so no trainer is writing the directory.
    """
    print(f"{out} holds no checkpoint yet (its run stopped before the first save): starting it afresh",
          file=sys.stderr)
    for name in RUN_FILES:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def _run(args: argparse.Namespace) -> int:
    trainer = get_trainer(args.trainer)
    targs = trainer_parser(trainer).parse_args(args.rest)
    check_out_dir(targs.out)
    base = None
    if targs.resume:
        cfg_path = targs.out / "config.json"
        if not cfg_path.is_file():
            raise FileNotFoundError(
                f"cannot resume: {targs.out} has no config.json (is it a run directory of `ai2048 train {trainer.name}`?)"
            )
        meta_path = targs.out / "meta.json"
        meta = read_json(meta_path, "run metadata") if meta_path.is_file() else {}
        found = meta.get("trainer") if isinstance(meta, dict) else None
        if found and found != trainer.name:
            raise ValueError(
                f"cannot resume: {targs.out} is a run of trainer {found!r}, not {trainer.name!r}; "
                f"continue it with `ai2048 train {found} --out {targs.out} --resume`"
            )
        if not (targs.out / trainer.checkpoint).exists():
            raise FileNotFoundError(
                f"cannot resume: {targs.out} holds no checkpoint yet ({trainer.checkpoint}; the run stopped before "
                "its first save); run the same command without --resume to start it afresh"
            )
        base = read_json(cfg_path, "run config")
        if "config" in base and isinstance(base["config"], dict):
            base = base["config"]
    restart = not targs.resume and _check_fresh(trainer, targs.out)
    config = build_config(trainer, targs, base)  # every setting checked before the directory is made
    created = not targs.out.exists()
    try:
        with hold_run(targs.out):
            if restart and _check_fresh(trainer, targs.out):  # checked again now that no one else can write it
                _restart_without_checkpoint(targs.out)
            out = trainer.run(config, targs.out, resume=targs.resume)
    except BaseException:
        if created and targs.out.is_dir() and {p.name for p in targs.out.iterdir()} <= {".lock"}:
            shutil.rmtree(targs.out)  # the run failed before writing anything: leave no empty directory behind
        raise
    print(f"run directory: {out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    names = ", ".join(sorted(TRAINERS)) or "none installed"
    p = sub.add_parser(
        "train",
        help="train an agent (ntuple, dqn, qnet, policy, lazyzero)",
        description=f"Train a learner. Trainers: {names}. `ai2048 train NAME --help` lists its options.",
        add_help=True,
    )
    p.add_argument("trainer", metavar="NAME", help=f"one of: {names}")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="options of the trainer (see `ai2048 train NAME --help`)")
    p.set_defaults(func=_run)
