"""Batched rollouts: many sampled worlds played to the end of the round at once, in numpy.

The search agent spends nearly all of its time finishing rounds with a cheap policy. Played one
world at a time in Python that costs a few microseconds per card; here every world of a decision
advances by one card per numpy step. All worlds of a decision start from the same public position
with the same player to move, and every play moves the turn one seat on, so they stay in lockstep:
the player to move is one number for the whole batch, and only the hands (and so the choices)
differ between rows.

A pile is kept as what the rules and the rollout policy need of it: its total, its omen cards
(all of the pile's own type) and its Friday the 13th cards. The rollout policy is ``majority``'s
rules working on these arrays; ``tests/friday13/reference_rollout.py`` plays the same policy card by card
on the engine, and the tests check that both finish every world with the same captures.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from friday13_env.friday13.agents.heuristics import CLEAN_KEEP_MIN, CLEAN_OPEN_MIN
from friday13_env.friday13.cards import CAPTURE_LIMIT, FRIDAY_POINTS, FRIDAY_TYPE, NUM_PILES, OMEN_POINTS, Deck

DTYPE = np.int16
"""Every count and total fits; small integers keep the batch's memory traffic low."""

_NO_CAPTURE = 30_000
"""Sort key of a pile the player cannot play on (larger than any real capture's key, within int16)."""


@dataclass(frozen=True)
class DeckArrays:
    """The deck's per-kind facts as arrays, built once per deck."""

    values: np.ndarray
    """Value of every card kind (the Friday the 13th kind last)."""
    omen_values_by_rank: np.ndarray
    """Value of an omen type's card by rank (value index + 1); rank 0 (no card) reads as -1."""
    value_bits: np.ndarray
    """``2 ** value index``: a type's held values as one bit pattern (a matrix product with the held flags)."""
    rank_of_held: np.ndarray
    """Rank of the highest held value (value index + 1, 0 for none) of each bit pattern: one lookup."""
    omen_piles: np.ndarray
    """The pile (= omen type) of every omen kind."""
    omen_kind_values: np.ndarray
    """Value of every omen kind."""
    kind_piles: np.ndarray
    """The pile of every kind (the Friday the 13th kind: 0, never used, it chooses its pile)."""
    pile_first_kind: np.ndarray
    """The first (lowest) omen kind of each pile's type."""
    dump_order: np.ndarray
    """Kinds in the order the policy dumps safe cards: highest value first, omen before Friday."""

    @staticmethod
    @cache
    def of(deck: Deck) -> DeckArrays:
        friday = deck.friday_kind
        order = sorted(range(deck.num_kinds), key=lambda k: (-deck.kind_values[k], k == friday, k))
        if list(deck.omen_values) != sorted(deck.omen_values):
            raise ValueError(f"the rollouts need ascending omen values, deck {deck.name!r} has {deck.omen_values}")
        return DeckArrays(
            values=np.array(deck.kind_values, dtype=DTYPE),
            omen_values_by_rank=np.array((-1, *deck.omen_values), dtype=DTYPE),
            value_bits=(1 << np.arange(deck.num_values)).astype(DTYPE),
            rank_of_held=np.array([pattern.bit_length() for pattern in range(1 << deck.num_values)], dtype=DTYPE),
            omen_piles=np.array(deck.kind_types[:friday]),
            omen_kind_values=np.array(deck.kind_values[:friday], dtype=DTYPE),
            kind_piles=np.array((*deck.kind_types[:friday], 0)),
            pile_first_kind=np.arange(NUM_PILES) * deck.num_values,
            dump_order=np.array(order),
        )


@cache
def _other_seats(num_players: int, me: int) -> np.ndarray:
    """Every seat but ``me``, to index the others' captured cards."""
    return np.array([seat for seat in range(num_players) if seat != me])


class Rollouts:
    """A batch of positions of one round, all with the same player to move.

    Given seat-major (``P`` players, ``R`` rows = positions, ``K`` card kinds): ``hands`` (P, R, K)
    card counts, ``captured`` (P, R, 4) cards taken this round by type, and ``totals`` / ``omens`` /
    ``fridays`` (R, 3) per pile. Every row must hold the same number of cards per seat. Seat-major,
    so that the player to move's hands are one contiguous block, and in small integers.
    """

    def __init__(
        self,
        deck: Deck,
        hands: np.ndarray,
        totals: np.ndarray,
        omens: np.ndarray,
        fridays: np.ndarray,
        captured: np.ndarray,
        current: int,
    ) -> None:
        self.deck = deck
        self.arrays = DeckArrays.of(deck)
        self.hands = np.ascontiguousarray(hands, dtype=DTYPE)
        self.captured = np.ascontiguousarray(captured, dtype=DTYPE)
        self.totals = np.array(totals, dtype=DTYPE)
        self.omens = np.array(omens, dtype=DTYPE)
        self.fridays = np.array(fridays, dtype=DTYPE)
        self.current = current
        self.num_players = self.hands.shape[0]
        rows = np.arange(self.hands.shape[1])
        self.kind_offsets = rows * self.hands.shape[2]
        self.pile_offsets = rows * NUM_PILES
        self.type_offsets = rows * self.captured.shape[2]
        self.plays_left = int(self.hands[:, 0].sum())

    def play(self, kinds: np.ndarray, piles: np.ndarray) -> None:
        """The player to move plays ``kinds[r]`` on ``piles[r]`` in every row (legality is the caller's).

        Indexes the flattened arrays with one integer array each: in a small batch (a late-round
        search) the cost is numpy's per-call overhead, and a flat index costs less than a 2-D one.
        """
        me = self.current
        self.hands[me].reshape(-1)[self.kind_offsets + kinds] -= 1
        is_friday = kinds == self.deck.friday_kind
        value = self.arrays.values[kinds]
        at = self.pile_offsets + piles
        totals, omens_flat, fridays_flat = self.totals.reshape(-1), self.omens.reshape(-1), self.fridays.reshape(-1)
        total = totals[at] + value
        captures = total > CAPTURE_LIMIT
        omens = omens_flat[at]
        fridays = fridays_flat[at]
        self.captured[me].reshape(-1)[self.type_offsets + piles] += np.where(captures, omens, 0)
        self.captured[me, :, FRIDAY_TYPE] += np.where(captures, fridays, 0)
        omens_flat[at] = np.where(captures, 0, omens) + ~is_friday
        fridays_flat[at] = np.where(captures, 0, fridays) + is_friday
        totals[at] = np.where(captures, value, total)
        self.plays_left -= 1
        self.current = (me + 1) % self.num_players

    def finish(self) -> np.ndarray:
        """Play the rest of the round with the rollout policy; returns every row's round points (P, R)."""
        friday = self.deck.friday_kind
        while self.plays_left > self.num_players or (self.plays_left and self.hands[..., friday].any()):
            self.play(*self.policy())
        self._play_last_omen_cards()
        return round_points(self.captured)

    def _play_last_omen_cards(self) -> None:
        """Every hand holds at most its last card, none a Friday card: play them out, each on its own pile.

        Why a path of its own: these plays are forced, and late in a round (an ``endgame`` search) they
        are a large share of all plays, so every last card is read in one step and the rules are skipped.
        """
        kinds = self.hands.argmax(axis=2)
        piles = self.arrays.kind_piles[kinds]
        while self.plays_left:
            self.play(kinds[self.current], piles[self.current])

    def policy(self) -> tuple[np.ndarray, np.ndarray]:
        """``majority``'s rules for the player to move, row by row: (card kinds, piles).

        1. Take a clean pile (no Friday card, at least 2 cards) on purpose when that gives the
           player the lead in the type with at least 3 cards, or keeps its lead with at least 2:
           with its highest card that goes there, if that card captures.
        2. Otherwise dump the highest card that captures nothing (a Friday card on the highest pile
           it fits).
        3. Otherwise take the pile with the fewest bad-luck points, counting the omen cards as free
           when taking them gives the sole majority of that type right now (ties: the highest card,
           then the first pile).
        """
        deck, arrays, me = self.deck, self.arrays, self.current
        friday = deck.friday_kind
        friday_value = deck.friday_value
        hand = self.hands[me]
        totals, omens, fridays = self.totals, self.omens, self.fridays

        # The highest card each pile can take: its type's highest omen, or a Friday card when that is
        # at least as high (or the only one). ``rank`` is the highest held value index + 1, 0 for none.
        held = hand[:, :friday] > 0
        rank = arrays.rank_of_held[held.reshape(-1, deck.num_values) @ arrays.value_bits].reshape(-1, NUM_PILES)
        has_omen = rank > 0
        omen_value = arrays.omen_values_by_rank[rank]
        has_friday = hand[:, friday] > 0
        use_friday = has_friday[:, None] & (omen_value <= friday_value)
        top_kind = np.where(use_friday, friday, arrays.pile_first_kind + rank - 1)
        top_value = np.where(use_friday, friday_value, omen_value)
        can_play = has_omen | has_friday[:, None]

        mine = self.captured[me, :, :NUM_PILES]
        others = self.captured[_other_seats(self.num_players, me), :, :NUM_PILES].max(axis=0)
        lead = mine - others

        # 1. Clean piles taken on purpose.
        needed = np.where(lead > 0, CLEAN_KEEP_MIN, CLEAN_OPEN_MIN)
        take = can_play & (fridays == 0) & (omens >= needed) & (lead + omens > 0) & (totals + top_value > CAPTURE_LIMIT)
        takes = take.any(axis=1)
        take_pile = np.argmax(take, axis=1)

        # 2. The highest safe card.
        omen_safe = held & (totals[:, arrays.omen_piles] + arrays.omen_kind_values <= CAPTURE_LIMIT)
        friday_fits = totals + friday_value <= CAPTURE_LIMIT
        safe = np.concatenate([omen_safe, (has_friday & friday_fits.any(axis=1))[:, None]], axis=1)
        safe = safe[:, arrays.dump_order]
        has_safe = safe.any(axis=1)
        safe_kind = arrays.dump_order[np.argmax(safe, axis=1)]
        friday_pile = np.argmax(np.where(friday_fits, totals, -1), axis=1)
        safe_pile = np.where(safe_kind == friday, friday_pile, arrays.kind_piles[safe_kind])

        chosen_pile = np.where(takes, take_pile, safe_pile)
        forced = ~(takes | has_safe)
        if forced.any():  # skipped when no row needs it: late in a round most plays are safe or on purpose
            # 3. The cheapest forced capture.
            omen_cost = np.where((omens > 0) & (mine + omens <= others), omens * OMEN_POINTS, 0)
            cost = FRIDAY_POINTS * fridays + omen_cost
            capture_pile = np.argmin(np.where(can_play, cost * 100 - top_value, _NO_CAPTURE), axis=1)
            chosen_pile = np.where(forced, capture_pile, chosen_pile)
        chosen_kind = np.where(has_safe & ~takes, safe_kind, top_kind.reshape(-1)[self.pile_offsets + chosen_pile])
        return chosen_kind, chosen_pile


def round_points(captured: np.ndarray) -> np.ndarray:
    """``engine.round_points`` for a batch, seat-major: captured (P, R, 4) by type -> points (P, R)."""
    omen_counts = captured[:, :, :NUM_PILES]
    at_most = omen_counts == omen_counts.max(axis=0)
    kept = np.where(at_most & (at_most.sum(axis=0) == 1), 0, omen_counts)
    # Summed type by type: numpy's reduction over a short inner axis costs more than these adds.
    kept_total = sum(kept[:, :, omen_type] for omen_type in range(1, NUM_PILES)) + kept[:, :, 0]
    return FRIDAY_POINTS * captured[:, :, FRIDAY_TYPE] + OMEN_POINTS * kept_total
