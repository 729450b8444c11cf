"""``endgame``: a trained policy for most of a round, the ``search`` agent for its last cards.

Why: at 4 players ``search`` beats the shipped networks against 3 x ``majority`` (0.737 against
0.677 for ``ensemble_distilled.npz``) while they beat it against 3 x ``cautious`` (0.694 against
0.636). Late in a round few cards are unseen and search's rollouts are short, so it is close to
exact; a network has to guess the outcome of the remaining plays from one observation. Handing the
last three cards of each round to ``search`` gives 0.784 / 0.757 against 3 x ``cautious`` /
``majority`` (2,000 duplicate games, the README's Strength table): above both parts, so nearly all
of search's edge lies in those last moves. ``search`` then decides only a few moves per round,
which makes this agent 7x-9x cheaper than ``search`` (and 30x-60x dearer than the network).
More cards are stronger still against ``majority`` and dearer (README).

The switch reads only the observer's own hand size, so the agent sees nothing a player would not.
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
    from the move that starts with at most this many cards in hand), ``budget`` and ``objective``
    (``search``'s options).
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
        from friday13_env.policy import load_policy_agent  # here: friday13_env.policy imports this package

        policy_seed, search_seed = (
            (None, None) if seed is None else map(int, np.random.SeedSequence(seed).generate_state(2))
        )
        self.policy = load_policy_agent(policy, seed=policy_seed)
        self.search = SearchAgent(seed=search_seed, budget=budget, objective=objective)
        self.cards = int(cards)

    def act(self, observation: Observation) -> int:
        hand_size = observation["observation"][observation_layout(deck_of(observation)).slices["hand_sizes"]][0]
        if hand_size <= self.cards and legal_actions(observation).size > 1:
            return self.search.act(observation)
        return self.policy.act(observation)
