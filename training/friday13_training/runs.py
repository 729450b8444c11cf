"""A training run's directory, shared by every training script (no SB3 here).

A run keeps ``progress.json`` (its arguments, timesteps done, learning-curve points) beside a checkpoint
file of the script's own (``last.zip`` for MaskablePPO, ``last.pt`` for the batched self-play trainer).
``--resume`` continues it; a hyperparameter given with another value than the run's is refused.

Nothing here exits the interpreter: a run directory that cannot be started or continued is a
``RunError`` naming the file and what to do, which a script's ``main`` turns into an exit message.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import math
import os
import re
import shutil
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

import numpy as np

from friday13_env.core.checks import finite_number, is_duration
from friday13_env.core.files import clashing_outputs, output_inside, read_capped
from friday13_env.core.signals import Interrupted as Interrupted  # re-exported for the scripts
from friday13_env.core.signals import signals_interrupt as signals_interrupt
from friday13_env.core.specs import (
    FACTORY,
    first_repeat,
    is_existing_file,
    parse_spec,
    shown,
    working_folder_importable,
)
from friday13_env.core.zoo import zoo_output_problem
from friday13_env.friday13.agents.policy import read_friday13_policy
from friday13_training.script_args import atomic_write_bytes, dataclass_parser, field_errors, flag_name, given_flags


class ResumableArgs(Protocol):
    """What every run script's ``Args`` has: ``--resume``."""

    resume: bool


RunArgs = TypeVar("RunArgs", bound=ResumableArgs)
Policy = TypeVar("Policy")
"""What a game's policy loader returns (``checked_policy`` hands it back)."""
MAX_TIMESTEPS = 10**15
"""The most timesteps a run may train for (``--total-timesteps``) or record: beyond any real run, and far inside the
integers that the seeds derived from it (``--seed`` + timesteps) and JSON's doubles hold exactly."""
MAX_SEED = 2**32 - 1
"""The largest ``--seed`` (numpy's legacy seeding, which Stable-Baselines3 uses, takes no more)."""
MAX_PROGRESS_BYTES = 64 << 20
"""The largest ``progress.json`` read (checked before it is parsed); a real record is a few kilobytes."""
MAX_PROGRESS_DEPTH = 16
"""The deepest nesting of lists and objects in ``progress.json`` (a real record nests 4 deep)."""
SNAPSHOT_NAME = re.compile(r"snapshot_[0-9]{1,16}")
"""A recorded snapshot's name: its file is ``snapshots/<name>.npz``, so nothing else (no path) is accepted."""
TRAINING_RUN_FILES = ("progress.json", "last.pt", "last.zip")
"""What a training run (``train_ppo.py``, ``best_response.py``, ``finetune_ppo.py``, ``train_friday.py``) keeps in its
folder: ``distill.py`` refuses an ``--out-dir`` holding any of them, as its ``policy.npz`` would replace the run's."""
DISTILL_FILES = ("summary.json", "positions.npz", "student_0.npz")
"""What ``distill.py`` leaves in its ``--out-dir`` before (or with) its ``policy.npz``: the summary, the ensemble
teacher's cached games, the search teacher's first student. Every new training run refuses a folder holding any of
them (``open_run``), as its ``policy.npz`` would replace the distilled one."""


class RunError(Exception):
    """A run directory that cannot be started or continued, with what to do about it."""


class NamedRun(Protocol):
    """The fields of a training script's ``Args`` that say where its run directory is."""

    run_name: str
    run_dir: str


def run_name_problem(args: object) -> str | None:
    """Why a script's ``--run-name`` cannot name its folder under ``runs/``, or None: empty (without ``--run-dir``),
    ``.`` or ``..``, or a path (a separator in it, or absolute), which would put the run outside ``runs/``. A script
    without the two flags has none; a name ``--run-dir`` overrides is not read, so it is not checked."""
    name, folder = getattr(args, "run_name", None), getattr(args, "run_dir", None)
    if name is None or folder:
        return None
    if not name:
        return "--run-name must not be empty (or give --run-dir)"
    if name in (".", "..") or any(separator in name for separator in "/\\") or Path(name).is_absolute():
        return (
            f"--run-name {name!r} is not a folder name: the run's folder is runs/<run-name>, so give a name without / "
            "or \\ (and not . or ..), or give --run-dir for a folder elsewhere"
        )
    return None


def name_problems(args: object) -> list[str]:
    """``run_name_problem`` as the list of problems a script's ``checked_args`` gathers: a configuration built in
    Python, which no parser has read, is refused as the command line is."""
    problem = run_name_problem(args)
    return [problem] if problem else []


def run_directory(args: NamedRun) -> Path:
    """The run's directory: ``--run-dir`` when given, else ``runs/<run-name>``."""
    return Path(args.run_dir or Path("runs") / args.run_name)


def open_run(
    run_dir: Path,
    resume: bool,
    fresh_progress: dict[str, Any],
    checkpoint: str = "last.zip",
    extra_keys: Iterable[str] | None = None,
    other_checkpoints: Sequence[str] = (),
) -> dict[str, Any]:
    """The run's progress record: the stored one with ``resume``, else ``fresh_progress`` for a new run.

    A ``RunError`` when ``--resume`` finds no checkpoint or a damaged ``progress.json`` (``read_progress``), or when
    a new run would overwrite one: ``checkpoint``, any of ``other_checkpoints`` (the files of a run's stages, which
    a new run would otherwise go on from or write over) or any of ``DISTILL_FILES`` is already in ``run_dir``.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise RunError(f"the run directory {run_dir} is a file")
    if resume:
        if not (run_dir / checkpoint).is_file():
            raise RunError(f"--resume: no checkpoint at {run_dir / checkpoint}; start the run without --resume first")
        lock_run(run_dir)
        return read_progress(run_dir / "progress.json", fresh_progress, extra_keys)
    if (run_dir / checkpoint).exists():
        raise RunError(f"{run_dir} already holds a run: pass --resume to continue it, or choose another --run-name")
    for name in (*other_checkpoints, *DISTILL_FILES):
        if (run_dir / name).exists():
            raise RunError(
                f"{run_dir} already holds a run ({name}) but no {checkpoint}, which --resume needs (another run's, or"
                f" one stopped before it wrote {checkpoint}): choose another --run-name or --run-dir, or delete"
                f" {run_dir / name} to start a new run there"
            )
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise RunError(f"cannot create the run directory {run_dir}: {error.strerror or error}") from error
    lock_run(run_dir)
    return fresh_progress


def save_folder_checkpoint(run_dir: Path, name: str, write: Callable[[Path], None]) -> None:
    """Replace the run's checkpoint folder ``run_dir / name`` with the one ``write`` writes (it is given a folder path
    that does not exist), so that a stop at any moment leaves a whole checkpoint: ``write`` fills ``<name>.partial``,
    which becomes ``<name>.new`` once whole; the checkpoint steps aside as ``<name>.old``, ``<name>.new`` takes its
    place, and only then is ``<name>.old`` deleted. A checkpoint a stop left stepped aside is put back first
    (``recover_folder_checkpoint``), so the leftovers of an earlier save that this one deletes are never the run's
    only checkpoint."""
    current = run_dir / name
    partial, fresh, old = (run_dir / f"{name}.{part}" for part in ("partial", "new", "old"))
    recover_folder_checkpoint(run_dir, name)
    for leftover in (partial, fresh, old):  # (with no checkpoint, none is left: recover took the whole one)
        shutil.rmtree(leftover, ignore_errors=True)
    write(partial)
    partial.rename(fresh)
    if current.exists():
        current.rename(old)
    fresh.rename(current)
    shutil.rmtree(old, ignore_errors=True)


def recover_folder_checkpoint(run_dir: Path, name: str) -> str | None:
    """Put back the checkpoint folder a stop in the middle of ``save_folder_checkpoint`` left without ``run_dir /
    name``: ``<name>.old`` (the checkpoint stepped aside, the one the run's record was written with), else
    ``<name>.new`` (whole: it is renamed so only once written); ``<name>.partial`` is never whole. Returns the folder
    put back (None: nothing to do, or nothing whole)."""
    current = run_dir / name
    if current.exists():
        return None
    for part in ("old", "new"):
        leftover = run_dir / f"{name}.{part}"
        if leftover.is_dir() and not leftover.is_symlink():
            leftover.rename(current)
            return leftover.name
    return None


def session_seed(seed: int, done: int) -> int:
    """The seed of a working session of a run that starts ``done`` steps in: the run's ``seed`` for a fresh run (so a
    run never stopped deals as before), else one drawn from both (``numpy.random.SeedSequence``), below 2**32. A
    resumed run so never deals and samples as a fresh run of another seed, as ``seed + done`` did (seed 0 resumed
    at 512 was seed 512 started)."""
    if done == 0:
        return seed
    return int(np.random.SeedSequence([seed, done]).generate_state(1)[0])


LOCK_FILE = ".run.lock"
"""The file in a run folder whose lock the process running the run holds."""
_held_locks: dict[Path, IO[bytes]] = {}


def lock_run(run_dir: Path) -> None:
    """Hold ``run_dir``'s lock (an exclusive ``flock`` of ``LOCK_FILE``) until ``release_run_locks`` (as the script's
    command ends) or this process ends, or a ``RunError`` if another process holds it: two processes on one run
    folder wrote over each other's checkpoints and records (the one that finished last left its run, the other's
    was gone). A process that holds it already goes on (a script that resumes its own run). A lock file that is a
    link is refused, not followed (a folder copied from elsewhere would have the lock create or hold a file outside
    it). Where ``flock`` does not exist (Windows), nothing is locked."""
    key = run_dir.resolve()
    if key in _held_locks or sys.platform == "win32":
        return
    import fcntl

    path = run_dir / LOCK_FILE
    try:
        handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644), "r+b")
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW's answer for a link
            raise RunError(f"{path} is a link: a run folder's lock is its own file; delete the link") from None
        raise RunError(f"cannot open {path}, the run folder's lock: {error.strerror or error}") from error
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise RunError(
            f"{run_dir} is in use by another process (it holds {run_dir / LOCK_FILE}): wait for that run to end, or "
            "choose another --run-name"
        ) from None
    _held_locks[key] = handle


def release_run_locks(keep: Iterable[Path] = ()) -> None:
    """Let go of the run folders' locks this process holds (``lock_run``), but those of the folders in ``keep`` (as
    ``lock_run`` keys them: resolved): a run script's command lets go of those it took when it ends, so that a
    process that runs several (a notebook, the tests) keeps no file open per run, and a finished run's folder is
    free to another process while this one lives."""
    for key in set(_held_locks) - set(keep):
        _held_locks.pop(key).close()  # closing the only open file of the lock lets go of its flock


def read_progress(path: Path, template: dict[str, Any], extra_keys: Iterable[str] | None = None) -> dict[str, Any]:
    """``progress.json``, checked against a schema (``load_progress``); a missing file, or any damage, is a
    ``RunError`` ``--resume: <path> is damaged: <what>``."""
    try:
        return load_progress(path, template, extra_keys)
    except FileNotFoundError:
        raise RunError(f"--resume: {path} is missing; the run directory is incomplete") from None
    except ValueError as error:
        raise RunError(f"--resume: {path} is damaged: {error}; restore it or start a new run") from None


def load_progress(path: Path, template: dict[str, Any], extra_keys: Iterable[str] | None = None) -> dict[str, Any]:
    """A run's record, checked against a schema: the keys and types of a fresh run's record (``template``), and
    the range of every field the scripts share (``progress_problems``); with ``extra_keys`` no key outside the
    template and those. It must be a regular file (a device or a pipe reports no size a cap can trust: /dev/zero, a
    FIFO) and its size is bounded before it is parsed (``read_capped``), its nesting after, and NaN or an infinity
    (which ``json`` takes by default) is refused. A ``FileNotFoundError`` when it is missing, a ``ValueError`` saying
    what is damaged for any other problem (without the path: ``read_progress`` and ``plot_curve.py`` name it)."""
    try:
        raw = read_capped(path, MAX_PROGRESS_BYTES, None, raise_missing=True)
        progress = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_PROGRESS_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(_short(str(error))) from error
    if not isinstance(progress, dict):
        raise ValueError("not a JSON object")
    if _depth(progress) > MAX_PROGRESS_DEPTH:
        raise ValueError(f"nested deeper than {MAX_PROGRESS_DEPTH} levels")
    for key, fresh in template.items():
        if key not in progress:
            raise ValueError(f"it has no {key!r}")
        if fresh is not None and not _same_kind(progress[key], fresh):
            raise ValueError(f"{key!r} should be a {type(fresh).__name__}, found {_short(repr(progress[key]))}")
    if extra_keys is not None and (unknown := sorted(set(progress) - set(template) - set(extra_keys))):
        raise ValueError(f"unknown fields {_short(repr(unknown))}")
    problems = progress_problems(progress)
    if problems:
        raise ValueError("; ".join(problems))
    return progress


def progress_problems(progress: dict[str, Any]) -> list[str]:
    """What is out of range in the fields of a run's record that the scripts share (those it has): timesteps and
    iterations, times, snapshot names (each listed once), the record of a distillation's final fit
    (``distill_final``), learning-curve points (each a ``timesteps`` and named numbers); one line each."""
    problems = []
    for key in ("timesteps", "iterations"):
        if key in progress and not _is_count(progress[key]):
            problems.append(f"{key} {_short(repr(progress[key]))} (allowed: 0 to {MAX_TIMESTEPS:,})")
    for key in ("seconds", "wall_time_s"):
        if key in progress and not is_duration(progress[key]):
            problems.append(f"{key} {_short(repr(progress[key]))} (allowed: a number of seconds, at least 0)")
    clock = progress.get("clock", {})
    if not isinstance(clock, dict) or not all(is_duration(value) for value in clock.values()):
        problems.append(f"clock {_short(repr(clock))} (allowed: seconds by part, each at least 0)")
    snapshots = progress.get("snapshots", [])
    if not isinstance(snapshots, list) or not all(
        isinstance(name, str) and SNAPSHOT_NAME.fullmatch(name) for name in snapshots
    ):
        problems.append(f"snapshots {_short(repr(snapshots))} (allowed: names snapshot_<timesteps>)")
    elif (repeat := first_repeat(snapshots)) is not None:
        problems.append(
            f"snapshots {_short(repr(snapshots))} repeats {snapshots[repeat[0]]} (allowed: each snapshot once: one "
            "listed twice would be drawn twice as often, which no run writes)"
        )
    final = progress.get("distill_final")
    if final is not None and not _is_final_fit(final):
        problems.append(
            f"distill_final {_short(repr(final))} (allowed: null, or an object with after_rounds, a count, and "
            "numbers loss and wall_s of at least 0 where it has them)"
        )
    curve = progress.get("curve", [])
    for index, point in enumerate(curve if isinstance(curve, list) else []):
        if not (
            isinstance(point, dict)
            and _is_count(point.get("timesteps"))
            and all(isinstance(value, int | float) and not isinstance(value, bool) for value in point.values())
        ):
            problems.append(f"curve point {index} {_short(repr(point))} (allowed: timesteps and named numbers)")
            break
    return problems


def check_win_rate_curve(path: Path, progress: dict[str, Any], opponents: Sequence[str]) -> None:
    """A run's learning curve of win rates against ``opponents`` (``win_rate_curve_problem``), or a ``RunError``
    ``--resume: <path> is damaged: <what>``."""
    problem = win_rate_curve_problem(progress, opponents)
    if problem:
        raise RunError(f"--resume: {path} is damaged: {problem}")


def win_rate_curve_problem(progress: dict[str, Any], opponents: Sequence[str]) -> str | None:
    """What is wrong with a run's learning curve of win rates against ``opponents`` (its evaluation baselines), or
    None: each point must hold their rates, between 0 and 1, at timesteps and seconds that never go back and are not
    past the record's. A point's seconds may be missing (points written before 0.11.0 recorded them; a record
    without ``seconds`` of its own, as ``finetune_ppo.py``'s, bounds none). The types were checked already
    (``load_progress``)."""
    expected = {"timesteps", *opponents}
    latest_seconds = progress.get("seconds", math.inf)
    earlier, earlier_seconds = 0, 0.0
    for index, point in enumerate(progress["curve"]):
        if set(point) - {"seconds"} != expected or not all(0 <= point[name] <= 1 for name in opponents):
            return (
                f"curve point {index} {_short(repr(point))} (allowed: timesteps, seconds and a win rate from 0 to 1 "
                f"against each of {list(opponents)})"
            )
        if not earlier <= point["timesteps"] <= progress["timesteps"]:
            return (
                f"curve point {index} at {point['timesteps']:,} timesteps (allowed: from {earlier:,}, the point "
                f"before, to {progress['timesteps']:,}, the record's)"
            )
        if "seconds" in point and not earlier_seconds <= point["seconds"] <= latest_seconds:
            return (
                f"curve point {index} at {point['seconds']!r} seconds (allowed: from {earlier_seconds!r}, the point "
                f"before, to {latest_seconds!r}, the record's)"
            )
        earlier, earlier_seconds = point["timesteps"], point.get("seconds", earlier_seconds)
    return None


def entry_point(spec: object) -> bool:
    """Whether an agent spec names a factory of the user's own, ``module:factory``: building it imports the module
    and calls the factory. Told as the registries tell one: a name of that form (``FACTORY``, which takes no options)
    that is not an existing file (a checkpoint, never imported)."""
    if not isinstance(spec, str):
        return False
    try:
        name = parse_spec(spec).name
    except ValueError:
        return False
    return bool(FACTORY.match(name)) and not is_existing_file(name)


def check_recorded_factories(
    record: Path,
    stored: Mapping[str, Any],
    command_line: Mapping[str, Any],
    given: Collection[str],
    fields: Iterable[str],
) -> None:
    """Refuse to resume a run whose record (``stored``, read from ``record``) names an agent factory
    (``entry_point``) in one of ``fields`` (each a spec or a list of specs) that the command line does not give in
    that field too (``given``: the fields it sets, with their values in ``command_line``). Building the agent would
    import its module and call it, so a record that was changed, or came from elsewhere, would run code that no
    command named; checked before any agent is built. A ``RunError`` listing each one."""
    unconfirmed = []
    for name in fields:
        recorded = stored.get(name)
        typed = command_line.get(name) if name in given else []
        typed_specs = {_canonical(spec) for spec in (typed if isinstance(typed, list) else [typed])}
        for spec in recorded if isinstance(recorded, list) else [recorded]:
            if entry_point(spec) and _canonical(spec) not in typed_specs:
                unconfirmed.append(f"{flag_name(name)} {_short(str(spec), 80)}")
    if unconfirmed:
        raise RunError(
            f"--resume: {record} names agent factories that this command line does not: {'; '.join(unconfirmed)}. "
            "Building one imports its module and calls it, and a resume runs no code that only a file names: give "
            "the flag with the same specs on the command line to run them, or restore the record"
        )


def _canonical(spec: object) -> object:
    """A spec's canonical text where it parses (``parse_spec``), else the value as it is."""
    try:
        return parse_spec(spec).label
    except ValueError:
        return spec


def check_own_folder(run_dir: Path, name: str) -> None:
    """Refuse a run folder whose sub-folder ``name`` (``snapshots``) is a link, or something else than a folder: a
    run writes and deletes files there, and through a link they would be files outside the run (another folder's,
    anyone's). A ``RunError`` naming it."""
    path = run_dir / name
    if path.is_symlink():
        raise RunError(
            f"{path} is a link (to {shown(os.readlink(path))}): a run writes and deletes files in its own {name}/ "
            "folder, never through a link to another; replace the link with the folder it names"
        )
    if path.exists() and not path.is_dir():
        raise RunError(f"{path} is not a folder: the run keeps its {name} there; move it away")


def inside_run(path: Path, run_dir: Path) -> bool:
    """Whether ``path``, resolved (through every link), lies inside the run folder ``run_dir``: a file a run may
    delete as its own."""
    return path.resolve().is_relative_to(run_dir.resolve())


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _depth(value: object) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_PROGRESS_DEPTH:
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _is_final_fit(value: object) -> bool:
    """Whether ``value`` is a record of a distillation's final fit: the rounds it came after, its loss, its time."""
    if not isinstance(value, dict) or not _is_count(value.get("after_rounds")):
        return False
    loss, seconds = value.get("loss", 0.0), value.get("wall_s", 0.0)
    return finite_number(loss) is not None and is_duration(seconds)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TIMESTEPS


def _short(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters on one line: an error quotes a damaged value, not all of it."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


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


def match_checkpoint(path: Path, timesteps: int, progress: dict[str, Any], most_ahead: int) -> None:
    """Check a checkpoint's ``timesteps`` against ``progress.json`` (beside it): one behind is a ``RunError``; one
    ahead (a run stopped between writing the two) by at most ``most_ahead`` (``checkpoint_reach``) moves ``progress``
    up to it. Further ahead, or past ``MAX_TIMESTEPS``, is a ``RunError`` too: no run writes such a checkpoint (a
    count of 2**70 would be recorded, and every resume after it refused)."""
    record = path.parent / "progress.json"
    if timesteps < progress["timesteps"]:
        raise RunError(
            f"--resume: {path} holds {timesteps:,} timesteps but {record} records "
            f"{progress['timesteps']:,}: the two files are not of the same checkpoint"
        )
    if timesteps > min(progress["timesteps"] + most_ahead, MAX_TIMESTEPS):
        raise RunError(
            f"--resume: {path} holds {timesteps:,} timesteps but {record} records {progress['timesteps']:,}: a run "
            f"stopped between writing the two leaves its checkpoint at most {most_ahead:,} ahead (a checkpoint "
            f"interval and a rollout; {MAX_TIMESTEPS:,} in all), so they are not of the same run; restore them or "
            "start a new run"
        )
    if timesteps > progress["timesteps"]:
        print(f"note: {path} is ahead of progress.json; going on from {timesteps:,} timesteps", flush=True)
        progress["timesteps"] = timesteps


def checkpoint_reach(sessions: Iterable[Mapping[str, Any]], rollout: int, length: str = "total_timesteps") -> int:
    """How far ahead of its record a checkpoint may be (``match_checkpoint``): a run writes its checkpoint before its
    record, and checkpoints at the first rollout that reaches each multiple of ``--checkpoint-every``, so a stop
    between the two writes leaves the checkpoint at most one interval and one ``rollout`` ahead; an interval of 0
    (only at the end) reaches the run's end (its ``length`` argument: ``train_rllib.py`` counts ``iterations``, with
    a ``rollout`` of 0). ``sessions``: the arguments of the session that wrote the record and of this one
    (``--resume`` may change the interval and the length, and either may have written the checkpoint); a value that
    is not a count is left out (the record's checks name it)."""
    reach = 0
    for args in sessions:
        every, total = args.get("checkpoint_every"), args.get(length)
        if isinstance(every, int) and isinstance(total, int) and _is_count(every) and _is_count(total):
            reach = max(reach, every or total)
    return rollout + reach


def actor_warmup(critic_warmup: int, trained_start: bool) -> int:
    """The critic warm-up a run uses: ``--critic-warmup`` where the actor starts from a trained policy, 0 for a fresh
    actor (there is nothing for a fresh critic's noisy advantages to spoil, so it learns from the start)."""
    return critic_warmup if trained_start else 0


def warmup_problem(critic_warmup: int, total_timesteps: int) -> str | None:
    """Why the critic warm-up leaves the actor nothing to learn (it covers the whole run), or None."""
    if critic_warmup < total_timesteps:
        return None
    return (
        f"--critic-warmup {critic_warmup:,} is not below --total-timesteps {total_timesteps:,}: the actor would never "
        "learn (only the critic learns in the warm-up); give a shorter --critic-warmup or a longer --total-timesteps"
    )


def next_multiple(done: int, every: int) -> float:
    """The first multiple of ``every`` after ``done`` (when the next periodic event is due); never if 0."""
    return (done // every + 1) * every if every > 0 else float("inf")


def export_problem(
    export: str | Path,
    folders: Mapping[str, str | Path],
    inputs: Mapping[str, Iterable[str | Path]] | None = None,
    outputs: Mapping[str, str | Path] | None = None,
) -> str | None:
    """Why ``--export``, or another output file of the run, would overwrite what the run writes or reads, or None:
    checked before any work, by every training script.

    ``folders``: the run's folders by flag (``--run-dir``; distill.py's ``--out-dir`` and ``--data-dir``), where it
    writes its checkpoint, its record and its own ``policy.npz``: an export on, around or anywhere inside one could
    replace one of them (``--resume`` would then read the copy). ``outputs``: the run's other output files by flag
    (best_response.py's ``--record``), which must not be the export either (``clashing_outputs``), and are held to
    the same rule about the folders whether or not there is an export: one inside the run folder would read or
    replace the run's files (``--record progress.json`` read the run's record as a table, after all the training).
    No output may lie in the installed package's model zoo (``zoo.zoo_output_problem``). ``inputs``: the files the
    run reads, by flag (its starting policy, ensemble members, opponents, a target; a text
    that names no file, such as ``cautious``, is skipped): an export that is one of them (by any path, a link
    included) would replace it."""
    folder_paths = {flag: Path(folder) for flag, folder in folders.items()}
    for flag, paths in (inputs or {}).items():  # what the run reads must not lie where it writes (its policy.npz)
        for read in [Path(path) for path in paths if str(path) and Path(path).is_file()]:
            inside = output_inside({flag: read}, folder_paths)
            if inside is not None:
                return (
                    f"{flag} {read} is inside the run directory {folders[inside[1]]} ({inside[1]}), where the run "
                    "writes its files (its policy.npz, snapshots, checkpoint): it could be replaced as the run goes; "
                    "copy it outside that folder"
                )
    files = {flag: Path(path) for flag, path in [("--export", export), *(outputs or {}).items()] if str(path)}
    if not files:  # (the folders may share a path: distill.py's --data-dir may be its --out-dir)
        return None
    clash = clashing_outputs(files, folder_paths) or next(
        (problem for flag, path in files.items() if (problem := zoo_output_problem(flag, path))), None
    )  # (a file of the package's model zoo, whether the run reads it or not)
    if clash:
        return clash
    inside = output_inside(files, folder_paths)
    if inside is not None:
        flag, folder_flag = inside
        return (
            f"{flag} {files[flag]} is inside the run directory {folders[folder_flag]} ({folder_flag}), where the run "
            f"writes its files: a file there could replace one of them or be replaced; write {flag} outside it"
        )
    if not str(export):
        return None
    for flag, paths in (inputs or {}).items():
        for path in paths:
            if _same_file(export, path):
                return f"--export {export} is {path}, which {flag} names and the run reads: export to another path"
    return None


def _same_file(one: str | Path, other: str | Path) -> bool:
    """Whether two paths are one existing file (through links, relative or absolute, hard links too)."""
    try:
        return Path(other).is_file() and Path(one).is_file() and os.path.samefile(one, other)
    except OSError:
        return False


def export_copy(run_dir: Path, export: str, read_policy: Callable[[Path], object] = read_friday13_policy) -> None:
    """Copy the run's final ``policy.npz`` to ``--export`` atomically (nothing when it is empty), once the package's
    loader of the run's game (``read_policy``: Friday the 13th's unless a script gives another) reads it back: a
    finished run resumed only to export it wrote nothing in this session, and its file may be damaged since. An
    export on or in the run directory, or a policy the loader refuses, is a ``RunError`` and nothing is written (a
    script checks ``export_problem`` before any work; this keeps the run's files whole where one did not)."""
    if not export:
        return
    problem = export_problem(export, {"--run-dir": run_dir})
    if problem:
        raise RunError(f"{problem} (the run's policy is {run_dir / 'policy.npz'})")
    source = run_dir / "policy.npz"
    checked_policy(source, read_policy, "--export")
    try:
        data = source.read_bytes()
    except OSError as error:
        raise RunError(f"--export: cannot read {source}: {error.strerror or error}") from error
    try:
        atomic_write_bytes(export, data)
    except OSError as error:
        raise RunError(f"--export: cannot write {export}: {error.strerror or error}") from error
    print(f"exported the policy to {export}", flush=True)


def checked_policy(
    path: Path,
    read_policy: Callable[[Path], Policy],
    flag: str,
    anew: str = "resume the run with a larger --total-timesteps, which writes it anew",
) -> Policy:
    """The policy file ``path`` a run is about to copy or play, as the package's loader (``read_policy``) reads it, or
    a ``RunError`` naming it for ``flag`` and saying what writes it ``anew`` (a file written by an earlier session may
    be damaged since)."""
    try:
        return read_policy(path)
    except ValueError as error:  # a CheckpointError: missing, damaged or of another layout
        raise RunError(
            f"{flag}: {path} is damaged ({error}); nothing was done with it: restore it, or {anew}"
        ) from error


def parse_run_args(
    cls: type[RunArgs], description: str | None, checked: Callable[[RunArgs], RunArgs], argv: Sequence[str] | None
) -> RunArgs:
    """A run script's flags, one per field of ``cls`` (defaults, flags and help never drift apart). A new run's
    whole configuration is checked (``checked``, a ``ValueError`` listing every problem) before any work and
    refused with argparse's usage message; a resumed run's is checked once its recorded arguments are merged in."""
    parser = dataclass_parser(cls, description)
    args = cls(**vars(parser.parse_args(argv)))
    if problem := run_name_problem(args):
        parser.error(problem)
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
    ``train`` is an ``Interrupted`` exception there, which ends the script with one line (what the run saved). The
    working folder is importable, so that agent specs may name a ``module:factory`` there. The run folders' locks
    it took are let go when it ends, however it ends (``release_run_locks``)."""
    working_folder_importable()
    args = parse(argv)
    held_before = set(_held_locks)
    try:
        with signals_interrupt():
            train(args, given_flags(cls, argv))
    except RunError as error:
        raise SystemExit(f"error: {error}") from None
    except Interrupted as stop:
        print(stop.message(), file=sys.stderr, flush=True)
        raise SystemExit(stop.exit_status) from None
    finally:
        release_run_locks(keep=held_before)


def resumed_run_args(
    cls: Any,
    args: Any,
    given: set[str],
    progress: dict[str, Any],
    run_dir: Path,
    run_settings: Sequence[str],
    checked: Callable[[Any], Any],
    added_later: Mapping[str, Any] | None = None,
    agent_fields: Sequence[str] = (),
    changed_refusal: Callable[[list[str]], str] | None = None,
) -> Any:
    """The arguments a resumed run goes on with: the run's own, recorded in ``progress.json``, with the run settings
    (``run_settings``, the fields of ``cls`` that ``--resume`` may change) this command line gives, and ``run_dir``
    the folder the run is in (``run_dir``, whatever the record says: a run resumed under another ``--run-name`` or
    moved is checked, and recorded, where it is). A hyperparameter given with another value is refused, each one
    listed (``changed_refusal``, given those lines, words the refusal where a script words it its own way); a
    damaged record is a ``RunError`` naming the file, and so is an agent factory in ``agent_fields`` (the fields
    holding agent specs) that the record names and this command line does not (``check_recorded_factories``, before
    any agent is built); what is left (this command line's settings, e.g. ``--export``) goes through
    ``checked``. ``added_later`` gives each hyperparameter added after runs were first recorded the value those runs
    were trained with, so that a record without it resumes as it was trained; any other missing argument is
    damage, and so is one that is no field of ``cls`` (dropped, a newer release's setting would be lost unsaid)."""
    stored = {**(added_later or {}), **progress["args"]}
    values = dataclasses.asdict(args)
    names = [field.name for field in dataclasses.fields(cls)]
    record = run_dir / "progress.json"
    unknown = sorted(set(progress["args"]) - set(names))
    if unknown:
        raise RunError(
            f"--resume: {record} is damaged: its arguments hold {_short(', '.join(map(repr, unknown)))}, which this "
            "version of the script does not know (a damaged record, or one written by a newer release, whose setting "
            "would be dropped); restore it or start a new run"
        )
    check_recorded_factories(record, stored, values, given, agent_fields)
    changed = changed_hyperparameters(stored, values, [n for n in names if n not in run_settings and n in given])
    if changed:
        if changed_refusal is not None:
            raise RunError(changed_refusal(changed))
        raise RunError("--resume keeps the run's hyperparameters; these differ: " + "; ".join(changed))
    merged = {**stored, **{name: values[name] for name in run_settings if name in given or name == "resume"}}
    merged["run_dir"] = str(run_dir)
    if "export" in names:  # written only where this command says: a record's (of a moved or altered run) is not
        merged["export"] = values["export"]
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
