"""A trained policy as plain numpy: the MLP that plays from a checkpoint, and the agent that plays it.

Inference is a forward pass through an MLP (``input_scale`` -> [linear -> activation]* -> linear),
then an argmax over the legal actions' logits, so users who only want a strong opponent need
numpy, not torch. A policy may declare derived inputs (``input_features``): entries its game computes
from the observation and appends to it before the network (the game names what it offers). A policy is
immutable (read-only arrays), so every agent made from one checkpoint can share it. Reading and writing the
checkpoint file is :mod:`friday13_env.core.checkpoint`'s job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from friday13_env.core.agent import Observation, checked_observation
from friday13_env.core.registry import check_greedy, check_seed
from friday13_env.core.specs import shown

FORMAT = "friday13-policy"


FORMAT_VERSION = 1


ACTIVATIONS = ("tanh", "relu")


RAW_INPUT = "observation"
"""The ``input_features`` of a network that reads the observation alone."""


class InputFeatures(Protocol):
    """Derived inputs: ``(..., observation_size) -> (..., size)``, appended to the observation."""

    name: str
    size: int

    def __call__(self, observations: np.ndarray) -> np.ndarray: ...


FeaturesOf = Callable[["PolicyMetadata"], "InputFeatures | None"]
"""A game's derived inputs for a checkpoint's ``input_features`` (None: the observation alone), or a ``ValueError``."""


def observation_only(metadata: PolicyMetadata) -> InputFeatures | None:
    """The ``FeaturesOf`` of a game that offers no derived inputs."""
    if metadata.input_features != RAW_INPUT:
        raise ValueError(f"unknown input features {shown(metadata.input_features)}; allowed: [{RAW_INPUT!r}]")
    return None


def network_inputs(observations: np.ndarray, features: InputFeatures | None) -> np.ndarray:
    """What a network with these derived inputs reads: the observations, then ``features`` of them if any."""
    if features is None:
        return observations
    return np.concatenate([observations, features(observations)], axis=-1)


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
    input_features: str = RAW_INPUT
    """Derived inputs the network reads after the observation (``RAW_INPUT``: none)."""


SPARSE_INPUTS = 512
"""From this many inputs on (Friday's 2,175, not the card game's 146), the first layer multiplies only the
rows of its weight that meet a non-zero input: a Friday observation has about 75 non-zero entries, and a
2,175 x 256 weight read in full costs more than the rest of the network. The sum is the same (in another
order, so the logits may differ in the last bits)."""


class MLPPolicy:
    """A numpy MLP read from a checkpoint: ``logits(observation_vector)``; with ``features``, the network reads
    the observation followed by ``features(observation)``.

    Immutable: the arrays are read-only float32 (writable ones given to the constructor are copied) and
    held in tuples, so one policy can be shared by every agent made from a checkpoint (``read_policy``
    caches it). To change a network, build a new ``MLPPolicy`` from modified copies.
    """

    def __init__(
        self,
        weights: Sequence[np.ndarray],
        biases: Sequence[np.ndarray],
        input_scale: np.ndarray,
        metadata: PolicyMetadata,
        features: InputFeatures | None = None,
    ) -> None:
        problem = network_problem(weights, biases, input_scale, metadata, features)
        if problem is not None:
            raise ValueError(problem)
        self.features = features
        self.weights: tuple[np.ndarray, ...] = tuple(read_only(weight) for weight in weights)
        self.biases: tuple[np.ndarray, ...] = tuple(read_only(bias) for bias in biases)
        self.input_scale: np.ndarray = read_only(input_scale)
        self.metadata = metadata
        self._activation = np.tanh if metadata.activation == "tanh" else _relu
        self._gather_first_layer = self.weights[0].shape[0] >= SPARSE_INPUTS
        self._unit_scale = bool(np.all(self.input_scale == 1))

    @property
    def nbytes(self) -> int:
        """Bytes of weights, biases and input scale."""
        return sum(array.nbytes for array in (self.input_scale, *self.weights, *self.biases))

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The logits of one observation ``(A,)`` or a batch ``(N, A)``; a ``ValueError`` where one is not finite
        (finite weights too large for float32 overflow), so that no caller, scalar, batched or searching, ever
        chooses a move from NaNs."""
        # In place where numpy allows: at one observation per call the allocations are a visible cost.
        inputs = network_inputs(np.asarray(observation, dtype=np.float32), self.features)
        if not self._unit_scale:
            inputs = inputs * self.input_scale
        if self._gather_first_layer and inputs.ndim == 1:  # only the rows of W1 meeting a non-zero input
            nonzero = (inputs != 0).nonzero()[0]  # several times faster than np.flatnonzero here
            hidden = inputs[nonzero] @ self.weights[0][nonzero]
        else:
            hidden = inputs @ self.weights[0]
        for weight, bias in zip(self.weights[1:], self.biases[:-1], strict=True):
            hidden += bias
            hidden = self._activation(hidden, out=hidden)
            hidden = hidden @ weight
        hidden += self.biases[-1]
        if not np.isfinite(hidden).all():
            raise ValueError(
                "the policy's logits are not all finite for this observation: its weights overflow float32 "
                f"({np.count_nonzero(~np.isfinite(hidden))} of {hidden.size} are NaN or infinite)"
            )
        return hidden

    def fingerprint(self) -> str:
        """SHA-256 of what decides the moves (activation, scale, weights), not of the file: two exports of
        the same network with other metadata (a run's arguments, its wall time) share a fingerprint."""
        digest = hashlib.sha256(self.metadata.activation.encode())
        if self.features is not None:
            digest.update(self.features.name.encode())
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
        greedy = check_greedy(greedy)  # a bool, as the registry's door makes it (np.True_ included)
        check_seed(seed)
        self.policy = policy
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed in place, as building the agent anew with ``seed`` would (the evaluation's hook; a greedy policy
        draws nothing)."""
        check_seed(seed)
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        return self.decide(*self._read(observation))

    def decide(self, vector: np.ndarray, legal: np.ndarray) -> int:
        """The move for an observation vector and its legal actions that the caller has already checked
        (an agent built on this one checks each observation once, not twice)."""
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


def network_problem(
    weights: Sequence[np.ndarray],
    biases: Sequence[np.ndarray],
    input_scale: np.ndarray,
    metadata: PolicyMetadata,
    features: InputFeatures | None,
) -> str | None:
    """What is wrong with a network for ``metadata``, or None: its features, activation, layer count, every
    array's shape (``[inputs, *hidden_sizes, num_actions]``), real floating values and finiteness. A network that
    passes plays every observation of its layout; one that does not would fail, or play nonsense, only later."""
    declared = RAW_INPUT if features is None else features.name
    if metadata.input_features != declared:
        return f"the metadata declares input features {metadata.input_features!r}, given {declared!r}"
    if metadata.activation not in ACTIVATIONS:
        return f"unknown activation {metadata.activation!r}; allowed: {list(ACTIVATIONS)}"
    inputs = metadata.observation_size + (0 if features is None else features.size)
    sizes = [inputs, *metadata.hidden_sizes, metadata.num_actions]
    layers = len(sizes) - 1
    if len(weights) != layers or len(biases) != layers:
        return (
            f"a network of sizes {sizes} has {layers} weight matrices and {layers} bias vectors, "
            f"given {len(weights)} and {len(biases)}"
        )
    arrays = [np.asarray(array) for array in (input_scale, *weights, *biases)]
    if not all(array.dtype.kind == "f" for array in arrays):
        return f"weights, biases and the input scale must be float arrays, got {[array.dtype.name for array in arrays]}"
    first = arrays[1].shape[0] if arrays[1].ndim == 2 else None
    if first != inputs:
        observation = f"the observation ({metadata.observation_size}) and its {declared!r} inputs"
        return f"the first layer reads {first} inputs; {observation} make {inputs}"
    expected = [(inputs,), *((sizes[i], sizes[i + 1]) for i in range(layers)), *((size,) for size in sizes[1:])]
    shapes = [array.shape for array in arrays]
    if shapes != expected:
        return f"arrays of shapes {shapes} do not make the network {sizes} (expected scale, weights, biases {expected})"
    if not all(np.isfinite(array).all() for array in arrays):
        return "the network holds non-finite values (NaN or inf)"
    return None


def read_only(array: np.ndarray) -> np.ndarray:
    """``array`` as float32 that nobody can write into (a read-only copy unless it already is read-only)."""
    converted = np.asarray(array, dtype=np.float32)
    if converted.flags.writeable:
        converted = converted.copy()
        converted.setflags(write=False)
    return converted
