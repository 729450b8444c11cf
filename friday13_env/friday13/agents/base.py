"""What every Friday the 13th agent shares: the protocol (from :mod:`friday13_env.core.agent`), the deck an
observation was encoded with, and the uniform random agent that every other agent must beat.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from friday13_env.core.agent import Agent, Observation, legal_actions
from friday13_env.friday13.cards import DECKS, Deck
from friday13_env.friday13.encoding import observation_layout

__all__ = ["Agent", "Observation", "RandomAgent", "deck_of", "legal_actions"]


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
