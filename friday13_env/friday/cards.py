"""Card data for Friday (Friedemann Friese): fighting cards, hazard sides, aging cards and pirates.

Every physical fighting card has an *instance id* (0-58) so the engine can check that no card is ever
lost or duplicated, and a *type id* that identifies it up to identical copies (what the observation
counts). Instance ids are laid out as:

* 0-17: the 18 Robinson starting cards,
* 18-28: the 11 aging cards (``18-25`` normal incl. »very stupid« = 25, ``26-28`` difficult),
* 29-58: the 30 hazard / knowledge cards.

The data follow ``/work/shared/rules/friday-solo-cards.md`` (majority reading of public sources).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class Ability(IntEnum):
    """Special ability printed on a fighting card (the last four only occur on aging cards)."""

    NONE = 0
    LIFE_1 = 1
    LIFE_2 = 2
    CARD_1 = 3
    CARD_2 = 4
    DESTROY = 5
    DOUBLE = 6
    COPY = 7
    STEP_DOWN = 8
    SORT_3 = 9
    EXCHANGE_1 = 10
    EXCHANGE_2 = 11
    BELOW = 12
    AGING_LIFE_1 = 13
    AGING_LIFE_2 = 14
    HIGHEST_ZERO = 15
    STOP = 16


NUM_ABILITIES = len(Ability)
AGING_ABILITIES = frozenset({Ability.AGING_LIFE_1, Ability.AGING_LIFE_2, Ability.HIGHEST_ZERO, Ability.STOP})
"""Mandatory abilities, applied automatically by the engine; the player never activates them."""

ABILITY_LABELS: dict[Ability, str] = {
    Ability.NONE: "-",
    Ability.LIFE_1: "+1 life",
    Ability.LIFE_2: "+2 life",
    Ability.CARD_1: "+1 card",
    Ability.CARD_2: "+2 cards",
    Ability.DESTROY: "1x destroy",
    Ability.DOUBLE: "1x double",
    Ability.COPY: "1x copy",
    Ability.STEP_DOWN: "step -1",
    Ability.SORT_3: "sort 3 cards",
    Ability.EXCHANGE_1: "1x exchange",
    Ability.EXCHANGE_2: "2x exchange",
    Ability.BELOW: "1x below the stack",
    Ability.AGING_LIFE_1: "-1 life",
    Ability.AGING_LIFE_2: "-2 life",
    Ability.HIGHEST_ZERO: "highest card = 0",
    Ability.STOP: "stop",
}


@dataclass(frozen=True, slots=True)
class HazardSide:
    """The hazard side of a hazard/knowledge card: free cards and the value in each step."""

    name: str
    free: int
    values: tuple[int, int, int]
    """Hazard value in the green, yellow and red step."""


@dataclass(frozen=True, slots=True)
class CardType:
    """One kind of fighting card (identical copies share a type)."""

    type_id: int
    name: str
    value: int
    ability: Ability
    copies: int
    is_aging: bool = False
    difficult: bool = False
    hazard: HazardSide | None = None
    """Set for hazard/knowledge cards: the side that is fought before the card is won."""

    @property
    def destroy_cost(self) -> int:
        """Life points needed to destroy the card when losing a fight on purpose."""
        return 2 if self.is_aging else 1

    @property
    def score_value(self) -> int:
        """Value in the final score: aging cards count -5 whatever their printed value."""
        return -5 if self.is_aging else self.value


RAFT = HazardSide("with the raft to the wreck", 1, (0, 1, 3))
EXPLORING = HazardSide("exploring the island", 2, (1, 3, 6))
FURTHER = HazardSide("further exploring the island", 3, (2, 5, 8))
WILD_ANIMALS = HazardSide("wild animals", 4, (4, 7, 11))
CANNIBALS = HazardSide("cannibals", 5, (5, 9, 14))

_A = Ability
_TYPE_ROWS: tuple[tuple[str, int, Ability, int, bool, bool, HazardSide | None], ...] = (
    # Robinson starting cards (18)
    ("genius", 2, _A.NONE, 1, False, False, None),
    ("focused", 1, _A.NONE, 3, False, False, None),
    ("weak", 0, _A.NONE, 8, False, False, None),
    ("eating", 0, _A.LIFE_2, 1, False, False, None),
    ("distracted", -1, _A.NONE, 5, False, False, None),
    # Aging cards (11): normal ones, then the difficult ones
    ("distracted (aging)", -1, _A.NONE, 1, True, False, None),
    ("stupid", -2, _A.NONE, 2, True, False, None),
    ("very stupid", -3, _A.NONE, 1, True, False, None),
    ("scared", 0, _A.HIGHEST_ZERO, 2, True, False, None),
    ("hungry", 0, _A.AGING_LIFE_1, 1, True, False, None),
    ("very tired", 0, _A.STOP, 1, True, False, None),
    ("moronic", -4, _A.NONE, 1, True, True, None),
    ("suicidal", -5, _A.NONE, 1, True, True, None),
    ("very hungry", 0, _A.AGING_LIFE_2, 1, True, True, None),
    # Hazard / knowledge cards (30)
    ("food", 0, _A.LIFE_1, 2, False, False, RAFT),
    ("equipment", 0, _A.CARD_2, 2, False, False, RAFT),
    ("strategy", 0, _A.EXCHANGE_2, 2, False, False, RAFT),
    ("realization", 0, _A.DESTROY, 1, False, False, RAFT),
    ("mimicry", 0, _A.COPY, 1, False, False, RAFT),
    ("deception", 0, _A.BELOW, 1, False, False, RAFT),
    ("books", 0, _A.STEP_DOWN, 1, False, False, RAFT),
    ("food", 1, _A.LIFE_1, 2, False, False, EXPLORING),
    ("weapon", 2, _A.NONE, 2, False, False, EXPLORING),
    ("realization", 1, _A.DESTROY, 1, False, False, EXPLORING),
    ("mimicry", 1, _A.COPY, 1, False, False, EXPLORING),
    ("deception", 1, _A.BELOW, 1, False, False, EXPLORING),
    ("repeat", 1, _A.DOUBLE, 1, False, False, EXPLORING),
    ("food", 2, _A.LIFE_1, 1, False, False, FURTHER),
    ("realization", 2, _A.DESTROY, 1, False, False, FURTHER),
    ("strategy", 2, _A.EXCHANGE_1, 1, False, False, FURTHER),
    ("experience", 2, _A.CARD_1, 1, False, False, FURTHER),
    ("repeat", 2, _A.DOUBLE, 1, False, False, FURTHER),
    ("vision", 2, _A.SORT_3, 1, False, False, FURTHER),
    ("realization", 3, _A.DESTROY, 1, False, False, WILD_ANIMALS),
    ("strategy", 3, _A.EXCHANGE_1, 1, False, False, WILD_ANIMALS),
    ("experience", 3, _A.CARD_1, 1, False, False, WILD_ANIMALS),
    ("vision", 3, _A.SORT_3, 1, False, False, WILD_ANIMALS),
    ("weapon", 4, _A.NONE, 2, False, False, CANNIBALS),
)

CARD_TYPES: tuple[CardType, ...] = tuple(
    CardType(i, name, value, ability, copies, aging, difficult, hazard)
    for i, (name, value, ability, copies, aging, difficult, hazard) in enumerate(_TYPE_ROWS)
)
NUM_TYPES = len(CARD_TYPES)
STARTING_TYPES = tuple(t.type_id for t in CARD_TYPES if not t.is_aging and t.hazard is None)
AGING_TYPES = tuple(t.type_id for t in CARD_TYPES if t.is_aging)
KNOWLEDGE_TYPES = tuple(t.type_id for t in CARD_TYPES if t.hazard is not None)

TYPE_OF: tuple[int, ...] = tuple(t.type_id for t in CARD_TYPES for _ in range(t.copies))
"""Type id of every card instance id, in instance-id order."""
NUM_CARDS = len(TYPE_OF)
STARTING_IDS = tuple(i for i in range(NUM_CARDS) if TYPE_OF[i] in STARTING_TYPES)
AGING_IDS = tuple(i for i in range(NUM_CARDS) if CARD_TYPES[TYPE_OF[i]].is_aging)
HAZARD_IDS = tuple(i for i in range(NUM_CARDS) if CARD_TYPES[TYPE_OF[i]].hazard is not None)
VERY_STUPID_ID = TYPE_OF.index(next(t.type_id for t in CARD_TYPES if t.name == "very stupid"))
NORMAL_AGING_IDS = tuple(i for i in AGING_IDS if not CARD_TYPES[TYPE_OF[i]].difficult and i != VERY_STUPID_ID)
DIFFICULT_AGING_IDS = tuple(i for i in AGING_IDS if CARD_TYPES[TYPE_OF[i]].difficult)

assert (len(STARTING_IDS), len(AGING_IDS), len(HAZARD_IDS)) == (18, 11, 30)


def card_type(card: int) -> CardType:
    """Type of a card instance id (the one lookup every rule needs)."""
    return CARD_TYPES[TYPE_OF[card]]


def hazard_side(card: int) -> HazardSide:
    """Hazard side of a hazard card; asking for a non-hazard card is a programming error."""
    side = card_type(card).hazard
    if side is None:
        raise ValueError(f"card {card} ({card_type(card).name}) has no hazard side")
    return side


def card_label(card: int) -> str:
    """Short human-readable label such as ``vision 2 [sort 3 cards]``."""
    t = card_type(card)
    ability = "" if t.ability is Ability.NONE else f" [{ABILITY_LABELS[t.ability]}]"
    return f"{t.name} {t.value:+d}{ability}"


class PirateAbility(IntEnum):
    """Special rule of a pirate card."""

    NONE = 0
    DOUBLE_COST = 1
    HALF_COUNT = 2
    PLUS_ONE_PER_CARD = 3
    AGING_VALUE = 4
    ALL_HAZARDS = 5


NUM_PIRATE_ABILITIES = len(PirateAbility)


@dataclass(frozen=True, slots=True)
class Pirate:
    """A pirate card; ``free``/``value`` are 0 where the card computes them when the fight starts."""

    free: int
    value: int
    ability: PirateAbility

    @property
    def label(self) -> str:
        """Readable description, used by the text rendering."""
        rule = {
            PirateAbility.NONE: "",
            PirateAbility.DOUBLE_COST: ", each extra card costs 2 life",
            PirateAbility.HALF_COUNT: ", only half of the cards count (aging cards must)",
            PirateAbility.PLUS_ONE_PER_CARD: ", +1 per fighting card",
            PirateAbility.AGING_VALUE: ", value 2 per aging card added",
            PirateAbility.ALL_HAZARDS: ", fight all remaining hazards",
        }[self.ability]
        if self.ability is PirateAbility.ALL_HAZARDS:
            return "pirate (free/value = the hazard discard pile" + rule + ")"
        value = "2 x aging" if self.ability is PirateAbility.AGING_VALUE else str(self.value)
        return f"pirate (free {self.free}, value {value}{rule})"


PIRATES: tuple[Pirate, ...] = (
    Pirate(6, 20, PirateAbility.NONE),
    Pirate(7, 25, PirateAbility.NONE),
    Pirate(8, 30, PirateAbility.NONE),
    Pirate(9, 35, PirateAbility.NONE),
    Pirate(10, 40, PirateAbility.NONE),
    Pirate(7, 16, PirateAbility.DOUBLE_COST),
    Pirate(9, 22, PirateAbility.HALF_COUNT),
    Pirate(10, 52, PirateAbility.PLUS_ONE_PER_CARD),
    Pirate(5, 0, PirateAbility.AGING_VALUE),
    Pirate(0, 0, PirateAbility.ALL_HAZARDS),
)
NUM_PIRATES = len(PIRATES)

MAX_LIFE = 22
"""No more life points than this (there are 22 life tokens in the box)."""
NUM_STEPS = 3
"""Hazard steps: green, yellow, red (then the pirates)."""
STEP_NAMES = ("green", "yellow", "red", "pirates")
