"""Every shipped agent's decisions on fixed positions, hashed: the behaviour a refactor must keep.

The card game: 1,200 positions (300 at each table size, 3-6) from seeded random games; every registered
agent and zoo policy, seeded, answers each of them in order, and the batched agents answer 4 x 1,200
positions of a seeded ``GameBatch``. The solo game: 1,200 positions from seeded random games at levels 1-4,
answered by each of its agents. ``OPENBLAS_CORETYPE=Haswell python -m tests.decision_hashes`` prints the hashes as
JSON (how ``tests/data/decision_hashes.json`` is made, with OpenBLAS's AVX2 kernels: ``PINNED_BLAS``);
``tests/test_decision_hashes.py`` compares with that file.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable

import numpy as np

POSITIONS_PER_SIZE = 300
SOLO_POSITIONS = 1_200
BATCH_GAMES = 1_200
BATCH_SNAPSHOTS = (0, 13, 37, 71)
PINNED_BLAS = {"OPENBLAS_CORETYPE": "Haswell"}
"""The environment the hashes are made in: OpenBLAS's AVX2 kernels on any x86 CPU (the float32 products of its AVX-512
kernels round differently, which flips near-tied choices of the batched networks)."""
SOLO_AGENTS = ("random", "heuristic", "search", "dagger-v1", "dagger-ppo-v1")


def digest(actions: Iterable[int]) -> str:
    return hashlib.sha256(np.asarray(list(actions), dtype=np.int64).tobytes()).hexdigest()[:16]


def card_positions() -> list[dict[str, np.ndarray]]:
    from friday13_env import raw_env

    positions: list[dict[str, np.ndarray]] = []
    rng = np.random.default_rng(20261127)
    for num_players in (3, 4, 5, 6):
        env = raw_env(num_players=num_players)
        taken = 0
        game = 0
        while taken < POSITIONS_PER_SIZE:
            env.reset(seed=1000 * num_players + game)
            game += 1
            for _ in env.agent_iter():
                observation, _, terminated, truncated, _ = env.last()
                if terminated or truncated:
                    env.step(None)
                    continue
                if taken < POSITIONS_PER_SIZE:
                    positions.append({key: value.copy() for key, value in observation.items()})
                    taken += 1
                env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return positions


def card_hashes() -> dict[str, str]:
    from friday13_env import agents

    positions = card_positions()
    hashes = {}
    for name in agents.names():
        agent = agents.make(name, seed=0)
        hashes[name] = digest(agent.act(position) for position in positions)
    return hashes


def batched_hashes() -> dict[str, str]:
    from friday13_env import agents
    from friday13_env.friday13.batched import GameBatch
    from friday13_env.friday13.batched.agents import act, make_batched
    from friday13_env.friday13.cards import STANDARD_DECK

    names = ["random", "cautious", "majority", *sorted(agents.REGISTRY.zoo())]
    hashes = {}
    for name in names:
        agent = make_batched(name, STANDARD_DECK)
        batch = GameBatch(BATCH_GAMES, num_players=[3, 4, 5, 6], seed=5, autoreset=True)
        moves = np.random.default_rng(6)
        rng = np.random.default_rng(0)
        games = np.arange(BATCH_GAMES)
        decisions = []
        done = 0
        for snapshot in BATCH_SNAPSHOTS:
            for _ in range(snapshot - done):
                batch.step(batch.random_actions(moves))
            done = snapshot
            decisions.extend(act(agent, batch, games, rng).tolist())
        hashes[name] = digest(decisions)
    return hashes


def solo_positions() -> list[dict[str, np.ndarray]]:
    from friday13_env.friday.env import FridayEnv, observation_dict

    positions: list[dict[str, np.ndarray]] = []
    rng = np.random.default_rng(20261128)
    game = 0
    while len(positions) < SOLO_POSITIONS:
        env = FridayEnv(level=1 + game % 4)
        observation, info = env.reset(seed=game)
        game += 1
        done = False
        while not done and len(positions) < SOLO_POSITIONS:
            positions.append({k: np.array(v, copy=True) for k, v in observation_dict(observation, info).items()})
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
    return positions


def solo_hashes() -> dict[str, str]:
    from friday13_env.friday.agents import make

    positions = solo_positions()
    return {name: digest(make(name, seed=0).act(position) for position in positions) for name in SOLO_AGENTS}


SECTIONS: dict[str, Callable[[], dict[str, str]]] = {
    "card": card_hashes,
    "batched": batched_hashes,
    "solo": solo_hashes,
}


if __name__ == "__main__":
    json.dump({section: make() for section, make in SECTIONS.items()}, sys.stdout, indent=1, sort_keys=True)
    print()
