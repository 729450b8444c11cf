"""The files of a ``training/train_ppo.py`` run that ``--resume`` goes on from, and the guards around them.

``save_run`` writes a checkpoint so that a kill at any moment leaves a run that resumes as one of its checkpoints
(``recover_checkpoint`` finishes or drops the one a kill interrupted); ``read_checkpoint`` reads one back checked
(``read_state``: no code runs, and no zip member inflates past the file's size; ``weights_problem`` and
``moments_problem``: its keys, shapes and dtypes are the networks' and Adam's, its tensors stored densely), for
``--resume`` (``load_checkpoint``) and ``--init-run`` (``run_fork``) alike, each refusal naming the flag that read it
(``Reader``);
``Boundary`` holds the run at a rollout's start, what Ctrl-C or SIGTERM saves; ``check_finite`` stops a run whose
update diverged before anything of it is saved. The frozen snapshots of the opponent pool live beside the checkpoint.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import math
import os
import zipfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, ClassVar, Protocol

import torch
from torch import nn

from friday13_env.core.checkpoint import compression_problem
from friday13_env.core.files import atomic_write_bytes
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.specs import shown
from friday13_env.friday13.agents.policy import read_friday13_policy
from friday13_training.actor_critic import ActorCritic, NetworkArgs
from friday13_training.runs import SNAPSHOT_NAME, RunError, inside_run, lock_run, read_progress
from friday13_training.script_args import atomic_write_text

CHECKPOINT, NEXT_CHECKPOINT = "last.pt", "next.pt"
"""The run's checkpoint, and the new one while a checkpoint is being written (``save_run``)."""
TARGET_FINGERPRINT = "target_fingerprint"
"""The key of a best response's record holding its target's fingerprint, taken when the run started (0.18.0 and
later), which every ``--resume`` compares with the target's."""
POOL_RESULTS = "pool_results"
"""The key of a ``--pool-weighting pfsp`` run's record holding the learner's results against its pool
(``pool_results.PoolResults.state``), checked on ``--resume`` (``pool_results.state_problem``)."""
STARTED_FROM = "started_from"
"""The key of a record of a run started from another run's networks (``train_ppo.py --init-run``, ``run_fork``):
``{"run": its folder, "timesteps": its timesteps then, "from_scratch": whether that run was learned from scratch}``."""
MAGNET = "magnet"
"""The key of a ``--magnet-coef`` run's checkpoint holding its magnet's weights (``friday13_training.magnet``)."""
RESUMED_AT = "resumed_at"
"""The key of a run's record listing the timesteps at which it was resumed (0.24.0 on; a resumed session deals
from its own seed, ``session_seed``, so a run resumed is reproducible but not the run its command makes)."""
PROGRESS_EXTRA_KEYS = ("clock", "script", TARGET_FINGERPRINT, POOL_RESULTS, STARTED_FROM, RESUMED_AT)
"""Keys of ``progress.json`` beyond a fresh run's: a checkpoint adds the seconds each part took (over every session);
a run started by 0.17.0 or later names the script that started it (``started_by``); a best response's, its target's
fingerprint; a PFSP run's, its results against its pool; a forked run's, where it started; a run of 0.24.0 on, where
it was resumed."""


def resumed_at_problem(value: object, timesteps: int) -> str | None:
    """What is wrong with a record's ``RESUMED_AT``, or None: a list of timesteps in order, none past the record's."""
    if not isinstance(value, list) or not all(type(step) is int and 0 <= step <= timesteps for step in value):
        return f"{RESUMED_AT} is {shown(value)}, not a list of timesteps from 0 to the run's {timesteps:,}"
    if value != sorted(value):
        return f"{RESUMED_AT} is {shown(value)}, not in order"
    return None


SCRIPT, BEST_RESPONSE = "train_ppo.py", "best_response.py"
"""The scripts whose runs these are: ``best_response.py`` trains with ``train_ppo.py``'s loop, in a run folder of the
same files, and adds its result (``BEST_RESPONSE_RESULT``)."""
BEST_RESPONSE_RESULT = "best_response.json"
OTHER_RUN_FILES = ("progress.json", "last.zip")
"""What another run leaves in a folder without ``last.pt``: any run script's record, ``finetune_ppo.py``'s
checkpoint. A new run there is refused (``open_run``, which refuses ``distill.py``'s files too): it would write over
them."""
ADAM_STEP = torch.zeros(())
"""A tensor like Adam's step count of a parameter: a float32 scalar."""
PLAIN = (bool, int, float, str, type(None))
"""The types of Adam's hyperparameters (``betas``: a tuple of them)."""
TEMPORARY = (".*.tmp", ".*.unchecked")
"""The names of the temporary files of writes a kill cut short (``atomic_write``'s, the policy checks'), which
``recover_checkpoint`` deletes in the run folder and its ``snapshots/``."""


@dataclass(frozen=True)
class Reader:
    """Who reads a run's files, for the messages of a refusal: the ``flag`` that reads them, what a checkpoint must
    be for it (``checkpoint``) and what to do about a refused file (``remedy``, where ``{it}`` names the file or the
    files)."""

    flag: str
    checkpoint: str
    remedy: str

    def refused(self, text: str, it: str | None = "it") -> RunError:
        """A ``RunError`` saying ``text`` for this reader's flag, then what to do about ``it`` (None: nothing)."""
        remedy = "" if it is None else f"; {self.remedy.format(it=it)}"
        return RunError(f"{self.flag}: {text}{remedy}")


RESUME = Reader("--resume", "this run's checkpoint", "restore {it} or start a new run")
"""``--resume``: the run's own files."""
INIT_RUN = Reader("--init-run", "a train_ppo.py checkpoint", "restore {it} or name another run")
"""``train_ppo.py --init-run``: another run's files, which a new run starts from (``run_fork``)."""


class RunArgs(NetworkArgs, Protocol):
    """``train_ppo``'s ``Args`` as a checkpoint records them (a dataclass, written out whole)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]
    init_policy: str
    init_run: str


def started_by(run_dir: Path, progress: dict[str, Any], reader: Reader = RESUME) -> str | None:
    """The script that started the run, ``SCRIPT`` or ``BEST_RESPONSE``: its record's ``script`` (a run started by
    0.17.0 or later), else ``BEST_RESPONSE`` where a best response's result is in the folder, else None (a run of an
    earlier release: ``train_ppo.py``'s, or a best response stopped before its first result). A ``RunError`` for
    ``reader`` for a record naming another script."""
    script = progress.get("script")
    if script is None:
        return BEST_RESPONSE if (run_dir / BEST_RESPONSE_RESULT).exists() else None
    if script not in (SCRIPT, BEST_RESPONSE):
        raise reader.refused(
            f"{run_dir / 'progress.json'} is damaged: script {shown(script)} (allowed: {SCRIPT!r} or {BEST_RESPONSE!r})"
        )
    return script


def check_started_by(run_dir: Path, progress: dict[str, Any], script: str) -> None:
    """Refuse to resume with ``script`` a run that the other script started (``started_by``): ``train_ppo.py`` would
    train a best response on without its final evaluation, leaving its result stale, and ``best_response.py`` would
    take a ``train_ppo.py`` run for a best response."""
    started = started_by(run_dir, progress)
    if started is None or started == script:
        return
    stale = (
        f" ({script} would train it on without its final evaluation, leaving {BEST_RESPONSE_RESULT} stale)"
        if started == BEST_RESPONSE
        else ""
    )
    raise RunError(f"--resume: {run_dir} is a {started} run: resume it with {started} --resume{stale}")


def read_snapshot(run_dir: Path, name: str, deck: str, reader: Reader | None = None) -> MLPPolicy:
    """The pool's frozen snapshot ``name`` (``snapshots/<name>.npz``), a policy of the run's ``deck``, or a
    ``RunError`` naming the file (``--opponents`` refuses another deck's policy too): for ``reader`` (``RESUME``: a
    snapshot its record names), or for no flag (None: one the run has just frozen)."""
    path = run_dir / "snapshots" / f"{name}.npz"

    def refused(text: str, it: str | None) -> RunError:
        return RunError(text) if reader is None else reader.refused(text, it)

    try:
        policy = read_friday13_policy(path)
    except (OSError, ValueError) as error:
        raise refused(f"the snapshot {path} is missing or damaged ({error})", None) from error
    if policy.metadata.deck != deck:
        raise refused(
            f"the snapshot {path} plays the {shown(policy.metadata.deck)} deck, the run the {deck!r} deck", "it"
        )
    return policy


def policy_description(args: RunArgs, started_from: dict[str, Any] | None) -> str:
    """What an exported policy says of how it was made: from scratch, from a policy's weights (``--init-policy``), or
    on from another run's networks (``--init-run``: from scratch if that run was)."""
    if args.init_policy:
        return f"PPO started from {args.init_policy}'s weights, not from scratch (training/train_ppo.py --init-policy)"
    if started_from is not None:
        lineage = "learned from scratch" if started_from["from_scratch"] else "not from scratch"
        return (
            f"self-play PPO going on from the networks of run {started_from['run']} at {started_from['timesteps']:,} "
            f"timesteps, {lineage} (training/train_ppo.py --init-run)"
        )
    return "self-play PPO from scratch (training/train_ppo.py)"


def save_run(
    run_dir: Path, model: ActorCritic, optimizer: torch.optim.Optimizer, args: RunArgs, progress: dict[str, Any],
    magnet: nn.Module | None = None,
) -> None:  # fmt: skip
    """Checkpoint (with the ``--magnet-coef`` run's ``magnet``), exported policy and progress record, so that a kill at
    any moment leaves a run that resumes as one of its checkpoints: the new checkpoint is written as ``next.pt``,
    then the policy, then the record, and only then does ``next.pt`` replace ``last.pt`` (``recover_checkpoint`` ends
    that step if the run died before it)."""
    save_checkpoint(run_dir / NEXT_CHECKPOINT, model, optimizer, progress["timesteps"], magnet)
    training = {
        "command": "python training/train_ppo.py",
        "args": dataclasses.asdict(args),
        "timesteps": progress["timesteps"],
    }
    model.export(run_dir / "policy.npz", args, policy_description(args, progress.get(STARTED_FROM)), training)
    atomic_write_text(run_dir / "progress.json", json.dumps(progress, indent=1))
    os.replace(run_dir / NEXT_CHECKPOINT, run_dir / CHECKPOINT)
    for path in (run_dir / "snapshots").glob("snapshot_*.npz"):  # snapshots that left the pool, the run's own only
        if SNAPSHOT_NAME.fullmatch(path.stem) and path.stem not in progress["snapshots"] and inside_run(path, run_dir):
            path.unlink()


def save_checkpoint(
    path: Path, model: ActorCritic, optimizer: torch.optim.Optimizer, timesteps: int, magnet: nn.Module | None = None
) -> None:
    """Networks, optimizer, their timesteps and the ``magnet`` if any (tensors and numbers only, so
    ``torch.load(weights_only=True)`` reads it), atomically."""
    buffer = io.BytesIO()
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "timesteps": timesteps}
    if magnet is not None:
        state[MAGNET] = magnet.state_dict()
    torch.save(state, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def recover_checkpoint(run_dir: Path, fresh: dict[str, Any]) -> None:
    """End a checkpoint that a kill interrupted (``save_run``), for ``--resume`` only and in a folder that holds this
    script's run (a readable record and ``last.pt`` or ``next.pt``; anything else is left as it is, for ``open_run``
    to refuse): ``next.pt`` becomes ``last.pt`` if ``progress.json`` already records its timesteps, else it is dropped
    (``last.pt`` and the record are still the checkpoint before). The temporary files of writes a kill cut short go
    (``TEMPORARY``, in the run folder and its ``snapshots/``, the run's own only: ``check_own_folder`` refuses a
    linked ``snapshots/`` first). The folder's lock is taken before anything is deleted (``lock_run``: a
    ``RunError`` if another process runs there)."""
    pending = run_dir / NEXT_CHECKPOINT
    if not (pending.is_file() or (run_dir / CHECKPOINT).is_file()):
        return
    try:
        recorded = read_progress(run_dir / "progress.json", fresh, PROGRESS_EXTRA_KEYS)["timesteps"]
    except RunError:
        return
    lock_run(run_dir)  # before anything changes: the leftovers may be the files of a run still going there
    for folder in (run_dir, run_dir / "snapshots"):
        for pattern in TEMPORARY:
            for leftover in folder.glob(pattern):
                if inside_run(leftover, run_dir):
                    leftover.unlink()
    if not pending.is_file():
        return
    try:
        timesteps = stored_timesteps(read_state(pending, "cpu"), pending, RESUME)
    except Exception:  # a bomb, unpickling, bad timesteps: a damaged file, dropped
        timesteps = None
    if timesteps == recorded:
        os.replace(pending, run_dir / CHECKPOINT)
    else:
        pending.unlink()


def read_state(path: Path, device: str) -> Any:
    """What ``torch.load(weights_only=True)`` reads from a checkpoint (so no code in it runs), once its zip members
    are checked (``uninflated_problem``: a ``RunError`` naming the problem, or ``zipfile.BadZipFile`` for a file that
    is not a zip). The checks and the load read one open file."""
    with path.open("rb") as handle:
        problem = uninflated_problem(handle)
        if problem is not None:
            raise RunError(f"{path}: {problem}")
        handle.seek(0)
        return torch.load(handle, map_location=device, weights_only=True)


def uninflated_problem(handle: IO[bytes]) -> str | None:
    """Why reading the zip open as ``handle`` (a checkpoint of ``torch.save``, arrays of ``np.savez``) could cost
    more than its size, or None (``zipfile.BadZipFile`` for a file that is not a zip).

    ``torch.load`` and ``np.load`` inflate a compressed member whole, so a file of kilobytes could claim gigabytes;
    ``torch.save`` and ``np.savez`` never compress (``ZIP_STORED``) and lay their members side by side, so the members
    must be stored and their sizes add up to at most the file's: a larger total is a member claiming bytes the file
    does not hold or members overlapping. Reading then costs at most the file's size."""
    size = os.fstat(handle.fileno()).st_size
    with zipfile.ZipFile(handle) as archive:
        problem = compression_problem(archive, (zipfile.ZIP_STORED,))
        total = sum(info.file_size for info in archive.infolist())
    if problem is not None:
        return f"{problem} (torch.save and np.savez store their members uncompressed)"
    if total > size:
        return (
            f"its members hold {total:,} bytes in all, more than the file's {size:,} (they are stored side by side): "
            "a member claims bytes the file does not hold, or members overlap"
        )
    return None


def stored_timesteps(state: dict[str, Any], path: Path, reader: Reader) -> int | None:
    """The timesteps a checkpoint's ``state`` holds, ``None`` if it holds none (files written before the checkpoints
    held them): a plain non-negative ``int`` as ``save_checkpoint`` writes it, else a ``RunError`` for ``reader``. A
    tensor, a float or a bool would compare equal to the record's count (or fail to compare at all), so none is taken
    for one."""
    if "timesteps" not in state:
        return None
    timesteps = state["timesteps"]
    if type(timesteps) is not int or timesteps < 0:
        raise reader.refused(
            f"{path} is damaged: its timesteps are {shown(timesteps)}, not a non-negative integer (an int)"
        )
    return timesteps


def load_checkpoint(
    run_dir: Path, model: ActorCritic, optimizer: torch.optim.Adam, device: str, timesteps: int,
    magnet: nn.Module | None = None,
) -> None:  # fmt: skip
    """``--resume``: the run's ``last.pt`` into the networks, the optimizer and the ``magnet`` of a ``--magnet-coef``
    run, read and checked (``read_checkpoint``) against the record's ``timesteps``."""
    read_checkpoint(run_dir / CHECKPOINT, RESUME, device, timesteps, model, optimizer, magnet)


def read_checkpoint(
    path: Path,
    reader: Reader,
    device: str,
    timesteps: int,
    model: ActorCritic | None = None,
    optimizer: torch.optim.Adam | None = None,
    magnet: nn.Module | None = None,
) -> dict[str, Any]:
    """The networks' state of the ``train_ppo.py`` checkpoint at ``path`` (a run's ``last.pt``), read and checked for
    ``reader``, whose flag every ``RunError`` names: read without running code or inflating a member
    (``read_state``), of the ``timesteps`` the run's record (``progress.json`` beside it) holds (files written before
    the checkpoints held them are taken as they are).

    With ``model`` (and ``optimizer``), the networks' (and Adam's) keys, shapes and dtypes (``weights_problem``,
    ``moments_problem``: read from keys, sizes and strides alone, so that the scan for non-finite numbers reads tensors
    of the networks' sizes only), finite numbers only, and buffers that are the model's own (``constants_problem``), all
    checked before anything is loaded into them; then they are loaded. With a ``magnet`` (``--resume`` of a
    ``--magnet-coef`` run), the file's magnet is checked as the networks are and loaded into it; a resume without one
    (an ``optimizer`` but no ``magnet``) refuses a file that holds one, which its record should have named;
    ``--init-run`` (no optimizer) leaves a magnet in the file unused, starting from the networks alone. Without a model
    (the checks of a command line, before any network is built), the networks' state must be a dict."""
    try:
        state = read_state(path, device)
        weights = state["model"]
        moments: Any = state["optimizer"] if optimizer is not None else None
        magnet_state: Any = state.get(MAGNET) if magnet is not None else None
        unexpected_magnet = magnet is None and optimizer is not None and MAGNET in state
    except Exception as error:  # a zip bomb, unpickling or a missing key: all say the file is not the reader's
        raise not_this_runs(path, error, reader) from error
    stored = stored_timesteps(state, path, reader)
    if stored is not None and stored != timesteps:
        raise reader.refused(
            f"{path} holds {stored:,} timesteps but {path.parent / 'progress.json'} records {timesteps:,}: the two "
            "files are not of the same checkpoint",
            "them",
        )
    if model is None:
        if not isinstance(weights, dict):
            raise not_this_runs(path, f"its model state is a {type(weights).__name__}, not a dict", reader)
        return weights
    problem = weights_problem(weights, model)
    if problem is None and optimizer is not None:
        problem = moments_problem(moments, model, optimizer)
    if problem is None and unexpected_magnet:
        problem = "it holds a magnet, which only a run of --magnet-coef saves, and the run's record has none"
    if problem is None and magnet is not None:
        problem = (
            weights_problem(magnet_state, magnet, "the magnet's", "magnet's ")
            if magnet_state is not None
            else "it holds no magnet, which a run of --magnet-coef saves"
        )
    if problem is not None:
        raise not_this_runs(path, problem, reader)
    parts = {"weights": weights, "optimizer state": moments, "magnet": magnet_state}
    for part, value in parts.items():
        if value is not None and not all_finite(value):
            raise reader.refused(f"{path} is damaged: it holds non-finite numbers (NaN or inf) in its {part}")
    problem = constants_problem(weights, model)
    if problem is None and magnet is not None:
        problem = constants_problem(magnet_state, magnet, "magnet's ")
    if problem is not None:
        raise not_this_runs(path, problem, reader)
    try:
        model.load_state_dict(weights)
        if optimizer is not None:
            optimizer.load_state_dict(moments)
        if magnet is not None:
            magnet.load_state_dict(magnet_state)
    except Exception as error:  # what the checks above do not know of
        raise not_this_runs(path, error, reader) from error
    return weights


def not_this_runs(path: Path, problem: Exception | str, reader: Reader) -> RunError:
    """The error of a checkpoint that cannot be read or loaded: damaged, or not what ``reader`` reads."""
    detail = problem if isinstance(problem, str) else f"{type(problem).__name__}: {problem}"
    return reader.refused(f"{path} is damaged or not {reader.checkpoint} ({detail})")


def weights_problem(weights: Any, model: nn.Module, owner: str = "the networks'", prefix: str = "") -> str | None:
    """Why a checkpoint's state of ``model`` (the networks, or with ``owner`` "the magnet's" its magnet),
    ``weights``, does not fit it, or None: the keys of its state (its buffers that are not persistent, such as
    ``TypeSharedActor``'s ``eye``, are in no checkpoint), each a tensor of the shape and dtype of the model's
    (``tensors_problem``); ``prefix`` starts the name of each weight in a message."""
    expected = {key: (like, owner) for key, like in model.state_dict().items()}
    where = "its model state" if not prefix else f"its {prefix}state"
    return tensors_problem(where, weights, expected, f"{owner} state", lambda key: f"the {prefix}weight {key!r}")


def constants_problem(weights: dict[str, torch.Tensor], model: nn.Module, prefix: str = "") -> str | None:
    """Why a checkpoint's state of ``model`` (``weights``, of the model's keys, shapes and dtypes: ``weights_problem``)
    holds buffers other than the model's own, or None. The buffers (the input scales, the type-shared actor's index
    tables) are set by the run's deck and settings; no run learns or changes them, so a file cannot either."""
    state = model.state_dict()
    for key, _ in model.named_buffers():
        if key in state and not torch.equal(weights[key].cpu(), state[key].cpu()):
            return (
                f"the {prefix}constant {key!r} is not this run's (a scale or index table that its deck and settings "
                "set, which no run learns or changes)"
            )
    return None


SCHEDULED = ("params", "lr", "initial_lr")
"""The keys of an optimizer's parameter groups that differ from a fresh Adam's in a run's checkpoint: its parameters'
indices and the learning rate of the moment (the loop sets it at every rollout); any other setting (``eps``,
``betas``, ``maximize``, ``weight_decay``, ``capturable``...) must be the run's."""


def optimizer_settings_problem(groups: Any, optimizer: torch.optim.Optimizer) -> str | None:
    """Why the parameter groups ``groups`` of a saved optimizer state do not hold ``optimizer``'s settings, or None:
    as many groups, each with the values of every setting the optimizer's group has (``SCHEDULED`` aside).
    ``load_state_dict`` takes a file's settings as they are: one with ``maximize`` would have the run climb its loss,
    and write it back into every later checkpoint. Every script that resumes an optimizer checks it first."""
    expected = optimizer.state_dict()["param_groups"]
    if not isinstance(groups, list) or len(groups) != len(expected) or not all(isinstance(g, dict) for g in groups):
        return f"the optimizer's parameter groups are {shown(groups)}, not {len(expected)} group(s) of settings"
    for index, (group, fresh) in enumerate(zip(groups, expected, strict=True)):
        for key, value in group.items():
            if key not in SCHEDULED and key in fresh and value != fresh[key]:
                return (
                    f"the optimizer's parameter group {index} holds {key} {value!r}, the run's Adam {fresh[key]!r} "
                    "(a checkpoint keeps Adam's moments, not its settings)"
                )
    return None


def moments_problem(moments: Any, model: ActorCritic, optimizer: torch.optim.Adam) -> str | None:
    """Why a checkpoint's optimizer state ``moments`` does not fit ``optimizer``, Adam over ``model``'s parameters,
    or None: its parameter groups hold the optimizer's parameters (their indices, group by group) and plain
    hyperparameters (``plain``); its state holds, for any of those parameters, Adam's step count (a float32 scalar)
    and moments (of the parameter's shape and dtype; ``max_exp_avg_sq`` too in a group with ``amsgrad``) and no more
    (``tensors_problem``), its settings those of ``optimizer`` (``SCHEDULED`` aside: a file could otherwise set
    ``maximize``, and the run would climb its loss). A parameter that never had a gradient has no state (an actor
    during the critic's warm-up)."""
    problem = keys_problem("its optimizer state", moments, ("state", "param_groups"), "Adam's state")
    if problem is not None:
        return problem
    groups, state = moments["param_groups"], moments["state"]
    expected = [group["params"] for group in optimizer.state_dict()["param_groups"]]
    layout = group_layout(groups)
    if layout is None:
        return "the optimizer's parameter groups are not a list of dicts, each with its parameters' indices"
    if layout != expected:
        return f"the optimizer's parameter groups hold the parameters {shown(layout)}, the optimizer's {expected}"
    for index, group in enumerate(groups):
        for key, value in group.items():
            if key != "params" and not plain(value):
                return (
                    f"the optimizer's parameter group {index} holds {named(key)} as a {type(value).__name__}, not "
                    "a plain number, flag or text"
                )
    problem = optimizer_settings_problem(groups, optimizer)
    if problem is not None:
        return problem
    if not isinstance(state, dict):
        return f"the optimizer's state is a {type(state).__name__}, not a dict"
    parameters = [parameter for group in optimizer.param_groups for parameter in group["params"]]
    names = {id(parameter): name for name, parameter in model.named_parameters()}
    amsgrad = [bool(group.get("amsgrad")) for group in groups for _ in group["params"]]
    for index, entry in state.items():
        if type(index) is not int or not 0 <= index < len(parameters):
            return (
                f"the optimizer's state holds {named(index)}, not the index of one of its {len(parameters)} parameters"
            )
        name = f"{names[id(parameters[index])]!r} (parameter {index})"
        problem = adam_state_problem(entry, parameters[index], name, amsgrad[index])
        if problem is not None:
            return problem
    return None


def adam_state_problem(entry: Any, parameter: torch.Tensor, name: str, amsgrad: bool) -> str | None:
    """Why ``entry``, a checkpoint's Adam state of ``parameter`` (``name`` in messages), is not the step count and
    the moments (``max_exp_avg_sq`` too with ``amsgrad``) Adam holds for it, or None (``tensors_problem``)."""
    moment = (parameter, "its parameter's")
    expected = {"step": (ADAM_STEP, "Adam's step count"), "exp_avg": moment, "exp_avg_sq": moment}
    expected |= {"max_exp_avg_sq": moment} if amsgrad else {}
    where = f"the optimizer's state of {name}"
    return tensors_problem(where, entry, expected, "Adam's state", lambda key: f"the optimizer's {key} of {name}")


def group_layout(groups: Any) -> list[list[int]] | None:
    """The parameter indices of an optimizer state's ``param_groups``, group by group, or None where they are not a
    list of dicts each holding a list of ints as ``params``."""
    if type(groups) is not list or any(type(group) is not dict for group in groups):
        return None
    layout = [group.get("params") for group in groups]
    if any(type(params) is not list or any(type(index) is not int for index in params) for params in layout):
        return None
    return layout


def plain(value: Any) -> bool:
    """Whether a hyperparameter is a plain value (``PLAIN``) or a tuple of them (Adam's ``betas``)."""
    return type(value) in PLAIN or (type(value) is tuple and all(type(item) in PLAIN for item in value))


def keys_problem(where: str, found: Any, expected: Collection[Any], owner: str) -> str | None:
    """Why ``found``, ``where`` in a checkpoint, is not a dict of ``expected``'s keys (``owner``'s), or None: the
    first key it holds that ``owner`` does not, else the first it lacks."""
    if not isinstance(found, dict):
        return f"{where} is a {type(found).__name__}, not a dict"
    known = set(expected)
    unknown = [key for key in found if key not in known]
    if unknown:
        return f"{where} holds {named(unknown[0])}, a key {owner} does not have"
    missing = [key for key in expected if key not in found]
    if missing:
        return f"{where} lacks {missing[0]!r}, a key {owner} has"
    return None


def tensors_problem(
    where: str, found: Any, expected: dict[str, tuple[torch.Tensor, str]], owner: str, label: Callable[[str], str]
) -> str | None:
    """Why ``found``, ``where`` in a checkpoint, is not a dict of ``expected``'s keys (``owner``'s), each a tensor
    like the one ``expected`` gives with its owner (``tensor_problem``), or None; ``label(key)`` names a key's
    tensor in a message."""
    problem = keys_problem(where, found, expected, owner)
    if problem is not None:
        return problem
    for key, (like, whose) in expected.items():
        problem = tensor_problem(label(key), found[key], like, whose)
        if problem is not None:
            return problem
    return None


def tensor_problem(label: str, value: Any, like: torch.Tensor, whose: str) -> str | None:
    """Why ``value``, the checkpoint's ``label``, is not a dense tensor of ``like``'s dtype and shape (``whose``),
    or None. Its sizes and strides say it, not its values: a stored tensor holds one stored number per element,
    a view may repeat one number (zero strides) or overlap itself, showing more elements than its storage holds."""
    expected = f"a tensor of {like.dtype} and shape {tuple(like.shape)} as {whose}"
    if not isinstance(value, torch.Tensor):
        return f"{label} is a {type(value).__name__}, not {expected}"
    if value.layout != torch.strided:
        return f"{label} is a {value.layout} tensor, not {expected}"
    if value.dtype != like.dtype or value.shape != like.shape:
        return f"{label} is a tensor of {value.dtype} and shape {tuple(value.shape)}, not {expected}"
    stored = value.untyped_storage().nbytes()
    repeated = any(size > 1 and stride == 0 for size, stride in zip(value.shape, value.stride(), strict=True))
    if repeated or stored < value.numel() * value.element_size():
        return (
            f"{label} is not stored densely: {value.numel():,} elements of {value.element_size()} bytes over "
            f"{stored:,} bytes of storage, strides {value.stride()}"
        )
    return None


def named(key: Any) -> str:
    """A key of a checkpoint's dict for a message: its ``repr`` (cut) where it is a text or a number, else its type
    (the ``repr`` of a nested container that a file repeats by reference could take any time and memory)."""
    return shown(key) if isinstance(key, str | int | float) else f"a key of type {type(key).__name__}"


def all_finite(value: Any) -> bool:
    """Whether every tensor and float in ``value`` (a checkpoint's nested state) is finite."""
    if isinstance(value, torch.Tensor):
        return not value.is_floating_point() or bool(torch.isfinite(value).all())
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(all_finite(item) for item in value.values())
    if isinstance(value, list | tuple):
        return all(all_finite(item) for item in value)
    return True


@dataclass
class Boundary:
    """The run at the start of a rollout: what Ctrl-C or SIGTERM saves (the rollout under way is dropped), so that
    an interrupted run is one of its checkpoints, as if ``--checkpoint-every`` had fallen there."""

    timesteps: int
    model: dict[str, Any]
    optimizer: dict[str, Any]
    progress: dict[str, Any]
    magnet: dict[str, Any] | None = None

    @classmethod
    def of(
        cls, timesteps: int, model: ActorCritic, optimizer: torch.optim.Optimizer, progress: dict[str, Any],
        magnet: nn.Module | None = None,
    ) -> Boundary:  # fmt: skip
        state = copy.deepcopy((model.state_dict(), optimizer.state_dict(), progress))
        return cls(timesteps, *state, copy.deepcopy(magnet.state_dict()) if magnet is not None else None)

    def restore(
        self, model: ActorCritic, optimizer: torch.optim.Optimizer, magnet: nn.Module | None = None
    ) -> dict[str, Any]:
        """The networks, the optimizer and the magnet as they were; returns the record as it was."""
        model.load_state_dict(self.model)
        optimizer.load_state_dict(self.optimizer)
        if magnet is not None and self.magnet is not None:
            magnet.load_state_dict(self.magnet)
        return self.progress


def check_finite(model: ActorCritic, stats: dict[str, float], done: int, saved: int | None) -> None:
    """Stop a run whose update left a NaN or an infinity in its losses or its networks, before anything of it is
    saved, evaluated or exported (``saved``: the timesteps of the checkpoint kept, None before the first)."""
    if all(math.isfinite(value) for value in stats.values()) and all_finite(dict(model.state_dict())):
        return
    kept = "no checkpoint was saved" if saved is None else f"the checkpoint at {saved:,} timesteps is kept"
    raise RunError(
        f"the update at {done:,} timesteps made the losses or the weights non-finite (NaN or inf); {kept} and nothing "
        "after it is saved (a resume would repeat the same updates): start a new run with a lower --learning-rate or "
        "--max-grad-norm"
    )
