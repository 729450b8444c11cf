"""Train a MaskablePPO policy for Friday the 13th against scripted opponents, optionally with self-play.

Reads top to bottom (CleanRL style): hyperparameters, environment construction, the callbacks that
checkpoint / evaluate / grow the self-play pool, then the training loop. Every hyperparameter is a
field of ``Args`` and a command-line flag (``python training/train_ppo.py --help``).

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``):
  ``last.zip``        the full SB3 model (weights + optimizer), rewritten atomically: ``--resume`` continues it
  ``progress.json``   timesteps done, snapshot files, learning-curve points; rewritten atomically
  ``policy.npz``      the exported numpy policy (``friday13_env.friday13.agents.load`` plays it without torch)
  ``snapshots/``      frozen self-play opponents (numpy policies)
  ``learning_curve.csv`` and TensorBoard logs in ``tb/``

By default a run *fine-tunes* the shipped distilled search policy: ``--init-policy`` starts the actor
(and the observation scale) from ``checkpoints/search_distilled.npz``, the critic starts fresh, and
``--critic-warmup`` keeps the actor frozen for the first 30,000 timesteps so that the critic learns
the policy's values before its advantages move the actor; a small learning rate and entropy bonus
then train it without forgetting what it was taught. ``--init-temperature 0.1`` first divides the
start's logits by 10 (its greedy moves stay the same): the distilled policy is soft (its likeliest
legal move gets 0.41 of the probability on average, ``python -m benchmarks.policy_confidence``), so
PPO would otherwise learn from sampled moves much weaker than those the greedy policy plays;
sharpened, the likeliest move gets 0.88. The default 500,000-step run (8-18 minutes on 2 shared cores) ends
well above ``cautious`` but no stronger than the policy it starts from (checkpoints/README.md).
The policy to start from must have the run's deck, activation and hidden sizes.

From scratch (the recipe of ``checkpoints/ppo_general.npz``; about 32 minutes per million steps):
``python training/train_ppo.py --init-policy '' --critic-warmup 0 --learning-rate 5e-4 --ent-coef 0.01
--total-timesteps 1000000``.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from common.maskable_ppo import (
    export_copy,
    hyperparameter_error,
    new_maskable_ppo,
    next_multiple,
    open_run,
    resume_model,
    save_model,
    vectorize,
)
from common.script_args import atomic_write_text, dataclass_parser, option, repository_path
from common.torch_policy import load_linear_layers, read_matching_policy, save_linear_layers, sb3_actor_layers
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.vec_env import VecEnv

import friday13_env  # noqa: F401 - registers the Gymnasium ids
from friday13_env.core.policy import CheckpointError, MLPPolicy
from friday13_env.friday13.agents.policy import (
    CardPolicyAgent,
    observation_scale,
    policy_metadata,
    read_card_policy,
)
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import Rules
from friday13_env.friday13.evaluation import evaluate_agent

REPOSITORY = Path(__file__).resolve().parents[1]
"""Where the shipped checkpoints live, so that the default ``--init-policy`` works from any directory."""


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    run_name: str = option("ppo", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    seed: int = option(0, "seeds the model, the environments and the evaluations")
    total_timesteps: int = option(500_000, "learner decisions to train for, in all")
    players: list[int] = option([3, 4, 5, 6], "table sizes, one drawn per episode")
    deck: str = option("standard", "standard or german")
    opponents: list[str] = option(["cautious", "majority"], "opponent pool: each seat draws one per episode")
    reward: str = option("relative", "reward mode of the environment: points, win or relative")
    self_play: bool = option(False, "add frozen snapshots of the learner to the opponent pool")
    snapshot_every: int = option(200_000, "timesteps between self-play snapshots")
    max_snapshots: int = option(5, "self-play snapshots kept in the pool (oldest leave first)")
    num_envs: int = option(8, "environments stepped per rollout")
    subprocess: bool = option(
        True, "step every environment in its own process (SubprocVecEnv); --no-subprocess steps all in this one"
    )
    learning_rate: float = option(3e-5, "Adam learning rate (from scratch: 5e-4)")
    n_steps: int = option(256, "rollout length per environment")
    batch_size: int = option(512, "minibatch size")
    n_epochs: int = option(10, "passes over each rollout")
    gamma: float = option(0.99, "discount factor")
    gae_lambda: float = option(0.95, "GAE lambda")
    clip_range: float = option(0.2, "PPO clip range")
    ent_coef: float = option(0.001, "entropy bonus (from scratch: 0.01)")
    vf_coef: float = option(0.5, "value loss weight")
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the actor and the critic")
    activation: str = option("relu", "relu or tanh")
    init_policy: str = option(
        "checkpoints/search_distilled.npz",
        "start the actor and the observation scale from this exported policy (.npz; a relative path is looked up"
        " from the working directory, then from the repository); '' trains from scratch",
    )
    init_temperature: float = option(
        0.1,
        "divide the --init-policy's logits by this (< 1 sharpens): PPO improves the moves it samples, so they"
        " should be the moves the greedy policy plays",
    )
    critic_warmup: int = option(30_000, "first timesteps in which only the critic learns (the actor stays frozen)")
    eval_every: int = option(100_000, "timesteps between evaluations against the baselines (0 = never)")
    eval_games: int = option(200, "4-player duplicate-deal games per evaluation opponent")
    eval_opponents: list[str] = option(["cautious", "majority"], "baselines the periodic evaluation plays")
    checkpoint_every: int = option(100_000, "timesteps between checkpoints")
    export: str = option("", "also copy the final numpy policy here, e.g. checkpoints/ppo_general.npz")
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    progress: bool = option(True, "show a progress bar")
    torch_threads: int = option(1, "torch CPU threads of the learner process")


def parse_args(argv: list[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help can never drift apart."""
    parser = dataclass_parser(Args, __doc__)
    args = Args(**vars(parser.parse_args(argv)))
    error = hyperparameter_error(args)
    if error:
        parser.error(error)
    if not args.init_temperature > 0:
        parser.error(f"--init-temperature must be positive, got {args.init_temperature}")
    for count in args.players:
        try:
            Rules(num_players=count)
        except ValueError as error:
            parser.error(f"--players: {error}")
    get_deck(args.deck)
    try:
        initial_policy(args)
    except CheckpointError as error:
        parser.error(f"--init-policy: {error} (--init-policy '' trains from scratch)")
    return args


def initial_policy(args: Args) -> MLPPolicy | None:
    """The policy named by ``--init-policy``, checked against the run's deck and network, or None."""
    if not args.init_policy:
        return None
    path = repository_path(args.init_policy, REPOSITORY)
    return read_matching_policy(path, deck=args.deck, activation=args.activation, hidden_sizes=args.hidden_sizes)


# -- environments ----------------------------------------------------------------------------------
class ScaledObservation(gym.ObservationWrapper):
    """Divide each entry by its upper bound so that every input lies in [0, 1].

    The same ``scale`` is stored in the exported policy, so numpy inference sees identical inputs.
    """

    def __init__(self, env: gym.Env, scale: np.ndarray) -> None:
        super().__init__(env)
        self.scale = scale
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=scale.shape, dtype=np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return (observation * self.scale).astype(np.float32)

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()


def make_env(args: Args, rank: int, scale: np.ndarray) -> Callable[[], gym.Env]:
    def thunk() -> gym.Env:
        env = gym.make(
            "friday13_env/Friday13-v0",
            num_players=args.players,
            opponent_pool=args.opponents,
            deck=args.deck,
            reward=args.reward,
            disable_env_checker=True,
        )
        env.reset(seed=args.seed * 1_000 + rank)
        return ScaledObservation(env, scale)

    return thunk


def make_vec_env(args: Args, scale: np.ndarray) -> VecEnv:
    return vectorize([make_env(args, rank, scale) for rank in range(args.num_envs)], args.subprocess)


# -- the model ------------------------------------------------------------------------------------
def build_model(args: Args, vec_env: VecEnv, run_dir: Path, init: MLPPolicy | None = None) -> MaskablePPO:
    """A fresh MaskablePPO; with ``init`` its actor starts as that policy (the critic starts fresh)."""
    model = new_maskable_ppo(args, vec_env, run_dir)
    if init is not None:
        layers = sb3_actor_layers(model)
        load_linear_layers(layers, init)
        with torch.no_grad():
            layers[-1].weight.div_(args.init_temperature)
            layers[-1].bias.div_(args.init_temperature)
    return model


def set_actor_trainable(model: MaskablePPO, trainable: bool) -> None:
    """Freeze or thaw the actor's weights; frozen, PPO's updates move only the critic."""
    for layer in sb3_actor_layers(model):
        for parameter in layer.parameters():
            parameter.requires_grad_(trainable)


# -- exporting the numpy policy --------------------------------------------------------------------
def export_policy(model: MaskablePPO, args: Args, scale: np.ndarray, path: Path, training: dict[str, Any]) -> None:
    """Copy the actor's weights out of torch into a safe ``.npz`` checkpoint."""
    description = f"MaskablePPO run {args.run_name!r}"
    if args.init_policy:
        description += f", started from {Path(args.init_policy).name}"
    metadata = policy_metadata(args.deck, args.activation, args.hidden_sizes, description, training)
    save_linear_layers(path, sb3_actor_layers(model), scale, metadata)


# -- callbacks: checkpoints, evaluation, self-play -------------------------------------------------
class TrainingCallback(BaseCallback):
    """Checkpoints, periodic evaluation against the baselines, and the self-play snapshot pool."""

    def __init__(self, args: Args, run_dir: Path, scale: np.ndarray, progress: dict[str, Any]) -> None:
        super().__init__()
        self.args = args
        self.run_dir = run_dir
        self.scale = scale
        self.progress = progress
        self.started = time.time()
        self.earlier_wall_time = progress["wall_time_s"]  # spent by the runs this one resumes
        self.next_checkpoint = next_multiple(progress["timesteps"], args.checkpoint_every)
        self.next_eval = next_multiple(progress["timesteps"], args.eval_every)
        self.next_snapshot = next_multiple(progress["timesteps"], args.snapshot_every)

    def _on_training_start(self) -> None:
        if self.args.self_play and self.progress["snapshots"]:
            self._publish_pool()
        if self.args.eval_every and self.progress["timesteps"] == 0:
            self._evaluate(0)  # a fresh run's curve starts from the initial policy (what a fine-tune starts from)

    def _on_rollout_end(self) -> None:
        """Called between collecting a rollout and training on it: the critic warm-up freezes the actor."""
        set_actor_trainable(self.model, self.num_timesteps > self.args.critic_warmup)

    def _on_step(self) -> bool:
        steps = self.num_timesteps
        if steps >= self.next_snapshot and self.args.self_play:
            self.next_snapshot += self.args.snapshot_every
            self._snapshot(steps)
        if steps >= self.next_eval:
            self.next_eval += self.args.eval_every
            self._evaluate(steps)
        if steps >= self.next_checkpoint:
            self.next_checkpoint += self.args.checkpoint_every
            self.save(steps)
        return True

    def training_record(self, steps: int) -> dict[str, Any]:
        return {
            "timesteps": steps,
            "wall_time_s": round(self.earlier_wall_time + time.time() - self.started, 1),
            "args": dataclasses.asdict(self.args),
        }

    def save(self, steps: int) -> None:
        """Model, numpy policy and progress, each written to a temporary file and renamed."""
        save_model(self.model, self.run_dir)
        record = self.training_record(steps)
        export_policy(self.model, self.args, self.scale, self.run_dir / "policy.npz", record)
        self.progress.update(timesteps=steps, wall_time_s=record["wall_time_s"])
        atomic_write_text(self.run_dir / "progress.json", json.dumps(self.progress, indent=1))

    def _current_agent(self, steps: int, name: str) -> CardPolicyAgent:
        path = self.run_dir / "snapshots" / f"{name}.npz"
        export_policy(self.model, self.args, self.scale, path, self.training_record(steps))
        return CardPolicyAgent(read_card_policy(path), name=name)

    def _snapshot(self, steps: int) -> None:
        name = f"snapshot_{steps}"
        self._current_agent(steps, name)
        snapshots = [*self.progress["snapshots"], name][-self.args.max_snapshots :]
        self.progress["snapshots"] = snapshots
        self._publish_pool()

    def _publish_pool(self) -> None:
        paths = [str(self.run_dir / "snapshots" / f"{name}.npz") for name in self.progress["snapshots"]]
        self.training_env.env_method("set_opponent_pool", [*self.args.opponents, *paths])

    def _evaluate(self, steps: int) -> None:
        agent = self._current_agent(steps, "eval_current")
        rates = evaluate_agent(agent, self.args.eval_opponents, self.args.eval_games, num_players=4, seed=12_345)
        point: dict[str, Any] = {"timesteps": steps}
        for opponent, rate in rates.items():
            point[opponent] = rate.mean
            self.logger.record(f"eval/win_rate_vs_{opponent}", rate.mean)
        self.progress["curve"].append(point)
        summary = ", ".join(f"{name} {rate}" for name, rate in rates.items())
        print(f"[eval @ {steps:,} steps] 4-player win rate vs 3 copies of: {summary}", flush=True)
        with open(self.run_dir / "learning_curve.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["timesteps", *self.args.eval_opponents])
            writer.writeheader()
            writer.writerows(self.progress["curve"])


# -- the run ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    run_dir = Path(args.run_dir or Path("runs") / args.run_name)
    progress = open_run(run_dir, args.resume, {"timesteps": 0, "wall_time_s": 0.0, "snapshots": [], "curve": []})
    torch.set_num_threads(args.torch_threads)
    init = initial_policy(args)
    scale = observation_scale(args.deck) if init is None else init.input_scale
    vec_env = make_vec_env(args, scale)
    model = resume_model(run_dir, vec_env, progress) if args.resume else build_model(args, vec_env, run_dir, init)
    callback = TrainingCallback(args, run_dir, scale, progress)
    remaining = args.total_timesteps - progress["timesteps"]
    if remaining > 0:
        model.learn(
            total_timesteps=remaining,
            callback=CallbackList([callback]),
            reset_num_timesteps=not args.resume,
            progress_bar=args.progress,
            tb_log_name="ppo",
        )
    callback.save(model.num_timesteps)
    vec_env.close()
    export_copy(run_dir, args.export)
    print(f"done: {model.num_timesteps:,} timesteps; run directory {run_dir}", flush=True)


if __name__ == "__main__":
    main()
