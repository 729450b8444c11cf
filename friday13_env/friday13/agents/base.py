"""What every Friday the 13th agent shares: the protocol (from :mod:`friday13_env.core.agent`), the deck an
observation was encoded with, and the uniform random agent that every other agent must beat.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from friday13_env.core.agent import Agent, Observation, checked_observation, legal_actions, observation_arrays
from friday13_env.core.registry import check_seed
from friday13_env.friday13.cards import DECKS, Deck
from friday13_env.friday13.encoding import observation_layout

__all__ = ["Agent", "Observation", "RandomAgent", "agent_rng", "checked", "deck_of", "deck_of_length", "legal_actions"]


def deck_of(observation: Observation, agent: str = "agent") -> Deck:
    """Which deck an observation was encoded with, read from its length (each deck's differs).

    Anything that is not an observation dict (both entries, :func:`friday13_env.core.agent.observation_arrays`)
    with a 1-d ``observation`` vector of one deck's length is a ``ValueError`` saying so.
    """
    shape = observation_arrays(observation, agent)[0].shape
    if len(shape) != 1:
        raise ValueError(f"an observation vector must be 1-d, got shape {shape}")
    return deck_of_length(shape[0])


def deck_of_length(length: int) -> Deck:
    """The deck whose observation vectors have ``length`` entries, or a ``ValueError`` listing each deck's."""
    deck = _deck_by_observation_size().get(length)
    if deck is None:
        sizes = {name: observation_layout(deck).size for name, deck in DECKS.items()}
        raise ValueError(f"an observation of length {length} matches no deck; expected one of {sizes}")
    return deck


def checked(observation: Observation, agent: str) -> tuple[Deck, np.ndarray, np.ndarray]:
    """The deck, observation vector and legal actions of an observation, after checking that it is one a
    Friday the 13th table produces: a ``ValueError`` naming the agent and the problem otherwise.

    Checked: the dict's shape, a vector of one deck's length holding finite, non-negative numbers,
    and an action mask of that deck's action count with a legal action.
    """
    deck = deck_of(observation, agent)
    vector, legal = checked_observation(
        observation, observation_layout(deck).size, deck.num_actions, agent, nonnegative=True
    )
    return deck, vector, legal


def agent_rng(seed: int | None) -> np.random.Generator:
    """An agent's own random generator, after checking the seed (``None`` or a non-negative int)."""
    check_seed(seed)
    return np.random.default_rng(seed)


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
        self.rng = agent_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed in place, as building the agent anew with ``seed`` would (the evaluation's hook)."""
        self.rng = agent_rng(seed)

    def act(self, observation: Observation) -> int:
        _, _, legal = checked(observation, self.name)  # an observation no table shows is refused, as by every agent
        return int(legal[self.rng.integers(legal.size)])
