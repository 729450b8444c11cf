"""Distil an ensemble of policies into one MLP that plays as well as the ensemble at the cost of one network.

Reads top to bottom: hyperparameters, (1) the ensemble (the members' logits, each divided by its
typical spread so that no member outvotes the others by scale alone, then averaged), (2) games in
which the ensemble holds one seat against scripted opponents, recording its logits at every
decision with a choice, (3) a supervised fit of one MLP to those logits (cross-entropy to the
ensemble's softmax over the legal moves), (4) export to the safe ``.npz`` format
(``friday13_env.friday13.agents.load`` plays it) and a quick duplicate evaluation against the baselines.

**Why**: single networks trained here make errors of their own. Averaged, members that differ
(the distilled ``search`` agent, its PPO fine-tune, PPO runs specialised against ``majority``)
beat every one of them, and a student fitted to the average keeps the gain at the cost of one
network. At 4 players against 3 x ``majority`` / 3 x ``cautious`` (2,000 duplicate games on the
selection deals, ``--seed 1``): ``search_distilled.npz`` 0.635 / 0.672, ``ppo_finetuned.npz``
0.622 / 0.663, the ensemble of the default ``--teachers`` 0.666 / 0.706 (measured with the weights
rounded to 1, 0.09, 0.08, 0.085), its distilled student (this script's defaults) 0.672 / 0.700.
An ensemble costs one forward pass per member; the student costs one.

**Member scale**: a member's *spread* is the standard deviation of its logits over the legal moves,
averaged over the positions of ``--calibration-games`` games that the first member plays. PPO
fine-tunes of a sharpened start have spreads near 11, the distilled policy near 0.9: without this
the fine-tunes alone would decide.

**Data** is cached in ``<out-dir>/positions.npz`` with its specification (members' weight
fingerprints, game seeds, table sizes, opponents); a rerun with the same specification reuses it.

Run (the defaults are the recipe of ``checkpoints/ensemble_distilled.npz``; 77 s on 2 shared
cores plus the quick evaluation): ``python training/distill_ensemble.py --export
checkpoints/ensemble_distilled.npz``. The two specialised members are shipped in
``checkpoints/members/``, with the commands that trained them in checkpoints/README.md. A second
round (this student and two PPO runs specialised from it as members, starting from it) did not
add (same deals): 0.672 / 0.705 and, with the first round's two specialists as well, 0.671 / 0.714.
Everything is seeded: the same arguments give the same data set and, on the same machine, the same
weights.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from common.imitation import (
    build_network,
    export_evaluated,
    fit_network,
    linear_layers,
    one_seat_table,
    play_jobs,
    read_dataset,
    split_by_game,
    write_dataset,
)
from common.script_args import dataclass_parser, option, repository_path
from common.torch_policy import load_linear_layers, read_matching_policy

from friday13_env import raw_env
from friday13_env.core.policy import CheckpointError, MLPPolicy
from friday13_env.friday13.agents import legal_actions, make
from friday13_env.friday13.agents.policy import ENV_VERSION, observation_scale, read_card_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import Rules

REPOSITORY = Path(__file__).resolve().parents[1]
"""Where the shipped checkpoints live, so that the default members are found from any directory."""
GAMES_PER_JOB = 25


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    teachers: list[str] = option(
        [
            "checkpoints/search_distilled.npz",
            "checkpoints/ppo_finetuned.npz",
            "checkpoints/members/ppo_majority4_seed0.npz",
            "checkpoints/members/ppo_majority4_seed1.npz",
        ],
        "the ensemble's members (.npz policies of one deck; a relative path is looked up from the working"
        " directory, then from the repository)",
    )
    init_policy: str = option(
        "checkpoints/search_distilled.npz", "start the student from this policy ('' = from scratch)"
    )
    games: int = option(3000, "games the ensemble plays (one seat) to record its decisions")
    players: list[int] = option([3, 4, 4, 5, 6], "table sizes, one drawn per game (repeat one to draw it more)")
    opponents: list[str] = option(["cautious", "majority"], "agents at the other seats, each drawn per game")
    calibration_games: int = option(100, "games of the first member whose positions measure each member's spread")
    deck: str = option("standard", "standard or german")
    seed: int = option(0, "seeds the games, the split and the fit")
    workers: int = option(2, "processes playing the games and the evaluation")
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the student")
    epochs: int = option(15, "passes over the training decisions (cosine schedule length)")
    batch_size: int = option(512, "minibatch size")
    learning_rate: float = option(3e-4, "Adam learning rate (cosine-annealed to 0 over --epochs)")
    validation: float = option(0.08, "share of the games held out to measure agreement with the ensemble")
    eval_games: int = option(400, "4-player duplicate games against 3 copies of each --eval-opponents (0 = none)")
    eval_opponents: list[str] = option(["cautious", "majority"], "baselines of the quick evaluation")
    out_dir: str = option("runs/ensemble", "where positions.npz, policy.npz and summary.json go")
    export: str = option("", "also write the policy here, e.g. checkpoints/ensemble_distilled.npz")
    progress: bool = option(True, "show progress bars")
    torch_threads: int = option(2, "torch CPU threads of the fit")


def shipped_path(name: str) -> Path:
    return repository_path(name, REPOSITORY)


def parse_args(argv: list[str] | None = None) -> Args:
    """Build the CLI from ``Args``; bad values (and unreadable or mismatched members) are refused up front."""
    parser = dataclass_parser(Args, __doc__)
    args = Args(**vars(parser.parse_args(argv)))
    for name in ("games", "calibration_games", "workers", "epochs", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0.0 <= args.validation < 1.0:
        parser.error(f"--validation must lie in [0, 1), got {args.validation}")
    try:
        get_deck(args.deck)
        for count in args.players:
            Rules(num_players=count)
        for name in args.opponents:
            make(name)
    except ValueError as error:
        parser.error(str(error))
    try:
        members = [read_card_policy(shipped_path(name)) for name in args.teachers]
        if args.init_policy:
            read_matching_policy(
                shipped_path(args.init_policy), deck=args.deck, activation="relu", hidden_sizes=args.hidden_sizes
            )
    except (CheckpointError, FileNotFoundError) as error:
        parser.error(str(error))
    for name, member in zip(args.teachers, members, strict=True):
        if member.metadata.env_version != ENV_VERSION or member.metadata.deck != args.deck:
            parser.error(
                f"--teachers: {name} is a {member.metadata.env_version} policy for the {member.metadata.deck!r} deck,"
                f" this run needs {ENV_VERSION} with the {args.deck!r} deck"
            )
    return args


# -- (1) the ensemble --------------------------------------------------------------------------------
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


# -- (2) the ensemble's games ------------------------------------------------------------------------
@dataclass(frozen=True)
class GamesJob:
    """Games of one worker: everything it needs to rebuild the player and the table."""

    members: tuple[str, ...]
    weights: tuple[float, ...]
    seeds: tuple[int, ...]
    players: tuple[int, ...]
    opponents: tuple[str, ...]
    deck: str


def play_games(job: GamesJob) -> dict[str, np.ndarray]:
    """The ensemble at one seat drawn per game, ``job.opponents`` drawn at the others; one row per decision
    of the ensemble with more than one legal move: observation, mask, the ensemble's logits, game seed."""
    ensemble = Ensemble([read_card_policy(path) for path in job.members], list(job.weights))
    rows: dict[str, list] = {"observations": [], "masks": [], "logits": [], "games": []}
    for seed in job.seeds:
        num_players, _, opponents = one_seat_table(np.random.default_rng(seed), job.players, job.opponents)
        env = raw_env(num_players=num_players, deck=job.deck)
        env.reset(seed=seed)
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


def games_jobs(args: Args, members: list[str], weights: list[float], seeds: list[int]) -> list[GamesJob]:
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


# -- (3) the fit ---------------------------------------------------------------------------------------
def fit(args: Args, data: dict[str, np.ndarray], scale: np.ndarray) -> tuple[torch.nn.Sequential, dict[str, Any]]:
    """Cross-entropy to the ensemble's legal softmax; keeps the epoch with the best held-out agreement."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    is_validation = split_by_game(data["games"], args.validation, args.seed)
    x = torch.as_tensor(data["observations"].astype(np.float32) * scale)
    mask = torch.as_tensor(data["masks"].astype(bool))
    teacher = torch.as_tensor(data["logits"]).masked_fill(~mask, -1e9)
    network = build_network(args.hidden_sizes, x.shape[1], mask.shape[1])
    if args.init_policy:
        load_linear_layers(linear_layers(network), read_card_policy(shipped_path(args.init_policy)))
    report = fit_network(
        network, (x, mask, teacher.argmax(dim=1), torch.softmax(teacher, dim=1)), is_validation, rng,
        epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate, soft_weight=1.0,
    )  # fmt: skip
    return network, report


# -- the run ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    paths = [str(shipped_path(name)) for name in args.teachers]
    members = [read_card_policy(path) for path in paths]
    calibration_seeds = np.random.SeedSequence([args.seed, 1]).generate_state(args.calibration_games).tolist()
    calibration = play_jobs(play_games, games_jobs(args, paths[:1], [1.0], calibration_seeds), args.workers, False)
    weights = member_weights(members, calibration["observations"], calibration["masks"])
    for name, weight in zip(args.teachers, weights, strict=True):
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
        data = play_jobs(play_games, games_jobs(args, paths, weights, seeds), args.workers, args.progress)
        write_dataset(cache, spec, data)
    else:
        print(f"reusing {cache}")
    record_s = round(time.time() - started, 1)
    print(f"{len(data['games']):,} decisions from {args.games:,} games", flush=True)
    scale = observation_scale(args.deck)
    network, report = fit(args, data, scale)
    training = {
        "method": f"distillation of an ensemble of {len(members)} policies",
        "args": asdict(args),
        "members": [
            {"path": name, "weights_sha256": member.fingerprint(), "weight": weight}
            for name, member, weight in zip(args.teachers, members, weights, strict=True)
        ],
        **report,
        "ensemble_games_s": record_s,
        "wall_time_s": round(time.time() - started, 1),
    }
    description = f"an ensemble of {len(members)} policies distilled into an MLP"
    return export_evaluated(network, training, description, scale, args)


if __name__ == "__main__":
    main()
