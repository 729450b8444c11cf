"""Special abilities of the starting and knowledge cards, used during a fight.

An ability is *activated* from a table slot (the card is turned), may need a *target* slot, and some
have optional continuations (second card of »+2 cards«, second »2x exchange«, the look-discard-order
steps of »sort 3 cards«). Abilities are only offered when they would change something, which keeps
the action space free of no-op moves without removing any real choice.
"""

from __future__ import annotations

import numpy as np

from friday13_env.friday import zones
from friday13_env.friday.actions import SORT_SIZE
from friday13_env.friday.cards import AGING_ABILITIES, MAX_LIFE, Ability, card_type
from friday13_env.friday.state import Fight, Pending, Phase, Slot, State

TARGETED = frozenset(
    {Ability.DESTROY, Ability.DOUBLE, Ability.COPY, Ability.EXCHANGE_1, Ability.EXCHANGE_2, Ability.BELOW}
)


def _fight(state: State) -> Fight:
    """The running fight (abilities only exist inside one)."""
    assert state.fight is not None, "no fight in progress"
    return state.fight


def copyable(ability: Ability) -> bool:
    """»1x copy« repeats a player ability; aging abilities, copy itself and blank cards are excluded."""
    return ability not in AGING_ABILITIES and ability not in (Ability.NONE, Ability.COPY)


def targets(state: State, ability: Ability, source: int) -> list[int]:
    """Table slots the targeted ``ability`` used from slot ``source`` may be applied to.

    All targets are *other* face-up cards (face-down cards can no longer be affected); »double« skips
    cards already doubled; »copy« only offers abilities that would themselves be usable.
    """
    table = _fight(state).table
    others = [j for j, s in enumerate(table) if j != source and not s.face_down]
    if ability is Ability.DOUBLE:
        return [j for j in others if not table[j].doubled]
    if ability is Ability.COPY:
        return [
            j
            for j in others
            if copyable(card_type(table[j].card).ability) and usable(state, card_type(table[j].card).ability, source)
        ]
    return others


def usable(state: State, ability: Ability, source: int) -> bool:
    """Whether using ``ability`` from slot ``source`` now would have any effect."""
    fight = _fight(state)
    if ability in (Ability.LIFE_1, Ability.LIFE_2):
        return state.reserve > 0 and state.life < MAX_LIFE
    if ability in (Ability.CARD_1, Ability.CARD_2, Ability.SORT_3):
        return zones.can_draw(state)
    if ability is Ability.STEP_DOWN:
        return fight.hazard >= 0 and state.step - fight.step_downs > 0
    if ability is Ability.BELOW:
        return zones.can_draw(state) and bool(targets(state, ability, source))
    if ability in TARGETED:
        return bool(targets(state, ability, source))
    return False


def activatable(state: State) -> list[int]:
    """Table slots whose own ability can be activated now."""
    return [
        i
        for i, slot in enumerate(_fight(state).table)
        if not slot.used and not slot.face_down and usable(state, card_type(slot.card).ability, i)
    ]


def activate(state: State, slot: int, rng: np.random.Generator) -> None:
    """Turn the card in ``slot`` and start its ability."""
    table_slot = _fight(state).table[slot]
    table_slot.used = True
    start(state, card_type(table_slot.card).ability, slot, rng)


def start(state: State, ability: Ability, source: int, rng: np.random.Generator) -> None:
    """Start ``ability`` as used from ``source`` (the card itself, or a copy card copying it)."""
    fight = _fight(state)
    if ability is Ability.LIFE_1:
        zones.gain_life(state, 1)
    elif ability is Ability.LIFE_2:
        zones.gain_life(state, 2)
    elif ability is Ability.STEP_DOWN:
        fight.step_downs += 1
    elif ability in (Ability.CARD_1, Ability.CARD_2):
        _draw_extra(state, rng)
        if ability is Ability.CARD_2 and zones.can_draw(state):
            state.pending = Pending(ability, source, remaining=1, optional=True)
            state.phase = Phase.EXTRA_DRAW
    elif ability is Ability.SORT_3:
        state.pending = Pending(ability, source)
        state.phase = Phase.SORT_LOOK
        sort_look(state, rng)
    else:
        remaining = 2 if ability is Ability.EXCHANGE_2 else 1
        state.pending = Pending(ability, source, remaining=remaining)
        state.phase = Phase.TARGET


def _draw_extra(state: State, rng: np.random.Generator) -> None:
    """Draw a card for free onto the right side of the hazard (»+1/+2 cards«)."""
    card = zones.draw(state, rng)
    if card is not None:
        _fight(state).table.append(Slot(card, paid=True))


def finish(state: State) -> None:
    """End the pending ability and return to the fight."""
    state.pending = None
    state.phase = Phase.FIGHT


def continue_extra_draw(state: State, rng: np.random.Generator) -> None:
    """Second card of »+2 cards«."""
    _draw_extra(state, rng)
    finish(state)


def choose_target(state: State, target: int, rng: np.random.Generator) -> None:
    """Apply the pending targeted ability to table slot ``target``."""
    pending = state.pending
    assert pending is not None
    table = _fight(state).table
    ability = pending.ability
    if ability is Ability.DESTROY:
        table[target].face_down = True
    elif ability is Ability.DOUBLE:
        table[target].doubled = True
    elif ability is Ability.COPY:
        state.pending = None
        state.phase = Phase.FIGHT
        start(state, card_type(table[target].card).ability, pending.source, rng)
        return
    elif ability is Ability.BELOW:
        _below(state, target, rng)
    else:
        _exchange(state, target, rng)
        pending.remaining -= 1
        if pending.remaining > 0 and targets(state, ability, pending.source):
            pending.optional = True
            return
    finish(state)


def _exchange(state: State, target: int, rng: np.random.Generator) -> None:
    """Discard the target card and draw its replacement onto the same spot (same side)."""
    table = _fight(state).table
    old = table[target]
    state.discard.append(old.card)
    card = zones.draw(state, rng)
    assert card is not None, "the exchanged card itself can always be reshuffled"
    table[target] = Slot(card, paid=old.paid)


def _below(state: State, target: int, rng: np.random.Generator) -> None:
    """Put the target under the Robinson stack; a free card's place can then be drawn again.

    The stack must hold a card first, so an empty stack is formed anew (aging card + reshuffle) before
    the target goes under it. The optional replacement of a free card is modelled by giving back one
    free draw, which the player may use with DRAW_FREE (or not).
    """
    fight = _fight(state)
    zones.refill(state, rng)
    slot = fight.table.pop(target)
    zones.put_below(state, slot.card)
    if not slot.paid:
        fight.free_used -= 1


def sort_look(state: State, rng: np.random.Generator) -> None:
    """Look at the next card of the Robinson stack (it is drawn into the looked-at cards)."""
    card = zones.draw(state, rng)
    if card is not None:
        state.looked.append(card)


def can_look_more(state: State) -> bool:
    """Sort 3 allows up to three looked-at cards."""
    return len(state.looked) < SORT_SIZE and zones.can_draw(state)


def sort_discard(state: State, index: int) -> None:
    """Discard one looked-at card, then order the rest."""
    state.discard.append(state.looked.pop(index))
    _to_order(state)


def sort_keep_all(state: State) -> None:
    """Keep every looked-at card and order them."""
    _to_order(state)


def _to_order(state: State) -> None:
    """Move to ordering, skipping it when there is no real choice (0 or 1 card)."""
    state.phase = Phase.SORT_ORDER
    if len(state.looked) <= 1:
        _put_back(state)


def sort_top(state: State, index: int) -> None:
    """Choose the next card (from the top) among those still to be put back."""
    state.placed.append(state.looked.pop(index))
    if len(state.looked) <= 1:
        _put_back(state)


def _put_back(state: State) -> None:
    """Put the chosen order on top of the Robinson stack and end the ability."""
    zones.put_on_top(state, state.placed + state.looked)
    state.placed = []
    state.looked = []
    finish(state)
