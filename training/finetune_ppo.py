"""Fine-tune a policy with MaskablePPO against scripted opponents (how ``ensemble-v1``'s PPO teachers were made).

This is the SB3 recipe behind ``checkpoints/ppo_finetuned.npz`` and ``checkpoints/members/`` (see
``checkpoints/README.md``), kept so that those teachers can be rebuilt (by their recipe: since 0.27.0 environment k
deals from seed x 1,024 + k, not from seed + k as in their runs, so their commands now deal other games); to train
from scratch, use ``training/train_ppo.py`` (self-play PPO on the batched engine).

Reads top to bottom (CleanRL style): hyperparameters, environment construction, the callbacks that
checkpoint / evaluate / grow the self-play pool, then the training loop. Every hyperparameter is a
field of ``Args`` and a command-line flag (``python training/finetune_ppo.py --help``).

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``), every file written atomically
(a temporary file, then a rename: an interrupted run never leaves half a file):
  ``last.zip``        the full SB3 model (weights + optimizer): ``--resume`` continues it
  ``progress.json``   the run's arguments, timesteps done, snapshot names, learning-curve points
  ``policy.npz``      the exported numpy policy (``friday13_env.agents.load`` plays it without torch)
  ``snapshots/``      frozen self-play opponents (numpy policies)
  ``learning_curve.csv`` the evaluations of the last checkpoint (none before the first); TensorBoard logs in ``tb/``

Every flag is checked before anything is built: bounds (``--n-steps 0``, ``--gamma 5``), agent specs
(``--opponents`` and ``--eval-opponents`` take what ``friday13_env.agents.make`` takes: ``cautious``,
``search:budget=600``, a zoo name such as ``ensemble-v1`` or a checkpoint path), the policy to start
from, and that the outputs can be written. ``--resume`` continues the run as it was started (its
arguments are in ``progress.json``): a flag left out keeps the run's value, a run setting given
(``--total-timesteps``, ``--eval-every``, ``--checkpoint-every``, ``--export``, ``--subprocess``,
``--progress``, ``--torch-threads``) changes it, and a hyperparameter given with another value than
the run's is refused, the error listing each one; so what the export records is what was trained.
Resuming a finished run exports it and stops; a damaged ``last.zip`` or ``progress.json`` (its learning curve
included), or a missing snapshot, is an error that names the file. A resumed session deals and samples from a seed
of its own, drawn from the run's seed and its timesteps (``runs.session_seed``; the record's ``resumed_at`` lists
where), as ``train_ppo.py``'s does: reproducible, but not the run its command makes from scratch. Nothing in
``last.zip`` is unpickled (SB3's pickled entries are rebuilt from the run's arguments, and any other is refused:
``maskable_ppo.checkpoint_data``), and an agent factory (``module:factory``) that only the record names is refused,
never imported.

By default a run *fine-tunes* the shipped distilled search policy: ``--init-policy`` starts the actor
(and the observation scale) from ``checkpoints/search_distilled.npz``, the critic starts fresh, and
``--critic-warmup`` keeps the actor frozen for the first 30,000 timesteps so that the critic learns
the policy's values before its advantages move the actor; a small learning rate and entropy bonus
then train it without forgetting what it was taught. ``--init-temperature 0.1`` first divides the
start's logits by 10 (its greedy moves stay the same): the distilled policy is soft (how soft:
``python -m benchmarks.policy_confidence``), so PPO would otherwise learn from sampled moves much
weaker than those the greedy policy plays. What the default run reaches: ``docs/training.md``.
The policy to start from must have the run's deck, activation and hidden sizes.

From scratch: ``python training/finetune_ppo.py
--init-policy '' --critic-warmup 0 --learning-rate 5e-4 --ent-coef 0.01 --total-timesteps 1000000``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from friday13_training.friday13_agents import checked_specs, policy_file, spec_files
from friday13_training.imitation import EVAL_SEED
from friday13_training.maskable_ppo import (
    ACTIVATIONS,
    RunError,
    check_checkpoint,
    close_vec_env,
    export_copy,
    hyperparameter_error,
    new_maskable_ppo,
    next_multiple,
    open_run,
    resume_model,
    save_model,
    vectorize,
)
from friday13_training.ppo_checkpoint import CHECKPOINT as PPO_CHECKPOINT
from friday13_training.ppo_checkpoint import RESUMED_AT, resumed_at_problem
from friday13_training.reporting import print_win_rates, write_curve
from friday13_training.runs import (
    MAX_SEED,
    MAX_TIMESTEPS,
    Interrupted,
    check_own_folder,
    check_win_rate_curve,
    checkpoint_reach,
    export_problem,
    load_progress,
    name_problems,
    parse_run_args,
    resumed_run_args,
    run_directory,
    run_main,
    session_seed,
    warmup_problem,
)
from friday13_training.script_args import (
    MAX_CLIP,
    MAX_EVAL_GAMES,
    MAX_LEARNING_RATE,
    MAX_LOSS_WEIGHT,
    MAX_TORCH_THREADS,
    atomic_write_text,
    field_errors,
    flag_name,
    network_errors,
    option,
    output_error,
    rollout_error,
    sb3_rollout_bytes,
)
from friday13_training.torch_policy import (
    MAX_SHARPNESS,
    MIN_SHARPNESS,
    load_linear_layers,
    read_matching_policy,
    save_linear_layers,
    sb3_actor_layers,
)
from sb3_contrib import MaskablePPO
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv

import friday13_env  # noqa: F401 - registers the Gymnasium ids
from friday13_env.core.checkpoint import CheckpointError
from friday13_env.core.mlp import MLPPolicy
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.agents.policy import (
    Friday13PolicyAgent,
    observation_scale,
    policy_metadata,
    read_friday13_policy,
)
from friday13_env.friday13.cards import DECKS, get_deck
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from friday13_env.friday13.evaluation import evaluate_agent
from friday13_env.friday13.rewards import REWARD_MODES

# -- hyperparameters -------------------------------------------------------------------------------
MAX_NUM_ENVS = 1024
"""The most environments a run steps (``--num-envs``): each in its own process by default, and more processes than
any machine's cores only wait on each other."""


@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default, bounds and help."""

    run_name: str = option("ppo", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    seed: int = option(
        0,
        "seeds the model, the environments (environment k deals from seed x 1,024 + k) and the evaluations",
        minimum=0,
        maximum=MAX_SEED,
    )
    total_timesteps: int = option(500_000, "learner decisions to train for, in all", minimum=1, maximum=MAX_TIMESTEPS)
    players: list[int] = option(
        [3, 4, 5, 6],
        "table sizes, one drawn per episode",
        minimum=MIN_PLAYERS,
        maximum=MAX_PLAYERS,
        unique=True,
    )
    deck: str = option("standard", "the deck of the tables", choices=sorted(DECKS))
    opponents: list[str] = option(
        ["cautious", "majority"],
        "opponent pool, each seat draws one per episode: agent specs (name, name:key=value, zoo name or .npz path)",
    )
    reward: str = option("relative", "reward mode of the environment", choices=sorted(REWARD_MODES))
    self_play: bool = option(False, "add frozen snapshots of the learner to the opponent pool")
    snapshot_every: int = option(200_000, "timesteps between self-play snapshots", minimum=1)
    max_snapshots: int = option(
        5, "self-play snapshots kept in the pool, oldest leave first (no snapshots: --no-self-play)", minimum=1
    )
    num_envs: int = option(8, "environments stepped per rollout", minimum=1, maximum=MAX_NUM_ENVS)
    subprocess: bool = option(
        True, "step every environment in its own process (SubprocVecEnv); --no-subprocess steps all in this one"
    )
    learning_rate: float = option(3e-5, "Adam learning rate (from scratch: 5e-4)", above=0, maximum=MAX_LEARNING_RATE)
    n_steps: int = option(256, "rollout length per environment", minimum=1)
    batch_size: int = option(512, "minibatch size, at most --n-steps x --num-envs", minimum=2)
    n_epochs: int = option(10, "passes over each rollout", minimum=1)
    gamma: float = option(0.99, "discount factor", minimum=0, maximum=1)
    gae_lambda: float = option(0.95, "GAE lambda", minimum=0, maximum=1)
    clip_range: float = option(0.2, "PPO clip range", above=0, maximum=MAX_CLIP)
    ent_coef: float = option(0.001, "entropy bonus (from scratch: 0.01)", minimum=0, maximum=MAX_LOSS_WEIGHT)
    vf_coef: float = option(0.5, "value loss weight", minimum=0, maximum=MAX_LOSS_WEIGHT)
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the actor and the critic", minimum=1)
    activation: str = option("relu", "activation of the hidden layers", choices=sorted(ACTIVATIONS))
    init_policy: str = option(
        "checkpoints/search_distilled.npz",
        "start the actor and the observation scale from this policy (a zoo name or an .npz path; a relative path"
        " is looked up from the working directory, then from the repository); '' trains from scratch",
    )
    init_temperature: float = option(
        0.1,
        "divide the --init-policy's logits by this (< 1 sharpens): PPO improves the moves it samples, so they"
        " should be the moves the greedy policy plays (the reciprocal of train_ppo.py's --init-sharpness, and"
        " bounded as it is)",
        minimum=1 / MAX_SHARPNESS,
        maximum=1 / MIN_SHARPNESS,
    )
    critic_warmup: int = option(
        30_000,
        "first timesteps in which only the critic learns (the actor stays frozen); below --total-timesteps",
        minimum=0,
    )
    eval_every: int = option(100_000, "timesteps between evaluations against the baselines (0 = never)", minimum=0)
    eval_games: int = option(
        200, "4-player duplicate-deal games per evaluation opponent", minimum=1, maximum=MAX_EVAL_GAMES
    )
    eval_opponents: list[str] = option(
        ["cautious", "majority"], "baselines the periodic evaluation plays: agent specs, as --opponents"
    )
    checkpoint_every: int = option(100_000, "timesteps between checkpoints (0 = only at the end)", minimum=0)
    export: str = option("", "also copy the final numpy policy here, e.g. my_policy.npz")
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    progress: bool = option(True, "show a progress bar")
    torch_threads: int = option(1, "torch CPU threads of the learner process", minimum=1, maximum=MAX_TORCH_THREADS)


RUN_SETTINGS = (
    "run_name", "run_dir", "total_timesteps", "subprocess", "eval_every", "checkpoint_every", "export", "resume",
    "progress", "torch_threads",
)  # fmt: skip
"""What ``--resume`` may change; every other field is a hyperparameter of the run, fixed when it starts."""
OTHER_RUN_FILES = ("progress.json", PPO_CHECKPOINT)
"""What another run leaves in a folder without ``last.zip``: any run script's record, ``train_ppo.py``'s checkpoint
(a run of this script writes ``last.zip`` first). A new run there is refused (``open_run``, which refuses
``distill.py``'s files too): it would write over them."""
AGENT_FIELDS = ("opponents", "eval_opponents")
"""The arguments that name agents: a ``module:factory`` there that only the record names is refused on ``--resume``
(``runs.check_recorded_factories``)."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help can never drift apart; refuse bad values."""
    return parse_run_args(Args, __doc__, checked_args, argv)


def checked_args(args: Args) -> Args:
    """The checks that need more than one flag, the agents and the files; returns ``args`` with the agent specs
    in canonical form. A ``ValueError`` says what is wrong, before anything is built."""
    problem = hyperparameter_error(args) or warmup_problem(args.critic_warmup, args.total_timesteps)
    if problem:
        raise ValueError(problem)
    problems = field_errors(Args, dataclasses.asdict(args)) + name_problems(args)
    problems += network_errors(args.hidden_sizes, observation_scale(args.deck).size, get_deck(args.deck).num_actions)
    sizes = f"--n-steps {args.n_steps} x --num-envs {args.num_envs}"
    rollout_bytes = sb3_rollout_bytes(args.deck, args.n_steps, args.num_envs)
    if not problems and (problem := rollout_error(sizes, rollout_bytes, "steps or environments")):
        problems.append(problem)
    if problems:
        raise ValueError("; ".join(problems))
    problem = output_error(run_directory(args), directory=True)
    if problem:
        raise ValueError(f"--run-dir: {problem}")
    problem = output_error(args.export) if args.export else None
    if problem:
        raise ValueError(f"--export: {problem}")
    opponents = checked_specs(args.opponents, "--opponents", args.deck)
    eval_opponents = checked_specs(args.eval_opponents, "--eval-opponents", args.deck, unique=True)
    args = dataclasses.replace(args, opponents=opponents, eval_opponents=eval_opponents)
    inputs = {
        "--init-policy": spec_files([args.init_policy] if args.init_policy else []),
        "--opponents": spec_files(args.opponents),
        "--eval-opponents": spec_files(args.eval_opponents),
    }
    problem = export_problem(args.export, {"--run-dir": run_directory(args)}, inputs)
    if problem:
        raise ValueError(problem)
    if not args.resume:  # a resumed run's actor and scale come from its own files
        try:
            initial_policy(args)
        except CheckpointError as error:
            raise ValueError(f"--init-policy: {error} (--init-policy '' trains from scratch)") from error
    return args


def initial_policy(args: Args) -> MLPPolicy | None:
    """The policy named by ``--init-policy``, checked against the run's deck and network, or None."""
    if not args.init_policy:
        return None
    path = policy_file(args.init_policy)
    return read_matching_policy(path, deck=args.deck, activation=args.activation, hidden_sizes=args.hidden_sizes)


# -- resuming --------------------------------------------------------------------------------------
def resumed_args(args: Args, given: set[str], run_dir: Path, progress: dict[str, Any]) -> Args:
    """The arguments a resumed run goes on with (``runs.resumed_run_args``): the run's own, recorded in
    ``progress.json``, with the run settings the command line gives, in the folder it is in (``run_dir``, whatever
    the record says). A ``RunError`` if the record holds an argument this script does not know, if the command line
    gives a hyperparameter another value than the run has (its agent specs compared in their canonical form), if
    the record is damaged, or if it names an agent factory that the command line does not
    (``check_recorded_factories``, before any agent is built). An argument the run did not record (an older script)
    keeps this command line's value, unless the command line gives it as a hyperparameter: then the run's value is
    unknown, and the flag is refused as a change."""
    known = {field.name for field in dataclasses.fields(Args)}
    unknown = sorted(set(progress["args"]) - known)
    if unknown:
        raise RunError(f"--resume: {run_dir / 'progress.json'} records arguments this script does not know: {unknown}")
    canonical: dict[str, list[str]] = {}
    try:  # agent specs compare in their canonical form: "search: budget=50" is "search:budget=50"
        for name in ("opponents", "eval_opponents"):
            canonical[name] = [REGISTRY.check(spec).label for spec in getattr(args, name)]
    except ValueError as error:
        raise RunError(f"{flag_name(name)}: {error}") from error
    args = dataclasses.replace(args, opponents=canonical["opponents"], eval_opponents=canonical["eval_opponents"])
    # what the run did not record (an older script) keeps this command line's value, where the command gives none
    unrecorded = {name: value for name, value in dataclasses.asdict(args).items() if name not in given}

    def refusal(changed: list[str]) -> str:
        return (
            f"--resume continues {run_dir} with the hyperparameters it was started with; the command line changes:\n  "
            + "\n  ".join(changed)
            + "\nleave these flags out to keep the run's values, or start a new run (another --run-name) to change them"
        )

    return resumed_run_args(
        Args,
        args,
        given,
        progress,
        run_dir,
        RUN_SETTINGS,
        checked_args,
        added_later=unrecorded,
        agent_fields=AGENT_FIELDS,
        changed_refusal=refusal,
    )


def check_run_files(run_dir: Path, progress: dict[str, Any]) -> np.ndarray:
    """The run's observation scale, from its ``policy.npz``; every file the run still needs is checked here, so
    that a damaged or missing one is named before training starts rather than met in the middle of it."""
    for name in progress["snapshots"]:
        path = run_dir / "snapshots" / f"{name}.npz"
        try:
            read_friday13_policy(path)
        except CheckpointError as error:
            raise RunError(f"--resume: self-play snapshot {name!r} listed in progress.json: {error}") from error
    try:
        return read_friday13_policy(run_dir / "policy.npz").input_scale
    except CheckpointError as error:
        raise RunError(f"--resume: {error} (every checkpoint writes it beside last.zip)") from error


# -- environments ----------------------------------------------------------------------------------
class ScaledObservation(gym.ObservationWrapper):
    """Divide each entry by its upper bound so that every input lies in [0, 1].

    The same ``scale`` is stored in the exported policy, so numpy inference sees identical inputs.
    """

    def __init__(self, env: gym.Env, scale: np.ndarray) -> None:
        super().__init__(env)
        self.scale = scale
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=scale.shape, dtype=np.float32)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return (observation * self.scale).astype(np.float32)

    def action_masks(self) -> np.ndarray:
        return self.env.unwrapped.action_masks()  # type: ignore[attr-defined]


def make_env(args: Args, rank: int, scale: np.ndarray) -> Callable[[], gym.Env]:
    def thunk() -> gym.Env:
        env = gym.make(
            "friday13_env/Friday13-v0",
            num_players=args.players,
            opponent_pool=args.opponents,
            deck=args.deck,
            reward=args.reward,
            disable_env_checker=True,
        )
        return ScaledObservation(env, scale)

    return thunk


def make_vec_env(args: Args, scale: np.ndarray) -> VecEnv:
    """The run's environments, not yet dealt: they deal at their first reset, as training starts (``seed_session``)."""
    return vectorize([make_env(args, rank, scale) for rank in range(args.num_envs)], args.subprocess)


def seed_session(model: BaseAlgorithm, vec_env: VecEnv, seed: int) -> None:
    """Seed a working session of the run from its own ``seed`` (``runs.session_seed``: the run's seed for a fresh run,
    one drawn from it and the timesteps done for a resumed one, which SB3's ``load`` would set up with the run's seed
    again, dealing the first session's games): torch's sampling noise, numpy and the action space from ``seed``, and
    environment k from ``seed * MAX_NUM_ENVS + k``, a seed no environment of another session seed deals from (SB3
    alone seeds it ``seed + k``: seed 1's environments were seed 0's shifted by one)."""
    model.set_random_seed(seed)
    vec_env.seed(seed * MAX_NUM_ENVS)  # after set_random_seed, which seeds them seed + k


# -- the model ------------------------------------------------------------------------------------
def build_model(args: Args, vec_env: VecEnv, run_dir: Path, init: MLPPolicy | None = None) -> MaskablePPO:
    """A fresh MaskablePPO; with ``init`` its actor starts as that policy (the critic starts fresh)."""
    model = new_maskable_ppo(args, vec_env, run_dir)
    if init is not None:
        layers = sb3_actor_layers(model)
        load_linear_layers(layers, init)
        with torch.no_grad():
            layers[-1].weight.div_(args.init_temperature)
            layers[-1].bias.div_(args.init_temperature)
    return model


def set_actor_trainable(model: BaseAlgorithm, trainable: bool) -> None:
    """Freeze or thaw the actor's weights; frozen, PPO's updates move only the critic."""
    for layer in sb3_actor_layers(model):
        for parameter in layer.parameters():
            parameter.requires_grad_(trainable)


# -- exporting the numpy policy --------------------------------------------------------------------
def export_policy(model: BaseAlgorithm, args: Args, scale: np.ndarray, path: Path, training: dict[str, Any]) -> None:
    """Copy the actor's weights out of torch into a safe ``.npz`` checkpoint (atomically)."""
    description = f"MaskablePPO run {args.run_name!r}"
    if args.init_policy:
        description += f", started from {Path(args.init_policy).name}"
    metadata = policy_metadata(args.deck, args.activation, args.hidden_sizes, description, training)
    save_linear_layers(path, sb3_actor_layers(model), scale, metadata)


# -- callbacks: checkpoints, evaluation, self-play -------------------------------------------------
class TrainingCallback(BaseCallback):
    """Checkpoints, periodic evaluation against the baselines, and the self-play snapshot pool."""

    def __init__(self, args: Args, run_dir: Path, scale: np.ndarray, progress: dict[str, Any]) -> None:
        super().__init__()
        self.args = args
        self.run_dir = run_dir
        self.scale = scale
        self.progress = progress
        self.started = time.time()
        self.earlier_wall_time = progress["wall_time_s"]  # spent by the runs this one resumes
        self.next_checkpoint = next_multiple(progress["timesteps"], args.checkpoint_every)
        self.next_eval = next_multiple(progress["timesteps"], args.eval_every)
        self.next_snapshot = next_multiple(progress["timesteps"], args.snapshot_every)

    def _on_training_start(self) -> None:
        if self.args.self_play and self.progress["snapshots"]:
            self._publish_pool()
        if self.args.eval_every and self.progress["timesteps"] == 0:
            self._evaluate(0)  # a fresh run's curve starts from the initial policy (what a fine-tune starts from)

    def _on_rollout_end(self) -> None:
        """Called between collecting a rollout and training on it: the critic warm-up freezes the actor."""
        set_actor_trainable(self.model, self.num_timesteps > self.args.critic_warmup)

    def _on_step(self) -> bool:
        steps = self.num_timesteps
        if steps >= self.next_snapshot and self.args.self_play:
            self.next_snapshot += self.args.snapshot_every
            self._snapshot(steps)
        if steps >= self.next_eval:
            self.next_eval += self.args.eval_every
            self._evaluate(steps)
        if steps >= self.next_checkpoint:
            self.next_checkpoint += self.args.checkpoint_every
            self.save(steps)
        return True

    def training_record(self, steps: int) -> dict[str, Any]:
        return {
            "timesteps": steps,
            "wall_time_s": round(self.earlier_wall_time + time.time() - self.started, 1),
            "args": dataclasses.asdict(self.args),
        }

    def save(self, steps: int) -> None:
        """Model, numpy policy and progress, each written to a temporary file and renamed (progress last, so
        that it never records a checkpoint that is not on disk)."""
        save_model(self.model, self.run_dir)
        record = self.training_record(steps)
        export_policy(self.model, self.args, self.scale, self.run_dir / "policy.npz", record)
        self.progress.update(timesteps=steps, wall_time_s=record["wall_time_s"], args=record["args"])
        atomic_write_text(self.run_dir / "progress.json", json.dumps(self.progress, indent=1))

    def _current_agent(self, steps: int, name: str) -> Friday13PolicyAgent:
        path = self.run_dir / "snapshots" / f"{name}.npz"
        export_policy(self.model, self.args, self.scale, path, self.training_record(steps))
        return Friday13PolicyAgent(read_friday13_policy(path), name=name)

    def _snapshot(self, steps: int) -> None:
        name = f"snapshot_{steps}"
        self._current_agent(steps, name)
        self.progress["snapshots"] = [*self.progress["snapshots"], name][-self.args.max_snapshots :]
        self._publish_pool()

    def _publish_pool(self) -> None:
        paths = [str(self.run_dir / "snapshots" / f"{name}.npz") for name in self.progress["snapshots"]]
        self.training_env.env_method("set_opponent_pool", [*self.args.opponents, *paths])

    def _evaluate(self, steps: int) -> None:
        agent = self._current_agent(steps, "eval_current")
        rates = evaluate_agent(
            agent, self.args.eval_opponents, self.args.eval_games, num_players=4, seed=EVAL_SEED, deck=self.args.deck
        )
        point: dict[str, Any] = {"timesteps": steps}
        for opponent, rate in rates.items():
            point[opponent] = rate.mean
            self.logger.record(f"eval/win_rate_vs_{opponent}", rate.mean)
        self.progress["curve"].append(point)
        print_win_rates(steps, rates)
        write_curve(self.run_dir, self.progress["curve"], curve_columns(self.args))


def curve_columns(args: Args) -> list[str]:
    """The columns of ``learning_curve.csv``: a point's timesteps and a win rate per baseline."""
    return ["timesteps", *args.eval_opponents]


# -- the run ----------------------------------------------------------------------------------------
def fresh_progress(args: Args) -> dict[str, Any]:
    return {"timesteps": 0, "wall_time_s": 0.0, "snapshots": [], "curve": [], "args": dataclasses.asdict(args)}


def train(args: Args, given: set[str]) -> None:
    """The run ``args`` describes (``given``: the flags the command line set, which ``--resume`` compares)."""
    run_dir = run_directory(args)
    check_own_folder(run_dir, "snapshots")
    progress = open_run(run_dir, args.resume, fresh_progress(args), other_checkpoints=OTHER_RUN_FILES)
    if args.resume:
        args = resumed_args(args, given, run_dir, progress)
        check_win_rate_curve(run_dir / "progress.json", progress, args.eval_opponents)
        if RESUMED_AT in progress and (problem := resumed_at_problem(progress[RESUMED_AT], progress["timesteps"])):
            raise RunError(
                f"--resume: {run_dir / 'progress.json'} is damaged: {problem}; restore it or start a new run"
            )
        reach = checkpoint_reach([progress["args"], dataclasses.asdict(args)], args.n_steps * args.num_envs)
        recorded = progress["timesteps"]
        check_checkpoint(run_dir, progress, reach)
        scale = check_run_files(run_dir, progress)
        if recorded >= args.total_timesteps:  # (one whose checkpoint is ahead of its record trains 0 steps, saving)
            print(
                f"{run_dir} is finished: {progress['timesteps']:,} timesteps done, --total-timesteps "
                f"{args.total_timesteps:,}; nothing to train (raise --total-timesteps to go on)",
                flush=True,
            )
            export_copy(run_dir, args.export)
            return
        progress[RESUMED_AT] = [*progress.get(RESUMED_AT, []), progress["timesteps"]]
        init = None
    else:
        progress[RESUMED_AT] = []  # (not in fresh_progress: the records of earlier releases have none)
        init = initial_policy(args)
        scale = observation_scale(args.deck) if init is None else init.input_scale
    torch.set_num_threads(args.torch_threads)
    vec_env = make_vec_env(args, scale)
    try:
        if args.resume:
            model = resume_model(run_dir, vec_env, progress, args)
        else:
            model = build_model(args, vec_env, run_dir, init)
        seed_session(model, vec_env, session_seed(args.seed, progress["timesteps"]))
        callback = TrainingCallback(args, run_dir, scale, progress)
        model.learn(
            total_timesteps=max(0, args.total_timesteps - progress["timesteps"]),
            callback=callback,
            reset_num_timesteps=not args.resume,
            progress_bar=args.progress,
            tb_log_name="ppo",
        )
        callback.save(model.num_timesteps)
    except Interrupted as stop:
        saved = saved_record(run_dir, args)
        if saved is not None:  # the curve as the checkpoint left it: the evaluations after it are dropped with it
            write_curve(run_dir, saved["curve"], curve_columns(args))
        else:  # no checkpoint yet: no point of the curve has a record to go with
            (run_dir / "learning_curve.csv").unlink(missing_ok=True)
        stop.saved = saved_checkpoint(run_dir, saved)
        raise
    finally:
        close_vec_env(vec_env)
    export_copy(run_dir, args.export)
    print(f"done: {model.num_timesteps:,} timesteps; run directory {run_dir}", flush=True)


def saved_record(run_dir: Path, args: Args) -> dict[str, Any] | None:
    """The record of a stopped run's last checkpoint (``progress.json`` beside ``last.zip``), read back and checked,
    or None where there is none yet (or it cannot be read: ``--resume`` names the damage)."""
    if not (run_dir / "last.zip").is_file():
        return None
    try:
        return load_progress(run_dir / "progress.json", fresh_progress(args))
    except (FileNotFoundError, ValueError):
        return None


def saved_checkpoint(run_dir: Path, saved: dict[str, Any] | None) -> str:
    """What a stopped run leaves for ``--resume`` (its last checkpoint's record, ``saved``), in one line."""
    if saved is None:
        return "nothing was saved (no checkpoint yet); start the run again, without --resume"
    files = "last.zip, progress.json"
    return f"the checkpoint at {saved['timesteps']:,} timesteps is in {run_dir} ({files}): --resume goes on from it"


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    run_main(Args, parse_args, train, argv)


if __name__ == "__main__":
    main()
