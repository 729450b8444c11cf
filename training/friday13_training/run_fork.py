"""``train_ppo.py --init-run``: a new run whose actor and critic start from another run's last checkpoint.

``--resume`` goes on with a run's own settings; a hyperparameter it trained with (the pool, its weighting, the
rates) cannot change. A fork can: it is a new run in its own folder, with its own settings, schedule and optimizer
(Adam starts afresh), from the networks the other run had reached. The networks must be of the same kind and depth
and read the same inputs; the fork's may be wider, its new units starting silent (``friday13_training.widening``),
so that a run can go on with more capacity than it started with. Its record keeps where it started
(``STARTED_FROM``), so a policy's lineage is never lost: it is learned from scratch when the run it started from was
(no ``--init-policy`` anywhere up the line).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from friday13_env.core.files import file_sha256
from friday13_env.core.specs import shown
from friday13_training.actor_critic import ActorCritic
from friday13_training.ppo_checkpoint import (
    CHECKPOINT,
    INIT_RUN,
    NEXT_CHECKPOINT,
    PROGRESS_EXTRA_KEYS,
    SCRIPT,
    STARTED_FROM,
    read_checkpoint,
    started_by,
)
from friday13_training.runs import RunError, load_progress
from friday13_training.widening import widen_into, widening_problem

NETWORK_FIELDS = ("deck", "activation", "input_features", "actor", "critic_sees_hands")
"""The arguments that fix the networks' kinds and inputs: a fork's must equal its source's. Its ``--hidden-sizes``
may be wider (``friday13_training.widening``)."""
NAME_A_RUN = "name the folder of a train_ppo.py run"
"""What to do about an ``--init-run`` that names no run."""


RETURN_FIELDS = ("reward", "horizon", "gamma")
"""The arguments that define the return the critic learns to predict: a fork may change them (its critic then
predicts another return until it has learned its own: ``--critic-warmup``), and its record keeps the source's."""
STARTED_FROM_FIELDS: dict[str, type] = {"run": str, "timesteps": int, "from_scratch": bool}
"""The fields of every ``STARTED_FROM`` record."""
STARTED_FROM_ADDED: dict[str, type] = {"return": dict, "checkpoint_sha256": str, "hidden_sizes": list}
"""The fields later releases added to it (a record of an earlier release has none): 0.24.0 the source's return
(``RETURN_FIELDS``) and the SHA-256 of the ``last.pt`` the fork started from, 0.25.0 the source's hidden widths."""


def positive_widths(widths: object) -> bool:
    """Whether ``widths`` is a record's list of hidden widths: ints above 0 (``8.0`` or ``True`` is no width)."""
    return isinstance(widths, list) and bool(widths) and all(type(width) is int and width > 0 for width in widths)


def started_from_problem(value: object) -> str | None:
    """What is wrong with a record's ``STARTED_FROM`` (as ``start_from`` writes it), or ``None``."""
    every = {**STARTED_FROM_FIELDS, **STARTED_FROM_ADDED}
    if not isinstance(value, dict) or not set(STARTED_FROM_FIELDS) <= set(value) <= set(every):
        return f"{STARTED_FROM} is {shown(value)}, not an object of {', '.join(every)}"
    for key, kind in every.items():
        if key in value and (type(value[key]) is not kind or (kind is int and value[key] < 0)):
            wanted = {bool: "a bool", int: "a non-negative int"}.get(kind, f"a {kind.__name__}")
            return f"{STARTED_FROM}[{key!r}] is {shown(value[key])}, not {wanted}"
    if "checkpoint_sha256" in value and not re.fullmatch(r"[0-9a-f]{64}", value["checkpoint_sha256"]):
        return f"{STARTED_FROM}['checkpoint_sha256'] is {shown(value['checkpoint_sha256'])}, not a SHA-256 in hex"
    if not positive_widths(widths := value.get("hidden_sizes", [1])):
        return f"{STARTED_FROM}['hidden_sizes'] is {shown(widths)}, not a list of positive widths"
    if "return" in value and set(value["return"]) != set(RETURN_FIELDS):
        return f"{STARTED_FROM}['return'] is {shown(value['return'])}, not an object of {', '.join(RETURN_FIELDS)}"
    return None


@dataclass(frozen=True)
class Source:
    """The run ``--init-run`` names, read and checked: its record and its checkpoint's networks."""

    folder: Path
    record: dict[str, Any]
    weights: dict[str, Any]
    checkpoint_sha256: str

    def started_from(self, added_later: Mapping[str, Any]) -> dict[str, Any]:
        """The ``STARTED_FROM`` record of a run that starts from this one: learned from scratch if this one was."""
        earlier = self.record.get(STARTED_FROM, {"from_scratch": True})
        return {
            "run": str(self.folder.resolve()),
            "timesteps": self.record["timesteps"],
            "from_scratch": not self.record["args"].get("init_policy") and earlier["from_scratch"],
            "return": self.learned_return(added_later),
            "checkpoint_sha256": self.checkpoint_sha256,
            "hidden_sizes": self.record["args"].get("hidden_sizes"),
        }

    def learned_return(self, added_later: Mapping[str, Any]) -> dict[str, Any]:
        """The return this run's critic learned to predict (``RETURN_FIELDS``)."""
        theirs = {**added_later, **self.record["args"]}
        return {name: theirs.get(name) for name in RETURN_FIELDS}


def read_source(
    folder: Path,
    fresh: dict[str, Any],
    added_later: Mapping[str, Any],
    device: str = "cpu",
    into: ActorCritic | None = None,
) -> Source:
    """The ``train_ppo.py`` run in ``folder``, for a new run recorded as ``fresh``: its ``progress.json`` (checked
    as ``--resume`` checks one; arguments added after it was recorded take ``added_later``'s values), networks of the
    new run's kinds and inputs (``NETWORK_FIELDS``) and as many hidden layers, each as wide or wider
    (``widening_problem``), and a readable ``last.pt`` of the record's timesteps (``read_checkpoint``, for
    ``INIT_RUN``); with ``into``, the new run's networks, its weights are checked against networks of the source's
    widths and loaded into ``into`` (widened where wider: ``widen_into``). A ``RunError`` for ``--init-run`` saying
    what is wrong, each differing flag named with the source's value."""
    if not (folder / CHECKPOINT).is_file():
        raise INIT_RUN.refused(f"{folder} holds no {CHECKPOINT}: {NAME_A_RUN}", None)
    if (folder / NEXT_CHECKPOINT).exists():
        raise INIT_RUN.refused(
            f"{folder} holds {NEXT_CHECKPOINT}, a checkpoint being written (is that run still going?) or one a kill "
            f"cut short: a --resume of {folder} ends it",
            None,
        )
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
    widths = record["args"].get("hidden_sizes")
    if not positive_widths(widths):
        differ.append(f"its --hidden-sizes is {shown(widths)}, not a list of positive widths: {record_file} is damaged")
    elif (problem := widening_problem(widths, mine["hidden_sizes"])) is not None:
        differ.append(f"its --hidden-sizes is {shown(widths)}, this run's {shown(mine['hidden_sizes'])}: {problem}")
    if differ:
        raise INIT_RUN.refused(f"{folder}: " + "; ".join(differ), None)
    if into is None or widths == mine["hidden_sizes"]:
        weights = read_checkpoint(folder / CHECKPOINT, INIT_RUN, device, record["timesteps"], into)
    else:  # read into networks of the source's widths, checked as ever, then widened into the fork's
        narrow = into.with_hidden(widths).to(device)
        weights = read_checkpoint(folder / CHECKPOINT, INIT_RUN, device, record["timesteps"], narrow)
        widen_into(narrow, into)
    return Source(folder, record, weights, file_sha256(folder / CHECKPOINT))


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
    anything is loaded; returns the new run's ``STARTED_FROM`` record. A fork that trains another return than its
    source's critic learned (``RETURN_FIELDS``) is said so on stderr: its critic's first values are of that return.
    """
    started = read_source(folder, fresh, added_later, device, into=model).started_from(added_later)
    if started["hidden_sizes"] != fresh["args"]["hidden_sizes"]:
        print(
            f"note: --init-run {folder}: its networks' hidden layers {started['hidden_sizes']} are widened to "
            f"{fresh['args']['hidden_sizes']}; the new units start silent (zero weights into the layer above), so "
            "the fork first plays as its source",
            file=sys.stderr,
            flush=True,
        )
    mine = {name: fresh["args"][name] for name in RETURN_FIELDS}
    if started["return"] != mine:
        theirs = " ".join(f"--{name} {value}" for name, value in started["return"].items())
        print(
            f"note: --init-run {folder}: its critic learned another return ({theirs}); its values are of that "
            "return until it learns this run's (--critic-warmup lets it learn before the actor moves)",
            file=sys.stderr,
            flush=True,
        )
    return started
