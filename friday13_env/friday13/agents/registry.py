"""The card game's agents by name: ``make("cautious", seed=0)``, ``make("search:budget=600")``,
``make("ensemble-v1")`` (a zoo policy) or ``make("path/to/policy.npz")``. See
:mod:`friday13_env.core.registry` for how a spec is resolved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from friday13_env.core.agent import Agent
from friday13_env.core.registry import AgentFactory, Registry, UnknownOptionError
from friday13_env.core.specs import AgentSpec
from friday13_env.friday13.agents.base import RandomAgent
from friday13_env.friday13.agents.endgame import EndgameSearchAgent
from friday13_env.friday13.agents.heuristics import CautiousAgent, MajorityAgent
from friday13_env.friday13.agents.policy import load_policy_agent
from friday13_env.friday13.agents.search import SearchAgent

REGISTRY = Registry("Friday the 13th", "friday13_env.friday13", load_policy_agent)

__all__ = ["REGISTRY", "UnknownOptionError", "load", "make", "names", "options_of", "register"]


def register(name: str, factory: AgentFactory) -> None:
    """Make ``factory(seed=..., **options)`` available as ``make(name)``."""
    REGISTRY.register(name, factory)


def names() -> list[str]:
    """Every agent name ``make`` accepts with no options (registered agents and zoo policies), sorted."""
    return REGISTRY.names()


def options_of(name: str) -> list[str]:
    """The keyword options an agent accepts (besides ``seed``), sorted."""
    return REGISTRY.options_of(name)


def make(spec: str | AgentSpec, seed: int | None = None, **options: Any) -> Agent:
    """An agent from a spec: a registered or zoo name, or a checkpoint path, with options."""
    return REGISTRY.make(spec, seed=seed, **options)


def load(path: str | Path, seed: int | None = None, greedy: bool = True) -> Agent:
    """A trained agent from a checkpoint file."""
    return REGISTRY.load(path, seed=seed, greedy=greedy)


register("random", RandomAgent)
register("cautious", CautiousAgent)
register("majority", MajorityAgent)
register("search", SearchAgent)
register("endgame", EndgameSearchAgent)
