"""Friday the 13th policies: the layout a checkpoint must match, the input scale, and the agent.

The format itself (arrays, metadata, safe reading) is game-agnostic, in :mod:`friday13_env.core.checkpoint`;
this module says what a ``friday13_v0`` policy must declare: its deck's observation layout and
action count. A policy of one deck refuses a table of the other when seated and when it moves.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.core.agent import Observation
from friday13_env.core.checkpoint import read_policy
from friday13_env.core.mlp import RAW_INPUT, MLPPolicy, PolicyAgent, PolicyMetadata
from friday13_env.core.specs import shown
from friday13_env.friday13.agents.base import checked, deck_of
from friday13_env.friday13.cards import DECKS, Deck, get_deck
from friday13_env.friday13.encoding import observation_bounds, observation_layout
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS, Rules
from friday13_env.friday13.features import features_of, input_features

ENV_VERSION = "friday13_v0"
ZOO_PACKAGE = "friday13_env.friday13"
"""The package whose ``zoo/`` folder ships the game's trained policies (:mod:`friday13_env.core.zoo`)."""
TYPICAL_SCORE = 40.0
"""Scores are scaled by this, not by their theoretical bound (~230), which would squash them."""


def expected_layout(metadata: PolicyMetadata) -> dict[str, Any]:
    """The fields a ``friday13_v0`` policy must carry for its deck (a ``ValueError`` for another game)."""
    if metadata.env_version != ENV_VERSION:
        raise ValueError(
            f"it is a {shown(metadata.env_version)} policy; Friday the 13th plays {ENV_VERSION!r} policies"
        )
    if metadata.deck not in DECKS:
        raise ValueError(f"unknown deck {shown(metadata.deck)}; allowed: {sorted(DECKS)}")
    return layout_fields(metadata.deck)


def layout_fields(deck_name: str) -> dict[str, Any]:
    deck = get_deck(deck_name)
    layout = observation_layout(deck)
    return {
        "observation_size": layout.size,
        "observation_blocks": [block.name for block in layout.blocks],
        "num_actions": deck.num_actions,
    }


def read_friday13_policy(path: str | Path) -> MLPPolicy:
    """A ``friday13_v0`` policy from a checkpoint, or a ``CheckpointError`` naming the problem."""
    return read_policy(path, expected_layout, features_of)


def policy_metadata(
    deck_name: str,
    activation: str,
    hidden_sizes: Sequence[int],
    description: str,
    training: dict[str, Any] | None = None,
    input_features: str = RAW_INPUT,
) -> PolicyMetadata:
    """Metadata of a Friday the 13th policy, with the layout fields taken from this version."""
    return PolicyMetadata(
        deck=deck_name,
        activation=activation,
        hidden_sizes=list(hidden_sizes),
        env_version=ENV_VERSION,
        description=description,
        training=training,
        input_features=input_features,
        **layout_fields(deck_name),
    )


def observation_scale(deck_name: str) -> np.ndarray:
    """Per-entry input scale of Friday the 13th policies: 1 / the entry's bound at any table size.

    Every trained policy stores the scale it was trained with (``input_scale``); this is the one
    the training scripts use, so that one policy sees inputs in [0, 1] at every table size.
    """
    deck = get_deck(deck_name)
    high = np.max(
        [observation_bounds(Rules(num_players=n, deck=deck)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)], axis=0
    )
    high[observation_layout(deck).slices["scores"]] = TYPICAL_SCORE
    return (1.0 / np.maximum(high, 1.0)).astype(np.float32)


def input_scale(deck_name: str, features: str = RAW_INPUT) -> np.ndarray:
    """The scale of a network's inputs: ``observation_scale``, then the derived inputs' own scale."""
    derived = input_features(features, get_deck(deck_name))
    scale = observation_scale(deck_name)
    return scale if derived is None else np.concatenate([scale, derived.scale])


class Friday13PolicyAgent(PolicyAgent):
    """A policy at a Friday the 13th table; it knows its deck, so a table of the other deck is refused."""

    def __init__(self, policy: MLPPolicy, name: str, seed: int | None = None, greedy: bool = True) -> None:
        super().__init__(policy, name, seed=seed, greedy=greedy)
        self.deck: Deck = get_deck(policy.metadata.deck)

    def _read(self, observation: Observation) -> tuple[np.ndarray, np.ndarray]:
        self.check_deck(deck_of(observation, self.name))  # first: another deck's mask is the wrong size too
        return checked(observation, self.name)[1:]

    def check_deck(self, table: Deck) -> None:
        """A ``ValueError`` naming both decks unless the table plays this policy's deck."""
        if table != self.deck:
            raise ValueError(
                f"policy {self.name!r} was trained for the {self.deck.name!r} deck, "
                f"but this table plays the {table.name!r} deck"
            )


def load_policy_agent(
    path: str | Path, seed: int | None = None, greedy: bool = True, name: str | None = None
) -> Friday13PolicyAgent:
    """The agent behind ``friday13_env.agents.load(path)``: a Friday the 13th policy only."""
    return Friday13PolicyAgent(read_friday13_policy(path), name=name or Path(path).stem, seed=seed, greedy=greedy)
