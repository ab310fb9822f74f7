"""Endgame tables: positions of a formation solved exactly, built once and memory-mapped.

``ai2048 tables build`` builds them (:mod:`ai2048.tables.build`), ``ai2048 tables`` lists them,
and the ``endgame`` agent plays from them (:mod:`ai2048.agents.endgame`). The kernels live in
:mod:`ai2048.tables.kernels` and :mod:`ai2048.tables.lookup`; the formations in
:mod:`ai2048.tables.formations`; files and checks in :mod:`ai2048.tables.store`.
"""
