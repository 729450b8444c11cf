"""Seeds derived from a run's seed: one independent stream per purpose, whatever the order things are played in.

``derived_seed(seed, *key)`` is the first 64-bit word of ``SeedSequence(seed, spawn_key=key)``: the deals, the
agents and the games of a run each take a key of their own, so changing how many of one are played (or on how many
workers) never moves the seeds of another.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

ACTION_SAMPLER_KEY = 1
"""An environment's ``reset(seed=s)`` seeds its action space with ``derived_seed(s, ACTION_SAMPLER_KEY)``: rollouts of
``action_space.sample()`` are reproducible, and their numbers are not the ones that shuffled the deal."""


AGENT_KEY = 2
"""An agent that plays a game dealt from seed ``s`` (the solo evaluation's and benchmark's games) is seeded with
``derived_seed(s, AGENT_KEY)``: seeded with ``s`` itself, its generator would draw the numbers that shuffled the deal,
so a search agent's sampled futures could be the game's real one."""


def derived_seed(seed: int, *key: int) -> int:
    """The seed of the stream ``key`` of a run seeded with ``seed`` (a non-negative int below ``2**64``)."""
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1, np.uint64)[0])


def seed_reset(env: gym.Env | VectorEnv, seed: int | None) -> None:
    """What an environment's ``reset(seed=seed)`` seeds (``seed`` already checked: ``None`` or a non-negative int):
    its ``np_random``, as its Gymnasium base class's ``reset`` (``gym.Env`` or ``gym.vector.VectorEnv``) does, and for
    an int its action space from ``ACTION_SAMPLER_KEY``. The one seeding of the scalar and the vector environments,
    so a seed means the same in both."""
    seed = None if seed is None else int(seed)
    if isinstance(env, VectorEnv):
        VectorEnv.reset(env, seed=seed)
    else:
        gym.Env.reset(env, seed=seed)
    if seed is not None:
        env.action_space.seed(derived_seed(seed, ACTION_SAMPLER_KEY))
