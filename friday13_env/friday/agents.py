"""Friday's agents by name, the same shape as the card game's: ``make("search:budget=16", seed=0)``,
``make("dagger-v1")`` (a zoo policy) or ``make("path/to/policy.npz")``. See
:mod:`friday13_env.core.registry` for how a spec is resolved.

Protocol (:class:`friday13_env.core.agent.Agent`, one for both games): a ``name`` and
``act(observation) -> int``, where ``observation`` is ``{"observation": vector, "action_mask": mask}``
(:func:`friday13_env.friday.env.observation_dict` builds it from ``env.step``'s ``obs`` and ``info``).
Agents see only that and the printed card data of :mod:`friday13_env.friday.cards`, never the engine
state; the rule-based and search agents rebuild a state from the observation with the unknown orders
sampled (:mod:`friday13_env.friday.belief`) and reason on that.

Seeding: ``make(spec, seed=s)`` builds a reproducible agent; the evaluation builds one per game from
the spec and the game's seed. The random, heuristic and search agents also have an optional
``reset(seed)`` hook that re-seeds them in place (the same as building a new one with that seed), for
code that keeps one agent object across games; agents need not have it.

Registered agents: ``random`` (uniform over the legal actions), ``heuristic`` (the rule-based expert,
option ``samples``), ``search`` (Monte-Carlo search over the expert's moves, options ``budget``,
``horizon``, ``rollout_samples``, ``margin``), plus the zoo's trained policies (option ``greedy``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from friday13_env.core.agent import Agent, Observation, legal_actions
from friday13_env.core.mlp import PolicyAgent
from friday13_env.core.registry import Registry, UnknownOptionError, check_seed
from friday13_env.friday.env import observation_dict
from friday13_env.friday.expert import HeuristicAgent
from friday13_env.friday.policy import read_friday_policy
from friday13_env.friday.search import SearchAgent

__all__ = [
    "REGISTRY",
    "Agent",
    "HeuristicAgent",
    "PolicyAgent",
    "RandomAgent",
    "SearchAgent",
    "UnknownOptionError",
    "load",
    "load_policy_agent",
    "make",
    "names",
    "observation_dict",
    "options_of",
    "register",
]


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
        """A uniformly random legal action."""
        return int(self.rng.choice(legal_actions(observation)))


def load_policy_agent(
    path: str | Path, seed: int | None = None, greedy: bool = True, name: str | None = None
) -> PolicyAgent:
    """A Friday policy as an agent (numpy only). A missing, corrupt or foreign checkpoint (a Friday the 13th
    policy, another observation layout) is a ``CheckpointError`` saying what is wrong. The weights come from
    ``read_policy``'s cache: building agents again from the same file version reuses them."""
    policy = read_friday_policy(path)
    return PolicyAgent(policy, name=name or Path(path).stem, seed=seed, greedy=greedy)


REGISTRY = Registry("Friday", "friday13_env.friday", load_policy_agent)


# The module's calls are the registry's own methods (their docstrings say what each does).
register = REGISTRY.register
names = REGISTRY.names
options_of = REGISTRY.options_of
make = REGISTRY.make
load = REGISTRY.load


register("random", RandomAgent)
register("heuristic", HeuristicAgent)
register("search", SearchAgent)
