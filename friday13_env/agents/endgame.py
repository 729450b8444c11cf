"""``endgame``: a trained policy for most of a round, the ``search`` agent for its last cards.

Why: at 4 players ``search`` beats the shipped networks against 3 x ``majority`` (0.737 against
0.677 for ``ensemble_distilled.npz``) while they beat it against 3 x ``cautious`` (0.694 against
0.636). Late in a round few cards are unseen and search's rollouts are short, so it is close to
exact; a network has to guess the outcome of the remaining plays from one observation. Handing the
last three cards of each round to ``search`` gives 0.784 / 0.757 against 3 x ``cautious`` /
``majority`` (2,000 duplicate games, the README's Strength table): above both parts, so nearly all
of search's edge lies in those last moves. ``search`` then decides only a few moves per round,
which makes this agent about 12x cheaper than ``search``. More cards are stronger still against
``majority`` and dearer (README).

**Cheaper**: late in a round a search's cost is numpy's per-call overhead, not its worlds, so a
small ``budget`` keeps most of the strength; and where the policy is sure of its move
(``margin``: its likeliest legal move leads the next by more than that in probability) it nearly
always plays search's move, so the search is skipped there. The round's first searched move
(``cards`` cards in hand) has its own gate, ``first_margin``: its search costs more than a later
one (longer rollouts) and adds less, since a later search is closer to exact.
``budget=600,margin=0.5,first_margin=0.2`` wins 0.768 / 0.748 (0.743 with other agent seeds)
against 3 x ``cautious`` / ``majority`` (``search``: 0.636 / 0.737) at 112x-116x less CPU per
decision than ``search`` (README, Strength).

The switch reads only the observer's own hand size and the policy's output, so the agent sees
nothing a player would not.
"""

from __future__ import annotations

import numpy as np

from friday13_env.agents.base import Observation, deck_of, legal_actions
from friday13_env.agents.search import DEFAULT_BUDGET, SearchAgent
from friday13_env.encoding import observation_layout

DEFAULT_CARDS = 3
"""Search from the move that starts with this many cards in hand: near a tenth of search's cost (README)."""


class EndgameSearchAgent:
    """A checkpoint's policy while the hand holds more than ``cards`` cards, ``search`` from then on.

    Options: ``policy`` (path of a Friday the 13th policy checkpoint, required), ``cards`` (search
    from the move that starts with at most this many cards in hand), ``margin`` (play the policy's
    move instead where its likeliest legal move leads the next by more than this in probability; 1,
    the default, always searches), ``first_margin`` (the same for the move with exactly ``cards``
    cards in hand; default ``margin``), ``budget`` and ``objective`` (``search``'s options).
    """

    name = "endgame"

    def __init__(
        self,
        seed: int | None = None,
        *,
        policy: str = "",
        cards: int = DEFAULT_CARDS,
        budget: int = DEFAULT_BUDGET,
        objective: str = "rank",
        margin: float = 1.0,
        first_margin: float | None = None,
    ) -> None:
        if not policy:
            raise ValueError(
                "agent 'endgame' needs policy=<path of a Friday the 13th policy checkpoint>,"
                " e.g. endgame:policy=checkpoints/ensemble_distilled.npz"
            )
        if isinstance(cards, bool) or not isinstance(cards, int | np.integer) or cards < 1:
            raise ValueError(
                f"endgame option cards must be an int >= 1 (hand size from which to search), got {cards!r}"
            )
        for option, value in (("margin", margin), ("first_margin", margin if first_margin is None else first_margin)):
            if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not 0 <= value <= 1:
                raise ValueError(
                    f"endgame option {option} must be a number in [0, 1] (skip the search where the policy's likeliest"
                    f" move leads the next by more than this in probability; 1 = always search), got {value!r}"
                )
        from friday13_env.policy import load_policy_agent  # here: friday13_env.policy imports this package

        policy_seed, search_seed = (
            (None, None) if seed is None else map(int, np.random.SeedSequence(seed).generate_state(2))
        )
        self.policy = load_policy_agent(policy, seed=policy_seed)
        self.search = SearchAgent(seed=search_seed, budget=budget, objective=objective)
        self.cards = int(cards)
        self.margin = float(margin)
        self.first_margin = self.margin if first_margin is None else float(first_margin)

    def act(self, observation: Observation) -> int:
        hand_size = observation["observation"][observation_layout(deck_of(observation)).slices["hand_sizes"]][0]
        if hand_size > self.cards or legal_actions(observation).size == 1:
            return self.policy.act(observation)
        margin = self.first_margin if hand_size == self.cards else self.margin
        if margin < 1.0:
            legal, logits = self.policy.legal_logits(observation)
            if lead_of_likeliest(logits) > margin:
                return int(legal[np.argmax(logits)])
        return self.search.act(observation)


def lead_of_likeliest(logits: np.ndarray) -> float:
    """How far the likeliest of these moves leads the next one in probability (softmax of ``logits``).

    Why: where the policy is sure of its move it nearly always plays search's move (README), so the
    ``endgame`` agent skips the search there.
    """
    probabilities = np.exp(logits - logits.max())
    first, second = np.sort(probabilities / probabilities.sum())[-2:][::-1]
    return float(first - second)
