"""The ``ai2048`` command: one entry point, one module per subcommand in this package.

Each module ``ai2048.cli.<name>`` defines ``register(subparsers)``, which adds its parser and sets
``func(args) -> int``, and ``check(args)``: every check ``func`` makes before its work starts, which
``func`` calls first (:func:`check` runs it alone). Modules are discovered, so adding a command touches
no other file.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings
from collections.abc import Sequence


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every discovered subcommand."""
    import ai2048

    parser = argparse.ArgumentParser(
        prog="ai2048", description="Play, study and train AI for the game 2048.",
        epilog="Output files (--out, --json, --gif, --record, ...) are written atomically and replace only "
        "regular files: a device such as /dev/null, a FIFO, a folder or a dangling symlink is refused "
        "before any work (leave the option out to write nothing); a symlink to a file writes that file.",
    )
    parser.add_argument("--version", action="version", version=f"ai2048 {ai2048.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(sub)
    return parser


def check(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv`` and make every check its command makes before starting work, without the work.

    A usage error exits as the command would (``SystemExit`` 2, the message on stderr); a bad value
    raises ValueError or TypeError; a missing input (a run directory, ``--resume`` of a run that is not
    there) raises FileNotFoundError, after every check that needs no input file. The documented command
    lines are checked with it (``tests/test_docs_commands.py``).
    """
    args = build_parser().parse_args(argv)
    checker = getattr(args, "check", None)
    if checker is not None:
        checker(args)
    return args


def _format_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                    line: str | None = None) -> str:
    """ai2048's own warnings as one line for the person at the terminal, others as Python prints them."""
    if category.__module__.startswith("ai2048."):
        return f"ai2048: {message}\n"
    return _python_format(message, category, filename, lineno, line)


_python_format = warnings.formatwarning


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    warnings.formatwarning = _format_warning
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (ValueError, TypeError, OSError, ImportError) as e:
        from ai2048.cli._common import printable

        print(f"ai2048 {args.command}: error: {printable(e)}", file=sys.stderr)  # a file's text may be in e
        return 2
