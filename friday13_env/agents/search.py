"""``search``: determinised Monte-Carlo search over the rest of the round.

Each decision samples *worlds*: the unseen cards are dealt at random into the other hands (and the
dummy hand at 3 players), consistent with every hand size, and the position is rebuilt as an engine
state with ``engine.from_hands``. Every legal move is then played in every world and the round is
rolled out to its end by a fast policy working directly on the engine state (``majority``'s
rules: clean piles of a type taken on purpose, otherwise the highest safe card, otherwise the
cheapest capture); the move with the best mean outcome is played. All moves share the same worlds (common random
numbers), so their comparison is not drowned by the luck of the deal.

The world is built in *relative* seats, like the observation: the observer is seat 0 and moves
first, so ``from_hands``' turn-order check holds by construction. Captured cards are kept by
type, exactly as the observation shows them; a pile is rebuilt from its composition (only its
total and its cards matter, not their order).

The budget is a number of simulated card plays per decision, not a wall-clock limit, so the agent
is reproducible for a seed: early in a round rollouts are long and fewer worlds fit, late in a round
the same budget buys many more worlds, where decisions are sharpest.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from friday13_env.agents.base import Observation
from friday13_env.agents.heuristics import CLEAN_KEEP_MIN, CLEAN_OPEN_MIN
from friday13_env.agents.table import Table
from friday13_env.cards import CAPTURE_LIMIT, FRIDAY_POINTS, NUM_PILES, OMEN_POINTS, Deck
from friday13_env.engine import GameState, Rules, from_hands

DEFAULT_BUDGET = 22_000
"""Simulated card plays per decision: measured 49 ms of CPU per move (4 players, 2-core dev machine)."""

WORLD_OVERHEAD = 4
"""Cost of sampling one world, in simulated plays (measured: a sample is a few plays' worth of time)."""

OBJECTIVES = {
    "rank": "before the last round as 'relative'; in the last round the share of the win (ties split)",
    "relative": "the mean round points of the others minus the observer's own",
}
TIEBREAK = 1e-4
"""Weight of the relative points next to the win share, so that a lost (or won) last round is
still played for the fewest points instead of by action order."""


class SearchAgent:
    """Determinised Monte-Carlo search; see the module docstring for the method.

    Options: ``budget`` (simulated card plays per decision, at least one world per move is always
    played), ``objective`` (one of ``OBJECTIVES``).

    Measured (4 players, default budget, 50 duplicate deals x 4 seats, shared wins split; see
    ``docs/agents.md``): wins 0.620 ± 0.067 against 3 ``cautious`` and 0.655 ± 0.065 against 3
    ``majority``, where an equal seat wins 0.25.
    """

    name = "search"

    def __init__(self, seed: int | None = None, *, budget: int = DEFAULT_BUDGET, objective: str = "rank") -> None:
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
            raise ValueError(f"search option budget must be a positive int (simulated plays per move), got {budget!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown search objective {objective!r}; allowed values: {sorted(OBJECTIVES)}")
        self.rng = np.random.default_rng(seed)
        self.budget = int(budget)
        self.objective = objective

    def act(self, observation: Observation) -> int:
        table = Table.read(observation)
        if len(table.legal) == 1:
            return table.legal[0]
        return self.search(table)[0]

    def search(self, table: Table) -> tuple[int, dict[int, float]]:
        """The chosen action and every legal action's mean outcome (higher is better)."""
        # A world costs one rollout per legal move, plus about WORLD_OVERHEAD plays' worth of sampling
        # and copying, which dominates late in a round when rollouts are short.
        per_world = len(table.legal) * (sum(table.hand_sizes) + 1) + WORLD_OVERHEAD
        worlds = max(1, self.budget // per_world)
        totals = dict.fromkeys(table.legal, 0.0)
        final_round = table.rounds_left == 1 and self.objective == "rank"
        sampler = WorldSampler(table)
        for _ in range(worlds):
            world = sampler.sample(self.rng)
            for action in table.legal:
                state = world.copy()
                state.play(action)
                rollout(state)
                totals[action] += _outcome(state, final_round)
        means = {action: total / worlds for action, total in totals.items()}
        best = max(table.legal, key=lambda a: means[a])
        return best, means


def _outcome(state: GameState, final_round: bool) -> float:
    """How good a finished round is for seat 0 (the observer)."""
    points = state.last_round_points
    assert points is not None
    relative = sum(points[1:]) / (len(points) - 1) - points[0]
    if not final_round:
        return relative
    scores = state.scores
    best = min(scores)
    share = 1.0 / scores.count(best) if scores[0] == best else 0.0
    return share + TIEBREAK * relative


@cache
def _world_rules(num_players: int, deck: Deck) -> Rules:
    """Rules of a sampled world: a single round is enough, since rollouts stop at the round's end."""
    return Rules(num_players=num_players, deck=deck, num_rounds=1)


class WorldSampler:
    """Determinisations of one observation, as engine states in relative seats.

    The unseen cards are shuffled and dealt to seats 1..n-1 by their hand sizes; what is left over
    is the dummy hand (3 players). Seat 0 holds the observer's own hand and is to move. The first
    world is built (and validated) by ``engine.from_hands``; later ones are copies of it with the
    other hands redealt, which is what keeps sampling cheap next to the rollouts.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self.cards = np.repeat(np.arange(table.deck.num_kinds), table.unseen)
        dealt = sum(table.hand_sizes[1:])
        if dealt > self.cards.size or (dealt < self.cards.size and not table.has_dummy):
            raise ValueError(f"the observation has {self.cards.size} unseen cards but the other hands hold {dealt}")
        # Every card neither in the observer's hand nor unseen has been played this round.
        deck = table.deck
        self.played = [deck.kind_counts[k] - table.hand[k] - table.unseen[k] for k in range(deck.num_kinds)]
        self.base: GameState | None = None

    def sample(self, rng: np.random.Generator) -> GameState:
        table = self.table
        deck = table.deck
        kinds = deck.num_kinds
        cards = rng.permutation(self.cards).tolist()
        hands = []
        start = 0
        for size in table.hand_sizes[1:]:
            hands.append(_counts(cards[start : start + size], kinds))
            start += size
        dummy = _counts(cards[start:], kinds) if table.has_dummy else None
        if self.base is None:
            piles = [[kind for kind, count in enumerate(pile) for _ in range(count)] for pile in table.pile_counts]
            self.base = from_hands(
                _world_rules(table.num_players, deck),
                [list(table.hand), *hands, *([dummy] if dummy is not None else [])],
                current=0,
                piles=piles,
                captured=table.captured,
                played=self.played,
                scores=table.scores,
            )
            return self.base.copy()
        world = self.base.copy()
        world.hands[1:] = hands
        world.dummy = dummy
        return world


def _counts(cards: list[int], kinds: int) -> list[int]:
    counts = [0] * kinds
    for kind in cards:
        counts[kind] += 1
    return counts


@cache
def _play_order(deck: Deck) -> tuple[int, ...]:
    """Card kinds in the order the rollout policy prefers to dump them: highest value first, omen
    cards before the Friday card of equal value."""
    friday = deck.friday_kind
    return tuple(sorted(range(deck.num_kinds), key=lambda k: (-deck.kind_values[k], k == friday, k)))


def rollout(state: GameState) -> None:
    """Play the round out with a cheap policy, in place: ``majority``'s rules on the engine state.

    A player takes a clean pile (no Friday card) on purpose when that gives it the lead in the
    type with at least 3 cards, or keeps its lead with at least 2. Otherwise it plays its highest
    card that captures nothing (a Friday card on the highest pile it fits). If every card
    captures, it takes the pile with the fewest bad-luck points, counting the omen cards as free
    when taking them gives it the sole majority of that type right now, and restarts it with its
    highest card.
    """
    deck = state.rules.deck
    values = deck.kind_values
    num_values = deck.num_values
    friday = deck.friday_kind
    friday_value = values[friday]
    order = _play_order(deck)
    hands = state.hands
    piles = state.piles
    while not state.round_over:
        me = state.current
        hand = hands[me]
        totals = state.pile_totals
        action = -1
        for pile in range(NUM_PILES):
            cards = piles[pile]
            if len(cards) < CLEAN_KEEP_MIN or friday in cards:
                continue
            top = _top_card(hand, pile, deck)
            if top < 0 or totals[pile] + values[top] <= CAPTURE_LIMIT:
                continue
            counts = [stack[pile] for stack in state.captured]
            mine = counts[me]
            counts[me] = -1
            lead = mine - max(counts)
            if len(cards) >= (CLEAN_KEEP_MIN if lead > 0 else CLEAN_OPEN_MIN) and lead + len(cards) > 0:
                action = friday + pile if top == friday else top
                break
        if action < 0:
            for kind in order:
                if not hand[kind]:
                    continue
                if kind != friday:
                    if totals[kind // num_values] + values[kind] <= CAPTURE_LIMIT:
                        action = kind
                        break
                    continue
                best_total = -1
                for pile in range(NUM_PILES):
                    total = totals[pile]
                    if best_total < total and total + friday_value <= CAPTURE_LIMIT:
                        best_total = total
                        action = friday + pile
                if action >= 0:
                    break
        if action < 0:
            action = _cheapest_capture(state, hand)
        state.play(action)


def _top_card(hand: list[int], pile: int, deck: Deck) -> int:
    """The highest card kind in ``hand`` that can go on ``pile`` (its type or Friday), or -1."""
    friday = deck.friday_kind
    top = friday if hand[friday] else -1
    num_values = deck.num_values
    for kind in range(pile * num_values + num_values - 1, pile * num_values - 1, -1):
        if hand[kind]:
            if top < 0 or deck.kind_values[kind] > deck.kind_values[top]:
                top = kind
            break
    return top


def _cheapest_capture(state: GameState, hand: list[int]) -> int:
    """The forced capture with the fewest points for the player to move (ties: highest card).

    Only called when no card is safe, so every card captures wherever it can go.
    """
    deck = state.rules.deck
    friday = deck.friday_kind
    me = state.current
    best_action, best_cost, best_value = -1, 1_000_000, -1
    for pile in range(NUM_PILES):
        top = _top_card(hand, pile, deck)
        if top < 0:
            continue
        cards = state.piles[pile]
        fridays = cards.count(friday)
        omens = len(cards) - fridays
        cost = FRIDAY_POINTS * fridays
        if omens:
            counts = [stack[pile] for stack in state.captured]
            mine = counts[me] + omens
            counts[me] = -1
            if mine <= max(counts):
                cost += OMEN_POINTS * omens
        value = deck.kind_values[top]
        if cost < best_cost or (cost == best_cost and value > best_value):
            best_action, best_cost, best_value = (friday + pile if top == friday else top), cost, value
    return best_action
