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

from friday13_env.core.registry import Registry
from friday13_env.core.specs import parse_spec
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.agents.seating import DeckMismatchError, make_seated
from friday13_env.friday13.cards import Deck
from friday13_training.script_args import REPOSITORY, repository_path


def policy_file(name: str | Path, repository: Path = REPOSITORY, registry: Registry = REGISTRY) -> Path:
    """The checkpoint that a zoo name (``ensemble-v1``; of ``registry``'s game, Friday the 13th's unless given) or a
    path stands for."""
    if str(name) in registry.zoo():
        return registry.policy_path(str(name))
    return repository_path(str(name), repository)


def spec_files(specs: Sequence[str], registry: Registry = REGISTRY) -> list[Path]:
    """The checkpoints each agent spec reads: ``policy_file`` of its name (``x.npz:greedy=false`` reads ``x.npz``; a
    zoo name of ``registry``'s game, Friday the 13th's unless given), then of each of its text options
    (``endgame:policy=x.npz`` reads ``x.npz`` too); a heuristic's name stands for no file. A spec that does not parse
    is taken whole (the spec checks blame it on its flag)."""
    files = []
    for spec in specs:
        try:
            parsed = parse_spec(spec)
        except ValueError:
            files.append(policy_file(spec, registry=registry))
            continue
        texts = [value for _, value in parsed.options if isinstance(value, str)]
        files += [policy_file(name, registry=registry) for name in (parsed.name, *texts)]
    return files


def checked_specs(specs: Sequence[str], flag: str, deck: str, *, unique: bool = False) -> list[str]:
    """The agent specs in their canonical form (``search:budget=600``), each built once to check it: a bad
    name or option, an unreadable checkpoint, a policy of another deck or (with ``unique``) a repeated agent
    is a ``ValueError`` that names ``flag``, raised before anything is trained or played. (Without ``unique``
    a repeated agent is how a pool draws one agent more often than another.)"""
    labels = []
    for spec in specs:
        try:
            label = REGISTRY.check(spec).label
            make_seated(label, 0, deck)
        except DeckMismatchError as error:
            raise ValueError(
                f"{flag}: {spec} plays the {error.agent_deck.name!r} deck, this run the {deck!r} deck"
            ) from error
        except (ValueError, TypeError) as error:
            raise ValueError(f"{flag}: {error}") from error
        if unique and label in labels:
            raise ValueError(f"{flag}: {label} is listed twice")
        labels.append(label)
    return labels


def evaluation_opponent_errors(specs: Sequence[str], deck: Deck) -> list[str]:
    """Every problem of ``--eval-opponents``, each named: a spec that cannot be seated at a table of ``deck``
    (the evaluation seats scalar agents, so every agent spec works there, search included) or an opponent
    listed twice."""
    problems = []
    for spec in specs:
        try:
            make_seated(spec, 0, deck)
        except ValueError as error:
            problems.append(f"--eval-opponents: {error}")
    if len(set(specs)) != len(specs):
        problems.append(f"--eval-opponents must not repeat an opponent, got {list(specs)}")
    return problems
