"""Supervised policy fitting that both teachers of ``training/distill.py`` share (needs the ``train`` extra).

``--teacher search`` fits an MLP to the ``search`` agent's move values, ``--teacher ensemble`` to an
ensemble's logits; both build the same network (the layout ``friday13_env.core.checkpoint`` writes) the
same way (``fit_student``), hold out whole games, measure greedy agreement with their teacher, write
their outputs atomically and finish with the same quick duplicate evaluation, so their figures compare.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch
from tqdm import tqdm

from friday13_env.core.checkpoint import (
    MAX_HEADER_BYTES,
    NPZ_COMPRESSIONS,
    array_header,
    check_data_size,
    compression_problem,
)
from friday13_env.core.files import atomic_write
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.pool import worker_pool
from friday13_env.friday13.agents import Agent, make
from friday13_env.friday13.agents.policy import policy_metadata
from friday13_env.friday13.cards import DECKS, Deck, get_deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.engine import Rules
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


SPEC = "spec"
"""The member of a data file (``write_dataset``) holding its specification, as JSON text."""
MAX_SPEC_BYTES = 64 << 20
"""The largest specification a data file's member may hold: numpy stores text at 4 bytes a character, and the
ensemble's lists the seed of each of its games (at most ``MAX_GAMES``, 12 characters each with a comma: 48 MB)."""
MAX_NUMBER_BYTES = 8
"""The widest number a data file's arrays may hold (int64, float64): what ``data_bytes`` allows each entry."""
READ_ERRORS = (OSError, ValueError, KeyError, EOFError, RuntimeError, zipfile.BadZipFile, zlib.error)
"""What reading a damaged data file raises: a zip or deflate stream that is not one (``zlib.error``), an encrypted
member (``RuntimeError``), a JSON spec nested past the recursion limit (``RecursionError``, a ``RuntimeError``)..."""


def decisions_per_game(deck: Deck) -> int:
    """The most decisions one game records: every card of ``deck`` played in each round of the default rules (the
    ``raw_env`` the games are played in)."""
    return Rules(deck=deck).num_rounds * deck.size


def decision_shapes(deck: Deck, scores: str) -> dict[str, tuple[int, ...]]:
    """The shape of one row of each array of a table of decisions of ``deck``: its observation, its legal moves' mask,
    the teacher's ``scores`` of every move (a chunk's values, the ensemble's logits) and its game's seed."""
    moves = (deck.num_actions,)
    return {"observations": (observation_layout(deck).size,), "masks": moves, scores: moves, "games": ()}


def data_bytes(shapes: dict[str, tuple[int, ...]], games: int, deck: Deck) -> int:
    """The most bytes the arrays of ``shapes`` (``.npy`` headers included) take for ``games`` games of ``deck``."""
    numbers = sum(math.prod(shape) for shape in shapes.values())
    headers = len(shapes) * (MAX_HEADER_BYTES + 12)  # the magic string, the version and the header's length first
    return games * decisions_per_game(deck) * numbers * MAX_NUMBER_BYTES + headers


def npz_problem(handle: IO[bytes], path: Path, names: Callable[[str], bool], max_bytes: int) -> str | None:
    """Why loading the arrays of the ``.npz`` open as ``handle`` whose names ``names`` accepts could take more than
    ``max_bytes``, or None (a ``CheckpointError`` for a member that is no ``.npy`` array, ``zipfile.BadZipFile`` for a
    file that is not a zip).

    ``np.load`` allocates each array at the shape its header claims, then inflates the member (a compressed member
    whole), so a file of kilobytes could claim terabytes: the members, stored or deflated as ``np.savez`` and
    ``np.savez_compressed`` write them (``compression_problem``), must claim at most ``max_bytes`` in all, and each
    exactly the data its header's shape needs, as the policy reader checks them. Reading one costs a header."""
    with zipfile.ZipFile(handle) as archive:
        problem = compression_problem(archive, NPZ_COMPRESSIONS)
        if problem is not None:
            return problem
        members = [info for info in archive.infolist() if names(info.filename.removesuffix(".npy"))]
        total = sum(info.file_size for info in members)
        if total > max_bytes:
            return f"its arrays claim {total:,} bytes, where its games' decisions take at most {max_bytes:,}"
        for info in members:
            name = info.filename.removesuffix(".npy")
            with archive.open(info) as member:
                dtype, shape, _, offset = array_header(member, path, name)
            check_data_size(info, offset, dtype.itemsize * math.prod(shape), f"{dtype} {shape}", path, name)
    return None


def read_arrays(path: Path, spec: bool, max_bytes: int) -> dict[str, np.ndarray]:
    """The spec alone (``spec``) or every other array of the data file at ``path``, read once the members to read are
    checked (``npz_problem``, which a ``ValueError`` names; ``READ_ERRORS`` for a file that is no ``.npz``)."""

    def wanted(name: str) -> bool:
        return (name == SPEC) == spec

    with path.open("rb") as handle:
        problem = npz_problem(handle, path, wanted, max_bytes)
        if problem is not None:
            raise ValueError(problem)
        handle.seek(0)
        with np.load(handle, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files if wanted(name)}


def read_spec_text(path: Path) -> Any:
    """The JSON value of the data file's specification (``read_arrays``; ``READ_ERRORS`` where it is damaged)."""
    return json.loads(str(read_arrays(path, True, MAX_SPEC_BYTES)[SPEC]))


def read_dataset(path: Path, spec: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The ensemble's cached data set if it was recorded with exactly this specification (which names its ``deck`` and
    its games' ``seeds``), else None; a damaged cache is reported and recorded again (it is only a cache).

    Nothing is loaded past what the spec's games can hold (``read_arrays``), and the arrays must be the decisions of
    the spec's deck (``decisions_problem``: observations, masks, the ensemble's logits, game seeds), else the fit
    would fail on them, after the work."""
    if not path.is_file():
        return None
    try:
        if read_spec_text(path) != spec:
            return None
        deck, seeds = spec.get("deck"), spec.get("seeds")
        if deck not in DECKS or not isinstance(seeds, list):
            raise ValueError(f"its spec names no deck of {sorted(DECKS)} or no list of seeds")
        shapes = decision_shapes(get_deck(deck), "logits")
        data = read_arrays(path, False, data_bytes(shapes, len(seeds), get_deck(deck)))
        problem = decisions_problem(data, shapes, "logits")
        if problem:
            raise ValueError(problem)
        return data
    except READ_ERRORS as error:
        print(f"note: {path} is damaged ({type(error).__name__}: {error}); recording it again", flush=True)
        return None


def decisions_problem(arrays: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]], scores: str) -> str | None:
    """What makes ``arrays`` no table of decisions, or None: exactly the arrays of ``shapes``, numbers, one row each
    (of its shape) per decision; the masks 0 or 1 with a legal move in every row, the teacher's ``scores`` finite on
    the legal moves."""
    if sorted(arrays) != sorted(shapes):
        return f"it holds the arrays {sorted(arrays)}, not {sorted(shapes)}"
    rows = len(arrays["games"]) if arrays["games"].ndim else 0
    for name, row in shapes.items():
        array, shape = arrays[name], (rows, *row)
        if array.shape != shape or array.dtype.kind not in "iuf":
            return f"{name} is {array.dtype} of shape {array.shape}, not numbers of shape {shape}"
    masks = arrays["masks"]
    if not np.isin(masks, (0, 1)).all():
        return "a mask holds another value than 0 or 1"
    if not masks.any(axis=1).all():
        return "a mask allows no move"
    if not np.isfinite(arrays[scores][masks == 1]).all():
        return f"a legal move's entry of {scores} is not a finite number"
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

    Each row's best legal move is subtracted before the temperature divides, so that any temperature above 0 gives
    a distribution: a tiny one sends the others to -inf (probability 0) instead of making inf - inf = NaN.
    """
    legal = masks.astype(bool)
    filled = np.where(legal, values, 0.0).astype(np.float64)
    count = legal.sum(axis=1, keepdims=True)
    mean = filled.sum(axis=1, keepdims=True) / count
    spread = np.sqrt((np.where(legal, filled - mean, 0.0) ** 2).sum(axis=1, keepdims=True) / count)
    z = np.where(spread > 0, (filled - mean) / np.where(spread > 0, spread, 1.0), 0.0)
    best = np.where(legal, z, -np.inf).max(axis=1, keepdims=True)
    with np.errstate(over="ignore"):  # -x / tiny is -inf: probability 0, as wanted
        return legal_softmax((z - best) / temperature, legal)


def legal_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Softmax of each row's logits over its legal moves (probability 0 for the others)."""
    legal = masks.astype(bool)
    z = np.where(legal, logits, -np.inf)
    weights = np.exp(z - z.max(axis=1, keepdims=True))
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def split_by_game(games: np.ndarray, share: float, seed: int) -> np.ndarray:
    """True for the rows of the held-out games (at least one game when ``share`` > 0, and of two games or more at
    least one kept to train on).

    Each game is held out by a draw seeded by (seed, game) alone, so a game stays on its side when
    more games (or DAgger rounds) are added: figures of runs on growing data stay comparable.
    """
    game_ids = np.unique(games)
    draws = np.array([np.random.default_rng([seed, int(game)]).random() for game in game_ids])
    held_out = draws < share
    if share > 0 and not held_out.any():
        held_out[np.argmin(draws)] = True
    if game_ids.size > 1 and held_out.all():
        held_out[np.argmax(draws)] = False
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
    if is_validation.all():  # one game: a fit on nothing would keep the initial weights as the policy
        raise RunError(
            f"no game is left to train on: the data holds {np.unique(data['games']).size} game(s), and --validation "
            f"{validation} holds at least one out to measure agreement; record at least 2 games (--games)"
        )
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
    (the script checks every path before any work; this keeps the run's files whole where it did not), and so is a
    summary that is not JSON (a NaN or an infinity, which no reader of the project's records takes)."""
    out_dir = Path(args.out_dir)
    problem = export_problem(args.export, {"--out-dir": out_dir})
    if problem:
        raise RunError(problem)
    try:
        summary = json.dumps(training, indent=1, allow_nan=False)
    except ValueError as error:
        raise RunError(
            f"the summary holds a value that is not a finite number ({error}): nothing was written"
        ) from None
    for path in [out_dir / "policy.npz", *([Path(args.export)] if args.export else [])]:
        save_student(network, path, description, scale, args, training)
        print(f"wrote {path}", flush=True)
    atomic_write_text(out_dir / "summary.json", summary)
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
