"""Learning curve of a LazyZero run: moves per game and high tile per epoch from ``metrics.jsonl``.

    python -m ai2048.train.lazyzero_plot RUN_DIR OUT.png

Needs matplotlib (the ``plot`` extra); does not import torch.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ai2048.checkpoint import read_jsonl


def plot_run(run_dir: str | Path, out: str | Path) -> Path:
    """Write a PNG with two panels (mean/max moves per game; mean/max high tile, log2 axis) per epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(run_dir) / "metrics.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; is {run_dir} a LazyZero run directory?")
    rows = [r for r in read_jsonl(path) if "moves_mean" in r]
    if not rows:
        raise ValueError(f"{path} has no epoch records yet")
    epoch = [r["epoch"] for r in rows]
    minutes = sum(r["seconds"] for r in rows) / 60
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epoch, [r["moves_mean"] for r in rows], "o-", label="mean")
    ax1.plot(epoch, [r["moves_max"] for r in rows], "s--", alpha=0.6, label="max")
    ax1.set(xlabel="epoch", ylabel="moves per game", title="self-play game length")
    ax1.legend()
    ax2.plot(epoch, [r["high_tile_mean"] for r in rows], "o-", label="mean")
    ax2.plot(epoch, [r["high_tile_max"] for r in rows], "s--", alpha=0.6, label="max")
    ax2.set_yscale("log", base=2)
    ax2.set(xlabel="epoch", ylabel="high tile", title="self-play high tile")
    ax2.legend()
    games = rows[-1]["episodes"]
    fig.suptitle(f"LazyZero {Path(run_dir).name}: {games} games, {minutes:.0f} min of training")
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir")
    p.add_argument("out")
    args = p.parse_args()
    print(plot_run(args.run_dir, args.out))


if __name__ == "__main__":
    main()
