"""Observation and global-state tensors with named views (in the spirit of OpenSpiel's observers).

An observation is one flat ``float32`` vector, laid out as consecutive named blocks; a
``Layout`` knows every block's slice and shape, so ``layout.views(vector)`` hands back readable,
zero-copy views (``views["hand"]``, ``views["captured"][seat]``, ...) instead of a spreadsheet of
offsets. The blocks are documented in docs/friday13.md and in ``observation_layout``.

Observations are *player-relative*: seat 0 of every per-seat block is the observer, then the other
players clockwise. Per-seat blocks are padded to ``MAX_SEATS`` with a ``seat_present`` flag, so the
vector has the same size at every table size and one policy can play them all.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from friday13_env.core.layout import Block, Layout
from friday13_env.friday13.cards import (
    CAPTURE_LIMIT,
    FRIDAY_POINTS,
    NUM_PILES,
    NUM_TYPES,
    OMEN_POINTS,
    Deck,
    deck_cache,
)
from friday13_env.friday13.engine import MAX_PLAYERS, GameState, Rules, action_mask, deal_sizes

MAX_SEATS = MAX_PLAYERS


_PUBLIC_BLOCKS_DOC = {
    "pile_totals": "total value of each pile (cat, mirror, ladder); 0 when empty",
    "pile_cards": "count of each card kind lying in each pile (row = pile, column = kind)",
    "captured": "cards captured this round by each seat, by type (cat, mirror, ladder, Friday 13th)",
    "hand_sizes": "cards left in each seat's hand",
    "round": "[rounds already played, rounds left including this one]",
    "scores": "bad-luck points of each seat in the rounds already scored",
    "seat_present": "1 for a seat occupied by a player, 0 for padding",
    "dummy": "1 when a face-down dummy hand is out of play (3 players)",
}


def _public_blocks(num_kinds: int) -> list[Block]:
    return [
        Block("pile_totals", (NUM_PILES,), _PUBLIC_BLOCKS_DOC["pile_totals"]),
        Block("pile_cards", (NUM_PILES, num_kinds), _PUBLIC_BLOCKS_DOC["pile_cards"]),
        Block("captured", (MAX_SEATS, NUM_TYPES), _PUBLIC_BLOCKS_DOC["captured"]),
        Block("hand_sizes", (MAX_SEATS,), _PUBLIC_BLOCKS_DOC["hand_sizes"]),
        Block("round", (2,), _PUBLIC_BLOCKS_DOC["round"]),
        Block("scores", (MAX_SEATS,), _PUBLIC_BLOCKS_DOC["scores"]),
        Block("seat_present", (MAX_SEATS,), _PUBLIC_BLOCKS_DOC["seat_present"]),
        Block("dummy", (1,), _PUBLIC_BLOCKS_DOC["dummy"]),
    ]


@deck_cache
def observation_layout(deck: Deck) -> Layout:
    """The observation vector: the observer's hand first (a public contract), then public blocks.

    ``hand`` is deliberately first so that ``obs[:3*V+1]`` is always the raw hand, whatever later
    blocks are added in future versions. ``deck``: a deck name or a ``cards.Deck`` (``cards.deck_cache``).
    """
    kinds = deck.num_kinds
    return Layout(
        [
            Block("hand", (kinds,), "the observer's hand: count of each card kind (kind order)"),
            *_public_blocks(kinds)[:3],
            Block("unseen", (kinds,), "cards of each kind the observer has not seen this round (other hands + dummy)"),
            *_public_blocks(kinds)[3:],
            Block(
                "capture_preview",
                (deck.num_actions,),
                "for each action, the cards that playing it now would capture (0 = safe), legal or not",
            ),
        ]
    )


@dataclass(frozen=True)
class OmenTypeGroups:
    """Where each omen type's entries lie in the observation, and which actions are its own.

    The three omen types (cat, mirror, ladder) are interchangeable in the rules: relabelling them in a
    position relabels the observation's entries and the actions, and changes nothing else. A network can
    use this by reading every type with the same weights. ``own[t, j]`` is the index of type ``t``'s
    ``j``-th entry, with the same meaning for every ``t`` (its hand and unseen counts, its pile, every
    seat's captured cards of it, the capture previews of its actions); ``shared`` holds the entries of no
    omen type (Friday cards, hand sizes, rounds, scores, seats); ``unused`` the entries that are always 0
    (a pile's count of another type's omen cards). ``actions[t, j]`` is type ``t``'s ``j``-th action: its
    omen cards in value order, then a Friday the 13th card on its pile.
    """

    own: np.ndarray
    shared: np.ndarray
    unused: np.ndarray
    actions: np.ndarray


@deck_cache
def omen_type_groups(deck: Deck) -> OmenTypeGroups:
    """The omen types' entries and actions of ``observation_layout(deck)``; every index is in one group. ``deck``: a
    deck name or a ``cards.Deck`` (``cards.deck_cache``)."""
    layout = observation_layout(deck)
    start = {name: layout.slices[name].start for name in layout.slices}
    values, kinds, friday = deck.num_values, deck.num_kinds, deck.friday_kind
    own, unused = [], []
    for t in range(NUM_PILES):
        type_kinds = list(range(t * values, (t + 1) * values))
        pile_row = start["pile_cards"] + t * kinds
        own.append(
            [start["hand"] + k for k in type_kinds]
            + [start["pile_totals"] + t]
            + [pile_row + k for k in [*type_kinds, friday]]
            + [start["captured"] + seat * NUM_TYPES + t for seat in range(MAX_SEATS)]
            + [start["unseen"] + k for k in type_kinds]
            + [start["capture_preview"] + k for k in type_kinds]
            + [start["capture_preview"] + friday + t]
        )
        unused += [pile_row + k for k in range(friday) if k // values != t]
    shared = [
        start["hand"] + friday,
        *(start["captured"] + seat * NUM_TYPES + NUM_PILES for seat in range(MAX_SEATS)),
        start["unseen"] + friday,
        *range(layout.slices["hand_sizes"].start, layout.slices["dummy"].stop),
    ]
    actions = [[*range(t * values, (t + 1) * values), friday + t] for t in range(NUM_PILES)]
    return OmenTypeGroups(
        own=np.array(own, dtype=np.int64),
        shared=np.array(shared, dtype=np.int64),
        unused=np.array(sorted(unused), dtype=np.int64),
        actions=np.array(actions, dtype=np.int64),
    )


@deck_cache
def state_layout(deck: Deck) -> Layout:
    """The global state for centralised critics: every hand (absolute seats), then public blocks. ``deck``: a deck
    name or a ``cards.Deck`` (``cards.deck_cache``)."""
    kinds = deck.num_kinds
    return Layout(
        [
            Block("hands", (MAX_SEATS, kinds), "every seat's hand (absolute seat order), padded"),
            Block("dummy_hand", (kinds,), "the dummy hand (3 players), else zeros"),
            Block("to_move", (MAX_SEATS,), "one-hot seat of the player to move (all zero once the game is over)"),
            *_public_blocks(kinds),
        ]
    )


def observation_bounds(rules: Rules) -> np.ndarray:
    """Elementwise upper bounds of ``encode_observation`` (for the Box space)."""
    return _bounds(rules, observation_layout(rules.deck))


def state_bounds(rules: Rules) -> np.ndarray:
    """Elementwise upper bounds of ``encode_state``."""
    return _bounds(rules, state_layout(rules.deck))


def _bounds(rules: Rules, layout: Layout) -> np.ndarray:
    deck = rules.deck
    kind_counts = np.array(deck.kind_counts, dtype=np.float32)
    omen_per_type = sum(deck.omen_copies)
    worst_round = omen_per_type * NUM_PILES * OMEN_POINTS + deck.friday_count * FRIDAY_POINTS
    high = {
        "hand": kind_counts,
        "hands": np.tile(kind_counts, (MAX_SEATS, 1)),
        "dummy_hand": kind_counts,
        "unseen": kind_counts,
        "to_move": np.ones(MAX_SEATS),
        "pile_totals": np.full(NUM_PILES, CAPTURE_LIMIT),
        "pile_cards": np.tile(kind_counts, (NUM_PILES, 1)),
        "captured": np.tile([*[omen_per_type] * NUM_PILES, deck.friday_count], (MAX_SEATS, 1)),
        "hand_sizes": np.full(MAX_SEATS, max(deal_sizes(rules))),
        "round": np.full(2, rules.num_rounds),
        "scores": np.full(MAX_SEATS, worst_round * rules.num_rounds),
        "seat_present": np.ones(MAX_SEATS),
        "dummy": np.ones(1),
        "capture_preview": np.full(deck.num_actions, sum(deck.omen_copies) + deck.friday_count),
    }
    return np.concatenate([np.asarray(high[b.name], dtype=np.float32).reshape(-1) for b in layout.blocks])


def _public_parts(state: GameState, first_seat: int) -> tuple[list[int], list[int]]:
    """(pile/captured part, seat/round part) of the public blocks, seats starting at ``first_seat``.

    Split in two because the observation puts ``unseen`` between them.
    """
    rules = state.rules
    n = rules.num_players
    kinds = rules.deck.num_kinds
    piles_part: list[int] = list(state.pile_totals)
    for pile in state.piles:
        counts = [0] * kinds
        for kind in pile:
            counts[kind] += 1
        piles_part += counts
    seats = [(first_seat + offset) % n for offset in range(n)]
    padding = [0] * (MAX_SEATS - n)
    for seat in seats:
        piles_part += state.captured[seat]
    piles_part += padding * NUM_TYPES
    seats_part = [sum(state.hands[seat]) for seat in seats] + padding
    seats_part += (state.round, rules.num_rounds - state.round)
    seats_part += [state.scores[seat] for seat in seats] + padding
    seats_part += [1] * n + padding
    seats_part.append(1 if rules.has_dummy else 0)
    return piles_part, seats_part


def encode_observation(state: GameState, observer: int) -> np.ndarray:
    """The observation of seat ``observer`` (absolute), as laid out by ``observation_layout``. An observer that is not
    a seat of the game (``-1`` would be the last one by Python's indexing, ``True`` seat 1) is a ``ValueError``."""
    seats = state.rules.num_players
    if isinstance(observer, bool) or not isinstance(observer, int | np.integer) or not 0 <= observer < seats:
        raise ValueError(f"observer must be a seat of the game, an int in 0..{seats - 1}, got {observer!r}")
    deck = state.rules.deck
    hand = state.hands[observer]
    piles_part, seats_part = _public_parts(state, observer)
    unseen = [total - held - seen for total, held, seen in zip(deck.kind_counts, hand, state.played, strict=True)]
    return np.array(hand + piles_part + unseen + seats_part + capture_preview(state), dtype=np.float32)


def mover_observation(state: GameState) -> dict[str, np.ndarray]:
    """What the player to move sees, as an agent takes it: the dict ``raw_env.observe`` gives for that seat."""
    return {
        "observation": encode_observation(state, state.current),
        "action_mask": np.array(action_mask(state), dtype=np.int8),
    }


def capture_preview(state: GameState) -> list[int]:
    """Per action, how many cards it would capture right now (0 when the pile stays at 13 or below).

    Derivable from ``pile_totals`` and ``pile_cards``, but the comparison of every card value with
    every pile's room is exactly what a small network learns slowly, so the observation spells it out.
    """
    deck = state.rules.deck
    values = deck.kind_values
    num_values = deck.num_values
    preview: list[int] = []
    rooms = [CAPTURE_LIMIT - total for total in state.pile_totals]
    sizes = [len(pile) for pile in state.piles]
    for pile in range(NUM_PILES):
        room, size = rooms[pile], sizes[pile]
        preview += [size if values[kind] > room else 0 for kind in range(pile * num_values, (pile + 1) * num_values)]
    friday_value = deck.friday_value
    preview += [sizes[pile] if friday_value > rooms[pile] else 0 for pile in range(NUM_PILES)]
    return preview


def encode_state(state: GameState) -> np.ndarray:
    """The full state (all hands, absolute seats), as laid out by ``state_layout``."""
    rules = state.rules
    kinds = rules.deck.num_kinds
    n = rules.num_players
    hands: list[int] = []
    for hand in state.hands:
        hands += hand
    hands += [0] * (kinds * (MAX_SEATS - n))
    hands += state.dummy if state.dummy is not None else [0] * kinds
    to_move = [0] * MAX_SEATS
    if not state.game_over:
        to_move[state.current] = 1
    piles_part, seats_part = _public_parts(state, 0)
    return np.array(hands + to_move + piles_part + seats_part, dtype=np.float32)


def decode_observation(observation: np.ndarray, deck: Deck | str) -> dict[str, np.ndarray]:
    """Named views of an observation vector, e.g. ``decode_observation(obs, "standard")["captured"]``; the deck by
    name (as the environments take it) or as a ``Deck`` (anything else is a ``ValueError`` listing the names)."""
    return observation_layout(deck).views(observation)
