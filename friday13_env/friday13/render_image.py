"""The ``rgb_array`` render mode: the ``ansi`` table drawn as an image, with numpy alone.

The image shows exactly the lines of :func:`friday13_env.friday13.render.table_lines` (round, piles
with totals, one row per seat with hand size, captured cards and score, then the hand of the player
to move or the winners), in the 5x8 bitmap font of :mod:`friday13_env.core.bitmap`, coloured by what
each line shows. No drawing library is needed, so the mode works wherever the environment does.

Every image of one environment has the same shape, whatever the position or the table size drawn
for the episode (``TableCanvas.for_table`` sizes the canvas for the largest table and the longest
hand the deck allows), which video recorders such as Gymnasium's ``RecordVideo`` require. Long
lines wrap onto indented continuation lines; both sides are multiples of 16 pixels, the block size
video encoders prefer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from friday13_env.core.bitmap import Canvas, Color, canvas_shape
from friday13_env.friday13.cards import NUM_PILES, Deck
from friday13_env.friday13.engine import GameState
from friday13_env.friday13.render import Line, hand_line, table_lines, winners_line

SCALE = 2
MARGIN = 8
"""Pixels around the text, after scaling."""
COLUMNS = 64
"""Characters per image row; a longer line wraps."""
CONTINUATION = "    "
"""Indent of a wrapped line's continuation."""
BLOCK = 16
"""Both image sides are rounded up to a multiple of this (video codecs' macroblock)."""

BACKGROUND: Color = (22, 83, 52)
HIGHLIGHT: Color = (38, 118, 74)
"""Background of the row of the player to move."""
COLOURS: dict[str, Color] = {
    "title": (255, 214, 102),
    "columns": (170, 200, 180),
    "seat": (236, 236, 228),
    "to_move": (255, 236, 120),
    "hand": (150, 240, 205),
    "game_over": (255, 140, 120),
}
PILE_COLOURS: tuple[Color, ...] = ((215, 215, 215), (150, 205, 255), (245, 175, 95))
"""Black cat, broken mirror, ladder."""


def wrap(text: str, columns: int = COLUMNS) -> list[str]:
    """``text`` cut into rows of at most ``columns`` characters, at spaces where possible.

    Continuation rows start with ``CONTINUATION``; a word longer than a row is cut.
    """
    rows: list[str] = []
    rest = text
    while len(rest) > columns:
        cut = rest.rfind(" ", len(CONTINUATION) + 1 if rows else 1, columns + 1)
        if cut <= 0 or not rest[:cut].strip():
            cut = columns
        rows.append(rest[:cut].rstrip())
        rest = CONTINUATION + rest[cut:].lstrip()
    rows.append(rest)
    return rows


@dataclass(frozen=True)
class TableCanvas:
    """A fixed-size image of ``rows`` text rows of ``columns`` characters; ``shape`` is (H, W, 3)."""

    rows: int
    columns: int = COLUMNS

    @classmethod
    def for_table(cls, deck: Deck, max_players: int) -> TableCanvas:
        """A canvas that fits every position of this deck at up to ``max_players`` players without cropping.

        The bound: the title, the piles, the column header and one row per seat take one row each
        (each is shorter than a row), and the last line (a hand, or the winners) at most as many rows
        as the whole deck in one hand or every seat winning would take.
        """
        fixed = 1 + NUM_PILES + 1 + max_players
        seat = max_players - 1
        longest = max(
            len(wrap(hand_line(seat, list(deck.kind_counts), deck))),
            len(wrap(winners_line(list(range(max_players))))),
        )
        return cls(rows=fixed + longest)

    @property
    def shape(self) -> tuple[int, int, int]:
        return canvas_shape(self.columns, self.rows, SCALE, MARGIN, BLOCK)

    def draw(self, lines: Sequence[Line]) -> np.ndarray:
        """The lines as an image: wrapped, coloured by style, cropped (never resized) if they overflow."""
        canvas = Canvas(self.columns, self.rows, SCALE, BACKGROUND, margin=MARGIN, block=BLOCK)
        row = 0
        for line in lines:
            colour = PILE_COLOURS[line.pile] if line.style == "pile" else COLOURS[line.style]
            for text in wrap(line.text, self.columns):
                if line.style == "to_move":
                    canvas.band(row, HIGHLIGHT)
                canvas.text(row, 0, text, colour)
                row += 1
        return canvas.image


def render_rgb(state: GameState, canvas: TableCanvas, *, show_hand_of: int | None = None) -> np.ndarray:
    """The ``rgb_array`` image of a position: what ``render_state`` shows, as ``uint8`` (H, W, 3)."""
    return canvas.draw(table_lines(state, show_hand_of=show_hand_of))
