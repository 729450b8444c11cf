"""Friday's agents by name: ``make("search:budget=16", seed=0)``, ``make("dagger-v1")`` (a zoo policy) or
``make("path/to/policy.npz")``. See :mod:`friday13_env.core.registry` for how a spec is resolved."""

from __future__ import annotations

from friday13_env.core.registry import Registry, UnknownOptionError
from friday13_env.friday.agents.base import RandomAgent
from friday13_env.friday.agents.expert import HeuristicAgent
from friday13_env.friday.agents.policy import load_policy_agent
from friday13_env.friday.agents.search import SearchAgent

REGISTRY = Registry("Friday", "friday13_env.friday", load_policy_agent)

__all__ = ["REGISTRY", "UnknownOptionError", "load", "make", "names", "options_of", "register"]


# The module's calls are the registry's own methods (their docstrings say what each does).
register = REGISTRY.register
names = REGISTRY.names
options_of = REGISTRY.options_of
make = REGISTRY.make
load = REGISTRY.load


register("random", RandomAgent)
register("heuristic", HeuristicAgent)
register("search", SearchAgent)
