"""Typed game state for Friday: plain ``__slots__`` dataclasses with a cheap ``copy()``.

The state holds only data; the rules live in :mod:`friday13_env.friday.engine` and its helpers. Piles
are lists of card instance ids with the *top at index 0*. Keeping the RNG outside the state means a copy
can be explored with any generator (e.g. for search) without touching the original game.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from friday13_env.friday.cards import Ability, PirateAbility


class Phase(IntEnum):
    """The decision the player faces (the environment's action mask depends only on this and the state)."""

    CHOOSE_HAZARD = 0
    """Two hazard cards drawn: fight one, the other goes to the hazard discard pile."""
    LAST_HAZARD = 1
    """Only one hazard card was left: fight it or skip it."""
    CHOOSE_PIRATE = 2
    """Both pirates undefeated: choose which to fight first."""
    FIGHT = 3
    """Draw free cards, buy cards, activate abilities or end the fight."""
    TARGET = 4
    """An ability needs a target card on the table (destroy, double, copy, exchange, below)."""
    EXTRA_DRAW = 5
    """+2 cards: draw the second card or stop."""
    SORT_LOOK = 6
    """Sort 3 cards: look at another card, discard one of the looked-at cards, or keep them all."""
    SORT_ORDER = 7
    """Sort 3 cards: choose the next card from the top of the Robinson stack."""
    LOSS_DESTROY = 8
    """Fight lost on purpose: destroy played cards with the life points paid, or stop."""
    GAME_OVER = 9


NUM_PHASES = len(Phase)


@dataclass(slots=True)
class Slot:
    """One fighting card on the table during a fight, with what has happened to it."""

    card: int
    paid: bool
    """True for cards on the right side (bought with life or drawn by +cards); False for free cards."""
    used: bool = False
    """Its ability has been activated (the card is turned 90 degrees)."""
    face_down: bool = False
    """Destroyed by »1x destroy«: value 0, ability cancelled, removed from the game after the fight."""
    doubled: bool = False

    def copy(self) -> Slot:
        """Independent copy (slots are mutated in place by abilities)."""
        return Slot(self.card, self.paid, self.used, self.face_down, self.doubled)


@dataclass(slots=True)
class Fight:
    """A fight against a hazard card or a pirate."""

    hazard: int
    """Instance id of the hazard card fought, or -1 when fighting a pirate."""
    pirate: int
    """Index (0 or 1) into ``State.pirates`` when fighting a pirate, else -1."""
    free_total: int
    pirate_value: int
    """Hazard value of the pirate, fixed when the fight starts (unused for hazards)."""
    pirate_ability: PirateAbility = PirateAbility.NONE
    table: list[Slot] = field(default_factory=list)
    free_used: int = 0
    step_downs: int = 0

    def copy(self) -> Fight:
        """Independent copy including the table slots."""
        return Fight(
            self.hazard,
            self.pirate,
            self.free_total,
            self.pirate_value,
            self.pirate_ability,
            [s.copy() for s in self.table],
            self.free_used,
            self.step_downs,
        )


@dataclass(slots=True)
class Pending:
    """An ability in the middle of being resolved (rules: finish one ability before the next)."""

    ability: Ability
    source: int
    """Table slot of the card whose ability (possibly copied) is being used."""
    remaining: int = 1
    """Exchanges (2x exchange) or cards (+2 cards) still allowed."""
    optional: bool = False
    """True once the first part is done, so the player may stop (second exchange / second card)."""

    def copy(self) -> Pending:
        """Independent copy."""
        return Pending(self.ability, self.source, self.remaining, self.optional)


@dataclass(slots=True)
class State:
    """Everything about one game of Friday."""

    level: int
    life: int
    reserve: int
    step: int = 0
    """0 green, 1 yellow, 2 red, 3 pirates."""
    phase: Phase = Phase.CHOOSE_HAZARD
    robinson: list[int] = field(default_factory=list)
    discard: list[int] = field(default_factory=list)
    hidden: set[int] = field(default_factory=set)
    """Aging cards shuffled face down into the Robinson stack and not seen since."""
    known_top: int = 0
    """How many cards on top of the Robinson stack the player knows (after sort 3)."""
    known_bottom: int = 0
    """How many cards at the bottom of the Robinson stack the player knows (after »below the stack«)."""
    aging: list[int] = field(default_factory=list)
    aging_taken: int = 0
    """Aging cards taken from the aging stack so far (incl. the level 2+ set-up card)."""
    boxed: list[int] = field(default_factory=list)
    hazard_stack: list[int] = field(default_factory=list)
    hazard_discard: list[int] = field(default_factory=list)
    hazard_options: list[int] = field(default_factory=list)
    destroyed: list[int] = field(default_factory=list)
    pirates: list[int] = field(default_factory=list)
    pirates_defeated: list[bool] = field(default_factory=list)
    fight: Fight | None = None
    pending: Pending | None = None
    looked: list[int] = field(default_factory=list)
    """Sort 3: cards looked at and not yet put back."""
    placed: list[int] = field(default_factory=list)
    """Sort 3: cards already chosen to go back on the stack, top first."""
    loss_budget: int = 0
    won: bool | None = None
    """None while running, then True (both pirates beaten) or False."""

    def copy(self) -> State:
        """Independent copy; O(number of cards), cheap enough for rollouts."""
        return State(
            level=self.level,
            life=self.life,
            reserve=self.reserve,
            step=self.step,
            phase=self.phase,
            robinson=list(self.robinson),
            discard=list(self.discard),
            hidden=set(self.hidden),
            known_top=self.known_top,
            known_bottom=self.known_bottom,
            aging=list(self.aging),
            aging_taken=self.aging_taken,
            boxed=list(self.boxed),
            hazard_stack=list(self.hazard_stack),
            hazard_discard=list(self.hazard_discard),
            hazard_options=list(self.hazard_options),
            destroyed=list(self.destroyed),
            pirates=list(self.pirates),
            pirates_defeated=list(self.pirates_defeated),
            fight=None if self.fight is None else self.fight.copy(),
            pending=None if self.pending is None else self.pending.copy(),
            looked=list(self.looked),
            placed=list(self.placed),
            loss_budget=self.loss_budget,
            won=self.won,
        )

    @property
    def done(self) -> bool:
        """True once the game is won or lost."""
        return self.phase is Phase.GAME_OVER

    def all_zones(self) -> dict[str, list[int]]:
        """Every place a fighting card can be, for accounting checks (each card in exactly one)."""
        table = [] if self.fight is None else [s.card for s in self.fight.table]
        current = [] if self.fight is None or self.fight.hazard < 0 else [self.fight.hazard]
        return {
            "robinson": self.robinson,
            "discard": self.discard,
            "table": table,
            "current_hazard": current,
            "looked": self.looked + self.placed,
            "aging": self.aging,
            "boxed": self.boxed,
            "hazard_stack": self.hazard_stack,
            "hazard_discard": self.hazard_discard,
            "hazard_options": self.hazard_options,
            "destroyed": self.destroyed,
        }
