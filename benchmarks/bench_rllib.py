"""RLlib sampling speed: one runner on the batched tables against the per-game PettingZoo path, then 1 vs 2 runners.

Three candidates, measured side by side in one run (interleaved slices, median rate of each), all sampling with
``train_rllib.py``'s PPO config and network (one shared policy at every seat, 4 players, exploration on):

1. ``PettingZooEnv``: RLlib's stock ``MultiAgentEnvRunner`` on ``PettingZooEnv(friday13_env.env())``, one game
   per runner (``num_envs_per_env_runner=1``): the path a new user takes.
2. ``BatchedTables``, 1 runner: the package's RLlib adapter (``friday13_env.friday13.batched.rllib``) as
   ``train_rllib.py`` runs it, ``--tables`` tables on the batched engine.
3. ``BatchedTables``, 2 runners sampling at once.

A slice asks every runner of a candidate to sample for ``seconds / repeats`` in whole ``sample()`` calls (of
``train_rllib.py``'s batch, 16,384 card plays, on the batched tables; of 1,000 on ``PettingZooEnv``, five games)
and counts card plays (env steps: one card played at one table) over the driver's wall time. Needs the ``rllib``
extra, imported once the arguments are read (``--help`` works without it; a run without it is argparse's error
naming the extra). Run: ``python -m benchmarks.bench_rllib`` (figures in docs/other-libraries.md).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import friday13_env
from benchmarks.arguments import COUNT, PLAYER_COUNTS, POSITIVE, SEED, TABLES
from benchmarks.bench_batched import table
from benchmarks.bench_env import Rate, interleaved
from friday13_env.core.extras import RLLIB_EXTRA, missing_extra

if TYPE_CHECKING:  # Ray is the rllib extra: imported when a run starts, so that --help works without it
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

TRAINING = Path(__file__).resolve().parents[1] / "training"
PETTINGZOO = "friday13_pettingzoo"


def train_rllib() -> ModuleType:
    """``training/train_rllib.py`` (a script, not a package), imported on first use: it needs Ray."""
    if str(TRAINING) not in sys.path:
        sys.path.insert(0, str(TRAINING))
    import train_rllib as script

    return script


def every_seat_learns(agent: str, episode: Any = None, **kwargs: Any) -> str:
    """The policy mapping of the PettingZoo path: every seat (``player_0``, ...) plays the learner."""
    learner: str = train_rllib().LEARNER
    return learner


def sample_for(runner: MultiAgentEnvRunner, seconds: float, steps_per_call: int) -> int:
    """Card plays sampled by ``runner`` in whole ``sample()`` calls for about ``seconds`` (runs on the runner)."""
    plays = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        plays += sum(episode.env_steps() for episode in runner.sample(num_timesteps=steps_per_call))
    return plays


def sampling(algo: Algorithm, steps_per_call: int) -> Rate:
    """Card plays of all of ``algo``'s runners sampling at once, over the driver's wall time."""

    def run(seconds: float) -> tuple[int, float]:
        start = time.perf_counter()
        counts = algo.env_runner_group.foreach_env_runner(
            lambda runner: sample_for(runner, seconds, steps_per_call), local_env_runner=False
        )
        return sum(counts), time.perf_counter() - start

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--seconds", type=POSITIVE, default=60.0, help="sampling time per candidate in all (default 60)"
    )
    parser.add_argument("--repeats", type=COUNT, default=5, help="interleaved slices per candidate (default 5)")
    parser.add_argument("--tables", type=TABLES, default=128, help="tables per BatchedTables runner (default 128)")
    parser.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=4, help="table size (default 4)")
    parser.add_argument("--seed", type=SEED, default=0)
    args = parser.parse_args()
    try:  # after the arguments: --help, and a bad argument, need no Ray
        import ray
        from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
        from ray.tune.registry import register_env

        from friday13_env.friday13.batched.rllib import use_batched_tables

        script = train_rllib()
    except ModuleNotFoundError as error:
        if missing_extra(error, "benchmarks/bench_rllib.py", RLLIB_EXTRA):
            parser.error(str(error))
        raise

    settings: dict[str, Any] = {"players": [args.players], "opponents": [], "opponent_share": 0.0}
    script.start_ray("", num_env_runners=3)  # three runners wait beside the driver; one candidate samples
    register_env(PETTINGZOO, lambda _: PettingZooEnv(friday13_env.env(num_players=args.players)))
    naive = script.Args(**settings, num_env_runners=1, num_envs_per_env_runner=1)
    pettingzoo = (
        script.ppo_config(naive, args.seed).environment(env=PETTINGZOO).multi_agent(policy_mapping_fn=every_seat_learns)
    )
    candidates: dict[str, Rate] = {"PettingZooEnv, 1 runner": sampling(pettingzoo.build_algo(), 1_000)}
    for runners in (1, 2):
        batched = script.Args(**settings, num_env_runners=runners, num_envs_per_env_runner=args.tables)
        config = use_batched_tables(script.ppo_config(batched, args.seed), script.table_options(batched))
        algo = config.build_algo()
        name = f"BatchedTables, {runners} runner{'s' if runners > 1 else ''}"
        candidates[name] = sampling(algo, batched.train_batch_size)
    results = interleaved(candidates, args.seconds, args.repeats)
    title = f"RLlib {ray.__version__} sampling, {args.players} players, {args.tables} tables per BatchedTables runner"
    table(title, "card plays/s", results, "PettingZooEnv, 1 runner")
    table("Runners", "card plays/s", {name: results[name] for name in list(results)[1:]}, "BatchedTables, 1 runner")
    ray.shutdown()


if __name__ == "__main__":
    main()
