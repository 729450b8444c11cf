"""Build Friday the 13th states directly: hand-made positions for tests, benchmarks and debugging.

A built state is one the engine can play on from: every list is validated (whole numbers, no card kind more often
than the deck holds it, no more cards on the piles and in the captured stacks than were played), and the hand sizes
are ones a real deal can reach, though the counts need not add up to the whole deck (partial positions are allowed).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from friday13_env.core.specs import shown
from friday13_env.friday13.cards import CAPTURE_LIMIT, NUM_PILES, NUM_TYPES, OMEN_TYPE_NAMES, Deck
from friday13_env.friday13.engine import GameState, Rules, dealt_state


def from_hands(
    rules: Rules,
    hands: Sequence[Sequence[int]],
    *,
    round_index: int = 0,
    current: int | None = None,
    piles: Sequence[Sequence[int]] | None = None,
    captured: Sequence[Sequence[int]] | None = None,
    played: Sequence[int] | None = None,
    scores: Sequence[int] | None = None,
) -> GameState:
    """Build a state from given hands (tests, and checks of the search agents' sampled worlds).

    ``hands`` holds one count list per seat, plus the dummy hand last with 3 players (it may be
    omitted, then the dummy holds nothing). ``piles`` are lists of card kinds in play order and
    ``captured`` per seat the cards taken this round by type (cat, mirror, ladder, Friday).
    ``played`` (per kind) defaults to the cards in the piles; give it when captured cards matter
    for bookkeeping. Unlike a real deal the counts need not add up to the whole deck, so partial
    positions can be set up; every list is validated.
    """
    deck = rules.deck
    n = rules.num_players
    expected = (n, n + 1) if rules.has_dummy else (n,)
    if len(hands) not in expected:
        raise ValueError(f"expected {' or '.join(map(str, expected))} hands for {n} players, got {len(hands)}")
    for hand in hands:
        _check_counts(hand, deck, "hand")
    carried = [0] * n if scores is None else [_whole(score, "a score") for score in scores]
    if len(carried) != n:
        raise ValueError(f"expected {n} scores, got {len(carried)}")
    if min(carried) < 0:
        raise ValueError(f"scores cannot be negative, got {carried}")
    padded = [list(hand) for hand in hands]
    if rules.has_dummy and len(padded) == n:
        padded.append([0] * deck.num_kinds)
    if not 0 <= _whole(round_index, "round_index") < rules.num_rounds:
        raise ValueError(f"round_index must be in 0..{rules.num_rounds - 1}, got {round_index}")
    state = dealt_state(rules, padded, round_index=round_index, scores=carried)
    if current is not None:
        if not 0 <= _whole(current, "current") < n:
            raise ValueError(f"current must be a seat in 0..{n - 1}, got {current}")
        state.current = current
    if piles is not None:
        if len(piles) != NUM_PILES:
            raise ValueError(f"expected {NUM_PILES} piles, got {len(piles)}")
        state.piles = [[_whole(kind, "a pile's card kind") for kind in pile] for pile in piles]
        for pile_index, pile in enumerate(state.piles):
            for kind in pile:
                if not 0 <= kind < deck.num_kinds:
                    raise ValueError(f"pile {pile_index} holds unknown card kind {kind}")
                if kind != deck.friday_kind and deck.kind_types[kind] != pile_index:
                    raise ValueError(f"{deck.kind_name(kind)} cannot lie on pile {pile_index}")
        state.pile_totals = [sum(deck.kind_values[kind] for kind in pile) for pile in state.piles]
        for pile in state.piles:
            for kind in pile:
                state.played[kind] += 1
        if max(state.pile_totals) > CAPTURE_LIMIT:
            raise ValueError(f"pile totals {state.pile_totals} exceed {CAPTURE_LIMIT}")
    if captured is not None:
        if len(captured) != n:
            raise ValueError(f"expected {n} captured stacks, got {len(captured)}")
        for stack in captured:
            if len(stack) != NUM_TYPES or min(_whole(count, "a captured count") for count in stack) < 0:
                raise ValueError(f"a captured stack needs {NUM_TYPES} non-negative counts by type, got {list(stack)}")
        state.captured = [[int(count) for count in stack] for stack in captured]
    if played is not None:
        _check_counts(played, deck, "played list")
        on_piles = np.bincount([kind for pile in state.piles for kind in pile], minlength=deck.num_kinds)
        if any(int(count) < on_pile for count, on_pile in zip(played, on_piles, strict=True)):
            raise ValueError(f"the played list {list(played)} holds fewer cards than the piles {on_piles.tolist()}")
        state.played = [int(count) for count in played]
        _check_captured_were_played(state)
    _check_copies(state)
    if state.plays_left == 0:
        raise ValueError("every hand is empty: there is nothing left to play this round")
    _check_turn_order(state)
    return state


def _check_turn_order(state: GameState) -> None:
    """Hands in turn order must shrink by at most one card from the player to move onwards.

    That is what a real deal produces, and it guarantees that play never reaches an empty hand
    before the round ends.
    """
    n = state.rules.num_players
    sizes = [sum(state.hands[(state.current + offset) % n]) for offset in range(n)]
    in_order = all(a >= b for a, b in itertools.pairwise(sizes))
    if not in_order or sizes[0] - sizes[-1] > 1:
        raise ValueError(
            f"hand sizes {sizes} (in turn order from player_{state.current}) cannot occur in play: "
            "they must not grow and may differ by at most one card"
        )


def _check_counts(counts: Sequence[int], deck: Deck, what: str) -> None:
    """A per-kind count list (a hand, or the played cards): one non-negative whole count per card kind."""
    if len(counts) != deck.num_kinds:
        raise ValueError(f"a {what} needs {deck.num_kinds} counts (one per card kind), got {len(counts)}")
    if any(_whole(count, f"a {what}'s count") < 0 for count in counts):
        raise ValueError(f"a {what} cannot hold negative counts: {list(counts)}")


def _whole(value: object, what: str) -> int:
    """``value`` as an int if it is a whole number (a Python or numpy integer, not a bool), else a ``ValueError``:
    a count of 1.5 or a seat of 1.0 is refused, never rounded."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{what} must be a whole number (an int), got {shown(value)}")
    return int(value)


def _check_copies(state: GameState) -> None:
    """No card kind in the hands and among the played cards more often than the deck holds it, and no card type in
    the hands, on the piles and in the captured stacks more often either (captured stacks count cards by type only,
    and need no played list)."""
    deck = state.rules.deck
    for kind in range(deck.num_kinds):
        seen = sum(hand[kind] for hand in state.hands) + state.played[kind]
        if seen > deck.kind_counts[kind]:
            raise ValueError(
                f"{seen} copies of {deck.kind_name(kind)} in the hands and the played cards; the {deck.name} deck "
                f"holds {deck.kind_counts[kind]}"
            )
    held, played, out = [0] * NUM_TYPES, [0] * NUM_TYPES, [0] * NUM_TYPES
    for kind in range(deck.num_kinds):
        held[deck.kind_types[kind]] += sum(hand[kind] for hand in state.hands)
        played[deck.kind_types[kind]] += state.played[kind]
    for kind in (kind for pile in state.piles for kind in pile):
        out[deck.kind_types[kind]] += 1
    for card_type in range(NUM_TYPES):
        out[card_type] += sum(stack[card_type] for stack in state.captured)
        total = sum(count for kind, count in enumerate(deck.kind_counts) if deck.kind_types[kind] == card_type)
        seen = held[card_type] + max(played[card_type], out[card_type])
        if seen > total:
            raise ValueError(
                f"{seen} {TYPE_NAMES[card_type]} cards in the hands, on the piles and in the captured stacks; the "
                f"{deck.name} deck holds {total}"
            )


TYPE_NAMES = (*OMEN_TYPE_NAMES, "Friday the 13th")
"""The card types in ``captured`` order."""


def _check_captured_were_played(state: GameState) -> None:
    """The cards on the piles and in the captured stacks of a type were played this round: no more of them than
    the played list holds of that type."""
    deck = state.rules.deck
    played = [0] * NUM_TYPES
    on_piles = [0] * NUM_TYPES
    for kind, count in enumerate(state.played):
        played[deck.kind_types[kind]] += count
    for kind in (kind for pile in state.piles for kind in pile):
        on_piles[deck.kind_types[kind]] += 1
    for card_type in range(NUM_TYPES):
        taken = sum(stack[card_type] for stack in state.captured)
        if taken + on_piles[card_type] > played[card_type]:
            raise ValueError(
                f"{taken} captured and {on_piles[card_type]} piled {TYPE_NAMES[card_type]} cards, but only "
                f"{played[card_type]} played this round"
            )
