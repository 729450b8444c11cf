"""How many decisions a solo game takes: the mean and the longest per agent and level.

The solo environment truncates an episode at ``friday13_env.friday.env.MAX_DECISIONS`` decisions (docs/friday.md),
far above any game played; this measures how far. Game ``g`` of level ``l`` is dealt with seed ``10,000 x l + g``
(plus ``--seed``), each agent seeded with the level.

Run: ``python -m benchmarks.solo_game_lengths --agents random:1000 heuristic:100`` (an agent spec, then the games
per level).
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.arguments import COUNT, SEED
from friday13_env.core.agent import Agent
from friday13_env.friday.agents import make
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.levels import LEVELS


def game_length(env: FridayEnv, agent: Agent, seed: int) -> int:
    """The decisions of one game of ``agent`` from ``env.reset(seed=seed)``."""
    observation, info = env.reset(seed=seed)
    decisions, over = 0, False
    while not over:
        action = agent.act(observation_dict(observation, info))
        observation, _, terminated, truncated, info = env.step(action)
        decisions += 1
        over = terminated or truncated
    return decisions


def entry(text: str) -> tuple[str, int]:
    """``SPEC:GAMES`` (the games after the last colon) as argparse's ``type``."""
    spec, _, games = text.rpartition(":")
    if not spec:
        raise argparse.ArgumentTypeError(f"expected SPEC:GAMES such as heuristic:100, got {text!r}")
    return spec, COUNT(games)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=entry, nargs="+", required=True, help="SPEC:GAMES, games per level")
    parser.add_argument("--seed", type=SEED, default=0, help="added to every deal's seed (default 0)")
    args = parser.parse_args(argv)
    print(f"{'agent':<20} {'level':>5} {'games':>6} {'mean':>8} {'longest':>8}")
    for spec, games in args.agents:
        for level in sorted(LEVELS):
            env = FridayEnv(level=level)
            agent = make(spec, seed=level)
            lengths = [game_length(env, agent, args.seed + 10_000 * level + game) for game in range(games)]
            print(f"{spec:<20} {level:>5} {games:>6} {np.mean(lengths):>8.1f} {max(lengths):>8}", flush=True)


if __name__ == "__main__":
    main()
