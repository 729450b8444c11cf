"""Card data for Friday the 13th: the two decks, card kinds and the action numbering.

Everything downstream (engine, encoding, environment, agents) speaks in *card kinds*, small integers
that identify a card up to identical copies. With ``V`` distinct omen values (5 for the standard
deck, 6 for the German one) kind ``t*V + i`` is the omen card of type ``t`` (0 black cat,
1 broken mirror, 2 ladder) with the ``i``-th smallest value, and kind ``3*V`` is Friday the 13th.

Actions reuse the same numbering on purpose: action ``t*V + i`` plays omen kind ``t*V + i`` on its
own pile, and action ``3*V + p`` plays a Friday the 13th card on pile ``p``. So the first ``3*V``
actions and the first ``3*V`` hand counts line up one to one, which keeps masks trivially cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OMEN_TYPES: tuple[str, ...] = ("cat", "mirror", "ladder")
"""Short names of the three omen types, in type order (also the pile order)."""

OMEN_TYPE_NAMES: tuple[str, ...] = ("black cat", "broken mirror", "ladder")
NUM_PILES = 3
FRIDAY_TYPE = 3
"""Type index used for Friday the 13th cards wherever cards are counted by type."""
NUM_TYPES = 4
CAPTURE_LIMIT = 13
"""A pile whose total exceeds this after a play is captured (a total of exactly 13 is safe)."""
FRIDAY_POINTS = 2
OMEN_POINTS = 1


@dataclass(frozen=True)
class Deck:
    """One edition's deck: which omen values exist, how many copies, and the Friday cards.

    Frozen and hashable so it can sit inside configurations that are compared and pickled.
    """

    name: str
    omen_values: tuple[int, ...]
    omen_copies: tuple[int, ...]
    """Copies of each omen value *per omen type*, aligned with ``omen_values``."""
    friday_count: int = 8
    friday_value: int = 4
    # Derived tables and sizes, filled in __post_init__ so the hot paths read plain attributes.
    kind_values: tuple[int, ...] = field(init=False, repr=False)
    kind_types: tuple[int, ...] = field(init=False, repr=False)
    kind_counts: tuple[int, ...] = field(init=False, repr=False)
    num_values: int = field(init=False, repr=False)
    """``V``: the number of distinct omen values."""
    num_kinds: int = field(init=False, repr=False)
    """``3*V + 1`` card kinds: every omen kind, then Friday the 13th."""
    friday_kind: int = field(init=False, repr=False)
    """``3*V``: the kind (and first action) of Friday the 13th."""
    num_actions: int = field(init=False, repr=False)
    """``3*V + 3``: one action per omen kind, then one per pile for a Friday card."""
    size: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        num_values = len(self.omen_values)
        derived = {
            "kind_values": (*self.omen_values * NUM_PILES, self.friday_value),
            "kind_types": (*(t for t in range(NUM_PILES) for _ in self.omen_values), FRIDAY_TYPE),
            "kind_counts": (*self.omen_copies * NUM_PILES, self.friday_count),
            "num_values": num_values,
            "num_kinds": NUM_PILES * num_values + 1,
            "friday_kind": NUM_PILES * num_values,
            "num_actions": NUM_PILES * num_values + NUM_PILES,
            "size": sum(self.omen_copies) * NUM_PILES + self.friday_count,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    def kind_name(self, kind: int) -> str:
        """Human-readable card name, e.g. ``"cat 7"`` or ``"f13"``."""
        if kind == self.friday_kind:
            return "f13"
        return f"{OMEN_TYPES[self.kind_types[kind]]} {self.kind_values[kind]}"

    def action_kind_and_pile(self, action: int) -> tuple[int, int]:
        """Which card kind an action plays, and on which pile."""
        friday = self.friday_kind
        if action < friday:
            return action, action // self.num_values
        return friday, action - friday

    def action_name(self, action: int) -> str:
        """Human-readable action, e.g. ``"cat 7"`` or ``"f13 mirror"``."""
        kind, pile = self.action_kind_and_pile(action)
        if kind == self.friday_kind:
            return f"f13 {OMEN_TYPES[pile]}"
        return self.kind_name(kind)


STANDARD_DECK = Deck(name="standard", omen_values=(1, 2, 4, 5, 7), omen_copies=(3, 3, 2, 3, 3))
"""English and French editions: 50 cards."""

GERMAN_DECK = Deck(name="german", omen_values=(0, 1, 2, 4, 5, 7), omen_copies=(1, 3, 3, 2, 3, 3))
"""German edition: the standard deck plus one 0 card per omen type, 53 cards."""

DECKS: dict[str, Deck] = {deck.name: deck for deck in (STANDARD_DECK, GERMAN_DECK)}


def get_deck(name: str) -> Deck:
    """Look a deck up by name, with an error that lists the allowed names."""
    try:
        return DECKS[name]
    except KeyError:
        raise ValueError(f"unknown deck {name!r}; allowed values: {sorted(DECKS)}") from None
