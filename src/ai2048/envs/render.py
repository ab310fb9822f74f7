"""Pictures of boards: ``rgb_array`` frames drawn with numpy and a tiny built-in digit font.

No font files or image libraries are needed, so every install can render.
"""

from __future__ import annotations

import numpy as np

from ai2048.rules import MAX_TILE_EXPONENT

CELL = 72
GAP = 8
SIZE = 4 * CELL + 5 * GAP

BACKGROUND = (187, 173, 160)
EMPTY = (205, 193, 180)
COLOURS = [
    EMPTY,
    (238, 228, 218), (237, 224, 200), (242, 177, 121), (245, 149, 99), (246, 124, 95),
    (246, 94, 59), (237, 207, 114), (237, 204, 97), (237, 200, 80), (237, 197, 63),
    (237, 194, 46), (60, 58, 50), (50, 48, 42), (40, 38, 34), (30, 28, 26),
    (91, 42, 134), (163, 25, 91),  # 65536 and 131072 (rules version 1), as ai2048.ui.colors draws them
]
DARK_TEXT = (119, 110, 101)
LIGHT_TEXT = (249, 246, 242)

_FONT = {
    "0": ("111", "101", "101", "101", "111"),
    "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"),
    "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"),
    "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"),
    "7": ("111", "001", "001", "001", "001"),
    "8": ("111", "101", "111", "101", "111"),
    "9": ("111", "101", "111", "001", "111"),
}


def _draw_text(
    img: np.ndarray, text: str, cy: int, cx: int, scale: int, colour: tuple[int, int, int]
) -> None:
    w = len(text) * 4 * scale - scale
    h = 5 * scale
    y0 = cy - h // 2
    x0 = cx - w // 2
    for k, ch in enumerate(text):
        glyph = _FONT[ch]
        for gy, line in enumerate(glyph):
            for gx, bit in enumerate(line):
                if bit == "1":
                    y = y0 + gy * scale
                    x = x0 + (4 * k + gx) * scale
                    img[y : y + scale, x : x + scale] = colour


def board_frame(exponents: np.ndarray) -> np.ndarray:
    """[4, 4] exact exponents (0 = empty, up to 17 = 131072) -> [SIZE, SIZE, 3] uint8 picture in the
    game's usual colours. A board's nibbles alone show every tile of 32768 or more as 32768: pass the
    exact exponents (``Game.cells``) to draw 65536 and 131072."""
    img = np.empty((SIZE, SIZE, 3), dtype=np.uint8)
    img[:] = BACKGROUND
    for r in range(4):
        for c in range(4):
            e = int(exponents[r, c])
            y = GAP + r * (CELL + GAP)
            x = GAP + c * (CELL + GAP)
            img[y : y + CELL, x : x + CELL] = COLOURS[min(e, MAX_TILE_EXPONENT)]
            if e:
                text = str(1 << e)
                scale = 4 if len(text) <= 3 else 3
                if len(text) >= 5:
                    scale = 2
                colour = DARK_TEXT if e <= 2 else LIGHT_TEXT
                _draw_text(img, text, y + CELL // 2, x + CELL // 2, scale, colour)
    return img
