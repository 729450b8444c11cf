"""Self-play PPO for Friday the 13th on Ray RLlib's new API stack, from one machine to a cluster (one file).

The same training as ``train_ppo.py``'s, written the RLlib way, for users who scale out on Ray: one shared policy
(the RLModule ``learner``) plays every seat, and through the policy mapping a share of the games
(``--opponent-share``) seats it once against heuristic or frozen opponents (``--opponents``: batched agent
specs such as ``cautious``, zoo names, or policies exported by an earlier run), which are not trained.
``--address`` joins a running Ray cluster (``auto``: the one ``ray start --head`` started on this machine);
without it the script starts a local Ray. Every other flag means the same on a laptop and on a cluster.

How a runner samples many tables: each runner's vector env is the package's RLlib adapter,
:class:`~friday13_env.friday13.batched.rllib.BatchedTables` (its module docstring gives the design, and why),
whose ``--num-envs-per-env-runner`` sub-environments are the tables of one ``GameBatch`` stepped together. Episodes,
GAE, the PPO loss, checkpoints and metrics stay RLlib's own. An agent ID is ``seat + 6 * module number`` (0: the
learner, ``k``: ``--opponents[k - 1]``), so the policy mapping is a pure function of the ID. Rewards (``relative``
by default: the table's mean points minus the seat's own, at each round's end) are credited to the seat that
earned them, and each seat's moves form their own chain for GAE, as in ``train_ppo.py``.

The network: actor and critic MLPs (RLlib's ``TorchMLP``) on the observation scaled as the package's
policies scale it; illegal actions get no probability. The actor is exactly the package's numpy policy
format, so ``--export`` writes a file that ``friday13_env.agents.load`` plays without Ray or torch. The
periodic evaluation plays that exported file in the package's duplicate-deal tournament (4 players, three
copies of each ``--eval-opponents`` agent, the deals of ``train_ppo.py``'s evaluations).

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``):
  ``checkpoint/``        RLlib's own checkpoint (``Algorithm.save_to_path``): ``--resume`` restores it
  ``progress.json``      the run's arguments, iterations and timesteps done, learning-curve points
  ``policy.npz``         the exported numpy policy (also copied to ``--export``)

``--resume`` continues the run with its recorded hyperparameters (one given with another value is refused,
each listed); the run settings (``--iterations``, ``--address``, ``--num-env-runners``,
``--num-envs-per-env-runner``, ``--eval-every``, ``--checkpoint-every``, ``--export``) may change, so a run
started on one machine can go on on a cluster. The batch is ``--train-batch-size`` card plays whatever the
number of runners. A resumed run deals from a seed derived from the run's seed and its iterations.

Trust: RLlib's checkpoint is Python pickles (``algorithm_state.pkl``, ``class_and_ctor_args.pkl``, the
``state.pkl`` files), and RLlib has no way to restore one without unpickling it, so ``--resume`` runs whatever
code the pickles in the run folder hold. Resume only run folders you made or trust (never one downloaded or
copied from someone else); ``train_ppo.py``'s checkpoints load with no code run. A damaged checkpoint is a
one-line error naming it. A new checkpoint is written beside the old one and swapped in, so a stop at any moment
leaves a whole one (``--resume`` puts back one a stop left aside); the record is written after it, and a
checkpoint found ahead of the record (a stop between the two) moves the record up, one behind it is refused.
Ctrl-C or SIGTERM stops the run with one line naming the last checkpoint, which ``--resume`` goes on from.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``). Timings and the cluster recipe:
docs/other-libraries.md.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
from friday13_training.rllib_args import RUN_SETTINGS, Args, checked_args, opponent_source, run_directory
from friday13_training.runs import (
    MAX_TIMESTEPS,
    Interrupted,
    RunError,
    check_win_rate_curve,
    checkpoint_reach,
    export_copy,
    lock_run,
    next_multiple,
    open_run,
    parse_run_args,
    read_progress,
    recover_folder_checkpoint,
    resumed_run_args,
    run_main,
    save_folder_checkpoint,
    session_seed,
)
from friday13_training.script_args import atomic_write_text

from friday13_env.core.extras import RLLIB_EXTRA, missing_extra
from friday13_env.friday13.agents.policy import (
    load_policy_agent,
    observation_scale,
    policy_metadata,
)
from friday13_env.friday13.batched import make_batched
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.evaluation import evaluate_agent

try:  # the rllib extra: Ray RLlib and torch
    import ray
    import torch
    from friday13_training.torch_policy import save_linear_layers
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.torch.primitives import TorchMLP
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from torch import nn

    from friday13_env.friday13.batched.rllib import (
        TablesOptions,
        module_number,
        observation_space,
        use_batched_tables,
    )
except ModuleNotFoundError as missing:  # every class here builds on RLlib's: one line, for --help too
    if not missing_extra(missing, "training/train_rllib.py", RLLIB_EXTRA):
        raise
    if __name__ == "__main__":  # run as a script: the line alone, not a traceback
        raise SystemExit(f"error: {missing.msg}") from None
    raise missing from None

LEARNER = "learner"
"""The RLModule that plays every learner seat and is the only one trained."""
EVAL_SEED = 20_131_313
"""Seed of the periodic evaluations' deals: ``train_ppo.py``'s, so that the two scripts' curves compare."""
CHECKPOINT = "checkpoint"
"""The run's RLlib checkpoint folder (``save_run``)."""
RESTORE_ERRORS = (
    pickle.UnpicklingError, EOFError, OSError, AttributeError, ImportError, IndexError, KeyError, TypeError, ValueError,
    RuntimeError,
)  # fmt: skip
"""What RLlib's restore raises for a damaged checkpoint: unpickling garbage, a truncated or missing file, a pickle of
another structure, a class that is not there, torch refusing weights of another shape (``load_state_dict``'s
``RuntimeError``); ``build_algorithm`` names the checkpoint for them."""


# -- the command line ------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help never drift apart; refuse bad values."""
    return parse_run_args(Args, __doc__, checked_args, argv)


# -- the tables: many per runner (friday13_env.friday13.batched.rllib) ----------------------------
def module_name(index: int) -> str:
    """Module number ``index``: 0 is the learner, ``k`` the frozen opponent ``--opponents[k - 1]``."""
    return LEARNER if index == 0 else f"opponent{index - 1}"


def module_of(agent: Any, episode: Any = None, **kwargs: Any) -> str:
    """The policy mapping: the module an agent ID names (``config.multi_agent(policy_mapping_fn=...)``)."""
    return module_name(module_number(agent))


# -- the modules -----------------------------------------------------------------------------------
class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Actor and critic MLPs on the scaled observation; the actor's logits of illegal actions are masked out.

    ``model_config``: ``deck``, ``hidden_sizes``, ``activation``. The actor is an MLP of linear layers and
    activations only, the package's numpy policy format (``export_policy``).
    """

    scale: torch.Tensor
    """The package's input scale (``observation_scale``), a buffer: saved and synced with the weights."""

    def setup(self) -> None:
        config = cast(dict[str, Any], self.model_config)
        deck = get_deck(config["deck"])
        scale = observation_scale(deck.name)
        self.register_buffer("scale", torch.as_tensor(scale))
        hidden, activation = list(config["hidden_sizes"]), config["activation"]
        self.actor = TorchMLP(
            input_dim=scale.size,
            hidden_layer_dims=hidden,
            hidden_layer_activation=activation,
            output_dim=deck.num_actions,
        )
        self.critic = TorchMLP(
            input_dim=scale.size, hidden_layer_dims=hidden, hidden_layer_activation=activation, output_dim=1
        )
        layers = self.actor_layers()
        for layer in layers:  # as train_ppo.py starts its actor (CleanRL's initialisation)
            nn.init.orthogonal_(layer.weight, np.sqrt(2))
            nn.init.zeros_(layer.bias)
        nn.init.orthogonal_(layers[-1].weight, 0.01)  # near-uniform first moves

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        logits = self.actor(observation["observation"] * self.scale)
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(observation["action_mask"] == 0, FLOAT_MIN)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.critic(batch[Columns.OBS]["observation"] * self.scale).squeeze(-1)

    def actor_layers(self) -> list[nn.Linear]:
        """The actor's linear layers, input to logits (activations between them: ``activation``)."""
        return [layer for layer in self.actor.modules() if isinstance(layer, nn.Linear)]


class BatchedAgentModule(RLModule):
    """A frozen opponent: a batched agent of the package (``model_config["agent"]``, a spec or an ``MLPPolicy``)
    answering for every table at once. Never trained (not in ``policies_to_train``)."""

    def setup(self) -> None:
        config = cast(dict[str, Any], self.model_config)
        self.agent = make_batched(config["agent"], get_deck(config["deck"]))
        self.rng = np.random.default_rng(config["seed"])

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        masks = np.asarray(observation["action_mask"]).astype(bool)
        return {Columns.ACTIONS: self.agent.act_batch(np.asarray(observation["observation"]), masks, self.rng)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.agent.name} is a frozen opponent: it is not trained")


def module_specs(args: Args) -> dict[str, RLModuleSpec]:
    """The learner's spec and one frozen module per ``--opponents`` entry, for the tables of ``--players``."""
    space = observation_space(args.deck, args.players)
    actions: gym.Space = gym.spaces.Discrete(get_deck(args.deck).num_actions)
    network = {"deck": args.deck, "hidden_sizes": args.hidden_sizes, "activation": args.activation}
    specs = {LEARNER: RLModuleSpec(module_class=MaskedActorCritic, model_config=network)}
    for index, opponent in enumerate(args.opponents):
        agent = {"agent": opponent_source(opponent), "deck": args.deck, "seed": args.seed + index}
        specs[module_name(index + 1)] = RLModuleSpec(module_class=BatchedAgentModule, model_config=agent)
    for spec in specs.values():
        spec.observation_space, spec.action_space = space, actions
    return specs


def ppo_config(args: Args, seed: int) -> PPOConfig:
    """PPO on the new API stack, any environment: the modules, the mapping, the runners and the hyperparameters."""
    specs = module_specs(args)
    return (
        PPOConfig()
        .environment(disable_env_checking=True, normalize_actions=False)  # discrete actions: nothing to rescale
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
        )
        .multi_agent(policies=list(specs), policy_mapping_fn=module_of, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.learning_rate,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            clip_param=args.clip_coef,
            entropy_coeff=args.ent_coef,
            vf_loss_coeff=args.vf_coef,
            grad_clip=args.max_grad_norm,
            grad_clip_by="global_norm",
            use_kl_loss=False,
            vf_clip_param=float("inf"),
        )
        .debugging(seed=seed)
    )


def table_options(args: Args) -> TablesOptions:
    """The options of the run's :class:`BatchedTables` (``use_batched_tables``)."""
    return {
        "players": args.players,
        "deck": args.deck,
        "reward": args.reward,
        "num_opponents": len(args.opponents),
        "opponent_share": args.opponent_share,
    }


# -- evaluation, checkpoints, resume ---------------------------------------------------------------
def learner_module(algo: Algorithm) -> MaskedActorCritic:
    module = algo.get_module(LEARNER)
    assert isinstance(module, MaskedActorCritic)
    return module


def export_policy(module: MaskedActorCritic, args: Args, path: Path, progress: dict[str, Any]) -> Path:
    """The learner's actor written to ``path`` in the package's numpy format, atomically."""
    training = {
        "command": "python training/train_rllib.py",
        "args": dataclasses.asdict(args),
        **progress_summary(progress),
    }
    description = "self-play PPO on Ray RLlib (training/train_rllib.py)"
    metadata = policy_metadata(args.deck, args.activation, args.hidden_sizes, description, training)
    save_linear_layers(path, module.actor_layers(), module.scale.numpy(), metadata)
    return path


def progress_summary(progress: dict[str, Any]) -> dict[str, int]:
    return {"iterations": progress["iterations"], "timesteps": progress["timesteps"]}


def record_evaluation(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """Export the actor, then play the exported file: duplicate-deal win rates at 4 players against three copies
    of each baseline (the package's evaluation), added to the learning curve and printed."""
    agent = load_policy_agent(export_policy(learner_module(algo), args, run_dir / "policy.npz", progress), name=LEARNER)
    rates = evaluate_agent(agent, args.eval_opponents, args.eval_games, num_players=4, seed=EVAL_SEED, deck=args.deck)
    progress["curve"].append({"timesteps": progress["timesteps"], **{name: rate.mean for name, rate in rates.items()}})
    summary = ", ".join(f"{name} {rate}" for name, rate in rates.items())
    print(f"[eval @ {progress['timesteps']:,} steps] 4-player win rate vs 3 copies of: {summary}", flush=True)


def save_run(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """RLlib's checkpoint, then the exported policy and the progress record (never ahead of the checkpoint). The new
    checkpoint is written beside the old one and swapped in (``save_folder_checkpoint``), so a save cut short at any
    moment leaves a whole checkpoint: the old one, put back by ``--resume`` (``recover_checkpoint``) where the stop
    left it aside, or the new one, ahead of the record, which ``--resume`` then moves up (``match_restored``)."""
    save_folder_checkpoint(run_dir, CHECKPOINT, lambda folder: algo.save_to_path(str(folder.resolve())))
    write_record(algo, args, run_dir, progress)


def write_record(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """The exported policy, then the progress record, of the checkpoint on disk."""
    export_policy(learner_module(algo), args, run_dir / "policy.npz", progress)
    atomic_write_text(run_dir / "progress.json", json.dumps(progress, indent=1))


def recover_checkpoint(run_dir: Path, fresh: dict[str, Any]) -> None:
    """Put back the checkpoint a save cut short left without ``checkpoint/`` (``recover_folder_checkpoint``), for
    ``--resume`` only and in a folder holding a run of this script's (a record that reads as one; anything else is
    left as it is, for ``open_run`` to refuse), once the folder's lock is held (``lock_run``: a ``RunError`` if
    another process runs there)."""
    leftovers = [run_dir / f"{CHECKPOINT}.{part}" for part in ("old", "new")]
    if (run_dir / CHECKPOINT).exists() or not any(leftover.is_dir() for leftover in leftovers):
        return
    try:
        read_progress(run_dir / "progress.json", fresh)
    except RunError:
        return
    lock_run(run_dir)
    recovered = recover_folder_checkpoint(run_dir, CHECKPOINT)
    if recovered is not None:
        print(f"note: a save was cut short: {run_dir / recovered} is the run's checkpoint again", flush=True)


def restored_counts(algo: Algorithm, checkpoint: Path) -> tuple[int, int]:
    """The iterations and the card plays (RLlib's lifetime count of sampled env steps) of the restored ``algo``, or a
    ``RunError`` naming its ``checkpoint`` where they are not counts."""
    iterations = algo.iteration
    steps = algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0)
    counts = isinstance(iterations, int) and isinstance(steps, int | float) and not isinstance(steps, bool)
    if not counts or not math.isfinite(steps) or steps != int(steps) or min(iterations, steps) < 0:
        raise RunError(
            f"--resume: {checkpoint} is damaged: it holds {iterations!r} iterations and {steps!r} card plays, not "
            "counts; restore it or start a new run"
        )
    return iterations, int(steps)


def match_restored(algo: Algorithm, run_dir: Path, progress: dict[str, Any], most_ahead: int) -> bool:
    """Check the restored ``algo``'s iterations and card plays against ``progress.json``, as ``match_checkpoint`` does
    ``train_ppo.py``'s timesteps: a checkpoint behind the record (or of as many iterations but other card plays) is a
    ``RunError``; one ahead (a run stopped between writing the two) by at most ``most_ahead`` iterations (a checkpoint
    interval) moves ``progress`` up to it, and True is returned. Further ahead, or past ``MAX_TIMESTEPS``, is a
    ``RunError`` too."""
    checkpoint = run_dir / CHECKPOINT
    iterations, steps = restored_counts(algo, checkpoint)
    recorded = progress["iterations"], progress["timesteps"]
    if (iterations, steps) == recorded:
        return False
    held = (
        f"--resume: {checkpoint} holds {iterations} iterations ({steps:,} card plays) but {run_dir / 'progress.json'} "
        f"records {recorded[0]} ({recorded[1]:,} card plays)"
    )
    if iterations <= recorded[0] or steps <= recorded[1]:
        raise RunError(f"{held}: the two are not of the same checkpoint; restore them or start a new run")
    if iterations > recorded[0] + most_ahead or max(iterations, steps) > MAX_TIMESTEPS:
        raise RunError(
            f"{held}: a run stopped between writing the two leaves its checkpoint at most {most_ahead:,} iterations "
            "ahead (a checkpoint interval), so they are not of the same run; restore them or start a new run"
        )
    print(
        f"note: {checkpoint} is ahead of progress.json; going on from {iterations} iterations ({steps:,} card plays)",
        flush=True,
    )
    progress["iterations"], progress["timesteps"] = iterations, steps
    return True


def resumed_args(args: Args, given: set[str], progress: dict[str, Any], run_dir: Path) -> Args:
    """The run's recorded arguments, with the run settings this command line gives; changed hyperparameters
    are refused, each one listed."""
    return resumed_run_args(Args, args, given, progress, run_dir, RUN_SETTINGS, checked_args)


def start_ray(address: str, num_env_runners: int) -> None:
    """Join the cluster at ``address``, or start a local Ray with a CPU for the driver (the learner) and one per
    runner. The classes of this file travel to the runners by value (Ray pickles a script's own classes so;
    imported, as by the tests and the benchmark, it is told to), so a cluster's nodes need only the package."""
    if __name__ != "__main__":
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_env_runners + 1, include_dashboard=False)


# -- the run ---------------------------------------------------------------------------------------
def train(args: Args, given: set[str]) -> Path:
    """The run ``args`` describes; returns its directory. With ``--resume``, a checkpoint a save cut short left aside
    is put back first (``recover_checkpoint``), the record is checked (its curve too) before Ray starts, and the
    restored checkpoint against it (``match_restored``). Ctrl-C or SIGTERM (``Interrupted``) ends it with a line
    naming the checkpoint on disk (``say_saved``)."""
    run_dir = run_directory(args)
    fresh = {"args": dataclasses.asdict(args), "iterations": 0, "timesteps": 0, "curve": [], "seconds": 0.0}
    if args.resume:
        recover_checkpoint(run_dir, fresh)
    progress = open_run(  # a folder another script's run holds (its progress.json) is refused, not written over
        run_dir,
        args.resume,
        fresh,
        checkpoint="checkpoint/rllib_checkpoint.json",
        other_checkpoints=("progress.json",),
    )
    sessions = [progress["args"]]  # the arguments of the session that wrote the record (checkpoint_reach)
    if args.resume:
        args = resumed_args(args, given, progress, run_dir)
        check_win_rate_curve(run_dir / "progress.json", progress, args.eval_opponents)
        progress["args"] = dataclasses.asdict(args)
    done = progress["iterations"]
    if done >= args.iterations:
        print(f"{run_dir} is finished: {done} iterations (raise --iterations to go on)", flush=True)
        export_copy(run_dir, args.export)
        return run_dir
    torch.set_num_threads(args.torch_threads)
    try:
        start_ray(args.address, args.num_env_runners)
        try:
            algo = build_algorithm(args, run_dir, done)
            if args.resume:
                ahead = checkpoint_reach([*sessions, progress["args"]], 0, length="iterations")
                if match_restored(algo, run_dir, progress, ahead):
                    write_record(algo, args, run_dir, progress)
            run(algo, args, run_dir, progress)
            algo.stop()
        finally:
            ray.shutdown()
    except Interrupted as stop:
        say_saved(stop, run_dir)
        raise
    export_copy(run_dir, args.export)
    return run_dir


def say_saved(stop: Interrupted, run_dir: Path) -> None:
    """What the line of a run stopped by Ctrl-C or SIGTERM says was kept: the checkpoint on disk, of the iterations
    its record gives (written after each checkpoint, ``save_run``; one a save cut short left aside counts, as
    ``--resume`` puts it back); nothing before the first checkpoint."""
    if not any((run_dir / name).is_dir() for name in (CHECKPOINT, f"{CHECKPOINT}.old", f"{CHECKPOINT}.new")):
        return
    try:
        iterations = json.loads((run_dir / "progress.json").read_text())["iterations"]
    except (OSError, ValueError, KeyError, TypeError):  # no record to read: the line says nothing was saved
        return
    if isinstance(iterations, int):
        stop.saved = f"the checkpoint at {iterations:,} iterations is in {run_dir}: --resume goes on from it"


def build_algorithm(args: Args, run_dir: Path, done: int) -> Algorithm:
    """The run's PPO on the batched tables, restored from the run's checkpoint with ``--resume`` (a damaged one is a
    ``RunError`` naming it: ``RESTORE_ERRORS``); it deals from a seed derived from the run's seed and the ``done``
    iterations. Restoring unpickles the checkpoint's files, which may run code: the module docstring's "Trust"."""
    algo = use_batched_tables(ppo_config(args, seed=session_seed(args.seed, done)), table_options(args)).build_algo()
    if args.resume:
        checkpoint = run_dir / CHECKPOINT
        try:
            algo.restore_from_path(str(checkpoint.resolve()))
        except RESTORE_ERRORS as error:
            algo.stop()
            detail = " ".join(f"{type(error).__name__}: {error}".split())[:300].rstrip(": ")
            raise RunError(
                f"--resume: {checkpoint} is damaged or not this run's RLlib checkpoint ({detail}); restore it or start "
                "a new run"
            ) from error
    return algo


def run(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """Iterate to ``--iterations``, evaluating and checkpointing on the way and at the end."""
    started = time.perf_counter() - progress["seconds"]
    next_eval = next_multiple(progress["iterations"], args.eval_every)
    next_checkpoint = next_multiple(progress["iterations"], args.checkpoint_every)
    if progress["iterations"] == 0 and args.eval_every:
        record_evaluation(algo, args, run_dir, progress)
    while progress["iterations"] < args.iterations:
        tick = time.perf_counter()
        result = algo.train()
        progress["iterations"] += 1
        progress["timesteps"] += int(result["env_runners"]["num_env_steps_sampled"])
        stats = result["learners"][LEARNER]
        print(
            f"iteration {progress['iterations']}: {progress['timesteps']:,} card plays, "
            f"{time.perf_counter() - tick:.1f} s, policy loss {stats['policy_loss']:.4f}, "
            f"entropy {stats['entropy']:.3f}",
            flush=True,
        )
        last = progress["iterations"] >= args.iterations
        if progress["iterations"] >= next_eval or (last and args.eval_every):
            next_eval = next_multiple(progress["iterations"], args.eval_every)
            record_evaluation(algo, args, run_dir, progress)
        if progress["iterations"] >= next_checkpoint or last:
            next_checkpoint = next_multiple(progress["iterations"], args.checkpoint_every)
            progress["seconds"] = time.perf_counter() - started
            save_run(algo, args, run_dir, progress)
    seconds = time.perf_counter() - started
    print(f"done: {progress['timesteps']:,} card plays in {seconds:.0f} s; {run_dir}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    run_main(Args, parse_args, train, argv)


if __name__ == "__main__":
    main()
