"""Distil the ``endgame`` agent (a policy, then ``search`` for the last cards of each round) into one MLP.

Reads top to bottom: hyperparameters, (1) games in which the teacher holds one seat against scripted
opponents, recording every decision with a choice: the policy's logits while the hand holds more
than ``--cards`` cards, ``search``'s mean value of every legal move from then on (the opponents'
positions from ``--cards`` in hand are searched and recorded too, for more late-round positions),
(2) a supervised fit of one MLP, started from the teacher's policy, to those decisions, (3) export
to the safe ``.npz`` format (``friday13_env.agents.load`` plays it) and a quick duplicate
evaluation against the baselines.

**Why**: ``search``'s edge over the shipped networks lies almost entirely in the last cards of a
round, where few cards are unseen and its rollouts are close to exact (README, Strength); the
``endgame`` agent that hands those moves to ``search`` is the strongest player here but costs about
a twelfth of ``search``'s time per decision, not a hundredth. Late-round positions are
cheap to search (short rollouts), so many of them can be labelled: the student learns the
late-round moves from ``search`` and keeps the policy's moves for the rest of the round, at the
cost of one network.

**Targets**: on a searched decision, ``(1 - soft_weight) x CE(search's move) + soft_weight x
CE(softmax of the standardised move values)`` as in ``distill_search.py``; on a policy decision the
same with the policy's greedy move and its softmax, so the student keeps what the policy plays.

**Data** is cached in ``<out-dir>/positions.npz`` with its specification (the policy's weight
fingerprint, game seeds, table sizes, opponents, cards, budget); a rerun with the same
specification reuses it.

**Measured** (the defaults, 3,000 games: 199,420 decisions, 100,905 of them searched, 6 minutes
on 2 shared cores): the student agrees with ``search`` on 72.4% of the held-out searched decisions
(its start, ``ensemble_distilled.npz``, on 69.3%; a fresh 512x512 network fitted to the searched
decisions alone reaches 69% held out and 85% on its training data: too little data), while it
plays its start's move in only 88% of the held-out early decisions; it wins 0.656 / 0.703 against
three ``majority`` / ``cautious`` on the selection deals (2,000 games, ``--seed 1``), where its
start wins 0.672 / 0.700. Five times the data did not change that: 15,000 games (997,544
decisions, 505,437 searched; ``--games 15000``, 21 minutes) gave 74.0% held-out agreement with
``search`` on the searched decisions, and a network fitted to the searched decisions alone (from
the same start) 74.6%. Used only to decide where the ``endgame`` agent may skip its search (its
likeliest move's lead over the next), that network traded search time for lost move value a little
better than ``ensemble_distilled.npz`` on the held-out positions, but won no more in play (0.739 /
0.771 against 0.741 / 0.766 against three ``majority`` / ``cautious``, ``budget=1000,margin=0.3``,
2,000 games, ``--seed 1``). Not shipped.

Run: ``python training/distill_endgame.py`` (``--export PATH`` to write the student elsewhere too).
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

from friday13_env import raw_env
from friday13_env.agents import legal_actions, make
from friday13_env.agents.search import SearchAgent
from friday13_env.agents.table import Table
from friday13_env.cards import get_deck
from friday13_env.encoding import observation_layout
from friday13_env.engine import Rules
from friday13_env.imitation import (
    build_network,
    export_evaluated,
    fit_network,
    legal_softmax,
    linear_layers,
    one_seat_table,
    play_jobs,
    read_dataset,
    soft_targets,
    split_by_game,
    write_dataset,
)
from friday13_env.policy import (
    CheckpointError,
    load_linear_layers,
    observation_scale,
    read_matching_policy,
    read_policy,
)
from friday13_env.script_args import dataclass_parser, option, repository_path

REPOSITORY = Path(__file__).resolve().parents[1]
"""Where the shipped checkpoints live, so that the default policy is found from any directory."""
GAMES_PER_JOB = 25


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    policy: str = option(
        "checkpoints/ensemble_distilled.npz",
        "the teacher's policy (early in a round) and the student's start (a relative path is looked up from the"
        " working directory, then from the repository)",
    )
    cards: int = option(3, "search decides from the move that starts with this many cards in hand")
    search_budget: int = option(22_000, "simulated card plays per searched decision (the search agent's default)")
    search_opponents: bool = option(True, "also search and record the opponents' decisions from --cards in hand")
    games: int = option(3000, "games the teacher plays (one seat) to record its decisions")
    players: list[int] = option([3, 4, 4, 5, 6], "table sizes, one drawn per game (repeat one to draw it more)")
    opponents: list[str] = option(["cautious", "majority"], "agents at the other seats, each drawn per game")
    deck: str = option("standard", "standard or german")
    seed: int = option(0, "seeds the games, the split and the fit")
    workers: int = option(2, "processes playing the games and the evaluation")
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths of the student (the policy's, to start from it)")
    epochs: int = option(15, "passes over the training decisions (cosine schedule length)")
    batch_size: int = option(512, "minibatch size")
    learning_rate: float = option(3e-4, "Adam learning rate (cosine-annealed to 0 over --epochs)")
    soft_weight: float = option(0.5, "weight of the soft-target loss against the hard label, in [0, 1]")
    validation: float = option(0.08, "share of the games held out to measure agreement with the teacher")
    eval_games: int = option(400, "4-player duplicate games against 3 copies of each --eval-opponents (0 = none)")
    eval_opponents: list[str] = option(["cautious", "majority"], "baselines of the quick evaluation")
    out_dir: str = option("runs/endgame", "where positions.npz, policy.npz and summary.json go")
    export: str = option("", "also write the policy here, e.g. checkpoints/endgame_distilled.npz")
    progress: bool = option(True, "show progress bars")
    torch_threads: int = option(2, "torch CPU threads of the fit")


def parse_args(argv: list[str] | None = None) -> Args:
    """Build the CLI from ``Args``; bad values (and an unreadable or mismatched policy) are refused up front."""
    parser = dataclass_parser(Args, __doc__)
    args = Args(**vars(parser.parse_args(argv)))
    for name in ("cards", "search_budget", "games", "workers", "epochs", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0.0 <= args.soft_weight <= 1.0:
        parser.error(f"--soft-weight must lie in [0, 1], got {args.soft_weight}")
    if not 0.0 <= args.validation < 1.0:
        parser.error(f"--validation must lie in [0, 1), got {args.validation}")
    try:
        get_deck(args.deck)
        for count in args.players:
            Rules(num_players=count)
        for name in args.opponents:
            make(name)
        read_matching_policy(
            repository_path(args.policy, REPOSITORY), deck=args.deck, activation="relu", hidden_sizes=args.hidden_sizes
        )
    except (ValueError, CheckpointError) as error:
        parser.error(str(error))
    return args


# -- (1) the teacher's games -------------------------------------------------------------------------
@dataclass(frozen=True)
class GamesJob:
    """Games of one worker: everything it needs to rebuild the teacher and the table."""

    policy: str
    cards: int
    budget: int
    search_opponents: bool
    seeds: tuple[int, ...]
    players: tuple[int, ...]
    opponents: tuple[str, ...]
    deck: str


def play_games(job: GamesJob) -> dict[str, np.ndarray]:
    """The teacher at one seat drawn per game, ``job.opponents`` drawn at the others.

    One row per recorded decision with more than one legal move: observation, mask, the policy's
    logits, ``search``'s mean value of every legal move minus the best one (NaN where not searched or
    illegal), the teacher's move, whether the row is the teacher's own decision, the game seed.
    """
    policy = read_policy(job.policy)
    rows: dict[str, list] = {name: [] for name in ("observations", "masks", "logits", "values", "actions", "own")}
    rows["games"] = []
    for seed in job.seeds:
        rng = np.random.default_rng(seed)
        num_players, teacher_seat, opponents = one_seat_table(rng, job.players, job.opponents)
        search = SearchAgent(seed=int(rng.integers(2**31)), budget=job.budget)
        env = raw_env(num_players=num_players, deck=job.deck)
        env.reset(seed=seed)
        hand_sizes = observation_layout(env.unwrapped.rules.deck).slices["hand_sizes"]
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            legal = legal_actions(observation)
            seat = env.possible_agents.index(agent)
            own = seat == teacher_seat
            late = observation["observation"][hand_sizes][0] <= job.cards
            if legal.size == 1 or not (own or (late and job.search_opponents)):
                env.step(int(legal[0]) if legal.size == 1 else opponents[seat].act(observation))
                continue
            logits = policy.logits(observation["observation"])
            values = np.full(logits.shape, np.nan)
            if late:
                action, means = search.search(Table.read(observation))
                values[legal] = [means[int(move)] - means[action] for move in legal]
            else:
                action = int(legal[np.argmax(logits[legal])])
            for name, value in zip(rows, (observation["observation"], observation["action_mask"], logits, values,
                                          action, own, seed), strict=True):  # fmt: skip
                rows[name].append(value)
            env.step(action if own else opponents[seat].act(observation))
    deck = get_deck(job.deck)
    return {
        "observations": np.array(rows["observations"], dtype=np.int16).reshape(len(rows["games"]), -1),
        "masks": np.array(rows["masks"], dtype=np.int8).reshape(-1, deck.num_actions),
        "logits": np.array(rows["logits"], dtype=np.float32).reshape(-1, deck.num_actions),
        "values": np.array(rows["values"], dtype=np.float32).reshape(-1, deck.num_actions),
        "actions": np.array(rows["actions"], dtype=np.int64),
        "own": np.array(rows["own"], dtype=bool),
        "games": np.array(rows["games"], dtype=np.int64),
    }


def games_jobs(args: Args, policy: str, seeds: list[int]) -> list[GamesJob]:
    return [
        GamesJob(
            policy=policy,
            cards=args.cards,
            budget=args.search_budget,
            search_opponents=args.search_opponents,
            seeds=tuple(seeds[start : start + GAMES_PER_JOB]),
            players=tuple(args.players),
            opponents=tuple(args.opponents),
            deck=args.deck,
        )
        for start in range(0, len(seeds), GAMES_PER_JOB)
    ]


# -- (2) the fit ---------------------------------------------------------------------------------------
def targets(data: dict[str, np.ndarray]) -> np.ndarray:
    """The soft target of every row: search's standardised values where searched, else the policy's softmax."""
    masks = data["masks"].astype(bool)
    searched = ~np.isnan(data["values"]).all(axis=1)
    target = legal_softmax(data["logits"], masks)
    target[searched] = soft_targets(data["values"][searched], masks[searched], temperature=1.0)
    return target


def fit(
    args: Args, data: dict[str, np.ndarray], scale: np.ndarray, start: Path
) -> tuple[torch.nn.Sequential, dict[str, Any]]:
    """The loss of the module docstring, from the teacher's policy; keeps the epoch that agrees best with search on
    the held-out games."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    # The student starts as the policy, so it agrees with the policy's own moves from the start: only the
    # searched decisions of the held-out games measure it (their other decisions are left out entirely).
    searched = ~np.isnan(data["values"]).all(axis=1)
    held_out = split_by_game(data["games"], args.validation, args.seed)
    data = {key: value[searched | ~held_out] for key, value in data.items()}
    is_validation = (held_out & searched)[searched | ~held_out]
    x = torch.as_tensor(data["observations"].astype(np.float32) * scale)
    mask = torch.as_tensor(data["masks"].astype(bool))
    network = build_network(args.hidden_sizes, x.shape[1], mask.shape[1])
    load_linear_layers(linear_layers(network), read_policy(start))
    report = fit_network(
        network, (x, mask, torch.as_tensor(data["actions"]), torch.as_tensor(targets(data))), is_validation, rng,
        epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate, soft_weight=args.soft_weight,
    )  # fmt: skip
    return network, report


# -- the run ----------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    policy_path = repository_path(args.policy, REPOSITORY)
    policy = read_policy(policy_path)
    seeds = np.random.SeedSequence(args.seed).generate_state(args.games).tolist()
    spec = {
        "policy": policy.fingerprint(),
        **{key: getattr(args, key) for key in ("cards", "search_budget", "search_opponents", "players", "opponents")},
        "seeds": seeds,
        "deck": args.deck,
    }
    cache = out_dir / "positions.npz"
    data = read_dataset(cache, spec)
    if data is None:
        print(f"playing {args.games:,} games of the endgame teacher", flush=True)
        data = play_jobs(play_games, games_jobs(args, str(policy_path), seeds), args.workers, args.progress)
        write_dataset(cache, spec, data)
    else:
        print(f"reusing {cache}")
    record_s = round(time.time() - started, 1)
    searched = ~np.isnan(data["values"]).all(axis=1)
    print(f"{len(data['games']):,} decisions from {args.games:,} games, {searched.sum():,} searched", flush=True)
    scale = observation_scale(args.deck)
    network, report = fit(args, data, scale, policy_path)
    training = {
        "method": f"distillation of the endgame agent (the policy, search from {args.cards} cards in hand)",
        "args": asdict(args),
        "policy": {"path": args.policy, "weights_sha256": policy.fingerprint()},
        "searched_decisions": int(searched.sum()),
        **report,
        "teacher_games_s": record_s,
        "wall_time_s": round(time.time() - started, 1),
    }
    description = f"the endgame agent (a policy, search from {args.cards} cards in hand) distilled into an MLP"
    return export_evaluated(network, training, description, scale, args)


if __name__ == "__main__":
    main()
