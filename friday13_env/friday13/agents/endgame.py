"""``endgame``: a trained policy for most of a round, the ``search`` agent for its last cards.

Why: late in a round few cards are unseen and search's rollouts are short, so it is close to exact,
while a network has to guess the outcome of the remaining plays from one observation. Nearly all of
search's edge over the shipped networks lies in those last moves, so handing them to search keeps
its strength at a fraction of its cost (figures: ``docs/agents.md``).

Cheaper still: late in a round a search's cost is numpy's per-call overhead, not its worlds, so a
small ``budget`` keeps most of the strength; and where the policy is sure of its move (``margin``:
its likeliest legal move leads the next by more than that in probability) it nearly always plays
search's move, so the search is skipped there. The round's first searched move (``cards`` cards in
hand) has its own gate, ``first_margin``: its search costs more (longer rollouts) and adds less.

The switch reads only the observer's own hand size and the policy's output, so the agent sees
nothing a player would not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from friday13_env.core.options import count_option, number_option
from friday13_env.core.registry import check_seed
from friday13_env.core.specs import shown
from friday13_env.core.zoo import policy_path
from friday13_env.friday13.agents.base import Observation, checked
from friday13_env.friday13.agents.policy import ZOO_PACKAGE, load_policy_agent
from friday13_env.friday13.agents.search import SearchAgent, check_budget, check_objective
from friday13_env.friday13.cards import Deck
from friday13_env.friday13.encoding import observation_layout

DEFAULT_POLICY = "ensemble-v1"
"""The zoo policy that plays the early moves."""
DEFAULT_ENDGAME_BUDGET = 600
DEFAULT_MARGIN = 0.5
DEFAULT_FIRST_MARGIN = 0.2
DEFAULT_CARDS = 3
"""Search from the move that starts with this many cards in hand: the last few moves, where search is close to exact."""


class EndgameSearchAgent:
    """A checkpoint's policy while the hand holds more than ``cards`` cards, ``search`` from then on.

    Options: ``policy`` (a zoo name or a checkpoint path; default the zoo's ``ensemble-v1``), ``cards``
    (search from the move that starts with at most this many cards in hand), ``margin`` (play the
    policy's move instead where its likeliest legal move leads the next by more than this in
    probability; 1 always searches), ``first_margin`` (the same for the move with exactly ``cards``
    cards in hand; ``None`` means ``margin``), ``budget`` and ``objective`` (``search``'s options).
    The defaults are the setting chosen on selection deals (``docs/agents.md``).
    """

    name = "endgame"

    def __init__(
        self,
        seed: int | None = None,
        *,
        policy: str = DEFAULT_POLICY,
        cards: int = DEFAULT_CARDS,
        budget: int = DEFAULT_ENDGAME_BUDGET,
        objective: str = "rank",
        margin: float = DEFAULT_MARGIN,
        first_margin: float | None = DEFAULT_FIRST_MARGIN,
    ) -> None:
        # Every option is checked before the policy file is read.
        if not isinstance(policy, str | Path) or not str(policy):
            raise ValueError(f"endgame option policy must be a zoo name or a checkpoint path, got {shown(policy)}")
        self.cards = count_option("cards", cards, owner=self.name, takes="an int >= 1 (hand size from which to search)")
        takes = (
            "a number in [0, 1] (skip the search where the policy's likeliest move leads the next by more than this"
            " in probability; 1 = always search)"
        )
        self.margin = number_option("margin", margin, low=0, high=1, owner=self.name, takes=takes)
        self.first_margin = (
            self.margin
            if first_margin is None
            else number_option("first_margin", first_margin, low=0, high=1, owner=self.name, takes=takes)
        )
        check_budget(budget, self.name)
        check_objective(objective, self.name)
        check_seed(seed)
        try:
            path = policy_path(ZOO_PACKAGE, policy)
        except ValueError as error:
            raise ValueError(f"endgame option policy: {error}") from error
        policy_seed, search_seed = _seeds(seed)
        self.search = SearchAgent(seed=search_seed, budget=budget, objective=objective)
        self.policy = load_policy_agent(path, seed=policy_seed, name=str(policy))

    def reset(self, seed: int | None = None) -> None:
        """Re-seed in place, as building the agent anew with ``seed`` would (the evaluation's hook)."""
        check_seed(seed)
        policy_seed, search_seed = _seeds(seed)
        self.search.reset(search_seed)
        self.policy.reset(policy_seed)

    @property
    def deck(self) -> Deck:
        """The deck of the policy's table: the only deck this agent can play."""
        return self.policy.deck

    def act(self, observation: Observation) -> int:
        deck, vector, legal = checked(observation, self.name)  # once: the policy's moves reuse it
        self.policy.check_deck(deck)
        hand_size = vector[observation_layout(deck).slices["hand_sizes"]][0]
        if hand_size > self.cards or legal.size == 1:
            return self.policy.decide(vector, legal)
        margin = self.first_margin if hand_size == self.cards else self.margin
        if margin < 1.0:
            logits = self.policy.policy.logits(vector)[legal]
            if lead_of_likeliest(logits) > margin:
                return int(legal[np.argmax(logits)])
        return self.search.decide(vector, legal)  # checked above: the search does not check it again


def lead_of_likeliest(logits: np.ndarray) -> float:
    """How far the likeliest of these moves leads the next one in probability (softmax of ``logits``).

    Why: where the policy is sure of its move it nearly always plays search's move (docs/agents.md), so the
    ``endgame`` agent skips the search there.
    """
    probabilities = np.exp(logits - logits.max())
    first, second = np.sort(probabilities / probabilities.sum())[-2:][::-1]
    return float(first - second)


def _seeds(seed: int | None) -> tuple[int | None, int | None]:
    """The seeds of the policy and of the search of an agent seeded with ``seed``."""
    if seed is None:
        return None, None
    policy_seed, search_seed = map(int, np.random.SeedSequence(seed).generate_state(2))
    return policy_seed, search_seed
