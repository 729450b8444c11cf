"""Friday's agents, by name, the same shape as the card game's: ``make("search:budget=16", seed=0)``,
``make("dagger-v1")`` (a zoo policy) or ``make("path/to/policy.npz")`` (:mod:`.registry`).

Protocol (:class:`friday13_env.core.agent.Agent`, one for both games): a ``name`` and
``act(observation) -> int``, where ``observation`` is ``{"observation": vector, "action_mask": mask}``
(:func:`friday13_env.friday.env.observation_dict` builds it from ``env.step``'s ``obs`` and ``info``).
Agents see only that and the printed card data of :mod:`friday13_env.friday.cards`, never the engine
state; the rule-based and search agents rebuild a state from the observation with the unknown orders
sampled (:mod:`.belief`) and reason on that.

Seeding: ``make(spec, seed=s)`` builds a reproducible agent; the evaluation builds one per game from
the spec, seeded from its own key of the game's seed (``evaluation.agent_seed``). The random, heuristic and
search agents also have an optional ``reset(seed)`` hook that re-seeds them in place (the same as building a new
one with that seed), for code that keeps one agent object across games; agents need not have it.

Registered agents: ``random`` (:mod:`.base`, uniform over the legal actions), ``heuristic`` (:mod:`.expert`,
the rule-based expert, option ``samples``), ``search`` (:mod:`.search`, Monte-Carlo search over the expert's
moves, options ``budget``, ``horizon``, ``rollout_samples``, ``margin``), plus the zoo's trained policies
(:mod:`.policy`, option ``greedy``). Both reasoning agents score positions with the learned win model
(:mod:`.value`, fitted by :mod:`.value_fit`).
"""

from friday13_env.core.agent import Agent
from friday13_env.core.mlp import PolicyAgent
from friday13_env.core.registry import UnknownOptionError
from friday13_env.friday.agents.base import RandomAgent
from friday13_env.friday.agents.expert import HeuristicAgent
from friday13_env.friday.agents.policy import load_policy_agent
from friday13_env.friday.agents.registry import REGISTRY, load, make, names, options_of, register
from friday13_env.friday.agents.search import SearchAgent
from friday13_env.friday.env import observation_dict

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
