"""Build Friday states directly: hand-made scenarios for tests, puzzles and debugging.

A built state is a complete, consistent game: every one of the 59 fighting cards is in exactly one zone (cards not
placed anywhere go to the box), so the engine can play on from it. What no game can hold is refused before anything
is built, with a ``ValueError`` naming the problem and the allowed values: an unknown level, more life than the
level's tokens, a step past the pirates, a card id out of range or given twice (in one zone or in two), a card that
is not a hazard where a hazard must be, an unknown pirate, a table without a fight, a hazard fight or a hazard stack
at step 3 (the pirates), a pirate fight before step 3 or against a defeated pirate, hidden cards or a card of the
aging stack that are not aging cards, hazard options beside a fight, at step 3 or more than two, a table slot whose
flags are not bools, and »very stupid« anywhere at levels 1-2 (which box it): such a state would fail later (an
``IndexError`` encoding a hazard at step 3). No built state advertises a legal action that cannot be played (see
``build_state`` for the phase of a state between fights).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TypeGuard

import numpy as np

from friday13_env.core.checks import counted
from friday13_env.friday import engine
from friday13_env.friday.cards import (
    AGING_IDS,
    HAZARD_IDS,
    NUM_CARDS,
    NUM_PIRATES,
    NUM_STEPS,
    VERY_STUPID_ID,
    card_type,
    hazard_side,
)
from friday13_env.friday.levels import LEVELS, check_level
from friday13_env.friday.state import Fight, Phase, Slot, State

_HAZARDS = f"{HAZARD_IDS[0]}..{HAZARD_IDS[-1]}"
"""The hazard cards' ids, for messages (they are consecutive)."""
assert tuple(range(HAZARD_IDS[0], HAZARD_IDS[-1] + 1)) == HAZARD_IDS
_AGING = f"{AGING_IDS[0]}..{AGING_IDS[-1]}"
"""The aging cards' ids, for messages (they are consecutive)."""
assert tuple(range(AGING_IDS[0], AGING_IDS[-1] + 1)) == AGING_IDS


def find_cards(name: str, value: int | None = None) -> list[int]:
    """Instance ids of the cards called ``name`` (and with fighting ``value``, if given)."""
    ids = [c for c in range(NUM_CARDS) if card_type(c).name == name and value in (None, card_type(c).value)]
    if not ids:
        raise ValueError(f"no card named {name!r} with value {value!r}")
    return ids


def find_card(name: str, value: int | None = None, index: int = 0) -> int:
    """The ``index``-th card called ``name`` (see :func:`find_cards`); an index past the copies is a ``ValueError``
    (a negative one too: it would silently count from the end)."""
    ids = find_cards(name, value)
    valued = "" if value is None else f" of value {value}"
    return ids[_int_in("index", index, 0, len(ids) - 1, f" ({counted(len(ids), 'card')} called {name!r}{valued})")]


def build_state(
    *,
    level: int = 1,
    life: int | None = None,
    step: int = 0,
    robinson: Sequence[int] = (),
    discard: Iterable[int] = (),
    aging: Iterable[int] = (),
    hidden: Iterable[int] = (),
    hazard_stack: Iterable[int] = (),
    hazard_discard: Iterable[int] = (),
    destroyed: Iterable[int] = (),
    pirates: Sequence[int] = (0, 1),
    pirates_defeated: Sequence[bool] = (False, False),
    hazard: int | None = None,
    pirate: int | None = None,
    table: Iterable[int | Slot] = (),
    aging_taken: int = 0,
    hazard_options: Sequence[int] = (),
) -> State:
    """A state fighting ``hazard`` (or pirate index ``pirate``) with ``table`` already drawn.

    ``table`` entries are card ids (free cards) or :class:`Slot` objects (their flags bools); the free cards already
    used are the unpaid slots, and a slot given ``used`` is a card whose ability was used in this fight. Without a
    hazard or pirate, the state is between fights: at step 3 the pirates' turn comes as in a game (CHOOSE_PIRATE with
    both undefeated, the last one's fight, or the game won with both beaten); below it, ``hazard_options`` are the
    hazards drawn for the turn (two: CHOOSE_HAZARD; one: LAST_HAZARD), and with none drawn the state is left in
    CHOOSE_HAZARD with no legal action, for the caller to adjust. The reserve holds the level's remaining tokens.
    ``hidden`` (unseen aging cards) must be aging cards lying in the Robinson stack. A hazard fight needs step 0-2, a
    pirate fight step 3 and an undefeated pirate. Everything is checked first (see the module doc), so a ``ValueError``
    leaves nothing half built.
    """
    level = check_level(level)
    config = LEVELS[level]
    tokens = config.life + config.reserve
    life = config.life if life is None else life
    life = _int_in(
        "life", life, 0, tokens, f" at level {level} (its {config.life} life and {config.reserve} reserve tokens)"
    )
    step = _int_in("step", step, 0, NUM_STEPS, f" ({NUM_STEPS}: the pirates)")
    aging_taken = _int_in("aging_taken", aging_taken, 0, len(AGING_IDS))
    given = list(table)
    table_cards = _card_ids("table", [s.card if isinstance(s, Slot) else s for s in given])
    slots = [_slot(i, s, card) for i, (s, card) in enumerate(zip(given, table_cards, strict=True))]
    if hazard is not None and pirate is not None:
        raise ValueError("give hazard= or pirate= (the fight), not both")
    if slots and hazard is None and pirate is None:
        raise ValueError("table= needs a fight: give hazard= or pirate=")
    if hazard is not None and not (_is_card(hazard) and hazard in HAZARD_IDS):
        raise ValueError(f"hazard must be a hazard card, one of {_HAZARDS}, got {_shown_card(hazard)}")
    if hazard is not None and step == NUM_STEPS:
        raise ValueError(
            f"a hazard fight needs step 0, 1 or 2 (green, yellow, red), got step {step} (the pirates: give pirate=)"
        )
    if pirate is not None:
        pirate = _int_in("pirate", pirate, 0, 1, " (an index into pirates=)")
        if step != NUM_STEPS:
            raise ValueError(f"a pirate fight needs step={NUM_STEPS} (the pirates), got step {step}")
    options = _hazard_ids("hazard_options", hazard_options)
    if options and (hazard is not None or pirate is not None):
        raise ValueError(
            "hazard_options are the hazards drawn when there is no fight: give them, or hazard= or pirate=, not both"
        )
    if options and step == NUM_STEPS:
        raise ValueError(
            f"hazard_options need step 0, 1 or 2; at step {NUM_STEPS} (the pirates) no hazard is drawn, got "
            f"{counted(len(options), 'card')}"
        )
    if len(options) > 2:
        raise ValueError(
            "hazard_options must hold 1 or 2 hazard cards (those drawn for the turn), got "
            f"{counted(len(options), 'card')}"
        )
    zones = {
        "hazard": [] if hazard is None else [int(hazard)],
        "hazard_options": options,
        "table": table_cards,
        "robinson": _card_ids("robinson", robinson),
        "discard": _card_ids("discard", discard),
        "aging": _aging_ids(aging),
        "hazard_stack": _hazard_ids("hazard_stack", hazard_stack),
        "hazard_discard": _hazard_ids("hazard_discard", hazard_discard),
        "destroyed": _card_ids("destroyed", destroyed),
    }
    _check_each_card_once(zones)
    if step == NUM_STEPS and zones["hazard_stack"]:
        raise ValueError(
            f"hazard_stack must be empty at step {NUM_STEPS} (the pirates: no hazard is drawn any more), got "
            f"{counted(len(zones['hazard_stack']), 'card')}"
        )
    if not config.very_stupid:
        where = next((zone for zone, cards in zones.items() if VERY_STUPID_ID in cards), None)
        if where is not None:
            raise ValueError(
                f"card {_shown_card(VERY_STUPID_ID)} is boxed at level {level} (levels 1-2 play without it); it was in "
                f"{where}"
            )
    unseen = set(_card_ids("hidden", hidden))
    outside = sorted(unseen - set(zones["robinson"]))
    if outside:
        raise ValueError(f"hidden cards must be in the Robinson stack: {_shown_card(outside[0])} is not")
    not_aging = sorted(unseen - set(AGING_IDS))
    if not_aging:
        raise ValueError(f"hidden cards must be aging cards: {_shown_card(not_aging[0])} is not")
    chosen = list(pirates)
    if len(chosen) != 2 or not all(_is_int(p) and 0 <= p < NUM_PIRATES for p in chosen) or len(set(chosen)) != 2:
        raise ValueError(f"pirates must be two different pirate ids in 0..{NUM_PIRATES - 1}, got {pirates!r}")
    beaten = list(pirates_defeated)
    if len(beaten) != 2 or not all(isinstance(b, bool | np.bool_) for b in beaten):
        raise ValueError(f"pirates_defeated must be two bools, got {pirates_defeated!r}")
    if pirate is not None and beaten[pirate]:
        raise ValueError(f"pirate {pirate} is already defeated (pirates_defeated); a fight needs an undefeated pirate")

    state = State(level=level, life=life, reserve=tokens - life, step=step)
    state.robinson = zones["robinson"]
    state.discard = zones["discard"]
    state.aging = zones["aging"]
    state.hidden = unseen
    state.hazard_stack = zones["hazard_stack"]
    state.hazard_discard = zones["hazard_discard"]
    state.destroyed = zones["destroyed"]
    state.pirates = [int(p) for p in chosen]
    state.pirates_defeated = [bool(b) for b in beaten]
    state.aging_taken = aging_taken
    state.hazard_options = options
    if hazard is not None:
        hazard = int(hazard)
        state.fight = Fight(hazard=hazard, pirate=-1, free_total=hazard_side(hazard).free, pirate_value=0)
    elif pirate is not None:
        engine.start_pirate_fight(state, pirate)
    elif step == NUM_STEPS:
        engine.next_pirate(state)  # the pirates' turn, as a game comes to it
    elif len(options) == 1:
        state.phase = Phase.LAST_HAZARD
    if state.fight is not None:
        state.fight.table = slots
        state.fight.free_used = sum(1 for s in slots if not s.paid)
        state.phase = Phase.FIGHT
    placed = {c for cards in state.all_zones().values() for c in cards}
    state.boxed = [c for c in range(NUM_CARDS) if c not in placed]
    return state


SLOT_FLAGS = tuple(field.name for field in dataclasses.fields(Slot) if field.name != "card")
"""The bool fields of a :class:`Slot`, in its order."""


def _slot(index: int, given: int | Slot, card: int) -> Slot:
    """Table entry ``index`` as a slot of its own (a card id is a free card): a given ``Slot`` is copied with its card
    as an int and its flags as bools, or a ``ValueError`` names the first flag that is not a bool (``"no"`` would
    count as true)."""
    if not isinstance(given, Slot):
        return Slot(card, paid=False)
    for name in SLOT_FLAGS:
        value = getattr(given, name)
        if not isinstance(value, bool | np.bool_):
            raise ValueError(f"table slot {index}: {name} must be a bool, got {value!r}")
    return Slot(card, *(bool(getattr(given, name)) for name in SLOT_FLAGS))


def _is_int(value: object) -> TypeGuard[int | np.integer]:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool)


def _is_card(value: object) -> TypeGuard[int | np.integer]:
    """A card id: an integer in ``0..NUM_CARDS - 1``."""
    return _is_int(value) and 0 <= int(value) < NUM_CARDS


def _shown_card(value: object) -> str:
    """A card id with its name (``"5 (genius)"``), or anything else as given."""
    return f"{value} ({card_type(int(value)).name})" if _is_card(value) else repr(value)


def _int_in(name: str, value: object, low: int, high: int, about: str = "") -> int:
    """``value`` as an int if it is an integer in ``low..high``, else a ``ValueError`` naming ``name`` and the range."""
    if not (_is_int(value) and low <= value <= high):
        raise ValueError(f"{name} must be an int in {low}..{high}{about}, got {value!r}")
    return int(value)


def _card_ids(zone: str, cards: Iterable[object]) -> list[int]:
    """The card ids a zone is given, as ints, or a ``ValueError`` for the first that is not one."""
    ids = []
    for card in cards:
        if not _is_card(card):
            raise ValueError(f"{zone} holds {card!r}; card ids are ints in 0..{NUM_CARDS - 1}")
        ids.append(int(card))
    return ids


def _hazard_ids(zone: str, cards: Iterable[object]) -> list[int]:
    """``_card_ids`` of a hazard pile: every card must be a hazard card."""
    return _ids_of_kind(zone, cards, HAZARD_IDS, "a hazard card", _HAZARDS)


def _aging_ids(cards: Iterable[object]) -> list[int]:
    """``_card_ids`` of the aging stack: every card must be an aging card (another would be taken as one when the
    stack refills the Robinson stack)."""
    return _ids_of_kind("aging", cards, AGING_IDS, "an aging card", _AGING)


def _ids_of_kind(zone: str, cards: Iterable[object], kind_ids: tuple[int, ...], kind: str, ids: str) -> list[int]:
    """``_card_ids`` of ``zone``, every card one of ``kind_ids`` (``kind``, whose ids are ``ids``, for the message)."""
    found = _card_ids(zone, cards)
    for card in found:
        if card not in kind_ids:
            raise ValueError(f"{zone} holds {_shown_card(card)}, not {kind} ({ids})")
    return found


def _check_each_card_once(zones: dict[str, list[int]]) -> None:
    """A ``ValueError`` for the first card given twice, in one zone or in two (zones in ``zones``' order)."""
    where: dict[int, str] = {}
    for zone, cards in zones.items():
        for card in cards:
            if card in where:
                raise ValueError(
                    f"card {_shown_card(card)} is in {where[card]} and again in {zone}; each card must be in exactly "
                    "one zone"
                )
            where[card] = zone
