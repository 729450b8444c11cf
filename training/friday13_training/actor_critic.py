"""The actor and the critic of ``training/train_ppo.py``: torch networks whose actor exports to the package's numpy
policy format (``agents.load`` plays it without torch).

Separate actor and critic MLPs read the observation scaled as the package's policies scale it (then its derived
inputs, with ``--input-features``); the critic also reads what only it sees (the other hands, ``hidden_scale``). With
``--actor type-shared`` the actor is a :class:`TypeSharedActor`, written out as a plain MLP, so the export format is
the same.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from friday13_env.core.mlp import InputFeatures, MLPPolicy, network_inputs
from friday13_env.friday13.agents.policy import policy_metadata
from friday13_env.friday13.cards import NUM_PILES
from friday13_env.friday13.encoding import OmenTypeGroups
from friday13_training.torch_policy import save_checked_policy, sharpen_


class NetworkArgs(Protocol):
    """The fields of ``train_ppo``'s ``Args`` that an exported policy records."""

    deck: str
    activation: str
    hidden_sizes: list[int]
    input_features: str


ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh}
"""The hidden layers' activations by name (every training script's ``--activation``)."""


def mlp(sizes: Sequence[int], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for index, (inputs, outputs) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(inputs, outputs))
        if index < len(sizes) - 2:
            layers.append(ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


class TypeSharedActor(nn.Module):
    """An actor that reads and plays the three omen types with the same weights (``--actor type-shared``).

    The omen types are interchangeable in the rules (:class:`~friday13_env.friday13.encoding.OmenTypeGroups`), so
    a plain MLP has to learn every type's play three times. Here each hidden layer holds one block of units per
    type: a block reads its own type's entries with one matrix, the sum of the other two types' with a second
    and the entries of no type with a third; a block of the next layer reads its own block and the sum of the
    others; a type's logits (its omen cards, a Friday card on its pile) come from its block and the others' sum.
    Relabelling the omen types of an observation relabels the logits the same way. ``dense_layers`` writes the
    layers out as plain matrices, so the export is the package's ordinary MLP format.
    """

    own: torch.Tensor
    shared: torch.Tensor
    action_order: torch.Tensor
    eye: torch.Tensor

    def __init__(self, groups: OmenTypeGroups, hidden: Sequence[int], activation: str) -> None:
        super().__init__()
        self.register_buffer("own", torch.as_tensor(groups.own))
        self.register_buffer("shared", torch.as_tensor(groups.shared))
        self.register_buffer("action_order", torch.as_tensor(np.argsort(groups.actions.reshape(-1))))
        self.register_buffer("eye", torch.eye(NUM_PILES), persistent=False)  # not in checkpoints: a constant
        self.num_inputs = groups.own.size + groups.shared.size + groups.unused.size
        self.activation = ACTIVATIONS[activation]()
        blocks = [groups.own.shape[1]] + [width // NUM_PILES for width in hidden] + [groups.actions.shape[1]]
        self.own_weights = nn.ParameterList()
        self.other_weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for index, (inputs, outputs) in enumerate(itertools.pairwise(blocks)):
            gain = 0.01 if index == len(blocks) - 2 else np.sqrt(2)  # near-uniform first moves, as CleanRL starts
            self.own_weights.append(nn.Parameter(nn.init.orthogonal_(torch.empty(inputs, outputs), gain)))
            self.other_weights.append(nn.Parameter(nn.init.orthogonal_(torch.empty(inputs, outputs), gain / 2)))
            self.biases.append(nn.Parameter(torch.zeros(outputs)))
        self.shared_weights = nn.Parameter(nn.init.orthogonal_(torch.empty(groups.shared.size, blocks[1]), np.sqrt(2)))

    def dense_weights(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The network as plain ``(weights (inputs, outputs), biases)`` layers over the observation, built from the
        shared parameters (gradients reach them through it). A layer's block ``(t, u)`` is ``own`` if ``t == u``,
        else ``other``; the first layer's rows are the observation's entries (each type's own entries, the shared
        ones, zeros for the unused ones), the last layer's columns the actions in their order. The batch then goes
        through three matrix products, not the many small operations of reading each type's entries apart."""
        layers = []
        for index, (own, other, bias) in enumerate(zip(self.own_weights, self.other_weights, self.biases, strict=True)):
            weights = torch.kron(self.eye, own) + torch.kron(1 - self.eye, other)
            if index == 0:
                rows = weights.new_zeros((self.num_inputs, weights.shape[1])).index_copy(
                    0, self.own.reshape(-1), weights
                )
                weights = rows.index_copy(0, self.shared, self.shared_weights.repeat(1, NUM_PILES))
            layers.append((weights, bias.repeat(NUM_PILES)))
        weights, bias = layers[-1]
        layers[-1] = (weights[:, self.action_order], bias[self.action_order])
        return layers

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        layers = self.dense_weights()
        for index, (weights, bias) in enumerate(layers):
            inputs = torch.addmm(bias, inputs, weights)
            if index < len(layers) - 1:
                inputs = self.activation(inputs)
        return inputs

    def dense_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """``dense_weights`` as numpy arrays: the export's layers."""
        with torch.no_grad():
            return [
                (weights.cpu().numpy().copy(), biases.cpu().numpy().copy()) for weights, biases in self.dense_weights()
            ]


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs over the scaled inputs (the observation, then ``features`` of it if any);
    illegal actions get no probability."""

    scale: torch.Tensor
    hidden_scale: torch.Tensor

    def __init__(
        self, scale: np.ndarray, hidden_scale: np.ndarray, num_actions: int, hidden: Sequence[int], activation: str,
        features: InputFeatures | None = None, type_groups: OmenTypeGroups | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.features = features
        self.settings = (scale, hidden_scale, num_actions, activation, features, type_groups)  # all but the widths
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("hidden_scale", torch.as_tensor(hidden_scale))
        self.actor: nn.Module = (
            mlp([scale.size, *hidden, num_actions], activation)
            if type_groups is None
            else TypeSharedActor(type_groups, hidden, activation)
        )
        self.critic = mlp([scale.size + hidden_scale.size, *hidden, 1], activation)
        if isinstance(self.actor, nn.Sequential):  # after the critic: the draws of the runs before --actor
            linear = self.linear_layers()
            for layer in linear:
                nn.init.orthogonal_(layer.weight, np.sqrt(2))
                nn.init.zeros_(layer.bias)
            nn.init.orthogonal_(linear[-1].weight, 0.01)  # near-uniform first moves, as CleanRL starts

    def with_hidden(self, hidden: Sequence[int]) -> ActorCritic:
        """A fresh network of this one's inputs, actions and kinds with other hidden widths (``--init-run``'s source,
        read before it is widened into this one: ``friday13_training.widening``)."""
        scale, hidden_scale, num_actions, activation, features, type_groups = self.settings
        return ActorCritic(scale, hidden_scale, num_actions, hidden, activation, features, type_groups)

    def linear_layers(self) -> list[nn.Linear]:
        """The layers of a plain MLP actor (``--actor mlp``), input first."""
        assert isinstance(self.actor, nn.Sequential), "a type-shared actor has no plain layers"
        return [layer for layer in self.actor if isinstance(layer, nn.Linear)]

    def load_actor(self, policy: MLPPolicy, sharpness: float = 1.0) -> None:
        """Start the actor from ``policy``'s layers (a best response that starts from its target's weights), its
        logits multiplied by ``sharpness`` (the output layer's weights and biases scaled).

        The actor must be a plain MLP of the policy's shape, reading the same inputs: a ``ValueError`` says what
        differs. The critic keeps its fresh weights."""
        if not isinstance(self.actor, nn.Sequential):
            raise ValueError("only a plain MLP actor (--actor mlp) can start from a policy's layers")
        linear = self.linear_layers()
        shapes = [tuple(layer.weight.shape[::-1]) for layer in linear]
        if shapes != [weights.shape for weights in policy.weights]:
            raise ValueError(f"the policy's layers are {[w.shape for w in policy.weights]}, the actor's {shapes}")
        if not np.array_equal(policy.input_scale, self.scale.cpu().numpy()):
            raise ValueError("the policy scales its inputs differently from this actor")
        with torch.no_grad():
            for layer, weights, biases in zip(linear, policy.weights, policy.biases, strict=True):
                layer.weight.copy_(torch.tensor(weights.T))
                layer.bias.copy_(torch.tensor(biases))
        sharpen_(linear[-1], sharpness)

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        """What the networks read for these observations: the observations, then their derived inputs if any."""
        return network_inputs(observations, self.features)

    def logits(self, observations: torch.Tensor, masks: torch.Tensor, actor: nn.Module | None = None) -> torch.Tensor:
        """The actor's logits, or those of ``actor``, a network of the actor's shape (``--magnet-coef``'s magnet)."""
        return (self.actor if actor is None else actor)(observations * self.scale).masked_fill(~masks, -1e9)

    def value(self, observations: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """The critic's value; ``hidden`` is what only the critic sees (``hidden_cards``; empty without it)."""
        return self.critic(torch.cat([observations * self.scale, hidden * self.hidden_scale], dim=1)).squeeze(-1)

    def policy(self, args: NetworkArgs, description: str, training: dict[str, Any]) -> MLPPolicy:
        """The actor as the package's numpy policy (greedy by default when played through ``agents.load``)."""
        if isinstance(self.actor, TypeSharedActor):
            layers = self.actor.dense_layers()
        else:
            layers = [(layer.weight.detach().cpu().numpy().T.copy(), layer.bias.detach().cpu().numpy().copy())
                      for layer in self.linear_layers()]  # fmt: skip
        metadata = policy_metadata(
            args.deck, args.activation, args.hidden_sizes, description, training, args.input_features
        )
        weights, biases = [weights for weights, _ in layers], [biases for _, biases in layers]
        return MLPPolicy(weights, biases, self.scale.cpu().numpy().copy(), metadata, self.features)

    def export(self, path: Path, args: NetworkArgs, description: str, training: dict[str, Any]) -> None:
        """``policy`` written to ``path`` in the package's format, atomically, once the loader has read it back."""
        policy = self.policy(args, description, training)
        save_checked_policy(path, policy.weights, policy.biases, policy.input_scale, policy.metadata)
