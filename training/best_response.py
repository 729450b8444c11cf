"""A best response to a frozen agent: how much an opponent that adapts to it can take from it.

A learner trains by PPO (``train_ppo.py``'s algorithm, on the batched engine) in one seat of every table while the
frozen ``--target`` plays every other seat, then plays ``--final-games`` duplicate games against ``players - 1``
copies of the target. Its win share there minus the equal share ``1 / players`` is the target's **exploitability
gap**: a lower bound, at this budget, on what an adaptive opponent gains against it (exact measures such as
OpenSpiel's NashConv need the whole game tree and two players). A gap near 0 or below says the learner found
nothing at this budget, not that the target cannot be exploited.

The learner starts from scratch (``--start scratch``) or, for a network target, from the target's own weights
(``--start target``: its logits sharpened, its greedy moves unchanged, and a fresh critic). The target plays as
``agents.make`` makes it (a network greedily); it needs a batched form (``random``, ``cautious``, ``majority``, zoo
names, ``.npz`` policies): ``search`` and ``endgame`` decide one game at a time and are refused, with what a budget
against them would cost (docs/exploitability.md). The learner plays greedily in the final evaluation, as its export
does.

Every flag is checked before anything is built (``--export`` and ``--record`` outside the run directory, where
they would replace the run's files or be read from them); ``--help`` lists them. The run is a ``train_ppo.py`` run
in ``--run-dir`` (default ``runs/<run-name>``): its checkpoints, ``--resume``, its learning curve (win rate against
the target every ``--eval-every`` card plays) and its export ``policy.npz``; this script adds ``best_response.json``
(the gap, its interval, the curve, the cost), written atomically once the final evaluation is done. A resumed run
keeps its target (the same file: its fingerprint, recorded when the run started, is compared on every resume; a
``module:factory`` target is built only when ``--target`` gives it again), table size, start and hyperparameters (a
changed one is refused, listed), and never a ``--total-timesteps`` below the card plays done (its result's command
would not make it). The same seed gives the same run and the same figures.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import train_ppo
from friday13_training.friday13_agents import spec_files
from friday13_training.ppo_checkpoint import (
    BEST_RESPONSE,
    BEST_RESPONSE_RESULT,
    CHECKPOINT,
    RESUMED_AT,
    TARGET_FINGERPRINT,
    started_by,
)
from friday13_training.runs import (
    MAX_SEED,
    MAX_TIMESTEPS,
    Interrupted,
    RunError,
    actor_warmup,
    check_recorded_factories,
    checked_policy,
    export_problem,
    name_problems,
    parse_run_args,
    read_progress,
    run_directory,
    run_main,
    warmup_problem,
)
from friday13_training.script_args import (
    MAX_EVAL_GAMES,
    MAX_LEARNING_RATE,
    MAX_LOSS_WEIGHT,
    MAX_TORCH_THREADS,
    atomic_write_text,
    field_errors,
    option,
    output_errors,
)

from friday13_env import __version__
from friday13_env.benchmark.exploitability import STARTS, read_table, record
from friday13_env.benchmark.runner import read_back_problem
from friday13_env.core.specs import shown, spec_problem
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.agents import make as make_agent
from friday13_env.friday13.agents.policy import Friday13PolicyAgent, read_friday13_policy
from friday13_env.friday13.batched import make_batched
from friday13_env.friday13.cards import DECKS, get_deck
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS
from friday13_env.friday13.evaluation import evaluate, focus_matchups

RESULT = BEST_RESPONSE_RESULT
LEARNER = "best-response"
"""The learner's name in the evaluations."""
SCRATCH_LEARNING_RATE = 2.5e-3
SCRATCH_ENT_COEF = 0.03
TARGET_LEARNING_RATE = 1e-4
TARGET_ENT_COEF = 0.001
TARGET_CLIP_COEF = 0.1
TARGET_SHARPNESS = 4.0
TARGET_CRITIC_LEARNING_RATE = 1e-3
"""The recipe from the target's weights: its logits sharpened (x4, a power of two, so its greedy moves stay the
target's to the bit) so that the learner's samples are nearly the play it is evaluated on; a small step, clip and
entropy bonus for the actor, so that PPO improves that play rather than drifting from it; the fresh critic at its
own, larger rate. With 0.9.0's recipe (5e-4, clip 0.2, entropy 0.03, no sharpening, one rate) every learner from a
network's weights fell below the network it started as (docs/exploitability.md)."""
SCRATCH_HIDDEN_SIZES = (128, 128)
LEARNER_ACTOR = "mlp"
LEARNER_UPDATE_EPOCHS = 4
"""The learner's recipe where ``train_ppo.py``'s defaults moved on after the exploitability table's runs (0.10.0):
fixed here, so that new runs stay comparable with the table. Its other hyperparameters are ``train_ppo.py``'s."""
TARGET_RECIPE = {
    "clip_coef": TARGET_CLIP_COEF,
    "init_sharpness": TARGET_SHARPNESS,
    "critic_learning_rate": TARGET_CRITIC_LEARNING_RATE,
}
"""``train_ppo.py``'s settings a learner from the target's weights adds to its own."""


@dataclass
class Args:
    """Every knob of a best response; each becomes a ``--flag`` with this default, bounds and help."""

    target: str = option("", "the frozen agent: a batched agent spec (random, cautious, majority, a zoo name, an .npz)")
    players: int = option(4, "table size: the learner and players - 1 copies of the target", minimum=MIN_PLAYERS,
                          maximum=MAX_PLAYERS)  # fmt: skip
    start: str = option(
        "scratch",
        "the learner's first weights: random (scratch) or the target's own (target; a network target only)",
        choices=list(STARTS),
    )
    total_timesteps: int = option(
        20_000_000, "the budget: card plays to train for (every seat's)", minimum=1, maximum=MAX_TIMESTEPS
    )
    deck: str = option("standard", "the deck of the tables", choices=sorted(DECKS))
    seed: int = option(0, "seeds the learner, the deals and the sampling", minimum=0, maximum=MAX_SEED)
    learning_rate: float = option(
        0.0,
        "Adam learning rate, annealed linearly to 0: from scratch both networks', from the target's weights the "
        "actor's (the fresh critic keeps 1e-3). 0: the start's, 2.5e-3 from scratch as train_ppo.py, 1e-4 from the "
        "target's weights (a larger rate soon moves the actor away from the target's play)",
        minimum=0,
        maximum=MAX_LEARNING_RATE,
    )
    ent_coef: float = option(
        -1.0,
        "entropy bonus: -1 (the start's: 0.03 from scratch as train_ppo.py, 0.001 from the target's sharpened "
        "weights) or at least 0",
    )
    critic_warmup: int = option(
        1_000_000,
        "with --start target: card plays at the start in which only the fresh critic learns, so that its noisy "
        "first advantages do not move the target's weights; below --total-timesteps (a learner from scratch has "
        "none to keep: it uses 0)",
        minimum=0,
        maximum=MAX_TIMESTEPS,
    )
    num_tables: int = option(1024, "tables played in lockstep", minimum=1, maximum=train_ppo.MAX_TABLES)
    num_steps: int = option(64, "card plays per table per rollout", minimum=1, maximum=train_ppo.MAX_NUM_STEPS)
    minibatch_size: int = option(4096, "samples per gradient step", minimum=2)
    final_games: int = option(
        2000,
        "duplicate games of the final evaluation (deals x seat rotations, whole deals: the result records the games "
        "played); more than --players, so that it plays at least two deals and its interval is defined",
        minimum=1,
        maximum=MAX_EVAL_GAMES,
    )
    final_seed: int = option(0, "seed of the final evaluation's deals (0: the strength figures' deals)", minimum=0,
                             maximum=MAX_SEED)  # fmt: skip
    eval_every: int = option(
        2_000_000, "card plays between the learning curve's evaluations (0 = never)", minimum=0, maximum=MAX_TIMESTEPS
    )
    eval_games: int = option(
        200, "duplicate games of each learning-curve evaluation", minimum=1, maximum=MAX_EVAL_GAMES
    )
    checkpoint_every: int = option(
        2_000_000, "card plays between checkpoints (0 = only at the end)", minimum=0, maximum=MAX_TIMESTEPS
    )
    run_name: str = option("best-response", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    export: str = option("", "also copy the learner's numpy policy here")
    record: str = option(
        "",
        "also add the result to this exploitability table (e.g. results/benchmark/exploitability.json, which the "
        "leaderboard reads), replacing an entry of the same target, table size and start",
    )
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    progress: bool = option(True, "show a progress bar")
    torch_threads: int = option(1, "CPU threads of torch and of numpy's BLAS", minimum=1, maximum=MAX_TORCH_THREADS)
    device: str = option("cpu", "where torch acts and learns (cpu or cuda)", choices=["cpu", "cuda"])


HYPERPARAMETERS = (
    "target", "players", "start", "deck", "seed", "learning_rate", "ent_coef", "critic_warmup", "num_tables",
    "num_steps", "minibatch_size", "eval_games",
)  # fmt: skip
"""What a run keeps from its start (``--resume`` refuses another value); every other flag is a run setting or
belongs to the final evaluation."""
RUN_LENGTH = ("total_timesteps", "eval_every", "checkpoint_every")
KEPT_SETTINGS = (*RUN_LENGTH, "device", "torch_threads")
"""What a ``--resume`` keeps from the run unless its command line gives it (a run goes on where, and with the threads,
it trained)."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """The command line, every flag checked (the target's batched form, the start, the run's outputs)."""
    return parse_run_args(Args, __doc__, checked_args, argv)


def checked_args(args: Args) -> Args:
    """The checks of a whole configuration, a ``ValueError`` listing every problem; returns the configuration with
    the target's canonical spec text (as results name it) and the start's learning rate and warm-up."""
    problems = field_errors(Args, asdict(args)) + name_problems(args)
    if args.ent_coef < 0 and args.ent_coef != -1:
        problems.append(f"--ent-coef must be -1 (the start's) or at least 0, got {args.ent_coef:g}")
    if args.ent_coef > MAX_LOSS_WEIGHT:
        problems.append(f"--ent-coef must be at most {MAX_LOSS_WEIGHT:g} (or -1, the start's), got {args.ent_coef:g}")
    if not args.target:
        problems.append("--target is required: a batched agent spec (random, cautious, majority, a zoo name, an .npz)")
    else:
        problems += target_errors(args)
    problems += record_errors(args) + run_errors(args)
    if not problems:
        try:
            train_ppo.checked_args(ppo_args(args))
        except ValueError as error:
            problems.append(str(error))
    if problems:
        raise ValueError("; ".join(problems))
    return replace(
        args,
        target=canonical_target(args.target),
        learning_rate=learning_rate(args),
        ent_coef=ent_coef(args),
        critic_warmup=actor_warmup(args.critic_warmup, args.start == "target"),  # a learner from scratch has none
    )


def canonical_target(target: str) -> str:
    """``target``'s spec text as the benchmark's results name its agent, which the exploitability table records and
    the leaderboard matches to its rows: the registry's canonical form of the checked spec (``Registry.canonical``:
    ``majority:open_min=4,keep_min=2`` is ``majority:open_min=4``, ``ppo-v4:greedy=true`` is ``ppo-v4``). A bad spec
    is the registry's ``ValueError``."""
    return REGISTRY.checked_canonical(target).label


def same_target(given: str, recorded: str) -> bool:
    """Whether ``--target`` names the run's recorded target (``canonical_target``): a run of an earlier release
    recorded it as typed, and its ``--resume`` with the same text, or with its canonical form, goes on."""
    try:
        return canonical_target(given) == canonical_target(recorded)
    except ValueError:
        return given == recorded


def run_errors(args: Args) -> list[str]:
    """Why the run would not give a result worth its time, or would overwrite what it reads or writes: a critic
    warm-up covering the whole run (the learner would never learn), a final evaluation of one deal (no interval),
    an ``--export`` in the run directory or onto the target (``export_problem``); checked on ``--resume`` too."""
    problems = []
    problem = warmup_problem(actor_warmup(args.critic_warmup, args.start == "target"), args.total_timesteps)
    if problem:
        problems.append(problem)
    if args.final_games <= args.players:
        problems.append(
            f"--final-games {args.final_games}: the final evaluation needs at least two deals (more than --players "
            f"{args.players} games), or its interval is undefined"
        )
    inputs = {"--target": spec_files([args.target] if args.target else [])}
    outputs = {"--record": args.record} if args.record else {}
    problem = export_problem(args.export, {"--run-dir": run_directory(args)}, inputs, outputs)
    if problem:
        problems.append(problem)
    return problems


def learning_rate(args: Args) -> float:
    """``--learning-rate``, or the start's default where it is 0."""
    return args.learning_rate or (TARGET_LEARNING_RATE if args.start == "target" else SCRATCH_LEARNING_RATE)


def ent_coef(args: Args) -> float:
    """``--ent-coef``, or the start's default where it is -1."""
    if args.ent_coef != -1:
        return args.ent_coef
    return TARGET_ENT_COEF if args.start == "target" else SCRATCH_ENT_COEF


def target_errors(args: Args) -> list[str]:
    """Why ``--target`` cannot be the frozen opponent (no batched form, another deck) or the start."""
    try:
        make_batched(args.target, get_deck(args.deck))
    except ValueError as error:
        name = args.target.split(":")[0]
        unbatched = name in REGISTRY.names() and name not in REGISTRY.batched_names() and name not in REGISTRY.zoo()
        hint = " (the learner trains on the batched engine; docs/exploitability.md says what a budget against it "
        return [f"--target {args.target}: {error}" + (hint + "would cost)" if unbatched else "")]
    if args.start == "target" and not isinstance(make_agent(args.target), Friday13PolicyAgent):
        return [f"--start target: {args.target!r} is not a network, so there are no weights to start from; use "
                "--start scratch"]  # fmt: skip
    return []


def record_errors(args: Args) -> list[str]:
    """Why the result could not be added to ``--record`` once the run ends: checked before any training."""
    if not args.record:
        return []
    problems = output_errors([("--record", args.record, False)])
    with contextlib.suppress(ValueError):  # a bad --target: target_errors says so
        target = REGISTRY.checked_canonical(args.target)  # as the table records it (canonical_target)
        problem = spec_problem(target.label)
        if problem:
            problems.append(f"--record: the table cannot name this target: {problem}")
        problem = read_back_problem("friday13", target)
        if problem:  # a checkpoint file named like a spec with options: the page would read it as another agent
            problems.append(f"--record: the checkpoint file {problem} so that its name holds no ':'")
    try:
        if Path(args.record).is_file():
            read_table(args.record)  # a damaged table is refused now, not after the training
    except (OSError, ValueError) as error:
        problems.append(f"--record: {error}")
    return problems


def ppo_args(args: Args) -> train_ppo.Args:
    """The ``train_ppo`` run of this best response: one learner seat at every table, the target in all others (no
    snapshots of the learner join them)."""
    network = (
        make_agent(args.target).policy.metadata  # type: ignore[attr-defined]
        if args.start == "target" and args.target
        else None
    )
    defaults = train_ppo.Args()
    recipe = TARGET_RECIPE if args.start == "target" else {name: getattr(defaults, name) for name in TARGET_RECIPE}
    return train_ppo.Args(
        run_name=args.run_name,
        run_dir=args.run_dir,
        seed=args.seed,
        total_timesteps=args.total_timesteps,
        players=[args.players],
        deck=args.deck,
        num_tables=args.num_tables,
        num_steps=args.num_steps,
        pool_share=1.0,
        pool_draw="game",
        opponents=[args.target],
        snapshot_every=0,
        learning_rate=learning_rate(args),
        ent_coef=ent_coef(args),
        minibatch_size=args.minibatch_size,
        hidden_sizes=list(network.hidden_sizes) if network else list(SCRATCH_HIDDEN_SIZES),
        activation=network.activation if network else defaults.activation,
        input_features=network.input_features if network else defaults.input_features,
        actor=LEARNER_ACTOR,
        update_epochs=LEARNER_UPDATE_EPOCHS,
        eval_every=args.eval_every,
        eval_games=args.eval_games,
        eval_opponents=[args.target],
        eval_players=args.players,
        checkpoint_every=args.checkpoint_every,
        export=args.export,
        resume=args.resume,
        progress=args.progress,
        device=args.device,
        torch_threads=args.torch_threads,
        init_policy=args.target if args.start == "target" else "",
        critic_warmup=actor_warmup(args.critic_warmup, args.start == "target"),
        clip_coef=recipe["clip_coef"],
        init_sharpness=recipe["init_sharpness"],
        critic_learning_rate=recipe["critic_learning_rate"],
    )


def recorded_progress(run_dir: Path) -> dict[str, Any] | None:
    """The run's ``progress.json``, read and checked as the run scripts read a record (``read_progress``: its size,
    its nesting, the arguments and timesteps this script reads, the fields all runs share; ``train_ppo`` checks the
    rest before it trains) and its arguments checked as ``train_ppo.py``'s flags are (``field_errors``, with the
    values of the arguments added since), or a ``RunError`` ``--resume: <path> is damaged: ...``; None where there
    is no record (``train_ppo`` names what the folder lacks)."""
    path = run_dir / "progress.json"
    if not path.is_file():
        return None
    progress = read_progress(path, {"args": {}, "timesteps": 0})
    problems = field_errors(train_ppo.Args, {**train_ppo.ADDED_LATER, **progress["args"]})
    if problems:
        raise RunError(f"--resume: {path} is damaged: " + "; ".join(problems))
    return progress


def resumed_args(args: Args, given: set[str]) -> Args:
    """The best response a ``--resume`` goes on with: the run's recorded one (its hyperparameters, and its budget,
    periods and device unless this command line gives them), with this command line's run settings. A
    hyperparameter given with another value than the run's is refused, each one listed, and so are a damaged
    record (``recorded_progress``), a run that is not a best response (``is_best_response``), a target factory that
    only the record names (``check_recorded_factories``: nothing is imported), and a ``--total-timesteps`` below the
    card plays done (the result's command would not make it). A run directory without a record is left to
    ``train_ppo``, which names what is missing."""
    run_dir = run_directory(args)
    progress = recorded_progress(run_dir)
    if progress is None:
        return args
    stored, done = progress["args"], progress["timesteps"]
    if not is_best_response(run_dir, progress):
        raise RunError(f"--resume: {run_dir} is a train_ppo.py run, not a best response")
    for name in ("magnet_coef", "magnet_every"):  # flags of train_ppo.py's that a best response never sets
        if stored.get(name, train_ppo.ADDED_LATER[name]) != train_ppo.ADDED_LATER[name]:
            raise RunError(
                f"--resume: {run_dir / 'progress.json'} is damaged: it records {name} {stored[name]!r}, and a best "
                "response trains without a magnet"
            )
    check_recorded_factories(
        run_dir / "progress.json", {"target": stored["opponents"][0]}, {"target": args.target}, given, ["target"]
    )
    recorded = Args(
        target=stored["opponents"][0], players=stored["players"][0],
        start="target" if stored.get("init_policy") else "scratch", deck=stored["deck"], seed=stored["seed"],
        learning_rate=stored["learning_rate"], ent_coef=stored["ent_coef"],
        critic_warmup=stored.get("critic_warmup", 0), num_tables=stored["num_tables"],
        num_steps=stored["num_steps"], minibatch_size=stored["minibatch_size"], eval_games=stored["eval_games"],
        **{name: stored[name] for name in RUN_LENGTH}, device=stored.get("device", "cpu"),
        torch_threads=stored.get("torch_threads", 1),
    )  # fmt: skip
    with contextlib.suppress(ValueError):  # not a spec: it differs from the run's, and the comparison says so
        args = replace(args, target=canonical_target(args.target))  # "majority: open_min=2" is "majority:open_min=2"
    trained_with = {name: stored.get(name, train_ppo.ADDED_LATER.get(name)) for name in TARGET_RECIPE}
    if recorded.start == "target" and trained_with != TARGET_RECIPE:
        raise RunError(
            f"--resume: {run_directory(args)} started from the target with another recipe ({trained_with}; release "
            f"0.13.0's or earlier), and this script's is {TARGET_RECIPE}: start a new run in another --run-dir"
        )
    changed = [
        f"--{name.replace('_', '-')}: the run has {getattr(recorded, name)!r}, the command line {getattr(args, name)!r}"
        for name in HYPERPARAMETERS
        if name in given
        and getattr(args, name) != getattr(recorded, name)
        and not (name == "learning_rate" and args.learning_rate == 0)  # 0: the start's default
        and not (name == "ent_coef" and args.ent_coef == -1)  # -1: likewise
        and not (name == "critic_warmup" and recorded.start == "scratch")  # a learner from scratch has none
        and not (name == "target" and same_target(args.target, recorded.target))  # an earlier release's: as typed
    ]
    if changed:
        raise RunError("--resume keeps the run's target and hyperparameters; these differ: " + "; ".join(changed))
    kept = [*HYPERPARAMETERS, *(name for name in KEPT_SETTINGS if name not in given)]
    resumed = replace(args, **{name: getattr(recorded, name) for name in kept})
    if resumed.total_timesteps < done:
        raise RunError(
            f"--resume --total-timesteps {resumed.total_timesteps:,} is fewer than the {done:,} card plays the run has "
            f"done: its result's command would not make it; give at least {done:,} (that number evaluates the run as "
            "it is)"
        )
    if resumed.device != recorded.device and done < resumed.total_timesteps:
        raise RunError(
            f"--resume --device {resumed.device}: the run trained on {recorded.device} and has "
            f"{resumed.total_timesteps - done:,} card plays left to train; its result names one device for its "
            f"minutes, so it trains on to the end on {recorded.device} (a finished run may be evaluated anywhere)"
        )
    if resumed.torch_threads != recorded.torch_threads and done < resumed.total_timesteps:
        raise RunError(
            f"--resume --torch-threads {resumed.torch_threads}: the run trained with {recorded.torch_threads} and has "
            f"{resumed.total_timesteps - done:,} card plays left to train; the threads change its float rounding and "
            f"its result's command names one count, so it trains on with {recorded.torch_threads}"
        )
    return resumed


def is_best_response(run_dir: Path, progress: dict[str, Any]) -> bool:
    """Whether the run in ``run_dir`` is a best response: as far as ``started_by`` tells (the script its record
    names, or its result), else (a run of an earlier release) by its arguments, shaped as ``ppo_args`` makes them:
    one learner seat against one target (no snapshots) at one table size, evaluated against that target at that
    size."""
    started = started_by(run_dir, progress)
    if started is not None:
        return started == BEST_RESPONSE
    stored = progress["args"]
    opponents, players = stored.get("opponents"), stored.get("players")
    return (
        stored.get("pool_share") == 1.0 and stored.get("snapshot_every") == 0
        and isinstance(opponents, list) and len(opponents) == 1 and stored.get("eval_opponents") == opponents
        and isinstance(players, list) and len(players) == 1
        and stored.get("eval_players", train_ppo.ADDED_LATER["eval_players"]) == players[0]
    )  # fmt: skip


def target_fingerprint(target: str) -> str | None:
    """What decides a network target's moves (``MLPPolicy.fingerprint``); None for a heuristic."""
    agent = make_agent(target)
    return agent.policy.fingerprint() if isinstance(agent, Friday13PolicyAgent) else None


FINGERPRINT = re.compile(r"[0-9a-f]{64}")
"""A network's fingerprint as ``MLPPolicy.fingerprint`` writes it (SHA-256, in hex)."""


def check_same_target(run_dir: Path, target: str, fingerprint: str | None) -> None:
    """Refuse to resume a run whose target is not the one it started with: the fingerprint its record took at the
    start (``TARGET_FINGERPRINT``; a run recorded before 0.18.0 has none, and gets this one) against the target's now
    (``fingerprint``). A target file replaced between two sessions would be trained on, and the result would record
    one fingerprint for a learner trained against two targets. A ``RunError`` naming both."""
    path = run_dir / "progress.json"
    progress = recorded_progress(run_dir)
    if progress is None or TARGET_FINGERPRINT not in progress:
        return
    recorded = progress[TARGET_FINGERPRINT]
    if recorded is not None and not (isinstance(recorded, str) and FINGERPRINT.fullmatch(recorded)):
        raise RunError(
            f"--resume: {path} is damaged: {TARGET_FINGERPRINT} {shown(recorded)} (allowed: null, or 64 hex digits)"
        )
    if recorded != fingerprint:
        raise RunError(
            f"--resume: --target {target} is not the target the run started with (its fingerprint is "
            f"{shown(fingerprint)}, the run's {shown(recorded)}, recorded in {path}): a learner trained against two "
            "targets measures neither; restore the target's file, or start a new run in another --run-dir"
        )


def train(args: Args, given: set[str]) -> Path:
    """Train (or resume) the learner, evaluate it against the target and write ``best_response.json``."""
    if args.resume:
        args = resumed_args(args, given)
        problems = (target_errors(args) if args.target else []) + record_errors(args) + run_errors(args)
        if problems:
            raise RunError("; ".join(problems))
    fingerprint = target_fingerprint(args.target) if args.target else None
    if args.resume:
        check_same_target(run_directory(args), args.target, fingerprint)
    every_flag = {field.name for field in fields(train_ppo.Args)}
    marks = {TARGET_FINGERPRINT: fingerprint}  # checked on every resume (check_same_target)
    run_dir = train_ppo.train(ppo_args(args), every_flag, BEST_RESPONSE, marks)
    written = False  # whether this evaluation's result is in the run folder
    try:
        if target_fingerprint(args.target) != fingerprint:
            raise RunError(f"--target {args.target} changed while the learner trained against it: its result would "
                           "mix two targets; nothing was evaluated")  # fmt: skip
        progress = json.loads((run_dir / "progress.json").read_text())
        result = final_result(args, run_dir, progress, fingerprint)
        atomic_write_text(run_dir / RESULT, json.dumps(result, indent=2, allow_nan=False) + "\n")
        written = True
        if args.record:
            try:
                record(args.record, result)
            except (OSError, ValueError) as error:
                raise RunError(f"--record: {error} (the result is in {run_dir / RESULT})") from error
    except Interrupted as stop:
        stop.saved = saved_after_training(args, run_dir, written)
        raise
    gap = result["gap"]
    print(
        f"best response to {args.target} ({args.players} players, start {args.start}, "
        f"{result['card_plays']:,} card plays, {result['training_seconds']:,.0f} s): wins "
        f"{result['win_share']['mean']:.3f} against {args.players - 1} x {args.target} on "
        f"{result['final_games']:,} duplicate games; exploitability gap {gap['mean']:+.3f} "
        f"[{gap['low']:+.3f}, {gap['high']:+.3f}]; {run_dir / RESULT}",
        flush=True,
    )
    return run_dir


def saved_after_training(args: Args, run_dir: Path, written: bool) -> str:
    """What a best response stopped after its training (by Ctrl-C or SIGTERM) leaves, in one line: the learner's
    checkpoint, and the result where ``written``; ``--resume`` evaluates a finished run again (and records it)."""
    if written:
        unrecorded = f", but not added to --record {args.record}: --resume evaluates and records it again"
        return f"the result is in {run_dir / RESULT}{unrecorded if args.record else ''}"
    try:
        timesteps = f" at {json.loads((run_dir / 'progress.json').read_text())['timesteps']:,} card plays"
    except (OSError, ValueError, KeyError, TypeError):
        timesteps = ""
    return (
        f"the learner's checkpoint{timesteps} is in {run_dir} ({CHECKPOINT}, policy.npz), but its final evaluation "
        f"was cut short and {run_dir / RESULT} not written: --resume evaluates it"
    )


def final_result(args: Args, run_dir: Path, progress: dict[str, Any], fingerprint: str | None) -> dict[str, Any]:
    """The learner's duplicate-deal win share against the target and the gap over the equal share, with the run's
    hyperparameters (the target in canonical form, ``canonical_target``, as the leaderboard's rows name it), curve and
    cost, and the device of its record (where its last session trained: a finished run evaluated again on another
    machine keeps it), and its threads (which change its float rounding)."""
    recorded = progress["args"]
    args = replace(args, device=recorded.get("device", "cpu"), torch_threads=recorded.get("torch_threads", 1))
    policy = run_dir / "policy.npz"
    learner = Friday13PolicyAgent(  # (a finished run wrote no policy this session)
        checked_policy(policy, read_friday13_policy, "the final evaluation"), name=LEARNER
    )
    tick = time.perf_counter()
    matchups = focus_matchups(learner, [args.target])
    (played,) = evaluate(matchups, args.final_games, args.players, seed=args.final_seed, deck=args.deck).matchups
    rate = played.stats(LEARNER).win_rate
    equal = 1 / args.players
    ppo = ppo_args(args)
    named = replace(args, target=canonical_target(args.target))  # a resumed run of an earlier release: as typed
    return {
        **{name: getattr(named, name) for name in HYPERPARAMETERS},
        **{name: getattr(ppo, name) for name in TARGET_RECIPE},  # (from scratch: train_ppo.py's defaults)
        "target_fingerprint": fingerprint,
        "card_plays": progress["timesteps"],
        "training_seconds": progress["seconds"],
        "final_games": played.games,  # whole deals: at least --final-games
        "final_seed": args.final_seed,
        "final_seconds": time.perf_counter() - tick,
        "equal_share": equal,
        "win_share": {"mean": rate.mean, "low": rate.low, "high": rate.high},
        "gap": {"mean": rate.mean - equal, "low": rate.low - equal, "high": rate.high - equal},
        "curve": [{"card_plays": point["timesteps"], "win_share": point[args.target]} for point in progress["curve"]],
        "package_version": __version__,
        "device": args.device,
        "command": command_of(named),
        "resumed_at": progress.get(RESUMED_AT, []),  # a resumed run deals on from other seeds than its command's
    }


REPORTED = (*HYPERPARAMETERS, "total_timesteps", "final_games", "final_seed", "device", "torch_threads", "eval_every")
"""The flags that change a result (the threads and the device its float rounding, the evaluations the curve): the
command of the result gives each one not at its default."""


def command_of(args: Args) -> str:
    """The command that reproduces this result: its target, and every figure-changing flag not at its default (the
    start's own learning rate and warm-up are defaults)."""
    start_defaults = replace(Args(), start=args.start)
    defaults = replace(
        Args(),
        learning_rate=learning_rate(start_defaults),
        ent_coef=ent_coef(start_defaults),
        critic_warmup=start_defaults.critic_warmup if args.start == "target" else args.critic_warmup,  # unused there
    )
    flags = [
        f"--{name.replace('_', '-')} {shlex.quote(str(getattr(args, name)))}"
        for name in REPORTED
        if getattr(args, name) != getattr(defaults, name)
    ]
    return " ".join(["python training/best_response.py", *flags])


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    run_main(Args, parse_args, train, argv)


if __name__ == "__main__":
    main()
