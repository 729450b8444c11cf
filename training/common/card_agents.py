"""Agents and policies named on a Friday the 13th training script's command line.

Every flag that names an agent (``--opponents``, ``--eval-opponents``, ...) takes what
``friday13_env.agents.make`` takes: a registered name, a name with options (``search:budget=600``), a
model-zoo name (``ensemble-v1``) or a checkpoint path. Every flag that names a policy file takes a zoo
name or a path (looked up from the working directory, then from the repository, so the defaults that
point at the shipped teachers in ``checkpoints/`` work from anywhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from common.script_args import REPOSITORY, repository_path
from friday13_env.core.agent import Agent
from friday13_env.friday13.agents import REGISTRY


def policy_file(name: str | Path, repository: Path = REPOSITORY) -> Path:
    """The checkpoint that a zoo name (``ensemble-v1``) or a path stands for."""
    if str(name) in REGISTRY.zoo():
        return REGISTRY.policy_path(str(name))
    return repository_path(str(name), repository)


def agent_deck(agent: Agent) -> str | None:
    """The deck an agent's policy was trained for (policies and agents built on one), or None."""
    for holder in (agent, getattr(agent, "policy", None)):
        deck = getattr(holder, "deck", None)
        name = getattr(deck, "name", None)
        if isinstance(name, str):
            return name
    return None


def checked_specs(specs: Sequence[str], flag: str, deck: str, *, unique: bool = False) -> list[str]:
    """The agent specs in their canonical form (``search:budget=600``), each built once to check it: a bad
    name or option, an unreadable checkpoint, a policy of another deck or (with ``unique``) a repeated agent
    is a ``ValueError`` that names ``flag``, raised before anything is trained or played. (Without ``unique``
    a repeated agent is how a pool draws one agent more often than another.)"""
    labels = []
    for spec in specs:
        try:
            label = REGISTRY.check(spec).label
            agent = REGISTRY.make(label, seed=0)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{flag}: {error}") from error
        trained_for = agent_deck(agent)
        if trained_for is not None and trained_for != deck:
            raise ValueError(f"{flag}: {spec} plays the {trained_for!r} deck, this run the {deck!r} deck")
        if unique and label in labels:
            raise ValueError(f"{flag}: {label} is listed twice")
        labels.append(label)
    return labels
