"""Named views over one flat vector: the observation (and state) layout of every game.

A game declares its observation as an ordered list of documented blocks (``Block``); ``Layout`` gives
each block's offset, zero-copy named views of a vector (``layout.views(observation)``) and a Markdown table
for the docs. Both games' environments expose theirs as ``env.unwrapped.layout``; checkpoints record its
block names, so a policy made for another layout is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Block:
    """One named, documented slice of a flat vector."""

    name: str
    shape: tuple[int, ...]
    doc: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


class Layout:
    """An ordered list of blocks: offsets, shapes and a decoder for vectors of that layout."""

    def __init__(self, blocks: list[Block]) -> None:
        self.blocks = tuple(blocks)
        self.shapes: dict[str, tuple[int, ...]] = {block.name: block.shape for block in blocks}
        self.slices: dict[str, slice] = {}
        offset = 0
        for block in blocks:
            self.slices[block.name] = slice(offset, offset + block.size)
            offset += block.size
        self.size = offset

    def views(self, vector: np.ndarray) -> dict[str, np.ndarray]:
        """Named, reshaped, zero-copy views of ``vector`` (which must have this layout's size)."""
        vector = np.asarray(vector)
        if vector.shape != (self.size,):
            raise ValueError(f"expected a vector of shape ({self.size},) for this layout, got {vector.shape}")
        return {block.name: vector[self.slices[block.name]].reshape(block.shape) for block in self.blocks}

    def describe(self) -> str:
        """A Markdown table of the layout (used to generate the reference in docs/friday13.md)."""
        lines = ["| block | offset | shape | meaning |", "|---|---|---|---|"]
        for block in self.blocks:
            start = self.slices[block.name].start
            lines.append(f"| `{block.name}` | {start} | {block.shape} | {block.doc} |")
        return "\n".join(lines)
