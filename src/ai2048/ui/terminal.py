"""The terminal UI: a coloured board renderable (rich) and the ``ai2048 play`` app (textual).

Textual draws with plain terminal escape codes, so the game works in any terminal and over ssh.
Keys: arrows, WASD or hjkl move; ``u`` undo; ``i`` or ``?`` hint; ``space`` AI move; ``n`` new game;
``q`` quit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from ai2048.board_io import exact_tiles
from ai2048.ui.colors import BOARD_COLOR, tile_colors
from ai2048.ui.session import PlaySession

CELL_WIDTH = 8


def board_text(board: int, supers: int = 0, cell_width: int = CELL_WIDTH) -> Text:
    """The position ``(board, supers)`` as rich ``Text``: each tile a 3-line block in its colour, its
    exact value centred (``supers`` holds the tiles past 32768, as ``Game.supers``)."""
    tiles = exact_tiles(board, supers)
    out = Text()
    gap = Text(" ", style=f"on {BOARD_COLOR}")
    edge = Text(" " * (4 * cell_width + 5), style=f"on {BOARD_COLOR}")
    out.append_text(edge)
    out.append("\n")
    for r in range(4):
        for line in range(3):
            out.append_text(gap)
            for c in range(4):
                v = int(tiles[r, c])
                bg, fg = tile_colors(v.bit_length() - 1 if v else 0)
                label = str(v) if v and line == 1 else ""
                out.append(label.center(cell_width), style=f"bold {fg} on {bg}")
                out.append_text(gap)
            out.append("\n")
        out.append_text(edge)
        if r < 3:
            out.append("\n")
    return out


def status_text(score: int, moves: int, max_tile: int, extra: str = "") -> Text:
    """One line: score, moves, best tile (and ``extra``)."""
    t = Text()
    t.append("score ", style="dim")
    t.append(f"{score:,}", style="bold")
    t.append("   moves ", style="dim")
    t.append(str(moves), style="bold")
    t.append("   best ", style="dim")
    t.append(str(max_tile), style="bold")
    if extra:
        t.append(f"   {extra}", style="dim")
    return t


def make_play_app(session: PlaySession,
                  on_game_end: Callable[[PlaySession], str | None] | None = None) -> Any:
    """Build the textual app around ``session``; ``on_game_end`` saves the record and returns a note."""
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import Center
    from textual.widgets import Footer, Static

    class PlayApp(App[None]):
        """Play 2048 in the terminal."""

        TITLE = "ai2048"
        CSS = """
        Screen { align: center middle; }
        Center { height: auto; }
        #board { width: auto; height: auto; }
        #status, #hint, #message { width: 100%; height: auto; content-align: center middle; }
        """
        BINDINGS = [
            Binding("up,w,k", "move('up')", "up", show=False),
            Binding("down,s,j", "move('down')", "down", show=False),
            Binding("left,a,h", "move('left')", "left", show=False),
            Binding("right,d,l", "move('right')", "right", show=False),
            Binding("u,z", "undo", "undo"),
            Binding("i,question_mark", "hint", "hint"),
            Binding("space", "ai_move", "AI move"),
            Binding("n", "new_game", "new game"),
            Binding("q,escape", "quit_game", "quit"),
        ]

        def __init__(self) -> None:
            super().__init__()
            self.session = session
            self.message = ""
            self._ended = session.is_over  # a game that was over before the app started is saved already

        def compose(self) -> ComposeResult:
            yield Static(id="status")
            with Center():
                yield Static(id="board")
            yield Static(id="hint")
            yield Static(id="message")
            yield Footer()

        def on_mount(self) -> None:
            self.refresh_view()

        def refresh_view(self) -> None:
            s = self.session
            self.query_one("#board", Static).update(board_text(s.board, s.supers))
            status = status_text(s.score, s.moves, s.max_tile, f"seed {s.seed}")
            self.query_one("#status", Static).update(status)
            hint = s.last_hint
            self.query_one("#hint", Static).update(
                Text("hint  " + hint.describe(), style="cyan") if hint is not None else Text("")
            )
            msg = self.message
            if s.is_over:
                msg = (msg + "  " if msg else "") + "game over: n = new game, u = undo"
            self.query_one("#message", Static).update(Text(msg, style="bold yellow"))

        def _end_if_over(self) -> None:
            if self.session.is_over and not self._ended:
                self._ended = True
                if on_game_end is not None:
                    self.message = on_game_end(self.session) or ""

        def action_move(self, direction: str) -> None:
            self.message = "" if self.session.move(direction) else f"{direction} does not move any tile"
            self._end_if_over()
            self.refresh_view()

        def action_undo(self) -> None:
            self.message = "" if self.session.undo() else "nothing to undo"
            self._ended = self._ended and self.session.is_over
            self.refresh_view()

        def action_hint(self) -> None:
            try:
                self.session.hint()
                self.message = ""
            except (ValueError, TypeError) as e:
                self.message = str(e)
            self.refresh_view()

        def action_ai_move(self) -> None:
            try:
                self.session.ai_move()
                self.message = ""
            except (ValueError, TypeError) as e:
                self.message = str(e)
            self._end_if_over()
            self.refresh_view()

        def action_new_game(self) -> None:
            if not self._ended and self.session.moves and on_game_end is not None:
                on_game_end(self.session)
            self.session.new_game()
            self._ended = False
            self.message = "new game"
            self.refresh_view()

        def action_quit_game(self) -> None:
            if not self._ended and self.session.moves and on_game_end is not None:
                on_game_end(self.session)
            self.exit()

    return PlayApp()
