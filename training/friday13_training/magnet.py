"""The magnet of ``train_ppo.py --magnet-coef``: a frozen copy of the actor that the learning actor is pulled toward.

Magnetic mirror descent (Sokota et al., ICLR 2023) regularises learning in games toward a reference policy, the
*magnet*: here the actor's loss gains ``coef * KL(policy || magnet)`` at every sample. When the magnet moves to the
policy from time to time, each stretch of training solves a game made smoother by the pull toward the last one, the
idea R-NaD (Perolat et al., Science 2022) also iterates (through a transformed reward instead of a loss term). In games
of more than one learner this damps the cycling of plain self-play; in PPO it also penalises how far a stretch of
updates takes the policy from where it began.

The magnet starts as the run's first actor (its ``--init-run`` or ``--init-policy`` start, or its random weights) and,
with ``--magnet-every N``, becomes the actor again at the first rollout's end at or past each multiple of N card plays
(at every rollout's end when N is less than one rollout). It is saved in the run's checkpoint, so that ``--resume``
goes on with the magnet the run had.
"""

from __future__ import annotations

import copy

import torch
from torch import nn


def frozen_copy(actor: nn.Module) -> nn.Module:
    """A copy of ``actor`` that no gradient reaches and no optimizer holds (its parameters are not the actor's)."""
    magnet = copy.deepcopy(actor)
    magnet.requires_grad_(False)
    return magnet


def move_magnet(magnet: nn.Module, actor: nn.Module) -> None:
    """The magnet becomes the actor as it is now (``--magnet-every``)."""
    magnet.load_state_dict(actor.state_dict())


def magnet_kl(log_probs: torch.Tensor, magnet_log_probs: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """The mean over samples of ``KL(policy || magnet)`` over each sample's legal actions (``masks``).

    Both are log-probabilities of masked logits (``ActorCritic.logits``), so an illegal action has probability 0 in
    both: its difference is taken as 0 before it is weighted, not computed from two huge negative numbers (which
    round apart, or give NaN for two infinities, in the value or its gradient)."""
    difference = torch.where(masks, log_probs - magnet_log_probs, torch.zeros_like(log_probs))
    return (log_probs.exp() * difference).sum(dim=1).mean()
