"""Distil the search agent into a numpy policy that decides in microseconds instead of 50 ms.

Reads top to bottom: hyperparameters, (1) self-play games of the ``search`` agent at every seat of
tables drawn from 3-6 players, recording every decision with more than one legal move, (2) a
supervised fit of an MLP to those decisions (cross-entropy over the legal moves only), (3) export
to the same safe ``.npz`` format as ``train_ppo.py`` (``friday13_env.agents.load`` plays it).

Run: ``python training/distill_search.py --games 3000 --export checkpoints/search_distilled.npz``.
Everything is seeded: the same arguments give the same data set and, on the same machine, the same
weights.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from friday13_env import agents, raw_env
from friday13_env.policy import ENV_VERSION, observation_scale, policy_metadata, save_linear_layers
from friday13_env.script_args import dataclass_parser, option

GAMES_PER_CHUNK = 10


@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default and help."""

    games: int = option(3000, "self-play games of the search agent")
    players: list[int] = option([3, 4, 5, 6], "table sizes, one drawn per game")
    deck: str = option("standard", "standard or german")
    search_budget: int = option(6000, "simulated card plays per decision of the teacher (the agent's default: 22000)")
    workers: int = option(2, "processes playing the games")
    seed: int = option(0, "seeds the games, the split and the fit")
    hidden_sizes: list[int] = option([256, 256], "hidden layer widths")
    epochs: int = option(30, "passes over the training decisions")
    batch_size: int = option(512, "minibatch size")
    learning_rate: float = option(1e-3, "Adam learning rate (cosine-annealed to 0)")
    validation: float = option(0.1, "share of the games held out to measure agreement with the teacher")
    data: str = option("", "reuse a recorded data set (.npz) instead of playing the games again")
    out_dir: str = option("runs/distill", "where the data set, the policy and summary.json go")
    export: str = option("", "also write the policy here, e.g. checkpoints/search_distilled.npz")


def parse_args(argv: list[str] | None = None) -> Args:
    return Args(**vars(dataclass_parser(Args, __doc__).parse_args(argv)))


# -- (1) the teacher's games -------------------------------------------------------------------------
def play_games(args: Args, seeds: list[int]) -> dict[str, np.ndarray]:
    """Search at every seat; one (observation, mask, action, game) row per real decision."""
    observations, masks, actions, games = [], [], [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        num_players = int(rng.choice(args.players))
        table = [
            agents.make("search", seed=int(s), budget=args.search_budget) for s in rng.integers(2**31, size=num_players)
        ]
        env = raw_env(num_players=num_players, deck=args.deck)
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            action = table[env.possible_agents.index(agent)].act(observation)
            if observation["action_mask"].sum() > 1:
                observations.append(observation["observation"])
                masks.append(observation["action_mask"])
                actions.append(action)
                games.append(seed)
            env.step(action)
    return {
        "observations": np.array(observations, dtype=np.float32),
        "masks": np.array(masks, dtype=np.int8),
        "actions": np.array(actions, dtype=np.int64),
        "games": np.array(games, dtype=np.int64),
    }


def record(args: Args, path: Path) -> dict[str, np.ndarray]:
    """The whole data set, played in ``workers`` processes in chunks fixed by the seed.

    The rows recorded so far are rewritten to ``path`` after every chunk, so an interrupted run
    leaves a usable data set behind (``--data``).
    """
    seeds = np.random.SeedSequence(args.seed).generate_state(args.games).tolist()
    chunks = [seeds[i : i + GAMES_PER_CHUNK] for i in range(0, len(seeds), GAMES_PER_CHUNK)]
    parts: list[dict[str, np.ndarray]] = []
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for part in pool.map(play_games, [args] * len(chunks), chunks):
            parts.append(part)
            data = {key: np.concatenate([p[key] for p in parts]) for key in part}
            np.savez_compressed(path, **data)
            print(f"recorded {len(parts) * GAMES_PER_CHUNK:,}/{args.games:,} games", flush=True)
    return data


# -- (2) the supervised fit --------------------------------------------------------------------------
def build_network(args: Args, inputs: int, outputs: int) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    for width in args.hidden_sizes:
        layers += [torch.nn.Linear(inputs, width), torch.nn.ReLU()]
        inputs = width
    layers.append(torch.nn.Linear(inputs, outputs))
    return torch.nn.Sequential(*layers)


def masked_logits(network: torch.nn.Module, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return network(x).masked_fill(~mask, -1e9)


def fit(args: Args, data: dict[str, np.ndarray], scale: np.ndarray) -> tuple[torch.nn.Sequential, dict[str, float]]:
    """Cross-entropy over legal moves; held-out games measure agreement with the teacher."""
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    game_ids = np.unique(data["games"])
    held_out = set(rng.choice(game_ids, size=max(1, int(len(game_ids) * args.validation)), replace=False).tolist())
    is_validation = np.array([game in held_out for game in data["games"]])
    x = torch.as_tensor(data["observations"] * scale)
    mask = torch.as_tensor(data["masks"].astype(bool))
    y = torch.as_tensor(data["actions"])
    train_index = np.flatnonzero(~is_validation)
    network = build_network(args, x.shape[1], mask.shape[1])
    optimizer = torch.optim.Adam(network.parameters(), lr=args.learning_rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    for epoch in range(args.epochs):
        network.train()
        order = rng.permutation(train_index)
        for start in range(0, len(order), args.batch_size):
            batch = torch.as_tensor(order[start : start + args.batch_size])
            loss = torch.nn.functional.cross_entropy(masked_logits(network, x[batch], mask[batch]), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            print(f"epoch {epoch + 1}: agreement {agreement(network, x, mask, y, is_validation)}", flush=True)
    return network, agreement(network, x, mask, y, is_validation)


def agreement(
    network: torch.nn.Module, x: torch.Tensor, mask: torch.Tensor, y: torch.Tensor, is_validation: np.ndarray
) -> dict[str, float]:
    """How often the network's greedy move is the teacher's, on the training and held-out games."""
    network.eval()
    with torch.no_grad():
        correct = (masked_logits(network, x, mask).argmax(dim=1) == y).numpy()
    return {"train": float(correct[~is_validation].mean()), "validation": float(correct[is_validation].mean())}


# -- (3) export ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.time()
    if args.data:
        with np.load(args.data) as archive:
            data = {key: archive[key] for key in archive.files}
    else:
        data = record(args, out_dir / "data.npz")
    play_seconds = time.time() - started
    print(f"{len(data['actions']):,} decisions from {len(np.unique(data['games'])):,} games in {play_seconds:.0f} s")
    scale = observation_scale(args.deck)
    network, agree = fit(args, data, scale)
    linears = [layer for layer in network if isinstance(layer, torch.nn.Linear)]
    training = {
        "method": "distillation of the search agent",
        "args": asdict(args),
        "decisions": len(data["actions"]),
        "agreement_with_teacher": agree,
        "wall_time_s": round(time.time() - started, 1),
    }
    description = f"search (budget {args.search_budget}) distilled into an MLP"
    metadata = policy_metadata(ENV_VERSION, args.deck, "relu", args.hidden_sizes, description, training)
    for path in [out_dir / "policy.npz", *([Path(args.export)] if args.export else [])]:
        save_linear_layers(path, linears, scale, metadata)
        print(f"wrote {path}")
    (out_dir / "summary.json").write_text(json.dumps(training, indent=1))


if __name__ == "__main__":
    main()
