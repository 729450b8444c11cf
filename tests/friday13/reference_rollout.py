"""The search agent's rollout policy played card by card on the engine: the reference that
``friday13_env.friday13.agents.rollout`` (all worlds at once, in numpy) must agree with exactly.

It is the search agent's original implementation, kept here as an independent check: it works on
``GameState`` (piles as card lists, the engine's own ``play``) rather than on pile summaries.
"""

from __future__ import annotations

from functools import cache

from friday13_env.friday13.agents.heuristics import CLEAN_KEEP_MIN, CLEAN_OPEN_MIN
from friday13_env.friday13.cards import CAPTURE_LIMIT, FRIDAY_POINTS, NUM_PILES, OMEN_POINTS, Deck
from friday13_env.friday13.engine import GameState, play


@cache
def _play_order(deck: Deck) -> tuple[int, ...]:
    """Card kinds in the order the rollout policy prefers to dump them: highest value first, omen
    cards before the Friday card of equal value."""
    friday = deck.friday_kind
    return tuple(sorted(range(deck.num_kinds), key=lambda k: (-deck.kind_values[k], k == friday, k)))


def rollout(state: GameState) -> None:
    """Play the round out with a cheap policy, in place: ``majority``'s rules on the engine state.

    A player takes a clean pile (no Friday card) on purpose when that gives it the lead in the
    type with at least 3 cards, or keeps its lead with at least 2. Otherwise it plays its highest
    card that captures nothing (a Friday card on the highest pile it fits). If every card
    captures, it takes the pile with the fewest bad-luck points, counting the omen cards as free
    when taking them gives it the sole majority of that type right now, and restarts it with its
    highest card.
    """
    deck = state.rules.deck
    values = deck.kind_values
    num_values = deck.num_values
    friday = deck.friday_kind
    friday_value = values[friday]
    order = _play_order(deck)
    hands = state.hands
    piles = state.piles
    while not state.round_over:
        me = state.current
        hand = hands[me]
        totals = state.pile_totals
        action = -1
        for pile in range(NUM_PILES):
            cards = piles[pile]
            if len(cards) < CLEAN_KEEP_MIN or friday in cards:
                continue
            top = _top_card(hand, pile, deck)
            if top < 0 or totals[pile] + values[top] <= CAPTURE_LIMIT:
                continue
            counts = [stack[pile] for stack in state.captured]
            mine = counts[me]
            counts[me] = -1
            lead = mine - max(counts)
            if len(cards) >= (CLEAN_KEEP_MIN if lead > 0 else CLEAN_OPEN_MIN) and lead + len(cards) > 0:
                action = friday + pile if top == friday else top
                break
        if action < 0:
            for kind in order:
                if not hand[kind]:
                    continue
                if kind != friday:
                    if totals[kind // num_values] + values[kind] <= CAPTURE_LIMIT:
                        action = kind
                        break
                    continue
                best_total = -1
                for pile in range(NUM_PILES):
                    total = totals[pile]
                    if best_total < total and total + friday_value <= CAPTURE_LIMIT:
                        best_total = total
                        action = friday + pile
                if action >= 0:
                    break
        if action < 0:
            action = _cheapest_capture(state, hand)
        play(state, action)


def _top_card(hand: list[int], pile: int, deck: Deck) -> int:
    """The highest card kind in ``hand`` that can go on ``pile`` (its type or Friday), or -1."""
    friday = deck.friday_kind
    top = friday if hand[friday] else -1
    num_values = deck.num_values
    for kind in range(pile * num_values + num_values - 1, pile * num_values - 1, -1):
        if hand[kind]:
            if top < 0 or deck.kind_values[kind] > deck.kind_values[top]:
                top = kind
            break
    return top


def _cheapest_capture(state: GameState, hand: list[int]) -> int:
    """The forced capture with the fewest points for the player to move (ties: highest card).

    Only called when no card is safe, so every card captures wherever it can go.
    """
    deck = state.rules.deck
    friday = deck.friday_kind
    me = state.current
    best_action, best_cost, best_value = -1, 1_000_000, -1
    for pile in range(NUM_PILES):
        top = _top_card(hand, pile, deck)
        if top < 0:
            continue
        cards = state.piles[pile]
        fridays = cards.count(friday)
        omens = len(cards) - fridays
        cost = FRIDAY_POINTS * fridays
        if omens:
            counts = [stack[pile] for stack in state.captured]
            mine = counts[me] + omens
            counts[me] = -1
            if mine <= max(counts):
                cost += OMEN_POINTS * omens
        value = deck.kind_values[top]
        if cost < best_cost or (cost == best_cost and value > best_value):
            best_action, best_cost, best_value = (friday + pile if top == friday else top), cost, value
    return best_action
