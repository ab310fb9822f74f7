"""N-tuple networks for 2048 (Szubert & Jaśkowski 2014; seed 004): patterns, numba kernels, weights.

The trainer is :mod:`ai2048.train.ntuple`; the agent is :mod:`ai2048.agents.ntuple`.
"""
