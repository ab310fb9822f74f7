"""How often does a compact network choose another 1-ply move than its float32 original?

For a run directory of ``ai2048 train ntuple`` and each fixed-point step: the number of fresh
positions (from the network's own games, seed 50) whose move differs, with the weights as stored,
after targeted calibration (the decision weights of the calibration positions that disagree kept
float32) and with every decision weight of the calibration positions kept float32 (what
``ai2048 models pack`` does). The float16 row is the baseline design.

    python benchmarks/models_agreement.py RUN [--steps=-4,0,2] [--positions 20000] [--fresh 20000]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ai2048.models import agreement, compact
from ai2048.ntuple.network import load_file


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path)
    p.add_argument("--steps", default="-4,0,2", help="log2 of the fixed-point steps")
    p.add_argument("--positions", type=int, default=20_000, help="calibration positions (seed 1)")
    p.add_argument("--fresh", type=int, default=20_000, help="fresh positions (seed 50)")
    a = p.parse_args()
    net, _ = load_file(a.run / "weights.npz")
    nstages = len(net.stages) + 1
    cal = agreement.game_positions(net, a.positions, seed=1)
    fresh = agreement.game_positions(net, a.fresh, seed=50)
    want_c, want_f = agreement.greedy_moves(net, cal), agreement.greedy_moves(net, fresh)
    hot = agreement.hot_indices(net, cal)

    def differ(w: np.ndarray) -> int:
        return int((agreement.greedy_moves(net, fresh, w) != want_f).sum())

    f16 = net.w.astype(np.float16).astype(np.float32)
    print(
        f"{a.run}: {a.fresh:,} fresh positions; {hot.size:,} decision weights on {a.positions:,} calibration "
        "positions"
    )
    print(f"float16: {differ(f16)} differ")
    for k in (int(x) for x in a.steps.split(",")):
        base = compact.stored_weights(net.w, nstages, 0.0, 2.0**k)

        def stored(ex: np.ndarray, base: np.ndarray = base) -> np.ndarray:
            out = base.copy()
            out[ex] = net.w[ex]
            return out

        targeted, _ = agreement.calibrate(net, cal, stored, want=want_c)
        print(f"step 2^{k}: as stored {differ(base)}, targeted calibration {differ(stored(targeted))} "
              f"({targeted.size:,} exact), all decision weights exact {differ(stored(hot))} differ")


if __name__ == "__main__":
    main()
