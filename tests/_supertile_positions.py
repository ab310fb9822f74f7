"""Positions past 32768 for the env tests: small tiles anywhere, and a set of tiles of 16384 or more
(two or more of 32768 or more, or 16384s that merge into a second one) in random cells.

The large sets stay below two 131072s' worth (262144) with room for a game's spawns, so no game
played from them can make a second 131072, which no 4x4 position holds."""

from __future__ import annotations

from hypothesis import strategies as st

BIG_SETS = [(15, 15), (16, 16), (15, 15, 15), (15, 15, 15, 15), (16, 16, 15), (16, 16, 15, 15), (17, 15, 15),
            (17, 16, 15), (15, 14, 14), (16, 15, 14, 14), (17, 15, 14, 14)]
"""Exponents of the large tiles a position holds (each set sums to less than 2 * 131072 - 32768)."""


@st.composite
def exact_cells(draw: st.DrawFn) -> list[int]:
    """16 exact exponents (row-major) holding one of :data:`BIG_SETS` among 2s to 32s."""
    cells = draw(st.lists(st.sampled_from([0, 0, 0, 1, 2, 3, 5]), min_size=16, max_size=16))
    where = draw(st.permutations(range(16)))
    for e, i in zip(draw(st.sampled_from(BIG_SETS)), where, strict=False):
        cells[i] = e
    return cells
