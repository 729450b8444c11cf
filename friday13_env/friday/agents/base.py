"""The uniform random agent, the floor every other Friday agent must beat."""

from __future__ import annotations

import numpy as np

from friday13_env.core.agent import Observation, checked_observation
from friday13_env.core.registry import check_seed
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.encoding import OBS_SIZE


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        check_seed(seed)
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Optional hook: re-seed (only when a seed is given, so a run of games stays reproducible)."""
        check_seed(seed)
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        """A uniformly random legal action. The observation is checked as every solo agent checks it
        (``checked_observation``: the dict, the vector's length, NaNs, the mask), so a bad one is a ``ValueError``
        naming this agent, not a move."""
        _, legal = checked_observation(observation, OBS_SIZE, NUM_ACTIONS, self.name)
        return int(self.rng.choice(legal))
