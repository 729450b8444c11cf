"""Decision time of each agent on the same positions, side by side in one run.

Positions come from seeded 4-player games between ``cautious`` players; every agent decides on
exactly those observations (only ones with more than one legal move, since a forced move costs
nothing), so the ratios compare agents, not positions.

Run: ``python -m benchmarks.bench_agents --agents random cautious majority search ensemble-v1 endgame``.
"""

from __future__ import annotations

import argparse
import time

from friday13_env import agents, raw_env
from friday13_env.friday13.agents.base import Observation


def positions(count: int, seed: int) -> list[Observation]:
    """Observations of the players to move, from seeded games between ``cautious`` players."""
    found: list[Observation] = []
    player = agents.make("cautious", seed=seed)
    game = 0
    while len(found) < count:
        env = raw_env(num_players=4)
        env.reset(seed=seed + game)
        game += 1
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            if observation["action_mask"].sum() > 1 and len(found) < count:
                found.append(observation)
            env.step(player.act(observation))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "cautious", "majority", "search"],
        help="agent specs: a name, a zoo name, a checkpoint path, or name:key=value,...",
    )
    parser.add_argument("--positions", type=int, default=200, help="decisions timed per agent (default 200)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    observations = positions(args.positions, args.seed)
    timings: dict[str, float] = {}
    for name in args.agents:
        agent = agents.make(name, seed=args.seed)
        start = time.process_time()
        for observation in observations:
            agent.act(observation)
        timings[name] = (time.process_time() - start) / len(observations)
    slowest = max(timings.values())
    print(f"CPU time per decision over {len(observations)} positions (4 players, more than one legal move)")
    width = max(len("agent"), *map(len, timings))
    print(f"| {'agent':<{width}} | {'ms/decision':>11} | {'speed-up vs slowest':>19} |")
    print(f"|{'-' * (width + 2)}|{'-' * 13}|{'-' * 21}|")
    for name, seconds in timings.items():
        print(f"| {name:<{width}} | {seconds * 1e3:>11.3f} | {slowest / seconds:>18,.0f}x |")


if __name__ == "__main__":
    main()
