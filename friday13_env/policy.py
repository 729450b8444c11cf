"""Trained policies as plain numpy: a safe checkpoint format and an agent that plays from it.

A policy checkpoint is an ``.npz`` file holding only arrays (loaded with ``allow_pickle=False``,
so opening a file can never execute code) and one JSON metadata string. The metadata pins what the
weights were trained for: the environment version, the deck, the observation layout (size and
block names) and the action count. ``load_policy_agent`` refuses a file that does not match with
an error that says what differs, instead of playing garbage.

Inference is a forward pass through an MLP (``input_scale`` -> [linear -> activation]* -> linear),
then an argmax over the legal actions' logits, so users who only want a strong opponent need
numpy, not torch.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.agents.base import Observation, deck_of, legal_actions
from friday13_env.cards import get_deck
from friday13_env.encoding import observation_bounds, observation_layout
from friday13_env.engine import MAX_PLAYERS, MIN_PLAYERS, Rules

FORMAT = "friday13-policy"
FORMAT_VERSION = 1
ENV_VERSION = "friday13_v0"
FRIDAY_ENV_VERSION = "Friday-v0"
"""The solo game's policies use the same format, with ``deck`` left empty."""
ACTIVATIONS = ("tanh", "relu")


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for another environment layout."""


@dataclass(frozen=True)
class PolicyMetadata:
    """What a policy was trained for and how to run it; stored as JSON inside the checkpoint."""

    deck: str
    observation_size: int
    observation_blocks: list[str]
    num_actions: int
    activation: str
    hidden_sizes: list[int]
    env_version: str = ENV_VERSION
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    description: str = ""
    training: dict[str, Any] | None = None


def expected_metadata_fields(env_version: str, deck_name: str = "") -> dict[str, Any]:
    """The layout fields a policy for this environment (and deck) must carry to be usable here."""
    if env_version == FRIDAY_ENV_VERSION:
        from friday13_env.friday import actions, encoding

        return {
            "observation_size": encoding.OBS_SIZE,
            "observation_blocks": list(encoding.OFFSETS),
            "num_actions": actions.NUM_ACTIONS,
            "deck": "",
        }
    if env_version != ENV_VERSION:
        raise ValueError(
            f"it was trained for environment {env_version!r}; this version plays {[ENV_VERSION, FRIDAY_ENV_VERSION]}"
        )
    deck = get_deck(deck_name)
    layout = observation_layout(deck)
    return {
        "observation_size": layout.size,
        "observation_blocks": [block.name for block in layout.blocks],
        "num_actions": deck.num_actions,
    }


def policy_metadata(
    env_version: str,
    deck_name: str,
    activation: str,
    hidden_sizes: Sequence[int],
    description: str,
    training: dict[str, Any] | None = None,
) -> PolicyMetadata:
    """Metadata of a policy for either game, with the layout fields taken from this version."""
    return PolicyMetadata(
        env_version=env_version,
        activation=activation,
        hidden_sizes=list(hidden_sizes),
        description=description,
        training=training,
        **{"deck": deck_name, **expected_metadata_fields(env_version, deck_name)},
    )


def save_linear_layers(
    path: str | Path, layers: Sequence[Any], input_scale: np.ndarray, metadata: PolicyMetadata
) -> None:
    """Save an MLP given as torch ``Linear`` layers (duck-typed, so this module never imports torch)."""
    weights = [layer.weight.detach().cpu().numpy().T for layer in layers]
    biases = [layer.bias.detach().cpu().numpy() for layer in layers]
    save_policy(path, weights, biases, input_scale, metadata)


def load_linear_layers(layers: Sequence[Any], policy: MLPPolicy) -> None:
    """Copy a policy's weights into torch ``Linear`` layers: the inverse of ``save_linear_layers``.

    Used to start training (e.g. PPO's actor) from an exported policy. torch is imported here, not
    at module level, so that playing a policy never needs it.
    """
    import torch

    if len(layers) != len(policy.weights):
        raise ValueError(f"the policy has {len(policy.weights)} layers, the network {len(layers)}")
    with torch.no_grad():
        for index, (layer, weight, bias) in enumerate(zip(layers, policy.weights, policy.biases, strict=True)):
            if tuple(layer.weight.shape) != weight.T.shape or tuple(layer.bias.shape) != bias.shape:
                raise ValueError(
                    f"layer {index}: the network's weight is {tuple(layer.weight.shape)}, the policy's {weight.T.shape}"
                )
            layer.weight.copy_(torch.as_tensor(weight.T))
            layer.bias.copy_(torch.as_tensor(bias))


def sb3_actor_layers(model: Any) -> list[Any]:
    """The linear layers of a Stable-Baselines3 actor-critic's actor, input to logits."""
    policy = model.policy
    return [*(module for module in policy.mlp_extractor.policy_net if hasattr(module, "weight")), policy.action_net]


TYPICAL_SCORE = 40.0
"""Scores are scaled by this, not by their theoretical bound (~230), which would squash them."""


def observation_scale(deck_name: str) -> np.ndarray:
    """Per-entry input scale of Friday the 13th policies: 1 / the entry's bound at any table size.

    Every trained policy stores the scale it was trained with (``input_scale``); this is the one
    the training scripts use, so that one policy sees inputs in [0, 1] at every table size.
    """
    deck = get_deck(deck_name)
    high = np.max(
        [observation_bounds(Rules(num_players=n, deck=deck)) for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)], axis=0
    )
    high[observation_layout(deck).slices["scores"]] = TYPICAL_SCORE
    return (1.0 / np.maximum(high, 1.0)).astype(np.float32)


def save_policy(
    path: str | Path,
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    input_scale: np.ndarray,
    metadata: PolicyMetadata,
) -> None:
    """Write a checkpoint atomically (temporary file + rename), so a crash never leaves half a file."""
    if len(weights) != len(biases) or not weights:
        raise ValueError("need one bias per weight matrix, and at least one layer")
    arrays: dict[str, np.ndarray] = {"input_scale": np.asarray(input_scale, dtype=np.float32)}
    for index, (weight, bias) in enumerate(zip(weights, biases, strict=True)):
        arrays[f"w{index}"] = np.asarray(weight, dtype=np.float32)
        arrays[f"b{index}"] = np.asarray(bias, dtype=np.float32)
    arrays["metadata"] = np.array(json.dumps(asdict(metadata)))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False) as handle:
        np.savez(handle, **arrays)
    os.chmod(handle.name, 0o644)  # temporary files are private; a checkpoint is meant to be shared
    os.replace(handle.name, path)


class MLPPolicy:
    """A numpy MLP read from a checkpoint: ``logits(observation_vector)``."""

    def __init__(
        self,
        weights: list[np.ndarray],
        biases: list[np.ndarray],
        input_scale: np.ndarray,
        metadata: PolicyMetadata,
    ) -> None:
        self.weights = weights
        self.biases = biases
        self.input_scale = input_scale
        self.metadata = metadata
        self._activation = np.tanh if metadata.activation == "tanh" else _relu

    def logits(self, observation: np.ndarray) -> np.ndarray:
        # In place where numpy allows: at one observation per call the allocations are a visible cost.
        hidden = np.asarray(observation, dtype=np.float32) * self.input_scale
        for weight, bias in zip(self.weights[:-1], self.biases[:-1], strict=True):
            hidden = hidden @ weight
            hidden += bias
            hidden = self._activation(hidden, out=hidden)
        hidden = hidden @ self.weights[-1]
        hidden += self.biases[-1]
        return hidden

    def fingerprint(self) -> str:
        """SHA-256 of what decides the moves (activation, scale, weights), not of the file: two exports of
        the same network with other metadata (a run's arguments, its wall time) share a fingerprint."""
        digest = hashlib.sha256(self.metadata.activation.encode())
        for array in (self.input_scale, *self.weights, *self.biases):
            digest.update(np.ascontiguousarray(array, dtype=np.float32).tobytes())
        return digest.hexdigest()

    def choose(self, observation: np.ndarray, legal: np.ndarray, rng: np.random.Generator | None = None) -> int:
        """The legal action with the highest logit, or one sampled from the legal softmax with ``rng``."""
        logits = self.logits(observation)[legal]
        if rng is None:
            return int(legal[int(np.argmax(logits))])
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        return int(legal[rng.choice(legal.size, p=probabilities)])


def _relu(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.maximum(values, 0.0, out=out)


def read_policy(path: str | Path) -> MLPPolicy:
    """Load and validate a checkpoint; every problem becomes a ``CheckpointError`` saying what."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no policy checkpoint at {str(path)!r}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise CheckpointError(f"{path} is not a readable policy checkpoint (.npz): {error}") from error
    if "metadata" not in arrays:
        raise CheckpointError(f"{path} has no metadata: it is not a {FORMAT} checkpoint")
    try:
        raw = json.loads(str(arrays.pop("metadata")))
        metadata = PolicyMetadata(**raw)
    except (TypeError, ValueError) as error:
        raise CheckpointError(f"{path} has corrupt metadata: {error}") from error
    if metadata.format != FORMAT or metadata.format_version != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} is format {metadata.format!r} v{metadata.format_version}; "
            f"this version reads {FORMAT!r} v{FORMAT_VERSION}"
        )
    if metadata.activation not in ACTIVATIONS:
        raise CheckpointError(f"{path}: unknown activation {metadata.activation!r}; allowed: {list(ACTIVATIONS)}")
    try:
        expected = expected_metadata_fields(metadata.env_version, metadata.deck)
    except ValueError as error:
        raise CheckpointError(f"{path}: {error}") from error
    stored = {name: getattr(metadata, name) for name in expected}
    if stored != expected:
        differences = ", ".join(
            f"{name}: file {stored[name]!r} vs this version {expected[name]!r}"
            for name in expected
            if stored[name] != expected[name]
        )
        raise CheckpointError(
            f"{path} was trained for another observation/action layout ({differences}); retrain or use a "
            "matching friday13-env version"
        )
    layers = (len(arrays) - 1) // 2
    try:
        weights = [arrays[f"w{index}"] for index in range(layers)]
        biases = [arrays[f"b{index}"] for index in range(layers)]
        input_scale = arrays["input_scale"]
    except KeyError as error:
        raise CheckpointError(f"{path} is missing array {error}") from error
    sizes = [metadata.observation_size, *metadata.hidden_sizes, metadata.num_actions]
    shapes_ok = input_scale.shape == (metadata.observation_size,) and layers == len(sizes) - 1
    shapes_ok = shapes_ok and all(
        weight.shape == (sizes[i], sizes[i + 1]) and bias.shape == (sizes[i + 1],)
        for i, (weight, bias) in enumerate(zip(weights, biases, strict=True))
    )
    if not shapes_ok:
        found = [tuple(w.shape) for w in weights]
        raise CheckpointError(f"{path}: layer shapes {found} do not match the declared sizes {sizes}")
    if not all(np.all(np.isfinite(array)) for array in [*weights, *biases, input_scale]):
        raise CheckpointError(f"{path} holds non-finite weights (NaN or inf)")
    return MLPPolicy(weights, biases, input_scale, metadata)


class PolicyAgent:
    """Plays the legal action with the highest logit (or samples from them if ``greedy=False``)."""

    def __init__(self, policy: MLPPolicy, name: str, seed: int | None = None, greedy: bool = True) -> None:
        self.policy = policy
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)
        self._deck = get_deck(policy.metadata.deck)

    def act(self, observation: Observation) -> int:
        self._check_deck(observation)
        return self.policy.choose(
            observation["observation"], legal_actions(observation), None if self.greedy else self.rng
        )

    def legal_logits(self, observation: Observation) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions and their logits, for agents that weigh the policy's confidence."""
        self._check_deck(observation)
        legal = legal_actions(observation)
        return legal, self.policy.logits(observation["observation"])[legal]

    def _check_deck(self, observation: Observation) -> None:
        if deck_of(observation) != self._deck:
            raise ValueError(
                f"policy {self.name!r} was trained for the {self._deck.name!r} deck, "
                f"but this table plays the {deck_of(observation).name!r} deck"
            )


def read_matching_policy(
    path: str | Path, *, deck: str, activation: str, hidden_sizes: Sequence[int], env_version: str = ENV_VERSION
) -> MLPPolicy:
    """A checkpoint that a training run of this architecture can start from, or a ``CheckpointError``.

    The layout is checked as ``read_policy`` checks it for play; on top of that the environment, the
    deck, the activation and the hidden sizes must be the run's, and the error says which differ.
    """
    policy = read_policy(path)
    stored = policy.metadata
    fields = {
        "env_version": (stored.env_version, env_version),
        "deck": (stored.deck, deck),
        "activation": (stored.activation, activation),
        "hidden_sizes": (list(stored.hidden_sizes), list(hidden_sizes)),
    }
    differences = [f"{name}: policy {mine!r} vs run {run!r}" for name, (mine, run) in fields.items() if mine != run]
    if differences:
        raise CheckpointError(
            f"{path} does not fit this run's network ({'; '.join(differences)}); "
            "give the run the policy's deck, activation and hidden sizes to start from it"
        )
    return policy


def load_policy_agent(path: str | Path, seed: int | None = None, greedy: bool = True) -> PolicyAgent:
    """The agent behind ``friday13_env.agents.load(path)``: a Friday the 13th policy only."""
    policy = read_policy(path)
    if policy.metadata.env_version != ENV_VERSION:
        raise CheckpointError(f"{path} is a {policy.metadata.env_version} policy, not a {ENV_VERSION} one")
    return PolicyAgent(policy, name=Path(path).stem, seed=seed, greedy=greedy)
