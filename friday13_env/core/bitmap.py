"""Text and boxes drawn into a ``uint8`` (H, W, 3) image with numpy alone: the ``rgb_array`` render
modes of both games use it, so they need no imaging library.

The font is the classic public-domain 5x7 font, with an eighth row for the descenders of g, j, p, q and
y (as in its 5x8 variants), covering printable ASCII (32-126); any other character is drawn as ``?``.
Text is laid out in cells of ``CELL_WIDTH`` x ``CELL_HEIGHT`` font pixels, the glyph in the top-left
corner of its cell (one blank column to its right, two blank rows below it), each font pixel drawn as
``scale`` x ``scale`` image pixels.
"""

from __future__ import annotations

import numpy as np

Color = tuple[int, int, int]

GLYPH_WIDTH = 5
GLYPH_HEIGHT = 8
CELL_WIDTH = 6
"""Font pixels per character cell: the glyph and one column of spacing."""
CELL_HEIGHT = 10
"""Font pixels per text row: the glyph and two rows of spacing."""

# Five column bytes per character (bit 0 = top row), ASCII 32-126.
_FONT_COLUMNS = bytes.fromhex(
    "0000000000 00005f0000 0007000700 147f147f14 242a7f2a12 2313086462 3649552250 0005030000 001c224100 "
    "0041221c00 082a1c2a08 08083e0808 0050300000 0808080808 0060600000 2010080402 3e5149453e 00427f4000 "
    "4261514946 2141454b31 1814127f10 2745454539 3c4a494930 0171090503 3649494936 064949291e 0036360000 "
    "0056360000 0008142241 1414141414 4122140800 0201510906 324979413e 7e1111117e 7f49494936 3e41414122 "
    "7f4141221c 7f49494941 7f09090101 3e41415132 7f0808087f 00417f4100 2040413f01 7f08142241 7f40404040 "
    "7f0204027f 7f0408107f 3e4141413e 7f09090906 3e4151215e 7f09192946 4649494931 01017f0101 3f4040403f "
    "1f2040201f 7f2018207f 6314081463 0304780403 6151494543 00007f4141 0204081020 41417f0000 0402010204 "
    "4040404040 0001020400 2054545478 7f48444438 3844444420 384444487f 3854545418 087e090102 18a4a4a47c "
    "7f08040478 00447d4000 4080847d00 007f102844 00417f4000 7c04180478 7c08040478 3844444438 fc18242418 "
    "18242418fc 7c08040408 4854545420 043f444020 3c4040207c 1c2040201c 3c4030403c 4428102844 9ca0a0a07c "
    "4464544c44 0008364100 00007f0000 0041360800 0804081008"
)


def _build_font() -> dict[str, np.ndarray]:
    font = {}
    for offset in range(len(_FONT_COLUMNS) // GLYPH_WIDTH):
        values = _FONT_COLUMNS[offset * GLYPH_WIDTH : (offset + 1) * GLYPH_WIDTH]
        bits = np.array([[(value >> row) & 1 for value in values] for row in range(GLYPH_HEIGHT)], dtype=bool)
        font[chr(32 + offset)] = bits
    return font


FONT: dict[str, np.ndarray] = _build_font()
"""Character -> (GLYPH_HEIGHT, GLYPH_WIDTH) bool bitmap, for printable ASCII; others draw as ``?``."""
_CELLS = np.zeros((len(FONT), CELL_HEIGHT, CELL_WIDTH), dtype=bool)
for _index, _glyph in enumerate(FONT.values()):
    _CELLS[_index, :GLYPH_HEIGHT, :GLYPH_WIDTH] = _glyph
_UNKNOWN = ord("?") - 32


def text_mask(text: str, scale: int = 1) -> np.ndarray:
    """The ink of ``text`` laid out in one row of cells: bool (CELL_HEIGHT, len(text) * CELL_WIDTH) x ``scale``."""
    codes = np.array([ord(c) - 32 if 32 <= ord(c) < 127 else _UNKNOWN for c in text], dtype=np.intp)
    # (characters, cell_h, cell_w) -> (cell_h, characters * cell_w), then each font pixel scale x scale.
    mask = _CELLS[codes].transpose(1, 0, 2).reshape(CELL_HEIGHT, len(text) * CELL_WIDTH)
    return mask.repeat(scale, axis=0).repeat(scale, axis=1) if scale > 1 else mask


def draw_text(image: np.ndarray, top: int, left: int, text: str, color: Color, scale: int = 1) -> None:
    """Draw ``text`` in ``color`` into ``image`` with its first cell's top-left corner at pixel (top, left).

    Only the glyphs' pixels are written (the background shows through); text is clipped at the image's edges.
    """
    mask = text_mask(text, scale)
    region = image[top : top + mask.shape[0], left : left + mask.shape[1]]
    region[mask[: region.shape[0], : region.shape[1]]] = color


def fill_box(image: np.ndarray, top: int, left: int, height: int, width: int, color: Color) -> None:
    """Fill the ``height`` x ``width`` pixel box with its top-left corner at (top, left), clipped at the edges."""
    image[top : top + height, left : left + width] = color


def canvas_shape(columns: int, rows: int, scale: int, margin: int = 0, block: int = 1) -> tuple[int, int, int]:
    """The (H, W, 3) shape of a :class:`Canvas`: the cells, ``margin`` pixels around them, each side rounded up
    to a multiple of ``block`` (16 suits video encoders' macroblocks)."""
    height = rows * CELL_HEIGHT * scale + 2 * margin
    width = columns * CELL_WIDTH * scale + 2 * margin
    return -(-height // block) * block, -(-width // block) * block, 3


class Canvas:
    """A uint8 (H, W, 3) image of ``rows`` x ``columns`` character cells, each font pixel ``scale`` pixels wide,
    inside ``margin`` pixels of background; its shape is :func:`canvas_shape`'s."""

    def __init__(
        self, columns: int, rows: int, scale: int, background: Color, *, margin: int = 0, block: int = 1
    ) -> None:
        self.columns, self.rows, self.scale, self.margin = columns, rows, scale, margin
        self.cell = (CELL_HEIGHT * scale, CELL_WIDTH * scale)
        self.image = np.empty(canvas_shape(columns, rows, scale, margin, block), dtype=np.uint8)
        self.image[...] = background

    def corner(self, row: int, column: int) -> tuple[int, int]:
        """The image pixel at the top-left corner of cell (row, column)."""
        return self.margin + row * self.cell[0], self.margin + column * self.cell[1]

    def text(self, row: int, column: int, text: str, color: Color) -> int:
        """Draw ``text`` from cell (row, column), clipped at the last column; returns the next free column."""
        if not 0 <= row < self.rows:
            return column
        shown = text[: max(0, self.columns - column)]
        draw_text(self.image, *self.corner(row, column), shown, color, self.scale)
        return column + len(shown)

    def band(self, row: int, color: Color) -> None:
        """Fill cell row ``row`` (every column, the whole cell height) with ``color``: a row's own background."""
        if 0 <= row < self.rows:
            fill_box(self.image, *self.corner(row, 0), self.cell[0], self.columns * self.cell[1], color)

    def bar(self, row: int, column: int, width: int, segments: list[Color], gap: int | None = None) -> None:
        """A row of equal boxes as tall as a glyph, one per colour in ``segments``, across ``width`` cells from
        cell (row, column), ``gap`` pixels (default one font pixel) apart."""
        if not segments or not 0 <= row < self.rows:
            return
        gap = self.scale if gap is None else gap
        top, left = self.corner(row, column)
        size = (min(width, self.columns - column) * self.cell[1]) // len(segments)
        for index, color in enumerate(segments):
            fill_box(self.image, top, left + index * size, GLYPH_HEIGHT * self.scale, size - gap, color)

    def rule(self, row: int, color: Color) -> None:
        """A horizontal line across every column through the middle of cell row ``row``."""
        top, left = self.corner(row, 0)
        thickness = max(1, self.scale // 2)
        fill_box(self.image, top + self.cell[0] // 2, left, thickness, self.columns * self.cell[1], color)
