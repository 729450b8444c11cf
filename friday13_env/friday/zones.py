"""Moving cards between piles and life tokens between Robinson and the reserve.

These are the low-level rules every higher-level action relies on: the Robinson stack running out
(add the top aging card face down, shuffle the discard pile, only when another card is really needed),
the knowledge the player keeps about the stack's top and bottom, and paying life (the game is lost the
moment a life point is owed and none is left).
"""

from __future__ import annotations

import numpy as np

from friday13_env.friday.cards import MAX_LIFE
from friday13_env.friday.state import Phase, State


def shuffled(cards: list[int], rng: np.random.Generator) -> list[int]:
    """A shuffled copy; the single place randomness enters card order."""
    return [cards[i] for i in rng.permutation(len(cards))]


def can_draw(state: State) -> bool:
    """Whether one more fighting card can be drawn (possibly after a reshuffle with an aging card)."""
    return bool(state.robinson or state.discard or state.aging)


def refill(state: State, rng: np.random.Generator) -> bool:
    """Form a new Robinson stack from the discard pile plus the top aging card.

    Called only when the stack is empty and a card is needed, as the rules demand (the discard pile is
    not shuffled when the last card is drawn, only when another one must be). The aging card is not
    looked at, so it is recorded as hidden. With the aging stack empty, the discard is simply shuffled.
    Returns False when there is nothing at all to form a stack from.
    """
    if state.robinson:
        return True
    pool = state.discard
    if state.aging:
        card = state.aging.pop(0)
        state.aging_taken += 1
        state.hidden.add(card)
        pool = [*pool, card]
    if not pool:
        return False
    state.robinson = shuffled(pool, rng)
    state.discard = []
    state.known_top = 0
    state.known_bottom = 0
    return True


def draw(state: State, rng: np.random.Generator) -> int | None:
    """Draw the top card of the Robinson stack (refilling if needed); the card is now seen."""
    if not refill(state, rng):
        return None
    card = state.robinson.pop(0)
    state.hidden.discard(card)
    state.known_top = max(0, state.known_top - 1)
    state.known_bottom = min(state.known_bottom, len(state.robinson))
    return card


def put_on_top(state: State, cards: list[int]) -> None:
    """Put cards (first = new top) back on the Robinson stack; the player knows their order."""
    state.robinson[:0] = cards
    state.known_top += len(cards)


def put_below(state: State, card: int) -> None:
    """Put a card under the Robinson stack; the player knows it is there."""
    state.robinson.append(card)
    state.known_bottom += 1


def gain_life(state: State, amount: int) -> int:
    """Take up to ``amount`` life tokens from the reserve, never above 22; returns the number gained."""
    gained = max(0, min(amount, state.reserve, MAX_LIFE - state.life))
    state.life += gained
    state.reserve -= gained
    return gained


def pay_life(state: State, amount: int) -> bool:
    """Pay life tokens to the reserve; if one is owed and none is left, the game is lost at once.

    Returns False when the game was lost (all remaining tokens go to the reserve).
    """
    if amount <= state.life:
        state.life -= amount
        state.reserve += amount
        return True
    state.reserve += state.life
    state.life = 0
    lose(state)
    return False


def lose(state: State) -> None:
    """End the game as a loss."""
    state.won = False
    state.phase = Phase.GAME_OVER
    state.pending = None
