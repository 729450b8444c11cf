"""What a player sees at the table, decoded once per move from its observation into plain ints.

The heuristic and search agents reason about the same few facts: their hand, the piles, who
captured how many cards of each type, the unseen cards and the hand sizes. ``Table.read`` turns the
observation vector into those facts (through ``encoding.observation_layout``, never by offsets), and
``Table.moves`` lists every legal action with what it would do to its pile, so that the agents only
contain their *decisions*.

Seats are relative as in the observation: seat 0 is the observer, then the others clockwise.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from friday13_env.friday13.agents.base import checked
from friday13_env.friday13.cards import CAPTURE_LIMIT, NUM_PILES, Deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.engine import MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS


@dataclass(frozen=True)
class Move:
    """One legal action and its immediate effect."""

    action: int
    kind: int
    pile: int
    value: int
    captures: bool
    """True when the pile's total would exceed 13: the player takes every card now in the pile."""
    total_after: int
    """The pile's total after the play (the played card alone when it captures)."""
    omens_taken: int
    """Omen cards taken by a capture (all of the pile's own type); 0 when it does not capture."""
    fridays_taken: int
    """Friday the 13th cards taken by a capture; 0 when it does not capture."""


@dataclass(frozen=True)
class Table:
    """The decoded observation of the player to move (relative seats, observer = 0)."""

    deck: Deck
    num_players: int
    hand: list[int]
    """Count of each card kind in the observer's hand."""
    pile_totals: list[int]
    pile_counts: list[list[int]]
    """Count of each card kind in each pile (row = pile)."""
    captured: list[list[int]]
    """Cards captured this round per seat and type (cat, mirror, ladder, Friday 13th)."""
    unseen: list[int]
    """Count of each kind in the other hands and the dummy hand."""
    hand_sizes: list[int]
    round_index: int
    rounds_left: int
    """Rounds left including this one (1 in the last round)."""
    scores: list[int]
    has_dummy: bool
    legal: list[int]

    @classmethod
    def read(cls, observation: Mapping[str, np.ndarray], agent: str = "agent") -> Table:
        """Decode the observation dict of the player to move.

        An observation no table could produce (wrong length or mask, NaN, negative counts, no legal
        action, a seat count outside 3-6, a hand that disagrees with its size) is a ``ValueError``
        naming ``agent`` and the problem, before any decision is made on it.
        """
        return cls.decode(*checked(observation, agent), agent)

    @classmethod
    def decode(cls, deck: Deck, vector: np.ndarray, legal: np.ndarray, agent: str = "agent") -> Table:
        """``read`` for an observation already checked by :func:`friday13_env.friday13.agents.base.checked` (its
        deck, vector and legal actions), so a caller that checked it once does not check it again; the
        table-level checks (seat count, hand size) are made here."""
        # Rounded once for the whole vector: a search decodes one observation per move.
        views = observation_layout(deck).views(np.rint(vector).astype(np.int64))

        def ints(block: str) -> list:
            return views[block].tolist()

        n = sum(ints("seat_present"))
        if not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise ValueError(
                f"{agent}: the observation's seat_present block marks {n} seats; a table has "
                f"{MIN_PLAYERS} to {MAX_PLAYERS}"
            )
        if sum(ints("hand")) != ints("hand_sizes")[0]:
            raise ValueError(
                f"{agent}: the observation's hand holds {sum(ints('hand'))} cards but its hand_sizes block "
                f"says {ints('hand_sizes')[0]}"
            )

        table = cls(
            deck=deck,
            num_players=n,
            hand=ints("hand"),
            pile_totals=ints("pile_totals"),
            pile_counts=ints("pile_cards"),
            captured=ints("captured")[:n],
            unseen=ints("unseen"),
            hand_sizes=ints("hand_sizes")[:n],
            round_index=ints("round")[0],
            rounds_left=ints("round")[1],
            scores=ints("scores")[:n],
            has_dummy=bool(ints("dummy")[0]),
            legal=legal.tolist(),
        )
        problem = table._impossibility()
        if problem is not None:
            raise ValueError(f"{agent}: no table shows this observation: {problem}")
        return table

    def _impossibility(self) -> str | None:
        """What in this decoded observation no game of the rules can show (None for a possible one): more cards of a
        kind than the deck has in the hand, the unseen cards and the piles; a pile whose total is not its cards' or
        exceeds the capture limit; fewer unseen cards than the other hands hold; rounds outside the game's; a legal
        action that plays a card not in hand. A search plays such a position out with the rules and would fail deep in
        its rollout, naming its internals; a heuristic would decide on it without a word. A position that only leaves
        cards out (``scenario.from_hands``'s partial positions) passes."""
        deck = self.deck
        # Plain ints, not numpy: a table has a few dozen of them, and this runs at every decision of every agent.
        piled = [sum(column) for column in zip(*self.pile_counts, strict=True)]
        seen = [sum(cards) for cards in zip(self.hand, self.unseen, piled, strict=True)]
        for kind, (cards, count) in enumerate(zip(seen, deck.kind_counts, strict=True)):
            if cards > count:
                return (
                    f"{cards} cards of {deck.kind_name(kind)} in the hand, the unseen cards and the piles; the "
                    f"{deck.name} deck has {count}"
                )
        for pile, (total, cards) in enumerate(zip(self.pile_totals, self.pile_counts, strict=True)):
            value = sum(map(operator.mul, cards, deck.kind_values))
            if total != value or total > CAPTURE_LIMIT:
                return f"pile {pile} totals {total}, its cards {value} (a pile holds at most {CAPTURE_LIMIT})"
        unseen, others = sum(self.unseen), sum(self.hand_sizes[1:])
        if unseen < others:
            return f"{unseen} unseen cards, fewer than the other hands hold ({others})"
        if not 1 <= self.rounds_left <= MAX_ROUNDS - self.round_index:
            return f"round {self.round_index} with {self.rounds_left} rounds left; a game has 1 to {MAX_ROUNDS} rounds"
        unheld = [
            deck.action_name(action) for action in self.legal if not self.hand[deck.action_kind_and_pile(action)[0]]
        ]
        if unheld:
            return f"the legal actions {unheld} play cards the hand does not hold"
        return None

    @property
    def cards_in_play_per_type(self) -> int:
        """Omen cards of one type in the whole deck (every type has the same number)."""
        return sum(self.deck.omen_copies)

    def moves(self) -> list[Move]:
        """Every legal action with its effect, in action order."""
        deck = self.deck
        moves = []
        for action in self.legal:
            kind, pile = deck.action_kind_and_pile(action)
            value = deck.kind_values[kind]
            total = self.pile_totals[pile] + value
            captures = total > CAPTURE_LIMIT
            counts = self.pile_counts[pile]
            fridays = counts[deck.friday_kind] if captures else 0
            omens = sum(counts) - counts[deck.friday_kind] if captures else 0
            moves.append(Move(action, kind, pile, value, captures, value if captures else total, omens, fridays))
        return moves

    def outstanding(self, omen_type: int) -> int:
        """Cards of an omen type that can still be captured this round: in the hands or on the piles.

        The dummy hand (3 players) is out of play; its share of the unseen cards is estimated.
        """
        captured = sum(seat[omen_type] for seat in self.captured)
        return self.cards_in_play_per_type - captured - self._dummy_share(omen_type)

    def _dummy_share(self, omen_type: int) -> int:
        """Expected cards of the type lying in the dummy hand (out of play), rounded down."""
        if not self.has_dummy:
            return 0
        dummy_size = sum(self.unseen) - sum(self.hand_sizes[1:])
        unseen_total = sum(self.unseen)
        if unseen_total == 0:
            return 0
        values = self.deck.num_values
        unseen_of_type = sum(self.unseen[omen_type * values : (omen_type + 1) * values])
        return unseen_of_type * dummy_size // unseen_total


def hand_by_type(hand: list[int], deck: Deck) -> list[int]:
    """Cards of each omen type in a hand (Friday cards left out)."""
    values = deck.num_values
    return [sum(hand[t * values : (t + 1) * values]) for t in range(NUM_PILES)]
