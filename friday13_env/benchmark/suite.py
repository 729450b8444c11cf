"""Benchmark suites: frozen files that fix what is played, so that a score means the same thing everywhere.

A suite (``suites/NAME.json``, package data) names its game and its *cells*: for the card game a table
(player count, deck, the anchors in the other seats), for the solo game a level. It fixes the deals of each
*split* (``test``, the reported numbers, and ``dev``, for tuning; DouZero's practice) by a seed and a count,
and pins the SHA-256 of the deals those generate and a behaviour fingerprint of every anchor, which tests
recompute: a change to the dealing code, the rules or an anchor that would change results fails a test and
must become a new suite version, never a silent change. ``references`` holds the anchors' measured win shares
per cell on the test split (``random`` scores 0, ``search`` scores 1), copied from their result files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from friday13_env.core.specs import shown

SPLITS = ("test", "dev")
"""``test`` gives the reported numbers; ``dev`` has other deals of the same kind, for tuning."""
NORMALISERS = ("random", "search")
"""The anchors whose scores define 0 and 1 of the normalised score."""
GAMES = ("friday13", "friday")


@dataclass(frozen=True)
class Cell:
    """One measured condition of a suite: a table of the card game or a level of the solo game."""

    name: str
    players: int = 1
    """Seats at the table; 1 for the solo game."""
    deck: str = "standard"
    opponents: tuple[str, ...] = ()
    """The anchors in seats 1..n-1 before rotation (the benchmarked agent sits in seat 0)."""
    level: int = 0
    """The solo game's level; 0 for the card game."""

    def to_dict(self) -> dict[str, Any]:
        if self.level:
            return {"name": self.name, "level": self.level}
        return {"name": self.name, "players": self.players, "deck": self.deck, "opponents": list(self.opponents)}


@dataclass(frozen=True)
class Split:
    seed: int
    deals: int
    """Deals per cell (card game: each is played once per distinct seat rotation) or games per level (solo)."""


@dataclass(frozen=True)
class Suite:
    """A frozen benchmark: its cells, deals, anchors and the anchors' reference scores."""

    name: str
    version: int
    game: str
    title: str
    description: str
    cells: tuple[Cell, ...]
    splits: Mapping[str, Split]
    deals_sha256: Mapping[str, str]
    anchors: Mapping[str, str]
    """Every anchor the suite seats or normalises by, with its behaviour fingerprint."""
    references: Mapping[str, tuple[float, ...]]
    """``{anchor: win share per cell}`` on the test split, for ``NORMALISERS``; empty until they were measured."""
    num_rounds: int = 4

    @property
    def anchor_names(self) -> list[str]:
        """Every agent the suite seats or normalises by, sorted: the names ``anchors`` pins."""
        return sorted({*NORMALISERS, *(opponent for cell in self.cells for opponent in cell.opponents)})

    @property
    def id(self) -> str:
        """``name-vVERSION``: how results and the leaderboard name the suite."""
        return f"{self.name}-v{self.version}"

    def split(self, name: str) -> Split:
        if name not in self.splits:
            raise ValueError(f"suite {self.name!r} has no split {shown(name)}; its splits: {sorted(self.splits)}")
        return self.splits[name]

    def games_per_cell(self, split: str) -> list[int]:
        """Games played per cell: every deal once per distinct rotation of the seats (solo: one game a deal)."""
        from friday13_env.friday13.evaluation.duplicate import rotations

        deals = self.split(split).deals
        return [deals * len(rotations(["agent", *cell.opponents])) if cell.opponents else deals for cell in self.cells]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "game": self.game,
            "title": self.title,
            "description": self.description,
            "num_rounds": self.num_rounds,
            "cells": [cell.to_dict() for cell in self.cells],
            "splits": {name: {"seed": s.seed, "deals": s.deals} for name, s in self.splits.items()},
            "deals_sha256": dict(self.deals_sha256),
            "anchors": dict(self.anchors),
            "references": {name: list(scores) for name, scores in self.references.items()},
        }


def suite_from_dict(data: Mapping[str, Any]) -> Suite:
    """A suite from its JSON form, checked (a hand-edited file that is not a suite is a ``ValueError``)."""
    try:
        game = data["game"]
        if game not in GAMES:
            raise ValueError(f"unknown game {shown(game)}; games: {list(GAMES)}")
        cells = tuple(
            Cell(name=c["name"], level=int(c["level"]))
            if game == "friday"
            else Cell(name=c["name"], players=int(c["players"]), deck=str(c["deck"]), opponents=tuple(c["opponents"]))
            for c in data["cells"]
        )
        splits = {name: Split(int(s["seed"]), int(s["deals"])) for name, s in data["splits"].items()}
        suite = Suite(
            name=str(data["name"]),
            version=int(data["version"]),
            game=game,
            title=str(data["title"]),
            description=str(data["description"]),
            num_rounds=int(data.get("num_rounds", 4)),
            cells=cells,
            splits=splits,
            deals_sha256=dict(data["deals_sha256"]),
            anchors=dict(data["anchors"]),
            references={name: tuple(float(x) for x in scores) for name, scores in data["references"].items()},
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a benchmark suite: {error!r}") from error
    if sorted(suite.splits) != sorted(SPLITS):
        raise ValueError(f"suite {suite.name!r} must have the splits {list(SPLITS)}, has {sorted(suite.splits)}")
    for name, scores in suite.references.items():
        if len(scores) != len(suite.cells):
            raise ValueError(f"suite {suite.name!r}: {name}'s references have {len(scores)} cells, not {len(cells)}")
    return suite


@cache
def suites() -> dict[str, Suite]:
    """Every suite shipped with the package, by name."""
    folder = resources.files("friday13_env.benchmark") / "suites"
    found = {}
    for entry in sorted(folder.iterdir(), key=lambda entry: entry.name):
        if entry.name.endswith(".json"):
            suite = suite_from_dict(json.loads(entry.read_text(encoding="utf-8")))
            found[suite.name] = suite
    return found


def get_suite(name: object) -> Suite:
    """The suite called ``name``, or a ``ValueError`` listing the suites."""
    known = suites()
    if not isinstance(name, str) or name not in known:
        raise ValueError(f"unknown benchmark suite {shown(name)}; suites: {sorted(known)}")
    return known[name]
