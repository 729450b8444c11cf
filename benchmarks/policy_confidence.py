"""How sharp a policy checkpoint is: the probability its softmax gives to its likeliest legal move.

PPO learns from the moves it samples, while evaluation plays the greedy move. A soft start (a
distilled policy trained on soft targets) samples far from its greedy play, which is why
``finetune_ppo.py --init-temperature`` divides the start's logits first. This prints, for each
temperature, the mean probability of the likeliest legal move and the mean entropy over the same
positions ``bench_agents.py`` times (4-player ``cautious`` games, more than one legal move).

Run: ``python -m benchmarks.policy_confidence checkpoints/search_distilled.npz --temperatures 1 0.1`` (or a zoo
name: ``ppo-v4``). A checkpoint that cannot be read is argparse's error (exit 2), before any position is played.
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.arguments import COUNT, POSITIVE, SEED, check_distinct
from benchmarks.bench_agents import positions
from friday13_env.core.mlp import MLPPolicy
from friday13_env.friday13 import agents
from friday13_env.friday13.agents.base import legal_actions
from friday13_env.friday13.agents.policy import read_friday13_policy


def confidence(logits: list[np.ndarray], temperature: float) -> tuple[float, float]:
    """Mean probability of the likeliest move and mean entropy (nats) of softmax(logits / temperature)."""
    top, entropy = [], []
    for row in logits:
        scaled = row / temperature
        probabilities = np.exp(scaled - scaled.max())
        probabilities /= probabilities.sum()
        top.append(probabilities.max())
        entropy.append(-(probabilities * np.log(np.maximum(probabilities, 1e-12))).sum())
    return float(np.mean(top)), float(np.mean(entropy))


def checked_policy(parser: argparse.ArgumentParser, checkpoint: str) -> MLPPolicy:
    """The policy ``checkpoint`` names (a zoo name, as every agent spec takes it, or a checkpoint file), or argparse's
    error (exit 2) saying why it cannot be read: no such file, not a policy checkpoint, a policy of another layout."""
    try:
        return read_friday13_policy(agents.REGISTRY.policy_path(checkpoint))
    except ValueError as error:  # CheckpointError is a ValueError
        parser.error(f"argument checkpoint: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", help="a Friday the 13th policy checkpoint (.npz) or a zoo name (ppo-v4)")
    parser.add_argument(
        "--temperatures", nargs="+", type=POSITIVE, default=[1.0, 0.1], help="logit divisors (> 0), each once"
    )
    parser.add_argument("--positions", type=COUNT, default=2000, help="positions to measure on")
    parser.add_argument("--seed", type=SEED, default=0, help="seeds the games the positions come from")
    args = parser.parse_args()
    check_distinct(parser, "--temperatures", args.temperatures)
    policy = checked_policy(parser, args.checkpoint)
    legal_logits = [
        policy.logits(observation["observation"])[legal_actions(observation)]
        for observation in positions(args.positions, args.seed)
    ]
    print(f"{args.checkpoint}: {len(legal_logits)} positions with more than one legal move")
    for temperature in args.temperatures:
        top, entropy = confidence(legal_logits, temperature)
        print(f"temperature {temperature:g}: likeliest legal move {top:.3f}, entropy {entropy:.2f} nats")


if __name__ == "__main__":
    main()
