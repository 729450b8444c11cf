"""Torch <-> numpy policy conversion for the training scripts (needs the ``train`` extra).

The installed package never imports torch: it plays policies with numpy. These helpers export a
torch MLP into the package's checkpoint format, load a checkpoint back into torch layers to start
a run from it, and check that a checkpoint fits a run's network.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from friday13_env.core.checkpoint import CheckpointError, ExpectedLayout, read_policy, save_policy
from friday13_env.core.mlp import RAW_INPUT, FeaturesOf, MLPPolicy, PolicyMetadata, observation_only
from friday13_env.core.specs import shown
from friday13_env.friday import policy as friday_policy
from friday13_env.friday13 import features as friday13_features
from friday13_env.friday13.agents import policy as friday13_policy
from friday13_training.runs import RunError

EXPECTED_LAYOUTS = {
    friday13_policy.ENV_VERSION: (friday13_policy.expected_layout, friday13_features.features_of),
    friday_policy.ENV_VERSION: (friday_policy.expected_layout, observation_only),
}
"""Per environment version: its layout check and its derived inputs, as ``read_policy`` takes them."""


def layout_of(env_version: object) -> tuple[ExpectedLayout, FeaturesOf]:
    """``EXPECTED_LAYOUTS[env_version]``, or a ``ValueError`` naming the versions for anything else (a text of no
    known environment, ``None``, a list): checked before a policy is written or read."""
    if not isinstance(env_version, str) or env_version not in EXPECTED_LAYOUTS:
        raise ValueError(f"unknown environment version {shown(env_version)}; allowed: {sorted(EXPECTED_LAYOUTS)}")
    return EXPECTED_LAYOUTS[env_version]


MIN_SHARPNESS, MAX_SHARPNESS = 2.0**-10, 2.0**10
"""Every script's ``--init-sharpness`` range: a starting policy's logits multiplied by at most 1,024 and at least
1 / 1,024 stay far from float32's overflow and underflow, so that a power of two scales them exactly."""


def sharpen_(layer: torch.nn.Linear, factor: float) -> None:
    """Multiply the outputs of ``layer`` (a policy's logits) by ``factor`` in place: the same greedy moves, a
    softmax nearer to them above 1 (``--init-sharpness``)."""
    with torch.no_grad():
        layer.weight.mul_(factor)
        layer.bias.mul_(factor)


def save_checked_policy(
    path: str | Path,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    input_scale: np.ndarray,
    metadata: PolicyMetadata,
) -> None:
    """Export a policy only if ``agents.load`` would play it: every training script's export goes through here.

    The file is written beside ``path``, read back with the loader that plays it (``read_policy`` with the layout of
    its ``env_version``: caps, layout, finite weights) and only then renamed onto ``path``, so a policy the loader
    refuses is never reported as exported and an earlier file at ``path`` stays as it was (a ``RunError`` with the
    loader's reason); metadata of an environment version the loader does not know is a ``ValueError``, before anything
    is written."""
    path = Path(path)
    layout = layout_of(metadata.env_version)
    unchecked = path.with_name(f".{path.name}.unchecked")
    try:
        save_policy(unchecked, weights, biases, input_scale, metadata)
        read_policy(unchecked, *layout)
        os.replace(unchecked, path)
    except CheckpointError as error:
        reason = str(error).replace(str(unchecked), str(path))
        raise RunError(f"the policy was not exported, the loader would refuse it: {reason}") from error
    finally:
        unchecked.unlink(missing_ok=True)


def save_linear_layers(
    path: str | Path, layers: Sequence[Any], input_scale: np.ndarray, metadata: PolicyMetadata
) -> None:
    """Save an MLP given as torch ``Linear`` layers, atomically, once the loader has read it back
    (``save_checked_policy``)."""
    weights = [layer.weight.detach().cpu().numpy().T for layer in layers]
    biases = [layer.bias.detach().cpu().numpy() for layer in layers]
    save_checked_policy(path, weights, biases, input_scale, metadata)


def load_linear_layers(layers: Sequence[Any], policy: MLPPolicy) -> None:
    """Copy a policy's weights into torch ``Linear`` layers: the inverse of ``save_linear_layers``.

    Used to start training (e.g. PPO's actor) from an exported policy.
    """
    if len(layers) != len(policy.weights):
        raise ValueError(f"the policy has {len(policy.weights)} layers, the network {len(layers)}")
    with torch.no_grad():
        for index, (layer, weight, bias) in enumerate(zip(layers, policy.weights, policy.biases, strict=True)):
            if tuple(layer.weight.shape) != weight.T.shape or tuple(layer.bias.shape) != bias.shape:
                raise ValueError(
                    f"layer {index}: the network's weight is {tuple(layer.weight.shape)}, the policy's {weight.T.shape}"
                )
            layer.weight.copy_(torch.tensor(weight.T))  # a copy: a policy's arrays are read-only
            layer.bias.copy_(torch.tensor(bias))


def sb3_actor_layers(model: Any) -> list[Any]:
    """The linear layers of a Stable-Baselines3 actor-critic's actor, input to logits."""
    policy = model.policy
    return [*(module for module in policy.mlp_extractor.policy_net if hasattr(module, "weight")), policy.action_net]


def read_matching_policy(
    path: str | Path,
    *,
    deck: str,
    activation: str,
    hidden_sizes: Sequence[int],
    env_version: str = friday13_policy.ENV_VERSION,
) -> MLPPolicy:
    """A checkpoint that a training run of this architecture can start from, or a ``CheckpointError``.

    The layout is checked as ``read_policy`` checks it for play; on top of that the environment, the
    deck, the activation and the hidden sizes must be the run's, and the policy must read the observation
    alone (these runs' networks have no derived inputs); the error says which differ. An ``env_version`` of no known
    environment is a ``ValueError`` (``layout_of``).
    """
    policy = read_policy(path, *layout_of(env_version))
    stored = policy.metadata
    fields = {
        "env_version": (stored.env_version, env_version),
        "deck": (stored.deck, deck),
        "activation": (stored.activation, activation),
        "hidden_sizes": (list(stored.hidden_sizes), list(hidden_sizes)),
        "input_features": (stored.input_features, RAW_INPUT),
    }
    differences = [f"{name}: policy {mine!r} vs run {run!r}" for name, (mine, run) in fields.items() if mine != run]
    if differences:
        raise CheckpointError(
            f"{path} does not fit this run's network ({'; '.join(differences)}); "
            "give the run the policy's deck, activation and hidden sizes to start from it (a policy with derived "
            "inputs cannot start these runs)"
        )
    return policy
