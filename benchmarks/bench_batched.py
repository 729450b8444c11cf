"""Speed and memory of the batched engine and the native vector environment, against the scalar ones.

Two comparisons, each measured side by side in one run (interleaved slices, median rate of each):

1. Random legal play in card plays/s: the scalar engine (``engine.play``, as ``bench_env`` drives
   it) against ``GameBatch`` at each batch size, drawing the random legal moves included.
2. Learner steps/s of ``Friday13-v0`` against scripted opponents (``opponent_pool``), observations and
   masks included, the learner playing uniformly random legal moves: the scalar ``gymnasium.make``
   against ``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")`` at each ``num_envs``.

Memory: bytes per game of the batch's arrays, and the peak traced allocation of one vector-env step
per table. Run: ``python -m benchmarks.bench_batched`` (figures in docs/batched.md).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from benchmarks.arguments import COUNT, DECK_NAMES, PLAYER_COUNTS, POSITIVE, SEED, TABLES, check_distinct
from benchmarks.bench_env import Rate, engine_steps, interleaved, ratio
from friday13_env.friday13.batched.agents import nth_legal
from friday13_env.friday13.batched.engine import GameBatch
from friday13_env.friday13.cards import get_deck

MEMORY_STEPS = 120
"""Vector-environment steps whose allocations are traced: more than two games' worth of the learner's moves at 4
players, so rounds and games end in them."""


def batched_steps(num_games: int, num_players: int, deck: str, seed: int) -> Rate:
    """Random legal play in a ``GameBatch`` of ``num_games``: (card plays, elapsed) for about ``seconds``."""
    batch = GameBatch(num_games, num_players, get_deck(deck), seed=seed)
    rng = np.random.default_rng(seed)

    def run(seconds: float) -> tuple[int, float]:
        plays = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            batch.step(batch.random_actions(rng))
            plays += num_games
        return plays, time.perf_counter() - start

    return run


def scalar_env_steps(options: dict, seed: int) -> Rate:
    """Learner steps of the scalar ``Friday13-v0``, the learner drawing uniformly among its legal moves."""
    env = gym.make("friday13_env/Friday13-v0", **options)
    rng = np.random.default_rng(seed)
    episode = [seed]

    def run(seconds: float) -> tuple[int, float]:
        steps = 0
        start = time.perf_counter()
        _, info = env.reset(seed=episode[0])
        while time.perf_counter() - start < seconds:
            legal = np.flatnonzero(info["action_mask"])
            _, _, terminated, truncated, info = env.step(int(legal[rng.integers(legal.size)]))
            steps += 1
            if terminated or truncated:
                episode[0] += 1
                _, info = env.reset(seed=episode[0])
        return steps, time.perf_counter() - start

    return run


def vector_env_steps(num_envs: int, options: dict, seed: int) -> Rate:
    """Learner steps of the native vector ``Friday13-v0`` (every table steps at once)."""
    env = gym.make_vec(
        "friday13_env/Friday13-v0", num_envs=num_envs, vectorization_mode="vector_entry_point", **options
    )
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    vector: Any = env.unwrapped  # Friday13VectorEnv, whose action_masks() Gymnasium's VectorEnv type does not know

    def run(seconds: float) -> tuple[int, float]:
        steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = vector.action_masks()
            playing = masks.any(axis=1)
            masks[~playing, 0] = True  # a finished table's action is ignored (NextStep autoreset)
            env.step(nth_legal(masks, rng.random(num_envs)))
            steps += int(playing.sum())
        return steps, time.perf_counter() - start

    return run


def table(title: str, unit: str, results: dict[str, float], reference: str) -> None:
    """The rates as a Markdown table, each also as a multiple of ``reference``'s (n/a where that one is 0)."""
    print(f"\n{title}")
    print(f"| {'':<28} | {unit:>14} | {'vs ' + reference:>22} |")
    print(f"|{'-' * 30}|{'-' * 16}|{'-' * 24}|")
    for name, rate in results.items():
        print(f"| {name:<28} | {rate:>14,.0f} | {ratio(rate, results[reference], 1):>22} |")


def traced_peak(work: Callable[[], object]) -> int:
    """The most bytes Python allocated at once while ``work`` ran, above what was allocated before (tracemalloc)."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def memory(num_games: int, num_players: int, deck: str, options: dict, steps: int = MEMORY_STEPS) -> None:
    """The batch's arrays per game, the peak of building them, and the peaks of the vector environment's ``reset``
    and of its largest single step over ``steps`` steps (games and rounds end in them), under each autoreset mode."""
    building = traced_peak(lambda: GameBatch(num_games, num_players, get_deck(deck), seed=0))
    batch = GameBatch(num_games, num_players, get_deck(deck), seed=0)
    arrays = sum(value.nbytes for value in vars(batch).values() if isinstance(value, np.ndarray))
    del batch
    print(f"\nMemory at {num_games:,} games: the batch's arrays {arrays / num_games:,.0f} bytes per game, "
          f"{building / num_games:,.0f} at the peak of building them")  # fmt: skip
    for mode in ("NextStep", "SameStep"):
        env = gym.make_vec(
            "friday13_env/Friday13-v0", num_envs=num_games, vectorization_mode="vector_entry_point",
            autoreset_mode=mode, **options,
        )  # fmt: skip
        reset = traced_peak(lambda env=env: env.reset(seed=0))
        vector: Any = env.unwrapped
        largest = 0
        for _ in range(steps):
            actions = vector.action_masks().argmax(axis=1)
            largest = max(largest, traced_peak(lambda env=env, actions=actions: env.step(actions)))
        env.close()
        print(f"{mode}: reset allocates at most {reset / num_games:,.0f} bytes per table; the largest of {steps} "
              f"steps {largest / num_games:,.0f}")  # fmt: skip


def opponents_problem(options: dict[str, Any]) -> str | None:
    """Why the scalar or the vector ``Friday13-v0`` would refuse ``options`` (an unknown opponent, or one with no
    batched version, which only the vector env needs), or None: both are built once, with one table, so that a bad
    ``--opponents`` is refused before anything is measured rather than after the engines were."""
    try:
        gym.make("friday13_env/Friday13-v0", **options).close()
        gym.make_vec("friday13_env/Friday13-v0", num_envs=1, vectorization_mode="vector_entry_point", **options).close()
    except ValueError as error:
        return str(error)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=POSITIVE, default=20.0, help="time per candidate in all (default 20)")
    parser.add_argument("--repeats", type=COUNT, default=5, help="interleaved slices per candidate (default 5)")
    parser.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=4, help="table size (default 4)")
    parser.add_argument(
        "--deck", choices=DECK_NAMES, default="standard", help="the card game's deck (default standard)"
    )
    parser.add_argument("--batch-sizes", type=TABLES, nargs="+", default=[1, 64, 1024, 16384])
    parser.add_argument("--num-envs", type=TABLES, nargs="+", default=[64, 1024, 16384])
    parser.add_argument("--opponents", nargs="+", default=["cautious", "majority"], help="the vector env's pool")
    parser.add_argument("--seed", type=SEED, default=0)
    parser.add_argument("--memory-only", action="store_true", help="measure the memory only (no speed)")
    args = parser.parse_args()
    check_distinct(parser, "--batch-sizes", args.batch_sizes)
    check_distinct(parser, "--num-envs", args.num_envs)
    options = {"num_players": args.players, "deck": args.deck, "opponent_pool": args.opponents}
    problem = opponents_problem(options)
    if problem is not None:
        parser.error(f"argument --opponents: {problem}")
    if args.memory_only:
        memory(max(args.num_envs), args.players, args.deck, options)
        return

    engines: dict[str, Rate] = {"scalar engine": lambda t: engine_steps(args.players, args.deck, t, args.seed)}
    for size in args.batch_sizes:
        engines[f"GameBatch B={size:,}"] = batched_steps(size, args.players, args.deck, args.seed)
    results = interleaved(engines, args.seconds, args.repeats)
    table(f"Random legal play, {args.players} players, {args.deck} deck", "card plays/s", results, "scalar engine")

    envs: dict[str, Rate] = {"scalar Friday13-v0": scalar_env_steps(options, args.seed)}
    for size in args.num_envs:
        envs[f"make_vec num_envs={size:,}"] = vector_env_steps(size, options, args.seed)
    results = interleaved(envs, args.seconds, args.repeats)
    pool = "/".join(args.opponents)
    table(f"Friday13-v0 against {pool}, random learner", "learner steps/s", results, "scalar Friday13-v0")
    memory(max(args.num_envs), args.players, args.deck, options)


if __name__ == "__main__":
    main()
