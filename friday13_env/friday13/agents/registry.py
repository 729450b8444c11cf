"""The card game's agents by name: ``make("cautious", seed=0)``, ``make("search:budget=600")``,
``make("ensemble-v1")`` (a zoo policy) or ``make("path/to/policy.npz")``. See
:mod:`friday13_env.core.registry` for how a spec is resolved. ``random``, ``cautious`` and ``majority``
are registered with their batched forms (:func:`friday13_env.friday13.batched.agents.make_batched`)."""

from __future__ import annotations

from friday13_env.core.registry import Registry, UnknownOptionError
from friday13_env.friday13.agents.base import RandomAgent
from friday13_env.friday13.agents.endgame import EndgameSearchAgent
from friday13_env.friday13.agents.heuristics import CautiousAgent, MajorityAgent
from friday13_env.friday13.agents.policy import ZOO_PACKAGE, load_policy_agent
from friday13_env.friday13.agents.search import SearchAgent

REGISTRY = Registry("Friday the 13th", ZOO_PACKAGE, load_policy_agent)

__all__ = ["REGISTRY", "UnknownOptionError", "load", "make", "names", "options_of", "register"]


# The module's calls are the registry's own methods (their docstrings say what each does).
register = REGISTRY.register
names = REGISTRY.names
options_of = REGISTRY.options_of
make = REGISTRY.make
load = REGISTRY.load


# The batched forms (one object deciding for a whole GameBatch) by entry point: the batched code resolves specs
# through this registry, so it cannot be imported here.
_BATCHED = "friday13_env.friday13.batched.agents"

register("random", RandomAgent, batched=f"{_BATCHED}:BatchedRandom")
register("cautious", CautiousAgent, batched=f"{_BATCHED}:BatchedCautious")
register("majority", MajorityAgent, batched=f"{_BATCHED}:BatchedMajority")
register("search", SearchAgent)
register("endgame", EndgameSearchAgent)
register("netsearch", "friday13_env.friday13.agents.netsearch:NetSearchAgent")  # built on the batched engine
