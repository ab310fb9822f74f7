"""Tile colours shared by the terminal, the GIF renderer and (mirrored in ``static/style.css``) the web page.

The palette of the original 2048 (Gabriele Cirulli), extended past 2048 with darker tones, and for
65536 and 131072 (rules version 1) with a purple and a crimson, so they stand out from the dark 32768.
"""

from __future__ import annotations

from ai2048.rules import MAX_TILE_EXPONENT

# exponent -> (background, foreground) as hex RGB
TILE_COLORS: dict[int, tuple[str, str]] = {
    0: ("#cdc1b4", "#776e65"),
    1: ("#eee4da", "#776e65"),
    2: ("#ede0c8", "#776e65"),
    3: ("#f2b179", "#f9f6f2"),
    4: ("#f59563", "#f9f6f2"),
    5: ("#f67c5f", "#f9f6f2"),
    6: ("#f65e3b", "#f9f6f2"),
    7: ("#edcf72", "#f9f6f2"),
    8: ("#edcc61", "#f9f6f2"),
    9: ("#edc850", "#f9f6f2"),
    10: ("#edc53f", "#f9f6f2"),
    11: ("#edc22e", "#f9f6f2"),
    12: ("#3c3a32", "#f9f6f2"),
    13: ("#2f2d27", "#f9f6f2"),
    14: ("#25231e", "#f9f6f2"),
    15: ("#1a1915", "#f9f6f2"),
    16: ("#5b2a86", "#f9f6f2"),
    17: ("#a3195b", "#f9f6f2"),
}
BOARD_COLOR = "#bbada0"
TEXT_COLOR = "#776e65"


def tile_colors(exponent: int) -> tuple[str, str]:
    """(background, foreground) of a tile by exact exponent (0 = empty cell, up to 17 = 131072)."""
    return TILE_COLORS[min(max(int(exponent), 0), MAX_TILE_EXPONENT)]


def hex_to_rgb(color: str) -> tuple[int, int, int]:
    """``"#bbada0" -> (187, 173, 160)``."""
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)
