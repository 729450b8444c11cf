"""Who sits at the table: agent specs (``"search:budget=200"``) and matchups built from them.

A spec is exactly what ``friday13_env.agents.make`` takes: a registered agent name, a model-zoo name
(``ensemble-v1``) or a checkpoint path, optionally followed by options in ``name:key=value,key=value``
form (``search:budget=600``). A spec string is checked against the registry when a matchup is
built (unknown names and options are errors before any game); option values are checked when
``evaluate`` first builds every agent. Specs rather than agent objects travel to the worker processes:
each worker builds its own agents from them, seeded from the master seed, so nothing unpicklable
or stateful crosses a process boundary. An in-process ``Agent`` object may stand in for a spec
when everything runs in one process (a policy being trained, a test agent).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from friday13_env.core.agent import reseeded
from friday13_env.core.specs import AgentSpec, Entrant, entrant_label, first_repeat, parse_spec
from friday13_env.friday13 import agents
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS

__all__ = ["AgentSpec", "Entrant", "Matchup", "as_entrant", "build", "focus_matchups", "matrix_matchups", "parse_spec"]


def build(entrant: Entrant, seed: int | None) -> Agent:
    """The agent of an entrant: built fresh from a spec, or the agent object itself, re-seeded with ``seed`` by its
    ``reset(seed)`` hook if it has one (as the solo game's evaluation does), so that its play does not depend on
    the games it played before."""
    if isinstance(entrant, AgentSpec):
        return agents.make(entrant, seed=seed)
    if seed is not None:
        reseeded(entrant, seed)
    return entrant


def as_entrant(entrant: str | Entrant) -> Entrant:
    """Parse a spec string; pass specs and agent objects through; reject anything else."""
    if isinstance(entrant, str):
        return agents.REGISTRY.check(entrant)
    if isinstance(entrant, AgentSpec | Agent):
        return entrant
    raise ValueError(f"expected an agent spec string, an AgentSpec or an Agent, got {entrant!r}")


@dataclass(frozen=True)
class Matchup:
    """A table: an optional ``focus`` agent in one seat, the other seats filled cyclically from ``others``.

    ``Matchup.versus(a, b)`` is "a against copies of b" at any table size; ``Matchup.table(a, b, c)``
    seats a, b, c, a, ... Seats are then rotated by the tournament, so the order here only fixes
    who sits next to whom.
    """

    others: tuple[Entrant, ...]
    focus: Entrant | None = None

    def __post_init__(self) -> None:
        if not self.others:
            raise ValueError("a matchup needs at least one agent besides the focus agent")
        by_label: dict[str, Entrant] = {}
        for entrant in self.entrants:
            known = by_label.setdefault(entrant_label(entrant), entrant)
            if known is not entrant and not (isinstance(known, AgentSpec) and known == entrant):
                raise ValueError(f"two different agents are both called {entrant_label(entrant)!r} in one matchup")

    @classmethod
    def versus(cls, focus: str | Entrant, opponent: str | Entrant) -> Matchup:
        return cls(others=(as_entrant(opponent),), focus=as_entrant(focus))

    @classmethod
    def table(cls, *entrants: str | Entrant) -> Matchup:
        return cls(others=tuple(as_entrant(entrant) for entrant in entrants))

    @property
    def entrants(self) -> tuple[Entrant, ...]:
        return self.others if self.focus is None else (self.focus, *self.others)

    @property
    def label(self) -> str:
        others = ", ".join(entrant_label(entrant) for entrant in self.others)
        return others if self.focus is None else f"{entrant_label(self.focus)} vs {others}"

    def lineup(self, num_players: int) -> tuple[Entrant, ...]:
        """The entrant of each seat before rotation, for a table of ``num_players``."""
        check_player_count(num_players)
        free = num_players - (self.focus is not None)
        if len(self.others) > free:
            raise ValueError(f"matchup {self.label!r} has more agents than the {num_players} seats of the table")
        filled = tuple(itertools.islice(itertools.cycle(self.others), free))
        return filled if self.focus is None else (self.focus, *filled)


def focus_matchups(focus: str | Entrant, opponents: Sequence[str | Entrant]) -> list[Matchup]:
    """``focus`` against copies of each opponent in turn (the standard matchup of docs/agents.md)."""
    return [Matchup.versus(focus, opponent) for opponent in opponents]


def matrix_matchups(entrants: Sequence[str | Entrant]) -> list[Matchup]:
    """Every agent against copies of every other agent: the rows and columns of a results matrix. Each agent is
    listed once: a repeat would be a row and a column of the same name, so it is a ``ValueError``, not dropped."""
    pool = [as_entrant(entrant) for entrant in entrants]
    labels = [entrant_label(entrant) for entrant in pool]
    if len(set(labels)) < 2:
        raise ValueError(f"a matrix needs at least two different agents, got {labels}")
    repeat = first_repeat(labels)
    if repeat is not None:
        raise ValueError(f"agent {labels[repeat[0]]!r} is listed twice, in {labels}; list each agent once")
    return [Matchup.versus(focus, opponent) for focus in pool for opponent in pool if opponent is not focus]


def check_player_count(num_players: int) -> None:
    allowed = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    if isinstance(num_players, bool) or num_players not in allowed:
        raise ValueError(f"player count must be one of {allowed}, got {num_players!r}")
