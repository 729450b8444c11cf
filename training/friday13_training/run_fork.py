"""``train_ppo.py --init-run``: a new run whose actor and critic start from another run's last checkpoint.

``--resume`` goes on with a run's own settings; a hyperparameter it trained with (the pool, its weighting, the
rates) cannot change. A fork can: it is a new run in its own folder, with its own settings, schedule and optimizer
(Adam starts afresh), from the networks the other run had reached. The networks must be of the same shape and read
the same inputs. Its record keeps where it started (``STARTED_FROM``), so a policy's lineage is never lost: it is
learned from scratch when the run it started from was (no ``--init-policy`` anywhere up the line).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from friday13_env.core.specs import shown
from friday13_training.actor_critic import ActorCritic
from friday13_training.ppo_checkpoint import (
    CHECKPOINT,
    INIT_RUN,
    PROGRESS_EXTRA_KEYS,
    SCRIPT,
    STARTED_FROM,
    read_checkpoint,
    started_by,
)
from friday13_training.runs import RunError, load_progress

NETWORK_FIELDS = ("deck", "hidden_sizes", "activation", "input_features", "actor", "critic_sees_hands")
"""The arguments that fix the networks' shapes and inputs: a fork's must equal its source's."""
NAME_A_RUN = "name the folder of a train_ppo.py run"
"""What to do about an ``--init-run`` that names no run."""


def started_from_problem(value: object) -> str | None:
    """What is wrong with a record's ``STARTED_FROM`` (as ``start_from`` writes it), or ``None``."""
    fields = {"run": str, "timesteps": int, "from_scratch": bool}
    if not isinstance(value, dict) or set(value) != set(fields):
        return f"{STARTED_FROM} is {shown(value)}, not an object of {', '.join(fields)}"
    for key, kind in fields.items():
        if type(value[key]) is not kind or (kind is int and value[key] < 0):
            wanted = "a bool" if kind is bool else f"a non-negative {kind.__name__}"
            return f"{STARTED_FROM}[{key!r}] is {shown(value[key])}, not {wanted}"
    return None


@dataclass(frozen=True)
class Source:
    """The run ``--init-run`` names, read and checked: its record and its checkpoint's networks."""

    folder: Path
    record: dict[str, Any]
    weights: dict[str, Any]

    def started_from(self) -> dict[str, Any]:
        """The ``STARTED_FROM`` record of a run that starts from this one: learned from scratch if this one was."""
        earlier = self.record.get(STARTED_FROM, {"from_scratch": True})
        return {
            "run": str(self.folder.resolve()),
            "timesteps": self.record["timesteps"],
            "from_scratch": not self.record["args"].get("init_policy") and earlier["from_scratch"],
        }


def read_source(
    folder: Path,
    fresh: dict[str, Any],
    added_later: Mapping[str, Any],
    device: str = "cpu",
    into: ActorCritic | None = None,
) -> Source:
    """The ``train_ppo.py`` run in ``folder``, for a new run recorded as ``fresh``: its ``progress.json`` (checked
    as ``--resume`` checks one; arguments added after it was recorded take ``added_later``'s values), networks of the
    new run's shape and inputs (``NETWORK_FIELDS``) and a readable ``last.pt`` of the record's timesteps
    (``read_checkpoint``, for ``INIT_RUN``); with ``into``, the new run's networks, its weights are checked against
    them and loaded into them. A ``RunError`` for ``--init-run`` saying what is wrong, each differing flag named with
    the source's value."""
    if not (folder / CHECKPOINT).is_file():
        raise INIT_RUN.refused(f"{folder} holds no {CHECKPOINT}: {NAME_A_RUN}", None)
    record_file = folder / "progress.json"
    try:
        record = load_progress(record_file, fresh, PROGRESS_EXTRA_KEYS)
    except FileNotFoundError:
        raise INIT_RUN.refused(f"{folder} holds no progress.json: {NAME_A_RUN}", None) from None
    except ValueError as error:
        raise INIT_RUN.refused(f"{record_file} is damaged: {error}") from None
    script = started_by(folder, record, INIT_RUN)
    if script not in (None, SCRIPT):
        raise INIT_RUN.refused(f"{folder} is a {script} run, not a train_ppo.py run", None)
    if STARTED_FROM in record and (problem := started_from_problem(record[STARTED_FROM])) is not None:
        raise INIT_RUN.refused(f"{record_file} is damaged: {problem}")
    theirs, mine = {**added_later, **record["args"]}, fresh["args"]
    differ = [
        f"its --{name.replace('_', '-')} is {shown(theirs.get(name))}, this run's {shown(mine[name])}"
        for name in NETWORK_FIELDS
        if theirs.get(name) != mine[name]
    ]
    if differ:
        raise INIT_RUN.refused(f"{folder}: " + "; ".join(differ), None)
    weights = read_checkpoint(folder / CHECKPOINT, INIT_RUN, device, record["timesteps"], into)
    return Source(folder, record, weights)


def fork_problems(folder: Path, fresh: dict[str, Any], added_later: Mapping[str, Any]) -> list[str]:
    """Why the run in ``folder`` cannot start a new run recorded as ``fresh`` (``read_source``), for the checks of
    the command line, before anything is built."""
    try:
        read_source(folder, fresh, added_later)
    except RunError as error:
        return [str(error)]
    return []


def start_from(
    folder: Path, model: ActorCritic, device: str, fresh: dict[str, Any], added_later: Mapping[str, Any]
) -> dict[str, Any]:
    """Load the networks of the run in ``folder`` into ``model``, read and checked again (``read_source``: it may
    have changed since the flags were checked) with its weights' keys, shapes, dtypes and finite numbers, all before
    anything is loaded; returns the new run's ``STARTED_FROM`` record."""
    return read_source(folder, fresh, added_later, device, into=model).started_from()
