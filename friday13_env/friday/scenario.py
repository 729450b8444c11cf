"""Build Friday states directly: hand-made scenarios for tests, puzzles and debugging.

A built state is a complete, consistent game: every one of the 59 fighting cards is in exactly one
zone (cards not placed anywhere go to the box), so the engine can play on from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from friday13_env.friday import engine
from friday13_env.friday.cards import NUM_CARDS, card_type, hazard_side
from friday13_env.friday.levels import LEVELS
from friday13_env.friday.state import Fight, Phase, Slot, State


def find_cards(name: str, value: int | None = None) -> list[int]:
    """Instance ids of the cards called ``name`` (and with fighting ``value``, if given)."""
    ids = [c for c in range(NUM_CARDS) if card_type(c).name == name and value in (None, card_type(c).value)]
    if not ids:
        raise ValueError(f"no card named {name!r} with value {value!r}")
    return ids


def find_card(name: str, value: int | None = None, index: int = 0) -> int:
    """The ``index``-th card called ``name`` (see :func:`find_cards`)."""
    return find_cards(name, value)[index]


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
) -> State:
    """A state fighting ``hazard`` (or pirate index ``pirate``) with ``table`` already drawn.

    ``table`` entries are card ids (free cards) or :class:`Slot` objects; the free cards already used
    are the unpaid slots. Without a hazard or pirate the state is left in the CHOOSE_HAZARD phase with
    no options drawn, ready for the caller to adjust. The reserve holds the level's remaining tokens.
    """
    config = LEVELS[level]
    life = config.life if life is None else life
    state = State(level=level, life=life, reserve=config.life + config.reserve - life, step=step)
    state.robinson = list(robinson)
    state.discard = list(discard)
    state.aging = list(aging)
    state.hidden = set(hidden)
    state.hazard_stack = list(hazard_stack)
    state.hazard_discard = list(hazard_discard)
    state.destroyed = list(destroyed)
    state.pirates = list(pirates)
    state.pirates_defeated = list(pirates_defeated)
    state.aging_taken = aging_taken
    slots = [s if isinstance(s, Slot) else Slot(s, paid=False) for s in table]
    if hazard is not None:
        state.fight = Fight(hazard=hazard, pirate=-1, free_total=hazard_side(hazard).free, pirate_value=0)
    elif pirate is not None:
        engine.start_pirate_fight(state, pirate)
    if state.fight is not None:
        state.fight.table = slots
        state.fight.free_used = sum(1 for s in slots if not s.paid)
        state.phase = Phase.FIGHT
    placed = {c for cards in state.all_zones().values() for c in cards}
    state.boxed = [c for c in range(NUM_CARDS) if c not in placed]
    return state
