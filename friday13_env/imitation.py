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
