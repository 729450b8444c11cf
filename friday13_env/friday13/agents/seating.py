"""Seating checks: an agent made for one deck is refused at a table of the other before it plays.

A policy network trained on the standard deck reads a German-deck observation as garbage (or fails
at its first move); environments, the play command and the evaluation tools call
``check_seated(agent, deck)`` when they seat an agent, so the mismatch is an error that names both
decks at construction or reset time instead of a crash mid-game.

An agent says which deck it plays through a ``deck`` attribute (a ``Deck`` or a deck name), as
``Friday13PolicyAgent`` does; an agent built on another (``EndgameSearchAgent.policy``) or on a policy
network (``PolicyAgent.policy.metadata.deck``) is followed to it. An agent that names no deck (the
heuristics, search, random) plays any table.

``make_seated(spec, seed, deck)`` is the one way every tool builds an agent for a table: the agent a
spec names (or an agent object as it is), refused if it plays another deck.
"""

from __future__ import annotations

import os
from typing import Any

from friday13_env.core.agent import Agent
from friday13_env.core.specs import AgentSpec
from friday13_env.friday13.agents.registry import REGISTRY
from friday13_env.friday13.cards import Deck, as_deck

__all__ = ["DeckMismatchError", "check_seated", "deck_of_agent", "make_seated"]


class DeckMismatchError(ValueError):
    """An agent made for one deck seated at a table of the other; ``agent_deck`` and ``table_deck`` say which."""

    def __init__(self, message: str, agent_deck: Deck, table_deck: Deck) -> None:
        super().__init__(message)
        self.agent_deck = agent_deck
        self.table_deck = table_deck


def make_seated(spec: str | os.PathLike[str] | AgentSpec | Agent, seed: int | None, deck: Deck | str) -> Agent:
    """The agent ``spec`` names, built with ``seed`` (an agent object is taken as it is), after checking that
    it plays ``deck``: a bad spec is the registry's ``ValueError``, another deck a ``DeckMismatchError``."""
    # A path is always a checkpoint file, as in agents.make; an agent object is taken as it is.
    agent = REGISTRY.make(spec, seed=seed) if isinstance(spec, str | os.PathLike | AgentSpec) else spec
    check_seated(agent, deck)
    return agent


def deck_of_agent(agent: Any) -> Deck | None:
    """The deck an agent declares (its own ``deck``, its ``policy``'s, or its network metadata's), or ``None``."""
    seen: set[int] = set()
    current = agent
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for holder in (current, getattr(current, "metadata", None)):
            deck = getattr(holder, "deck", None)
            if deck is not None:
                return as_deck(deck, f"agent {_label(agent)}")
        current = getattr(current, "policy", None)
    return None


def check_seated(agent: Any, deck: Deck | str) -> None:
    """A ``ValueError`` naming both decks if ``agent`` was made for another deck than the table's ``deck``."""
    table = as_deck(deck, "the table")
    own = deck_of_agent(agent)
    if own is not None and own != table:
        raise DeckMismatchError(
            f"agent {_label(agent)} plays the {own.name!r} deck, but this table plays the {table.name!r} deck; "
            f"seat an agent made for the {table.name!r} deck",
            own,
            table,
        )


def _label(agent: Any) -> str:
    return repr(getattr(agent, "name", type(agent).__name__))
