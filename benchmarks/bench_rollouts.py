"""The search agent's rollouts: one numpy batch per decision against card by card on the engine.

Both play the same rollout policy on exactly the same sampled worlds and every legal move (the
tests check that they end every round with the same points), so the ratio is the price of the
batching alone. Slices of positions alternate between the two and the medians are compared, so
that a busy machine slows both alike.

Run from the repository root (it borrows the test suite's reference rollout):
``python -m benchmarks.bench_rollouts`` (add ``--budget 130000`` to time a larger search).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from benchmarks.arguments import COUNT, SEED
from benchmarks.bench_agents import positions
from friday13_env.friday13.agents.search import DEFAULT_BUDGET, MAX_WORLDS, WorldSampler, play_out
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.engine import play
from tests.friday13.reference_rollout import rollout
from tests.friday13.test_agents import world_state


def batched(table: Table, hands: np.ndarray) -> None:
    play_out(table, hands[:, : table.num_players])


def card_by_card(table: Table, hands: np.ndarray) -> None:
    """As the first release did it: one validated engine state, then copies with the hands redealt."""
    base = world_state(table, hands[0])
    for world_hands in hands:
        world = base.copy()
        world.hands[1:] = world_hands[1 : table.num_players].tolist()
        for action in table.legal:
            state = world.copy()
            play(state, action)
            rollout(state)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=COUNT, default=60, help="decisions per slice")
    parser.add_argument("--slices", type=COUNT, default=5, help="alternating slices per method")
    parser.add_argument("--budget", type=COUNT, default=DEFAULT_BUDGET, help="simulated card plays per decision")
    parser.add_argument("--seed", type=SEED, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    work = []
    for observation in positions(args.positions, args.seed):
        table = Table.read(observation)
        worlds = min(MAX_WORLDS, max(1, args.budget // (len(table.legal) * sum(table.hand_sizes))))
        work.append((table, WorldSampler(table).sample(rng, worlds)))
    times: dict[str, list[float]] = {"batched (numpy)": [], "card by card (engine)": []}
    for _ in range(args.slices):
        for samples, method in zip(times.values(), (batched, card_by_card), strict=True):
            started = time.process_time()
            for table, hands in work:
                method(table, hands)
            samples.append(1000 * (time.process_time() - started) / len(work))
    slowest = max(statistics.median(samples) for samples in times.values())
    print(f"CPU ms per decision (budget {args.budget:,}, {len(work)} four-player positions, median of {args.slices})")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"  {name:<24} {median:8.2f} ms   {slowest / median:5.2f}x")


if __name__ == "__main__":
    main()
