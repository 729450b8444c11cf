"""Action spaces shared by both games' Gymnasium environments."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class LegalDiscrete(spaces.Discrete):
    """``Discrete(n)`` whose plain ``sample()`` draws one of the actions legal right now.

    The environment sets ``legal_mask`` (int8, or ``None`` for "any action") after every reset and
    step, so random rollouts and generic tools (Gymnasium's and Stable-Baselines3's ``check_env``)
    try legal moves: a uniform sample would almost always be illegal and end the episode at once.
    An explicit ``mask`` or ``probability`` argument is honoured unchanged, and the space compares
    equal to ``Discrete(n)``, so saved models and VecEnvs treat it as one.
    """

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.legal_mask: np.ndarray | None = None

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self.legal_mask is not None:
            mask = self.legal_mask
        return super().sample(mask=mask, probability=probability)


class LegalMultiDiscrete(spaces.MultiDiscrete):
    """A vector environment's ``MultiDiscrete([n] * num_envs)`` whose plain ``sample()`` draws, at every table, one
    of the actions legal there right now: ``LegalDiscrete``'s rule, row by row.

    The environment sets ``legal_mask`` (``(num_envs, n)``, 0/1, or ``None`` for "any action") after every reset and
    step. A table with no legal action (its game over, waiting for a reset) draws any action, uniformly: the
    environment does not play it. An explicit ``mask`` or ``probability`` argument is honoured unchanged, and the
    space compares equal to the plain ``MultiDiscrete``.
    """

    def __init__(self, nvec: np.ndarray) -> None:
        super().__init__(nvec)
        self.legal_mask: np.ndarray | None = None

    def sample(self, mask: Any = None, probability: Any = None) -> np.ndarray:
        if mask is not None or probability is not None or self.legal_mask is None:
            return super().sample(mask=mask, probability=probability)
        legal = self.legal_mask.astype(bool)
        draws = np.where(legal, self.np_random.random(legal.shape), -1.0)  # the largest draw: uniform among legal
        actions = draws.argmax(axis=1)
        none = ~legal.any(axis=1)
        actions[none] = self.np_random.integers(self.nvec[none])
        return (actions + self.start).astype(self.dtype)
