"""N-tuple networks for 2048 (Szubert & Jaśkowski 2014; seed 004): patterns, numba kernels, weights.

- :mod:`.patterns`: presets, parsing, and the 8 board symmetries of each tuple.
- :mod:`.kernels` and :mod:`.codegen`: value, TD updates, self-play training and greedy play, the
  feature loops specialised per pattern set.
- :mod:`.network`: the network as a Python object (arrays for the kernels, save and load).
- :mod:`.hogwild`: lock-free multi-threaded training (games are evaluated by :mod:`ai2048.evaluate`).
- :mod:`.memory`: keeping the compiler's memory out of a training process (a first run's kernels
  compiled in a child process; LLVM's pages given back before the tables are allocated).

Submodules are imported when named, so reading patterns never compiles a kernel. The trainer is
:mod:`ai2048.train.ntuple`; the agent is :mod:`ai2048.agents.ntuple`; shipped networks are in
:mod:`ai2048.models`; tile tables are in :mod:`ai2048.stats`.
"""

__all__ = ["codegen", "hogwild", "kernels", "memory", "network", "patterns"]
