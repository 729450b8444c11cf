"""The MaskablePPO run machinery that both training scripts share (needs the ``train`` extra).

``training/train_ppo.py`` (Friday the 13th) and ``training/train_friday.py`` (Friday) read their
hyperparameters from the command line into different ``Args`` dataclasses with the same PPO fields;
this is the one place that checks those fields, turns them into a model, and keeps a run directory
(``last.zip`` + ``progress.json``, ``--resume``, the final export), so the two games train the same way.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import gymnasium as gym
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


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


def new_maskable_ppo(args: PPOHyperparameters, vec_env: VecEnv, run_dir: Path) -> MaskablePPO:
    """A fresh CPU MaskablePPO with separate actor and critic MLPs, logging to ``run_dir/tb``."""
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
        tensorboard_log=str(run_dir / "tb"),
        seed=args.seed,
        device="cpu",
        verbose=0,
    )


def hyperparameter_error(args: PPOHyperparameters) -> str | None:
    """What is wrong with the PPO fields, in words (for ``parser.error``), or None."""
    if args.activation not in ACTIVATIONS:
        return f"--activation must be one of {sorted(ACTIVATIONS)}, got {args.activation!r}"
    if args.batch_size > args.n_steps * args.num_envs:
        return f"--batch-size {args.batch_size} exceeds one rollout ({args.n_steps} x {args.num_envs} steps)"
    return None


def open_run(run_dir: Path, resume: bool, fresh_progress: dict[str, Any]) -> dict[str, Any]:
    """The run's progress record: the stored one with ``resume``, else ``fresh_progress`` for a new run.

    Exits with a message when ``--resume`` finds no checkpoint, or a new run would overwrite one.
    """
    if resume:
        if not (run_dir / "last.zip").is_file():
            sys.exit(f"--resume: no checkpoint at {run_dir / 'last.zip'}; start the run without --resume first")
        return json.loads((run_dir / "progress.json").read_text())
    if (run_dir / "last.zip").exists():
        sys.exit(f"{run_dir} already holds a run: pass --resume to continue it, or choose another --run-name")
    run_dir.mkdir(parents=True, exist_ok=True)
    return fresh_progress


def resume_model(run_dir: Path, vec_env: VecEnv, progress: dict[str, Any]) -> MaskablePPO:
    """The model of the run's last checkpoint, weights and optimiser, on ``vec_env``."""
    model = MaskablePPO.load(run_dir / "last.zip", env=vec_env, device="cpu")
    print(f"resuming {run_dir} at {progress['timesteps']:,} timesteps", flush=True)
    return model


def next_multiple(done: int, every: int) -> float:
    """The first multiple of ``every`` after ``done`` (when the next periodic event is due); never if 0."""
    return (done // every + 1) * every if every > 0 else float("inf")


def save_model(model: MaskablePPO, run_dir: Path) -> None:
    """``run_dir/last.zip``, written to a temporary file and renamed, so a crash never leaves half a file."""
    temporary = run_dir / "last.tmp.zip"
    model.save(temporary)
    os.replace(temporary, run_dir / "last.zip")


def export_copy(run_dir: Path, export: str) -> None:
    """Copy the run's final ``policy.npz`` to ``--export`` (nothing when it is empty)."""
    if not export:
        return
    path = Path(export)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((run_dir / "policy.npz").read_bytes())
    print(f"exported the policy to {path}", flush=True)
