"""Train sb3-contrib's MaskablePPO on the native vector environment, for projects built on Stable-Baselines3.

The learner sits at ``--num-envs`` tables against an opponent pool, all stepped in lockstep by the
batched engine; ``to_sb3`` hands SB3 the interface it expects (same-step resets, per-table infos, and
the action masks MaskablePPO asks for). At the end the policy is saved as SB3's zip and evaluated
with the package's duplicate-deal tournament (4 players, against three copies of each opponent).

Run: ``python training/sb3_vector_env.py --timesteps 200000``.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Mapping, Sequence

import gymnasium as gym
import numpy as np
from friday13_training.friday13_agents import checked_specs
from friday13_training.runs import MAX_SEED
from friday13_training.script_args import (
    MAX_EVAL_GAMES,
    MAX_ROLLOUT_BYTES,
    bounded,
    output_errors,
    rollout_error,
    sb3_rollout_bytes,
)
from sb3_contrib import MaskablePPO

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.core.files import atomic_write_bytes
from friday13_env.core.specs import overwritten_checkpoint, path_argument
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.batched import make_batched, to_sb3
from friday13_env.friday13.batched.engine import MAX_GAMES
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.evaluation import evaluate_agent

N_STEPS = 64
"""MaskablePPO's rollout length per table: a rollout is ``--num-envs`` x 64 samples."""


class SB3Agent:
    """A trained SB3 model as a package agent (``name`` + ``act``), so the evaluation can seat it."""

    name = "maskable-ppo"

    def __init__(self, model: MaskablePPO) -> None:
        self.model = model

    def act(self, observation: Mapping[str, np.ndarray]) -> int:
        action, _ = self.model.predict(
            observation["observation"], action_masks=observation["action_mask"].astype(bool), deterministic=True
        )
        return int(action)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The flags, each checked before any work (bounds, the rollout buffer's memory, a ``--save`` path that can be
    written and that is no opponent's policy file, which it would replace): a bad one exits with argparse's usage
    message naming it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--timesteps",
        type=bounded(int, {"minimum": 1}),
        default=200_000,
        help="learner steps to train (default 200,000; at least 1)",
    )
    parser.add_argument(
        "--num-envs",
        type=bounded(int, {"minimum": 1, "maximum": MAX_GAMES}),
        default=256,
        help=f"tables stepped in lockstep (default 256; 1 to {MAX_GAMES:,}, and x {N_STEPS} steps within "
        f"{MAX_ROLLOUT_BYTES >> 30} GiB of rollout arrays)",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["cautious", "majority"],
        help="the opponent pool: batched agent specs (random, cautious, majority, zoo names, .npz policies)",
    )
    parser.add_argument(
        "--eval-games",
        type=bounded(int, {"minimum": 0, "maximum": MAX_EVAL_GAMES}),
        default=200,
        help=f"evaluation games per opponent (0: none; at most {MAX_EVAL_GAMES:,})",
    )
    parser.add_argument(
        "--save", type=path_argument, default="runs/sb3_vector_env.zip", help="where to save the SB3 model"
    )
    parser.add_argument(
        "--seed",
        type=bounded(int, {"minimum": 0, "maximum": MAX_SEED}),
        default=0,
        help=f"seeds the model and the evaluation (default 0; at least 0 and at most {MAX_SEED:,})",
    )
    args = parser.parse_args(argv)
    problems = output_errors([("--save", args.save, False)])
    rollout = f"--num-envs {args.num_envs} x {N_STEPS} steps"
    if problem := rollout_error(rollout, sb3_rollout_bytes("standard", N_STEPS, args.num_envs), "environments"):
        problems.append(problem)
    if overwritten := overwritten_checkpoint(args.opponents, [args.save], REGISTRY.zoo()):
        problems.append(f"--save {args.save}: {overwritten}")
    try:
        checked_specs(args.opponents, "--opponents", "standard")  # as the evaluation seats them
        for spec in args.opponents:
            make_batched(spec, get_deck("standard"))  # as the vector environment's batched engine plays them
    except ValueError as error:
        message = str(error)
        problems.append(message if message.startswith("--opponents") else f"--opponents: {message}")
    if problems:
        parser.error("; ".join(problems))
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    env = gym.make_vec(
        "friday13_env/Friday13-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        num_players=4,
        opponent_pool=args.opponents,
        reward="relative",
        autoreset_mode="SameStep",
    )
    model = MaskablePPO("MlpPolicy", to_sb3(env), n_steps=N_STEPS, batch_size=4096, seed=args.seed, verbose=0)
    model.learn(args.timesteps)
    model_zip = io.BytesIO()
    model.save(model_zip)
    atomic_write_bytes(args.save, model_zip.getvalue())  # exactly at --save (SB3 adds .zip to a name without it)
    print(f"saved {args.save}")
    if args.eval_games:
        rates = evaluate_agent(SB3Agent(model), args.opponents, args.eval_games, num_players=4, seed=args.seed)
        print("4-player win rate vs 3 copies of: " + ", ".join(f"{name} {rate}" for name, rate in rates.items()))


if __name__ == "__main__":
    main()
