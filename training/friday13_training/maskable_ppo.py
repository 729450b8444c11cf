"""The MaskablePPO run machinery that both training scripts share (needs the ``train`` extra).

``training/finetune_ppo.py`` (Friday the 13th) and ``training/train_friday.py`` (Friday) read their
hyperparameters from the command line into different ``Args`` dataclasses with the same PPO fields;
this is the one place that checks those fields, turns them into a model, and keeps a run directory
(``last.zip`` + ``progress.json``, ``--resume``, the final export), so the two games train the same way.

Nothing here exits the interpreter: a run directory that cannot be started or continued (no
checkpoint to resume, a damaged ``last.zip`` or ``progress.json``, changed hyperparameters) is a
``RunError`` naming the file and what to do, which a script's ``main`` turns into an exit message.

A ``last.zip`` is read without unpickling anything: SB3 stores the objects it cannot write as JSON pickled in the
zip's ``data`` (``:serialized:`` entries), and its ``load`` would run whatever code such an entry holds. Those a run
writes (``SERIALIZED``) are rebuilt from the run's arguments instead (``rebuilt_objects``); any other is refused.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.buffers import MaskableRolloutBuffer
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.utils import FloatSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from friday13_env.core.checkpoint import MAX_PARAMETERS
from friday13_training.actor_critic import ACTIVATIONS
from friday13_training.reporting import tensorboard_dir
from friday13_training.runs import (
    MAX_PROGRESS_BYTES,
    RunError,
    changed_hyperparameters,
    export_copy,
    match_checkpoint,
    next_multiple,
    open_run,
    read_progress,
)

SERIALIZED = (
    "policy_class", "policy_kwargs", "observation_space", "action_space", "lr_schedule", "clip_range",
    "rollout_buffer_class", "_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer",
    "ep_success_buffer",
)  # fmt: skip
"""The entries of a MaskablePPO zip's ``data`` that SB3 pickles (``:serialized:``): each is rebuilt from the run's
arguments and environments on ``--resume`` (``rebuilt_objects``), never unpickled; a zip with any other is refused."""
DROPPED = ("_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer", "ep_success_buffer")
"""The entries of ``SERIALIZED`` that a resumed model starts without (SB3 resets the environments and the episode
statistics of a model whose last observation is None)."""
MAX_MODEL_BYTES = 8 * 4 * MAX_PARAMETERS
"""The most bytes a ``last.zip``'s members may inflate to (checked before SB3 reads them): the actor's and the
critic's float32 weights and Adam's two moments of each, for the largest network the policy loader reads, with room
to spare. A real checkpoint holds a few megabytes; a zip bomb claims far more."""


class PPOHyperparameters(Protocol):
    """The fields of a training script's ``Args`` that configure MaskablePPO."""

    num_envs: int
    learning_rate: float
    n_steps: int
    batch_size: int
    n_epochs: int
    gamma: float
    gae_lambda: float
    clip_range: float
    ent_coef: float
    vf_coef: float
    hidden_sizes: list[int]
    activation: str
    seed: int


def vectorize(thunks: Sequence[Callable[[], gym.Env]], subprocess: bool) -> VecEnv:
    """The environments as one monitored VecEnv: each in its own ``spawn`` process, or all in this one."""
    if subprocess:
        return VecMonitor(SubprocVecEnv(list(thunks), start_method="spawn"))
    return VecMonitor(DummyVecEnv(list(thunks)))


def close_vec_env(vec_env: VecEnv) -> None:
    """Close ``vec_env``. If a step was under way (a run stopped by Ctrl-C or SIGTERM while it read its workers'
    results), end the worker processes instead: SB3's ``close`` would first wait for every worker's result, and
    those the step had read already never come again, so it would wait forever."""
    inner = vec_env.unwrapped
    if isinstance(inner, SubprocVecEnv) and inner.waiting and not inner.closed:
        for process in inner.processes:
            process.terminate()
        for process in inner.processes:
            process.join()
        for remote in inner.remotes:
            remote.close()
        inner.closed = True
        return
    vec_env.close()


def policy_kwargs(args: PPOHyperparameters) -> dict[str, Any]:
    """The networks of the run's policy: separate actor and critic MLPs of ``--hidden-sizes`` and ``--activation``."""
    if args.activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {args.activation!r}; allowed values: {sorted(ACTIVATIONS)}")
    return {
        "net_arch": {"pi": list(args.hidden_sizes), "vf": list(args.hidden_sizes)},
        "activation_fn": ACTIVATIONS[args.activation],
    }


def new_maskable_ppo(args: PPOHyperparameters, vec_env: VecEnv, run_dir: Path, *, setup: bool = True) -> MaskablePPO:
    """A fresh CPU MaskablePPO with separate actor and critic MLPs, logging to ``run_dir/tb`` where tensorboard is
    installed (``tensorboard_dir``); without ``setup``, its settings only (no networks, no buffer, no seeding)."""
    return MaskablePPO(
        "MlpPolicy",
        vec_env,
        learning_rate=args.learning_rate,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=args.n_epochs,
        gamma=args.gamma,
        gae_lambda=args.gae_lambda,
        clip_range=args.clip_range,
        ent_coef=args.ent_coef,
        vf_coef=args.vf_coef,
        policy_kwargs=policy_kwargs(args),
        tensorboard_log=tensorboard_dir(run_dir),
        seed=args.seed,
        device="cpu",
        verbose=0,
        _init_setup_model=setup,
    )


def hyperparameter_error(args: PPOHyperparameters) -> str | None:
    """What is wrong with the PPO fields together, in words (for ``parser.error``), or None.

    Each field's own bounds are the parser's (``option(..., minimum=...)``); these are the checks that
    need several fields, and the PPO constraints for scripts whose fields declare no bounds.
    """
    if args.activation not in ACTIVATIONS:
        return f"--activation must be one of {sorted(ACTIVATIONS)}, got {args.activation!r}"
    if args.num_envs < 1 or args.n_steps < 1:
        return f"--num-envs and --n-steps must be at least 1, got {args.num_envs} and {args.n_steps}"
    if args.batch_size < 2:
        return f"--batch-size must be at least 2 (advantages are normalised per minibatch), got {args.batch_size}"
    if args.batch_size > args.n_steps * args.num_envs:
        return f"--batch-size {args.batch_size} exceeds one rollout ({args.n_steps} x {args.num_envs} steps)"
    return None


def checkpoint_data(path: Path) -> dict[str, Any]:
    """The JSON ``data`` of the MaskablePPO zip ``path``, read without unpickling anything, or a ``RunError`` naming
    what is wrong: not a zip, members that inflate past ``MAX_MODEL_BYTES`` or a ``data`` past a record's cap
    (``MAX_PROGRESS_BYTES``), no ``data`` object, or a pickled (``:serialized:``) entry that is not one of
    ``SERIALIZED`` (SB3's ``load`` would unpickle it, running any code it holds; those of ``SERIALIZED`` are replaced
    by ``rebuilt_objects`` and never read)."""
    try:
        with zipfile.ZipFile(path) as archive:
            inflated = sum(info.file_size for info in archive.infolist())
            if archive.getinfo("data").file_size > MAX_PROGRESS_BYTES:
                raise ValueError(f"its data holds more than {MAX_PROGRESS_BYTES:,} bytes")
            if inflated > MAX_MODEL_BYTES:
                raise ValueError(f"its members inflate to {inflated:,} bytes (at most {MAX_MODEL_BYTES:,})")
            data = json.loads(archive.read("data"))
        if not isinstance(data, dict):
            raise ValueError("its data is not a JSON object")
    except (OSError, zipfile.BadZipFile, KeyError, ValueError, RecursionError) as error:
        raise RunError(
            f"--resume: {path} is damaged or not a MaskablePPO checkpoint ({type(error).__name__}: {error});"
            " restore it or start a new run"
        ) from error
    pickled = sorted(key for key, value in data.items() if isinstance(value, dict) and ":serialized:" in value)
    unknown = [key for key in pickled if key not in SERIALIZED]
    if unknown:
        raise RunError(
            f"--resume: {path} is damaged or not this script's checkpoint: it holds pickled entries {unknown} that "
            f"loading it would unpickle, running any code they hold (a run writes only {list(SERIALIZED)}, which are "
            "rebuilt from its arguments, never unpickled); restore it or start a new run"
        )
    return data


def check_checkpoint(run_dir: Path, progress: dict[str, Any], most_ahead: int) -> None:
    """Check ``last.zip`` against ``progress.json`` without loading the model (a ``RunError`` naming what is
    wrong, ``checkpoint_data``); if ``last.zip`` is ahead (a run stopped between writing the two) by at most
    ``most_ahead`` timesteps (``runs.checkpoint_reach``), ``progress`` moves up to it."""
    path = run_dir / "last.zip"
    timesteps = checkpoint_data(path).get("num_timesteps")
    if isinstance(timesteps, bool) or not isinstance(timesteps, int):
        raise RunError(
            f"--resume: {path} is damaged or not a MaskablePPO checkpoint (its num_timesteps is {timesteps!r});"
            " restore it or start a new run"
        )
    match_checkpoint(path, timesteps, progress, most_ahead)


def rebuilt_objects(args: PPOHyperparameters, vec_env: VecEnv) -> dict[str, Any]:
    """What ``MaskablePPO.load`` takes instead of each pickled entry of ``SERIALIZED`` (its ``custom_objects``): the
    policy and buffer classes, the networks' shape, the spaces of the run's environments and the schedules, all from
    the run's arguments (the schedules and the buffer are rebuilt by SB3 from its fields as it sets the model up);
    the last observations and episode statistics are dropped, as SB3 itself drops the observations when it loads a
    model onto new environments (the episodes start anew)."""
    return {
        "policy_class": MaskableActorCriticPolicy,
        "policy_kwargs": policy_kwargs(args),
        "observation_space": vec_env.observation_space,
        "action_space": vec_env.action_space,
        "lr_schedule": FloatSchedule(args.learning_rate),
        "clip_range": args.clip_range,
        "rollout_buffer_class": MaskableRolloutBuffer,
        **dict.fromkeys(DROPPED),
    }


PROGRESS_ENTRIES = (
    "num_timesteps", "_total_timesteps", "_num_timesteps_at_start", "start_time", "tensorboard_log", "_episode_num",
    "_current_progress_remaining", "_n_updates",
)  # fmt: skip
"""The plain entries of a MaskablePPO zip's ``data`` that say where a run stands, not how it learns: they may differ
from a fresh model's (the timesteps are checked against the record, ``check_checkpoint``; the log folder is reset)."""


def settings_problem(data: dict[str, Any], fresh: MaskablePPO) -> str | None:
    """Why the plain entries of a checkpoint's ``data`` are not the settings of the run's ``fresh`` model (built from
    its arguments), or None. SB3's ``load`` sets every one of them on the model, so a file with another ``gamma``,
    entropy bonus or rollout length (whose buffer it would allocate) would train with it while the run's record
    named its own; an entry a fresh model does not have would set an attribute SB3 never wrote."""
    saved = set(vars(fresh)) - set(fresh._excluded_save_params())  # what SB3's save writes of a model
    for key, value in data.items():
        if key in SERIALIZED or key in PROGRESS_ENTRIES:
            continue
        if key not in saved:
            return f"it holds {key!r}, which a MaskablePPO checkpoint of this run does not hold"
        if value != vars(fresh)[key]:
            return f"it holds {key} {value!r}, the run's {vars(fresh)[key]!r}"
    return None


def resume_model(run_dir: Path, vec_env: VecEnv, progress: dict[str, Any], args: PPOHyperparameters) -> MaskablePPO:
    """The model of the run's last checkpoint, weights and optimiser, on ``vec_env``; nothing in the zip is unpickled
    (``checkpoint_data``, ``rebuilt_objects``: checked here whether or not ``check_checkpoint`` ran), its settings
    are the run's (``settings_problem``, before SB3 builds anything of the file's sizes), and anything else that
    stops SB3 from loading it is a ``RunError`` too."""
    path = run_dir / "last.zip"
    problem = settings_problem(checkpoint_data(path), new_maskable_ppo(args, vec_env, run_dir, setup=False))
    if problem is not None:
        raise RunError(f"--resume: {path} is not this run's checkpoint: {problem}; restore it or start a new run")
    try:
        model = MaskablePPO.load(path, env=vec_env, device="cpu", custom_objects=rebuilt_objects(args, vec_env))
    except Exception as error:  # SB3 raises whatever unzipping or another network's shapes raise
        raise RunError(
            f"--resume: {path} is damaged or not this run's MaskablePPO checkpoint ({type(error).__name__}: {error});"
            " restore it or start a new run"
        ) from error
    model.tensorboard_log = tensorboard_dir(run_dir)  # not the checkpoint's: the run folder may have moved since, or
    # be resumed where tensorboard is not installed
    print(f"resuming {run_dir} at {progress['timesteps']:,} timesteps", flush=True)
    return model


def save_model(model: BaseAlgorithm, run_dir: Path) -> None:
    """``run_dir/last.zip``, written to a temporary file and renamed, so a crash never leaves half a file."""
    temporary = run_dir / "last.tmp.zip"
    model.save(temporary)
    os.replace(temporary, run_dir / "last.zip")


__all__ = [
    "ACTIVATIONS",
    "RunError",
    "changed_hyperparameters",
    "check_checkpoint",
    "checkpoint_data",
    "export_copy",
    "hyperparameter_error",
    "new_maskable_ppo",
    "next_multiple",
    "open_run",
    "policy_kwargs",
    "read_progress",
    "rebuilt_objects",
    "resume_model",
    "save_model",
    "vectorize",
]  # fmt: skip
