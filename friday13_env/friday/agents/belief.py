"""Rebuild a complete engine ``State`` from an observation, sampling what the player cannot know.

Agents see only the observation (the rulebook's open information), but reasoning with the engine's own
arithmetic and searching with its state machine need a ``State``. :func:`sample_state` builds one that
agrees with everything the observation shows and draws the rest from ``rng``: the order of the unknown
part of the Robinson stack, of the hazard stack and of the aging stack, and which of the unseen aging
cards were shuffled into the Robinson stack. This is a *determinisation*: ``encode(sample_state(obs))``
equals ``obs``, and every hidden arrangement consistent with it can be drawn.

Card instances of the same type are interchangeable, so each zone simply takes free instances of the
types it shows. The only cards the observation does not show are the boxed »very stupid« (levels 1-2)
and the sort-3 cards already placed back while ordering; both are the instances left over at the end.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from friday13_env.core.agent import Observation, checked_observation
from friday13_env.friday import engine, zones
from friday13_env.friday.actions import NUM_ACTIONS, SORT_SIZE
from friday13_env.friday.cards import (
    AGING_TYPES,
    CARD_TYPES,
    KNOWLEDGE_TYPES,
    NUM_ABILITIES,
    NUM_CARDS,
    NUM_PIRATES,
    TYPE_OF,
    VERY_STUPID_ID,
    Ability,
    PirateAbility,
)
from friday13_env.friday.encoding import CARD_FEATURES, MAX_FREE, MAX_HAZARD_VALUE, OBS_SIZE, decode
from friday13_env.friday.levels import LEVELS
from friday13_env.friday.state import Fight, Pending, Phase, Slot, State

_COPIES = np.array([t.copies for t in CARD_TYPES])
_FEATURE_TYPES: dict[tuple[int, bool, int], list[int]] = defaultdict(list)
for _t in CARD_TYPES:
    _FEATURE_TYPES[(_t.value, _t.is_aging, int(_t.ability))].append(_t.type_id)


def _count(x: float, scale: float) -> int:
    """Undo the normalisation of an integer quantity."""
    return int(np.rint(x * scale))


def _seen_types(features: np.ndarray) -> list[int]:
    """Card types a seen card's features (value, aging, ability) can belong to: genius and the 2-point
    weapon look alike and play alike; every other card is one type."""
    return _FEATURE_TYPES[(_count(features[1], 5), bool(features[2] > 0.5), int(np.argmax(features[3:CARD_FEATURES])))]


class _Instances:
    """Free card instances per type; zones take them as they are rebuilt."""

    def __init__(self) -> None:
        self.free: dict[int, list[int]] = defaultdict(list)
        for card in range(NUM_CARDS):
            self.free[TYPE_OF[card]].append(card)

    def take(self, type_id: int) -> int:
        if not self.free[type_id]:
            raise ValueError(f"observation shows more {CARD_TYPES[type_id].name!r} cards than exist")
        return self.free[type_id].pop()

    def take_counts(self, counts: np.ndarray, types: tuple[int, ...] | None = None) -> list[int]:
        """Instances for a per-type composition (normalised by the number of copies)."""
        ids = range(len(counts)) if types is None else types
        n = np.rint(np.asarray(counts) * _COPIES[list(ids)]).astype(int)
        return [self.take(t) for t, k in zip(ids, n, strict=True) for _ in range(k)]

    def take_seen(self, features: np.ndarray) -> int:
        """A free instance of a card shown by its features (either look-alike type will do)."""
        for type_id in _seen_types(features):
            if self.free[type_id]:
                return self.take(type_id)
        raise ValueError(f"observation shows a card {features.tolist()} with no free instance")

    def leftover(self) -> list[int]:
        return sorted(c for cards in self.free.values() for c in cards)


def _shown(block: np.ndarray) -> list[np.ndarray]:
    """The present rows of a block of card features."""
    return [row for row in block if row[0] > 0.5]


def sample_state(obs: np.ndarray, rng: np.random.Generator) -> State:
    """A full game state consistent with ``obs``, hidden orders drawn from ``rng`` (see the module doc)."""
    view = decode(np.asarray(obs, dtype=np.float32))
    counts = view["counts"]
    level = int(np.argmax(view["level"])) + 1
    state = State(level=level, life=_count(view["life"][0], 22), reserve=_count(view["life"][1], 22))
    state.step = int(np.argmax(view["step"]))
    state.phase = Phase(int(np.argmax(view["phase"])))
    state.aging_taken = _count(counts[6], 11)
    pool = _Instances()
    if not LEVELS[level].very_stupid:
        state.boxed = [pool.take(TYPE_OF[VERY_STUPID_ID])]

    known = pool.take_counts(view["robinson_counts"])
    state.discard = pool.take_counts(view["discard_counts"])
    state.destroyed = pool.take_counts(view["destroyed_counts"])
    state.hazard_stack = zones.shuffled(pool.take_counts(view["hazard_stack_counts"], KNOWLEDGE_TYPES), rng)
    state.hazard_discard = pool.take_counts(view["hazard_discard"], KNOWLEDGE_TYPES)
    unseen_aging = pool.take_counts(view["aging_pool"], AGING_TYPES)
    hidden = _split_aging(state, unseen_aging, _count(counts[5], 11), _count(counts[7], 8), rng)
    state.hidden = set(hidden)
    state.robinson = _robinson_stack(view, known, hidden, rng)
    state.known_top = len(_shown(view["top"]))
    state.known_bottom = len(_shown(view["bottom"]))

    options = view["options"]
    state.hazard_options = [
        pool.take(KNOWLEDGE_TYPES[int(np.argmax(row[1 : 1 + len(KNOWLEDGE_TYPES)]))]) for row in options if row[0] > 0.5
    ]
    _pirates(state, view)
    _fight(state, view, pool)
    looked = view["looked"]
    state.looked = [pool.take_seen(row) for row in _shown(looked[:-1].reshape(SORT_SIZE, CARD_FEATURES))]
    placed = _count(looked[-1], SORT_SIZE)
    rest = pool.leftover()
    if len(rest) != placed:
        raise ValueError(f"observation leaves {len(rest)} cards unaccounted for, expected {placed}")
    state.placed = [int(c) for c in rng.permutation(rest)] if rest else []
    if state.phase is Phase.GAME_OVER:
        state.won = bool(all(state.pirates_defeated))
    return state


def observed_state(observation: Observation, rng: np.random.Generator, agent: str) -> tuple[State, np.ndarray]:
    """What an agent that reasons on a complete state starts from: the observation dict checked
    (``checked_observation``), a state sampled from it (:func:`sample_state`) and the legal actions of the mask.

    A mask that is not the observation's own (its legal actions are not those of the position the vector shows) is a
    ``ValueError`` naming ``agent`` and both sets of actions, before any search: the agent's move would otherwise be
    legal in the position and not in the mask, or the other way round."""
    vector, legal = checked_observation(observation, OBS_SIZE, NUM_ACTIONS, agent)
    state = sample_state(vector, rng)
    shown = engine.legal_actions(state)
    if shown != legal.tolist():
        raise ValueError(
            f"{agent}: the action mask (legal {legal.tolist()}) does not match the observation, whose position allows "
            f"{shown}; give the mask that came with the observation (observation_dict(obs, info))"
        )
    return state, legal


def _split_aging(
    state: State, unseen: list[int], stack_size: int, normal_left: int, rng: np.random.Generator
) -> list[int]:
    """Deal the unseen aging cards between the aging stack (normal ones on top) and the Robinson stack.

    The aging stack was shuffled per group, so any split with the right number of normal and difficult
    cards in the stack is equally likely. Returns the cards hidden in the Robinson stack.
    """
    normal = zones.shuffled([c for c in unseen if not CARD_TYPES[TYPE_OF[c]].difficult], rng)
    difficult = zones.shuffled([c for c in unseen if CARD_TYPES[TYPE_OF[c]].difficult], rng)
    difficult_left = stack_size - normal_left
    state.aging = normal[:normal_left] + difficult[:difficult_left]
    return normal[normal_left:] + difficult[difficult_left:]


def _robinson_stack(
    view: dict[str, np.ndarray], known: list[int], hidden: list[int], rng: np.random.Generator
) -> list[int]:
    """Known top cards, then the rest (with the hidden aging cards) shuffled, then the known bottom cards."""
    rest = list(known)

    def pick(features: np.ndarray) -> int:
        card = next(c for c in rest if TYPE_OF[c] in _seen_types(features))
        rest.remove(card)
        return card

    top = [pick(row) for row in _shown(view["top"])]
    bottom = [pick(row) for row in _shown(view["bottom"])][::-1]
    return top + zones.shuffled(rest + hidden, rng) + bottom


def _pirates(state: State, view: dict[str, np.ndarray]) -> None:
    """The two pirate cards and which are beaten."""
    rows = view["pirates"]
    state.pirates = [int(np.argmax(row[:NUM_PIRATES])) for row in rows]
    state.pirates_defeated = [bool(row[NUM_PIRATES] > 0.5) for row in rows]


def _fight(state: State, view: dict[str, np.ndarray], pool: _Instances) -> None:
    """The running fight: opponent, counters, table slots, pending ability and loss budget."""
    fight = view["fight"]
    if fight[0] < 0.5:
        return
    k = len(KNOWLEDGE_TYPES)
    ability = PirateAbility(int(np.argmax(fight[2 + k : 2 + k + len(PirateAbility)])))
    free_total, free_used, _stop, _cost, step_downs, target, _total, _win, _deficit, budget = fight[
        2 + k + len(PirateAbility) :
    ]
    free_total_n, target_n = _count(free_total, MAX_FREE), _count(target, MAX_HAZARD_VALUE)
    if fight[1] > 0.5:
        rows = view["pirates"]
        undefeated = [i for i, row in enumerate(rows) if row[NUM_PIRATES] < 0.5]
        matching = [
            i
            for i in undefeated
            if _count(rows[i][NUM_PIRATES + 1], MAX_FREE) == free_total_n
            and _count(rows[i][NUM_PIRATES + 2], MAX_HAZARD_VALUE) == target_n
        ]
        index = (matching or undefeated)[0]
        state.fight = Fight(
            hazard=-1, pirate=index, free_total=free_total_n, pirate_value=target_n, pirate_ability=ability
        )
    else:
        hazard = pool.take(KNOWLEDGE_TYPES[int(np.argmax(fight[2 : 2 + k]))])
        state.fight = Fight(hazard=hazard, pirate=-1, free_total=free_total_n, pirate_value=0)
    state.fight.free_used = _count(free_used, MAX_FREE)
    state.fight.step_downs = _count(step_downs, 3)
    state.loss_budget = _count(budget, 22)
    source = -1
    for i, row in enumerate(view["slots"]):
        if row[0] < 0.5:
            break
        flags = row[CARD_FEATURES:]
        paid, used, face_down, doubled = (bool(f > 0.5) for f in flags[:4])
        state.fight.table.append(Slot(pool.take_seen(row), paid, used, face_down, doubled))
        if flags[6] > 0.5:
            source = i
    pending = view["pending"]
    if pending[:NUM_ABILITIES].max() > 0.5:
        state.pending = Pending(
            Ability(int(np.argmax(pending[:NUM_ABILITIES]))),
            source,
            remaining=_count(pending[-2], 2),
            optional=bool(pending[-1] > 0.5),
        )


def redeal(state: State, rng: np.random.Generator) -> None:
    """Redraw, in place, everything about ``state`` the player cannot know (a fresh determinisation).

    The unknown middle of the Robinson stack is reshuffled after the hidden aging cards are dealt anew
    from the unseen ones (keeping the aging stack's counts of normal and difficult cards), and the hazard
    stack is reshuffled. Known top and bottom cards stay where they are.
    """
    hidden = sorted(state.hidden)
    unseen = state.aging + hidden
    normal_left = sum(1 for c in state.aging if not CARD_TYPES[TYPE_OF[c]].difficult)
    new_hidden = _split_aging(state, unseen, len(state.aging), normal_left, rng)
    stack = state.robinson
    end = len(stack) - state.known_bottom
    middle = [c for c in stack[state.known_top : end] if c not in state.hidden] + new_hidden
    state.robinson = stack[: state.known_top] + zones.shuffled(middle, rng) + stack[end:]
    state.hidden = set(new_hidden)
    state.hazard_stack = zones.shuffled(state.hazard_stack, rng)
