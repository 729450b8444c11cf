"""Observation layout of Friday: a flat float32 vector in [-1, 1] and a decoder into named views.

The rulebook says Friday is not a memory game, so the observation holds everything the player may
know: all counts and discard piles, the destroyed cards, the *composition* of the face-down Robinson
and hazard stacks (deducible from the open information), the cards whose position on the Robinson
stack is known (after »sort 3 cards« / »below the stack«), the pool the unseen aging cards come from,
and the full fight. Derived quantities (current total, hazard value, deficit) are included because
they are cheap to compute exactly and hard for a network to learn.

Blocks, in order: ``OBSERVATION_LAYOUT`` names each one, its shape and what it holds; :func:`decode` gives
named views of an observation.
"""

from __future__ import annotations

import numpy as np

from friday13_env.core.layout import Block, Layout
from friday13_env.friday.actions import MAX_SLOTS, SORT_SIZE
from friday13_env.friday.cards import (
    AGING_TYPES,
    CARD_TYPES,
    KNOWLEDGE_TYPES,
    NUM_ABILITIES,
    NUM_CARDS,
    NUM_PIRATE_ABILITIES,
    NUM_PIRATES,
    NUM_TYPES,
    PIRATES,
    TYPE_OF,
    card_type,
    hazard_side,
)
from friday13_env.friday.engine import buy_cost, pirate_terms, stop_active
from friday13_env.friday.state import NUM_PHASES, State
from friday13_env.friday.strength import fight_target, fight_total, slot_values

KNOWN_TOP = 3
KNOWN_BOTTOM = 6
CARD_FEATURES = 3 + NUM_ABILITIES
SLOT_FEATURES = CARD_FEATURES + 7
OPTION_FEATURES = 1 + len(KNOWLEDGE_TYPES) + 2
PIRATE_FEATURES = NUM_PIRATES + 3
FIGHT_FEATURES = 2 + len(KNOWLEDGE_TYPES) + NUM_PIRATE_ABILITIES + 10
MAX_HAZARD_VALUE = 200.0
MAX_FREE = 70.0
MAX_TOTAL = 150.0

OBSERVATION_LAYOUT = Layout(
    [
        Block("life", (2,), "life / 22, reserve / 22"),
        Block("level", (4,), "one-hot of levels 1-4"),
        Block("step", (4,), "one-hot of green, yellow, red, pirates"),
        Block("phase", (NUM_PHASES,), "one-hot of :class:`~friday13_env.friday.state.Phase`"),
        Block(
            "counts",
            (9,),
            (
                "Robinson stack, discard, destroyed / 59; hazard stack, hazard discard / 30; aging stack / 11, "
                "aging cards taken / 11, normal aging cards still in the aging stack / 8, unseen aging cards in "
                "the Robinson stack / 11"
            ),
        ),
        Block(
            "options",
            (2, OPTION_FEATURES),
            "2 x hazard card offered: present, knowledge type one-hot (24), free / 5, value in the current step / 14",
        ),
        Block(
            "pirates",
            (2, PIRATE_FEATURES),
            (
                "2 x: pirate one-hot (10), defeated, free cards / 70, hazard value / 200 (as it would be if its "
                "fight started now; fixed once it has started)"
            ),
        ),
        Block(
            "fight",
            (FIGHT_FEATURES,),
            (
                "active, vs pirate, hazard knowledge type one-hot (24), pirate ability one-hot (6), free total / "
                "70, free used / 70, stop showing, buy cost / 2, step -1 uses / 3, target / 200, total / 150, "
                "winning, deficit / 200 (clipped), loss budget / 22"
            ),
        ),
        Block(
            "slots",
            (MAX_SLOTS, SLOT_FEATURES),
            (
                "59 x table slot: present, value / 5, aging, ability one-hot (17), right side, used, face down, "
                "doubled, points after doubling and »highest = 0« / 10, destroy cost / 2, is the pending "
                "ability's source"
            ),
        ),
        Block("pending", (NUM_ABILITIES + 2,), "pending ability one-hot (17), remaining / 2, optional"),
        Block(
            "looked",
            (SORT_SIZE * CARD_FEATURES + 1,),
            (
                "3 x card looked at (sort 3): present, value / 5, aging, ability one-hot (17); then cards already"
                " placed back on top / 3"
            ),
        ),
        Block(
            "top",
            (KNOWN_TOP, CARD_FEATURES),
            "3 x known card on top of the Robinson stack (top first), same card features",
        ),
        Block(
            "bottom",
            (KNOWN_BOTTOM, CARD_FEATURES),
            "6 x known card at the bottom of the Robinson stack (bottom-most first)",
        ),
        Block("robinson_counts", (NUM_TYPES,), "known Robinson stack composition per card type / copies (38)"),
        Block("discard_counts", (NUM_TYPES,), "Robinson discard pile per card type / copies (38)"),
        Block("destroyed_counts", (NUM_TYPES,), "destroyed cards per card type / copies (38)"),
        Block(
            "aging_pool",
            (len(AGING_TYPES),),
            "aging cards not yet seen (aging stack + unseen in the Robinson stack) per aging type / copies (9)",
        ),
        Block(
            "hazard_stack_counts", (len(KNOWLEDGE_TYPES),), "hazard stack composition per knowledge type / copies (24)"
        ),
        Block("hazard_discard", (len(KNOWLEDGE_TYPES),), "hazard discard pile per knowledge type / copies (24)"),
    ]
)
"""The observation's blocks, in order, with what each holds (``OBSERVATION_LAYOUT.describe()``: a Markdown table)."""
OBS_SIZE = OBSERVATION_LAYOUT.size
_KNOWLEDGE_INDEX = {t: i for i, t in enumerate(KNOWLEDGE_TYPES)}
_COPIES = np.array([t.copies for t in CARD_TYPES], dtype=np.float32)


def decode(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named views (not copies) of an observation, shaped as in ``OBSERVATION_LAYOUT``."""
    return OBSERVATION_LAYOUT.views(obs)


def friday13_features(card: int) -> np.ndarray:
    """present, value / 5, aging, ability one-hot: what a player sees on a fighting card."""
    t = card_type(card)
    out = np.zeros(CARD_FEATURES, dtype=np.float32)
    out[0], out[1], out[2] = 1.0, t.value / 5.0, float(t.is_aging)
    out[3 + int(t.ability)] = 1.0
    return out


def _type_counts(cards: list[int], types: tuple[int, ...] | None = None) -> np.ndarray:
    """Counts per card type (all types, or the listed ones), each divided by the number of copies."""
    counts = np.bincount([TYPE_OF[c] for c in cards], minlength=NUM_TYPES).astype(np.float32) / _COPIES
    return counts if types is None else counts[list(types)]


def encode(state: State) -> np.ndarray:
    """The observation vector of ``state`` (see the module docstring for the layout)."""
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    view = decode(obs)
    view["life"][:] = (state.life / 22.0, state.reserve / 22.0)
    view["level"][state.level - 1] = 1.0
    view["step"][state.step] = 1.0
    view["phase"][int(state.phase)] = 1.0
    normal_left = sum(1 for c in state.aging if not card_type(c).difficult)
    view["counts"][:] = (
        len(state.robinson) / NUM_CARDS,
        len(state.discard) / NUM_CARDS,
        len(state.destroyed) / NUM_CARDS,
        len(state.hazard_stack) / 30.0,
        len(state.hazard_discard) / 30.0,
        len(state.aging) / 11.0,
        state.aging_taken / 11.0,
        normal_left / 8.0,
        len(state.hidden) / 11.0,
    )
    _encode_options(state, view["options"])
    _encode_pirates(state, view["pirates"])
    _encode_fight(state, view)
    _encode_piles(state, view)
    return obs


def _encode_options(state: State, out: np.ndarray) -> None:
    """The hazard card(s) offered for choice."""
    step = min(state.step, 2)
    for row, card in zip(out, state.hazard_options, strict=False):
        side = hazard_side(card)
        row[0] = 1.0
        row[1 + _KNOWLEDGE_INDEX[TYPE_OF[card]]] = 1.0
        row[-2:] = (side.free / 5.0, side.values[step] / 14.0)


def _encode_pirates(state: State, out: np.ndarray) -> None:
    """The two pirates, their status and their current terms."""
    fight = state.fight
    for index, (row, pirate_id) in enumerate(zip(out, state.pirates, strict=True)):
        if fight is not None and fight.pirate == index:
            free, value = fight.free_total, fight.pirate_value
        else:
            free, value = pirate_terms(state, PIRATES[pirate_id])
        row[pirate_id] = 1.0
        row[NUM_PIRATES:] = (float(state.pirates_defeated[index]), free / MAX_FREE, value / MAX_HAZARD_VALUE)


def _encode_fight(state: State, view: dict[str, np.ndarray]) -> None:
    """The current fight, its table, the pending ability and sort-3 cards."""
    fight = state.fight
    if fight is None:
        return
    out = view["fight"]
    out[0], out[1] = 1.0, float(fight.hazard < 0)
    if fight.hazard >= 0:
        out[2 + _KNOWLEDGE_INDEX[TYPE_OF[fight.hazard]]] = 1.0
    base = 2 + len(KNOWLEDGE_TYPES)
    out[base + int(fight.pirate_ability)] = 1.0
    total, target = fight_total(fight), fight_target(state)
    out[base + NUM_PIRATE_ABILITIES :] = (
        fight.free_total / MAX_FREE,
        fight.free_used / MAX_FREE,
        float(stop_active(fight)),
        buy_cost(fight) / 2.0,
        fight.step_downs / 3.0,
        target / MAX_HAZARD_VALUE,
        np.clip(total / MAX_TOTAL, -1.0, 1.0),
        float(total >= target),
        np.clip((target - total) / MAX_HAZARD_VALUE, -1.0, 1.0),
        min(state.loss_budget / 22.0, 1.0),
    )
    values = slot_values(fight)
    source = -1 if state.pending is None else state.pending.source
    for i, slot in enumerate(fight.table):
        row = view["slots"][i]
        row[:CARD_FEATURES] = friday13_features(slot.card)
        row[CARD_FEATURES:] = (
            float(slot.paid),
            float(slot.used),
            float(slot.face_down),
            float(slot.doubled),
            values[i] / 10.0,
            card_type(slot.card).destroy_cost / 2.0,
            float(i == source),
        )
    if state.pending is not None:
        pending = view["pending"]
        pending[int(state.pending.ability)] = 1.0
        pending[-2:] = (state.pending.remaining / 2.0, float(state.pending.optional))
    looked = view["looked"]
    for k, card in enumerate(state.looked):
        looked[k * CARD_FEATURES : (k + 1) * CARD_FEATURES] = friday13_features(card)
    looked[-1] = len(state.placed) / SORT_SIZE


def _encode_piles(state: State, view: dict[str, np.ndarray]) -> None:
    """Pile compositions and the known positions in the Robinson stack."""
    stack = state.robinson
    for k, card in enumerate(stack[: min(state.known_top, KNOWN_TOP)]):
        view["top"][k] = friday13_features(card)
    bottom = stack[len(stack) - state.known_bottom :][::-1] if state.known_bottom else []
    for k, card in enumerate(bottom[:KNOWN_BOTTOM]):
        view["bottom"][k] = friday13_features(card)
    view["robinson_counts"][:] = _type_counts([c for c in stack if c not in state.hidden])
    view["discard_counts"][:] = _type_counts(state.discard)
    view["destroyed_counts"][:] = _type_counts(state.destroyed)
    view["aging_pool"][:] = _type_counts(state.aging + sorted(state.hidden), AGING_TYPES)
    view["hazard_stack_counts"][:] = _type_counts(state.hazard_stack, KNOWLEDGE_TYPES)
    view["hazard_discard"][:] = _type_counts(state.hazard_discard, KNOWLEDGE_TYPES)
