"""Agents by name, RLCard-style: ``make("random", seed=0)``, ``make("search", budget=...)``.

Names map to factories; anything that is not a registered name is treated as a checkpoint path
and handed to ``load``, so evaluation and the play CLI accept both without special cases.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from friday13_env.agents.base import Agent, RandomAgent
from friday13_env.agents.endgame import EndgameSearchAgent
from friday13_env.agents.heuristics import CautiousAgent, MajorityAgent
from friday13_env.agents.search import SearchAgent

AgentFactory = Callable[..., Agent]


class UnknownOptionError(ValueError, TypeError):
    """An option the agent does not take: a ``ValueError`` like every bad input here, and a
    ``TypeError`` like any unexpected keyword argument in Python, so either ``except`` catches it."""


_REGISTRY: dict[str, AgentFactory] = {}


def register(name: str, factory: AgentFactory) -> None:
    """Make ``factory(seed=..., **options)`` available as ``make(name)``."""
    if name in _REGISTRY:
        raise ValueError(f"an agent named {name!r} is already registered")
    _REGISTRY[name] = factory


def names() -> list[str]:
    """Registered agent names, sorted."""
    return sorted(_REGISTRY)


def constructor_options(factory: Callable[..., Any]) -> list[str]:
    """The keyword options an agent class or factory accepts (besides ``seed``), sorted."""
    parameters = inspect.signature(factory).parameters.values()
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return sorted(p.name for p in parameters if p.kind in keyword and p.name != "seed")


def options_of(name: str) -> list[str]:
    """The keyword options a registered agent accepts (besides ``seed``), sorted."""
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r}; registered agents: {names()}")
    return constructor_options(_REGISTRY[name])


def make(name: str, seed: int | None = None, **options: Any) -> Agent:
    """A registered agent by name, or a trained agent from a checkpoint path.

    An option the agent does not take is a ``ValueError`` that lists the ones it does; the agent
    itself validates the values.
    """
    if name in _REGISTRY:
        unknown = sorted(set(options) - set(options_of(name)))
        if unknown:
            raise UnknownOptionError(f"agent {name!r} has no option(s) {unknown}; its options: {options_of(name)}")
        return _REGISTRY[name](seed=seed, **options)
    if Path(name).suffix or Path(name).exists():
        if options:
            raise ValueError(f"checkpoint agents take no options, got {sorted(options)}")
        return load(name, seed=seed)
    raise ValueError(f"unknown agent {name!r}; registered agents: {names()}, or give a checkpoint path")


def load(path: str | Path, seed: int | None = None) -> Agent:
    """A trained agent from a checkpoint file (format defined in ``friday13_env.policy``)."""
    from friday13_env.policy import load_policy_agent

    return load_policy_agent(path, seed=seed)


register("random", RandomAgent)
register("cautious", CautiousAgent)
register("majority", MajorityAgent)
register("search", SearchAgent)
register("endgame", EndgameSearchAgent)
