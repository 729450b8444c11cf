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
    PROGRESS_EXTRA_KEYS,
    SCRIPT,
    STARTED_FROM,
    all_finite,
    read_state,
    started_by,
    stored_timesteps,
    weights_problem,
)
from friday13_training.runs import RunError, load_progress

NETWORK_FIELDS = ("deck", "hidden_sizes", "activation", "input_features", "actor", "critic_sees_hands")
"""The arguments that fix the networks' shapes and inputs: a fork's must equal its source's."""


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


def read_source(folder: Path, fresh: dict[str, Any], added_later: Mapping[str, Any], device: str = "cpu") -> Source:
    """The ``train_ppo.py`` run in ``folder``, for a new run recorded as ``fresh``: its ``progress.json`` (checked
    as ``--resume`` checks one; arguments added after it was recorded take ``added_later``'s values), networks of the
    new run's shape and inputs (``NETWORK_FIELDS``) and a readable ``last.pt`` of the record's timesteps. A
    ``ValueError`` saying what is wrong, each differing flag named with the source's value."""
    if not (folder / CHECKPOINT).is_file():
        raise ValueError(f"{folder} holds no {CHECKPOINT}: name the folder of a train_ppo.py run")
    try:
        record = load_progress(folder / "progress.json", fresh, PROGRESS_EXTRA_KEYS)
        script = started_by(folder, record)
    except FileNotFoundError:
        raise ValueError(f"{folder} holds no progress.json: name the folder of a train_ppo.py run") from None
    except RunError as error:
        raise ValueError(str(error).removeprefix("--resume: ")) from None
    if script not in (None, SCRIPT):
        raise ValueError(f"{folder} is a {script} run, not a train_ppo.py run")
    if STARTED_FROM in record and (problem := started_from_problem(record[STARTED_FROM])) is not None:
        raise ValueError(f"{folder / 'progress.json'} is damaged: {problem}")
    theirs, mine = {**added_later, **record["args"]}, fresh["args"]
    differ = [
        f"its --{name.replace('_', '-')} is {shown(theirs.get(name))}, this run's {shown(mine[name])}"
        for name in NETWORK_FIELDS
        if theirs.get(name) != mine[name]
    ]
    if differ:
        raise ValueError(f"{folder}: " + "; ".join(differ))
    path = folder / CHECKPOINT
    try:
        state = read_state(path, device)
        weights = state["model"]
        stored = stored_timesteps(state, path)
    except Exception as error:  # a zip bomb, unpickling or a missing key: not a checkpoint of a run
        raise ValueError(f"{path} is damaged or not a train_ppo.py checkpoint ({error})") from error
    if stored is not None and stored != record["timesteps"]:
        raise ValueError(f"{path} holds {stored:,} timesteps, its progress.json {record['timesteps']:,}")
    if not isinstance(weights, dict):
        raise ValueError(f"{path} is damaged or not a train_ppo.py checkpoint (its networks are not a state)")
    return Source(folder, record, weights)


def fork_problems(folder: Path, fresh: dict[str, Any], added_later: Mapping[str, Any]) -> list[str]:
    """Why the run in ``folder`` cannot start a new run recorded as ``fresh`` (``read_source``), for the checks of
    the command line, before anything is built."""
    try:
        read_source(folder, fresh, added_later)
    except ValueError as error:
        return [f"--init-run: {error}"]
    return []


def start_from(
    folder: Path, model: ActorCritic, device: str, fresh: dict[str, Any], added_later: Mapping[str, Any]
) -> dict[str, Any]:
    """Load the networks of the run in ``folder`` into ``model``, read and checked again (``read_source``: it may
    have changed since the flags were checked) with its weights' keys, shapes, dtypes and finite numbers, all before
    anything is loaded; returns the new run's ``STARTED_FROM`` record."""
    try:
        source = read_source(folder, fresh, added_later, device)
    except ValueError as error:
        raise RunError(f"--init-run: {error}") from None
    path = folder / CHECKPOINT
    problem = weights_problem(source.weights, model)
    if problem is not None or not all_finite(source.weights):
        raise RunError(f"--init-run: {path} does not fit this run's networks ({problem or 'non-finite numbers'})")
    model.load_state_dict(source.weights)
    return source.started_from()
