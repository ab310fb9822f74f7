"""``ai2048 train NAME [--preset P] [--FIELD VALUE ...] [--set k=v] --out DIR [--resume]``.

Each trainer's flags come from its frozen ``Config`` dataclass (one flag per field, its help from
the field's ``metadata["help"]``), so the CLI and the config cannot drift apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import typing
from pathlib import Path
from typing import Any

from ai2048.checkpoint import RENAMED_CONFIG_KEYS, hold_run, rename_config_keys
from ai2048.checks import field_options
from ai2048.cli._common import add_set_argument, check_out_dir, parse_sets, parse_value
from ai2048.train import TRAINERS, Trainer, get_trainer
from ai2048.train.run import check_resumed_config, open_run


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


def _scaled(factor: float) -> Any:
    """An argparse type: the number times ``factor`` (an old flag in other units)."""
    return lambda text: float(text) * factor


OLD_FLAGS = {"seconds": "ntuple", "max_minutes": "lazyzero"}
"""Old config names -> the trainer whose command line had them (before every budget was ``duration``)."""


def set_example(trainer: Trainer) -> str:
    """``key=value`` of the trainer's first field with a plain default: a ``--set`` example that is a
    real key of this trainer (``depth=3``, the agents' example, is not one of any trainer's)."""
    for f in dataclasses.fields(trainer.config_cls):
        if isinstance(f.default, (int, float, str)) and not isinstance(f.default, bool):
            return f"{f.name}={f.default}"
    return f"{dataclasses.fields(trainer.config_cls)[0].name}=..."


def trainer_parser(trainer: Trainer) -> argparse.ArgumentParser:
    """The parser of ``ai2048 train NAME``, one flag per config field."""
    epilog = None
    if trainer.presets:
        helps = trainer.preset_help or {}
        width = max(len(n) for n in trainer.presets)
        epilog = "presets (--preset NAME):\n" + "\n".join(
            f"  {n:<{width}}  {helps.get(n, '')}".rstrip() for n in sorted(trainer.presets)
        )
    p = argparse.ArgumentParser(
        prog=f"ai2048 train {trainer.name}",
        description=trainer.description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", required=True, type=Path, help="run directory to create (or resume)")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    if trainer.presets:
        p.add_argument("--preset", choices=sorted(trainer.presets), help="start from a named configuration")
    add_set_argument(p, set_example(trainer))
    hints = typing.get_type_hints(trainer.config_cls)
    names = {f.name for f in dataclasses.fields(trainer.config_cls)}
    for old, (new, factor) in RENAMED_CONFIG_KEYS.items():  # the budget's old flag still works where it was
        if OLD_FLAGS.get(old) == trainer.name and new in names:
            p.add_argument(
                "--" + old.replace("_", "-"),
                dest=f"field_{new}",
                default=None,
                metavar=old.upper(),
                type=_scaled(factor),
                help=f"old name of --{new.replace('_', '-')}"
                + (f" (in units of {factor:g} s)" if factor != 1 else ""),
            )
    options = field_options(trainer.config_cls)
    for f in dataclasses.fields(trainer.config_cls):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not dataclasses.MISSING else None
        opt = options[f.name]
        allowed = f"; {opt.describe()}" if opt.lo is not None or opt.hi is not None or opt.choices else ""
        p.add_argument(
            flag,
            dest=f"field_{f.name}",
            type=_converter(hints.get(f.name)),
            default=None,
            metavar=f.name.upper(),
            help=f"{opt.help} (default: {default!r}{allowed})",
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
    sets = rename_config_keys(parse_sets(args.sets))
    flags = {f.name: getattr(args, f"field_{f.name}") for f in dataclasses.fields(trainer.config_cls)
             if getattr(args, f"field_{f.name}") is not None}
    if preset and base is None:
        values.update(trainer.presets[preset])  # type: ignore[index]
    elif (
        preset and base is not None
    ):  # resuming: the saved config rules, and a preset that contradicts it is a mistake; a preset value
        # this command overrides (the creating command plus --resume) is compared as overridden, below
        differ = [
            f"{k}: run {base[k]!r} vs preset {v!r}"
            for k, v in trainer.presets[preset].items()  # type: ignore[index]
            if k in base and k not in sets and k not in flags and not _same(base[k], v)
        ]
        if differ:
            raise ValueError(
                f"the run in {args.out} was not made with --preset {preset} ({'; '.join(differ)}); "
                "drop --preset to continue it with its own settings, or start a new --out"
            )
    values.update(sets)
    values.update(flags)
    names = {f.name for f in dataclasses.fields(trainer.config_cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(
            f"trainer {trainer.name!r} has no config key(s) {', '.join(unknown)}; "
            f"valid keys: {', '.join(sorted(names))}"
        )
    return trainer.config_cls(**values)


def check(args: argparse.Namespace) -> tuple[Trainer, argparse.Namespace, Any]:
    """Every check ``_run`` makes before the run directory is made: the trainer, its options, --out
    (:func:`~ai2048.train.run.open_run`, as the trainer opens it; with --resume: the run to continue,
    whose saved config the settings start from and must agree with) and the whole config; returns
    (trainer, its parsed options, the config)."""
    trainer = get_trainer(args.trainer)
    targs = trainer_parser(trainer).parse_args(args.rest)
    check_out_dir(targs.out)
    found = open_run(targs.out, trainer, targs.resume)
    config = build_config(trainer, targs, found.saved)  # every setting checked before the directory is made
    if targs.resume:
        check_resumed_config(found, config, trainer)
    return trainer, targs, config


def _run(args: argparse.Namespace) -> int:
    trainer, targs, config = check(args)
    created = not targs.out.exists()
    try:
        with hold_run(targs.out):
            # opened again now that no one else can write it: a run killed before its first
            # checkpoint is cleared here, so the trainer starts it afresh
            opened = open_run(targs.out, trainer, targs.resume, clear=True)
            out = trainer.run(config, targs.out, resume=targs.resume, opened=opened)
    except BaseException:
        if created and targs.out.is_dir() and {p.name for p in targs.out.iterdir()} <= {".lock"}:
            shutil.rmtree(
                targs.out
            )  # the run failed before writing anything: leave no empty directory behind
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
    p.add_argument(
        "rest", nargs=argparse.REMAINDER, help="options of the trainer (see `ai2048 train NAME --help`)"
    )
    p.set_defaults(func=_run, check=check)
