"""The flat action table of Friday (shared by the engine, the environment, the agents and the docs).

The first five ids are *phase-relative*: their meaning depends on the decision being taken (the phase),
which keeps the table small and makes id 0 mean "go on" everywhere (the first hazard, a free card, ...).

=================  =======  ==========================================================================
action             ids      meaning, by phase
=================  =======  ==========================================================================
PRIMARY            0        CHOOSE_HAZARD: fight hazard A (B goes to the hazard discard pile);
                            LAST_HAZARD: fight the single last hazard; CHOOSE_PIRATE: fight pirate A
                            first; FIGHT: draw a free card; EXTRA_DRAW: draw the 2nd card of »+2
                            cards«; SORT_LOOK: look at one more card
SECONDARY          1        CHOOSE_HAZARD: fight hazard B; CHOOSE_PIRATE: fight pirate B first
BUY                2        FIGHT: draw a card for 1 life point (2 against that pirate)
END_FIGHT          3        FIGHT: compare the points and end the fight
DONE               4        LAST_HAZARD: skip the last hazard; EXTRA_DRAW: no 2nd card; TARGET: no
                            2nd exchange; SORT_LOOK: keep all looked-at cards; LOSS_DESTROY: stop
                            destroying cards
SORT_DISCARD_k     5-7      SORT_LOOK: discard the k-th looked-at card, then order the rest
SORT_TOP_k         8-10     SORT_ORDER: the k-th remaining looked-at card is the next from the top
ACTIVATE_i         11-69    FIGHT: use the ability of the card in table slot i
TARGET_j           70-128   TARGET: table slot j is the target of the pending ability;
                            LOSS_DESTROY: destroy the card in table slot j
=================  =======  ==========================================================================

There are at most 59 fighting cards, so 59 table slots make every legal decision representable.
The aliases below (``HAZARD_A``, ``DRAW_FREE``, ``SKIP_LAST``, ...) name the phase-specific meanings.
"""

from __future__ import annotations

from friday13_env.friday.cards import NUM_CARDS
from friday13_env.friday.state import Phase

MAX_SLOTS = NUM_CARDS
"""Table slots: no fight can have more cards on the table than there are fighting cards."""
SORT_SIZE = 3

PRIMARY = 0
SECONDARY = 1
BUY = 2
END_FIGHT = 3
DONE = 4
HAZARD_A = FIGHT_LAST = PIRATE_A = DRAW_FREE = CONTINUE = PRIMARY
HAZARD_B = PIRATE_B = SECONDARY
SKIP_LAST = DONE
SORT_DISCARD = 5
SORT_TOP = SORT_DISCARD + SORT_SIZE
ACTIVATE = SORT_TOP + SORT_SIZE
TARGET = ACTIVATE + MAX_SLOTS
NUM_ACTIONS = TARGET + MAX_SLOTS

_PHASE_NAMES: dict[Phase, dict[int, str]] = {
    Phase.CHOOSE_HAZARD: {HAZARD_A: "fight hazard A", HAZARD_B: "fight hazard B"},
    Phase.LAST_HAZARD: {FIGHT_LAST: "fight the last hazard", SKIP_LAST: "skip the last hazard"},
    Phase.CHOOSE_PIRATE: {PIRATE_A: "fight pirate A first", PIRATE_B: "fight pirate B first"},
    Phase.FIGHT: {DRAW_FREE: "draw a free card"},
    Phase.EXTRA_DRAW: {CONTINUE: "draw the second card", DONE: "no second card"},
    Phase.TARGET: {DONE: "no second exchange"},
    Phase.SORT_LOOK: {CONTINUE: "look at one more card", DONE: "keep all looked-at cards"},
    Phase.LOSS_DESTROY: {DONE: "stop destroying"},
}
"""The phase-specific meaning of the phase-relative ids, by phase."""

_NAMES = {
    PRIMARY: "primary",
    SECONDARY: "secondary",
    BUY: "buy a card",
    END_FIGHT: "end the fight",
    DONE: "done",
}


def action_name(action: int, phase: Phase | None = None) -> str:
    """Readable name of an action id, e.g. ``activate slot 3``; more specific when ``phase`` is given."""
    if phase is not None and action in _PHASE_NAMES.get(phase, {}):
        return _PHASE_NAMES[phase][action]
    if action in _NAMES:
        return _NAMES[action]
    for base, label, count in (
        (SORT_DISCARD, "discard looked-at card", SORT_SIZE),
        (SORT_TOP, "next on top: looked-at card", SORT_SIZE),
        (ACTIVATE, "activate slot", MAX_SLOTS),
        (TARGET, "target slot", MAX_SLOTS),
    ):
        if base <= action < base + count:
            return f"{label} {action - base}"
    raise ValueError(f"action {action} out of range; allowed 0..{NUM_ACTIONS - 1}")
