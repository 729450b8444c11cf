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

import functools
import itertools
import reprlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from friday13_env.core.checks import UNKNOWN_VALUE, check_choice

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
CARD_COUNT_DTYPE = np.int8
"""The dtype of the batched engine's card counts (hands, cards played, piles' cards, captured stacks): small, so a
step moves little memory. Its largest value bounds a deck (``MAX_CARDS_OF_A_TYPE``)."""
MAX_CARDS_OF_A_TYPE = int(np.iinfo(CARD_COUNT_DTYPE).max)
"""Most cards of one type (an omen type's, or Friday the 13th's) a deck may hold: one pile may hold them all, and one
seat capture them all in a round, so each count the batched engine keeps is at most this (more would wrap around)."""


def _int_in(value: object, least: int, most: float = float("inf")) -> bool:
    """Whether ``value`` is an int in ``least..most``: a Python int or a numpy integer (an array's entry), as every
    count of the package is taken, but not a bool (which Python counts as an int) nor a numpy bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool) and bool(least <= value <= most)


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
        """Refuse fields the rules cannot play (a ``ValueError`` naming the field and what it takes), then fill in
        the derived tables. Every card's value lies in ``0..CAPTURE_LIMIT``, so the card that restarts a captured
        pile is always a legal total (CONVENTIONS rule 5); the kinds are numbered by increasing value."""
        self._check()
        plain = {  # numpy integers stored as ints: a deck equals, hashes and prints as the same deck of ints
            "omen_values": tuple(int(value) for value in self.omen_values),
            "omen_copies": tuple(int(count) for count in self.omen_copies),
            "friday_count": int(self.friday_count),
            "friday_value": int(self.friday_value),
        }
        for name, value in plain.items():
            object.__setattr__(self, name, value)
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

    def _check(self) -> None:
        """The ``__post_init__`` checks, field by field in their order (a tuple's entries are checked one by one, so a
        bool or a float among ints is refused, and a list is refused for the tuple that keeps a deck hashable), then
        the cards of each type against ``MAX_CARDS_OF_A_TYPE``, past which the batched engine's counts would wrap."""
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a deck's name must be a non-empty str, got {reprlib.repr(self.name)}")
        values, copies = self.omen_values, self.omen_copies
        increasing = (
            isinstance(values, tuple)
            and len(values) > 0
            and all(_int_in(value, 0, CAPTURE_LIMIT) for value in values)
            and all(low < high for low, high in itertools.pairwise(values))
        )
        if not increasing:
            raise ValueError(
                f"deck {self.name!r}: omen_values must be a non-empty tuple of increasing ints in "
                f"0..{CAPTURE_LIMIT}, got {reprlib.repr(values)}"
            )
        if not (
            isinstance(copies, tuple) and len(copies) == len(values) and all(_int_in(count, 1) for count in copies)
        ):
            raise ValueError(
                f"deck {self.name!r}: omen_copies must be a tuple of ints >= 1, one per omen value ({len(values)}), "
                f"got {reprlib.repr(copies)}"
            )
        if not _int_in(self.friday_value, 0, CAPTURE_LIMIT):
            raise ValueError(
                f"deck {self.name!r}: friday_value must be an int in 0..{CAPTURE_LIMIT}, got {self.friday_value!r}"
            )
        if not _int_in(self.friday_count, 0):
            raise ValueError(f"deck {self.name!r}: friday_count must be an int >= 0, got {self.friday_count!r}")
        limit = (
            f"at most {MAX_CARDS_OF_A_TYPE} cards of a type are allowed (the batched engine counts them as "
            f"{np.dtype(CARD_COUNT_DTYPE).name})"
        )
        per_type = sum(int(count) for count in copies)  # as ints: a sum of numpy int8 counts would wrap
        if per_type > MAX_CARDS_OF_A_TYPE:
            raise ValueError(f"deck {self.name!r}: omen_copies sum to {per_type} cards per omen type; {limit}")
        if self.friday_count > MAX_CARDS_OF_A_TYPE:
            raise ValueError(f"deck {self.name!r}: friday_count is {self.friday_count} cards; {limit}")

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
    """Look a deck up by name: ``as_deck``, the one lookup, so an unknown name (or ``None``, bytes, a list) is its
    ``ValueError`` listing the names, never a ``TypeError`` from the lookup."""
    return as_deck(name)


def as_deck(deck: Deck | str, whose: str | None = None) -> Deck:
    """A deck given either way the package takes one: a ``Deck`` as it is, or a deck's name (as every environment
    takes it). Anything else is a ``ValueError`` listing the names, prefixed with ``whose`` deck it was
    (``"batched agent 'x'"``) when given. The one reading of such an argument, wherever a deck may come either way."""
    if isinstance(deck, Deck):
        return deck
    if isinstance(deck, str) and deck in DECKS:
        return DECKS[deck]
    prefix = "" if whose is None else f"{whose}: "
    raise ValueError(f"{prefix}unknown deck {reprlib.repr(deck)}; allowed values: {sorted(DECKS)} (or a Deck)")


def check_deck_name(deck: object) -> None:
    """A ``ValueError`` unless ``deck`` is a deck's name, as the environments take it (their options are strings,
    as ``gymnasium.make`` passes them); a ``Deck`` object is told to pass its name."""
    if isinstance(deck, Deck):
        got = f"deck must be a deck's name, one of {sorted(DECKS)}, got the Deck {deck.name!r} itself"
        if DECKS.get(deck.name) == deck:
            raise ValueError(f"{got}: pass deck={deck.name!r}")
        raise ValueError(f"{got}; a deck that is not one of these plays in the batched engine (GameBatch)")
    check_choice("deck", deck, DECKS, UNKNOWN_VALUE)


Result = TypeVar("Result")


def deck_cache(function: Callable[[Deck], Result]) -> Callable[[Deck | str], Result]:
    """``functools.cache`` for a function of one deck, taking the deck either way (``as_deck``). The deck is read
    before the cache sees it: ``"standard"`` and ``STANDARD_DECK`` share one entry (one object back, built once), and
    what is no deck is ``as_deck``'s ``ValueError`` listing the names, not a ``TypeError`` from hashing a list or an
    ``AttributeError`` from a name's missing fields. The one way the encoding's layouts and features take a deck."""
    cached = functools.cache(function)

    @functools.wraps(function)
    def by_deck(deck: Deck | str) -> Result:
        return cached(as_deck(deck))

    return by_deck
