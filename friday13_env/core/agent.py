"""The one agent protocol of both games, and the checks every agent applies to what it is shown.

An agent sees exactly what a player sees: the environment's observation dict for its own seat,
``{"observation": float32 vector, "action_mask": int8 vector}``, and nothing else (no engine state,
no other hands). It returns a legal action as a plain ``int``. All randomness comes from the agent's
own seeded ``numpy`` Generator, so a seeded agent is reproducible and never touches global RNGs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

Observation = Mapping[str, np.ndarray]


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observation) -> int`` and a ``name`` can play either game."""

    name: str

    def act(self, observation: Observation) -> int:
        """A legal action for the observation of the agent's own seat."""
        ...


def legal_actions(observation: Observation) -> np.ndarray:
    """The legal actions of an observation, ascending; an error if there are none."""
    if not isinstance(observation, Mapping) or "action_mask" not in observation:
        raise ValueError(
            "an agent needs the observation dict {'observation': vector, 'action_mask': mask}, "
            f"got {type(observation).__name__}"
        )
    legal = np.flatnonzero(np.asarray(observation["action_mask"]))
    if legal.size == 0:
        raise ValueError("the observation has no legal action: this agent is not the one to move")
    return legal


def checked_observation(
    observation: Observation, size: int, num_actions: int, agent: str = "agent"
) -> tuple[np.ndarray, np.ndarray]:
    """The observation vector and the legal actions, after checking both have the expected shape and values.

    A wrong length, a NaN or an empty mask is a ``ValueError`` that names the problem, before any work.
    """
    legal = legal_actions(observation)
    if "observation" not in observation:
        raise ValueError(f"{agent}: the observation dict has no 'observation' entry (keys: {sorted(observation)})")
    vector = np.asarray(observation["observation"])
    mask = np.asarray(observation["action_mask"])
    if vector.shape != (size,):
        raise ValueError(f"{agent}: expected an observation vector of shape ({size},), got {vector.shape}")
    if mask.shape != (num_actions,):
        raise ValueError(f"{agent}: expected an action mask of shape ({num_actions},), got {mask.shape}")
    if not np.issubdtype(vector.dtype, np.number) or not np.all(np.isfinite(vector)):
        raise ValueError(f"{agent}: the observation vector holds non-finite or non-numeric values")
    return vector, legal
