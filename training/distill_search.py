"""Distil the search agent into a numpy policy that decides in tens of microseconds instead of ~13 ms.

Reads top to bottom: hyperparameters, (1) self-play games of the ``search`` agent at every seat of
tables drawn from 3-6 players, recording every decision with more than one legal move together with
the teacher's mean value of *every* legal move, (2) a supervised fit of an MLP to those decisions,
(3) optional DAgger rounds, (4) export to the same safe ``.npz`` format as ``train_ppo.py``
(``friday13_env.friday13.agents.load`` plays it) and a quick duplicate evaluation against the baselines.

**Data** is written in chunks of ``GAMES_PER_CHUNK`` games (``<data-dir>/teacher_00000.npz``, ...),
each atomically, as soon as it is played. A chunk whose stored specification (game seeds, table
sizes, deck, budget, student) is what this run asks for is reused, so an interrupted run resumes
where it stopped and a later run with a larger ``--games`` only plays the new games (game seeds are
a prefix-stable sequence of ``--seed``). A data directory recorded with other teacher settings is
refused rather than mixed.

**Loss**: ``(1 - soft_weight) * CE(hard label) + soft_weight * CE(soft target)``, both over the
legal moves only. The teacher's values are on different scales (relative points before the last
round; win share + 1e-4 x relative points in the last round), so each decision's values are
normalised on their own: standardised over its legal moves (mean 0, standard deviation 1; all
equal -> all 0), and the soft target is ``softmax(z / soft_temperature)`` over the legal moves. A
last round whose win share no move can change thus still teaches the tie-break preference. The
reported metric stays hard-label agreement (the network's greedy move is the teacher's).

**Fit**: train/validation split by game, Adam(W) with a cosine schedule, the epoch with the best
validation agreement is kept and training stops after ``--patience`` epochs without improvement.

**DAgger** (``--dagger-rounds R --dagger-games G``): after each fit, G more games are played in
which every seat is the current student with probability ``--dagger-share``; the teacher still
searches (and labels) every position, so its labels cover the positions the student reaches.
With ``--dagger-opponents cautious majority`` the student instead holds one seat of each DAgger game
against those agents and only its own positions are searched: the positions of the evaluation
setting, at a quarter of a teacher game's cost at 4 players. Each round's student is kept as
``<out-dir>/student_<round>.npz`` with its arguments and quick evaluation; a rerun with the same
data and fit arguments keeps it instead of fitting it again, so a run asked for more rounds (or
interrupted) only pays for the new ones.

Measured at small scale (150 games at budget 6000, 256x256, each win rate over 2,000 4-player
duplicate games on the quick evaluation's deals): soft targets (weight 0.5) beat hard labels alone
in play (0.315 / 0.244 against 3 x cautious / majority vs 0.278 / 0.197) at equal held-out
agreement (0.427); one DAgger round of 50 games after 100 teacher games did not beat 150 teacher
games (0.296 / 0.217). Two searches at budget 6000 with different seeds
pick the same move in only 56% of positions (66% at 22000): label noise alone keeps the agreement
far below 100%.

At full scale, more games at the agent's own budget made the difference: 1,000 games at budget
22,000 (170,579 decisions, 0.514 held-out agreement) gave 0.558 / 0.472 against 3 x cautious /
majority (2,000 games each), against 0.310 / 0.244 for 330 games at budget 6,000 (hard labels);
the two changes were not measured apart. Budget 6,000 saves only half the time per decision (the
rollouts' numpy overhead per step does not shrink with the batch), so the defaults use 22,000.

The shipped recipe (the defaults) adds DAgger against the scripted agents. Each step, 4-player win
rate against 3 x cautious / majority over the same 2,000 duplicate games (seed 0, each +-0.021):
2,000 teacher games (340,697 decisions) 0.593 / 0.544; + 2,000 games of the student against
cautious/majority labelled by the teacher 0.630 / 0.567; + a second such round 0.637 / 0.601; + a
third 0.661 / 0.616 (581,182 decisions), where ``search`` itself wins 0.636 / 0.737. Held-out
agreement hardly moved (0.528, 0.526, 0.528, 0.528): what improved is the play in the positions
the student meets against those agents. Rounds 4 and 5 did not add more: on the selection deals
(seed 1) rounds 3, 4, 5 won 0.672 / 0.635, 0.665 / 0.626, 0.669 / 0.629 (each +-0.021).

Run (the defaults are the recipe of ``checkpoints/search_distilled.npz``: about 100 minutes on 2
shared cores, 55 of them for the teacher games, 10-13 per DAgger round): ``python
training/distill_search.py --export checkpoints/search_distilled.npz``.
Everything is seeded: the same arguments give the same data set and, on the same machine, the same
weights.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from common.imitation import (
    build_network,
    fit_network,
    linear_layers,
    quick_evaluation,
    soft_targets,
    split_by_game,
)
from common.script_args import dataclass_parser, option
from common.torch_policy import load_linear_layers, read_matching_policy, save_linear_layers
from tqdm import tqdm

from friday13_env import raw_env
from friday13_env.core.policy import CheckpointError
from friday13_env.friday13.agents import legal_actions, make
from friday13_env.friday13.agents.policy import observation_scale, policy_metadata, read_card_policy
from friday13_env.friday13.agents.search import SearchAgent
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.engine import Rules

GAMES_PER_CHUNK = 10
CHUNK_FORMAT = 2
"""Version of the chunk files; 2 = with the teacher's per-move values."""


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    games: int = option(2000, "self-play games of the search agent (chunks already recorded are reused)")
    players: list[int] = option([3, 4, 5, 6], "table sizes, one drawn per game")
    deck: str = option("standard", "standard or german")
    search_budget: int = option(22_000, "simulated card plays per decision of the teacher (the agent's default)")
    workers: int = option(2, "processes playing the games and the evaluation")
    seed: int = option(0, "seeds the games, the split and the fit")
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths")
    epochs: int = option(60, "most passes over the training decisions (cosine schedule length)")
    patience: int = option(10, "stop after this many epochs without a better validation agreement (0 = never)")
    batch_size: int = option(512, "minibatch size")
    learning_rate: float = option(1e-3, "Adam learning rate (cosine-annealed to 0 over --epochs)")
    weight_decay: float = option(0.0, "AdamW weight decay")
    soft_weight: float = option(0.5, "weight of the soft-target loss against the hard label, in [0, 1]")
    soft_temperature: float = option(1.0, "temperature of the soft target over the standardised move values")
    validation: float = option(0.1, "share of the games held out to measure agreement with the teacher")
    dagger_rounds: int = option(3, "DAgger rounds after the first fit (0 = plain distillation)")
    dagger_games: int = option(2000, "games per DAgger round")
    dagger_share: float = option(0.5, "probability that a seat of a DAgger game is played by the student")
    dagger_opponents: list[str] = option(
        ["cautious", "majority"],
        "agents the student faces in DAgger games: one student seat, the others drawn from these, and only the"
        " student's positions searched (none, a bare flag: the teacher at every seat, the student at"
        " --dagger-share of them)",
        allow_empty=True,
    )
    eval_games: int = option(400, "4-player duplicate games against 3 copies of each --eval-opponents (0 = none)")
    eval_opponents: list[str] = option(["cautious", "majority"], "baselines of the quick evaluation")
    data_dir: str = option("", "where the data chunks go (default: <out-dir>/chunks)")
    out_dir: str = option("runs/distill", "where the policy and summary.json go")
    export: str = option("", "also write the policy here, e.g. checkpoints/search_distilled.npz")
    progress: bool = option(True, "show progress bars")
    torch_threads: int = option(2, "torch CPU threads of the fit")


def parse_args(argv: list[str] | None = None) -> Args:
    """Build the CLI from ``Args``; bad values are refused before any game is played."""
    parser = dataclass_parser(Args, __doc__)
    args = Args(**vars(parser.parse_args(argv)))
    for name in ("soft_weight", "validation", "dagger_share"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            parser.error(f"--{name.replace('_', '-')} must lie in [0, 1], got {getattr(args, name)}")
    if args.soft_temperature <= 0:
        parser.error(f"--soft-temperature must be positive, got {args.soft_temperature}")
    for name in ("games", "search_budget", "workers", "epochs", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    try:
        get_deck(args.deck)
        for count in args.players:
            Rules(num_players=count)
        for name in args.dagger_opponents:
            make(name)
    except ValueError as error:
        parser.error(str(error))
    return args


# -- (1) the teacher's games -------------------------------------------------------------------------
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

    def spec(self) -> dict[str, Any]:
        """What identifies the chunk's content: the student by its weights' fingerprint, not its path or file
        (a rerun refits the same student into a file with other metadata; its chunks must still match).

        The student's and the opponents' entries appear only when set, so teacher chunks recorded before
        they existed still match.
        """
        spec = {key: value for key, value in asdict(self).items() if key not in ("path", "student", "opponents")}
        if self.student:
            spec["student_weights_sha256"] = read_card_policy(self.student).fingerprint()
        if self.opponents:
            spec["opponents"] = list(self.opponents)
        return {"format": CHUNK_FORMAT, **spec, "seeds": list(self.seeds), "players": list(self.players)}


def play_games(job: ChunkJob) -> dict[str, np.ndarray]:
    """Search at every seat (the student at some, in DAgger); one row per decision with a choice.

    Against ``job.opponents`` the student holds one seat drawn per game and the others are those
    agents: only the student's positions are searched and recorded.

    Each row: the observation, the mask, the teacher's move, the teacher's mean value of every
    legal move minus the best one (so 0 for its move, NaN for illegal moves) and the game seed.
    """
    student = read_card_policy(job.student) if job.student else None
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
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = legal_actions(observation)
            seat = env.possible_agents.index(agent)
            if seat in opponents:
                env.step(opponents[seat].act(observation))
                continue
            if legal.size == 1:
                env.step(int(legal[0]))
                continue
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


def read_chunk(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A chunk's specification and arrays."""
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    return json.loads(str(arrays.pop("spec"))), arrays


def read_spec(path: Path) -> dict[str, Any]:
    """A chunk's specification alone (the arrays stay on disk)."""
    with np.load(path, allow_pickle=False) as archive:
        return json.loads(str(archive["spec"]))


def write_chunk(job: ChunkJob, data: dict[str, np.ndarray]) -> None:
    """Atomically (temporary file + rename): an interrupted run never leaves half a chunk."""
    path = Path(job.path)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
        np.savez_compressed(handle, spec=np.array(json.dumps(job.spec())), **data)
    os.chmod(handle.name, 0o644)  # temporary files are private; a data set is meant to be shared
    os.replace(handle.name, path)


def is_recorded(job: ChunkJob) -> bool:
    """True if the chunk file holds exactly this job; an error if it was recorded with other settings.

    Only the game seeds may differ (a last chunk that a smaller ``--games`` left part-full): that
    chunk is played again, whole.
    """
    path = Path(job.path)
    if not path.is_file():
        return False
    stored = read_spec(path)
    expected = job.spec()
    settings = [key for key in expected if key != "seeds" and stored.get(key) != expected[key]]
    if settings:
        found = {key: stored.get(key) for key in settings}
        wanted = {key: expected[key] for key in settings}
        raise ValueError(
            f"{path} was recorded with {found}, this run asks for {wanted}: use another --data-dir "
            "(or the settings it was recorded with)"
        )
    return stored["seeds"] == expected["seeds"]


def chunk_jobs(args: Args, data_dir: Path, tag: str, seeds: list[int], student: str = "") -> list[ChunkJob]:
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
    """Play every chunk not recorded yet, in ``workers`` processes, writing each one as it finishes."""
    missing = [job for job in jobs if not is_recorded(job)]
    games = sum(len(job.seeds) for job in missing)
    if missing:
        print(
            f"playing {games:,} games ({len(jobs) - len(missing)} of {len(jobs)} chunks already recorded)", flush=True
        )
    with tqdm(total=games, unit="game", disable=not progress or not missing, dynamic_ncols=True) as bar:
        if workers == 1:
            for job in missing:
                write_chunk(job, play_games(job))
                bar.update(len(job.seeds))
        elif missing:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(play_games, job): job for job in missing}
                for future in as_completed(futures):
                    write_chunk(futures[future], future.result())
                    bar.update(len(futures[future].seeds))
    return [Path(job.path) for job in jobs]


def load_data(paths: list[Path]) -> dict[str, np.ndarray]:
    parts = [read_chunk(path)[1] for path in paths]
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


# -- (2) the supervised fit --------------------------------------------------------------------------
def fit(args: Args, data: dict[str, np.ndarray], scale: np.ndarray) -> tuple[torch.nn.Sequential, dict[str, Any]]:
    """The loss of the module docstring; returns the best-validation-agreement network and its figures."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    is_validation = split_by_game(data["games"], args.validation, args.seed)
    x = torch.as_tensor(data["observations"].astype(np.float32) * scale)
    mask = torch.as_tensor(data["masks"].astype(bool))
    y = torch.as_tensor(data["actions"])
    target = torch.as_tensor(soft_targets(data["values"], data["masks"], args.soft_temperature))
    network = build_network(args.hidden_sizes, x.shape[1], mask.shape[1])
    report = fit_network(
        network, (x, mask, y, target), is_validation, rng, epochs=args.epochs, batch_size=args.batch_size,
        learning_rate=args.learning_rate, soft_weight=args.soft_weight, weight_decay=args.weight_decay,
        patience=args.patience,
    )  # fmt: skip
    return network, report


RUN_ONLY_ARGS = (
    "dagger_rounds", "workers", "progress", "export", "out_dir", "data_dir", "eval_games", "eval_opponents",
    "torch_threads",
)  # fmt: skip
"""Arguments that change neither a round's data nor its fit (later rounds are not the round's concern)."""


def round_method(dagger_round: int) -> str:
    return "distillation of the search agent" + (f", DAgger round {dagger_round}" if dagger_round else "")


def fit_arguments(args: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in args.items() if key not in RUN_ONLY_ARGS}


def recorded_round(args: Args, path: Path, dagger_round: int) -> tuple[torch.nn.Sequential, dict[str, Any]] | None:
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
    training = policy.metadata.training or {}
    stored_args = training.get("args", {})
    same_fit = fit_arguments(stored_args) == fit_arguments(asdict(args))
    if training.get("method") != round_method(dagger_round) or not same_fit:
        return None
    network = build_network(args.hidden_sizes, policy.metadata.observation_size, policy.metadata.num_actions)
    load_linear_layers(linear_layers(network), policy)
    if (stored_args.get("eval_games"), stored_args.get("eval_opponents")) != (args.eval_games, args.eval_opponents):
        training.pop("evaluation", None)  # measured on other games: measure again
    return network, training


# -- (3) export and evaluation ---------------------------------------------------------------------
def export(args: Args, network: torch.nn.Sequential, scale: np.ndarray, path: Path, training: dict) -> None:
    linears = linear_layers(network)
    description = f"search (budget {args.search_budget}) distilled into an MLP"
    metadata = policy_metadata(args.deck, "relu", args.hidden_sizes, description, training)
    save_linear_layers(path, linears, scale, metadata)


# -- the run ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    out_dir = Path(args.out_dir)
    data_dir = Path(args.data_dir or out_dir / "chunks")
    data_dir.mkdir(parents=True, exist_ok=True)
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
        data = load_data(paths)
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
            network, report = fit(args, data, scale)
            training = {
                "method": round_method(dagger_round),
                "args": asdict(args),
                **report,
                "teacher_games_s": record_s,
                "wall_time_s": round(time.time() - started, 1),
            }
            export(args, network, scale, policy_path, training)
        if "evaluation" not in training:
            training["evaluation"] = quick_evaluation(
                policy_path,
                args.eval_opponents,
                args.eval_games,
                workers=args.workers,
                deck=args.deck,
                progress=args.progress,
            )
            export(args, network, scale, policy_path, training)  # a resumed run keeps the evaluation too
        rounds.append({key: training[key] for key in ("best_epoch", "agreement_with_teacher", "evaluation")})
    training = {**training, "args": asdict(args), "wall_time_s": round(time.time() - started, 1), "rounds": rounds}
    for path in [out_dir / "policy.npz", *([Path(args.export)] if args.export else [])]:
        export(args, network, scale, path, training)
        print(f"wrote {path}")
    (out_dir / "summary.json").write_text(json.dumps(training, indent=1))
    return training


if __name__ == "__main__":
    main()
