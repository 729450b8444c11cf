"""Fight arithmetic: the fighting points of the table and the hazard value to reach.

Kept separate from the state machine because both the engine (resolution, masks of pirate fights) and
the observation (the current total, shown to agents) need exactly the same numbers.
"""

from __future__ import annotations

from friday13_env.friday.cards import Ability, PirateAbility, card_type, hazard_side
from friday13_env.friday.state import Fight, State


def slot_values(fight: Fight) -> list[int]:
    """Fighting points of each table slot, with doubling, face-down cards and »highest card = 0«.

    Each face-up »scared« card sets the highest *unchanged* positive card to 0: doubled and face-down
    cards are changed, so they are never picked, and with several scared cards each picks the highest
    remaining one (ties: the first such slot; the total is the same either way).
    """
    values = []
    for slot in fight.table:
        value = 0 if slot.face_down else card_type(slot.card).value
        values.append(2 * value if slot.doubled else value)
    scared = sum(1 for s in fight.table if not s.face_down and card_type(s.card).ability is Ability.HIGHEST_ZERO)
    zeroed: set[int] = set()
    for _ in range(scared):
        candidates = [
            i
            for i, s in enumerate(fight.table)
            if not s.face_down and not s.doubled and values[i] > 0 and i not in zeroed
        ]
        if not candidates:
            break
        best = max(candidates, key=lambda i: (values[i], -i))
        values[best] = 0
        zeroed.add(best)
    return values


def fight_total(fight: Fight) -> int:
    """Total fighting points against the current opponent, including the pirate special rules.

    »Only half count«: the best ``ceil(n/2)`` cards count, and every face-up aging card must be among
    them (if there are more aging cards than places, all of them still count); the player may leave
    places empty rather than fill them with negative cards. »+1 per card«: every table card, face-up
    or face-down, adds 1.
    """
    values = slot_values(fight)
    if fight.pirate_ability is PirateAbility.HALF_COUNT:
        places = (len(values) + 1) // 2
        forced = [v for v, s in zip(values, fight.table, strict=True) if card_type(s.card).is_aging and not s.face_down]
        others = sorted(
            (v for v, s in zip(values, fight.table, strict=True) if not card_type(s.card).is_aging or s.face_down),
            reverse=True,
        )
        return sum(forced) + sum(v for v in others[: max(0, places - len(forced))] if v > 0)
    total = sum(values)
    if fight.pirate_ability is PirateAbility.PLUS_ONE_PER_CARD:
        total += len(fight.table)
    return total


def effective_step(state: State) -> int:
    """Step whose hazard value applies: the current step lowered by »step -1« uses (not below green)."""
    assert state.fight is not None
    return max(0, state.step - state.fight.step_downs)


def fight_target(state: State) -> int:
    """Hazard value to reach in the current fight."""
    fight = state.fight
    assert fight is not None
    if fight.hazard < 0:
        return fight.pirate_value
    return hazard_side(fight.hazard).values[effective_step(state)]


def aging_life_cost(fight: Fight) -> int:
    """Life owed at the end of the fight by face-up »-1 life« / »-2 life« aging cards."""
    cost = 0
    for slot in fight.table:
        ability = card_type(slot.card).ability
        if not slot.face_down and ability is Ability.AGING_LIFE_1:
            cost += 1
        elif not slot.face_down and ability is Ability.AGING_LIFE_2:
            cost += 2
    return cost
