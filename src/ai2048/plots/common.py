"""What every figure shares: matplotlib (Agg backend, the project's style), saving a figure, a log
axis in plain numbers, the action colours, and the error for inputs that cannot be plotted.

matplotlib comes with the ``plot`` extra and is imported when the first figure is drawn, so
importing :mod:`ai2048.plots` never needs it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

ACTION_COLORS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52")


class PlotInputError(ValueError):
    """A file or folder that cannot be plotted; the message names it and says what was expected."""


def finite_number(v: Any) -> bool:
    """Whether a JSON value is a finite number (a bool is not): what the figures plot or sum."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend with the figures' style; a clear error without matplotlib."""
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError("plots need matplotlib: pip install 'ai2048[plot]'") from e
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({
        "figure.figsize": (8, 5), "figure.dpi": 110, "axes.grid": True, "grid.alpha": 0.3,
        "axes.spines.top": False, "axes.spines.right": False, "font.size": 11, "legend.frameon": False,
    })
    return plt


def save_figure(fig: Any, out: Path, name: str) -> Path:
    """Write ``fig`` to ``out/name`` (through a temporary file, so a reader never sees half a PNG, and
    only over a regular file: :func:`ai2048.checkpoint.atomic_path`) and close it; returns the path."""
    from ai2048.checkpoint import atomic_path

    path = out / name
    fig.tight_layout()
    with atomic_path(path, suffix=".tmp.png", what="figure") as tmp:
        fig.savefig(tmp, format="png")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def log_y(ax: Any) -> None:
    """A log y axis labelled in plain numbers (0.3, 1, 2), minor ticks too when matplotlib labels them."""
    from matplotlib.ticker import LogFormatterSciNotation

    class Plain(LogFormatterSciNotation):  # type: ignore[misc]  # matplotlib has no type hints here
        def __call__(self, x: float, pos: int | None = None) -> str:
            return f"{x:g}" if super().__call__(x, pos) else ""

    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(Plain())
    ax.yaxis.set_minor_formatter(Plain(labelOnlyBase=False))
