"""Train a MaskablePPO policy for Friday, the solo deck-builder (``friday13_env/FridaySolo-v0``).

Reads top to bottom (CleanRL style, like ``training/finetune_ppo.py``): hyperparameters, environment
construction, the optional behaviour-cloning warm start, the callback that checkpoints and evaluates,
then the training loop. Every hyperparameter is a field of ``Args`` and a command-line flag
(``python training/train_friday.py --help``).

Reward: the environment's own reward (the final score, 0 before the end) times ``--reward-scale``.
Optional shaping, off by default: ``--win-bonus`` adds that many score points to the final reward of a
won game. Warm start, off by default: ``--bc-games N`` first behaviour-clones N games of the rule-based
``heuristic`` agent (cross-entropy on its masked actions, plus the critic regressed on the discounted
final rewards), then PPO improves on it.

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``):
  ``last.zip``           the full SB3 model (weights + optimizer), rewritten atomically: ``--resume`` continues it
  ``progress.json``      timesteps done, wall time, learning-curve points; rewritten atomically
  ``policy.npz``         the exported numpy policy (``friday13_env.friday.agents.make(path)`` plays it)
  ``learning_curve.csv`` and TensorBoard logs in ``tb/``
"""

from __future__ import annotations

import csv
import dataclasses
import io
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
    RunError,
    export_copy,
    hyperparameter_error,
    new_maskable_ppo,
    next_multiple,
    open_run,
    resume_model,
    save_model,
    vectorize,
)
from common.script_args import atomic_write_text, dataclass_parser, option, output_errors
from common.torch_policy import save_linear_layers, sb3_actor_layers
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

from friday13_env.friday import encoding
from friday13_env.friday.agents import load, make
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.evaluation import evaluate, game_seed
from friday13_env.friday.levels import check_level
from friday13_env.friday.policy import policy_metadata


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    run_name: str = option("friday_level1", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    seed: int = option(0, "seeds the model, the environments, the warm start and the evaluations", minimum=0)
    total_timesteps: int = option(
        1_000_000, "PPO decisions to train for, in all (the warm start not counted)", minimum=0
    )
    levels: list[int] = option([1], "difficulty levels, one drawn per episode", minimum=1, maximum=4)
    reward_scale: float = option(0.02, "multiplies the final reward (scores span about -80..+90)", above=0)
    win_bonus: float = option(0.0, "reward shaping, off by default: score points added to the final reward of a win")
    bc_games: int = option(0, "warm start: behaviour-clone this many heuristic games before PPO (0 = off)", minimum=0)
    bc_epochs: int = option(8, "passes over the heuristic games", minimum=1)
    bc_learning_rate: float = option(1e-3, "Adam learning rate of the warm start", above=0)
    bc_samples: int = option(
        8, "Monte-Carlo plays per hazard of the cloned heuristic (fewer = faster, weaker)", minimum=1
    )
    num_envs: int = option(8, "environments stepped per rollout", minimum=1)
    subprocess: bool = option(
        True, "step every environment in its own process (SubprocVecEnv); --no-subprocess steps all in this one"
    )
    learning_rate: float = option(2e-4, "Adam learning rate", above=0)
    n_steps: int = option(512, "rollout length per environment", minimum=1)
    batch_size: int = option(512, "minibatch size", minimum=2)
    n_epochs: int = option(5, "passes over each rollout", minimum=1)
    gamma: float = option(
        0.998, "discount factor (games last ~50-250 decisions, the reward comes at the end)", above=0, maximum=1
    )
    gae_lambda: float = option(0.95, "GAE lambda", minimum=0, maximum=1)
    clip_range: float = option(0.2, "PPO clip range", above=0)
    ent_coef: float = option(0.003, "entropy bonus", minimum=0)
    vf_coef: float = option(0.5, "value loss weight", minimum=0)
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the actor and the critic", minimum=1)
    activation: str = option("relu", "activation of the hidden layers", choices=("relu", "tanh"))
    eval_every: int = option(100_000, "timesteps between evaluations (0 = never)", minimum=0)
    eval_games: int = option(200, "games per level of each evaluation (fixed deals, greedy policy)", minimum=1)
    checkpoint_every: int = option(50_000, "timesteps between checkpoints", minimum=1)
    export: str = option("", "also copy the final numpy policy here, e.g. ppo-level1-v2.npz")
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    progress: bool = option(True, "show a progress bar")
    torch_threads: int = option(1, "torch CPU threads of the learner process", minimum=1)


def parse_args(argv: list[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help can never drift apart."""
    parser = dataclass_parser(Args, __doc__)
    args = Args(**vars(parser.parse_args(argv)))
    error = hyperparameter_error(args)
    if error:
        parser.error(error)
    for level in args.levels:
        try:
            check_level(level)
        except ValueError as error:
            parser.error(f"--levels: {error}")
    problems = output_errors([("--run-dir", run_directory(args), True), ("--export", args.export, False)])
    if problems:
        parser.error("; ".join(problems))
    return args


def run_directory(args: Args) -> Path:
    return Path(args.run_dir or Path("runs") / args.run_name)


# -- environments ----------------------------------------------------------------------------------
def final_reward(reward: float, info: dict[str, Any], args: Args) -> float:
    """The training reward of a finished game: (score [+ win bonus]) x scale."""
    return (reward + (args.win_bonus if info.get("won") else 0.0)) * args.reward_scale


class FridayTraining(gym.Wrapper):
    """Draws the level of each episode from ``args.levels`` and applies the reward scale and shaping.

    Observations are already in [-1, 1], so the policy sees them unscaled (``input_scale`` = 1).
    """

    def __init__(self, env: FridayEnv, args: Args, seed: int) -> None:
        super().__init__(env)
        self.args = args
        self.levels = list(args.levels)
        self.rng = np.random.default_rng(seed)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        level = int(self.rng.choice(self.levels))
        return self.env.reset(seed=seed, options={"level": level, **(options or {})})

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        if terminated:
            reward = final_reward(float(reward), info, self.args)
        return observation, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        friday: FridayEnv = self.env.unwrapped  # type: ignore[assignment]
        return friday.action_masks()


def make_env(args: Args, rank: int) -> Callable[[], gym.Env]:
    def thunk() -> gym.Env:
        env = FridayTraining(FridayEnv(level=args.levels[0]), args, seed=args.seed * 1_000 + rank)
        env.reset(seed=args.seed * 1_000 + rank)
        return env

    return thunk


def make_vec_env(args: Args) -> VecEnv:
    return vectorize([make_env(args, rank) for rank in range(args.num_envs)], args.subprocess)


# -- warm start: behaviour cloning of the heuristic ------------------------------------------------
def collect_demonstrations(args: Args) -> dict[str, np.ndarray]:
    """Play ``args.bc_games`` heuristic games; keep (observation, mask, action, discounted final reward)."""
    env = FridayEnv(level=args.levels[0])
    observations: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    returns: list[float] = []
    for game in range(args.bc_games):
        seed = game_seed(args.seed + 7_919, game)  # deals disjoint from the evaluation's (seed 12_345)
        obs, info = env.reset(seed=seed, options={"level": args.levels[game % len(args.levels)]})
        agent = make("heuristic", seed=seed, samples=args.bc_samples)
        start, done, reward = len(actions), False, 0.0
        while not done:
            action = agent.act(observation_dict(obs, info))
            observations.append(obs.astype(np.float16))
            masks.append(info["action_mask"].astype(bool))
            actions.append(action)
            obs, reward, done, _, info = env.step(action)
        length = len(actions) - start
        returns.extend(final_reward(float(reward), info, args) * args.gamma ** np.arange(length - 1, -1, -1))
    return {
        "observations": np.stack(observations),
        "masks": np.stack(masks),
        "actions": np.asarray(actions, dtype=np.int64),
        "returns": np.asarray(returns, dtype=np.float32),
    }


def behaviour_clone(model: MaskablePPO, data: dict[str, np.ndarray], args: Args) -> dict[str, float]:
    """Fit the actor to the heuristic's actions (masked cross-entropy) and the critic to its returns."""
    policy = model.policy
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=args.bc_learning_rate)
    rng = np.random.default_rng(args.seed)
    size = len(data["actions"])
    for _ in range(args.bc_epochs):
        order = rng.permutation(size)
        for start in range(0, size, args.batch_size):
            batch = order[start : start + args.batch_size]
            observations = torch.as_tensor(data["observations"][batch].astype(np.float32))
            values, log_prob, _ = policy.evaluate_actions(
                observations, torch.as_tensor(data["actions"][batch]), action_masks=data["masks"][batch]
            )
            value_loss = torch.nn.functional.mse_loss(values.flatten(), torch.as_tensor(data["returns"][batch]))
            loss = -log_prob.mean() + args.vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
            optimizer.step()
    policy.set_training_mode(False)
    with torch.no_grad():
        sample = rng.permutation(size)[:4_096]
        observations = torch.as_tensor(data["observations"][sample].astype(np.float32))
        distribution = policy.get_distribution(observations, action_masks=data["masks"][sample])
        chosen = distribution.get_actions(deterministic=True).numpy()
        nll = -distribution.log_prob(torch.as_tensor(data["actions"][sample])).mean().item()
    return {"samples": float(size), "accuracy": float(np.mean(chosen == data["actions"][sample])), "nll": nll}


# -- exporting the numpy policy --------------------------------------------------------------------
def export_policy(model: MaskablePPO, args: Args, path: Path, training: dict[str, Any]) -> None:
    """Copy the actor's weights out of torch into a safe ``.npz`` checkpoint (a Friday policy)."""
    description = f"MaskablePPO run {args.run_name!r} on Friday levels {args.levels}"
    metadata = policy_metadata(args.activation, args.hidden_sizes, description, training)
    save_linear_layers(path, sb3_actor_layers(model), np.ones(encoding.OBS_SIZE, dtype=np.float32), metadata)


# -- callback: checkpoints and evaluation ----------------------------------------------------------
class TrainingCallback(BaseCallback):
    """Atomic checkpoints and periodic evaluation (win rate with a 95% interval) at every training level."""

    def __init__(self, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
        super().__init__()
        self.args = args
        self.run_dir = run_dir
        self.progress = progress
        self.started = time.time()
        self.earlier_wall_time = progress["wall_time_s"]  # of the runs this one resumes
        self.next_checkpoint = next_multiple(progress["timesteps"], args.checkpoint_every)
        self.next_eval = next_multiple(progress["timesteps"], args.eval_every)

    def _on_step(self) -> bool:
        steps = self.num_timesteps
        if steps >= self.next_eval:
            self.next_eval += self.args.eval_every
            self.evaluate(steps)
        if steps >= self.next_checkpoint:
            self.next_checkpoint += self.args.checkpoint_every
            self.save(steps)
        return True

    def training_record(self, steps: int) -> dict[str, Any]:
        return {
            "timesteps": steps,
            "wall_time_s": round(self.earlier_wall_time + time.time() - self.started, 1),
            "warm_start": self.progress.get("warm_start"),
            "args": dataclasses.asdict(self.args),
        }

    def save(self, steps: int) -> None:
        """Model, numpy policy and progress, each written to a temporary file and renamed."""
        save_model(self.model, self.run_dir)
        record = self.training_record(steps)
        export_policy(self.model, self.args, self.run_dir / "policy.npz", record)
        self.progress.update(timesteps=steps, wall_time_s=record["wall_time_s"])
        atomic_write_text(self.run_dir / "progress.json", json.dumps(self.progress, indent=1))

    def evaluate(self, steps: int, model: MaskablePPO | None = None) -> None:
        """Greedy numpy policy, fixed deals (seed 12_345), ``eval_games`` games per level."""
        path = self.run_dir / "eval_current.npz"
        export_policy(model or self.model, self.args, path, self.training_record(steps))
        agent = load(path)  # read once, greedy: the same agent plays every game
        point: dict[str, Any] = {"timesteps": steps}
        summary = []
        for level in self.args.levels:
            result = evaluate(agent, level, self.args.eval_games, seed=12_345)
            point[f"win_rate_level{level}"] = result.win_rate.value
            point[f"mean_score_level{level}"] = result.mean_score.value
            if model is None:
                self.logger.record(f"eval/win_rate_level{level}", result.win_rate.value)
                self.logger.record(f"eval/mean_score_level{level}", result.mean_score.value)
            rate = result.win_rate
            summary.append(
                f"level {level}: win {100 * rate.value:.1f}% [{100 * rate.low:.1f}, {100 * rate.high:.1f}], "
                f"mean score {result.mean_score.value:.1f}"
            )
        self.progress["curve"].append(point)
        print(f"[eval @ {steps:,} steps, {self.args.eval_games} games] " + "; ".join(summary), flush=True)
        table = io.StringIO()
        writer = csv.DictWriter(table, fieldnames=list(point))
        writer.writeheader()
        writer.writerows(self.progress["curve"])
        atomic_write_text(self.run_dir / "learning_curve.csv", table.getvalue())


# -- the run ----------------------------------------------------------------------------------------
def train(args: Args) -> None:
    """The run ``args`` describes."""
    run_dir = run_directory(args)
    progress = open_run(run_dir, args.resume, {"timesteps": 0, "wall_time_s": 0.0, "warm_start": None, "curve": []})
    torch.set_num_threads(args.torch_threads)
    vec_env = make_vec_env(args)
    try:
        model = resume_model(run_dir, vec_env, progress) if args.resume else new_maskable_ppo(args, vec_env, run_dir)
        callback = TrainingCallback(args, run_dir, progress)
        if not args.resume and args.bc_games > 0:
            started = time.time()
            data = collect_demonstrations(args)
            collected = time.time() - started
            stats = behaviour_clone(model, data, args)
            stats.update(
                games=args.bc_games, collect_s=round(collected, 1), wall_time_s=round(time.time() - started, 1)
            )
            progress["warm_start"] = stats
            print(f"warm start: cloned {args.bc_games} heuristic games: {stats}", flush=True)
            if args.eval_every > 0:
                callback.evaluate(0, model)
        remaining = args.total_timesteps - progress["timesteps"]
        if remaining > 0:
            model.learn(
                total_timesteps=remaining,
                callback=callback,
                reset_num_timesteps=not args.resume,
                progress_bar=args.progress,
                tb_log_name="ppo",
            )
        else:
            callback.init_callback(model)
        callback.save(model.num_timesteps)
    finally:
        vec_env.close()
    export_copy(run_dir, args.export)
    print(f"done: {model.num_timesteps:,} timesteps; run directory {run_dir}", flush=True)


def main(argv: list[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    args = parse_args(argv)
    try:
        train(args)
    except RunError as error:
        raise SystemExit(f"error: {error}") from None


if __name__ == "__main__":
    main()
