"""Rules of Friday as a state machine: legal actions and their effects.

Usage::

    rng = np.random.default_rng(seed)
    state = new_game(level, rng)
    while not state.done:
        apply_action(state, some_action_in(legal_actions(state)), rng)
    final_score(state)

The game advances automatically through everything that involves no decision (drawing hazard cards,
changing steps, mandatory aging abilities, starting the last pirate fight), so every call of
:func:`apply_action` leaves the state at the next real decision or at the end of the game.
See :mod:`friday13_env.friday.actions` for the action table.
"""

from __future__ import annotations

import numpy as np

from friday13_env.core.checks import as_action, check_rng
from friday13_env.friday import abilities, actions, zones
from friday13_env.friday.cards import (
    CARD_TYPES,
    HAZARD_IDS,
    NUM_STEPS,
    PIRATES,
    TYPE_OF,
    Ability,
    Pirate,
    PirateAbility,
    card_type,
    hazard_side,
)
from friday13_env.friday.levels import new_state
from friday13_env.friday.state import Fight, Phase, Slot, State
from friday13_env.friday.strength import aging_life_cost, fight_target, fight_total

PIRATE_POINTS = 15
LIFE_POINTS = 5
UNBEATEN_HAZARD_POINTS = -3
MIN_SCORE = sum(min(0, CARD_TYPES[t].score_value) for t in TYPE_OF) + UNBEATEN_HAZARD_POINTS * len(HAZARD_IDS)
"""A floor under every final score (-150): every negative card owned and every hazard card left unbeaten."""


ACTION_TYPE_MESSAGE = (
    "action must be an integer (a Python int, a numpy integer or a 0-d integer array), got {action!r} ({type}); {legal}"
)
"""The refusal of an action that is not an integer (``as_action``'s fields); the environment words it the same."""


def legal_text(state: State) -> str:
    """The legal actions of ``state`` with their names, for error messages."""
    names = ", ".join(f"{a} ({actions.action_name(a, state.phase)})" for a in legal_actions(state))
    return f"legal actions: {names or ('none (the game is over)' if state.done else 'none')}"


def new_game(level: int, rng: np.random.Generator) -> State:
    """Set up a game at ``level`` (1-4) and advance to the first decision."""
    check_rng(rng)
    state = new_state(level, rng)
    _next_turn(state, rng)
    return state


# --------------------------------------------------------------------------- turn flow


def _next_turn(state: State, rng: np.random.Generator) -> None:
    """Start the next game turn: draw hazards, or change step, or go to the pirates."""
    while state.step < NUM_STEPS:
        if len(state.hazard_stack) >= 2:
            state.hazard_options = [state.hazard_stack.pop(0), state.hazard_stack.pop(0)]
            state.phase = Phase.CHOOSE_HAZARD
            return
        if len(state.hazard_stack) == 1:
            state.hazard_options = [state.hazard_stack.pop(0)]
            state.phase = Phase.LAST_HAZARD
            return
        state.step += 1
        if state.step < NUM_STEPS:
            state.hazard_stack = zones.shuffled(state.hazard_discard, rng)
            state.hazard_discard = []
    next_pirate(state)


def next_pirate(state: State) -> None:
    """Fight the remaining pirate, let the player choose between two, or win the game."""
    remaining = [i for i, beaten in enumerate(state.pirates_defeated) if not beaten]
    if len(remaining) == 2:
        state.phase = Phase.CHOOSE_PIRATE
    elif remaining:
        start_pirate_fight(state, remaining[0])
    else:
        state.won = True
        state.phase = Phase.GAME_OVER


def start_hazard_fight(state: State, hazard: int) -> None:
    """Face a hazard card: its free cards, value read from the step at resolution."""
    state.hazard_options = []
    state.fight = Fight(hazard=hazard, pirate=-1, free_total=hazard_side(hazard).free, pirate_value=0)
    state.phase = Phase.FIGHT


def pirate_terms(state: State, pirate: Pirate) -> tuple[int, int]:
    """Free cards and hazard value of a pirate given the current game (computed ones included).

    »+2 per aging card« counts every aging card taken from the aging stack so far (the rulebook's
    count: 10 or 11 minus the cards left on the board, so the level 2+ set-up card counts).
    »All remaining hazards« sums the free cards and red values of the hazard discard pile.
    """
    if pirate.ability is PirateAbility.AGING_VALUE:
        return pirate.free, 2 * state.aging_taken
    if pirate.ability is PirateAbility.ALL_HAZARDS:
        sides = [hazard_side(c) for c in state.hazard_discard]
        return sum(s.free for s in sides), sum(s.values[2] for s in sides)
    return pirate.free, pirate.value


def start_pirate_fight(state: State, index: int) -> None:
    """Face pirate ``index``; computed values are fixed now, when the fight starts."""
    pirate = PIRATES[state.pirates[index]]
    free, value = pirate_terms(state, pirate)
    state.fight = Fight(hazard=-1, pirate=index, free_total=free, pirate_value=value, pirate_ability=pirate.ability)
    state.phase = Phase.FIGHT


# --------------------------------------------------------------------------- fight actions


def stop_active(fight: Fight) -> bool:
    """A face-up »stop« card among the free cards halts free drawing."""
    return any(not s.paid and not s.face_down and card_type(s.card).ability is Ability.STOP for s in fight.table)


def buy_cost(fight: Fight) -> int:
    """Life per extra card: 2 against the »each additional card costs 2« pirate, else 1."""
    return 2 if fight.pirate_ability is PirateAbility.DOUBLE_COST else 1


def can_draw_free(state: State) -> bool:
    """Free cards remain, no »stop« is showing, and a card can be drawn."""
    fight = state.fight
    assert fight is not None
    return fight.free_used < fight.free_total and not stop_active(fight) and zones.can_draw(state)


def can_buy(state: State) -> bool:
    """Extra cards come after the free ones and cost life.

    Against a hazard the player must be able to pay. Against a pirate, losing is not allowed, so a
    player who is short of points must keep drawing: if he cannot pay, buying loses the game (rules:
    »you place this life point back into the reserve and lose the game«).
    """
    fight = state.fight
    assert fight is not None
    if not zones.can_draw(state) or (fight.free_used < fight.free_total and not stop_active(fight)):
        return False
    if state.life >= buy_cost(fight):
        return True
    return fight.hazard < 0 and fight_total(fight) < fight_target(state)


def can_end(state: State) -> bool:
    """At least one card must be drawn first; against a pirate the fight ends only when won.

    When no card can be drawn any more (nothing left, or nothing affordable against a hazard), ending
    is allowed; against a pirate that means losing the game.
    """
    fight = state.fight
    assert fight is not None
    more = can_draw_free(state) or can_buy(state)
    if not fight.table and more:
        return False
    return fight.hazard >= 0 or not more or fight_total(fight) >= fight_target(state)


def _draw_to_table(state: State, rng: np.random.Generator, paid: bool) -> None:
    """Draw a fighting card onto the left (free) or right (paid) side."""
    card = zones.draw(state, rng)
    assert card is not None
    fight = state.fight
    assert fight is not None
    fight.table.append(Slot(card, paid=paid))
    if not paid:
        fight.free_used += 1


def _buy(state: State, rng: np.random.Generator) -> None:
    """Pay for an extra card (possibly losing the game) and draw it."""
    fight = state.fight
    assert fight is not None
    if zones.pay_life(state, buy_cost(fight)):
        _draw_to_table(state, rng, paid=True)


def _end_fight(state: State, rng: np.random.Generator) -> None:
    """Compare points with the hazard value and settle the fight.

    Aging life costs (»-1/-2 life«) are owed whatever the result, separately from the difference paid
    when losing, and are settled here, before any card is destroyed with the difference.
    """
    fight = state.fight
    assert fight is not None
    total, target = fight_total(fight), fight_target(state)
    if total >= target:
        if zones.pay_life(state, aging_life_cost(fight)):
            _clear_fight(state, won=True, rng=rng)
        return
    if fight.hazard < 0:
        zones.lose(state)
        return
    difference = target - total
    if not (zones.pay_life(state, difference) and zones.pay_life(state, aging_life_cost(fight))):
        return
    state.loss_budget = difference
    state.phase = Phase.LOSS_DESTROY
    if not loss_targets(state):
        _clear_fight(state, won=False, rng=rng)


def loss_targets(state: State) -> list[int]:
    """Face-up table cards the remaining paid difference can destroy (1 life, 2 for aging cards)."""
    fight = state.fight
    assert fight is not None
    return [
        j for j, s in enumerate(fight.table) if not s.face_down and card_type(s.card).destroy_cost <= state.loss_budget
    ]


def _loss_destroy(state: State, target: int, rng: np.random.Generator) -> None:
    """Destroy a played card with the life points paid for the lost fight."""
    fight = state.fight
    assert fight is not None
    slot = fight.table.pop(target)
    state.loss_budget -= card_type(slot.card).destroy_cost
    state.destroyed.append(slot.card)
    if not loss_targets(state):
        _clear_fight(state, won=False, rng=rng)


def _clear_fight(state: State, won: bool, rng: np.random.Generator) -> None:
    """Move the fight's cards away and start the next turn (or the next pirate).

    Face-down cards are destroyed, the rest go to the Robinson discard pile; a beaten hazard joins the
    discard pile as a knowledge card, an unbeaten one goes to the hazard discard pile.
    """
    fight = state.fight
    assert fight is not None
    for slot in fight.table:
        (state.destroyed if slot.face_down else state.discard).append(slot.card)
    state.fight = None
    state.loss_budget = 0
    if fight.hazard >= 0:
        (state.discard if won else state.hazard_discard).append(fight.hazard)
        _next_turn(state, rng)
    else:
        state.pirates_defeated[fight.pirate] = True
        next_pirate(state)


# --------------------------------------------------------------------------- legality and dispatch


def legal_actions(state: State) -> list[int]:
    """All legal action ids in the current state, in increasing order."""
    phase = state.phase
    if phase is Phase.CHOOSE_HAZARD:  # (no options only in a hand-built state no hazard was drawn for: build_state)
        return [actions.HAZARD_A, actions.HAZARD_B] if state.hazard_options else []
    if phase is Phase.LAST_HAZARD:
        return [actions.FIGHT_LAST, actions.SKIP_LAST] if state.hazard_options else []
    if phase is Phase.CHOOSE_PIRATE:
        return [actions.PIRATE_A, actions.PIRATE_B]
    if phase is Phase.FIGHT:
        legal = [
            a
            for a, ok in (
                (actions.DRAW_FREE, can_draw_free(state)),
                (actions.BUY, can_buy(state)),
                (actions.END_FIGHT, can_end(state)),
            )
            if ok
        ]
        return legal + [actions.ACTIVATE + i for i in abilities.activatable(state)]
    if phase is Phase.TARGET:
        pending = state.pending
        assert pending is not None
        done = [actions.DONE] if pending.optional else []
        return done + [actions.TARGET + j for j in abilities.targets(state, pending.ability, pending.source)]
    if phase is Phase.EXTRA_DRAW:
        return [actions.CONTINUE, actions.DONE]
    if phase is Phase.SORT_LOOK:
        more = [actions.CONTINUE] if abilities.can_look_more(state) else []
        return [*more, actions.DONE] + [actions.SORT_DISCARD + k for k in range(len(state.looked))]
    if phase is Phase.SORT_ORDER:
        return [actions.SORT_TOP + k for k in range(len(state.looked))]
    if phase is Phase.LOSS_DESTROY:
        return [actions.DONE] + [actions.TARGET + j for j in loss_targets(state)]
    return []


def action_mask(state: State) -> np.ndarray:
    """Legal actions as an int8 vector of length ``NUM_ACTIONS``."""
    mask = np.zeros(actions.NUM_ACTIONS, dtype=np.int8)
    mask[legal_actions(state)] = 1
    return mask


def apply_action(state: State, action: int | np.integer | np.ndarray, rng: np.random.Generator) -> None:
    """Apply a legal action in place (a Python int, a numpy integer or a 0-d integer array); anything else (a float,
    a bool, an illegal number, any action once the game is over) and an ``rng`` that is not a Generator raise a
    ``ValueError`` before anything is played."""
    check_rng(rng)
    if state.done:
        raise ValueError("the game is over; no action is allowed (start a new game)")
    move = as_action(action, actions.NUM_ACTIONS, ACTION_TYPE_MESSAGE, legal=lambda: legal_text(state))
    if move not in legal_actions(state):
        raise ValueError(f"illegal action {move} in phase {state.phase.name}; {legal_text(state)}")
    _dispatch(state, move, rng)


def _dispatch(state: State, action: int, rng: np.random.Generator) -> None:
    """Route a (legal) action to the rule that implements it."""
    phase = state.phase
    if phase is Phase.CHOOSE_HAZARD:
        chosen, other = state.hazard_options[:: 1 if action == actions.HAZARD_A else -1]
        state.hazard_discard.append(other)
        start_hazard_fight(state, chosen)
    elif phase is Phase.LAST_HAZARD:
        if action == actions.FIGHT_LAST:
            start_hazard_fight(state, state.hazard_options[0])
        else:
            state.hazard_discard.append(state.hazard_options.pop())
            _next_turn(state, rng)
    elif phase is Phase.CHOOSE_PIRATE:
        start_pirate_fight(state, action - actions.PIRATE_A)
    elif phase is Phase.FIGHT:
        _dispatch_fight(state, action, rng)
    elif phase is Phase.TARGET:
        if action == actions.DONE:
            abilities.finish(state)
        else:
            abilities.choose_target(state, action - actions.TARGET, rng)
    elif phase is Phase.EXTRA_DRAW:
        if action == actions.CONTINUE:
            abilities.continue_extra_draw(state, rng)
        else:
            abilities.finish(state)
    elif phase is Phase.SORT_LOOK:
        if action == actions.CONTINUE:
            abilities.sort_look(state, rng)
        elif action == actions.DONE:
            abilities.sort_keep_all(state)
        else:
            abilities.sort_discard(state, action - actions.SORT_DISCARD)
    elif phase is Phase.SORT_ORDER:
        abilities.sort_top(state, action - actions.SORT_TOP)
    elif phase is Phase.LOSS_DESTROY:
        if action == actions.DONE:
            _clear_fight(state, won=False, rng=rng)
        else:
            _loss_destroy(state, action - actions.TARGET, rng)


def _dispatch_fight(state: State, action: int, rng: np.random.Generator) -> None:
    """Actions of the main fight phase."""
    if action == actions.DRAW_FREE:
        _draw_to_table(state, rng, paid=False)
    elif action == actions.BUY:
        _buy(state, rng)
    elif action == actions.END_FIGHT:
        _end_fight(state, rng)
    else:
        abilities.activate(state, action - actions.ACTIVATE, rng)


# --------------------------------------------------------------------------- scoring


def owned_cards(state: State) -> list[int]:
    """Robinson's fighting cards: stack, discard pile and face-up cards still on the table."""
    table = [] if state.fight is None else [s.card for s in state.fight.table if not s.face_down]
    return state.robinson + state.discard + table + state.looked + state.placed


def final_score(state: State) -> int:
    """The rulebook's victory points.

    Sum of Robinson's fighting cards (aging cards -5 each), +15 per defeated pirate, +5 per life point
    if the game was won, -3 per hazard card in the hazard discard pile. Face-down cards of an
    unfinished fight count as destroyed.
    """
    cards = sum(card_type(c).score_value for c in owned_cards(state))
    life = LIFE_POINTS * state.life if state.won else 0
    pirates = PIRATE_POINTS * sum(state.pirates_defeated)
    return cards + pirates + life + UNBEATEN_HAZARD_POINTS * len(state.hazard_discard)
