"""Who sits at the table: agent specs (``"search:budget=200"``) and matchups built from them.

A spec is a registered agent name or a checkpoint path, optionally followed by options in
``name:key=value,key=value`` form. Specs rather than agent objects travel to the worker processes:
each worker builds its own agents from them, seeded from the master seed, so nothing unpicklable
or stateful crosses a process boundary. An in-process ``Agent`` object may stand in for a spec
when everything runs in one process (a policy being trained, a test agent).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from friday13_env import agents
from friday13_env.agents import Agent
from friday13_env.engine import MAX_PLAYERS, MIN_PLAYERS

OptionValue = bool | int | float | str
SPEC_SYNTAX = "an agent name or checkpoint path, optionally with options as name:key=value,key=value"


@dataclass(frozen=True)
class AgentSpec:
    """A buildable agent: a registered name or checkpoint path, plus keyword options for ``agents.make``."""

    name: str
    options: tuple[tuple[str, OptionValue], ...] = ()

    @property
    def label(self) -> str:
        """The canonical spec text; it names the agent in every table and file."""
        if not self.options:
            return self.name
        return f"{self.name}:" + ",".join(f"{key}={_format_value(value)}" for key, value in self.options)

    def check(self) -> None:
        """Fail early, in the main process, on a name that is neither registered nor an existing file."""
        if self.name not in agents.names() and not Path(self.name).exists():
            raise ValueError(
                f"unknown agent {self.name!r}; registered agents: {agents.names()}, or give an existing checkpoint path"
            )

    def build(self, seed: int | None) -> Agent:
        """A fresh agent; an option the agent does not accept is reported as a ``ValueError``."""
        self.check()
        try:
            return agents.make(self.name, seed=seed, **dict(self.options))
        except TypeError as error:
            raise ValueError(f"agent spec {self.label!r} has options the agent does not accept: {error}") from error


Entrant = AgentSpec | Agent
"""One participant of a matchup: a spec (buildable anywhere) or an agent object (in-process only)."""


def parse_spec(text: str) -> AgentSpec:
    """``"search:budget=200,greedy=true"`` -> ``AgentSpec("search", (("budget", 200), ("greedy", True)))``.

    Values are read as int, float or ``true``/``false`` when they look like one, else kept as text.
    An existing file path is taken whole, so a path containing ``:`` still works.
    """
    text = text.strip()
    if not text:
        raise ValueError(f"empty agent spec; expected {SPEC_SYNTAX}")
    if ":" not in text or Path(text).exists():
        return AgentSpec(text)
    name, _, option_text = text.partition(":")
    if not name:
        raise ValueError(f"agent spec {text!r} has no agent name before ':'; expected {SPEC_SYNTAX}")
    options: dict[str, OptionValue] = {}
    for item in option_text.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not key.isidentifier() or not value:
            raise ValueError(
                f"bad option {item!r} in agent spec {text!r}; expected {SPEC_SYNTAX} (e.g. search:budget=200)"
            )
        if key in options:
            raise ValueError(f"option {key!r} is given twice in agent spec {text!r}")
        options[key] = _parse_value(value)
    return AgentSpec(name, tuple(options.items()))


def as_entrant(entrant: str | Entrant) -> Entrant:
    """Parse a spec string; pass specs and agent objects through; reject anything else."""
    if isinstance(entrant, str):
        return parse_spec(entrant)
    if isinstance(entrant, AgentSpec | Agent):
        return entrant
    raise ValueError(f"expected an agent spec string, an AgentSpec or an Agent, got {entrant!r}")


def entrant_label(entrant: Entrant) -> str:
    return entrant.label if isinstance(entrant, AgentSpec) else entrant.name


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
    """``focus`` against copies of each opponent in turn (the README's standard matchup)."""
    return [Matchup.versus(focus, opponent) for opponent in opponents]


def matrix_matchups(entrants: Sequence[str | Entrant]) -> list[Matchup]:
    """Every agent against copies of every other agent: the rows and columns of a results matrix."""
    pool = list(dict.fromkeys(as_entrant(entrant) for entrant in entrants))
    if len({entrant_label(entrant) for entrant in pool}) < 2:
        raise ValueError(f"a matrix needs at least two different agents, got {[entrant_label(e) for e in pool]}")
    return [Matchup.versus(focus, opponent) for focus in pool for opponent in pool if opponent is not focus]


def check_player_count(num_players: int) -> None:
    allowed = list(range(MIN_PLAYERS, MAX_PLAYERS + 1))
    if isinstance(num_players, bool) or num_players not in allowed:
        raise ValueError(f"player count must be one of {allowed}, got {num_players!r}")


def _parse_value(text: str) -> OptionValue:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text


def _format_value(value: OptionValue) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
