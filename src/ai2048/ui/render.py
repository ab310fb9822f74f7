"""Render games as images: one PNG-ready frame per move, written as an animated GIF or an MP4.

Pillow draws the frames (the ``plot`` or ``ui`` extra); MP4 needs the ffmpeg binary that the
``imageio-ffmpeg`` package ships (``pip install imageio-ffmpeg``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ai2048 import checks
from ai2048.board_io import exact_tiles
from ai2048.checkpoint import atomic_path, check_output_file
from ai2048.records import GameRecord, Trajectory
from ai2048.rules import Action
from ai2048.ui.colors import BOARD_COLOR, TEXT_COLOR, hex_to_rgb, tile_colors
from ai2048.ui.deps import require

CELL = 96
GAP = 10
HEADER = 64


def _font(size: int) -> Any:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


class FrameRenderer:
    """Draws boards with a header line (score, move, last action) into RGB Pillow images."""

    def __init__(self, cell: int = CELL) -> None:
        require("PIL", "plot")
        self.cell = cell
        self.gap = max(2, cell // 10)
        self.header = max(32, (cell * 2) // 3)
        side = 4 * cell + 5 * self.gap
        self.size = (side, side + self.header)
        self._fonts = {n: _font(max(8, int(cell * f)))
                       for n, f in (("big", 0.42), ("mid", 0.34), ("small", 0.27), ("tiny", 0.21))}
        self._head = _font(max(10, cell // 5))

    def frame(self, board: int, score: int, move: int, action: int | None = None, note: str = "",
              supers: int = 0) -> Any:
        """One frame: the position ``(board, supers)`` with its exact tiles (``supers``: the values of its
        tiles of 32768 or more, as ``Game.supers``), and "move N  score S  <ACTION>  note" above it."""
        from PIL import Image, ImageDraw

        img = Image.new("RGB", self.size, hex_to_rgb("#faf8ef"))
        draw = ImageDraw.Draw(img)
        head = f"move {move}   score {score:,}"
        if action is not None:
            head += f"   {Action(action).name}"
        if note:
            head += f"   {note}"
        draw.text((self.gap, self.header // 2), head, fill=hex_to_rgb(TEXT_COLOR), font=self._head,
                  anchor="lm")
        top = self.header
        draw.rounded_rectangle((0, top, self.size[0] - 1, self.size[1] - 1), radius=self.gap,
                               fill=hex_to_rgb(BOARD_COLOR))
        tiles = exact_tiles(board, supers)
        for r in range(4):
            for c in range(4):
                v = int(tiles[r, c])
                bg, fg = tile_colors(v.bit_length() - 1 if v else 0)
                x0 = self.gap + c * (self.cell + self.gap)
                y0 = top + self.gap + r * (self.cell + self.gap)
                draw.rounded_rectangle((x0, y0, x0 + self.cell, y0 + self.cell), radius=self.gap // 2,
                                       fill=hex_to_rgb(bg))
                if v:
                    label = str(v)
                    n = len(label)  # 131072 takes six digits: the tiny font keeps it inside the cell
                    size = "big" if n <= 2 else "mid" if n <= 3 else "small" if n <= 5 else "tiny"
                    font = self._fonts[size]
                    draw.text((x0 + self.cell / 2, y0 + self.cell / 2), label, fill=hex_to_rgb(fg), font=font,
                              anchor="mm")
        return img


def trajectory_frames(t: Trajectory, renderer: FrameRenderer, every: int = 1) -> Iterator[Any]:
    """Frames of a replayed game: the start, every ``every``-th move, and always the final board."""
    n = len(t.actions)
    for i in range(0, n + 1):
        if i % every and i != n:
            continue
        action = int(t.actions[i - 1]) if i else None
        note = "game over" if i == n else ""
        supers = int(t.supers[i]) if t.supers is not None else 0
        yield renderer.frame(int(t.boards[i]), int(t.scores[i]), i, action, note, supers)


MIN_FPS = 100 / 65535
"""A GIF frame shows at most 65,535 hundredths of a second (655 s): about 0.0015 frames/s is the slowest."""
MAX_FPS = 100.0
"""GIF frame times are whole hundredths of a second, so 100 frames/s is the fastest a GIF shows."""
MAX_HOLD = 600.0
"""Seconds the last frame may be held (below a GIF frame's 655 s)."""


def check_output(path: str | Path, suffix: str, what: str = "output file") -> Path:
    """``path`` if it ends in ``suffix`` and can be written (:func:`ai2048.checkpoint.check_output_file`:
    never a device, FIFO, socket or folder), else a ValueError naming it."""
    path = Path(path)
    if path.suffix.lower() != suffix:
        raise ValueError(f"{what} {path}: the output file must end in {suffix}")
    check_output_file(path, what)
    return path


def check_render_args(fps: float, every: int, hold: float = 2.0) -> None:
    """Refuse frame rates a GIF cannot show (Pillow raised OverflowError past 655 s a frame), a step
    that is not a whole number >= 1 and a hold outside 0..600 s."""
    checks.number("fps", fps, MIN_FPS, MAX_FPS, why="a GIF frame shows 0.01 to 655 s")
    checks.whole("every", every, 1)
    checks.number("hold", hold, 0, MAX_HOLD, why="seconds")


def write_gif(record: GameRecord, path: str | Path, *, fps: float = 8.0, every: int = 1, cell: int = CELL,
              hold: float = 2.0) -> Path:
    """Render ``record`` (replayed and checked first) as an animated GIF; the last frame is held
    ``hold`` s."""
    check_render_args(fps, every, hold)
    out = check_output(path, ".gif")
    t = record.replay()
    r = FrameRenderer(cell)
    frames = list(trajectory_frames(t, r, every))
    palette = _palette()
    frames = [f.quantize(palette=palette, dither=0) for f in frames]  # fixed palette: fast and small
    ms = int(round(1000 / fps))
    durations = [ms] * (len(frames) - 1) + [max(ms, int(hold * 1000))]
    with atomic_path(out, suffix=".tmp.gif") as tmp:
        frames[0].save(tmp, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0,
                       optimize=False)
    return out


def _palette() -> Any:
    """A "P" image whose palette holds every colour a frame uses, plus blends of text on tiles."""
    from PIL import Image

    from ai2048.ui.colors import TILE_COLORS

    colors = {hex_to_rgb(c) for pair in TILE_COLORS.values() for c in pair}
    colors |= {hex_to_rgb(c) for c in (BOARD_COLOR, TEXT_COLOR, "#faf8ef")}
    base = sorted(colors)
    for bg, fg in list(TILE_COLORS.values()) + [("#faf8ef", TEXT_COLOR)]:
        b, f = np.array(hex_to_rgb(bg)), np.array(hex_to_rgb(fg))
        for w in (0.25, 0.5, 0.75):
            r, g, bl = (int(x) for x in (b + w * (f - b)).round())
            colors.add((r, g, bl))
    pal = [v for c in (base + sorted(colors - set(base)))[:256] for v in c]
    img = Image.new("P", (1, 1))
    img.putpalette(pal + [0] * (768 - len(pal)))
    return img


def ffmpeg_exe() -> str:
    """Path of the ffmpeg binary from ``imageio-ffmpeg``; ImportError saying how to get it otherwise."""
    try:
        import imageio_ffmpeg
    except ImportError as e:
        raise ImportError(
            "--mp4 needs an ffmpeg encoder: pip install imageio-ffmpeg (it ships ffmpeg), or use --gif"
        ) from e
    try:
        return str(imageio_ffmpeg.get_ffmpeg_exe())
    except RuntimeError as e:
        raise ImportError(f"imageio-ffmpeg found no ffmpeg binary ({e}); use --gif instead") from e


def write_mp4(record: GameRecord, path: str | Path, *, fps: float = 8.0, every: int = 1, cell: int = CELL,
              hold: float = 2.0) -> Path:
    """Render ``record`` as an H.264 MP4 with the ffmpeg of ``imageio-ffmpeg``."""
    check_render_args(fps, every, hold)
    ffmpeg_exe()
    import imageio_ffmpeg

    out = check_output(path, ".mp4")
    t = record.replay()
    r = FrameRenderer(cell)
    w, h = r.size
    size = (w + w % 2, h + h % 2)  # H.264 wants even sides
    with atomic_path(out, suffix=".tmp.mp4") as tmp:
        writer = imageio_ffmpeg.write_frames(str(tmp), size, fps=fps, macro_block_size=1, quality=7,
                                             output_params=["-loglevel", "error", "-preset", "veryfast"])
        writer.send(None)
        try:
            last = None
            for img in trajectory_frames(t, r, every):
                arr = np.zeros((size[1], size[0], 3), dtype=np.uint8)
                arr[:h, :w] = np.asarray(img)
                last = arr
                writer.send(arr)
            for _ in range(int(hold * fps)):
                writer.send(last)
        finally:
            writer.close()
    return out
