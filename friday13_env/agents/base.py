"""The one small protocol every Friday the 13th agent follows.

An agent sees exactly what a player at the table sees: the AEC observation dict of its own seat
(``{"observation": vector, "action_mask": int8 vector}``) and nothing else: no engine state, no
other hands. It returns a legal action as a plain ``int``. All randomness comes from the agent's
own seeded ``numpy`` Generator, so a seeded agent is reproducible and never touches global RNGs.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Protocol, runtime_checkable

import numpy as np

from friday13_env.cards import DECKS, Deck
from friday13_env.encoding import observation_layout

Observation = Mapping[str, np.ndarray]


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observation) -> int`` and a ``name`` can sit at the table."""

    name: str

    def act(self, observation: Observation) -> int:
        """A legal action for the observation of the agent's own seat."""
        ...


def legal_actions(observation: Observation) -> np.ndarray:
    """The legal actions of an observation, ascending; an error if there are none."""
    legal = np.flatnonzero(observation["action_mask"])
    if legal.size == 0:
        raise ValueError("the observation has no legal action: this agent is not the one to move")
    return legal


def deck_of(observation: Observation) -> Deck:
    """Which deck an observation was encoded with, read from its length (each deck's differs)."""
    size = len(observation["observation"])
    deck = _deck_by_observation_size().get(size)
    if deck is None:
        sizes = {name: observation_layout(deck).size for name, deck in DECKS.items()}
        raise ValueError(f"an observation of length {size} matches no deck; expected one of {sizes}")
    return deck


@cache
def _deck_by_observation_size() -> dict[int, Deck]:
    """Observation length -> deck, built once: agents ask on every move."""
    decks = {observation_layout(deck).size: deck for deck in DECKS.values()}
    if len(decks) != len(DECKS):
        raise RuntimeError("two decks share an observation length, so an observation cannot name its deck")
    return decks


class RandomAgent:
    """Uniform over the legal actions: the floor every other agent must clear."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        legal = legal_actions(observation)
        return int(legal[self.rng.integers(legal.size)])
