"""Decision time of each agent on the same positions, side by side in one run.

Positions come from seeded games: for Friday the 13th (``--game friday13``), 4-player games between
``cautious`` players; for Friday the solo game (``--game friday``), games of its ``heuristic`` at levels
1-4 in turn. Every agent decides on exactly those observations (only ones with more than one legal move,
since a forced move costs nothing), so the ratios compare agents, not positions.

Run: ``python -m benchmarks.bench_agents --agents random cautious majority search ensemble-v1 endgame``
or ``python -m benchmarks.bench_agents --game friday --agents search heuristic random``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from benchmarks.arguments import COUNT, SEED
from friday13_env import agents, raw_env
from friday13_env.core.agent import Agent, Observation
from friday13_env.core.specs import parse_spec, repeated_agent
from friday13_env.friday import agents as solo_agents
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday13.agents.seating import make_seated


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


def solo_positions(count: int, seed: int) -> list[Observation]:
    """Observations of seeded solo games of ``heuristic``, levels 1, 2, 3, 4, 1, ... one game each."""
    found: list[Observation] = []
    game = 0
    while len(found) < count:
        env = FridayEnv(level=game % 4 + 1)
        player = solo_agents.make("heuristic", seed=seed + game)
        observation, info = env.reset(seed=seed + game)
        game += 1
        done = truncated = False
        while not (done or truncated) and len(found) < count:
            view = observation_dict(observation, info)
            if info["action_mask"].sum() > 1:
                found.append(view)
            observation, _, done, truncated, info = env.step(player.act(view))
    return found


def standard_deck_agent(spec: str, seed: int) -> Agent:
    """The card-game agent ``spec`` names, checked to play the standard deck of the positions (a policy trained on
    the German deck is refused here, not when it first meets a standard observation)."""
    return make_seated(spec, seed, "standard")


GAMES: dict[str, tuple[Callable[[int, int], list[Observation]], Callable[..., Agent], str]] = {
    "friday13": (positions, standard_deck_agent, "4 players"),
    "friday": (solo_positions, solo_agents.make, "Friday solo, levels 1-4"),
}


def built_agents(
    parser: argparse.ArgumentParser, make: Callable[..., Agent], specs: list[str], seed: int
) -> dict[str, Agent]:
    """Each of ``--agents`` built with ``seed``, by its spec as typed, before any position is found or decision timed:
    an unknown name, a bad option or checkpoint, or one agent listed twice (``random random``, or
    ``search:budget=16`` and ``search:budget=016``: its second row would replace its first) is argparse's error."""
    built = {}
    for spec in specs:
        try:
            built[spec] = make(spec, seed=seed)
        except (ValueError, TypeError) as error:  # CheckpointError is a ValueError
            parser.error(f"argument --agents: {spec}: {error}")
    repeated = repeated_agent(specs, [parse_spec(spec) for spec in specs])
    if repeated is not None:
        parser.error(f"argument --agents: {repeated}")
    return built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="friday13", help="whose agents (default friday13)")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "cautious", "majority", "search"],
        help="agent specs of the game's registry: a name, a zoo name, a checkpoint path, or name:key=value,...",
    )
    parser.add_argument("--positions", type=COUNT, default=200, help="decisions timed per agent (default 200)")
    parser.add_argument("--seed", type=SEED, default=0)
    args = parser.parse_args()
    find_positions, make, what = GAMES[args.game]
    players = built_agents(parser, make, args.agents, args.seed)
    observations = find_positions(args.positions, args.seed)
    timings: dict[str, float] = {}
    for name, agent in players.items():
        start = time.process_time()
        for observation in observations:
            agent.act(observation)
        timings[name] = (time.process_time() - start) / len(observations)
    slowest = max(timings.values())
    print(f"CPU time per decision over {len(observations)} positions ({what}, more than one legal move)")
    width = max(len("agent"), *map(len, timings))
    print(f"| {'agent':<{width}} | {'ms/decision':>11} | {'speed-up vs slowest':>19} |")
    print(f"|{'-' * (width + 2)}|{'-' * 13}|{'-' * 21}|")
    for name, seconds in timings.items():
        print(f"| {name:<{width}} | {seconds * 1e3:>11.3f} | {slowest / seconds:>18,.0f}x |")


if __name__ == "__main__":
    main()
