"""Trained policies as plain numpy: a safe checkpoint format and the MLP that plays from it.

A policy checkpoint is an ``.npz`` file holding only float32 arrays and one JSON metadata string.
The metadata pins what the weights were trained for: the environment version, the deck, the
observation layout (size and block names), the action count and the network's shape. Reading is
safe against hostile files: nothing is unpickled (so opening a file never executes code), and every
array header is checked against the declared network before any data is read, so memory stays
bounded by the declared network's size (itself capped) whatever the file claims.

This module is game-agnostic: each game passes ``read_policy`` the layout its environment expects
(``friday13_env.friday13.agents.policy``, ``friday13_env.friday.policy``), and a file made for
another layout is refused with an error that says what differs, instead of playing garbage.

Inference is a forward pass through an MLP (``input_scale`` -> [linear -> activation]* -> linear),
then an argmax over the legal actions' logits, so users who only want a strong opponent need
numpy, not torch.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import IO, Any

import numpy as np

from friday13_env.core.agent import Observation, checked_observation

FORMAT = "friday13-policy"
FORMAT_VERSION = 1
ACTIVATIONS = ("tanh", "relu")
MAX_PARAMETERS = 20_000_000
"""The largest network a checkpoint may declare (80 MB of float32): a bound on what reading allocates."""
MAX_LAYERS = 32
MAX_METADATA_BYTES = 1 << 20
ExpectedLayout = Callable[["PolicyMetadata"], dict[str, Any]]
"""A game's check of a checkpoint: the metadata fields its environment needs, or a ``ValueError``."""


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
    env_version: str
    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    description: str = ""
    training: dict[str, Any] | None = None


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


class PolicyAgent:
    """Plays the legal action with the highest logit (or samples from the legal softmax if ``greedy=False``).

    The observation is the environment's ``{"observation": vector, "action_mask": mask}`` dict, in either game.
    """

    def __init__(self, policy: MLPPolicy, name: str, seed: int | None = None, greedy: bool = True) -> None:
        if not isinstance(greedy, bool):
            raise ValueError(f"greedy must be True or False, got {greedy!r}")
        self.policy = policy
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        vector, legal = self._read(observation)
        return self.policy.choose(vector, legal, None if self.greedy else self.rng)

    def legal_logits(self, observation: Observation) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions and their logits, for agents that weigh the policy's confidence."""
        vector, legal = self._read(observation)
        return legal, self.policy.logits(vector)[legal]

    def _read(self, observation: Observation) -> tuple[np.ndarray, np.ndarray]:
        metadata = self.policy.metadata
        return checked_observation(observation, metadata.observation_size, metadata.num_actions, self.name)


def _relu(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return np.maximum(values, 0.0, out=out)


def read_policy(path: str | Path, expected_layout: ExpectedLayout) -> MLPPolicy:
    """Load and validate a checkpoint; every problem becomes a ``CheckpointError`` saying what.

    ``expected_layout(metadata)`` returns the metadata fields the caller's environment needs (or raises
    ``ValueError`` for a file made for another environment); they are compared before any weight is read.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"no policy checkpoint at {str(path)!r}")
    try:
        with zipfile.ZipFile(path) as archive:
            return _read_archive(archive, path, expected_layout)
    except (OSError, zipfile.BadZipFile, EOFError, NotImplementedError, RuntimeError) as error:
        raise CheckpointError(f"{path} is not a readable policy checkpoint (.npz): {error}") from error


def _read_archive(archive: zipfile.ZipFile, path: Path, expected_layout: ExpectedLayout) -> MLPPolicy:
    members = {info.filename.removesuffix(".npy"): info for info in archive.infolist()}
    if "metadata" not in members:
        raise CheckpointError(f"{path} has no metadata: it is not a {FORMAT} checkpoint")
    metadata = _read_metadata(archive, members["metadata"], path)
    try:
        expected = expected_layout(metadata)
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
    sizes = [metadata.observation_size, *metadata.hidden_sizes, metadata.num_actions]
    shapes = {"input_scale": (metadata.observation_size,)}
    for index in range(len(sizes) - 1):
        shapes[f"w{index}"] = (sizes[index], sizes[index + 1])
        shapes[f"b{index}"] = (sizes[index + 1],)
    unexpected = sorted(set(members) - set(shapes) - {"metadata"})
    missing = sorted(set(shapes) - set(members))
    if missing or unexpected:
        raise CheckpointError(
            f"{path}: arrays do not match the declared network {sizes} (missing {missing}, unexpected {unexpected})"
        )
    arrays = {name: _read_array(archive, members[name], shape, path) for name, shape in shapes.items()}
    if not all(np.all(np.isfinite(array)) for array in arrays.values()):
        raise CheckpointError(f"{path} holds non-finite weights (NaN or inf)")
    layers = len(sizes) - 1
    weights = [arrays[f"w{index}"] for index in range(layers)]
    biases = [arrays[f"b{index}"] for index in range(layers)]
    return MLPPolicy(weights, biases, arrays["input_scale"], metadata)


def _read_metadata(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> PolicyMetadata:
    if info.file_size > MAX_METADATA_BYTES:
        raise CheckpointError(f"{path}: metadata of {info.file_size} bytes (at most {MAX_METADATA_BYTES})")
    with archive.open(info) as handle:
        dtype, shape = _array_header(handle, path, "metadata")
        if dtype.kind != "U" or shape != ():
            raise CheckpointError(f"{path}: metadata must be one text string, found {dtype} of shape {shape}")
        text = str(np.lib.format.read_array(handle, allow_pickle=False))
    try:
        raw = json.loads(text)
    except ValueError as error:
        raise CheckpointError(f"{path} has corrupt metadata: {error}") from error
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path} has corrupt metadata: expected a JSON object, found {type(raw).__name__}")
    known = {spec.name for spec in fields(PolicyMetadata)}
    if set(raw) - known:
        raise CheckpointError(f"{path} has corrupt metadata: unknown fields {sorted(set(raw) - known)}")
    try:
        metadata = PolicyMetadata(**raw)
    except TypeError as error:
        raise CheckpointError(f"{path} has corrupt metadata: {error}") from error
    _check_metadata(metadata, path)
    return metadata


def _check_metadata(metadata: PolicyMetadata, path: Path) -> None:
    """Types and bounds of every field, so that nothing later meets a ``None`` or a string where a size should be."""
    if metadata.format != FORMAT or metadata.format_version != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} is format {metadata.format!r} v{metadata.format_version!r}; "
            f"this version reads {FORMAT!r} v{FORMAT_VERSION}"
        )
    checks = {
        "deck": isinstance(metadata.deck, str),
        "env_version": isinstance(metadata.env_version, str),
        "description": isinstance(metadata.description, str),
        "observation_blocks": isinstance(metadata.observation_blocks, list)
        and all(isinstance(block, str) for block in metadata.observation_blocks),
        "training": metadata.training is None or isinstance(metadata.training, dict),
        "observation_size": _is_size(metadata.observation_size),
        "num_actions": _is_size(metadata.num_actions),
        "hidden_sizes": isinstance(metadata.hidden_sizes, list)
        and len(metadata.hidden_sizes) < MAX_LAYERS
        and all(_is_size(size) for size in metadata.hidden_sizes),
    }
    wrong = [name for name, ok in checks.items() if not ok]
    if wrong:
        values = {name: getattr(metadata, name) for name in wrong}
        raise CheckpointError(
            f"{path} has corrupt metadata: bad field(s) {values} (sizes are positive integers, "
            f"at most {MAX_LAYERS - 1} hidden layers; texts are strings)"
        )
    if metadata.activation not in ACTIVATIONS:
        raise CheckpointError(f"{path}: unknown activation {metadata.activation!r}; allowed: {list(ACTIVATIONS)}")
    sizes = [metadata.observation_size, *metadata.hidden_sizes, metadata.num_actions]
    parameters = sum((a + 1) * b for a, b in itertools.pairwise(sizes))
    if parameters > MAX_PARAMETERS:
        raise CheckpointError(f"{path} declares a network of {parameters:,} parameters (at most {MAX_PARAMETERS:,})")


def _is_size(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 1 << 20


def _array_header(handle: IO[bytes], path: Path, name: str) -> tuple[np.dtype, tuple[int, ...]]:
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise ValueError(f"unsupported .npy version {version}")
    except ValueError as error:
        raise CheckpointError(f"{path}: array {name!r} has a bad header: {error}") from error
    if dtype.hasobject:
        raise CheckpointError(f"{path}: array {name!r} holds Python objects; only numbers and text are allowed")
    return dtype, tuple(shape)


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, shape: tuple[int, ...], path: Path) -> np.ndarray:
    """One float32 array of exactly ``shape``, its header checked before its data is decompressed."""
    name = info.filename.removesuffix(".npy")
    limit = 4 * int(np.prod(shape)) + 4096  # data plus the largest header numpy writes
    if info.file_size > limit:
        raise CheckpointError(f"{path}: array {name!r} is {info.file_size} bytes, more than a {shape} float32 array")
    with archive.open(info) as handle:
        dtype, found = _array_header(handle, path, name)
        if found != shape or dtype != np.dtype("<f4"):
            raise CheckpointError(
                f"{path}: array {name!r} is {dtype} {found}; the declared network needs float32 {shape}"
            )
        try:
            array = np.lib.format.read_array(handle, allow_pickle=False)
        except ValueError as error:
            raise CheckpointError(f"{path}: array {name!r} is truncated or corrupt: {error}") from error
    return np.ascontiguousarray(array)
