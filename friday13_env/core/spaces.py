"""Action spaces shared by both games' Gymnasium environments."""

from __future__ import annotations

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
