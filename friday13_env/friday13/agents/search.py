"""``search``: determinised Monte-Carlo search over the rest of the round.

Each decision samples *worlds*: the unseen cards are dealt at random into the other hands (and the
dummy hand at 3 players), consistent with every hand size. Every legal move is then played in every
world and the round is rolled out to its end by a fast policy (``majority``'s rules: clean piles of
a type taken on purpose, otherwise the highest safe card, otherwise the cheapest capture); the move
with the best mean outcome is played. All moves share the same worlds (common random numbers), so
their comparison is not drowned by the luck of the deal. The rollouts of one decision run as one
numpy batch (``friday13_env.friday13.agents.rollout``), which is what makes thousands of them affordable.

The world is built in *relative* seats, like the observation: the observer is seat 0 and moves
first. Captured cards are kept by type, exactly as the observation shows them; a pile is kept as
its total and its omen and Friday cards (only those matter, not their order).

The budget is a number of simulated card plays per decision, not a wall-clock limit, so the agent
is reproducible for a seed: early in a round rollouts are long and fewer worlds fit, late in a round
the same budget buys many more worlds, where decisions are sharpest.
"""

from __future__ import annotations

import numpy as np

from friday13_env.core.options import count_option
from friday13_env.core.specs import shown
from friday13_env.friday13.agents.base import Observation, agent_rng, deck_of_length
from friday13_env.friday13.agents.rollout import DTYPE, Rollouts
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.cards import DECKS, NUM_PILES, NUM_TYPES

DEFAULT_BUDGET = 22_000
"""Simulated card plays per decision."""

MAX_WORLDS = 4_096
"""Cap on the worlds of one decision, which bounds the batch's memory late in a round."""
MAX_BUDGET = MAX_WORLDS * max(deck.num_actions * deck.size for deck in DECKS.values())
"""The largest budget: ``MAX_WORLDS`` worlds of the costliest position a deck can show (every action legal, every
card in a hand), so that no decision plays more worlds with a larger one, which would be this agent under another
name (4,558,848 with the German deck's 21 actions and 53 cards)."""

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

    Its strength and cost per decision: ``docs/agents.md``.
    """

    name = "search"

    def __init__(self, seed: int | None = None, *, budget: int = DEFAULT_BUDGET, objective: str = "rank") -> None:
        self.budget = check_budget(budget, self.name)
        self.objective = check_objective(objective, self.name)
        self.rng = agent_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed in place, as building the agent anew with ``seed`` would (the evaluation's hook)."""
        self.rng = agent_rng(seed)

    def act(self, observation: Observation) -> int:
        return self.choose(Table.read(observation, self.name))

    def decide(self, vector: np.ndarray, legal: np.ndarray) -> int:
        """The move for an observation vector and its legal actions that the caller has already checked
        (``base.checked``), as ``PolicyAgent.decide``: what ``endgame`` calls, so nothing is checked twice."""
        return self.choose(Table.decode(deck_of_length(vector.shape[0]), vector, legal, self.name))

    def choose(self, table: Table) -> int:
        """The move for a decoded table."""
        if len(table.legal) == 1:
            return table.legal[0]
        return self.search(table)[0]

    def search(self, table: Table) -> tuple[int, dict[int, float]]:
        """The chosen action and every legal action's mean outcome (higher is better)."""
        legal = table.legal
        # A world costs one rollout per legal move, each playing the observer's card and the rest.
        per_world = len(legal) * sum(table.hand_sizes)
        worlds = min(MAX_WORLDS, max(1, self.budget // per_world))
        hands = WorldSampler(table).sample(self.rng, worlds)[:, : table.num_players]
        points = play_out(table, hands).reshape(table.num_players, len(legal), worlds)
        final_round = table.rounds_left == 1 and self.objective == "rank"
        means = outcomes(points, np.array(table.scores), final_round).mean(axis=1)
        return legal[int(np.argmax(means))], dict(zip(legal, means.tolist(), strict=True))


def check_budget(budget: object, agent: str) -> int:
    """``budget`` as an int, or a ``ValueError`` naming ``agent``'s option and what it allows."""
    takes = f"a positive int, at most {MAX_BUDGET:,} (simulated card plays per move; no decision plays more)"
    return count_option("budget", budget, maximum=MAX_BUDGET, owner=agent, takes=takes)


def check_objective(objective: object, agent: str) -> str:
    """``objective`` if it is one of ``OBJECTIVES``, else a ``ValueError`` listing them."""
    if not isinstance(objective, str) or objective not in OBJECTIVES:
        raise ValueError(f"{agent} option objective must be one of {sorted(OBJECTIVES)}, got {shown(objective)}")
    return objective


def play_out(table: Table, hands: np.ndarray) -> np.ndarray:
    """Round points (P, A * W) of every seat after every legal move (A) in every world (W), columns
    move-major.

    ``hands`` (W, P, K) are the worlds' hands in relative seats, the observer's own in seat 0.
    """
    deck = table.deck
    legal = table.legal
    players, worlds = table.num_players, hands.shape[0]
    rows = len(legal) * worlds
    piles = np.array(table.pile_counts, dtype=np.int64)
    fridays = piles[:, deck.friday_kind]
    batch = Rollouts(
        deck,
        hands=np.tile(hands.transpose(1, 0, 2), (1, len(legal), 1)),
        totals=np.full((rows, NUM_PILES), table.pile_totals, dtype=DTYPE),
        omens=np.full((rows, NUM_PILES), piles.sum(axis=1) - fridays, dtype=DTYPE),
        fridays=np.full((rows, NUM_PILES), fridays, dtype=DTYPE),
        captured=np.full((players, rows, NUM_TYPES), np.array(table.captured)[:, None, :], dtype=DTYPE),
        current=0,
    )
    kinds, piles_played = zip(*(deck.action_kind_and_pile(action) for action in legal), strict=True)
    batch.play(np.repeat(kinds, worlds), np.repeat(piles_played, worlds))
    return batch.finish()


def outcomes(points: np.ndarray, scores: np.ndarray, final_round: bool) -> np.ndarray:
    """How good each finished round is for seat 0 (the observer): points (P, ...) -> (...)."""
    others = points.shape[0] - 1
    relative = points[1:].sum(axis=0) / others - points[0]
    if not final_round:
        return relative
    totals = scores.reshape(-1, *(1,) * (points.ndim - 1)) + points
    best = totals.min(axis=0)
    winners = (totals == best).sum(axis=0)
    share = np.where(totals[0] == best, 1.0 / winners, 0.0)
    return share + TIEBREAK * relative


class WorldSampler:
    """Determinisations of one observation: every seat's hand, in relative seats.

    The unseen cards are shuffled and dealt to seats 1..n-1 by their hand sizes; what is left over
    is the dummy hand (3 players). Seat 0 holds the observer's own hand.
    """

    def __init__(self, table: Table) -> None:
        self.table = table
        self.cards = np.repeat(np.arange(table.deck.num_kinds), table.unseen)
        dealt = sum(table.hand_sizes[1:])
        if dealt > self.cards.size or (dealt < self.cards.size and not table.has_dummy):
            raise ValueError(f"the observation has {self.cards.size} unseen cards but the other hands hold {dealt}")
        players = table.num_players
        # Where each shuffled card goes: seats 1..n-1 by hand size, then the dummy (row n).
        self.seat_of_card = np.repeat(np.arange(1, players + 1), [*table.hand_sizes[1:], self.cards.size - dealt])

    def sample(self, rng: np.random.Generator, worlds: int) -> np.ndarray:
        """Card counts (worlds, n + 1, K): seat 0 the observer, seats 1..n-1 the others, row n the dummy
        hand (all zero without one)."""
        kinds = self.table.deck.num_kinds
        rows = self.table.num_players + 1
        shuffled = rng.permuted(np.tile(self.cards, (worlds, 1)), axis=1)
        slots = (np.arange(worlds)[:, None] * rows + self.seat_of_card) * kinds + shuffled
        hands = np.bincount(slots.ravel(), minlength=worlds * rows * kinds).reshape(worlds, rows, kinds)
        hands[:, 0] = self.table.hand
        return hands
