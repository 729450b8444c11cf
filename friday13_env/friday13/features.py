"""Derived policy inputs: facts a network could compute from the observation, spelled out for it.

A policy may declare ``input_features`` in its metadata; its network then reads the observation
followed by these entries, computed from the observation alone (no hidden information, no search),
so that any ``friday13_v0`` observation plays it. The environment's observation never changes.

``majority_preview``: the end-of-round scoring applied to the captured stacks as they stand, and to
the stacks each action would leave. Who holds the sole majority of each omen type is a comparison
across six seats, and what a capture does to it depends on the pile's cards by type; a small network
learns such comparisons slowly (as with ``capture_preview``, which the observation already spells
out), and they decide whether a capture costs points or breaks a rival's majority.
"""

from __future__ import annotations

import numpy as np

from friday13_env.core.mlp import RAW_INPUT, PolicyMetadata
from friday13_env.core.specs import shown
from friday13_env.friday13.cards import (
    CAPTURE_LIMIT,
    FRIDAY_POINTS,
    FRIDAY_TYPE,
    NUM_PILES,
    NUM_TYPES,
    OMEN_POINTS,
    Deck,
    as_deck,
    deck_cache,
    get_deck,
)
from friday13_env.friday13.encoding import MAX_SEATS, observation_layout
from friday13_env.friday13.engine import stacked_round_points

POINTS_SCALE = 1.0 / 13.0
"""Input scale of the previewed points: a round's points at a seat are mostly below 13."""


class MajorityPreview:
    """``(..., observation size) -> (..., 6 + A * 6)``: each seat's points if the round ended now, then, for each action
    (legal or not), how every seat's points would change if the observer played it and the round ended.

    Seats are the observation's (0 = the observer, then clockwise; padding seats read 0). An action that
    captures nothing changes nobody's points. ``deck``: a deck name or a ``cards.Deck`` (``cards.as_deck``).
    """

    name = "majority_preview"

    def __init__(self, deck: Deck | str) -> None:
        deck = as_deck(deck)
        layout = observation_layout(deck)
        kinds, piles = zip(*(deck.action_kind_and_pile(action) for action in range(deck.num_actions)), strict=True)
        self.deck = deck
        self.observation_size = layout.size
        self.slices = layout.slices
        self.size = MAX_SEATS + deck.num_actions * MAX_SEATS
        self.scale = np.full(self.size, POINTS_SCALE, dtype=np.float32)
        self.action_pile = np.array(piles)
        self.action_value = np.array([deck.kind_values[kind] for kind in kinds], dtype=np.float32)
        self.kind_types = np.eye(NUM_TYPES, dtype=np.float32)[list(deck.kind_types)]  # (K, 4) one-hot

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        vectors = np.asarray(observations, dtype=np.float32)
        if vectors.shape[-1] != self.observation_size:
            raise ValueError(
                f"{self.name} reads {self.deck.name!r}-deck observations of {self.observation_size} entries, "
                f"got shape {vectors.shape}"
            )
        flat = vectors.reshape(-1, self.observation_size)
        rows = flat.shape[0]
        # Rows last throughout: every reduction over seats or types then runs over whole rows of games.
        stacks = np.ascontiguousarray(flat[:, self.slices["captured"]].T).reshape(MAX_SEATS, NUM_TYPES, rows)
        pile_cards = flat[:, self.slices["pile_cards"]].reshape(rows, NUM_PILES, -1)
        by_type = np.ascontiguousarray((pile_cards @ self.kind_types).transpose(1, 2, 0))  # (3, 4, rows) per pile
        totals = np.ascontiguousarray(flat[:, self.slices["pile_totals"]].T)  # (3, rows)
        captures = totals[self.action_pile] + self.action_value[:, None] > CAPTURE_LIMIT  # (A, rows)
        taken = by_type[self.action_pile] * captures[:, None, :]  # (A, 4, rows): the cards each action takes
        now = stacked_round_points(stacks)  # (6, rows)
        # Only the observer's stacks grow, so per omen type only the others' most (and its sole holder) matters:
        # the observer discards a type once it holds more than every other seat, and the others' sole holder
        # keeps its discard while it still holds more than the observer.
        others = stacks[1:, :NUM_PILES]  # (5, 3, rows)
        most = others.max(axis=0)  # (3, rows)
        at_most = others == most
        holder = at_most & (at_most.sum(axis=0) == 1)  # (5, 3, rows): the others' sole holder of each type
        mine = stacks[0, :NUM_PILES]
        grown = mine + taken[:, :NUM_PILES]  # (A, 3, rows)
        kept = np.where(grown > most, 0.0, grown).sum(axis=1) * OMEN_POINTS
        change = np.empty((self.deck.num_actions, MAX_SEATS, rows), dtype=np.float32)
        change[:, 0] = kept + (stacks[0, FRIDAY_TYPE] + taken[:, FRIDAY_TYPE]) * FRIDAY_POINTS - now[0]
        lost_discard = np.where((most > mine) & (most <= grown), most * OMEN_POINTS, 0.0)  # (A, 3, rows)
        change[:, 1:] = 0.0
        for omen_type in range(NUM_PILES):  # a holder's discarded cards count again
            change[:, 1:] += lost_discard[:, omen_type, None] * holder[:, omen_type]
        out = np.concatenate([now.T, change.transpose(2, 0, 1).reshape(rows, -1)], axis=1)
        return out.reshape(*vectors.shape[:-1], self.size)


@deck_cache
def majority_preview(deck: Deck) -> MajorityPreview:
    """The ``MajorityPreview`` of ``deck`` (a deck name or a ``cards.Deck``), built once per deck: its tables are
    shared by every policy that reads it."""
    return MajorityPreview(deck)


INPUT_FEATURES = (RAW_INPUT, MajorityPreview.name)
"""Allowed ``input_features`` of a Friday the 13th policy."""


def input_features(name: str, deck: Deck | str) -> MajorityPreview | None:
    """The derived inputs named ``name`` for ``deck`` (a deck name or a ``cards.Deck``; None for the observation
    alone), or a ``ValueError`` naming what is wrong: the deck is checked first, even for the observation alone."""
    deck = as_deck(deck)
    if name == RAW_INPUT:
        return None
    if name == MajorityPreview.name:
        return majority_preview(deck)
    raise ValueError(f"unknown input features {shown(name)}; allowed: {list(INPUT_FEATURES)}")


def features_of(metadata: PolicyMetadata) -> MajorityPreview | None:
    """The derived inputs a Friday the 13th checkpoint declares (``read_policy``'s ``features_of``)."""
    return input_features(metadata.input_features, get_deck(metadata.deck))
