"""Two rule-based baselines: ``cautious`` (never capture if avoidable) and ``majority`` (the rulebook tip).

Both price a capture by what it is expected to cost at the round's end, not by how many cards it
holds: omen cards of a type whose sole majority the taker holds are discarded and cost nothing,
Friday the 13th cards always cost 2. ``capture_cost`` is that price. ``majority`` plays exactly
like ``cautious`` except that it also takes clean piles of its target type on purpose.

Both are deterministic functions of the observation (the seed is accepted for the common agent
signature and unused), so a fresh agent handed any mid-round observation acts exactly like one
that played the whole round.
"""

from __future__ import annotations

import math

from friday13_env.core.options import count_option
from friday13_env.core.registry import check_seed
from friday13_env.friday13.agents.base import Observation
from friday13_env.friday13.agents.table import Move, Table, hand_by_type
from friday13_env.friday13.cards import FRIDAY_POINTS, NUM_PILES, OMEN_POINTS

HIGH_VALUE = 5
"""Omen cards of at least this value count as 'high': they capture a pile easily when played on it."""

CLEAN_OPEN_MIN = 3
"""``majority`` takes a clean pile of its target type on purpose if it holds this many cards..."""
CLEAN_KEEP_MIN = 2
"""...or this many once it leads the type (the search's rollouts use the same rule)."""


def majority_odds(lead: int, outstanding: int) -> float:
    """Chance that a player ahead by ``lead`` captured cards of a type ends the round with its sole
    majority, while ``outstanding`` cards of the type are still uncaptured.

    A logistic fit (``sigmoid(1.7 * lead / sqrt(1 + outstanding) - 0.8)``) to about 8,000
    (position, type) pairs of ``cautious`` self-play at 3-6 players: a lead matters
    less the more cards can still move, and even a player a card behind wins the type now and
    then. No outstanding cards: it is settled.
    """
    if outstanding <= 0:
        return 1.0 if lead > 0 else 0.0
    return 1.0 / (1.0 + math.exp(0.8 - 1.7 * lead / math.sqrt(1 + outstanding)))


def expected_type_points(table: Table, omen_type: int, extra: int = 0) -> float:
    """The observer's expected points from one omen type if it captured ``extra`` more cards of it."""
    mine = table.captured[0][omen_type] + extra
    rivals = max(seat[omen_type] for seat in table.captured[1:])
    outstanding = max(table.outstanding(omen_type) - extra, 0)
    return mine * OMEN_POINTS * (1.0 - majority_odds(mine - rivals, outstanding))


def capture_cost(table: Table, move: Move) -> float:
    """Expected bad-luck points a move adds to the observer: 0 for a safe play.

    A pile only ever holds omen cards of its own type, plus Friday the 13th cards.
    """
    if not move.captures:
        return 0.0
    omen = expected_type_points(table, move.pile, move.omens_taken) - expected_type_points(table, move.pile)
    return omen + FRIDAY_POINTS * move.fridays_taken


class CautiousAgent:
    """Avoids captures; dumps high cards while it is safe; takes the cheapest pile when forced.

    - If some card can be played without exceeding 13, it plays the highest such card (an omen card
      before a Friday card of equal value, since Friday cards fit every pile and keep options open),
      on the pile that ends highest: high cards are what force captures late in a round, and a high
      pile is the next player's problem.
    - If every card captures, it takes the pile with the lowest ``capture_cost`` (so piles of a type
      it safely leads cost nothing and Friday cards cost 2), restarting it with its highest card.

    Its strength against the other agents: ``docs/agents.md``.
    """

    name = "cautious"

    def __init__(self, seed: int | None = None) -> None:
        check_seed(seed)
        self.seed = seed

    def act(self, observation: Observation) -> int:
        return cautious_action(Table.read(observation, self.name))


def cautious_action(table: Table) -> int:
    """``cautious``' decision (shared with ``majority`` for everything but its target captures)."""
    moves = table.moves()
    safe = [move for move in moves if not move.captures]
    if safe:
        friday = table.deck.friday_kind
        return max(safe, key=lambda m: (m.value, m.kind != friday, m.total_after, -m.action)).action
    return min(moves, key=lambda m: (capture_cost(table, m), -m.value, m.action)).action


class MajorityAgent:
    """The rulebook's tip: pick one omen type, take its sole majority with few cards, avoid the others.

    The target is re-derived from the observation at every move, so a fresh agent handed a
    mid-round observation plays exactly like one that saw the whole round:

    - once it leads a type in captured cards, that type (the largest lead; ties to the better hand);
    - before that, the type its hand is best placed to collect: the most high cards of the type
      (values 5 and 7 are what push a pile over 13 on purpose), then the most cards of it.

    It then takes *clean* target piles on purpose, without any Friday the 13th card in them (those
    cost 2 whoever holds the majority): one of at least ``open_min`` omen cards that gives it the
    lead, then any of at least ``keep_min`` while it leads. Measured against ``cautious``, grabbing
    three clean cards early is worth it and fewer is not (see ``docs/agents.md``). Every other
    decision is ``cautious``': safe plays dump the highest card, forced captures take the cheapest
    pile.

    Its strength against the other agents: ``docs/agents.md``.
    """

    name = "majority"

    def __init__(
        self, seed: int | None = None, *, open_min: int = CLEAN_OPEN_MIN, keep_min: int = CLEAN_KEEP_MIN
    ) -> None:
        takes = "an int >= 1 (clean target cards to take a pile)"
        self.open_min = count_option("open_min", open_min, owner=self.name, takes=takes)
        self.keep_min = count_option("keep_min", keep_min, owner=self.name, takes=takes)
        check_seed(seed)
        self.seed = seed

    def target(self, table: Table) -> int:
        """The omen type to collect (see the class docstring)."""
        deck = table.deck
        in_hand = hand_by_type(table.hand, deck)
        high = [0] * NUM_PILES
        for kind, count in enumerate(table.hand[: deck.friday_kind]):
            if deck.kind_values[kind] >= HIGH_VALUE:
                high[deck.kind_types[kind]] += count
        leads = [_lead(table, omen_type) for omen_type in range(NUM_PILES)]
        return max(range(NUM_PILES), key=lambda t: (max(leads[t], 0), high[t], in_hand[t], -t))

    def act(self, observation: Observation) -> int:
        table = Table.read(observation, self.name)
        target = self.target(table)
        leading = _lead(table, target) > 0
        wanted = [
            move
            for move in table.moves()
            if move.captures
            and move.pile == target
            and move.fridays_taken == 0
            and move.omens_taken >= (self.keep_min if leading else self.open_min)
            and _lead(table, target) + move.omens_taken > 0
        ]
        if wanted:
            return max(wanted, key=lambda m: (m.omens_taken, m.value, -m.action)).action
        return cautious_action(table)


def _lead(table: Table, omen_type: int) -> int:
    """The observer's captured cards of a type minus those of its strongest rival."""
    return table.captured[0][omen_type] - max(seat[omen_type] for seat in table.captured[1:])
