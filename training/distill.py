"""Distil a strong but slow teacher into one MLP that plays in tens of microseconds.

``--teacher search`` distils the ``search`` agent and ``--teacher ensemble`` an ensemble
of trained policies (one forward pass per member); each teacher has its own flags, and its defaults
are the recipe of a shipped policy (``python training/distill.py --teacher search --help``):

  python training/distill.py --teacher search --export checkpoints/search_distilled.npz
  python training/distill.py --teacher ensemble --export my_ensemble.npz

The first is the recipe of ``checkpoints/search_distilled.npz``, the second of the zoo policy
``ensemble-v1`` (``friday13_env.agents.make("ensemble-v1")``), whose teachers are that policy,
``checkpoints/ppo_finetuned.npz`` and ``checkpoints/members/``; the figures and the story of each
are in checkpoints/README.md and the zoo's model card. Everything is seeded: the same arguments give
the same data and, on the same machine, the same weights (SHA-256 fingerprint).

Reads top to bottom: the arguments of each teacher, then (1) the teacher's games, recording every
decision with more than one legal move, (2) a supervised fit of an MLP to them, shared by both
teachers (``friday13_training/imitation.py``: whole games held out, AdamW cosine-annealed, the epoch with the best
held-out agreement with the teacher kept), (3) export to the safe ``.npz`` format and a quick
duplicate evaluation against the baselines. Every flag is checked before any game is played (bounds,
agent specs, readable teachers, writable outputs, an ``--out-dir`` that holds no training run's files); every output
is written atomically, and every data file is checked as it is read back. The games are played in ``--workers``
processes that end with the script: Ctrl-C or SIGTERM stops it with one line, keeping the data recorded so far.

**search.** Self-play games of ``search`` at every seat of tables drawn from 3-6 players; each row
holds the teacher's mean value of *every* legal move. Loss: ``(1 - soft_weight) x CE(teacher's move)
+ soft_weight x CE(soft target)`` over the legal moves, the soft target being ``softmax(z /
soft_temperature)`` of the move values standardised per decision (their scale differs between the last
round and the others). Then ``--dagger-rounds`` DAgger rounds: games in which the student just fitted
holds one seat against ``--dagger-opponents`` (or, with a bare ``--dagger-opponents``, plays
``--dagger-share`` of the seats of teacher games) while the teacher labels the student's positions,
and a fit on all the data so far. Data goes in chunks of ``GAMES_PER_CHUNK`` games, each recorded
with its specification: an interrupted or extended run reuses them, a data directory recorded with
other teacher settings or another ``--seed`` is refused, and a round's student fitted from the same data and
arguments is kept instead of fitted again.

**ensemble.** The members' logits, each divided by its typical spread (the standard deviation of its
legal moves' logits over the positions of ``--calibration-games`` games of the first member, so that
no member outvotes the others by scale alone), then averaged. The ensemble holds one seat against
``--opponents``; the student (starting from ``--init-policy``) is fitted by cross-entropy to the
ensemble's softmax over the legal moves. The games are cached in ``<out-dir>/positions.npz`` with
their specification (members' fingerprints, seeds, tables); a rerun with the same one reuses them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import torch
from friday13_training.friday13_agents import checked_specs, policy_file, spec_files
from friday13_training.imitation import (
    READ_ERRORS,
    build_network,
    data_bytes,
    decision_shapes,
    decisions_problem,
    export_evaluated,
    fit_student,
    linear_layers,
    one_seat_table,
    play_jobs,
    quick_evaluation,
    read_arrays,
    read_dataset,
    read_spec_text,
    save_student,
    soft_targets,
    write_dataset,
    write_outputs,
)
from friday13_training.runs import (
    MAX_SEED,
    TRAINING_RUN_FILES,
    Interrupted,
    RunError,
    export_problem,
    signals_interrupt,
)
from friday13_training.script_args import (
    MAX_EVAL_GAMES,
    MAX_LEARNING_RATE,
    MAX_TORCH_THREADS,
    dataclass_parser,
    flag_name,
    network_errors,
    option,
    output_error,
)
from friday13_training.torch_policy import load_linear_layers, read_matching_policy
from tqdm import tqdm

from friday13_env import raw_env
from friday13_env.core.checkpoint import CheckpointError
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.options import MAX_GAMES
from friday13_env.core.pool import worker_pool
from friday13_env.core.specs import working_folder_importable
from friday13_env.friday13.agents import Agent, legal_actions, make
from friday13_env.friday13.agents.policy import ENV_VERSION, observation_scale, read_friday13_policy
from friday13_env.friday13.agents.search import MAX_BUDGET, SearchAgent
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.cards import DECKS, Deck, get_deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS


# -- arguments ---------------------------------------------------------------------------------------
@dataclass
class DistillArgs:
    """The flags both teachers share, with the same defaults; each teacher's class adds its own (those of its
    recipe)."""

    deck: str = option("standard", "the deck of the tables", choices=sorted(DECKS))
    seed: int = option(0, "seeds the games, the split and the fit", minimum=0, maximum=MAX_SEED)
    workers: int = option(2, "processes playing the games and the evaluation", minimum=1, maximum=MAX_TORCH_THREADS)
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the student", minimum=1)
    batch_size: int = option(512, "minibatch size", minimum=1)
    eval_games: int = option(
        400,
        "4-player duplicate games against 3 copies of each --eval-opponents (0 = none)",
        minimum=0,
        maximum=MAX_EVAL_GAMES,
    )
    eval_opponents: list[str] = option(
        ["cautious", "majority"],
        "baselines of the quick evaluation: agent specs (name, name:key=value, zoo name or .npz path)",
    )
    export: str = option(
        "",
        "also write the policy here, e.g. my_policy.npz (outside --out-dir and, for --teacher search, --data-dir; and "
        "none of the inputs)",
    )
    progress: bool = option(True, "show progress bars")
    torch_threads: int = option(2, "torch CPU threads of the fit", minimum=1, maximum=MAX_TORCH_THREADS)


@dataclass
class SearchArgs(DistillArgs):
    """``--teacher search``: the defaults are the recipe of ``checkpoints/search_distilled.npz``."""

    teacher: str = option("search", "whose moves to distil: search or ensemble", choices=["search", "ensemble"])
    games: int = option(
        2000,
        "self-play games of the search agent (chunks already recorded are reused; at least 2: --validation holds one"
        " out)",
        minimum=2,
        maximum=MAX_GAMES,
    )
    players: list[int] = option(
        [3, 4, 5, 6], "table sizes, one drawn per game", minimum=MIN_PLAYERS, maximum=MAX_PLAYERS
    )
    epochs: int = option(60, "most passes over the training decisions (cosine schedule length)", minimum=1)
    learning_rate: float = option(
        1e-3, "AdamW learning rate (cosine-annealed to 0 over --epochs)", above=0, maximum=MAX_LEARNING_RATE
    )
    validation: float = option(
        0.1, "share of the games held out to measure agreement with the teacher", above=0, below=1
    )
    out_dir: str = option("runs/distill", "where the data chunks, the students, the policy and summary.json go")
    search_budget: int = option(
        22_000,
        "simulated card plays per decision of the teacher (the agent's default)",
        minimum=1,
        maximum=MAX_BUDGET,
    )
    patience: int = option(
        10, "stop after this many epochs without a better validation agreement (0 = never)", minimum=0
    )
    weight_decay: float = option(
        0.0,
        "AdamW weight decay (at most 1: a step shrinks each weight by --learning-rate times it, past 1 a flip)",
        minimum=0,
        maximum=1,
    )
    soft_weight: float = option(0.5, "weight of the soft-target loss against the hard label", minimum=0, maximum=1)
    soft_temperature: float = option(1.0, "temperature of the soft target over the standardised move values", above=0)
    dagger_rounds: int = option(3, "DAgger rounds after the first fit (0 = plain distillation)", minimum=0)
    dagger_games: int = option(2000, "games per DAgger round", minimum=1, maximum=MAX_GAMES)
    dagger_share: float = option(
        0.5, "probability that a seat of a DAgger game is the student (bare --dagger-opponents)", minimum=0, maximum=1
    )
    dagger_opponents: list[str] = option(
        ["cautious", "majority"],
        "agents the student faces in DAgger games: one student seat, the others drawn from these, and only the"
        " student's positions searched (none, a bare flag: the teacher at every seat, the student at"
        " --dagger-share of them)",
        allow_empty=True,
    )
    data_dir: str = option("", "where the data chunks go (default: <out-dir>/chunks)")


@dataclass
class EnsembleArgs(DistillArgs):
    """``--teacher ensemble``: the defaults are the recipe of the zoo policy ``ensemble-v1``."""

    teacher: str = option("ensemble", "whose moves to distil: search or ensemble", choices=["search", "ensemble"])
    games: int = option(
        3000,
        "games the ensemble plays (one seat) to record its decisions (at least 2: --validation holds one out)",
        minimum=2,
        maximum=MAX_GAMES,
    )
    players: list[int] = option(
        [3, 4, 4, 5, 6],
        "table sizes, one drawn per game (repeat one to draw it more)",
        minimum=MIN_PLAYERS,
        maximum=MAX_PLAYERS,
    )
    epochs: int = option(15, "passes over the training decisions (cosine schedule length)", minimum=1)
    learning_rate: float = option(
        3e-4, "AdamW learning rate (cosine-annealed to 0 over --epochs)", above=0, maximum=MAX_LEARNING_RATE
    )
    validation: float = option(
        0.08, "share of the games held out to measure agreement with the ensemble", above=0, below=1
    )
    out_dir: str = option("runs/ensemble", "where positions.npz, policy.npz and summary.json go")
    members: list[str] = option(
        [
            "checkpoints/search_distilled.npz",
            "checkpoints/ppo_finetuned.npz",
            "checkpoints/members/ppo_majority4_seed0.npz",
            "checkpoints/members/ppo_majority4_seed1.npz",
        ],
        "the ensemble's members: policies of one deck (zoo names or .npz paths; a relative path is looked up"
        " from the working directory, then from the repository)",
    )
    init_policy: str = option(
        "checkpoints/search_distilled.npz", "start the student from this policy (zoo name or path; '' = from scratch)"
    )
    opponents: list[str] = option(
        ["cautious", "majority"], "agents at the other seats, each drawn per game: agent specs, as --eval-opponents"
    )
    calibration_games: int = option(
        100, "games of the first member whose positions measure each member's spread", minimum=1, maximum=MAX_GAMES
    )


TEACHERS: dict[str, type[SearchArgs] | type[EnsembleArgs]] = {"search": SearchArgs, "ensemble": EnsembleArgs}


def parse_args(argv: Sequence[str] | None = None) -> SearchArgs | EnsembleArgs:
    """The chosen teacher's arguments; bad values are refused before any game is played."""
    argv = list(sys.argv[1:] if argv is None else argv)
    chooser = argparse.ArgumentParser(add_help=False)
    chooser.add_argument("--teacher", choices=sorted(TEACHERS))
    chosen, _ = chooser.parse_known_args(argv)
    if chosen.teacher is None:
        overview = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        overview.add_argument(
            "--teacher", required=True, choices=sorted(TEACHERS), help="each teacher's flags: --teacher NAME --help"
        )
        overview.parse_args(argv)  # --help prints the overview; anything else is "--teacher is required"
        raise AssertionError("unreachable: --teacher is required")
    cls = TEACHERS[chosen.teacher]
    parser = dataclass_parser(cls, __doc__)
    own = {flag_name(spec.name) for spec in fields(cls)}
    for name, other in TEACHERS.items():
        for spec in fields(other):
            flag = flag_name(spec.name)
            if flag not in own and any(token == flag or token.startswith(flag + "=") for token in argv):
                parser.error(f"{flag} is a flag of --teacher {name}, not of --teacher {chosen.teacher}")
    args = cls(**vars(parser.parse_args(argv)))
    try:
        return checked_args(args)
    except ValueError as error:
        parser.error(str(error))


def checked_args(args: SearchArgs | EnsembleArgs) -> SearchArgs | EnsembleArgs:
    """The checks beyond each flag's own bounds: agents (returned in canonical form), teachers, output paths (an
    ``--out-dir`` holding a training run's files is refused: the run's ``policy.npz`` would be replaced)."""
    if not args.out_dir:  # Path("") is the current folder: the run's files would go wherever the command runs
        raise ValueError("--out-dir must not be empty: give the folder the run writes to")
    training_run = [name for name in TRAINING_RUN_FILES if (Path(args.out_dir) / name).exists()]
    if training_run:
        raise ValueError(
            f"--out-dir {args.out_dir} holds a training run's files ({', '.join(training_run)}): its policy.npz would "
            "be replaced by the distilled one; choose another --out-dir"
        )
    for flag, path, directory in [
        ("--out-dir", args.out_dir, True),
        ("--export", args.export, False),
        ("--data-dir", getattr(args, "data_dir", ""), True),
    ]:
        error = output_error(path, directory=directory) if path else None
        if error:
            raise ValueError(f"{flag}: {error}")
    args = replace(args, eval_opponents=checked_specs(args.eval_opponents, "--eval-opponents", args.deck, unique=True))
    problems = network_errors(args.hidden_sizes, observation_scale(args.deck).size, get_deck(args.deck).num_actions)
    if problems:
        raise ValueError("; ".join(problems))
    problem = export_problem(args.export, run_folders(args), input_files(args))
    if problem:
        raise ValueError(problem)
    if isinstance(args, SearchArgs):
        return replace(args, dagger_opponents=checked_specs(args.dagger_opponents, "--dagger-opponents", args.deck))
    assert isinstance(args, EnsembleArgs)
    args = replace(args, opponents=checked_specs(args.opponents, "--opponents", args.deck))
    for name in args.members:
        try:
            member = read_friday13_policy(policy_file(name))
        except CheckpointError as error:
            raise ValueError(f"--members: {error}") from error
        if member.metadata.deck != args.deck:
            raise ValueError(
                f"--members: {name} is a {ENV_VERSION} policy for the {member.metadata.deck!r} deck, this run needs"
                f" the {args.deck!r} deck"
            )
    if args.init_policy:
        try:
            read_matching_policy(
                policy_file(args.init_policy), deck=args.deck, activation="relu", hidden_sizes=args.hidden_sizes
            )
        except CheckpointError as error:
            raise ValueError(f"--init-policy: {error} (--init-policy '' starts from scratch)") from error
    return args


def run_folders(args: SearchArgs | EnsembleArgs) -> dict[str, Path]:
    """The folders the run writes in, by flag: ``--out-dir``, and the search teacher's ``--data-dir``."""
    folders = {"--out-dir": Path(args.out_dir)}
    if isinstance(args, SearchArgs):
        folders["--data-dir"] = Path(args.data_dir or Path(args.out_dir) / "chunks")
    return folders


def input_files(args: SearchArgs | EnsembleArgs) -> dict[str, list[Path]]:
    """The policy files the run may read, by flag (a spec that names no file stands for none)."""
    inputs = {"--eval-opponents": spec_files(args.eval_opponents)}
    if isinstance(args, SearchArgs):
        inputs["--dagger-opponents"] = spec_files(args.dagger_opponents)
    else:
        inputs["--members"] = spec_files(args.members)
        inputs["--init-policy"] = spec_files([args.init_policy] if args.init_policy else [])
        inputs["--opponents"] = spec_files(args.opponents)
    return inputs


# == --teacher search ================================================================================
GAMES_PER_CHUNK = 10
CHUNK_FORMAT = 2
"""Version of the chunk files; 2 = with the teacher's per-move values."""


class DataError(ValueError):
    """A data directory that this run cannot use: recorded with other settings, or damaged."""


@dataclass(frozen=True)
class ChunkJob:
    """One chunk of games: everything a worker process needs, and what the chunk file records."""

    path: str
    seeds: tuple[int, ...]
    players: tuple[int, ...]
    deck: str
    budget: int
    student: str = ""
    """Path of the student policy playing some seats (DAgger), or empty."""
    student_share: float = 0.0
    opponents: tuple[str, ...] = ()
    """Agents at the seats other than the student's one (DAgger against them), or empty."""

    @cached_property
    def spec(self) -> dict[str, Any]:
        """What identifies the chunk's content: the student by its weights' fingerprint, not its path or file
        (a rerun refits the same student into a file with other metadata; its chunks must still match).

        The student's and the opponents' entries appear only when set, so teacher chunks recorded before
        they existed still match. Computed once per job: the student's file is read and hashed once.
        """
        spec = {key: value for key, value in asdict(self).items() if key not in ("path", "student", "opponents")}
        if self.student:
            spec["student_weights_sha256"] = read_friday13_policy(self.student).fingerprint()
        if self.opponents:
            spec["opponents"] = list(self.opponents)
        return {"format": CHUNK_FORMAT, **spec, "seeds": list(self.seeds), "players": list(self.players)}


def choices(env: Any, opponents: dict[int, Agent]) -> Iterator[tuple[int, dict[str, Any], np.ndarray]]:
    """Play the reset AEC ``env`` to its end, ``opponents`` (by seat) moving at their seats and forced moves
    made; every other decision is yielded as ``(seat, observation, legal moves)``, and the caller then
    makes it with ``env.step(action)``."""
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        seat = env.possible_agents.index(agent)
        if seat in opponents:
            env.step(opponents[seat].act(observation))
            continue
        legal = legal_actions(observation)
        if legal.size == 1:
            env.step(int(legal[0]))
            continue
        yield seat, observation, legal


def play_search_games(job: ChunkJob) -> dict[str, np.ndarray]:
    """Search at every seat (the student at some, in DAgger); one row per decision with a choice.

    Against ``job.opponents`` the student holds one seat drawn per game and the others are those
    agents: only the student's positions are searched and recorded.

    Each row: the observation, the mask, the teacher's move, the teacher's mean value of every
    legal move minus the best one (so 0 for its move, NaN for illegal moves) and the game seed.
    """
    student = read_friday13_policy(job.student) if job.student else None
    rows: dict[str, list] = {"observations": [], "masks": [], "actions": [], "values": [], "games": []}
    for seed in job.seeds:
        rng = np.random.default_rng(seed)
        num_players = int(rng.choice(job.players))
        teachers = [SearchAgent(seed=int(s), budget=job.budget) for s in rng.integers(2**31, size=num_players)]
        if job.opponents:
            student_seats = np.arange(num_players) == rng.integers(num_players)
            opponents = {
                int(seat): make(str(rng.choice(job.opponents)), seed=int(rng.integers(2**31)))
                for seat in np.flatnonzero(~student_seats)
            }
        else:
            student_seats = rng.random(num_players) < job.student_share if student else np.zeros(num_players, bool)
            opponents = {}
        env = raw_env(num_players=num_players, deck=job.deck)
        env.reset(seed=seed)
        for seat, observation, legal in choices(env, opponents):
            action, means = teachers[seat].search(Table.read(observation))
            values = np.full(observation["action_mask"].shape, np.nan)
            values[legal] = [means[int(move)] - means[action] for move in legal]
            rows["observations"].append(observation["observation"])
            rows["masks"].append(observation["action_mask"])
            rows["actions"].append(action)
            rows["values"].append(values)
            rows["games"].append(seed)
            if student is not None and student_seats[seat]:
                action = student.choose(observation["observation"], legal)
            env.step(action)
    deck = get_deck(job.deck)
    exact = np.array(rows["observations"], dtype=np.float32).reshape(-1, observation_layout(deck).size)
    observations = exact.astype(np.int16)  # counts and scores: small integers, a quarter of the space
    if not np.array_equal(observations, exact):
        raise ValueError("an observation entry is not an int16 integer; the chunk format needs a wider type")
    return {
        "observations": observations,
        "masks": np.array(rows["masks"], dtype=np.int8).reshape(-1, deck.num_actions),
        "actions": np.array(rows["actions"], dtype=np.int64),
        "values": np.array(rows["values"], dtype=np.float32).reshape(-1, deck.num_actions),
        "games": np.array(rows["games"], dtype=np.int64),
    }


CHUNK_ARRAYS = ("observations", "masks", "actions", "values", "games")
"""The arrays of a chunk, one row per decision (``play_search_games``)."""


def read_chunk(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A chunk's specification and arrays, checked (``chunk_problem``), or a ``DataError`` naming the file: a damaged
    or tampered chunk would otherwise fail in the fit, after every game was played. Nothing is loaded past what the
    spec's games can hold (``read_arrays``: a file of kilobytes could claim terabytes)."""
    try:
        spec = read_spec_text(path)
        problem = spec_problem(spec)
        if problem is None:
            deck = get_deck(spec["deck"])
            arrays = read_arrays(path, False, data_bytes(chunk_shapes(deck), len(spec["seeds"]), deck))
            problem = chunk_problem(spec, arrays)
    except READ_ERRORS as error:
        problem = f"{type(error).__name__}: {error}"
    if problem is not None:
        raise damaged(path, problem)
    return spec, arrays


def damaged(path: Path, problem: str) -> DataError:
    return DataError(f"{path} is damaged ({problem}); delete it to record that chunk again")


def chunk_shapes(deck: Deck) -> dict[str, tuple[int, ...]]:
    """The shape of a row of each of a chunk's arrays (``CHUNK_ARRAYS``)."""
    return {**decision_shapes(deck, "values"), "actions": ()}


SPEC_KEYS = ("format", "seeds", "players", "deck", "budget", "student_share")
"""The keys of every chunk's spec (``ChunkJob.spec``; a DAgger chunk's adds its student's and its opponents')."""


def spec_problem(spec: object, keys: Sequence[str] = ("deck", "seeds")) -> str | None:
    """Why a chunk's spec is not one ``ChunkJob.spec`` writes, or None: an object holding ``keys``, its deck one of
    ``DECKS``, its seeds a list of 1 to ``GAMES_PER_CHUNK`` ints (the games its arrays may hold)."""
    if not isinstance(spec, dict):
        return f"its spec is a {type(spec).__name__}, not an object"
    missing = [key for key in keys if key not in spec]
    if missing:
        return f"its spec lacks {missing} (a chunk's has {list(SPEC_KEYS)})"
    if spec["deck"] not in DECKS:
        return f"its spec names no deck of {sorted(DECKS)}"
    seeds = spec["seeds"]
    if not (isinstance(seeds, list) and 0 < len(seeds) <= GAMES_PER_CHUNK and all(type(s) is int for s in seeds)):
        return f"its spec's seeds are not a list of 1 to {GAMES_PER_CHUNK} game seeds (ints)"
    return None


def chunk_problem(spec: dict[str, Any], arrays: dict[str, np.ndarray]) -> str | None:
    """What makes a chunk's arrays no decisions of its spec's deck (``spec_problem`` checked it), or None:
    ``decisions_problem`` with ``CHUNK_ARRAYS`` (the observations and the masks and move values as wide as the deck's,
    the masks 0 or 1, the legal moves' values finite), each teacher's move one of the deck's actions and legal in its
    mask."""
    deck = get_deck(spec["deck"])
    problem = decisions_problem(arrays, chunk_shapes(deck), "values")
    if problem is not None:
        return problem
    masks, actions = arrays["masks"], arrays["actions"]
    rows = len(actions)
    if actions.dtype.kind == "f" or (rows and not 0 <= actions.min() <= actions.max() < deck.num_actions):
        return f"a move is not one of the deck's {deck.num_actions} actions"
    if not masks[np.arange(rows), actions].all():
        return "a teacher's move is not legal in its mask"
    return None


def read_spec(path: Path) -> dict[str, Any]:
    """A chunk's specification alone (the arrays stay on disk), checked (``spec_problem``: every key of ``SPEC_KEYS``);
    a ``DataError`` naming a damaged file."""
    try:
        spec = read_spec_text(path)
        problem = spec_problem(spec, SPEC_KEYS)
    except READ_ERRORS as error:
        problem = f"{type(error).__name__}: {error}"
    if problem is not None:
        raise damaged(path, problem)
    return spec


def write_chunk(job: ChunkJob, data: dict[str, np.ndarray]) -> None:
    """Atomically (temporary file + rename): an interrupted run never leaves half a chunk."""
    write_dataset(Path(job.path), job.spec, data)


def is_recorded(job: ChunkJob) -> bool:
    """True if the chunk file holds exactly this job; an error if it was recorded with other settings.

    Only the game seeds may differ, and only where one chunk's are the first of the other's (a last chunk that
    another ``--games`` left part-full: the seeds are drawn in one sequence): that chunk is played again, whole.
    Others are another ``--seed``'s games, which a run would replace one chunk at a time: refused.
    """
    path = Path(job.path)
    if not path.is_file():
        return False
    stored = read_spec(path)
    expected = job.spec
    settings = [key for key in expected if key != "seeds" and stored.get(key) != expected[key]]
    if settings:
        found = {key: stored.get(key) for key in settings}
        wanted = {key: expected[key] for key in settings}
        raise DataError(
            f"{path} was recorded with {found}, this run asks for {wanted}: use another --data-dir "
            "(or the settings it was recorded with)"
        )
    recorded, asked = stored["seeds"], expected["seeds"]
    shared = min(len(recorded), len(asked))
    if recorded[:shared] != asked[:shared]:
        raise DataError(
            f"{path} was recorded with the games of seeds {recorded}, this run asks for {asked}: another --seed's "
            "games; use another --data-dir (or the --seed it was recorded with)"
        )
    return recorded == asked


def chunk_jobs(args: SearchArgs, data_dir: Path, tag: str, seeds: list[int], student: str = "") -> list[ChunkJob]:
    return [
        ChunkJob(
            path=str(data_dir / f"{tag}_{index:05d}.npz"),
            seeds=tuple(seeds[start : start + GAMES_PER_CHUNK]),
            players=tuple(args.players),
            deck=args.deck,
            budget=args.search_budget,
            student=student,
            student_share=args.dagger_share if student and not args.dagger_opponents else 0.0,
            opponents=tuple(args.dagger_opponents) if student else (),
        )
        for index, start in enumerate(range(0, len(seeds), GAMES_PER_CHUNK))
    ]


def record(jobs: list[ChunkJob], workers: int, progress: bool) -> list[Path]:
    """Play every chunk not recorded yet, in ``workers`` processes (``worker_pool``: they end with the script, Ctrl-C
    or SIGTERM included), writing each one as it finishes."""
    missing = [job for job in jobs if not is_recorded(job)]
    games = sum(len(job.seeds) for job in missing)
    if missing:
        print(
            f"playing {games:,} games ({len(jobs) - len(missing)} of {len(jobs)} chunks already recorded)", flush=True
        )
    with (
        tqdm(total=games, unit="game", disable=not progress or not missing, dynamic_ncols=True) as bar,
        worker_pool(workers if missing else 1) as pool,
    ):
        if pool is None:
            for job in missing:
                write_chunk(job, play_search_games(job))
                bar.update(len(job.seeds))
        else:
            futures = {pool.submit(play_search_games, job): job for job in missing}
            for future in as_completed(futures):
                write_chunk(futures[future], future.result())
                bar.update(len(futures[future].seeds))
    return [Path(job.path) for job in jobs]


def load_chunks(paths: list[Path]) -> dict[str, np.ndarray]:
    """The decisions of every chunk, in order, each chunk checked (``read_chunk``)."""
    parts = [read_chunk(path)[1] for path in paths]
    return {key: np.concatenate([part[key] for part in parts]) for key in CHUNK_ARRAYS}


def fit_search(
    args: SearchArgs, data: dict[str, np.ndarray], scale: np.ndarray
) -> tuple[torch.nn.Sequential, dict[str, Any]]:
    """The teacher's moves and the soft targets of its move values (module docstring); the best network."""
    labels = torch.as_tensor(data["actions"])
    targets = torch.as_tensor(soft_targets(data["values"], data["masks"], args.soft_temperature))
    return fit_student(
        data, labels, targets, scale, seed=args.seed, validation=args.validation, hidden_sizes=args.hidden_sizes,
        epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
        soft_weight=args.soft_weight, weight_decay=args.weight_decay, patience=args.patience,
    )  # fmt: skip


RUN_ONLY_ARGS = (
    "teacher", "dagger_rounds", "workers", "progress", "export", "out_dir", "data_dir", "eval_games",
    "eval_opponents", "torch_threads",
)  # fmt: skip
"""Arguments that change neither a round's data nor its fit (later rounds are not the round's concern)."""


def round_method(dagger_round: int) -> str:
    return "distillation of the search agent" + (f", DAgger round {dagger_round}" if dagger_round else "")


def fit_arguments(args: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in args.items() if key not in RUN_ONLY_ARGS}


def recorded_round(
    args: SearchArgs, path: Path, dagger_round: int
) -> tuple[torch.nn.Sequential, dict[str, Any]] | None:
    """The network and training record of this round's student, if an earlier run fitted it from the same
    data with the same fit arguments; else None (fit it).

    A DAgger run asked for more rounds, or interrupted after some, thus goes on from its last student
    instead of refitting every earlier round (each fit takes minutes; the data chunks were already reused).
    The chunks themselves follow from the arguments compared here, and each is checked against its spec.
    """
    try:
        policy = read_matching_policy(path, deck=args.deck, activation="relu", hidden_sizes=args.hidden_sizes)
    except CheckpointError:
        return None
    training = dict(policy.metadata.training or {})
    stored_args = training.get("args", {})
    same_fit = fit_arguments(stored_args) == fit_arguments(asdict(args))
    if training.get("method") != round_method(dagger_round) or not same_fit:
        return None
    network = build_network(args.hidden_sizes, policy.metadata.observation_size, policy.metadata.num_actions)
    load_linear_layers(linear_layers(network), policy)
    if (stored_args.get("eval_games"), stored_args.get("eval_opponents")) != (args.eval_games, args.eval_opponents):
        training.pop("evaluation", None)  # measured on other games: measure again
    return network, training


def distill_search(args: SearchArgs) -> dict[str, Any]:
    """Teacher games, then a fit and (after it) a DAgger round at a time; the last student is the policy."""
    out_dir = Path(args.out_dir)
    data_dir = Path(args.data_dir or out_dir / "chunks")
    data_dir.mkdir(parents=True, exist_ok=True)
    description = f"search (budget {args.search_budget}) distilled into an MLP"
    started = time.time()
    seeds = np.random.SeedSequence(args.seed).generate_state(args.games).tolist()
    paths = record(chunk_jobs(args, data_dir, "teacher", seeds), args.workers, args.progress)
    record_s = round(time.time() - started, 1)
    scale = observation_scale(args.deck)
    rounds = []
    for dagger_round in range(args.dagger_rounds + 1):
        if dagger_round:
            student = out_dir / f"student_{dagger_round - 1}.npz"
            seeds = np.random.SeedSequence([args.seed, dagger_round]).generate_state(args.dagger_games).tolist()
            jobs = chunk_jobs(args, data_dir, f"dagger{dagger_round}", seeds, str(student))
            paths += record(jobs, args.workers, args.progress)
        data = load_chunks(paths)
        print(
            f"round {dagger_round}: {len(data['actions']):,} decisions from {len(np.unique(data['games'])):,} games",
            flush=True,
        )
        policy_path = out_dir / f"student_{dagger_round}.npz"
        recorded = recorded_round(args, policy_path, dagger_round)
        if recorded:
            print(f"round {dagger_round}: kept {policy_path}, fitted from this data with these arguments", flush=True)
            network, training = recorded
        else:
            network, report = fit_search(args, data, scale)
            training = {
                "method": round_method(dagger_round),
                "args": asdict(args),
                **report,
                "teacher_games_s": record_s,
                "wall_time_s": round(time.time() - started, 1),
            }
            save_student(network, policy_path, description, scale, args, training)
        if "evaluation" not in training:
            training["evaluation"] = quick_evaluation(
                policy_path,
                args.eval_opponents,
                args.eval_games,
                workers=args.workers,
                deck=args.deck,
                progress=args.progress,
            )
            save_student(network, policy_path, description, scale, args, training)  # a rerun keeps the evaluation
        rounds.append({key: training[key] for key in ("best_epoch", "agreement_with_teacher", "evaluation")})
    training = {**training, "args": asdict(args), "wall_time_s": round(time.time() - started, 1), "rounds": rounds}
    return write_outputs(network, training, description, scale, args)


# == --teacher ensemble ==============================================================================
GAMES_PER_JOB = 25


class Ensemble:
    """Weighted mean of the members' logits (the player picks the legal move with the highest mean)."""

    def __init__(self, members: list[MLPPolicy], weights: list[float]) -> None:
        self.members = members
        self.weights = weights

    def logits(self, observation: np.ndarray) -> np.ndarray:
        pairs = zip(self.members, self.weights, strict=True)
        return np.mean([weight * member.logits(observation) for member, weight in pairs], axis=0)


def legal_spread(logits: np.ndarray, masks: np.ndarray) -> float:
    """Mean over positions of the standard deviation of the legal moves' logits."""
    legal = masks.astype(bool)
    return float(np.nanmean(np.nanstd(np.where(legal, logits, np.nan), axis=1)))


def member_weights(members: list[MLPPolicy], observations: np.ndarray, masks: np.ndarray) -> list[float]:
    """1 / each member's spread, times the first member's spread (so the first keeps weight 1)."""
    spreads = [legal_spread(np.array([member.logits(row) for row in observations]), masks) for member in members]
    flat = [index for index, spread in enumerate(spreads) if not spread > 0]
    if flat:
        raise ValueError(f"members {flat} give every legal move the same logit: they cannot be weighted by spread")
    return [spreads[0] / spread for spread in spreads]


@dataclass(frozen=True)
class GamesJob:
    """Games of one worker: everything it needs to rebuild the player and the table."""

    members: tuple[str, ...]
    weights: tuple[float, ...]
    seeds: tuple[int, ...]
    players: tuple[int, ...]
    opponents: tuple[str, ...]
    deck: str


def play_ensemble_games(job: GamesJob) -> dict[str, np.ndarray]:
    """The ensemble at one seat drawn per game, ``job.opponents`` drawn at the others; one row per decision
    of the ensemble with more than one legal move: observation, mask, the ensemble's logits, game seed."""
    ensemble = Ensemble([read_friday13_policy(path) for path in job.members], list(job.weights))
    rows: dict[str, list] = {"observations": [], "masks": [], "logits": [], "games": []}
    for seed in job.seeds:
        num_players, _, opponents = one_seat_table(np.random.default_rng(seed), job.players, job.opponents)
        env = raw_env(num_players=num_players, deck=job.deck)
        env.reset(seed=seed)
        for _, observation, legal in choices(env, opponents):
            logits = ensemble.logits(observation["observation"])
            rows["observations"].append(observation["observation"])
            rows["masks"].append(observation["action_mask"])
            rows["logits"].append(logits)
            rows["games"].append(seed)
            env.step(int(legal[np.argmax(logits[legal])]))
    deck = get_deck(job.deck)
    return {
        "observations": np.array(rows["observations"], dtype=np.int16).reshape(len(rows["games"]), -1),
        "masks": np.array(rows["masks"], dtype=np.int8).reshape(-1, deck.num_actions),
        "logits": np.array(rows["logits"], dtype=np.float32).reshape(-1, deck.num_actions),
        "games": np.array(rows["games"], dtype=np.int64),
    }


def games_jobs(args: EnsembleArgs, members: list[str], weights: list[float], seeds: list[int]) -> list[GamesJob]:
    return [
        GamesJob(
            members=tuple(members),
            weights=tuple(weights),
            seeds=tuple(seeds[start : start + GAMES_PER_JOB]),
            players=tuple(args.players),
            opponents=tuple(args.opponents),
            deck=args.deck,
        )
        for start in range(0, len(seeds), GAMES_PER_JOB)
    ]


def fit_ensemble(
    args: EnsembleArgs, data: dict[str, np.ndarray], scale: np.ndarray
) -> tuple[torch.nn.Sequential, dict[str, Any]]:
    """Cross-entropy to the ensemble's legal softmax, from ``--init-policy``; the best network."""
    mask = torch.as_tensor(data["masks"].astype(bool))
    teacher = torch.as_tensor(data["logits"]).masked_fill(~mask, -1e9)
    init = read_friday13_policy(policy_file(args.init_policy)) if args.init_policy else None
    return fit_student(
        data, teacher.argmax(dim=1), torch.softmax(teacher, dim=1), scale, seed=args.seed,
        validation=args.validation, hidden_sizes=args.hidden_sizes, init=init, epochs=args.epochs,
        batch_size=args.batch_size, learning_rate=args.learning_rate, soft_weight=1.0,
    )  # fmt: skip


def distill_ensemble(args: EnsembleArgs) -> dict[str, Any]:
    """Member weights from the calibration games, the ensemble's games (cached), the fit, the outputs."""
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    paths = [str(policy_file(name)) for name in args.members]
    members = [read_friday13_policy(path) for path in paths]
    calibration_seeds = np.random.SeedSequence([args.seed, 1]).generate_state(args.calibration_games).tolist()
    calibration_jobs = games_jobs(args, paths[:1], [1.0], calibration_seeds)
    calibration = play_jobs(play_ensemble_games, calibration_jobs, args.workers, False)
    weights = member_weights(members, calibration["observations"], calibration["masks"])
    for name, weight in zip(args.members, weights, strict=True):
        print(f"member {name}: weight {weight:.4f}")
    seeds = np.random.SeedSequence(args.seed).generate_state(args.games).tolist()
    spec = {
        "members": [member.fingerprint() for member in members],
        "weights": weights,
        "seeds": seeds,
        "players": args.players,
        "opponents": args.opponents,
        "deck": args.deck,
    }
    cache = out_dir / "positions.npz"
    data = read_dataset(cache, spec)
    if data is None:
        print(f"playing {args.games:,} games of the ensemble", flush=True)
        data = play_jobs(play_ensemble_games, games_jobs(args, paths, weights, seeds), args.workers, args.progress)
        write_dataset(cache, spec, data)
    else:
        print(f"reusing {cache}")
    record_s = round(time.time() - started, 1)
    print(f"{len(data['games']):,} decisions from {args.games:,} games", flush=True)
    scale = observation_scale(args.deck)
    network, report = fit_ensemble(args, data, scale)
    training = {
        "method": f"distillation of an ensemble of {len(members)} policies",
        "args": asdict(args),
        "members": [
            {"path": name, "weights_sha256": member.fingerprint(), "weight": weight}
            for name, member, weight in zip(args.members, members, weights, strict=True)
        ],
        **report,
        "ensemble_games_s": record_s,
        "wall_time_s": round(time.time() - started, 1),
    }
    description = f"an ensemble of {len(members)} policies distilled into an MLP"
    return export_evaluated(network, training, description, scale, args)


# -- the run ----------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Distil the chosen teacher; returns the run's summary (also in ``<out-dir>/summary.json``). Ctrl-C or SIGTERM
    stops it with one line (what is kept: the data recorded so far, which the same command reuses) and the shells'
    status, its worker processes with it (``worker_pool``)."""
    working_folder_importable()  # an agent spec may name a module:factory of the working folder
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    try:
        with signals_interrupt():
            if isinstance(args, SearchArgs):
                return distill_search(args)
            return distill_ensemble(args)
    except (DataError, RunError) as error:  # a data directory recorded with other settings, a damaged chunk, an
        # export the loader would refuse: named, not a traceback
        raise SystemExit(f"error: {error}") from None
    except Interrupted as stop:
        folders = ", ".join(map(str, run_folders(args).values()))
        stop.saved = f"the data recorded so far is kept in {folders}: the same command reuses it"
        print(stop.message(), file=sys.stderr, flush=True)
        raise SystemExit(stop.exit_status) from None


if __name__ == "__main__":
    main()
