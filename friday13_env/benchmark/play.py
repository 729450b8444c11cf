"""Playing a suite: its work cut into units of consecutive deals of one cell, and the function that plays one.

A unit's result is one row per deal for the benchmarked agent, ``METRICS`` wide, plus the wall time its
``act`` calls took and how many there were. Units are cut by deal count alone and seed everything from the
split's seed, so the rows do not depend on how many processes play them, or on an interruption between units.
A unit with ``replays`` also saves the games of its cell's first deals as replay files
(``friday13_env.web.record``), which changes none of its numbers.

The card game plays each deal once per distinct rotation of the seats (``friday13.evaluation.duplicate``):
a row is the agent's mean over those games. An agent against copies of itself is one agent in every seat,
whose win share is the equal seat ``1/n`` and whose margin is 0 by construction; that cell is not played.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from friday13_env.benchmark.suite import Cell, Suite
from friday13_env.core.agent import Agent, Observation, checked_act, reseeded
from friday13_env.core.seeds import derived_seed
from friday13_env.core.specs import AgentSpec, Entrant, entrant_label

if TYPE_CHECKING:
    from friday13_env.friday13.evaluation.duplicate import ReplaySaving
    from friday13_env.web.record import SoloRecord

METRICS = ("win", "margin")
"""Per deal: the agent's win share (ties split; the solo game: 1 for a win) and its margin (the card game:
the other seats' mean bad-luck points minus the agent's, so positive is better; the solo game: the score)."""
SECOND_METRIC = {"friday13": "margin", "friday": "score"}
"""What the second column of a row is called in a result file, per game."""
UNIT_DEALS = 4
"""Deals per unit of work: the grain of progress, parallelism and resuming."""


@dataclass(frozen=True)
class Unit:
    """Deals ``first .. first + count - 1`` of one cell of one split."""

    game: str
    cell_index: int
    cell: Cell
    num_rounds: int
    seed: int
    first: int
    count: int
    agent: Entrant
    replays: ReplaySaving | None = None
    """Where to save the games of the cell's first deals as replays (``None``: nowhere)."""

    @property
    def index(self) -> int:
        return self.first // UNIT_DEALS


@dataclass(frozen=True)
class UnitResult:
    rows: np.ndarray
    """``(count, len(METRICS))``: one row per deal."""
    act_seconds: float
    decisions: int


def units(suite: Suite, split: str, agent: Entrant, replays: ReplaySaving | None = None) -> Iterator[Unit]:
    """Every unit of a split, cell by cell, in a fixed order."""
    deals = suite.split(split).deals
    seed = suite.split(split).seed
    for cell_index, cell in enumerate(suite.cells):
        for first in range(0, deals, UNIT_DEALS):
            count = min(UNIT_DEALS, deals - first)
            yield Unit(suite.game, cell_index, cell, suite.num_rounds, seed, first, count, agent, replays)


def against_itself(cell: Cell, agent: Entrant) -> bool:
    """Whether a card-game cell seats only copies of the agent itself: not played, each game an equal seat's share
    and a margin of 0 (its replays are not saved)."""
    return isinstance(agent, AgentSpec) and bool(cell.opponents) and all(o == agent.label for o in cell.opponents)


def play_unit(unit: Unit) -> UnitResult:
    """Play one unit (a module-level function, so a process pool can run it)."""
    return _play_solo(unit) if unit.game == "friday" else _play_card(unit)


def solo_game_seed(seed: int, level: int, game: int) -> int:
    """The solo game's environment seed of game ``game`` at ``level`` (its agent's: ``agent_seed`` of it)."""
    return derived_seed(seed, level, game)


class _Recorded:
    """An agent whose every action is noted in a solo game's record."""

    def __init__(self, agent: Agent, record: SoloRecord) -> None:
        self.agent = agent
        self.name = agent.name
        self.record = record

    def act(self, observation: Observation) -> int:
        action = self.agent.act(observation)
        self.record.move(action)
        return action


class _Timed:
    """An agent whose ``act`` calls are timed and counted."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = agent.name
        self.seconds = 0.0
        self.decisions = 0

    def act(self, observation: Observation) -> int:
        start = time.perf_counter()
        action = checked_act(self.agent, observation, "in a game")
        self.seconds += time.perf_counter() - start
        self.decisions += 1
        return action


def _play_card(unit: Unit) -> UnitResult:
    from friday13_env.friday13.evaluation.duplicate import METRICS as CARD_METRICS
    from friday13_env.friday13.evaluation.duplicate import Chunk, build_agents, play_chunk

    players = unit.cell.players
    if against_itself(unit.cell, unit.agent):
        rows = np.tile([1.0 / players, 0.0], (unit.count, 1))
        return UnitResult(rows, 0.0, 0)
    lineup = (unit.agent, *(AgentSpec(opponent) for opponent in unit.cell.opponents))
    replays = unit.replays
    if replays is not None:
        replays = dataclasses.replace(replays, source=(*replays.source, ("cell", unit.cell.name)))
    chunk = Chunk(
        unit.cell_index, unit.index, lineup, unit.cell.deck, unit.num_rounds, unit.seed, unit.first, unit.count, replays
    )
    built = build_agents(chunk)
    focus = entrant_label(unit.agent)
    timed = _Timed(built[focus])
    samples = play_chunk(chunk, {**built, focus: timed})
    labels = chunk.labels
    seats = np.array([sum(entrant_label(e) == label for e in lineup) for label in labels], dtype=float)
    points = samples[:, :, CARD_METRICS.index("points")]
    own = points[:, labels.index(focus)]
    others_mean = (points @ seats - own) / (players - 1)
    rows = np.column_stack([samples[:, labels.index(focus), CARD_METRICS.index("win_rate")], others_mean - own])
    return UnitResult(rows, timed.seconds, timed.decisions)


def _play_solo(unit: Unit) -> UnitResult:
    from friday13_env.friday.agents import make
    from friday13_env.friday.env import FridayEnv
    from friday13_env.friday.evaluation.games import agent_seed, play_game
    from friday13_env.friday13.evaluation.duplicate import file_label
    from friday13_env.web.record import MAX_LABEL, SoloRecord, save

    level, replays = unit.cell.level, unit.replays
    env = FridayEnv(level=level, illegal_action="raise")
    rows = np.empty((unit.count, len(METRICS)))
    seconds, decisions = 0.0, 0
    for row, game in enumerate(range(unit.first, unit.first + unit.count)):
        seed = solo_game_seed(unit.seed, level, game)
        if isinstance(unit.agent, AgentSpec):
            agent = make(unit.agent, seed=agent_seed(seed))
        else:
            agent = unit.agent
            reseeded(agent, agent_seed(seed))
        timed = _Timed(agent)
        record = None
        if replays is not None and replays.saves(game):
            source = replays.source_with(cell=unit.cell.name, game=game)
            record = SoloRecord(level, seed, entrant_label(unit.agent)[:MAX_LABEL], source=source)
        won, score, _ = play_game(env, timed if record is None else _Recorded(timed, record), seed)
        if replays is not None and record is not None:
            save(record, replays.path(file_label(entrant_label(unit.agent)), f"level{level}", f"game{game}"))
        rows[row] = (float(won), float(score))
        seconds += timed.seconds
        decisions += timed.decisions
    return UnitResult(rows, seconds, decisions)
