"""Supervised policy fitting that the distillation scripts share (needs the ``train`` extra: torch).

``training/distill_search.py`` fits an MLP to the ``search`` agent's move values and
``training/distill_ensemble.py`` to an ensemble's logits; both build the same network (the layout
``friday13_env.policy`` exports), hold out whole games, measure greedy agreement with their teacher
and finish with the same quick duplicate evaluation, so their figures compare.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from friday13_env.evaluation import evaluate, focus_matchups

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
