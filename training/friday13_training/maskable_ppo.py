"""The MaskablePPO run machinery that both training scripts share (needs the ``train`` extra).

``training/finetune_ppo.py`` (Friday the 13th) and ``training/train_friday.py`` (Friday) read their
hyperparameters from the command line into different ``Args`` dataclasses with the same PPO fields;
this is the one place that checks those fields, turns them into a model, and keeps a run directory
(``last.zip`` + ``progress.json``, ``--resume``, the final export), so the two games train the same way.

Nothing here exits the interpreter: a run directory that cannot be started or continued (no
checkpoint to resume, a damaged ``last.zip`` or ``progress.json``, changed hyperparameters) is a
``RunError`` naming the file and what to do, which a script's ``main`` turns into an exit message.
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
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from friday13_training.actor_critic import ACTIVATIONS
from friday13_training.reporting import tensorboard_dir
from friday13_training.runs import (
    RunError,
    changed_hyperparameters,
    export_copy,
    match_checkpoint,
    next_multiple,
    open_run,
    read_progress,
)


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


def new_maskable_ppo(args: PPOHyperparameters, vec_env: VecEnv, run_dir: Path) -> MaskablePPO:
    """A fresh CPU MaskablePPO with separate actor and critic MLPs, logging to ``run_dir/tb`` where tensorboard is
    installed (``tensorboard_dir``)."""
    if args.activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {args.activation!r}; allowed values: {sorted(ACTIVATIONS)}")
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
        policy_kwargs={
            "net_arch": {"pi": list(args.hidden_sizes), "vf": list(args.hidden_sizes)},
            "activation_fn": ACTIVATIONS[args.activation],
        },
        tensorboard_log=tensorboard_dir(run_dir),
        seed=args.seed,
        device="cpu",
        verbose=0,
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


def check_checkpoint(run_dir: Path, progress: dict[str, Any]) -> None:
    """Check ``last.zip`` against ``progress.json`` without loading the model (a ``RunError`` naming what is
    wrong); if ``last.zip`` is ahead (a run stopped between writing the two), ``progress`` moves up to it."""
    path = run_dir / "last.zip"
    try:
        with zipfile.ZipFile(path) as archive:
            timesteps = json.loads(archive.read("data"))["num_timesteps"]
        if isinstance(timesteps, bool) or not isinstance(timesteps, int):
            raise ValueError(f"num_timesteps is {timesteps!r}")
    except (OSError, zipfile.BadZipFile, KeyError, ValueError, TypeError) as error:
        raise RunError(
            f"--resume: {path} is damaged or not a MaskablePPO checkpoint ({type(error).__name__}: {error});"
            " restore it or start a new run"
        ) from error
    match_checkpoint(path, timesteps, progress)


def resume_model(run_dir: Path, vec_env: VecEnv, progress: dict[str, Any], *, checked: bool = False) -> MaskablePPO:
    """The model of the run's last checkpoint, weights and optimiser, on ``vec_env`` (checked as
    ``check_checkpoint`` checks it, unless the caller did already: ``checked``; anything else that stops SB3
    from loading it is a ``RunError`` too)."""
    if not checked:
        check_checkpoint(run_dir, progress)
    path = run_dir / "last.zip"
    try:
        model = MaskablePPO.load(path, env=vec_env, device="cpu")
    except Exception as error:  # SB3 raises whatever unzipping, unpickling or a changed space raises
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
    "ACTIVATIONS", "RunError", "changed_hyperparameters", "check_checkpoint", "export_copy", "hyperparameter_error",
    "new_maskable_ppo", "next_multiple", "open_run", "read_progress", "resume_model", "save_model", "vectorize",
]  # fmt: skip
