"""Train sb3-contrib's MaskablePPO on the native vector environment, for projects built on Stable-Baselines3.

The learner sits at ``--num-envs`` tables against an opponent pool, all stepped in lockstep by the
batched engine; ``to_sb3`` hands SB3 the interface it expects (same-step resets, per-table infos, and
the action masks MaskablePPO asks for). At the end the policy is saved as SB3's zip and evaluated
with the package's duplicate-deal tournament (4 players, against three copies of each opponent).

Run: ``python training/sb3_vector_env.py --timesteps 200000``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.friday13.batched import to_sb3
from friday13_env.friday13.evaluation import evaluate_agent


class SB3Agent:
    """A trained SB3 model as a package agent (``name`` + ``act``), so the evaluation can seat it."""

    name = "maskable-ppo"

    def __init__(self, model: MaskablePPO) -> None:
        self.model = model

    def act(self, observation: dict[str, np.ndarray]) -> int:
        action, _ = self.model.predict(
            observation["observation"], action_masks=observation["action_mask"].astype(bool), deterministic=True
        )
        return int(action)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=200_000, help="learner steps to train (default 200,000)")
    parser.add_argument("--num-envs", type=int, default=256, help="tables stepped in lockstep (default 256)")
    parser.add_argument("--opponents", nargs="+", default=["cautious", "majority"], help="the opponent pool")
    parser.add_argument("--eval-games", type=int, default=200, help="evaluation games per opponent (0: none)")
    parser.add_argument("--save", default="runs/sb3_vector_env.zip", help="where to save the SB3 model")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = gym.make_vec(
        "friday13_env/Friday13-v0",
        num_envs=args.num_envs,
        vectorization_mode="vector_entry_point",
        num_players=4,
        opponent_pool=args.opponents,
        reward="relative",
        autoreset_mode="SameStep",
    )
    model = MaskablePPO("MlpPolicy", to_sb3(env), n_steps=64, batch_size=4096, seed=args.seed, verbose=0)
    model.learn(args.timesteps)
    model.save(args.save)
    print(f"saved {args.save}")
    if args.eval_games:
        rates = evaluate_agent(SB3Agent(model), args.opponents, args.eval_games, num_players=4, seed=args.seed)
        print("4-player win rate vs 3 copies of: " + ", ".join(f"{name} {rate}" for name, rate in rates.items()))


if __name__ == "__main__":
    main()
