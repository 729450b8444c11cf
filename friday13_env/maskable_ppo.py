"""The MaskablePPO model that both training scripts build (needs the ``train`` extra).

``training/train_ppo.py`` (Friday the 13th) and ``training/train_friday.py`` (Friday) read their
hyperparameters from the command line into different ``Args`` dataclasses with the same PPO fields;
this is the one place that turns those fields into a model, so the two games train the same way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnv

ACTIVATIONS = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}


class PPOHyperparameters(Protocol):
    """The fields of a training script's ``Args`` that configure MaskablePPO."""

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
