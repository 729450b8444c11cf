"""Agents for Friday: uniform random, the rule-based expert, determinised search and trained policies.

Protocol: ``agent.act(obs, mask) -> int`` with the environment's observation and int8/bool action
mask, plus ``agent.reset(seed)`` at the start of a game. Agents see only what the environment
exposes (the observation and the mask) and the printed card data of :mod:`friday13_env.friday.cards`;
never the engine state. The rule-based and search agents rebuild a state from the observation with the
unknown orders sampled (:mod:`friday13_env.friday.belief`) and reason on that.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

import numpy as np

from friday13_env.core.policy import CheckpointError, MLPPolicy
from friday13_env.core.registry import constructor_options
from friday13_env.friday.expert import HeuristicAgent
from friday13_env.friday.policy import ENV_VERSION as FRIDAY_ENV_VERSION
from friday13_env.friday.policy import read_friday_policy
from friday13_env.friday.search import SearchAgent


class Agent(Protocol):
    """What evaluation needs from an agent."""

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Prepare for a new game (re-seed any randomness)."""

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """Choose a legal action."""


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed (only when a seed is given, so a run of games stays reproducible)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """A uniformly random legal action."""
        return int(self.rng.choice(np.flatnonzero(mask)))


class PolicyAgent:
    """Plays a trained Friday policy checkpoint (see :mod:`friday13_env.core.policy`) with numpy only.

    Greedy by default: the legal action with the highest logit; ``greedy=False`` samples from the
    softmax over the legal actions with its own seeded generator.
    """

    def __init__(self, policy: MLPPolicy, name: str = "policy", seed: int | None = None, greedy: bool = True) -> None:
        if policy.metadata.env_version != FRIDAY_ENV_VERSION:
            raise CheckpointError(
                f"policy {name!r} was trained for {policy.metadata.env_version!r}, not {FRIDAY_ENV_VERSION!r}"
            )
        self.policy = policy
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the sampling generator (only when a seed is given)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The policy's choice among the legal actions."""
        return self.policy.choose(obs, np.flatnonzero(mask), None if self.greedy else self.rng)


def load_policy(path: str | Path, seed: int | None = None, greedy: bool = True) -> PolicyAgent:
    """A :class:`PolicyAgent` from a ``.npz`` checkpoint; ``CheckpointError`` says what is wrong with a bad file
    (missing, corrupt, another layout, or a Friday the 13th policy)."""
    policy = read_friday_policy(path)
    return PolicyAgent(policy, name=Path(path).stem, seed=seed, greedy=greedy)


def is_checkpoint_path(name: str) -> bool:
    """Whether ``make_agent`` reads ``name`` as a checkpoint path rather than a baseline name."""
    return name.endswith(".npz") or os.sep in name or "/" in name or Path(name).is_file()


AGENTS: dict[str, type[RandomAgent] | type[HeuristicAgent] | type[SearchAgent]] = {
    "random": RandomAgent,
    "heuristic": HeuristicAgent,
    "search": SearchAgent,
}
"""The baseline agents ``make_agent`` knows by name."""


def make_agent(name: str, seed: int | None = None, **options: object) -> Agent:
    """Agent by name (``random``, ``heuristic``, ``search``) or by the path of a trained policy (``.npz``).

    ``options`` go to the agent's constructor, e.g. ``make_agent("search", 0, budget=16)``.
    """
    if name in AGENTS:
        unknown = sorted(set(options) - set(constructor_options(AGENTS[name])))
        if unknown:
            raise ValueError(
                f"agent {name!r} has no option(s) {unknown}; its options: {constructor_options(AGENTS[name])}"
            )
        return AGENTS[name](seed, **options)  # type: ignore[arg-type]
    if is_checkpoint_path(name):
        return load_policy(name, seed, **options)  # type: ignore[arg-type]
    raise ValueError(f"unknown agent {name!r}; allowed: {sorted(AGENTS)} or the path of a .npz policy checkpoint")


__all__ = [
    "AGENTS",
    "Agent",
    "HeuristicAgent",
    "PolicyAgent",
    "RandomAgent",
    "SearchAgent",
    "load_policy",
    "make_agent",
]
