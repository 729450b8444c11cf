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

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from friday13_env.core.checks import plain_text
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

    @property
    def definition_sha256(self) -> str:
        """SHA-256 of everything that decides the suite's numbers: its game, rounds, cells, splits, deal digests,
        anchors and references (not its title and description). ``tests/benchmark/test_suites.py`` pins it for every
        shipped suite version, so an edit that keeps the version fails a test instead of changing cited numbers."""
        definition = {key: value for key, value in self.to_dict().items() if key not in ("title", "description")}
        return hashlib.sha256(json.dumps(definition, sort_keys=True).encode("utf-8")).hexdigest()

    def split(self, name: str) -> Split:
        if not isinstance(name, str) or name not in self.splits:
            raise ValueError(f"suite {self.name!r} has no split {shown(name)}; its splits: {sorted(self.splits)}")
        return self.splits[name]

    def games_per_cell(self, split: str) -> list[int]:
        """Games played per cell: every deal once per distinct rotation of the seats (solo: one game a deal)."""
        from friday13_env.friday13.evaluation.duplicate import seatings

        deals = self.split(split).deals
        return [deals * len(seatings(["agent", *cell.opponents])) if cell.opponents else deals for cell in self.cells]

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


MAX_DEALS = 100_000
"""The most deals of a split: a result holds a row per deal and cell, and its digest hashes every deal."""
MAX_CELL_NAME = 60
"""The most characters of a cell's name, which tables and the leaderboard print."""
SUITE_KEYS = frozenset(
    {
        "name",
        "version",
        "game",
        "title",
        "description",
        "num_rounds",
        "cells",
        "splits",
        "deals_sha256",
        "anchors",
        "references",
    }
)
"""The keys of a suite file (``Suite.to_dict``); any other is refused, so that a misspelt ``num_round`` is an
error rather than the default silently used."""
CELL_KEYS = {"friday13": frozenset(("name", "players", "deck", "opponents")), "friday": frozenset(("name", "level"))}
"""The keys of a cell of each game; a key of the other game's cells is refused, not ignored."""
SPLIT_KEYS = frozenset(("seed", "deals"))
"""The keys of a split."""
_CELL_KIND = {"friday13": "card-game", "friday": "solo-game"}
"""How a message calls a cell of each game."""


def suite_from_dict(data: Mapping[str, Any]) -> Suite:
    """A suite from its JSON form, checked (a hand-edited file that is not a suite is a ``ValueError``): every field
    of its kind, nothing coerced, no key it does not know (``definition_problems`` says what else a suite must
    be)."""
    try:
        _known_keys(_mapping(data, "a suite"), SUITE_KEYS, "", "a suite")
        game = data["game"]
        if game not in GAMES:
            raise ValueError(f"unknown game {shown(game)}; games: {list(GAMES)}")
        cells = tuple(_cell(c, game) for c in _items(data["cells"], "cells"))
        splits = {
            _text(name, "a split's name"): _split(name, split)
            for name, split in _mapping(data["splits"], "splits").items()
        }
        suite = Suite(
            name=_text(data["name"], "name"),
            version=_count(data["version"], "version"),
            game=game,
            title=_text(data["title"], "title"),
            description=_text(data["description"], "description"),
            num_rounds=_count(data.get("num_rounds", 4), "num_rounds"),
            cells=cells,
            splits=splits,
            deals_sha256={
                _text(k, "a split's name"): _text(v, "a digest")
                for k, v in _mapping(data["deals_sha256"], "deals_sha256").items()
            },
            anchors={
                _text(k, "an anchor"): _text(v, "a fingerprint")
                for k, v in _mapping(data["anchors"], "anchors").items()
            },
            references={
                _text(name, "a reference's name"): tuple(_number(x, "a reference score") for x in _items(scores, name))
                for name, scores in _mapping(data["references"], "references").items()
            },
        )
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not a benchmark suite: {error!r}") from error
    problems = definition_problems(suite)
    if problems:
        raise ValueError(f"suite {suite.name!r}: " + "; ".join(problems))
    return suite


MIN_REFERENCE_SPAN = 0.05
"""The least win share by which ``search``'s reference must exceed ``random``'s in a cell: a normalised score divides
the agent's gap over ``random`` by it (the shipped suites' smallest is 0.13)."""


def definition_problems(suite: Suite) -> list[str]:
    """What makes ``suite`` not a suite that can be played and scored (its splits, cells, anchors, references): a
    list of problems, empty for a sound suite. Checked for a suite file when it is read and for a ``Suite`` object
    before a run plays it. Cell names must differ (a result names its rows by them) and be plain text (tables print
    them); ``search`` must win more than ``random`` in every cell, or its normalised scores would run backwards. A
    field of the wrong kind (a hand-built ``Suite``) is named before anything else is read."""
    problems = _kind_problems(suite)
    if problems:
        return problems
    if sorted(suite.splits) != sorted(SPLITS):
        problems.append(f"must have the splits {list(SPLITS)}, has {sorted(suite.splits)}")
    if sorted(suite.deals_sha256) != sorted(suite.splits):
        problems.append(f"must pin the deals of each split, pins {sorted(suite.deals_sha256)}")
    for name, split in suite.splits.items():
        if not 1 <= split.deals <= MAX_DEALS:
            problems.append(f"split {name} must have 1 to {MAX_DEALS:,} deals, has {split.deals}")
    if suite.version < 1 or not suite.cells or suite.num_rounds < 1:
        problems.append("must have a version, a round and a cell, at least one each")
    for cell in suite.cells:
        problems += _cell_problems(cell, suite.game)
    names = [cell.name for cell in suite.cells]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        problems.append(f"cell name(s) {repeated} repeated: each cell needs a name of its own")
    seated = {opponent for cell in suite.cells for opponent in cell.opponents}
    if not seated <= set(suite.anchors) <= set(suite.anchor_names):
        problems.append(
            f"must pin every anchor it seats ({sorted(seated)}), and no agent it neither seats nor normalises by; "
            f"pins {sorted(suite.anchors)}"
        )
    if not set(suite.references) <= set(NORMALISERS):
        problems.append(f"references are {list(NORMALISERS)}'s, not {sorted(suite.references)}'s")
    for name, scores in suite.references.items():
        if len(scores) != len(suite.cells):
            problems.append(f"{name}'s references have {len(scores)} cells, not {len(suite.cells)}")
        elif not all(math.isfinite(score) and 0 <= score <= 1 for score in scores):
            problems.append(f"{name}'s references must be win shares in [0, 1]")
    normalisers = [suite.references[name] for name in NORMALISERS if name in suite.references]
    if not problems and len(normalisers) == 2:
        if any(a == b for a, b in zip(*normalisers, strict=True)):
            problems.append("a cell's references give random and search the same score: it cannot be normalised")
        for cell, low, high in zip(suite.cells, *normalisers, strict=True):
            if high < low:
                problems.append(
                    f"cell {cell.name}'s references give search ({high:g}) a lower win share than random ({low:g}): "
                    "its normalised scores would run backwards"
                )
            elif low < high < low + MIN_REFERENCE_SPAN:
                problems.append(
                    f"cell {cell.name}'s references lie {high - low:g} apart (random {low:g}, search {high:g}), less "
                    f"than {MIN_REFERENCE_SPAN:g}: its scores would be divided by so little that they outweigh the "
                    "other cells'"
                )
    return problems


def _kind_problems(suite: Suite) -> list[str]:
    """The fields of ``suite`` that are not of their kind: splits a mapping of names to ``Split``s of non-negative int
    seeds and deals (not bools), cells a tuple of ``Cell``s, the version and the rounds ints."""
    problems = []
    if not isinstance(suite.splits, Mapping) or not all(
        isinstance(name, str) and isinstance(split, Split) for name, split in suite.splits.items()
    ):
        problems.append(f"splits must map split names to Split(seed, deals), got {shown(suite.splits)}")
    else:
        for name, split in suite.splits.items():
            for field_name in ("seed", "deals"):
                value = getattr(split, field_name)
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    problems.append(f"split {name}'s {field_name} must be a non-negative int, got {shown(value)}")
    if not isinstance(suite.cells, tuple) or not all(isinstance(cell, Cell) for cell in suite.cells):
        problems.append(f"cells must be a tuple of Cell, got {shown(suite.cells)}")
    for field_name in ("version", "num_rounds"):
        value = getattr(suite, field_name)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{field_name} must be an int, got {shown(value)}")
    return problems


def _cell_problems(cell: Cell, game: str) -> list[str]:
    if not plain_text(cell.name, MAX_CELL_NAME):
        return [f"cell name {shown(cell.name, 80)} must be 1-{MAX_CELL_NAME} characters without | ` or controls"]
    if game == "friday":
        return [] if 1 <= cell.level <= 4 else [f"cell {cell.name}: level {cell.level} is not 1-4"]
    from friday13_env.friday13.cards import DECKS
    from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS

    problems = []
    if not MIN_PLAYERS <= cell.players <= MAX_PLAYERS or len(cell.opponents) != cell.players - 1:
        problems.append(
            f"cell {cell.name}: {cell.players} players must be 3-6, the agent and its {cell.players - 1} opponents"
        )
    if cell.deck not in DECKS:
        problems.append(f"cell {cell.name}: deck {cell.deck!r} is not one of {sorted(DECKS)}")
    return problems


def _cell(data: Mapping[str, Any], game: str) -> Cell:
    data = _mapping(data, "a cell")
    _known_keys(data, CELL_KEYS[game], f"cell {_label(data.get('name'))}: ", f"a {_CELL_KIND[game]} cell")
    if game == "friday":
        return Cell(name=_text(data["name"], "a cell's name"), level=_count(data["level"], "a level"))
    return Cell(
        name=_text(data["name"], "a cell's name"),
        players=_count(data["players"], "players"),
        deck=_text(data["deck"], "a deck"),
        opponents=tuple(_text(opponent, "an opponent") for opponent in _items(data["opponents"], "opponents")),
    )


def _split(name: str, data: object) -> Split:
    """A split from its JSON form: its seed and deals, no other key."""
    split = _mapping(data, "a split")
    _known_keys(split, SPLIT_KEYS, f"split {_label(name)}: ", "a split")
    return Split(_count(split["seed"], "a split's seed"), _count(split["deals"], "deals"))


def _label(name: object) -> str:
    """A cell's or split's name in a message: as it is if it is plain text, else its ``repr`` (cut)."""
    if isinstance(name, str) and plain_text(name, MAX_CELL_NAME):
        return name
    return shown(name, 80)


def _known_keys(data: Mapping[str, Any], known: frozenset[str], where: str, what: str) -> None:
    """A ``ValueError`` naming the keys of ``data`` that are not ``known`` (``what`` has: the keys it may have)."""
    unknown = sorted(str(key) for key in data if key not in known)
    if unknown:
        raise ValueError(f"{where}unknown key(s) {shown(unknown, 200)}; {what} has {sorted(known)}")


def _text(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{what} must be a text, not {shown(value)}")
    return value


def _count(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TypeError(f"{what} must be a whole number of at least 0, not {shown(value)}")
    return value


def _number(value: object, what: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise TypeError(f"{what} must be a number, not {shown(value)}")
    return float(value)


def _items(value: object, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"{what} must be a list, not {shown(value)}")
    return value


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{what} must be an object, not {shown(value)}")
    return value


def is_suite_folder(name: str) -> bool:
    """Whether a folder of the results folder is named as a suite's results (``NAME-vVERSION`` of a suite this
    package ships, in any version: the leaderboard refuses a result of an older version by name, not skips it)."""
    match = re.fullmatch(r"(.+)-v\d+", name)
    return match is not None and match.group(1) in suites()


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
