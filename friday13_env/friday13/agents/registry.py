"""The card game's agents by name: ``make("cautious", seed=0)``, ``make("search:budget=600")``,
``make("ensemble-v1")`` (a zoo policy) or ``make("path/to/policy.npz")``. See
:mod:`friday13_env.core.registry` for how a spec is resolved."""

from __future__ import annotations

from friday13_env.core.registry import Registry, UnknownOptionError
from friday13_env.friday13.agents.base import RandomAgent
from friday13_env.friday13.agents.endgame import EndgameSearchAgent
from friday13_env.friday13.agents.heuristics import CautiousAgent, MajorityAgent
from friday13_env.friday13.agents.policy import load_policy_agent
from friday13_env.friday13.agents.search import SearchAgent

REGISTRY = Registry("Friday the 13th", "friday13_env.friday13", load_policy_agent)

__all__ = ["REGISTRY", "UnknownOptionError", "load", "make", "names", "options_of", "register"]


# The module's calls are the registry's own methods (their docstrings say what each does).
register = REGISTRY.register
names = REGISTRY.names
options_of = REGISTRY.options_of
make = REGISTRY.make
load = REGISTRY.load


register("random", RandomAgent)
register("cautious", CautiousAgent)
register("majority", MajorityAgent)
register("search", SearchAgent)
register("endgame", EndgameSearchAgent)
