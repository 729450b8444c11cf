"""Game set-up for the four difficulty levels of the rulebook."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from friday13_env.friday import zones
from friday13_env.friday.cards import (
    DIFFICULT_AGING_IDS,
    HAZARD_IDS,
    NORMAL_AGING_IDS,
    NUM_PIRATES,
    STARTING_IDS,
    VERY_STUPID_ID,
)
from friday13_env.friday.state import State


@dataclass(frozen=True, slots=True)
class Level:
    """What distinguishes a level: aging card in the start deck, »very stupid« in play, life."""

    aging_in_deck: bool
    very_stupid: bool
    life: int
    reserve: int = 2


LEVELS: dict[int, Level] = {
    1: Level(aging_in_deck=False, very_stupid=False, life=20),
    2: Level(aging_in_deck=True, very_stupid=False, life=20),
    3: Level(aging_in_deck=True, very_stupid=True, life=20),
    4: Level(aging_in_deck=True, very_stupid=True, life=18),
}


def check_level(level: object) -> int:
    """Validate a level number, naming the allowed values in the error."""
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or int(level) not in LEVELS:
        raise ValueError(f"level must be one of {sorted(LEVELS)}, got {level!r}")
    return int(level)


def new_state(level: int, rng: np.random.Generator) -> State:
    """Lay out a fresh game (before the first hazards are drawn).

    Aging stack: normal cards shuffled on top of the shuffled difficult ones; at levels 2-4 its top
    card is shuffled face down into the 18 starting cards (and counts as an aging card added).
    """
    config = LEVELS[check_level(level)]
    normal = list(NORMAL_AGING_IDS) + ([VERY_STUPID_ID] if config.very_stupid else [])
    state = State(level=int(level), life=config.life, reserve=config.reserve)
    state.boxed = [] if config.very_stupid else [VERY_STUPID_ID]
    state.aging = zones.shuffled(normal, rng) + zones.shuffled(list(DIFFICULT_AGING_IDS), rng)
    deck = list(STARTING_IDS)
    if config.aging_in_deck:
        card = state.aging.pop(0)
        state.aging_taken = 1
        state.hidden.add(card)
        deck.append(card)
    state.robinson = zones.shuffled(deck, rng)
    state.hazard_stack = zones.shuffled(list(HAZARD_IDS), rng)
    state.pirates = sorted(int(p) for p in rng.choice(NUM_PIRATES, size=2, replace=False))
    state.pirates_defeated = [False, False]
    return state
