"""Self-play PPO for Friday the 13th from scratch, on the batched engine (CleanRL-style).

Thousands of tables play in lockstep (:class:`friday13_env.friday13.batched.SelfPlayTables`), each game
at a table size drawn from ``--players``. At a quarter of the tables the learner plays every seat (self-play);
at the others (``--pool-share``) it holds one seat and the others are drawn from a pool of the
``--opponents`` heuristics (and, with ``--snapshot-every``, frozen snapshots of its past selves: a league
that did not help at the default length, docs/training.md). Every learner move is a PPO
sample: a seat's reward (``relative``: the table's mean points minus its own, at each round's end) is
credited to its latest move, and its advantage looks ahead to the same seat's next move (GAE) within
the round (``--horizon``: every round is dealt anew, so later rounds' rewards hardly depend on this
round's moves and mostly add noise to its value).
Masked PPO in torch: separate actor and critic MLPs, the observation scaled as the package's
policies scale it, so the actor exports to the package's numpy format (``agents.load`` plays it
without torch). With ``--input-features`` both networks also read derived inputs computed from the
observation (:mod:`friday13_env.friday13.features`); the export declares them and computes them itself.
With ``--actor type-shared`` the actor reads and plays the three interchangeable omen types with the same
weights (:class:`friday13_training.actor_critic.TypeSharedActor`); it is written out as a plain MLP, so the export
format is the same.
With ``--device cuda`` the networks act and learn on an NVIDIA GPU; the engine and the pool stay on the CPU.
Nothing is learned from search, and nothing starts from a trained network unless ``--init-policy`` names one (a best
response starting from its target's weights, ``training/best_response.py``: such a run is not from scratch, and its
record and export say so).

Reads top to bottom: hyperparameters (every field of ``Args`` is a ``--flag``; ``--help``), the rollout,
the advantages, the update, evaluation and the snapshot pool, then the loop. What is not the algorithm lives in
:mod:`friday13_training`: the networks (``actor_critic``), the run's checkpoint (``ppo_checkpoint``) and what a run
shows (``reporting``).

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``), every file written atomically:
  ``last.pt``            actor, critic and optimizer (and ``--magnet-coef``'s magnet): ``--resume`` continues from it
  ``progress.json``      the run's arguments, timesteps done, snapshots, learning-curve points, and the script
                         that started it (this one, or ``best_response.py``, which resumes its own runs)
  ``policy.npz``         the exported numpy policy (also copied to ``--export``)
  ``snapshots/``         the frozen past selves of the opponent pool (numpy policies)
  ``learning_curve.csv`` the periodic duplicate-deal evaluations; TensorBoard logs in ``tb/``

Every flag is checked before anything is built. ``--resume`` continues the run with its recorded
arguments: a run setting given on the command line (``--total-timesteps``, ``--eval-every``,
``--checkpoint-every``, ``--export``, ``--progress``, ``--torch-threads``, ``--device``) is applied and recorded (an
``--export`` only the record names is not written); a
hyperparameter given with another value than the run's is refused, the error listing each one, and so is an agent
factory (``module:factory``) that only the record names (nothing is imported that no command named). Resuming a
finished run exports it (once its ``policy.npz`` reads back) and stops. A resumed run deals from a seed derived
from the run's seed and its timesteps, so it is reproducible, though not identical to an uninterrupted run.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# torch's threads wait for work asleep, not spinning: spinning, they take the core from whatever else runs there
# and, on a busy machine, from each other (twice the steps/s beside another busy process, the same alone:
# docs/time-to-threshold.md). Set before torch loads its OpenMP runtime; a value set by the user stands.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
import torch
from friday13_training.actor_critic import ActorCritic
from friday13_training.friday13_agents import evaluation_opponent_errors, spec_files
from friday13_training.magnet import frozen_copy, magnet_kl, move_magnet
from friday13_training.pool_results import PoolResults, learner_shares, record_games, state_problem
from friday13_training.ppo_checkpoint import (
    CHECKPOINT,
    OTHER_RUN_FILES,
    POOL_RESULTS,
    PROGRESS_EXTRA_KEYS,
    RESUME,
    RESUMED_AT,
    SCRIPT,
    STARTED_FROM,
    Boundary,
    Reader,
    check_finite,
    check_started_by,
    load_checkpoint,
    read_snapshot,
    recover_checkpoint,
    resumed_at_problem,
    save_run,
)
from friday13_training.reporting import print_win_rates, progress_bar, steps_per_second, tensorboard, write_curve
from friday13_training.run_fork import fork_problems, start_from, started_from_problem
from friday13_training.runs import (
    MAX_SEED,
    MAX_TIMESTEPS,
    Interrupted,
    RunError,
    check_own_folder,
    check_win_rate_curve,
    export_copy,
    export_problem,
    name_problems,
    next_multiple,
    open_run,
    parse_run_args,
    resumed_run_args,
    run_directory,
    run_main,
    session_seed,
    warmup_problem,
)
from friday13_training.script_args import (
    MAX_CLIP,
    MAX_EPOCHS,
    MAX_EVAL_GAMES,
    MAX_GRAD_NORM,
    MAX_LEARNING_RATE,
    MAX_LOSS_WEIGHT,
    MAX_TORCH_THREADS,
    field_errors,
    network_errors,
    option,
    output_errors,
    rollout_error,
)
from friday13_training.torch_policy import MAX_SHARPNESS, MIN_SHARPNESS
from threadpoolctl import threadpool_limits
from torch import nn

from friday13_env.core.files import output_inside
from friday13_env.core.mlp import RAW_INPUT, MLPPolicy
from friday13_env.friday13.agents import make as make_agent
from friday13_env.friday13.agents.policy import Friday13PolicyAgent, input_scale
from friday13_env.friday13.batched import SelfPlayTables, make_batched
from friday13_env.friday13.batched.agents import BatchedAgent, BatchedPolicy, act_seated
from friday13_env.friday13.batched.encoding import relative_seats
from friday13_env.friday13.batched.engine import DUMMY_SLOT, HAND_SLOTS, GameBatch
from friday13_env.friday13.batched.seating import seat_learners
from friday13_env.friday13.cards import DECKS, NUM_PILES, get_deck
from friday13_env.friday13.encoding import omen_type_groups
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from friday13_env.friday13.evaluation import evaluate_agent
from friday13_env.friday13.features import INPUT_FEATURES, input_features
from friday13_env.friday13.rewards import REWARD_MODES

EVAL_SEED = 20_131_313
"""Seed of the periodic evaluations' deals (the same deals at every evaluation of every run)."""
MAX_SEATS = MAX_PLAYERS
MAX_TABLES = 1 << 20
MAX_NUM_STEPS = 1 << 16


# -- hyperparameters -------------------------------------------------------------------------------
DEFAULT_MAX_SNAPSHOTS = 4
"""The snapshots kept in the pool unless ``--max-snapshots`` says otherwise."""
MAX_SNAPSHOTS = 1_000
"""The most snapshots the pool may keep (``--max-snapshots``): each is a whole network held in memory (and a file in
``snapshots/``), and a pool of 1,000 past selves already draws each one about once in 1,000 pool games."""


@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default, bounds and help."""

    run_name: str = option("ppo", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    seed: int = option(0, "seeds the network, the deals, the opponents and the sampling", minimum=0, maximum=MAX_SEED)
    total_timesteps: int = option(
        24_000_000, "card plays to train for (every seat's, learner or not)", minimum=1, maximum=MAX_TIMESTEPS
    )
    players: list[int] = option(
        [3, 4, 5, 6],
        "table sizes, one drawn per game",
        minimum=MIN_PLAYERS,
        maximum=MAX_PLAYERS,
        unique=True,
    )
    deck: str = option("standard", "the deck of the tables", choices=sorted(DECKS))
    reward: str = option("relative", "reward mode (see friday13_env.friday13.rewards)", choices=sorted(REWARD_MODES))
    num_tables: int = option(1024, "tables played in lockstep", minimum=1, maximum=MAX_TABLES)
    num_steps: int = option(64, "card plays per table per rollout", minimum=1, maximum=MAX_NUM_STEPS)
    pool_share: float = option(
        0.75, "share of games where the learner holds one seat against the pool", minimum=0, maximum=1
    )
    pool_draw: str = option(
        "game",
        "how a pool game's other seats are filled: a member drawn for each seat, or one for the whole table (as the "
        "evaluation seats three copies of one baseline)",
        choices=["seat", "game"],
    )
    opponents: list[str] = option(
        ["cautious", "majority", "majority"],
        "the pool's fixed members: batched agent specs (random, cautious, majority, zoo names); one listed twice is "
        "drawn twice as often",
    )
    snapshot_every: int = option(
        0,
        "timesteps between frozen snapshots of the learner joining the pool (0 = none: the pool is --opponents)",
        minimum=0,
        maximum=MAX_TIMESTEPS,
    )
    max_snapshots: int = option(
        DEFAULT_MAX_SNAPSHOTS, "snapshots kept in the pool, the oldest leave first", minimum=1, maximum=MAX_SNAPSHOTS
    )
    pool_weighting: str = option(
        "uniform",
        "how pool members are drawn: uniformly (one listed twice twice as often), or pfsp (prioritised fictitious "
        "self-play): weighted by (1 - the learner's recent win share against each) ** --pfsp-power, so the members it "
        "still loses to are drawn most (friday13_training.pool_results)",
        choices=["uniform", "pfsp"],
    )
    pfsp_power: float = option(
        2.0, "with --pool-weighting pfsp: the power of its weights (0: uniform)", minimum=0, maximum=10
    )
    learning_rate: float = option(
        2.5e-3,
        "Adam learning rate (the actor's and, without --critic-learning-rate, the critic's), annealed linearly to 0",
        above=0,
        maximum=MAX_LEARNING_RATE,
    )
    update_epochs: int = option(4, "passes over each rollout", minimum=1, maximum=MAX_EPOCHS)
    minibatch_size: int = option(4096, "samples per gradient step", minimum=2)
    gamma: float = option(0.995, "discount per move of the same seat", minimum=0, maximum=1)
    gae_lambda: float = option(0.95, "GAE lambda", minimum=0, maximum=1)
    horizon: str = option(
        "round",
        "where a seat's chain of moves ends for the advantages and the value: each round's end (later rounds are "
        "dealt anew) or the game's",
        choices=["round", "game"],
    )
    clip_coef: float = option(0.2, "PPO clip range", above=0, maximum=MAX_CLIP)
    ent_coef: float = option(0.03, "entropy bonus", minimum=0, maximum=MAX_LOSS_WEIGHT)
    ent_anneal: bool = option(False, "anneal the entropy bonus linearly to 0 with the learning rate")
    magnet_coef: float = option(
        0.0,
        "weight of KL(policy || magnet) in the actor's loss: the pull toward a frozen copy of the actor, as in "
        "magnetic mirror descent (friday13_training.magnet); 0: no magnet",
        minimum=0,
        maximum=MAX_LOSS_WEIGHT,
    )
    magnet_every: int = option(
        0,
        "with --magnet-coef: the magnet becomes the actor as it is then at the first rollout's end at or past each "
        "multiple of this many timesteps (0: it stays the run's first actor)",
        minimum=0,
        maximum=MAX_TIMESTEPS,
    )
    vf_coef: float = option(0.5, "value loss weight", minimum=0, maximum=MAX_LOSS_WEIGHT)
    max_grad_norm: float = option(0.5, "gradient norm clip", above=0, maximum=MAX_GRAD_NORM)
    hidden_sizes: list[int] = option([192, 192], "hidden layer widths of the actor and the critic", minimum=1)
    input_features: str = option(
        RAW_INPUT,
        "what the networks read: the observation alone, or also derived inputs computed from it (majority_preview: "
        "each seat's points if the round ended now, and how each action would change them; "
        "friday13_env.friday13.features)",
        choices=list(INPUT_FEATURES),
    )
    actor: str = option(
        "type-shared",
        "the actor's network: a plain MLP, or type-shared (the three interchangeable omen types read and played "
        "with the same weights; each hidden width is split into one block per type, so it must be a multiple of "
        "3; exported as a plain MLP)",
        choices=["mlp", "type-shared"],
    )
    critic_sees_hands: bool = option(
        True, "the critic also sees the other hands (training only: the actor, and so the export, sees the observation)"
    )
    activation: str = option("tanh", "activation of the hidden layers", choices=["relu", "tanh"])
    eval_every: int = option(
        4_000_000, "timesteps between evaluations against the baselines (0 = never)", minimum=0, maximum=MAX_TIMESTEPS
    )
    eval_games: int = option(200, "duplicate-deal games per evaluation opponent", minimum=1, maximum=MAX_EVAL_GAMES)
    eval_opponents: list[str] = option(
        ["cautious", "majority"], "baselines of the periodic evaluation (--eval-players - 1 copies each): agent specs"
    )
    checkpoint_every: int = option(
        2_000_000,
        "timesteps between checkpoints (0 = only at the end; Ctrl-C or SIGTERM also saves one)",
        minimum=0,
        maximum=MAX_TIMESTEPS,
    )
    export: str = option("", "also copy the final numpy policy here, e.g. my_policy.npz")
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    progress: bool = option(True, "show a progress bar")
    device: str = option(
        "cpu",
        "where torch acts and learns: the CPU, or an NVIDIA GPU (cuda; the engine, the pool and the evaluations stay "
        "on the CPU)",
        choices=["cpu", "cuda"],
    )
    torch_threads: int = option(
        0,
        "CPU threads of torch and of numpy's BLAS (the update, the pool's snapshots, the evaluations); 0: one per core "
        "this process may use. Give 1 when another job holds a core: a second thread then waits on its work",
        minimum=0,
        maximum=MAX_TORCH_THREADS,
    )
    eval_players: int = option(4, "table size of the periodic evaluations", minimum=MIN_PLAYERS, maximum=MAX_PLAYERS)
    critic_warmup: int = option(
        0,
        "timesteps at the start in which only the critic learns (the actor keeps its first weights: with "
        "--init-policy, so that a fresh critic's noisy advantages do not move a trained actor)",
        minimum=0,
        maximum=MAX_TIMESTEPS,
    )
    init_policy: str = option(
        "",
        "start the actor from this numpy policy (a zoo name or an .npz path of the run's deck; a plain MLP with "
        "the run's --hidden-sizes, --activation and --input-features, --actor mlp). Empty: from scratch. A run "
        "started from a policy is not from scratch (training/best_response.py starts from its target)",
    )
    init_sharpness: float = option(
        1.0,
        "with --init-policy: the start's logits multiplied by this. Its greedy moves stay the policy's (exactly for a "
        "power of two, which scales floats without rounding); above 1 its samples are nearer to them, so PPO starts "
        "by improving the play the evaluation sees",
        minimum=MIN_SHARPNESS,
        maximum=MAX_SHARPNESS,
    )
    init_run: str = option(
        "",
        "start the actor and the critic from the last checkpoint of another train_ppo.py run (its folder): a new run, "
        "with its own pool, rates and schedule (Adam starts afresh), on from that run's networks (of the same "
        "--activation, --input-features, --actor, --critic-sees-hands and --deck, and as many hidden layers, each as "
        "wide or wider: new units start silent, friday13_training.widening). Learned from scratch if that run was "
        "(friday13_training.run_fork)",
    )
    critic_learning_rate: float = option(
        0.0,
        "Adam learning rate of the critic, annealed linearly to 0 with the actor's (0: --learning-rate). A fresh "
        "critic beside a trained actor (--init-policy) can learn faster than the actor may move",
        minimum=0,
        maximum=MAX_LEARNING_RATE,
    )


RUN_SETTINGS = (
    "run_name", "run_dir", "total_timesteps", "eval_every", "checkpoint_every", "export", "resume", "progress",
    "torch_threads", "device",
)  # fmt: skip
"""What ``--resume`` may change; every other field is a hyperparameter of the run, fixed when it starts."""
ADDED_LATER = {
    "pool_draw": "seat", "input_features": RAW_INPUT, "ent_anneal": False, "device": "cpu", "actor": "mlp",
    "eval_players": 4, "init_policy": "", "critic_warmup": 0, "init_sharpness": 1.0, "critic_learning_rate": 0.0,
    "pool_weighting": "uniform", "pfsp_power": 2.0, "init_run": "", "magnet_coef": 0.0, "magnet_every": 0,
}  # fmt: skip
"""Arguments added after release 0.6.0, with the value the runs recorded before them were trained with."""
AGENT_FIELDS = ("opponents", "eval_opponents", "init_policy")
"""The arguments that name agents: a ``module:factory`` there that only the record names is refused on ``--resume``
(``runs.check_recorded_factories``)."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help never drift apart; refuse bad values."""
    return parse_run_args(Args, __doc__, checked_args, argv)


def checked_args(args: Args) -> Args:
    """The checks of a whole configuration: bounds, agent specs, outputs; a ``ValueError`` listing every problem."""
    problems = field_errors(Args, dataclasses.asdict(args)) + name_problems(args)
    if args.minibatch_size > args.num_tables * args.num_steps:
        problems.append(
            f"--minibatch-size {args.minibatch_size} exceeds one rollout ({args.num_tables} x {args.num_steps})"
        )
    if args.horizon == "round" and args.reward == "win":
        problems.append(
            "--horizon round needs a reward paid every round (points, relative or rival); with --reward win use "
            "--horizon game"
        )
    if args.actor == "type-shared":
        if any(width % NUM_PILES for width in args.hidden_sizes):
            problems.append(
                f"--actor type-shared splits each hidden width into {NUM_PILES} blocks, one per omen type: "
                f"--hidden-sizes {' '.join(map(str, args.hidden_sizes))} has a width that is not a multiple of "
                f"{NUM_PILES}"
            )
        if args.input_features != RAW_INPUT:
            problems.append(
                f"--actor type-shared reads the observation alone: use --input-features {RAW_INPUT} "
                f"(not {args.input_features})"
            )
    deck = get_deck(args.deck)
    inputs = input_scale(args.deck, args.input_features).size
    problems += network_errors(args.hidden_sizes, inputs, deck.num_actions)
    rollout_bytes = rollout_memory(args, inputs, hidden_scale(args).size, deck.num_actions)
    sizes = f"--num-tables {args.num_tables} x --num-steps {args.num_steps}"
    if problem := rollout_error(sizes, rollout_bytes, "tables or steps"):
        problems.append(problem)
    if args.device == "cuda" and not torch.cuda.is_available():
        problems.append(f"--device cuda: this torch ({torch.__version__}) sees no CUDA device; use --device cpu")
    for spec in args.opponents:
        try:
            make_batched(spec, deck)
        except ValueError as error:
            problems.append(f"--opponents: {error}")
    problems += evaluation_opponent_errors(args.eval_opponents, deck)
    if not (args.resume or args.snapshot_every) and args.max_snapshots != DEFAULT_MAX_SNAPSHOTS:
        problems.append(
            f"--max-snapshots {args.max_snapshots} bounds the snapshots of --snapshot-every, which is 0 (no "
            "snapshots): give --snapshot-every, or leave --max-snapshots out"
        )
    if not args.resume and args.pool_share == 0 and args.pool_draw != "game":  # (a record before --pool-draw: seat)
        problems.append(
            f"--pool-draw {args.pool_draw} fills the pool's games, which --pool-share 0 never plays: give a "
            "--pool-share above 0, or leave --pool-draw out"
        )
    if args.snapshot_every and args.pool_share == 0:
        problems.append(
            f"--snapshot-every {args.snapshot_every}: snapshots join the pool, which --pool-share 0 never draws; give "
            "a --pool-share above 0, or leave --snapshot-every at 0"
        )
    if args.pool_weighting == "pfsp" and args.pool_share == 0:
        problems.append(
            "--pool-weighting pfsp weights the pool's draws, which --pool-share 0 never makes; give a "
            "--pool-share above 0, or leave --pool-weighting uniform"
        )
    elif args.pool_weighting == "uniform" and args.pfsp_power != 2:
        problems.append(f"--pfsp-power {args.pfsp_power:g} weights the draws of --pool-weighting pfsp: give it")
    if args.magnet_every and not args.magnet_coef:
        problems.append(
            f"--magnet-every {args.magnet_every} moves the magnet of --magnet-coef, which is 0 (no magnet): give "
            "--magnet-coef above 0, or leave --magnet-every out"
        )
    if args.init_run and args.init_policy:
        problems.append("--init-run and --init-policy both start the actor: give one")
    elif args.init_run and not args.resume:  # (a resumed run has its own networks: its source is not read again)
        problems += fork_problems(Path(args.init_run), fresh_progress(args), ADDED_LATER)
    if args.init_policy and not args.resume:  # (a resumed run loads its own networks: the start is not read again)
        problems += init_policy_errors(args)
    elif not args.init_policy and args.init_sharpness != 1:
        problems.append(f"--init-sharpness {args.init_sharpness:g} sharpens the start of --init-policy: give one")
    problems += output_errors([("--export", args.export, False), ("--run-dir", run_directory(args), True)])
    read_files = {
        "--init-policy": spec_files([args.init_policy] if args.init_policy else []),
        "--opponents": spec_files(args.opponents),
        "--eval-opponents": spec_files(args.eval_opponents),
    }
    problems += [
        problem
        for problem in (
            export_problem(args.export, {"--run-dir": run_directory(args)}, read_files),
            warmup_problem(args.critic_warmup, args.total_timesteps) if args.critic_warmup else None,
            source_export_problem(args),
        )
        if problem
    ]
    if problems:
        raise ValueError("; ".join(problems))
    return args


def source_export_problem(args: Args) -> str | None:
    """Why ``--export`` would write into the run ``--init-run`` starts from (its checkpoint, record or policy, which
    that run's ``--resume`` and the next fork read), or None."""
    if not (args.export and args.init_run):
        return None
    if output_inside({"--export": Path(args.export)}, {"--init-run": Path(args.init_run)}) is None:
        return None
    return (
        f"--export {args.export} is inside the run --init-run starts from ({args.init_run}): it would replace one of "
        "that run's files; write it outside that folder"
    )


def initial_policy(spec: str, deck: str) -> MLPPolicy:
    """The network ``--init-policy`` names (a zoo name or a checkpoint path), or a ``ValueError`` saying why not."""
    agent = make_agent(spec)
    if not isinstance(agent, Friday13PolicyAgent):
        raise ValueError(f"{spec!r} is not a network (a zoo name or an .npz policy): it has no weights to start from")
    if agent.policy.metadata.deck != deck:
        raise ValueError(f"{spec!r} plays the {agent.policy.metadata.deck!r} deck, the run the {deck!r} deck")
    return agent.policy


def init_policy_errors(args: Args) -> list[str]:
    """Why ``--init-policy`` cannot start this run's actor: a spec that is not a network of the deck, or a network
    of another shape than the run's (each difference named, with the policy's value)."""
    try:
        policy = initial_policy(args.init_policy, args.deck)
    except ValueError as error:
        return [f"--init-policy: {error}"]
    metadata = policy.metadata
    if not np.array_equal(policy.input_scale, input_scale(args.deck, metadata.input_features)):
        return [f"--init-policy {args.init_policy}: its inputs are scaled otherwise than this script scales them"]
    wanted: dict[str, tuple[str | list[int], str | list[int]]] = {
        "--hidden-sizes": (args.hidden_sizes, metadata.hidden_sizes),
        "--activation": (args.activation, metadata.activation),
        "--input-features": (args.input_features, metadata.input_features),
        "--actor": (args.actor, "mlp"),
    }

    def text(value: str | list[int]) -> str:
        return value if isinstance(value, str) else " ".join(map(str, value))

    problems = [
        f"--init-policy {args.init_policy}: needs {flag} {text(value)} (the run has {text(mine)})"
        for flag, (mine, value) in wanted.items()
        if mine != value
    ]
    with np.errstate(over="ignore"):
        sharpened = [np.float32(args.init_sharpness) * layer for layer in (policy.weights[-1], policy.biases[-1])]
    if not all(np.isfinite(layer).all() for layer in sharpened):
        problems.append(f"--init-sharpness {args.init_sharpness:g}: {args.init_policy}'s logits overflow float32")
    return problems


def rollout_memory(args: Args, inputs: int, hidden: int, num_actions: int) -> int:
    """Bytes of one rollout's arrays (``Rollout``: what the networks and the critic read, the mask, eleven bytes of
    bookkeeping and 32 of numbers per sample), twice: the update copies the samples it trains on."""
    per_sample = 4 * inputs + 4 * hidden + num_actions + 43
    return 2 * (CARRIED + args.num_steps) * args.num_tables * per_sample


def resumed_args(args: Args, given: set[str], progress: dict[str, Any], run_dir: Path) -> Args:
    """The run's recorded arguments, with the run settings this command line gives; changed hyperparameters
    are refused, each one listed. An ``--init-run`` written another way than the record's (``runs/a/`` for
    ``runs/a``) is the record's."""
    recorded = progress["args"].get("init_run", "")
    if "init_run" in given and recorded and args.init_run != recorded and Path(args.init_run) == Path(recorded):
        args = dataclasses.replace(args, init_run=recorded)
    return resumed_run_args(Args, args, given, progress, run_dir, RUN_SETTINGS, checked_args, ADDED_LATER, AGENT_FIELDS)


# -- the rollout -----------------------------------------------------------------------------------
CARRIED = MAX_SEATS
"""Rows before a rollout's plays: row ``s`` holds seat ``s``'s last move of the previous rollout if that move's
successor had not come yet. It is trained in this rollout, once its rewards and its successor are known, so no
reward that arrives across a rollout's end is lost and nothing is bootstrapped from a seat that is not to move."""
CARRIED_FIELDS = ("observations", "hidden", "masks", "actions", "log_probs", "values", "rewards", "seats", "valid")


@dataclass
class Rollout:
    """``CARRIED`` carried rows, then ``num_steps`` plays at every table; ``valid`` marks the learner's moves.

    ``next_row[r, n]`` is the row of the same seat's next learner move at table ``n`` (-1: none yet),
    ``done[r, n]`` that the seat's chain ended after it (at the round's or the game's end, ``--horizon``);
    ``open[r, n]`` marks the moves still waiting for their successor when the rollout ended (carried into the
    next rollout, not trained in this one).
    """

    observations: np.ndarray
    """What the networks read (the observation, then its derived inputs with ``--input-features``), ``(rows, N, I)``."""
    hidden: np.ndarray
    """What only the critic sees (``hidden_cards``), ``(rows, N, H)``."""
    masks: np.ndarray
    actions: np.ndarray
    log_probs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    seats: np.ndarray
    valid: np.ndarray
    next_row: np.ndarray
    done: np.ndarray
    open: np.ndarray

    @property
    def trained(self) -> np.ndarray:
        """The samples of this rollout's update: learner moves whose successor (or game end) is known."""
        return self.valid & ~self.open


class Tables:
    """The self-play tables and who sits where: per game, learner seats and pool opponents."""

    def __init__(self, args: Args, seed: int, results: dict[str, list[float]] | None = None) -> None:
        self.args = args
        self.rng = np.random.default_rng(seed)
        self.tables = SelfPlayTables(args.num_tables, args.players, args.deck, reward=args.reward, seed=seed)
        self.turn = self.tables.reset()
        self.pool: list[BatchedAgent] = [make_batched(spec, self.tables.batch.deck) for spec in args.opponents]
        self.members: list[str] = list(args.opponents)
        """The pool's names, entry by entry: ``--opponents``, then the snapshots'."""
        self.results = PoolResults(args.players, results)
        self.learner = np.ones((args.num_tables, MAX_SEATS), dtype=bool)
        self.opponent = np.zeros((args.num_tables, MAX_SEATS), dtype=np.int64)
        self.seat_games(np.arange(args.num_tables))
        self.last = np.full((args.num_tables, MAX_SEATS), -1, dtype=np.int64)
        """Row of each seat's latest learner move in ``previous`` (-1: none waiting for its successor)."""
        self.previous: Rollout | None = None

    def seat_games(self, games: np.ndarray) -> None:
        """For new games: pure self-play, or (``--pool-share``) one learner seat against pool members drawn for each
        seat or for the whole table (``--pool-draw``)."""
        seating = seat_learners(
            self.rng,
            games,
            self.tables.batch.num_players[games],
            pool_size=len(self.pool),
            share=self.args.pool_share,
            per_seat=self.args.pool_draw == "seat",
            weights=self.draw_weights(),
        )
        self.learner[games] = True
        self.learner[seating.games] = seating.learner_mask
        if seating.opponents is not None:
            self.opponent[seating.games] = seating.opponents

    def draw_weights(self) -> np.ndarray | None:
        """With ``--pool-weighting pfsp`` the probability of drawing each pool entry; ``None``: uniform."""
        if self.args.pool_weighting == "uniform" or not self.pool:
            return None
        return self.results.weights(self.members, self.args.pfsp_power)

    def set_snapshots(self, names: list[str], policies: list[BatchedAgent]) -> None:
        """The pool: the ``--opponents``, then these snapshots. A game under way goes on against the snapshot it was
        dealt (its index moves with it); one whose snapshot left the pool, against the newest."""
        fixed = len(self.args.opponents)
        place = {name: fixed + index for index, name in enumerate(names)}
        moved = np.arange(max(len(self.members), 1))
        for index, name in enumerate(self.members[fixed:], start=fixed):
            moved[index] = place.get(name, fixed + len(names) - 1)
        self.opponent = moved[self.opponent]
        self.pool = [*self.pool[:fixed], *policies]
        self.members = [*self.members[:fixed], *names]

    def record_results(self, games: np.ndarray, sizes: np.ndarray, scores: np.ndarray) -> None:
        """The learner's results in the finished ``games`` (of ``sizes``, final ``scores``) that it played against
        the pool, before their tables are seated anew (``PoolResults``; only ``--pool-weighting pfsp`` reads them)."""
        if self.args.pool_weighting == "uniform":
            return
        learner = self.learner[games]
        pooled = learner.sum(axis=1) == 1  # pure self-play seats the learner everywhere
        if not pooled.any():
            return
        games, sizes, learner = games[pooled], sizes[pooled], learner[pooled]
        shares = learner_shares(scores[pooled], sizes, learner)
        record_games(self.results, self.members, self.opponent[games], learner, shares, sizes)

    def opponent_actions(self, games: np.ndarray) -> np.ndarray:
        """The pool members' moves at ``games`` (each game's mover is one of them)."""
        return act_seated(self.pool, self.opponent, self.tables.batch, games, self.rng)


def hidden_cards(batch: GameBatch, games: np.ndarray, seats: np.ndarray, enabled: bool) -> np.ndarray:
    """The other hands as ``seats`` would see them if they were face up: clockwise from the next seat, then the
    dummy hand, ``(m, 6 * K)`` (empty seats hold nothing). For the critic only; ``(m, 0)`` when disabled."""
    if not enabled:
        return np.zeros((games.size, 0), dtype=np.float32)
    kinds = batch.deck.num_kinds
    others = relative_seats()[batch.num_players[games], seats][:, 1:]
    slots = np.concatenate([others, np.full((games.size, 1), DUMMY_SLOT)], axis=1)
    rows = games[:, None] * HAND_SLOTS + slots
    return batch.hands.reshape(-1, kinds).take(rows, axis=0).reshape(games.size, -1).astype(np.float32)


def hidden_scale(args: Args) -> np.ndarray:
    """1 / the most copies of each card kind, for every hand ``hidden_cards`` gives."""
    if not args.critic_sees_hands:
        return np.zeros(0, dtype=np.float32)
    counts = np.asarray(get_deck(args.deck).kind_counts, dtype=np.float32)
    return np.tile(1.0 / counts, MAX_SEATS)


def on(args: Args, array: np.ndarray) -> torch.Tensor:
    """``array`` as a tensor on the run's ``--device`` (shared with numpy on the CPU, copied to a GPU)."""
    return torch.from_numpy(array).to(args.device)


def collect(
    tables: Tables, model: ActorCritic, args: Args, generator: torch.Generator, clock: dict[str, float] | None = None
) -> Rollout:
    """Play ``num_steps`` cards at every table: the learner's moves sampled from the actor, the pool's by the pool.

    ``clock`` (seconds by part) gains the time of the forward passes, the pool's moves and the engine (its step and
    the next observations)."""
    clock = {} if clock is None else clock
    rows, n = CARRIED + args.num_steps, args.num_tables
    size, num_actions = model.scale.numel(), tables.turn.masks.shape[1]
    rollout = Rollout(
        observations=np.zeros((rows, n, size), dtype=np.float32),
        hidden=np.zeros((rows, n, model.hidden_scale.numel()), dtype=np.float32),
        masks=np.zeros((rows, n, num_actions), dtype=bool),
        actions=np.zeros((rows, n), dtype=np.int64),
        log_probs=np.zeros((rows, n), dtype=np.float32),
        values=np.zeros((rows, n), dtype=np.float32),
        rewards=np.zeros((rows, n), dtype=np.float32),
        seats=np.zeros((rows, n), dtype=np.int64),
        valid=np.zeros((rows, n), dtype=bool),
        next_row=np.full((rows, n), -1, dtype=np.int64),
        done=np.zeros((rows, n), dtype=bool),
        open=np.zeros((rows, n), dtype=bool),
    )
    last = tables.last
    waiting_game, waiting_seat = np.nonzero(last >= 0)
    if waiting_game.size:  # the previous rollout's open moves become this one's carried rows
        assert tables.previous is not None
        source = last[waiting_game, waiting_seat]
        for name in CARRIED_FIELDS:
            getattr(rollout, name)[waiting_seat, waiting_game] = getattr(tables.previous, name)[source, waiting_game]
        last[waiting_game, waiting_seat] = waiting_seat
    everyone = np.arange(n)
    tables.results.age(tables.members)
    for row in range(CARRIED, rows):
        turn = tables.turn
        seats = turn.seats
        mine = np.flatnonzero(tables.learner[everyone, seats])
        actions = np.empty(n, dtype=np.int64)
        if mine.size:
            inputs = model.inputs(turn.observations[mine])
            hidden = hidden_cards(tables.tables.batch, mine, seats[mine], args.critic_sees_hands)
            tick = time.perf_counter()
            with torch.no_grad():
                observations = on(args, inputs)
                logits = model.logits(observations, on(args, turn.masks[mine]))
                uniform = torch.rand(logits.shape, generator=generator).clamp_(1e-20, 1.0)  # the CPU's: one stream
                chosen = (logits - torch.log(-torch.log(uniform.to(args.device)))).argmax(dim=1)  # Gumbel-max
                log_probs = torch.log_softmax(logits, dim=1).gather(1, chosen[:, None]).squeeze(1)
                values = model.value(observations, on(args, hidden))
            clock["forward"] = clock.get("forward", 0.0) + time.perf_counter() - tick
            actions[mine] = chosen.cpu().numpy()
            rollout.observations[row, mine] = inputs
            rollout.hidden[row, mine] = hidden
            rollout.masks[row, mine] = turn.masks[mine]
            rollout.actions[row, mine] = actions[mine]
            rollout.log_probs[row, mine] = log_probs.cpu().numpy()
            rollout.values[row, mine] = values.cpu().numpy()
            rollout.seats[row, mine] = seats[mine]
            rollout.valid[row, mine] = True
            previous = last[mine, seats[mine]]
            linked = previous >= 0
            rollout.next_row[previous[linked], mine[linked]] = row
            last[mine, seats[mine]] = row
        theirs = np.flatnonzero(~tables.learner[everyone, seats])
        tick = time.perf_counter()
        if theirs.size:
            actions[theirs] = tables.opponent_actions(theirs)
        tock = time.perf_counter()
        tables.turn = tables.tables.step(actions)
        clock["opponents"] = clock.get("opponents", 0.0) + tock - tick
        clock["engine"] = clock.get("engine", 0.0) + time.perf_counter() - tock
        rewarded_game, rewarded_seat = np.nonzero((tables.turn.rewards != 0) & (last >= 0))
        rollout.rewards[last[rewarded_game, rewarded_seat], rewarded_game] += tables.turn.rewards[
            rewarded_game, rewarded_seat
        ]
        over = np.flatnonzero(tables.turn.round_over if args.horizon == "round" else tables.turn.game_over)
        if over.size:
            ended_game, ended_seat = np.nonzero(last[over] >= 0)
            rollout.done[last[over[ended_game], ended_seat], over[ended_game]] = True
            last[over] = -1
        new_games = np.flatnonzero(tables.turn.game_over)
        if new_games.size:
            tables.record_results(new_games, turn.num_players[new_games], tables.turn.final_scores[new_games])
            tables.seat_games(new_games)
    open_game, open_seat = np.nonzero(last >= 0)
    rollout.open[last[open_game, open_seat], open_game] = True
    tables.previous = rollout
    return rollout


# -- the advantages --------------------------------------------------------------------------------
def advantages(rollout: Rollout, gamma: float, gae_lambda: float) -> np.ndarray:
    """GAE along each seat's own chain of moves: a move's successor is the same seat's next move, none after the
    chain's end (``done``: the round's or the game's end). Moves still open (no successor yet) get 0 here: they
    are trained in the next rollout."""
    rows, n = rollout.rewards.shape
    result = np.zeros((rows, n), dtype=np.float32)
    tables = np.arange(n)
    for row in reversed(range(rows)):
        following = rollout.next_row[row]
        linked = following > row
        ahead = np.where(linked, following, 0)
        next_value = np.where(linked, rollout.values[ahead, tables], 0.0)
        next_advantage = np.where(linked, result[ahead, tables], 0.0)
        delta = rollout.rewards[row] + gamma * next_value - rollout.values[row]
        result[row] = np.where(rollout.trained[row], delta + gamma * gae_lambda * next_advantage, 0.0)
    return result


# -- the update ------------------------------------------------------------------------------------
def update(
    model: ActorCritic, optimizer: torch.optim.Optimizer, rollout: Rollout, advantage: np.ndarray, args: Args,
    generator: torch.Generator, ent_coef: float, actor_learns: bool = True, magnet: nn.Module | None = None,
) -> dict[str, float]:  # fmt: skip
    """Clipped-surrogate PPO over the learner's samples, with entropy bonus ``ent_coef`` and, with a ``magnet``,
    ``--magnet-coef`` times the KL divergence from it (``friday13_training.magnet``); returns the mean losses.
    Without ``actor_learns`` (``--critic-warmup``) only the value loss is minimised."""
    valid = rollout.trained
    observations = on(args, rollout.observations[valid])
    hidden = on(args, rollout.hidden[valid])
    masks = on(args, rollout.masks[valid])
    actions = on(args, rollout.actions[valid])
    old_log_probs = on(args, rollout.log_probs[valid])
    gains = on(args, advantage[valid])
    returns = gains + on(args, rollout.values[valid])
    samples = int(valid.sum())
    stats: dict[str, list[float]] = {"policy_loss": [], "value_loss": [], "entropy": [], "clip_fraction": []}
    if magnet is not None:
        stats["magnet_kl"] = []
    for _ in range(args.update_epochs):
        order = torch.randperm(samples, generator=generator).to(args.device)
        for start in range(0, samples, args.minibatch_size):
            batch = order[start : start + args.minibatch_size]
            if batch.numel() < 2:
                continue
            logits = model.logits(observations[batch], masks[batch])
            log_probs = torch.log_softmax(logits, dim=1)
            new_log_probs = log_probs.gather(1, actions[batch, None]).squeeze(1)
            entropy = -(log_probs.exp() * log_probs).sum(dim=1).mean()
            ratio = (new_log_probs - old_log_probs[batch]).exp()
            gain = gains[batch]
            gain = (gain - gain.mean()) / (gain.std() + 1e-8)
            policy_loss = torch.max(-gain * ratio, -gain * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
            value_loss = 0.5 * (model.value(observations[batch], hidden[batch]) - returns[batch]).pow(2).mean()
            if actor_learns:  # (this order of the terms: the same float rounding as the runs made before the warm-up)
                loss = policy_loss + args.vf_coef * value_loss - ent_coef * entropy
            else:
                loss = args.vf_coef * value_loss
            if magnet is not None:
                with torch.no_grad():
                    magnet_log_probs = torch.log_softmax(model.logits(observations[batch], masks[batch], magnet), dim=1)
                with torch.set_grad_enabled(actor_learns):  # (--critic-warmup: only reported)
                    divergence = magnet_kl(log_probs, magnet_log_probs, masks[batch])
                if actor_learns:
                    loss = loss + args.magnet_coef * divergence
                stats["magnet_kl"].append(divergence.item())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            optimizer.step()
            stats["policy_loss"].append(policy_loss.item())
            stats["value_loss"].append(value_loss.item())
            stats["entropy"].append(entropy.item())
            stats["clip_fraction"].append(((ratio - 1).abs() > args.clip_coef).float().mean().item())
    return {name: float(np.mean(values)) if values else 0.0 for name, values in stats.items()}


# -- evaluation and the snapshot pool --------------------------------------------------------------
def record_evaluation(
    model: ActorCritic, args: Args, steps: int, seconds: float, progress: dict[str, Any], run_dir: Path, writer: Any,
    clock: dict[str, float],
) -> None:  # fmt: skip
    """Duplicate-deal win rates at ``--eval-players`` against copies of each baseline (the package's evaluation),
    added to the learning curve (with ``seconds``, the run's wall clock as the evaluation began, from which the
    time to a given strength is read), TensorBoard and the console."""
    tick = time.perf_counter()
    agent = Friday13PolicyAgent(model.policy(args, "evaluation", {"timesteps": steps}), name="learner")
    rates = evaluate_agent(
        agent, args.eval_opponents, args.eval_games, num_players=args.eval_players, seed=EVAL_SEED, deck=args.deck
    )
    point = {"timesteps": steps, "seconds": seconds, **{name: rate.mean for name, rate in rates.items()}}
    progress["curve"].append(point)
    write_curve(run_dir, progress["curve"], curve_columns(args))
    if writer is not None:
        for name, rate in rates.items():
            writer.add_scalar(f"eval/win_rate_vs_{name}", rate.mean, steps)
    print_win_rates(steps, rates, args.eval_players)
    clock["evaluate"] += time.perf_counter() - tick


def curve_columns(args: Args) -> list[str]:
    """The columns of ``learning_curve.csv``: a point's timesteps, seconds and a win rate per baseline (a point
    written before 0.11.0 has no seconds: its cell is empty)."""
    return ["timesteps", "seconds", *args.eval_opponents]


def add_snapshot(
    model: ActorCritic, args: Args, run_dir: Path, progress: dict[str, Any], tables: Tables, steps: int
) -> None:
    """Freeze the actor into the opponent pool (sampling, as it trains); the oldest snapshot leaves when full."""
    name = f"snapshot_{steps}"
    (run_dir / "snapshots").mkdir(exist_ok=True)
    model.export(run_dir / "snapshots" / f"{name}.npz", args, f"self-play snapshot at {steps:,} timesteps", {})
    progress["snapshots"] = [*progress["snapshots"], name][-args.max_snapshots :]
    # (dropped files are deleted once progress.json no longer names them: save_run)
    load_snapshots(run_dir, progress["snapshots"], args, tables, reader=None)


def load_snapshots(run_dir: Path, names: list[str], args: Args, tables: Tables, reader: Reader | None) -> None:
    """The snapshots ``names`` into the pool, after the ``--opponents`` (sampling, as the learner does): those a
    resumed run's record names (``reader`` ``RESUME``: a damaged one is named for ``--resume``), or those of the pool
    the run has just changed (``None``: named for no flag, a new run is no resume)."""
    tables.set_snapshots(
        names, [BatchedPolicy(read_snapshot(run_dir, name, args.deck, reader), name, greedy=False) for name in names]
    )


# -- the run ---------------------------------------------------------------------------------------
def summed_clock(earlier: dict[str, float], session: dict[str, float]) -> dict[str, float]:
    """The seconds each part of the loop took over every session: the record's ``clock``, as its ``seconds``."""
    return {part: earlier.get(part, 0.0) + seconds for part, seconds in session.items()}


def adam(model: ActorCritic, args: Args) -> torch.optim.Adam:
    """One Adam over both networks at ``--learning-rate``, or with ``--critic-learning-rate`` a parameter group for
    each at its own rate (``learning_rates``)."""
    rates = learning_rates(args)
    if len(rates) == 1:
        return torch.optim.Adam(model.parameters(), lr=rates[0], eps=1e-5)
    networks = (model.actor, model.critic)
    groups = [{"params": network.parameters(), "lr": rate} for network, rate in zip(networks, rates, strict=True)]
    return torch.optim.Adam(groups, eps=1e-5)


def learning_rates(args: Args) -> list[float]:
    """The learning rate of each of ``adam``'s parameter groups at the start (the actor's, then with
    ``--critic-learning-rate`` the critic's); the loop anneals them linearly to 0."""
    return [args.learning_rate] + ([args.critic_learning_rate] if args.critic_learning_rate else [])


def thread_count(requested: int) -> int:
    """``--torch-threads``: the number given, or for 0 the cores this process may run on."""
    if requested:
        return requested
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def fresh_progress(args: Args) -> dict[str, Any]:
    """A new run's record: its arguments, no timesteps, snapshots or curve points yet (the schema a resumed run's
    record is checked against)."""
    return {"args": dataclasses.asdict(args), "timesteps": 0, "snapshots": [], "curve": [], "seconds": 0.0}


def train(args: Args, given: set[str], script: str = SCRIPT, marks: dict[str, Any] | None = None) -> Path:
    """The run ``args`` describes; returns its directory. Ctrl-C or SIGTERM (``Interrupted``) saves the run as it was
    at the start of the rollout under way, and ``--resume`` goes on from there. ``script``: the script whose run it
    is (``best_response.py`` trains with this loop), recorded by a new run; a run of the other one is not resumed
    (``check_started_by``), nor is a new run started in a folder that holds another run (``OTHER_RUN_FILES``), nor
    a run whose ``snapshots/`` is a link (``check_own_folder``: the run deletes files there). ``marks``: fields the
    script adds to the run's record (``best_response.py``'s target fingerprint, which it checks itself on a
    resume). A kill's leftovers are recovered on ``--resume`` only, in a folder that holds a run of this script
    (``recover_checkpoint``): a refused command deletes nothing."""
    run_dir = run_directory(args)
    fresh = fresh_progress(args)
    check_own_folder(run_dir, "snapshots")
    if args.resume:
        recover_checkpoint(run_dir, fresh)
    progress = open_run(
        run_dir, args.resume, fresh, CHECKPOINT, extra_keys=PROGRESS_EXTRA_KEYS, other_checkpoints=OTHER_RUN_FILES
    )
    if args.resume:
        check_started_by(run_dir, progress, script)
        args = resumed_args(args, given, progress, run_dir)
        check_win_rate_curve(run_dir / "progress.json", progress, args.eval_opponents)
        problem = state_problem(progress.get(POOL_RESULTS, {}))
        if problem is None and STARTED_FROM in progress:
            problem = started_from_problem(progress[STARTED_FROM])
        if problem is None and RESUMED_AT in progress:
            problem = resumed_at_problem(progress[RESUMED_AT], progress["timesteps"])
        if problem is not None:
            raise RunError(
                f"--resume: {run_dir / 'progress.json'} is damaged: {problem}; restore it or start a new run"
            )
        progress["args"] = dataclasses.asdict(args)
    else:
        progress["script"] = script  # (not in the template ``fresh``: the records of earlier releases have none)
        progress[RESUMED_AT] = []
    for key, value in (marks or {}).items():  # a record of an earlier release gets them on its first resume
        progress.setdefault(key, value)
    threads = thread_count(args.torch_threads)
    torch.set_num_threads(threads)
    threadpool_limits(threads, user_api="blas")  # numpy's matrix products: a busy core stalls extra threads
    torch.manual_seed(args.seed)
    seed = session_seed(args.seed, progress["timesteps"])  # this session's: the deals and the sampling
    generator = torch.Generator().manual_seed(seed)
    deck = get_deck(args.deck)
    model = ActorCritic(
        input_scale(args.deck, args.input_features), hidden_scale(args), deck.num_actions, args.hidden_sizes,
        args.activation, input_features(args.input_features, deck),
        omen_type_groups(deck) if args.actor == "type-shared" else None,
    )  # fmt: skip
    if args.init_policy and not args.resume:  # a resume loads its own
        model.load_actor(initial_policy(args.init_policy, args.deck), args.init_sharpness)
    model = model.to(args.device)
    if args.init_run and not args.resume:  # a resume loads its own
        progress[STARTED_FROM] = start_from(Path(args.init_run), model, args.device, fresh_progress(args), ADDED_LATER)
    magnet = frozen_copy(model.actor) if args.magnet_coef else None  # the run's first actor, or a resume's own
    optimizer = adam(model, args)
    if args.resume:
        load_checkpoint(run_dir, model, optimizer, args.device, progress["timesteps"], magnet)
    done = progress["timesteps"]
    if done >= args.total_timesteps:
        print(f"{run_dir} is finished: {done:,} timesteps (raise --total-timesteps to go on)", flush=True)
        export_copy(run_dir, args.export)
        return run_dir
    if args.resume:
        progress[RESUMED_AT] = [*progress.get(RESUMED_AT, []), done]
    tables = Tables(args, seed=seed, results=progress.get(POOL_RESULTS))
    load_snapshots(run_dir, progress["snapshots"], args, tables, reader=RESUME if args.resume else None)
    writer = tensorboard(run_dir)
    per_rollout = args.num_tables * args.num_steps
    next_eval = next_multiple(done, args.eval_every)
    next_checkpoint = next_multiple(done, args.checkpoint_every)
    next_snapshot = next_multiple(done, args.snapshot_every)
    next_magnet = next_multiple(done, args.magnet_every)
    bar = progress_bar(args.progress, args.total_timesteps, done)
    clock = dict.fromkeys(("collect", "engine", "opponents", "forward", "advantages", "update", "evaluate"), 0.0)
    earlier_clock = dict(progress.get("clock", {}))  # the sessions before this one (the record keeps their sum)
    session_start, session_done = time.perf_counter(), done
    started = session_start - progress["seconds"]
    saved = done if args.resume else None  # the timesteps of the checkpoint on disk
    boundary = Boundary.of(done, model, optimizer, progress, magnet)
    try:
        if done == 0 and args.eval_every and not progress["curve"]:  # (a run stopped at 0 may have its first point)
            record_evaluation(model, args, 0, time.perf_counter() - started, progress, run_dir, writer, clock)
        while done < args.total_timesteps:
            if args.pool_weighting == "pfsp":
                progress[POOL_RESULTS] = tables.results.state()
            boundary = Boundary.of(done, model, optimizer, progress, magnet)
            fraction = 1.0 - done / args.total_timesteps
            for group, rate in zip(optimizer.param_groups, learning_rates(args), strict=True):
                group["lr"] = fraction * rate
            ent_coef = fraction * args.ent_coef if args.ent_anneal else args.ent_coef
            tick = time.perf_counter()
            rollout = collect(tables, model, args, generator, clock)
            clock["collect"] += time.perf_counter() - tick
            tick = time.perf_counter()
            gains = advantages(rollout, args.gamma, args.gae_lambda)
            clock["advantages"] += time.perf_counter() - tick
            tick = time.perf_counter()
            actor_learns = done >= args.critic_warmup
            stats = update(model, optimizer, rollout, gains, args, generator, ent_coef, actor_learns, magnet)
            clock["update"] += time.perf_counter() - tick
            done += per_rollout
            check_finite(model, stats, done, saved)
            if writer is not None:
                for name, value in stats.items():
                    writer.add_scalar(f"losses/{name}", value, done)
                if (elapsed := time.perf_counter() - started) > 0:  # (a clock may not have moved)
                    writer.add_scalar("charts/steps_per_second", done / elapsed, done)
                if args.pool_weighting == "pfsp":
                    for name in dict.fromkeys(tables.members):  # the learner's estimated win share against each
                        writer.add_scalar(f"pool/win_share_vs_{name}", tables.results.win_share(name), done)
            if bar is not None:
                bar.update(per_rollout)
            if done >= next_snapshot:
                next_snapshot = next_multiple(done, args.snapshot_every)
                add_snapshot(model, args, run_dir, progress, tables, done)
            if magnet is not None and done >= next_magnet:
                next_magnet = next_multiple(done, args.magnet_every)
                move_magnet(magnet, model.actor)
            if done >= next_eval or (done >= args.total_timesteps and args.eval_every):
                next_eval = next_multiple(done, args.eval_every)
                record_evaluation(model, args, done, time.perf_counter() - started, progress, run_dir, writer, clock)
            if done >= next_checkpoint or done >= args.total_timesteps:
                next_checkpoint = next_multiple(done, args.checkpoint_every)
                progress["timesteps"] = done
                progress["seconds"] = time.perf_counter() - started
                progress["clock"] = summed_clock(earlier_clock, clock)
                if args.pool_weighting == "pfsp":
                    progress[POOL_RESULTS] = tables.results.state()
                save_run(run_dir, model, optimizer, args, progress, magnet=magnet)
                saved = done
        if bar is not None:
            bar.close()
        if writer is not None:
            writer.close()
        export_copy(run_dir, args.export)
    except Interrupted as stop:
        if saved is None or saved < boundary.timesteps:
            progress = boundary.restore(model, optimizer, magnet)
            progress["timesteps"] = boundary.timesteps
            progress["seconds"] = time.perf_counter() - started
            progress["clock"] = summed_clock(earlier_clock, clock)
            save_run(run_dir, model, optimizer, args, progress, magnet=magnet)
            write_curve(run_dir, progress["curve"], curve_columns(args))
            saved = boundary.timesteps
        stop.saved = f"the checkpoint at {saved:,} timesteps is in {run_dir}: --resume goes on from it"
        raise
    seconds = time.perf_counter() - session_start
    split = ", ".join(f"{name} {value:.0f} s" for name, value in clock.items())  # engine/opponents/forward: of collect
    print(
        f"done: {done:,} timesteps ({done - session_done:,} in this session in {seconds:.0f} s, "
        f"{steps_per_second(done - session_done, seconds)}; {split}); {run_dir}",
        flush=True,
    )
    return run_dir


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    run_main(Args, parse_args, train, argv)


if __name__ == "__main__":
    main()
