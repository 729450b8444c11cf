"""Train a policy for Friday, the solo deck-builder (``friday13_env/FridaySolo-v0``): distil the search, then PPO.

Reads top to bottom (CleanRL style): hyperparameters, stage 1 (DAgger), stage 2 (PPO: the rollout, the
advantages, the update; then its checkpoints, evaluations and loop), then the run. Every hyperparameter is a field of
``Args`` and a command-line flag (``python training/train_friday.py --help``).

Stage 1, on by default (``--distill-iterations``): DAgger distils ``--teacher`` (default ``search``) into
an MLP. Each round, worker processes (``--workers``) play ``--distill-games`` games at levels drawn from
``--levels`` (one network for every level: the level is part of the observation), the teacher's move with
chance ``--distill-beta ** round`` and the student's otherwise (round 0: all the teacher's), and the
teacher labels every decision with more than one legal move; then the student is fitted to all labels so
far (masked cross-entropy; each decision shown with its table in a random order, since which card lies in
which slot is arbitrary). A round's win rates are of its own games (fresh deals; the student's moves in the
share that round gives it).

Stage 2, off by default (``--total-timesteps``): PPO from the distilled actor (or, with no rounds, from the
``--distill-init`` policy, or with neither from fresh weights and no critic warm-up), written here in the CleanRL
manner. ``--num-envs`` games are played in lockstep in this process
(:class:`friday13_training.lockstep_games.LockstepGames`, each a ``FridayEnv``); only decisions with more than one
legal move are samples (a timestep is one such decision), the forced moves are played in between.
Both networks read the observation's non-zero entries (:class:`SparseMLP`), about 75 of 2,175. The critic
starts fresh and learns alone for the first ``--critic-warmup`` samples (fewer than ``--total-timesteps``; none for a
fresh actor, which has nothing to keep); the actor's logits start multiplied by
``--init-sharpness`` (the same greedy moves; sampled play closer to them). What is optimised: a finished game's
(score + ``--win-bonus`` if won) x ``--reward-scale``, by default 1 for a win plus the score / 200, so a win
matters most and the score breaks ties.

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``), every file written atomically:
  ``distill/``           each round's labelled games; the student after the last round (``round.npz``, with its
                         weights and optimiser in ``round.pt``) and after the final passes (``final.npz``)
  ``last.pt``            stage 2's actor, critic and both optimisers, with the samples done
  ``progress.json``      the rounds, PPO timesteps done, wall time, learning-curve points
  ``policy.npz``         the exported numpy policy (``friday13_env.friday.agents.make(path)`` plays it)
  ``learning_curve.csv`` and TensorBoard logs in ``tb/`` (stage 2)

``--resume`` continues after the last finished round (a larger ``--distill-iterations`` adds rounds; every file it
reads back is checked first: the checkpoints as ``train_ppo.py`` reads its own, each round's games array by array),
then stage 2 from its last checkpoint (``--total-timesteps`` never below the samples done, nor 0 once stage 2 has
a checkpoint); a resumed stage 2
deals from a seed derived from the run's seed and its timesteps, so it is reproducible, though not identical to an
uninterrupted run.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import sys
import time
import zipfile
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from friday13_training.actor_critic import ACTIVATIONS
from friday13_training.friday13_agents import spec_files
from friday13_training.friday_dagger import FIELDS, GameTask, LabelledGames, play_labelled_game
from friday13_training.lockstep_games import Finished, LockstepGames, SparseRows, row_starts
from friday13_training.ppo_checkpoint import optimizer_settings_problem, read_state, uninflated_problem
from friday13_training.reporting import progress_bar, tensorboard, write_curve
from friday13_training.runs import (
    MAX_SEED,
    Interrupted,
    RunError,
    actor_warmup,
    checked_policy,
    checkpoint_reach,
    export_copy,
    export_problem,
    match_checkpoint,
    name_problems,
    next_multiple,
    open_run,
    parse_run_args,
    resumed_run_args,
    run_directory,
    run_main,
    warmup_problem,
)
from friday13_training.script_args import (
    MAX_CLIP,
    MAX_EVAL_GAMES,
    MAX_LEARNING_RATE,
    MAX_LOSS_WEIGHT,
    MAX_ROLLOUT_BYTES,
    MAX_TORCH_THREADS,
    atomic_write_text,
    field_errors,
    network_errors,
    option,
    output_errors,
    rollout_error,
)
from friday13_training.torch_policy import (
    MAX_SHARPNESS,
    MIN_SHARPNESS,
    read_matching_policy,
    save_checked_policy,
    sharpen_,
)
from tqdm import tqdm

from friday13_env.core.agent import AgentRaisedError, IllegalMoveError
from friday13_env.core.checkpoint import CheckpointError
from friday13_env.core.checks import is_duration
from friday13_env.core.files import atomic_write
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.options import available_cpus, pool_size
from friday13_env.core.pool import worker_pool
from friday13_env.core.specs import parse_spec, shown
from friday13_env.friday import encoding
from friday13_env.friday.actions import ACTIVATE, NUM_ACTIONS, TARGET
from friday13_env.friday.agents import REGISTRY, load
from friday13_env.friday.evaluation import LevelResult, evaluate
from friday13_env.friday.levels import check_level
from friday13_env.friday.policy import ENV_VERSION, policy_metadata, read_friday_policy

# -- hyperparameters -------------------------------------------------------------------------------
MAX_REWARD = 1_000.0
"""The largest size a finished game's training reward may reach, ``--reward-scale`` x (``|--win-bonus|`` +
``SCORE_BOUND``): far above every recipe here (at most 4), far inside float32 (``1e300`` overflowed it, and the run
diverged after its folder was made)."""
SCORE_BOUND = 200
"""A bound on the size of every final score: they lie in -150..187 (``engine.MIN_SCORE``; every positive card owned,
both pirates beaten and 22 life)."""
DEALS_PER_ROUND = 100_000
"""The most games a DAgger round deals (``--distill-games``): round ``i``'s deals are the seeds ``base(i)`` to
``base(i) + 99,999`` (``iteration_tasks``), so more would deal the next round's games again."""
OBSERVATION_ENTRIES = 128
"""The non-zero entries per observation the memory estimates allow (about 75 on average; at most 106 in 2,000
positions of random games)."""
LABELS_PER_GAME = 200
"""The labelled decisions per game the memory estimate of stage 1 allows (``dagger-v1``'s rounds labelled about 185 a
game)."""
GAME_BYTES = 32 << 10
"""Memory of one game played in lockstep (a ``FridayEnv``, its dense observation and state: about 27 kB)."""


@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    run_name: str = option("friday", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    seed: int = option(
        0, "seeds the networks, the games and the teacher (evaluations play fixed deals)", minimum=0, maximum=MAX_SEED
    )
    total_timesteps: int = option(
        0, "stage 2: PPO samples (decisions with more than one legal move) after the distillation (0 = none)", minimum=0
    )
    levels: list[int] = option(
        [1, 2, 3, 4], "difficulty levels, one drawn per game (each listed once)", minimum=1, maximum=4, unique=True
    )
    reward_scale: float = option(
        0.005,
        "stage 2: multiplies a finished game's reward, its score (about -80..+90) plus --win-bonus; --reward-scale x"
        f" (|--win-bonus| + {SCORE_BOUND}) at most {MAX_REWARD:,.0f}",
        above=0,
    )
    win_bonus: float = option(
        200.0,
        "stage 2: score points added to a won game's reward (scaled: a win is worth 1); --reward-scale x"
        f" (|--win-bonus| + {SCORE_BOUND}) at most {MAX_REWARD:,.0f}",
    )
    teacher: str = option("search", "stage 1: the agent spec DAgger distils (a registered name with options)")
    distill_init: str = option(
        "",
        "start the student from this Friday policy (a zoo name or .npz of the same network; '' = fresh); with"
        " --distill-iterations 0, stage 2 starts from it",
    )
    distill_iterations: int = option(
        12, "stage 1: DAgger rounds (the first plays the teacher's games; 0 = no distillation)", minimum=0
    )
    distill_games: int = option(
        500,
        f"stage 1: games played and labelled per round (at most {DEALS_PER_ROUND:,}, and all rounds' labels must fit"
        f" in {MAX_ROLLOUT_BYTES >> 30} GiB)",
        minimum=1,
    )
    distill_beta: float = option(
        0.5, "stage 1: round i's moves are the teacher's with chance beta**i, else the student's", minimum=0, maximum=1
    )
    distill_epochs: int = option(4, "stage 1: passes over all the labelled decisions after each round", minimum=1)
    distill_batch_size: int = option(1024, "stage 1: decisions per gradient step", minimum=1)
    distill_learning_rate: float = option(1e-3, "stage 1: Adam learning rate", above=0, maximum=MAX_LEARNING_RATE)
    distill_augment: bool = option(True, "stage 1: show each decision with its table in a random order")
    distill_final_epochs: int = option(
        2, "stage 1: passes over all the labels after the last round, at the final learning rate (0 = none)", minimum=0
    )
    distill_final_learning_rate: float = option(
        1e-4, "stage 1: Adam learning rate of the final passes", above=0, maximum=MAX_LEARNING_RATE
    )
    workers: int = option(
        2,
        "stage 1: processes that play and label the games (its fits use as many torch threads); more than the CPUs "
        "this process may use run as many as it may (more would only wait on each other)",
        minimum=1,
        maximum=MAX_TORCH_THREADS,
    )
    num_envs: int = option(
        64,
        f"stage 2: games played in lockstep (--num-envs x --n-steps: a rollout within {MAX_ROLLOUT_BYTES >> 30} GiB)",
        minimum=1,
    )
    n_steps: int = option(128, "stage 2: samples per game per rollout", minimum=1)
    learning_rate: float = option(
        1e-4, "stage 2: Adam learning rate of the actor, annealed linearly to 0", above=0, maximum=MAX_LEARNING_RATE
    )
    critic_learning_rate: float = option(
        1e-3, "stage 2: Adam learning rate of the critic", above=0, maximum=MAX_LEARNING_RATE
    )
    critic_warmup: int = option(
        200_000,
        "stage 2: samples at its start in which only the critic learns (a fresh critic's advantages are noise,"
        " which would move the distilled or --distill-init actor); below --total-timesteps. A fresh actor (no rounds,"
        " no --distill-init) has none to keep: its run uses 0",
        minimum=0,
    )
    init_sharpness: float = option(
        3.0,
        "stage 2: the starting actor's logits are multiplied by this: the same greedy moves, sampled play closer"
        " to them (a distilled actor's softmax spreads over near-equal moves)",
        minimum=MIN_SHARPNESS,
        maximum=MAX_SHARPNESS,
    )
    batch_size: int = option(1024, "stage 2: minibatch size", minimum=2)
    n_epochs: int = option(4, "stage 2: passes over each rollout", minimum=1)
    gamma: float = option(1.0, "stage 2: discount per sample (the reward comes at the game's end)", above=0, maximum=1)
    gae_lambda: float = option(0.95, "stage 2: GAE lambda", minimum=0, maximum=1)
    clip_range: float = option(0.1, "stage 2: PPO clip range", above=0, maximum=MAX_CLIP)
    ent_coef: float = option(0.001, "stage 2: entropy bonus", minimum=0, maximum=MAX_LOSS_WEIGHT)
    max_grad_norm: float = option(0.5, "stage 2: gradient norm clip of each network", above=0)
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the actor and the critic", minimum=1)
    activation: str = option("relu", "activation of the hidden layers", choices=("relu", "tanh"))
    eval_every: int = option(
        400_000, "stage 2: timesteps between evaluations; stage 1 evaluates after every round (0 = never)", minimum=0
    )
    eval_games: int = option(
        200, "games per level of each evaluation (fixed deals, greedy policy)", minimum=1, maximum=MAX_EVAL_GAMES
    )
    checkpoint_every: int = option(200_000, "stage 2: timesteps between checkpoints (stage 1: every round)", minimum=1)
    export: str = option("", "also copy the final numpy policy here, e.g. my_friday.npz")
    resume: bool = option(False, "continue the run in the run directory after its last round or checkpoint")
    progress: bool = option(True, "show a progress bar")
    torch_threads: int = option(
        1,
        "torch CPU threads of this process (stage 1's fits and stage 2 use at least --workers: the run's cores)",
        minimum=1,
        maximum=MAX_TORCH_THREADS,
    )


RUN_SETTINGS = (
    "run_name", "run_dir", "distill_iterations", "workers", "total_timesteps", "eval_every", "eval_games",
    "checkpoint_every", "export", "resume", "progress", "torch_threads",
)  # fmt: skip
"""What ``--resume`` may change (more rounds, more PPO steps, how it runs); every other field is a
hyperparameter of the run, fixed when it starts."""
AGENT_FIELDS = ("teacher",)
"""The arguments that name agents: a ``module:factory`` there that only the record names is refused on ``--resume``
(``runs.check_recorded_factories``)."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help can never drift apart; refuse bad values."""
    return parse_run_args(Args, __doc__, checked_args, argv)


def worker_count(args: Args) -> int:
    """Stage 1's worker processes: ``--workers``, but no more than the games of a round or the CPUs this process may
    use (more would only wait on each other); a note on standard error says when it is fewer than asked."""
    workers = pool_size(args.workers, args.distill_games)
    if workers < args.workers:
        print(f"--workers {args.workers}: {workers} process(es), one per game or CPU at most", file=sys.stderr)
    return workers


def checked_args(args: Args) -> Args:
    """The checks of a whole configuration, before any work; a ``ValueError`` listing every problem. A new run from a
    fresh actor is returned with its critic warm-up 0 (``actor_warmup``), as it records it; a resumed run keeps its
    record's."""
    if not args.resume:
        args = dataclasses.replace(args, critic_warmup=actor_warmup(args.critic_warmup, trained_start(args)))
    problems = field_errors(Args, dataclasses.asdict(args)) + name_problems(args)
    problems += network_errors(args.hidden_sizes, encoding.OBS_SIZE, NUM_ACTIONS)
    if args.distill_iterations == 0 and args.total_timesteps == 0:
        problems.append("nothing to train: give --distill-iterations or --total-timesteps above 0")
    if args.total_timesteps > 0 and (problem := warmup_problem(args.critic_warmup, args.total_timesteps)):
        problems.append(problem)
    rollout = f"--num-envs {args.num_envs} x --n-steps {args.n_steps}"
    if args.total_timesteps > 0 and args.batch_size > args.num_envs * args.n_steps:
        problems.append(f"--batch-size {args.batch_size} exceeds one rollout ({rollout})")
    if args.total_timesteps > 0 and (
        problem := rollout_error(rollout, rollout_memory(args.num_envs, args.n_steps), "games or samples per game")
    ):
        problems.append(problem)
    problems += stage_1_errors(args)
    reward = args.reward_scale * (abs(args.win_bonus) + SCORE_BOUND)
    if not reward <= MAX_REWARD:  # an infinity too (1e300 x 1e300)
        problems.append(
            f"--reward-scale {args.reward_scale:g} x (|--win-bonus| {abs(args.win_bonus):g} + {SCORE_BOUND}) is "
            f"{reward:g}: --reward-scale x (|--win-bonus| + {SCORE_BOUND}) must be at most {MAX_REWARD:,.0f} (the"
            " size of a game's training reward)"
        )
    for level in args.levels:
        try:
            check_level(level)
        except ValueError as error:
            problems.append(f"--levels: {error}")
    try:
        REGISTRY.make(REGISTRY.check(parse_spec(args.teacher)), seed=args.seed)  # checks its options too
    except (ValueError, CheckpointError) as error:
        problems.append(f"--teacher {args.teacher}: {error}")
    if args.distill_init and not args.resume:  # (a resumed run has its own networks: the start is not read again)
        try:
            read_init_policy(args)
        except (ValueError, CheckpointError) as error:
            problems.append(f"--distill-init {args.distill_init}: {error}")
    problems += output_errors([("--run-dir", run_directory(args), True), ("--export", args.export, False)])
    inputs = {
        "--distill-init": spec_files([args.distill_init] if args.distill_init else [], REGISTRY),
        "--teacher": spec_files([args.teacher], REGISTRY),
    }
    if problem := export_problem(args.export, {"--run-dir": run_directory(args)}, inputs):
        problems.append(problem)
    if problems:
        raise ValueError("; ".join(problems))
    return args


def stage_1_errors(args: Args) -> list[str]:
    """Why stage 1's sizes are refused: a round dealing more than ``DEALS_PER_ROUND`` games (it would replay the next
    round's deals), or every round's labels (all kept in memory for the fits) over ``MAX_ROLLOUT_BYTES``."""
    problems = []
    if args.distill_games > DEALS_PER_ROUND:
        problems.append(
            f"--distill-games {args.distill_games}: a round deals at most {DEALS_PER_ROUND:,} games (its deals are"
            f" {DEALS_PER_ROUND:,} seeds; more would be the next round's games again)"
        )
    labels = labels_memory(args.distill_iterations, args.distill_games)
    if labels > MAX_ROLLOUT_BYTES:
        problems.append(
            f"--distill-iterations {args.distill_iterations} x --distill-games {args.distill_games}: about"
            f" {labels / (1 << 30):,.1f} GiB of labelled decisions, all kept for the fits; allowed: at most"
            f" {MAX_ROLLOUT_BYTES >> 30} GiB (use fewer rounds or games per round)"
        )
    return problems


def labels_memory(rounds: int, games: int) -> int:
    """Bytes of stage 1's labels after ``rounds`` rounds of ``games`` games (``LabelledGames``: per decision its sparse
    observation, length, bit-packed mask, move and game), twice: each round's set and their concatenation are both
    held while the student is fitted."""
    per_decision = OBSERVATION_ENTRIES * (2 + 4) + 4 + (NUM_ACTIONS + 7) // 8 + 2 + 4
    return 2 * rounds * games * LABELS_PER_GAME * per_decision


def rollout_memory(num_envs: int, n_steps: int) -> int:
    """Bytes of stage 2's rollout (``Rollout``: per sample its sparse observation, length, mask, move and five
    numbers), twice (the update's copies), and of its ``num_envs`` games (``GAME_BYTES`` each)."""
    per_sample = OBSERVATION_ENTRIES * (8 + 4) + 8 + NUM_ACTIONS + 8 + 5 * 4
    return 2 * num_envs * n_steps * per_sample + num_envs * GAME_BYTES


def trained_start(args: Args) -> bool:
    """Whether stage 2 starts from a trained actor: the distilled student, or ``--distill-init``'s policy."""
    return args.distill_iterations > 0 or bool(args.distill_init)


def read_init_policy(args: Args) -> MLPPolicy:
    """The policy ``--distill-init`` names, checked to fit the run's network (as every script's starting policy
    is: ``read_matching_policy``) and to read the observation unscaled, as the student does; a ``ValueError``
    or ``CheckpointError`` naming what does not fit."""
    path = REGISTRY.policy_path(args.distill_init)
    policy = read_matching_policy(
        path, deck="", activation=args.activation, hidden_sizes=args.hidden_sizes, env_version=ENV_VERSION
    )
    if not np.all(policy.input_scale == 1):
        raise CheckpointError(f"{path}: its input scale is not 1 (the student reads the observation unscaled)")
    return policy


# -- stage 1: DAgger, distilling the teacher ---------------------------------------------------------
class SparseMLP(torch.nn.Module):
    """An MLP (the actor, or with one output the critic), its first layer fed the observation's non-zero entries
    (about 75 of 2,175).

    ``EmbeddingBag`` in ``sum`` mode with per-entry weights is exactly ``observation @ W1`` over the
    non-zero entries, 29x fewer multiplications than a dense first layer; the exported network is the
    plain MLP (``W1`` as the first weight), which numpy plays the same way.
    """

    def __init__(self, hidden_sizes: list[int], activation: str, outputs: int = NUM_ACTIONS) -> None:
        super().__init__()
        self.hidden_sizes, self.activation_name = list(hidden_sizes), activation
        bound = 1.0 / np.sqrt(encoding.OBS_SIZE)  # torch's Linear initialisation for this fan-in
        self.first = torch.nn.EmbeddingBag(encoding.OBS_SIZE, hidden_sizes[0], mode="sum")
        torch.nn.init.uniform_(self.first.weight, -bound, bound)
        self.first_bias = torch.nn.Parameter(torch.empty(hidden_sizes[0]).uniform_(-bound, bound))
        self.activation = ACTIVATIONS[activation]()
        widths = [*hidden_sizes, outputs]
        self.rest = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in itertools.pairwise(widths))

    def linear_layers(self) -> list[torch.nn.Linear]:
        """The layers after the first, input first."""
        return [layer for layer in self.rest if isinstance(layer, torch.nn.Linear)]

    def forward(self, columns: torch.Tensor, values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        hidden = self.activation(self.first(columns, offsets, per_sample_weights=values) + self.first_bias)
        for layer in self.rest[:-1]:
            hidden = self.activation(layer(hidden))
        return self.rest[-1](hidden)

    def load_weights(self, weights: Sequence[np.ndarray], biases: Sequence[np.ndarray]) -> None:
        """Take the network of a policy file (the inverse of ``weights``; the shapes are checked by torch)."""
        with torch.no_grad():
            self.first.weight.copy_(torch.tensor(weights[0]))
            self.first_bias.copy_(torch.tensor(biases[0]))
            for layer, weight, bias in zip(self.linear_layers(), weights[1:], biases[1:], strict=True):
                layer.weight.copy_(torch.tensor(weight.T))
                layer.bias.copy_(torch.tensor(bias))

    def weights(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The network as the package's MLP: weights ``(inputs, outputs)`` and biases, input first."""
        weights = [self.first.weight.detach().numpy().copy()]
        biases = [self.first_bias.detach().numpy().copy()]
        for layer in self.linear_layers():
            weights.append(layer.weight.detach().numpy().T.copy())
            biases.append(layer.bias.detach().numpy().copy())
        return weights, biases


SLOTS_START = encoding.OBSERVATION_LAYOUT.slices["slots"].start
NUM_SLOTS, SLOT_FEATURES = encoding.OBSERVATION_LAYOUT.shapes["slots"]
SLOT_ACTIONS = (ACTIVATE, TARGET)
"""The action ranges indexed by table slot: use slot i's ability, target (or destroy) slot i."""


def in_slot_rows(columns: np.ndarray) -> np.ndarray:
    """Which observation entries (by column) lie in the table's slot rows."""
    return (columns >= SLOTS_START) & (columns < SLOTS_START + NUM_SLOTS * SLOT_FEATURES)


def random_slot_orders(present: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each decision, a random reordering of its table: ``new[k, i]`` is where slot ``i`` goes. The
    ``present[k]`` cards on the table shuffle among the first places (a table is always slots 0..n-1);
    the empty slots stay where they are."""
    slots = np.arange(NUM_SLOTS)
    keys = np.where(slots < present[:, None], rng.random((len(present), NUM_SLOTS)), 2.0 + slots)
    return np.argsort(np.argsort(keys, axis=1), axis=1)


def reorder_slots(
    columns: np.ndarray, owners: np.ndarray, masks: np.ndarray, actions: np.ndarray, new: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The decisions with their tables reordered by ``new`` (``random_slot_orders``): the slot rows of the
    sparse observations (``columns``, entry ``e`` of decision ``owners[e]``), the legal masks and the
    teacher's moves. Which card lies in which slot is arbitrary (the order cards were drawn in), so every
    reordering is the same position, and the student learns one rule for every slot instead of one per slot."""
    columns, masks, actions = columns.copy(), masks.copy(), actions.copy()
    in_slots = in_slot_rows(columns)
    row, feature = np.divmod(columns[in_slots].astype(np.int64) - SLOTS_START, SLOT_FEATURES)
    columns[in_slots] = SLOTS_START + new[owners[in_slots], row] * SLOT_FEATURES + feature
    decisions = np.arange(len(actions))[:, None]
    for first in SLOT_ACTIONS:
        block = masks[:, first : first + NUM_SLOTS].copy()
        masks[decisions, first + new] = block
        moved = (actions >= first) & (actions < first + NUM_SLOTS)
        actions[moved] = first + new[moved, actions[moved] - first]
    return columns, masks, actions


def sparse_batch(
    data: LabelledGames, rows: np.ndarray, starts: np.ndarray, rng: np.random.Generator | None = None
) -> tuple[torch.Tensor, ...]:
    """The EmbeddingBag inputs (columns, values, offsets), the legal masks and the teacher's moves of
    decisions ``rows``; with ``rng``, each decision's table reordered at random (``reorder_slots``)."""
    entries, owners = data.entries(rows, starts)
    offsets = np.concatenate([[0], np.cumsum(data.lengths[rows])[:-1]]).astype(np.int64)
    columns, values = data.columns[entries].astype(np.int64), data.values[entries]
    masks, actions = data.legal(rows), data.actions[rows].astype(np.int64)
    if rng is not None:
        flags = in_slot_rows(columns) & ((columns - SLOTS_START) % SLOT_FEATURES == 0)  # a slot's "present"
        present = np.bincount(owners[flags], minlength=len(rows))
        columns, masks, actions = reorder_slots(columns, owners, masks, actions, random_slot_orders(present, rng))
    return (
        torch.as_tensor(columns),
        torch.as_tensor(values),
        torch.as_tensor(offsets),
        torch.as_tensor(masks),
        torch.as_tensor(actions),
    )


def masked_cross_entropy(
    actor: SparseMLP,
    data: LabelledGames,
    rows: np.ndarray,
    starts: np.ndarray,
    rng: np.random.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean cross-entropy of the teacher's moves under the legal softmax, and the greedy hits (bool); with
    ``rng``, on randomly reordered tables (``sparse_batch``)."""
    columns, values, offsets, masks, targets = sparse_batch(data, rows, starts, rng)
    logits = actor(columns, values, offsets).masked_fill(~masks, -1e9)
    return torch.nn.functional.cross_entropy(logits, targets), logits.argmax(dim=1) == targets


def agreement(actor: SparseMLP, data: LabelledGames) -> float:
    """Share of ``data``'s decisions where the actor's greedy move is the teacher's."""
    starts = data.starts
    hits = 0
    with torch.no_grad():
        for first in range(0, len(data), 8_192):
            rows = np.arange(first, min(first + 8_192, len(data)))
            hits += int(masked_cross_entropy(actor, data, rows, starts)[1].sum())
    return hits / max(len(data), 1)


def fit_actor(
    actor: SparseMLP,
    optimizer: torch.optim.Optimizer,
    data: LabelledGames,
    args: Args,
    rng: np.random.Generator,
    epochs: int,
    learning_rate: float,
) -> float:
    """``epochs`` passes of masked cross-entropy over ``data`` at ``learning_rate``; returns the last pass's
    mean loss."""
    for group in optimizer.param_groups:
        group["lr"] = learning_rate
    starts = data.starts
    losses: list[float] = []
    for _ in range(epochs):
        losses = []
        order = rng.permutation(len(data))
        for first in range(0, len(order), args.distill_batch_size):
            rows = order[first : first + args.distill_batch_size]
            loss, _ = masked_cross_entropy(actor, data, rows, starts, rng if args.distill_augment else None)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(actor.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
    return float(np.mean(losses)) if losses else float("nan")


def iteration_tasks(args: Args, iteration: int, student: Path | None) -> list[GameTask]:
    """The games of DAgger iteration ``iteration``: levels drawn from ``--levels``, fresh seeds, the teacher's
    share ``beta ** iteration`` (all the teacher's in the first iteration, which has no student yet)."""
    rng = np.random.default_rng([args.seed, iteration])
    # deals disjoint from the evaluations' and, with at most DEALS_PER_ROUND games a round, from the other rounds'
    base = (args.seed * 1_000 + iteration) * DEALS_PER_ROUND + 50_000_000
    beta = 1.0 if student is None else args.distill_beta**iteration
    return [
        GameTask(int(rng.choice(args.levels)), base + game, args.teacher, str(student or ""), beta)
        for game in range(args.distill_games)
    ]


def play_iteration(tasks: list[GameTask], pool: ProcessPoolExecutor | None, progress: bool) -> LabelledGames:
    """Play and label ``tasks`` in the worker pool (or here, with none), in order."""
    results = pool.map(play_labelled_game, tasks) if pool is not None else map(play_labelled_game, tasks)
    games = list(tqdm(results, total=len(tasks), desc="teacher-labelled games", disable=not progress, leave=False))
    return LabelledGames.concatenate(games)


def save_sparse_mlp(actor: SparseMLP, path: Path, description: str, training: dict[str, Any]) -> None:
    """The actor as a numpy Friday policy (``agents.load`` plays it)."""
    metadata = policy_metadata(actor.activation_name, actor.hidden_sizes, description, training)
    weights, biases = actor.weights()
    save_checked_policy(path, weights, biases, np.ones(encoding.OBS_SIZE, dtype=np.float32), metadata)


def per_level(data: LabelledGames, values: np.ndarray, levels: list[int]) -> dict[str, float]:
    return {
        f"level{level}": round(float(values[data.levels == level].mean()), 4)
        for level in levels
        if (data.levels == level).any()
    }


def distill(args: Args, run_dir: Path, progress: dict[str, Any]) -> Path:
    """DAgger: ``--distill-iterations`` rounds of playing ``--distill-games`` games (the teacher's, then more
    and more the student's), labelling each decision with the teacher's move, and fitting the student to
    everything labelled so far; then ``--distill-final-epochs`` passes at the final learning rate. With
    ``--distill-init`` the student starts as that policy (round 0 is still the teacher's games, and records the
    policy's agreement with it). Each round is saved (its games; the student and its optimiser as ``round.*``),
    so ``--resume`` continues after the last finished one; the final passes start from a round's student and
    write ``final.npz``, which the next round of a resumed run does not see. Returns the policy file of the
    run's student."""
    folder = run_dir / "distill"
    folder.mkdir(exist_ok=True)
    torch.manual_seed(args.seed)
    actor = SparseMLP(args.hidden_sizes, args.activation)
    optimizer = torch.optim.Adam(actor.parameters(), lr=args.distill_learning_rate)
    record = progress.setdefault("distill", [])
    student = None
    if not record and args.distill_init:  # a fresh run starting from a policy: round 0 measures its agreement
        policy = read_init_policy(args)
        actor.load_weights(policy.weights, policy.biases)
        student = write_student(actor, args, progress, folder / "round.npz")
    if record:
        recorded = len(record)
        load_round(actor, optimizer, run_dir / ROUND_CHECKPOINT, progress)
        student = write_student(actor, args, progress, folder / "round.npz")  # round.pt's, whatever a stop left
        if len(record) > recorded:  # load_round added the round a stop left out of progress.json
            atomic_write_text(run_dir / "progress.json", json.dumps(progress, indent=1))
    parts: list[LabelledGames] | None = None  # the rounds' games, read once a new round or the final fit needs them
    data: LabelledGames | None = None  # every label so far, once a round of this process has added some
    workers = worker_count(args)
    with worker_pool(workers) as pool:
        for iteration in range(len(record), args.distill_iterations):
            started = time.time()
            new = play_iteration(iteration_tasks(args, iteration, student), pool, args.progress)
            played = time.time() - started
            point: dict[str, Any] = {
                "iteration": iteration,
                "games": len(new.levels),
                "decisions": len(new),
                "student_share": round(float(new.student_share.mean()), 4),
                "win_rate": per_level(new, new.won, args.levels),
                "agreement_before_fit": round(agreement(actor, new), 4) if student is not None else None,
            }
            save_games(folder / f"games_{iteration:02d}.npz", new)
            if parts is None:
                parts = earlier_games(folder, iteration)
            parts.append(new)
            data = LabelledGames.concatenate(parts)
            torch.set_num_threads(max(args.torch_threads, workers))  # the workers wait while the student learns
            rng = np.random.default_rng([args.seed, iteration])
            loss = fit_actor(actor, optimizer, data, args, rng, args.distill_epochs, args.distill_learning_rate)
            torch.set_num_threads(args.torch_threads)
            point.update(loss=round(loss, 4), labelled=len(data), play_s=round(played, 1))
            point["wall_s"] = round(time.time() - started, 1)
            record.append(point)
            student = save_student_state(actor, optimizer, args, run_dir, progress, point, started, "round")
            print(f"[distill {iteration + 1}/{args.distill_iterations}] {json.dumps(point)}", flush=True)
    if args.distill_final_epochs == 0:
        assert student is not None
        return student
    final = progress.get("distill_final")
    if final is None or final["after_rounds"] != len(record):
        started = time.time()
        if data is None:  # the rounds were all played before a resume
            data = LabelledGames.concatenate(earlier_games(folder, len(record)))
        torch.set_num_threads(max(args.torch_threads, workers))
        rng = np.random.default_rng([args.seed, len(record)])
        loss = fit_actor(actor, optimizer, data, args, rng, args.distill_final_epochs, args.distill_final_learning_rate)
        torch.set_num_threads(args.torch_threads)
        final = {"after_rounds": len(record), "loss": round(loss, 4), "wall_s": round(time.time() - started, 1)}
        progress["distill_final"] = final
        save_student_state(actor, optimizer, args, run_dir, progress, final, started, "final")
        print(f"[distill: final fit] {json.dumps(final)}", flush=True)
    return folder / "final.npz"


def distill_checked(args: Args, run_dir: Path, progress: dict[str, Any]) -> Path:
    """``distill``, where a teacher's (or the student's) move that fails (it raises, is not an integer, or is not legal:
    ``friday_dagger.checked_move``) stops the run with a ``RunError`` in one line naming it: the round it was played in
    is not saved, so no label of it is trained on, and the rounds before it are kept for ``--resume``."""
    try:
        return distill(args, run_dir, progress)
    except (AgentRaisedError, IllegalMoveError) as error:
        rounds = len(progress.get("distill", []))
        kept = f"round {rounds + 1} was not saved; the {rounds} before it are (--resume)"
        kept = kept if rounds else "nothing was saved"
        raise RunError(f"stage 1 stopped: {error}; {kept}") from error


def save_student_state(
    actor: SparseMLP,
    optimizer: torch.optim.Optimizer,
    args: Args,
    run_dir: Path,
    progress: dict[str, Any],
    point: dict[str, Any],
    started: float,
    name: str,
) -> Path:
    """After a round (``name`` ``round``) or the final passes (``final``): the student's policy ``NAME.npz``,
    evaluated into ``point`` (its record in ``progress``); after a round also its weights and optimiser
    (``round.pt``, for ``--resume``); then ``progress.json``. Returns the policy file."""
    student = write_student(actor, args, progress, run_dir / "distill" / f"{name}.npz")
    if args.eval_every > 0:
        point["eval"] = evaluate_policy(student, args)
    progress["wall_time_s"] += time.time() - started  # unrounded: rounding each round's sum would add up
    if name == "round":  # with the round's record, so that a stop before progress.json loses nothing
        state = {
            "actor": actor.state_dict(),
            "optimizer": optimizer.state_dict(),
            "rounds": len(progress["distill"]),
            "point": point,
            "wall_time_s": progress["wall_time_s"],
        }
        atomic_write(run_dir / ROUND_CHECKPOINT, lambda handle: torch.save(state, handle))
    atomic_write_text(run_dir / "progress.json", json.dumps(progress, indent=1))
    return student


def write_student(actor: SparseMLP, args: Args, progress: dict[str, Any], student: Path) -> Path:
    """The student as the policy file ``student`` (returned), its metadata the run's rounds so far."""
    training = {key: progress.get(key) for key in ("distill", "distill_final")}
    description = f"DAgger distillation of {args.teacher!r}, run {args.run_name!r}, Friday levels {args.levels}"
    save_sparse_mlp(actor, student, description, {**training, "args": dataclasses.asdict(args)})
    return student


def load_round(actor: SparseMLP, optimizer: torch.optim.Optimizer, path: Path, progress: dict[str, Any]) -> None:
    """The student and its optimiser after the rounds ``progress.json`` records, or a ``RunError``: a missing or
    damaged file, another network, or the state of another round. A ``round.pt`` one round ahead (the run
    stopped between writing it and ``progress.json``) carries that round's record, which joins ``progress``."""
    rounds = len(progress["distill"])
    try:
        state = read_state(path, "cpu")  # as train_ppo.py reads its checkpoint: no code runs, no member inflates
        problem = optimizer_settings_problem(state["optimizer"]["param_groups"], optimizer)
        if problem is not None:
            raise ValueError(problem)
        actor.load_state_dict(state["actor"])
        optimizer.load_state_dict(state["optimizer"])
        saved = state["rounds"]
        if type(saved) is not int:
            raise TypeError(f"rounds is {saved!r}")
        if saved == rounds + 1 and "point" in state and (problem := round_point_problem(state, rounds)) is not None:
            raise ValueError(problem)
    except Exception as error:  # torch raises whatever unpickling, a missing key or a changed shape raises
        problem = f"{type(error).__name__}: {error}"
        raise RunError(f"--resume: {path} is missing, damaged or of another network ({problem})") from error
    if saved == rounds + 1 and "point" in state:
        progress["distill"].append(state["point"])
        progress["wall_time_s"] = max(progress["wall_time_s"], state["wall_time_s"])
        print(f"note: {path} is a round ahead of progress.json; going on after round {saved}", flush=True)
    elif saved != rounds:
        raise RunError(
            f"--resume: {path} holds the student after round {saved}, progress.json records {rounds} rounds: they"
            " are not of the same run; restore them or start a new run"
        )


def round_point_problem(state: dict[str, Any], iteration: int) -> str | None:
    """Why the record of round ``iteration`` that a ``round.pt`` one round ahead of ``progress.json`` carries (its
    ``point`` and ``wall_time_s``) cannot join the run's record, or None: the round's number, and finite numbers of
    at least 0 (a string or an infinity there would end the resume, or every later one, with another error)."""
    point, wall = state["point"], state.get("wall_time_s")
    if not isinstance(point, dict) or point.get("iteration") != iteration:
        return f"its round's record is {shown(point)}, not round {iteration}'s"
    try:
        json.dumps(point, allow_nan=False)
    except (TypeError, ValueError):
        return f"its round's record {shown(point)} holds something other than JSON's finite numbers, texts and lists"
    if not is_duration(wall):
        return f"its wall_time_s is {shown(wall)}, not a number of seconds"
    return None


def earlier_games(folder: Path, rounds: int) -> list[LabelledGames]:
    """The labelled games of the first ``rounds`` rounds, as the run saved them (``read_games``)."""
    return [read_games(folder / f"games_{index:02d}.npz") for index in range(rounds)]


def save_games(path: Path, games: LabelledGames) -> None:
    atomic_write(path, lambda handle: np.savez(handle, **{name: getattr(games, name) for name in FIELDS}))


def read_games(path: Path) -> LabelledGames:
    """A round's labelled games, read as a checkpoint is (``uninflated_problem``: ``np.savez`` stores its members
    uncompressed, so reading costs at most the file's size) and checked (``LabelledGames.problem``), or a
    ``RunError`` naming the file and what is wrong with it."""
    try:
        with path.open("rb") as handle:
            problem = uninflated_problem(handle)
            if problem is None:
                handle.seek(0)
                with np.load(handle, allow_pickle=False) as stored:
                    games = LabelledGames(**{name: stored[name] for name in FIELDS})
                problem = games.problem()
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        problem = f"{type(error).__name__}: {error}"
    if problem is not None:
        raise RunError(f"--resume: {path} is missing or damaged ({problem}); restore it or start a new run")
    return games


EVAL_SEED = 12_345
"""The fixed deals of every evaluation in a run (both stages), ``--eval-games`` per level."""


def level_results(path: Path, args: Args) -> dict[int, LevelResult]:
    """The greedy policy at ``path`` on the fixed evaluation deals, per level of ``--levels``."""
    agent = load(path)  # read once, greedy: the same agent plays every game
    return {level: evaluate(agent, level, args.eval_games, seed=EVAL_SEED) for level in args.levels}


def evaluate_policy(path: Path, args: Args) -> dict[str, float]:
    """Win rate of the greedy policy at ``path`` on the fixed evaluation deals, per level."""
    return {f"level{level}": result.win_rate.value for level, result in level_results(path, args).items()}


# -- stage 2: PPO on games played in lockstep ---------------------------------------------------------
CHECKPOINT = "last.pt"
"""Stage 2's checkpoint in the run directory: both networks, both optimisers and the samples done."""
ROUND_CHECKPOINT = "distill/round.pt"
"""Stage 1's checkpoint in the run directory: the student and its optimiser after the last round."""


def embedding_inputs(rows: SparseRows) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What a ``SparseMLP`` reads: the entries' columns, their values and where each row begins."""
    return torch.as_tensor(rows.columns), torch.as_tensor(rows.values), torch.as_tensor(row_starts(rows.lengths))


def final_reward(won: np.ndarray, scores: np.ndarray, args: Args) -> np.ndarray:
    """The training reward of finished games: (score + win bonus if won) x scale; 0 before a game's end."""
    return ((scores + np.where(won, args.win_bonus, 0.0)) * args.reward_scale).astype(np.float32)


@dataclass
class Networks:
    """Stage 2's actor (the policy that is exported) and critic, each with its own Adam optimiser."""

    actor: SparseMLP
    critic: SparseMLP
    actor_optimizer: torch.optim.Optimizer
    critic_optimizer: torch.optim.Optimizer

    @staticmethod
    def new(args: Args, start: MLPPolicy | None) -> Networks:
        """A fresh critic, and the actor of ``start`` (the distilled or ``--distill-init`` policy) with its
        logits multiplied by ``--init-sharpness``, or a fresh actor."""
        torch.manual_seed(args.seed)
        actor = SparseMLP(args.hidden_sizes, args.activation)
        critic = SparseMLP(args.hidden_sizes, args.activation, outputs=1)
        if start is not None:
            actor.load_weights(start.weights, start.biases)
            sharpen_(actor.linear_layers()[-1], args.init_sharpness)
        return Networks(
            actor,
            critic,
            torch.optim.Adam(actor.parameters(), lr=args.learning_rate, eps=1e-5),
            torch.optim.Adam(critic.parameters(), lr=args.critic_learning_rate, eps=1e-5),
        )

    def state(self) -> dict[str, Any]:
        """A copy of the weights and optimiser states (``load`` puts it back)."""
        return copy.deepcopy({name: getattr(self, name).state_dict() for name in NETWORK_PARTS})

    def load(self, state: dict[str, Any]) -> None:
        """Put a checkpoint's ``state`` back; a ``ValueError`` if an optimizer's settings are not the run's
        (``optimizer_settings_problem``), before anything is loaded."""
        for name in ("actor_optimizer", "critic_optimizer"):
            problem = optimizer_settings_problem(state[name]["param_groups"], getattr(self, name))
            if problem is not None:
                raise ValueError(f"{name}: {problem}")
        for name in NETWORK_PARTS:
            getattr(self, name).load_state_dict(state[name])


NETWORK_PARTS = ("actor", "critic", "actor_optimizer", "critic_optimizer")


@dataclass
class Rollout:
    """``n_steps`` samples of each of ``num_envs`` games: observations and masks step-major (sample ``t`` of game
    ``g`` is row ``t * num_envs + g``), the rest ``(n_steps, num_envs)``; ``dones[t, g]``: game ``g`` ended after
    its sample ``t`` (its next row is a new game's)."""

    observations: SparseRows
    masks: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    next_values: torch.Tensor
    finished: list[Finished]


def collect(games: LockstepGames, networks: Networks, args: Args, generator: torch.Generator) -> Rollout:
    """Play ``n_steps`` moves in every game with the actor's sampled moves (the legal softmax, sampled as the
    arg-max of the logits plus Gumbel noise from ``generator``)."""
    rows: list[SparseRows] = []
    masks: list[torch.Tensor] = []
    actions: list[torch.Tensor] = []
    log_probs: list[torch.Tensor] = []
    values: list[torch.Tensor] = []
    rewards: list[torch.Tensor] = []
    dones: list[torch.Tensor] = []
    finished: list[Finished] = []
    for _ in range(args.n_steps):
        observations, legal = games.observations(), torch.as_tensor(games.masks())
        with torch.no_grad():
            inputs = embedding_inputs(observations)
            logits = networks.actor(*inputs).masked_fill(~legal, MASKED)
            value = networks.critic(*inputs).squeeze(1)
        noise = -torch.log(-torch.log(torch.rand(logits.shape, generator=generator).clamp_min(1e-12)))
        action = (logits + noise).argmax(dim=1)
        log_prob = torch.log_softmax(logits, dim=1).gather(1, action[:, None]).squeeze(1)
        ended = games.step(action.numpy())
        reward, done = np.zeros(len(legal), np.float32), np.zeros(len(legal), np.float32)
        reward[ended.games] = final_reward(ended.won, ended.scores, args)
        done[ended.games] = 1.0
        rows.append(observations)
        for store, item in zip(
            (masks, actions, log_probs, values, rewards, dones),
            (legal, action, log_prob, value, torch.as_tensor(reward), torch.as_tensor(done)),
            strict=True,
        ):
            store.append(item)
        finished.append(ended)
    with torch.no_grad():
        next_values = networks.critic(*embedding_inputs(games.observations())).squeeze(1)
    return Rollout(
        observations=SparseRows.concatenate(rows),
        masks=torch.cat(masks),
        actions=torch.stack(actions),
        log_probs=torch.stack(log_probs),
        values=torch.stack(values),
        rewards=torch.stack(rewards),
        dones=torch.stack(dones),
        next_values=next_values,
        finished=finished,
    )


MASKED = -1e9
"""The logit of an illegal move: its probability is 0."""


def advantages(rollout: Rollout, gamma: float, gae_lambda: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE advantages and the critic's targets (advantage + value), each ``(n_steps, num_envs)``; a game's chain
    ends where it ended, and one still under way is continued by the critic's value of its last observation."""
    gains = torch.zeros_like(rollout.rewards)
    running = torch.zeros_like(rollout.next_values)
    for t in reversed(range(len(rollout.rewards))):
        following = rollout.next_values if t == len(rollout.rewards) - 1 else rollout.values[t + 1]
        going_on = 1.0 - rollout.dones[t]
        delta = rollout.rewards[t] + gamma * following * going_on - rollout.values[t]
        running = delta + gamma * gae_lambda * going_on * running
        gains[t] = running
    return gains, gains + rollout.values


def update(
    networks: Networks,
    rollout: Rollout,
    gains: torch.Tensor,
    targets: torch.Tensor,
    args: Args,
    rng: np.random.Generator,
    actor_learns: bool,
) -> dict[str, float]:
    """``n_epochs`` passes of minibatches: the critic's squared error to its targets, and (once ``actor_learns``)
    the clipped PPO objective with an entropy bonus, advantages normalised per minibatch; the last pass's means."""
    gains, targets = gains.reshape(-1), targets.reshape(-1)
    actions, old_log_probs = rollout.actions.reshape(-1), rollout.log_probs.reshape(-1)
    starts = row_starts(rollout.observations.lengths)
    stats: dict[str, list[float]] = {}
    for _ in range(args.n_epochs):
        stats = {name: [] for name in ("value_loss", "policy_loss", "entropy", "approx_kl", "clip_fraction")}
        order = rng.permutation(len(gains))
        for first in range(0, len(order), args.batch_size):
            rows = order[first : first + args.batch_size]
            inputs = embedding_inputs(rollout.observations.take(rows, starts))
            value_loss = 0.5 * (networks.critic(*inputs).squeeze(1) - targets[rows]).pow(2).mean()
            step(networks.critic_optimizer, networks.critic, value_loss, args.max_grad_norm)
            stats["value_loss"].append(value_loss.item())
            if not actor_learns:
                continue
            logits = networks.actor(*inputs).masked_fill(~rollout.masks[rows], MASKED)
            log_softmax = torch.log_softmax(logits, dim=1)
            log_probs = log_softmax.gather(1, actions[rows, None]).squeeze(1)
            entropy = -(log_softmax.exp() * log_softmax).sum(dim=1).mean()
            ratio = (log_probs - old_log_probs[rows]).exp()
            gain = gains[rows]
            # (a last minibatch of one sample has no spread: centred, its advantage is 0)
            gain = (gain - gain.mean()) / (gain.std() + 1e-8) if len(rows) > 1 else torch.zeros_like(gain)
            clipped = ratio.clamp(1.0 - args.clip_range, 1.0 + args.clip_range)
            policy_loss = -torch.min(ratio * gain, clipped * gain).mean()
            step(networks.actor_optimizer, networks.actor, policy_loss - args.ent_coef * entropy, args.max_grad_norm)
            with torch.no_grad():
                log_ratio = log_probs - old_log_probs[rows]
                stats["approx_kl"].append(((log_ratio.exp() - 1.0) - log_ratio).mean().item())
                stats["clip_fraction"].append(((ratio - 1.0).abs() > args.clip_range).float().mean().item())
            stats["policy_loss"].append(policy_loss.item())
            stats["entropy"].append(entropy.item())
    return {name: float(np.mean(values)) for name, values in stats.items() if values}


def step(optimizer: torch.optim.Optimizer, network: torch.nn.Module, loss: torch.Tensor, max_norm: float) -> None:
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(network.parameters(), max_norm)
    optimizer.step()


# -- stage 2's checkpoints, evaluations and loop ------------------------------------------------------
def export_policy(actor: SparseMLP, args: Args, path: Path, progress: dict[str, Any]) -> None:
    """The actor as a numpy Friday policy, its metadata the run's record so far."""
    start = f"DAgger distillation of {args.teacher!r}" if args.distill_iterations else args.distill_init or "scratch"
    description = f"PPO from {start}, run {args.run_name!r}, Friday levels {args.levels}"
    training = {key: progress.get(key) for key in ("distill", "distill_final", "timesteps", "wall_time_s")}
    save_sparse_mlp(actor, path, description, {**training, "args": dataclasses.asdict(args)})


def save_run(run_dir: Path, networks: Networks, args: Args, progress: dict[str, Any]) -> None:
    """``last.pt``, then ``policy.npz``, then ``progress.json``, each written atomically; ``last.pt`` holds its
    sample count, so a run stopped between the writes resumes from it (``load_run``)."""
    state = {**networks.state(), "timesteps": progress["timesteps"]}
    atomic_write(run_dir / CHECKPOINT, lambda handle: torch.save(state, handle))
    export_policy(networks.actor, args, run_dir / "policy.npz", progress)
    atomic_write_text(run_dir / "progress.json", json.dumps(progress, indent=1))


def load_run(run_dir: Path, networks: Networks, progress: dict[str, Any], most_ahead: int) -> None:
    """The networks of ``last.pt`` (read as ``train_ppo.py`` reads its checkpoint, ``read_state``: no code runs, and
    no member inflates past the file's size), or a ``RunError`` naming the file: damaged, of another network, or
    behind ``progress.json``. One ahead of it by at most ``most_ahead`` (a run stopped between the writes:
    ``checkpoint_reach``) moves ``progress`` up to it."""
    path = run_dir / CHECKPOINT
    try:
        state = read_state(path, "cpu")
        networks.load(state)
        timesteps = state["timesteps"]
        if isinstance(timesteps, bool) or not isinstance(timesteps, int):
            raise TypeError(f"timesteps is {timesteps!r}")
    except Exception as error:  # torch raises whatever unpickling, a missing key or a changed shape raises
        raise RunError(
            f"--resume: {path} is damaged or not this run's checkpoint ({type(error).__name__}: {error});"
            " restore it or start a new run"
        ) from error
    match_checkpoint(path, timesteps, progress, most_ahead)
    print(f"resuming {run_dir} at {timesteps:,} timesteps", flush=True)


def record_evaluation(actor: SparseMLP, args: Args, run_dir: Path, progress: dict[str, Any], writer: Any) -> None:
    """The greedy actor on the fixed evaluation deals (``level_results``): a learning-curve point."""
    steps = progress["timesteps"]
    path = run_dir / "eval_current.npz"
    export_policy(actor, args, path, progress)
    point: dict[str, Any] = {"timesteps": steps}
    summary = []
    for level, result in level_results(path, args).items():
        point[f"win_rate_level{level}"] = result.win_rate.value
        point[f"mean_score_level{level}"] = result.mean_score.value
        if writer is not None:
            writer.add_scalar(f"eval/win_rate_level{level}", result.win_rate.value, steps)
            writer.add_scalar(f"eval/mean_score_level{level}", result.mean_score.value, steps)
        rate = result.win_rate
        summary.append(
            f"level {level}: win {100 * rate.value:.1f}% [{100 * rate.low:.1f}, {100 * rate.high:.1f}], "
            f"mean score {result.mean_score.value:.1f}"
        )
    progress["curve"].append(point)
    print(f"[eval @ {steps:,} steps, {args.eval_games} games] " + "; ".join(summary), flush=True)
    write_curve(run_dir, progress["curve"], list(point), lineterminator="\r\n")  # csv's default


def log_rollout(writer: Any, rollout: Rollout, stats: dict[str, float], steps: int) -> None:
    """Losses and the rollout's finished games (win rate and mean score per level) to TensorBoard."""
    if writer is None:
        return
    for name, value in stats.items():
        writer.add_scalar(f"losses/{name}", value, steps)
    levels = np.concatenate([ended.levels for ended in rollout.finished])
    won = np.concatenate([ended.won for ended in rollout.finished])
    scores = np.concatenate([ended.scores for ended in rollout.finished])
    for level in np.unique(levels):
        writer.add_scalar(f"rollout/win_rate_level{level}", float(won[levels == level].mean()), steps)
        writer.add_scalar(f"rollout/mean_score_level{level}", float(scores[levels == level].mean()), steps)


def ppo(args: Args, run_dir: Path, progress: dict[str, Any], start: Path | None, most_ahead: int) -> None:
    """Stage 2: PPO from ``start`` (a policy file; None: a fresh actor) to ``--total-timesteps`` samples, or on from
    ``last.pt`` (``load_run``; ``most_ahead``: how far ahead of the record it may be). Ctrl-C or SIGTERM
    (``Interrupted``) saves the run as it was at the start of the rollout under way."""
    networks = Networks.new(args, read_friday_policy(start) if start is not None else None)
    resuming = (run_dir / CHECKPOINT).exists()
    if resuming:
        recorded = progress["timesteps"]
        load_run(run_dir, networks, progress, most_ahead)
        if progress["timesteps"] > recorded:  # a stop between the writes of a checkpoint: the policy and record now
            save_run(run_dir, networks, args, progress)
    done = progress["timesteps"]
    if done >= args.total_timesteps:
        print(f"{run_dir} is finished: {done:,} timesteps (raise --total-timesteps to go on)", flush=True)
        return
    torch.set_num_threads(max(args.torch_threads, min(args.workers, available_cpus())))  # the games wait on the update
    rng = np.random.default_rng([args.seed, done])  # a resumed run deals anew, reproducibly
    generator = torch.Generator().manual_seed(int(rng.integers(2**63)))
    games = LockstepGames(args.num_envs, args.levels, rng)
    writer = tensorboard(run_dir)
    per_rollout = args.num_envs * args.n_steps
    next_eval, next_checkpoint = next_multiple(done, args.eval_every), next_multiple(done, args.checkpoint_every)
    started = time.time() - progress["wall_time_s"]
    saved = done if resuming else None  # the timesteps of the checkpoint on disk
    boundary = (done, networks.state())
    bar = progress_bar(args.progress, args.total_timesteps, done)
    try:
        if done == 0 and args.eval_every and not progress["curve"]:
            record_evaluation(networks.actor, args, run_dir, progress, writer)
        while done < args.total_timesteps:
            boundary = (done, networks.state())
            for group in networks.actor_optimizer.param_groups:
                group["lr"] = args.learning_rate * (1.0 - done / args.total_timesteps)
            rollout = collect(games, networks, args, generator)
            gains, targets = advantages(rollout, args.gamma, args.gae_lambda)
            stats = update(networks, rollout, gains, targets, args, rng, actor_learns=done >= args.critic_warmup)
            if not all(np.isfinite(value) for value in stats.values()):
                kept = (
                    f"the checkpoint on disk ({CHECKPOINT}, at {saved:,} timesteps) is kept"
                    if saved is not None
                    else f"no checkpoint was saved (stage 2 stopped before its first, at {next_checkpoint:,} timesteps)"
                )
                raise RunError(f"stage 2 diverged at {done:,} timesteps ({stats}); {kept}")
            done += per_rollout
            progress.update(timesteps=done, wall_time_s=time.time() - started)
            log_rollout(writer, rollout, stats, done)
            if bar is not None:
                bar.update(per_rollout)
            if done >= next_eval or (done >= args.total_timesteps and args.eval_every):
                next_eval = next_multiple(done, args.eval_every)
                record_evaluation(networks.actor, args, run_dir, progress, writer)
            if done >= next_checkpoint or done >= args.total_timesteps:
                next_checkpoint = next_multiple(done, args.checkpoint_every)
                save_run(run_dir, networks, args, progress)
                saved = done
    except Interrupted:
        if saved is None or saved < boundary[0]:
            networks.load(boundary[1])
            progress["curve"] = [point for point in progress["curve"] if point["timesteps"] <= boundary[0]]
            progress.update(timesteps=boundary[0], wall_time_s=time.time() - started)
            save_run(run_dir, networks, args, progress)
        raise
    finally:
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()


# -- the run ----------------------------------------------------------------------------------------
def train(args: Args, given: set[str]) -> None:
    """The run ``args`` describes: stage 1 (DAgger) if ``--distill-iterations``, then stage 2 (PPO) if
    ``--total-timesteps``, starting from the distilled actor (or, with no rounds, from ``--distill-init``'s
    policy). ``given``: the flags of the command line."""
    run_dir = run_directory(args)
    fresh = {"args": dataclasses.asdict(args), "timesteps": 0, "wall_time_s": 0.0, "distill": [], "curve": []}
    progress = open_run(  # progress.json is written by both stages; a new run also refuses their checkpoints
        run_dir, args.resume, fresh, checkpoint="progress.json", other_checkpoints=(CHECKPOINT, ROUND_CHECKPOINT)
    )
    sessions = [progress["args"]]  # the arguments of the session that wrote the record (checkpoint_reach)
    if args.resume:
        stored = progress["args"]
        fresh_actor = stored.get("distill_iterations") == 0 and stored.get("distill_init") == ""
        if fresh_actor and stored.get("critic_warmup") == 0:
            given = given - {"critic_warmup"}  # a fresh actor's run uses (and records) 0 whatever the flag said
        args = resumed_run_args(
            Args, args, given, progress, run_dir, RUN_SETTINGS, checked_args, agent_fields=AGENT_FIELDS
        )
        progress["args"] = dataclasses.asdict(args)
        rounds, done = len(progress["distill"]), progress["timesteps"]
        if args.distill_iterations < rounds:
            raise RunError(f"--resume: the run has played {rounds} rounds; --distill-iterations cannot be fewer")
        if args.distill_iterations > rounds and (run_dir / CHECKPOINT).exists():
            raise RunError("--resume: stage 2 (PPO) has begun, so no more rounds can be added")
        if args.total_timesteps < done:
            raise RunError(
                f"--resume: stage 2 (PPO) has trained {done:,} timesteps; --total-timesteps cannot be fewer than the "
                f"{done:,} timesteps done (the same number exports the run as it is)"
            )
        if args.total_timesteps == 0 and (run_dir / CHECKPOINT).exists():
            raise RunError(
                f"--resume --total-timesteps 0: stage 2 (PPO) has begun ({run_dir / CHECKPOINT}), so the run's policy "
                "is no longer the distilled student; give --total-timesteps above 0"
            )
    torch.set_num_threads(args.torch_threads)
    try:
        student = distill_checked(args, run_dir, progress) if args.distill_iterations > 0 else None
        if args.total_timesteps == 0:
            assert student is not None  # checked_args refuses a run with neither stage
            checked_policy(student, read_friday_policy, "the run's policy", "give more --distill-iterations")
            exported = student.read_bytes()
            atomic_write(run_dir / "policy.npz", lambda handle: handle.write(exported))
            print(f"done: {len(progress['distill'])} DAgger rounds; run directory {run_dir}", flush=True)
        else:
            if student is None and args.distill_init and not (run_dir / CHECKPOINT).exists():  # (else: last.pt's)
                student = REGISTRY.policy_path(args.distill_init)
            reach = checkpoint_reach([*sessions, dataclasses.asdict(args)], args.num_envs * args.n_steps)
            ppo(args, run_dir, progress, student, reach)
            print(f"done: {progress['timesteps']:,} timesteps; run directory {run_dir}", flush=True)
    except Interrupted as stop:  # every finished round, and stage 2 at its last rollout's start, is saved
        stop.saved = saved_checkpoint(run_dir, args)
        raise
    export_copy(run_dir, args.export, read_friday_policy)


def saved_checkpoint(run_dir: Path, args: Args) -> str:
    """What a stopped run leaves for ``--resume`` (read back from the run directory), in one line."""
    try:
        progress = json.loads((run_dir / "progress.json").read_text())
    except OSError:
        return "nothing was saved (no round had finished); start the run again, without --resume"
    if (run_dir / CHECKPOINT).is_file():
        timesteps = progress["timesteps"]
        saved = f"the PPO model at {timesteps:,} timesteps is saved in {run_dir} ({CHECKPOINT}, progress.json)"
    else:
        rounds = len(progress["distill"])
        saved = f"the run after round {rounds} of {args.distill_iterations} is saved in {run_dir}"
        saved += " (distill/round.pt, progress.json)"
    return saved + "; continue it with --resume"


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    run_main(Args, parse_args, train, argv)


if __name__ == "__main__":
    main()
