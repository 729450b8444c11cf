"""Seeds derived from a run's seed: one independent stream per purpose, whatever the order things are played in.

``derived_seed(seed, *key)`` is the first 64-bit word of ``SeedSequence(seed, spawn_key=key)``: the deals, the
agents and the games of a run each take a key of their own, so changing how many of one are played (or on how many
workers) never moves the seeds of another.
"""

from __future__ import annotations

import numpy as np

ACTION_SAMPLER_KEY = 1
"""An environment's ``reset(seed=s)`` seeds its action space with ``derived_seed(s, ACTION_SAMPLER_KEY)``: rollouts of
``action_space.sample()`` are reproducible, and their numbers are not the ones that shuffled the deal."""


def derived_seed(seed: int, *key: int) -> int:
    """The seed of the stream ``key`` of a run seeded with ``seed`` (a non-negative int below ``2**64``)."""
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1, np.uint64)[0])
