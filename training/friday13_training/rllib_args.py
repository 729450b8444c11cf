"""``training/train_rllib.py``'s flags and their checks, importable without Ray: every hyperparameter is a field of
``Args`` (a ``--flag``), and ``checked_args`` refuses a bad configuration (bounds, agent specs, the network's size,
outputs) before Ray starts. The script parses its command line with these; the tests check them where the ``rllib``
extra is not installed."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from friday13_env.core.mlp import MLPPolicy
from friday13_env.friday13.agents.policy import observation_scale, read_friday13_policy
from friday13_env.friday13.batched import make_batched
from friday13_env.friday13.batched.engine import MAX_GAMES
from friday13_env.friday13.cards import DECKS, get_deck
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from friday13_env.friday13.rewards import REWARD_MODES
from friday13_training.friday13_agents import evaluation_opponent_errors, spec_files
from friday13_training.runs import MAX_SEED, MAX_TIMESTEPS, export_problem, name_problems
from friday13_training.script_args import (
    MAX_CLIP,
    MAX_EPOCHS,
    MAX_EVAL_GAMES,
    MAX_LEARNING_RATE,
    MAX_LOSS_WEIGHT,
    MAX_TORCH_THREADS,
    field_errors,
    network_errors,
    option,
    output_errors,
    rollout_error,
)
from friday13_training.script_args import MAX_GRAD_NORM as MAX_GRAD_NORM  # shared with train_ppo.py, read here too

MAX_ENV_RUNNERS = 1024
"""The most Ray actors a run may ask for (``--num-env-runners``): each is a process, and Ray reserves a CPU for each."""
MAX_TRAIN_BATCH_SIZE = 1 << 23
"""The most card plays an iteration samples (``--train-batch-size``, and so ``--minibatch-size``): 512 times the
default; a batch's memory is checked too (``batch_bytes``)."""


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default, bounds and help."""

    run_name: str = option("rllib", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    address: str = option(
        "", "join the Ray cluster at this address ('auto': the one `ray start` runs here); empty: start a local Ray"
    )
    num_env_runners: int = option(
        1, "Ray actors sampling in parallel (0: sample in the driver)", minimum=0, maximum=MAX_ENV_RUNNERS
    )
    num_envs_per_env_runner: int = option(
        128, "tables each runner plays in lockstep on the batched engine", minimum=1, maximum=MAX_GAMES
    )
    iterations: int = option(
        100,
        "training iterations (each samples --train-batch-size card plays, then learns)",
        minimum=1,
        maximum=MAX_TIMESTEPS,
    )
    seed: int = option(0, "seeds the networks, the deals, the seating and the sampling", minimum=0, maximum=MAX_SEED)
    players: list[int] = option(
        [3, 4, 5, 6],
        "table sizes, one drawn per game",
        minimum=MIN_PLAYERS,
        maximum=MAX_PLAYERS,
        unique=True,
    )
    deck: str = option("standard", "the deck of the tables", choices=sorted(DECKS))
    reward: str = option("relative", "reward mode (see friday13_env.friday13.rewards)", choices=sorted(REWARD_MODES))
    opponents: list[str] = option(
        ["cautious", "majority"],
        "frozen opponents, one RLModule each: batched agent specs (random, cautious, majority, zoo names, "
        "exported .npz policies); none: pure self-play",
        allow_empty=True,
    )
    opponent_share: float = option(
        0.5, "share of games where the learner holds one seat and --opponents the others", minimum=0, maximum=1
    )
    train_batch_size: int = option(
        16_384, "card plays sampled per iteration (every seat's)", minimum=1, maximum=MAX_TRAIN_BATCH_SIZE
    )
    minibatch_size: int = option(4096, "samples per gradient step", minimum=1, maximum=MAX_TRAIN_BATCH_SIZE)
    num_epochs: int = option(4, "passes over each batch", minimum=1, maximum=MAX_EPOCHS)
    learning_rate: float = option(1e-3, "Adam learning rate", above=0, maximum=MAX_LEARNING_RATE)
    gamma: float = option(0.995, "discount per move of the same seat", minimum=0, maximum=1)
    gae_lambda: float = option(0.95, "GAE lambda", minimum=0, maximum=1)
    clip_coef: float = option(0.2, "PPO clip range", above=0, maximum=MAX_CLIP)
    ent_coef: float = option(0.03, "entropy bonus", minimum=0, maximum=MAX_LOSS_WEIGHT)
    vf_coef: float = option(0.5, "value loss weight", minimum=0, maximum=MAX_LOSS_WEIGHT)
    max_grad_norm: float = option(0.5, "gradient norm clip", above=0, maximum=MAX_GRAD_NORM)
    hidden_sizes: list[int] = option([128, 128], "hidden layer widths of the actor and the critic", minimum=1)
    activation: str = option("tanh", "activation of the hidden layers", choices=["relu", "tanh"])
    eval_every: int = option(10, "iterations between evaluations against the baselines (0 = never)", minimum=0)
    eval_games: int = option(
        200, "4-player duplicate-deal games per evaluation opponent", minimum=1, maximum=MAX_EVAL_GAMES
    )
    eval_opponents: list[str] = option(
        ["cautious", "majority"], "baselines of the periodic evaluation (three copies each): agent specs"
    )
    checkpoint_every: int = option(10, "iterations between checkpoints (0 = only at the end)", minimum=0)
    export: str = option("", "also copy the final numpy policy here, e.g. my_policy.npz")
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    torch_threads: int = option(
        1, "torch CPU threads of the driver, where the learner runs", minimum=1, maximum=MAX_TORCH_THREADS
    )


RUN_SETTINGS = (
    "run_name", "run_dir", "address", "num_env_runners", "num_envs_per_env_runner", "iterations", "eval_every",
    "checkpoint_every", "export", "resume", "torch_threads",
)  # fmt: skip
"""What ``--resume`` may change; every other field is a hyperparameter of the run, fixed when it starts."""


def checked_args(args: Args) -> Args:
    """The checks of a whole configuration: bounds, agent specs, outputs; a ``ValueError`` listing every problem."""
    problems = field_errors(Args, dataclasses.asdict(args)) + name_problems(args)
    if args.minibatch_size > args.train_batch_size:
        problems.append(f"--minibatch-size {args.minibatch_size} exceeds --train-batch-size {args.train_batch_size}")
    deck = get_deck(args.deck)
    for spec in args.opponents:
        try:
            make_batched(opponent_source(spec), deck)
        except ValueError as error:
            problems.append(f"--opponents: {error}")
    if args.opponent_share > 0 and not args.opponents:
        problems.append("--opponent-share needs --opponents (or give --opponent-share 0)")
    problems += evaluation_opponent_errors(args.eval_opponents, deck)
    problems += network_errors(args.hidden_sizes, observation_scale(deck.name).size, deck.num_actions)
    if problem := batch_error(args):
        problems.append(problem)
    problems += output_errors([("--export", args.export, False), ("--run-dir", run_directory(args), True)])
    inputs = {
        "--opponents": spec_files(args.opponents),
        "--eval-opponents": spec_files(args.eval_opponents),
    }
    problem = export_problem(args.export, {"--run-dir": run_directory(args)}, inputs)
    if problem:
        problems.append(problem)
    if problems:
        raise ValueError("; ".join(problems))
    return args


def batch_bytes(deck: str, samples: int) -> int:
    """Bytes of ``samples`` card plays as RLlib holds them, at the least: per card play the observation and the
    action's logits in float32, the legal mask and 64 bytes of numbers (action, log-probability, value, advantage,
    target, reward, flags), twice (the episodes, and the train batch built from them)."""
    inputs, num_actions = observation_scale(deck).size, get_deck(deck).num_actions
    return 2 * samples * (4 * inputs + 5 * num_actions + 64)


def batch_error(args: Args) -> str | None:
    """Why an iteration's samples would take more than ``MAX_ROLLOUT_BYTES`` (``rollout_error``), or None: the larger
    of ``--train-batch-size`` and the tables (every runner steps each of its ``--num-envs-per-env-runner`` tables at
    least once an iteration; without runners the driver samples one runner's tables)."""
    tables = max(args.num_env_runners, 1) * args.num_envs_per_env_runner
    if tables > args.train_batch_size:
        sizes = f"--num-env-runners {args.num_env_runners} x --num-envs-per-env-runner {args.num_envs_per_env_runner}"
        sizes += " (a card play at every table each iteration, at least)"
        return rollout_error(sizes, batch_bytes(args.deck, tables), "runners or tables per runner")
    sizes = f"--train-batch-size {args.train_batch_size}"
    return rollout_error(sizes, batch_bytes(args.deck, args.train_batch_size), "card plays per batch")


def run_directory(args: Args) -> Path:
    """The run's directory: ``--run-dir`` when given, else ``runs/<run-name>``."""
    return Path(args.run_dir) if args.run_dir else Path("runs") / args.run_name


def opponent_source(spec: str) -> str | MLPPolicy:
    """What an opponent module is built from: an exported policy file is read here, on the driver, and travels
    to the runners as arrays (a cluster's nodes need not hold the file); other specs are built where they play."""
    return read_friday13_policy(spec) if Path(spec).is_file() else spec
