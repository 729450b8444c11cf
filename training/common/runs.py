"""A training run's directory, shared by every training script (no SB3 here).

A run keeps ``progress.json`` (its arguments, timesteps done, learning-curve points) beside a checkpoint
file of the script's own (``last.zip`` for MaskablePPO, ``last.pt`` for the batched self-play trainer).
``--resume`` continues it; a hyperparameter given with another value than the run's is refused.

Nothing here exits the interpreter: a run directory that cannot be started or continued is a
``RunError`` naming the file and what to do, which a script's ``main`` turns into an exit message.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from common.script_args import atomic_write_bytes, dataclass_parser, field_errors, flag_name, given_flags
from friday13_env.core.signals import Interrupted as Interrupted  # re-exported for the scripts
from friday13_env.core.signals import signals_interrupt as signals_interrupt

RunArgs = TypeVar("RunArgs")


class RunError(Exception):
    """A run directory that cannot be started or continued, with what to do about it."""


def open_run(
    run_dir: Path, resume: bool, fresh_progress: dict[str, Any], checkpoint: str = "last.zip"
) -> dict[str, Any]:
    """The run's progress record: the stored one with ``resume``, else ``fresh_progress`` for a new run.

    A ``RunError`` when ``--resume`` finds no checkpoint or a damaged ``progress.json`` (it must hold every
    key of ``fresh_progress``, each of the same type), or when a new run would overwrite one.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"the run directory {run_dir} is a file")
    if resume:
        if not (run_dir / checkpoint).is_file():
            raise RunError(f"--resume: no checkpoint at {run_dir / checkpoint}; start the run without --resume first")
        return read_progress(run_dir / "progress.json", fresh_progress)
    if (run_dir / checkpoint).exists():
        raise RunError(f"{run_dir} already holds a run: pass --resume to continue it, or choose another --run-name")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create the run directory {run_dir}: {error.strerror or error}") from error
    return fresh_progress


def read_progress(path: Path, template: dict[str, Any]) -> dict[str, Any]:
    """``progress.json``, checked against the keys and types of a fresh run's record."""
    try:
        progress = json.loads(path.read_text())
    except FileNotFoundError:
        raise RunError(f"--resume: {path} is missing; the run directory is incomplete") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise RunError(f"--resume: {path} is damaged ({error}); restore it or start a new run") from error
    if not isinstance(progress, dict):
        raise RunError(f"--resume: {path} is damaged (not a JSON object); restore it or start a new run")
    for key, fresh in template.items():
        if key not in progress:
            raise RunError(f"--resume: {path} is damaged: it has no {key!r}")
        if fresh is not None and not _same_kind(progress[key], fresh):
            raise RunError(
                f"--resume: {path} is damaged: {key!r} should be a {type(fresh).__name__}, found {progress[key]!r}"
            )
    if isinstance(progress.get("timesteps"), int) and progress["timesteps"] < 0:
        raise RunError(f"--resume: {path} is damaged: timesteps {progress['timesteps']}")
    return progress


def _same_kind(value: object, like: object) -> bool:
    """Whether a stored value has the type of a fresh run's (an int stands for a float, a bool for neither)."""
    if isinstance(like, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(like, bool)
    if isinstance(like, float):
        return isinstance(value, int | float)
    return isinstance(value, type(like))


def changed_hyperparameters(stored: dict[str, Any], given: dict[str, Any], names: Iterable[str]) -> list[str]:
    """One line per hyperparameter of ``names`` whose ``given`` value differs from the ``stored`` run's."""
    return [
        f"{flag_name(name)}: the run has {stored.get(name)!r}, the command line {given[name]!r}"
        for name in names
        if name in given and stored.get(name) != given[name]
    ]


def next_multiple(done: int, every: int) -> float:
    """The first multiple of ``every`` after ``done`` (when the next periodic event is due); never if 0."""
    return (done // every + 1) * every if every > 0 else float("inf")


def export_copy(run_dir: Path, export: str) -> None:
    """Copy the run's final ``policy.npz`` to ``--export`` atomically (nothing when it is empty)."""
    if not export:
        return
    source = run_dir / "policy.npz"
    try:
        data = source.read_bytes()
    except OSError as error:
        raise RunError(f"--export: cannot read {source}: {error.strerror or error}") from error
    try:
        atomic_write_bytes(export, data)
    except OSError as error:
        raise RunError(f"--export: cannot write {export}: {error.strerror or error}") from error
    print(f"exported the policy to {export}", flush=True)


def parse_run_args(
    cls: type[RunArgs], description: str | None, checked: Callable[[RunArgs], RunArgs], argv: Sequence[str] | None
) -> RunArgs:
    """A run script's flags, one per field of ``cls`` (defaults, flags and help never drift apart). A new run's
    whole configuration is checked (``checked``, a ``ValueError`` listing every problem) before any work and
    refused with argparse's usage message; a resumed run's is checked once its recorded arguments are merged in."""
    parser = dataclass_parser(cls, description)
    args = cls(**vars(parser.parse_args(argv)))
    if args.resume:
        return args
    try:
        return checked(args)
    except ValueError as error:
        parser.error(str(error))


def run_main(
    cls: type[RunArgs],
    parse: Callable[[Sequence[str] | None], RunArgs],
    train: Callable[[RunArgs, set[str]], object],
    argv: Sequence[str] | None,
) -> None:
    """A run script's command line: bad flags exit with argparse's usage message, run-directory problems
    (``RunError``) with theirs; ``train`` also gets the flags the command line gave. Ctrl-C or SIGTERM during
    ``train`` is an ``Interrupted`` exception there, which ends the script with one line (what the run saved)."""
    args = parse(argv)
    try:
        with signals_interrupt():
            train(args, given_flags(cls, argv))
    except RunError as error:
        raise SystemExit(f"error: {error}") from None
    except Interrupted as stop:
        print(stop.message(), file=sys.stderr, flush=True)
        raise SystemExit(stop.exit_status) from None


def resumed_run_args(
    cls: Any,
    args: Any,
    given: set[str],
    progress: dict[str, Any],
    run_dir: Path,
    run_settings: Sequence[str],
    checked: Callable[[Any], Any],
    added_later: Mapping[str, Any] | None = None,
) -> Any:
    """The arguments a resumed run goes on with: the run's own, recorded in ``progress.json``, with the run settings
    (``run_settings``, the fields of ``cls`` that ``--resume`` may change) this command line gives. A hyperparameter
    given with another value is refused, each one listed; a damaged record is a ``RunError`` naming the file; what
    is left (this command line's settings, e.g. ``--export``) goes through ``checked``. ``added_later`` gives each
    hyperparameter added after runs were first recorded the value those runs were trained with, so that a record
    without it resumes as it was trained; any other missing argument is damage."""
    stored = {**(added_later or {}), **progress["args"]}
    values = dataclasses.asdict(args)
    names = [field.name for field in dataclasses.fields(cls)]
    changed = changed_hyperparameters(stored, values, [n for n in names if n not in run_settings and n in given])
    if changed:
        raise RunError("--resume keeps the run's hyperparameters; these differ: " + "; ".join(changed))
    merged = {**stored, **{name: values[name] for name in run_settings if name in given or name == "resume"}}
    merged["run_dir"] = values["run_dir"] or stored.get("run_dir", "")
    record = run_dir / "progress.json"
    try:
        resumed = cls(**{name: merged[name] for name in names})
    except (KeyError, TypeError) as error:
        raise RunError(f"--resume: {record} is damaged: its arguments lack {error}") from error
    problems = field_errors(cls, dataclasses.asdict(resumed))  # the command line's settings passed argparse already
    if problems:
        raise RunError(f"--resume: {record} is damaged: " + "; ".join(problems))
    try:
        return checked(resumed)
    except ValueError as error:
        raise RunError(f"--resume: {error}") from error
