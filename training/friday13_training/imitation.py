"""Supervised policy fitting that both teachers of ``training/distill.py`` share (needs the ``train`` extra).

``--teacher search`` fits an MLP to the ``search`` agent's move values, ``--teacher ensemble`` to an
ensemble's logits; both build the same network (the layout ``friday13_env.core.checkpoint`` writes) the
same way (``fit_student``), hold out whole games, measure greedy agreement with their teacher, write
their outputs atomically and finish with the same quick duplicate evaluation, so their figures compare.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from friday13_env.core.files import atomic_write
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.pool import worker_pool
from friday13_env.friday13.agents import Agent, make
from friday13_env.friday13.agents.policy import policy_metadata
from friday13_env.friday13.evaluation import evaluate, focus_matchups
from friday13_training.runs import RunError, export_problem
from friday13_training.script_args import atomic_write_text
from friday13_training.torch_policy import load_linear_layers, save_linear_layers

EVAL_SEED = 12_345
"""Deals of the quick evaluation (the PPO script's periodic evaluation uses the same)."""


def build_network(hidden_sizes: list[int], inputs: int, outputs: int) -> torch.nn.Sequential:
    """ReLU MLP ``inputs -> hidden_sizes -> outputs``: what ``policy.save_linear_layers`` exports."""
    layers: list[torch.nn.Module] = []
    for width in hidden_sizes:
        layers += [torch.nn.Linear(inputs, width), torch.nn.ReLU()]
        inputs = width
    layers.append(torch.nn.Linear(inputs, outputs))
    return torch.nn.Sequential(*layers)


def linear_layers(network: torch.nn.Sequential) -> list[torch.nn.Linear]:
    return [layer for layer in network if isinstance(layer, torch.nn.Linear)]


def masked_logits(network: torch.nn.Module, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return network(x).masked_fill(~mask, -1e9)


def one_seat_table(
    rng: np.random.Generator, players: Sequence[int], opponents: Sequence[str]
) -> tuple[int, int, dict[int, Agent]]:
    """A table for recording one player's games: its size drawn from ``players``, the recorded player's seat,
    and an agent drawn from ``opponents`` (and seeded from ``rng``) at every other seat, in seat order."""
    num_players = int(rng.choice(players))
    seat = int(rng.integers(num_players))
    others = {
        other: make(str(rng.choice(opponents)), seed=int(rng.integers(2**31)))
        for other in range(num_players)
        if other != seat
    }
    return num_players, seat, others


def play_jobs(
    play: Callable[[Any], dict[str, np.ndarray]], jobs: Sequence[Any], workers: int, progress: bool
) -> dict[str, np.ndarray]:
    """``play(job)`` for every job (each has ``seeds``, one per game), in ``workers`` processes (``worker_pool``:
    they end with the script, Ctrl-C or SIGTERM included), concatenated in job order: the data set does not depend
    on the number of workers."""
    games = sum(len(job.seeds) for job in jobs)
    parts = []
    with tqdm(total=games, unit="game", disable=not progress, dynamic_ncols=True) as bar, worker_pool(workers) as pool:
        for job, part in zip(jobs, map(play, jobs) if pool is None else pool.map(play, jobs), strict=True):
            parts.append(part)
            bar.update(len(job.seeds))
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def read_dataset(path: Path, spec: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The cached data set if it was recorded with exactly this specification, else None (a damaged cache is
    reported and recorded again: it is only a cache). Its arrays must hold one row per decision each
    (``uneven_rows``): a truncated one would fail in the fit, after the work."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as archive:
            if json.loads(str(archive["spec"])) != spec:
                return None
            data = {name: archive[name] for name in archive.files if name != "spec"}
        problem = uneven_rows(data)
        if problem:
            raise ValueError(problem)
        return data
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        print(f"note: {path} is damaged ({error}); recording it again", flush=True)
        return None


def uneven_rows(data: dict[str, np.ndarray]) -> str | None:
    """Why ``data`` is not one table of decisions (every array numbers, with one row per decision), or None."""
    if not data:
        return "it holds no arrays"
    rows = {name: array.shape[0] if array.ndim else None for name, array in data.items()}
    if any(array.dtype.kind not in "biuf" for array in data.values()) or len(set(rows.values())) != 1:
        return f"its arrays are not one table of numbers, one row per decision (rows: {rows})"
    return None


def write_dataset(path: Path, spec: dict[str, Any], data: dict[str, np.ndarray]) -> None:
    """Atomically (temporary file + rename): an interrupted run never leaves half a data set."""
    arrays: dict[str, Any] = {"spec": np.array(json.dumps(spec)), **data}
    atomic_write(path, lambda handle: np.savez_compressed(handle, **arrays))


def soft_targets(values: np.ndarray, masks: np.ndarray, temperature: float) -> np.ndarray:
    """Per decision: standardise the legal moves' values, then softmax(z / temperature) over them.

    Why standardise: a teacher's move values are on different scales (relative points before the last
    round, a win share in the last), so each decision's are normalised on their own. Illegal moves get
    probability 0. All-equal values give the uniform distribution over the legal moves.
    """
    legal = masks.astype(bool)
    filled = np.where(legal, values, 0.0).astype(np.float64)
    count = legal.sum(axis=1, keepdims=True)
    mean = filled.sum(axis=1, keepdims=True) / count
    spread = np.sqrt((np.where(legal, filled - mean, 0.0) ** 2).sum(axis=1, keepdims=True) / count)
    z = np.where(spread > 0, (filled - mean) / np.where(spread > 0, spread, 1.0), 0.0) / temperature
    return legal_softmax(z, legal)


def legal_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Softmax of each row's logits over its legal moves (probability 0 for the others)."""
    legal = masks.astype(bool)
    z = np.where(legal, logits, -np.inf)
    weights = np.exp(z - z.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def split_by_game(games: np.ndarray, share: float, seed: int) -> np.ndarray:
    """True for the rows of the held-out games (at least one game when ``share`` > 0).

    Each game is held out by a draw seeded by (seed, game) alone, so a game stays on its side when
    more games (or DAgger rounds) are added: figures of runs on growing data stay comparable.
    """
    game_ids = np.unique(games)
    draws = np.array([np.random.default_rng([seed, int(game)]).random() for game in game_ids])
    held_out = draws < share
    if share > 0 and not held_out.any():
        held_out[np.argmin(draws)] = True
    return np.isin(games, game_ids[held_out])


def agreement(
    network: torch.nn.Module, x: torch.Tensor, mask: torch.Tensor, y: torch.Tensor, is_validation: np.ndarray
) -> dict[str, float]:
    """How often the network's greedy move is the teacher's, on the training and held-out games."""
    network.eval()
    with torch.no_grad():
        correct = (masked_logits(network, x, mask).argmax(dim=1) == y).numpy()
    held_out = correct[is_validation]
    return {
        "train": float(correct[~is_validation].mean()),
        "validation": float(held_out.mean()) if held_out.size else float("nan"),
    }


def fit_network(
    network: torch.nn.Sequential,
    data: tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
    is_validation: np.ndarray,
    rng: np.random.Generator,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    soft_weight: float,
    weight_decay: float = 0.0,
    patience: int = 0,
) -> dict[str, Any]:
    """Fit ``network`` in place; keep the epoch with the best held-out agreement, and report the fit.

    ``data`` is (inputs, legal masks, teacher moves, soft targets over the legal moves). The loss is
    ``(1 - soft_weight) x CE(teacher move) + soft_weight x CE(soft target)``, both over the legal moves;
    AdamW cosine-annealed over ``epochs``; training stops after ``patience`` epochs without a better
    held-out agreement (0 = never).
    """
    x, mask, y, target = data
    train_index = np.flatnonzero(~is_validation)
    optimizer = torch.optim.AdamW(network.parameters(), lr=learning_rate, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    best: dict[str, Any] = {"epoch": 0, "agreement": agreement(network, x, mask, y, is_validation)}
    best_state = {name: tensor.clone() for name, tensor in network.state_dict().items()}
    history = []
    for epoch in range(1, epochs + 1):
        network.train()
        order = rng.permutation(train_index)
        for start in range(0, len(order), batch_size):
            batch = torch.as_tensor(order[start : start + batch_size])
            log_p = torch.log_softmax(masked_logits(network, x[batch], mask[batch]), dim=1)
            hard = torch.nn.functional.nll_loss(log_p, y[batch])
            soft = -(target[batch] * log_p).sum(dim=1).mean()
            loss = (1.0 - soft_weight) * hard + soft_weight * soft
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
        agree = agreement(network, x, mask, y, is_validation)
        history.append({"epoch": epoch, **agree})
        print(f"epoch {epoch}: agreement train {agree['train']:.4f} validation {agree['validation']:.4f}", flush=True)
        if agree["validation"] > best["agreement"]["validation"]:
            best = {"epoch": epoch, "agreement": agree}
            best_state = {name: tensor.clone() for name, tensor in network.state_dict().items()}
        elif patience and epoch - best["epoch"] >= patience:
            break
    network.load_state_dict(best_state)
    return {
        "decisions": {"train": int(train_index.size), "validation": int(is_validation.sum())},
        "best_epoch": best["epoch"],
        "agreement_with_teacher": best["agreement"],
        "history": history,
    }


def fit_student(
    data: dict[str, np.ndarray],
    labels: torch.Tensor,
    targets: torch.Tensor,
    scale: np.ndarray,
    *,
    seed: int,
    validation: float,
    hidden_sizes: list[int],
    init: MLPPolicy | None = None,
    **fit_options: Any,
) -> tuple[torch.nn.Sequential, dict[str, Any]]:
    """A new network (or ``init``'s weights) fitted to the teacher's ``labels`` and soft ``targets`` for the
    decisions in ``data`` (``observations``, ``masks``, ``games``), the games split as ``validation`` says.

    Seeded by ``seed`` alone, in one fixed order (torch's seed, the network's initial weights, the
    minibatch order), so the same data and arguments give the same weights on the same machine.
    ``fit_options`` are ``fit_network``'s.
    """
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    is_validation = split_by_game(data["games"], validation, seed)
    x = torch.as_tensor(data["observations"].astype(np.float32) * scale)
    mask = torch.as_tensor(data["masks"].astype(bool))
    network = build_network(hidden_sizes, x.shape[1], mask.shape[1])
    if init is not None:
        load_linear_layers(linear_layers(network), init)
    report = fit_network(network, (x, mask, labels, targets), is_validation, rng, **fit_options)
    return network, report


def quick_evaluation(
    path: Path, opponents: list[str], games: int, *, workers: int, deck: str, progress: bool
) -> dict[str, dict[str, Any]]:
    """4-player duplicate win rate of the policy against 3 copies of each opponent (equal seat: 0.25)."""
    if not games:
        return {}
    result = evaluate(
        focus_matchups(str(path), opponents), games, 4, seed=EVAL_SEED, workers=workers, deck=deck, progress=progress
    )
    rates = {}
    for matchup in result.matchups:
        rate = matchup.stats(str(path)).win_rate
        rates[matchup.opponents[0]] = {**rate.to_dict(), "games": matchup.games}
        print(f"vs 3 x {matchup.opponents[0]}: win rate {rate}", flush=True)
    return rates


def save_student(network: torch.nn.Sequential, path: Path, description: str, scale: np.ndarray, args: Any,
                 training: dict[str, Any]) -> None:  # fmt: skip
    """The network as a numpy policy checkpoint, with ``training`` in its metadata (written atomically)."""
    metadata = policy_metadata(args.deck, "relu", args.hidden_sizes, description, training)
    save_linear_layers(path, linear_layers(network), scale, metadata)


def write_outputs(
    network: torch.nn.Sequential, training: dict[str, Any], description: str, scale: np.ndarray, args: Any
) -> dict[str, Any]:
    """``<out_dir>/policy.npz``, a copy at ``args.export`` if set, and ``<out_dir>/summary.json`` (``training``),
    each written atomically; returns ``training``. An export in ``<out_dir>`` is a ``RunError`` and nothing is written
    (the script checks every path before any work; this keeps the run's files whole where it did not)."""
    out_dir = Path(args.out_dir)
    problem = export_problem(args.export, {"--out-dir": out_dir})
    if problem:
        raise RunError(problem)
    for path in [out_dir / "policy.npz", *([Path(args.export)] if args.export else [])]:
        save_student(network, path, description, scale, args, training)
        print(f"wrote {path}", flush=True)
    atomic_write_text(out_dir / "summary.json", json.dumps(training, indent=1))
    return training


def export_evaluated(
    network: torch.nn.Sequential,
    training: dict[str, Any],
    description: str,
    scale: np.ndarray,
    args: Any,
) -> dict[str, Any]:
    """Write ``<out_dir>/policy.npz``, add its quick evaluation to ``training``, then ``write_outputs``.

    ``args`` is a distillation run's arguments: ``deck``, ``hidden_sizes``, ``out_dir``, ``export``,
    ``eval_opponents``, ``eval_games``, ``workers``, ``progress``.
    """
    policy_path = Path(args.out_dir) / "policy.npz"
    save_student(network, policy_path, description, scale, args, training)
    training["evaluation"] = quick_evaluation(
        policy_path, args.eval_opponents, args.eval_games, workers=args.workers, deck=args.deck, progress=args.progress
    )
    return write_outputs(network, training, description, scale, args)
