"""``train_ppo.py --init-run`` onto wider networks: a fork whose hidden layers are wider than its source's starts
playing and valuing exactly as its source did (widening with zero-initialised connections: function-preserving
growth, as Net2Net's, though Net2Net copies units where this adds fresh ones).

Each hidden layer keeps its source's units, with their weights, and adds new ones. Every weight that reads a new unit
is zero (from the layer above, new units included, and from the outputs), so at the start the network computes its
source's logits and values (up to the order of float sums); a new unit reads the source's units below (or the
inputs) through the wide network's own fresh weights. The first update's gradient reaches the zero weights out of
the new units (a new unit's activation times the error of the layer above), and from then on the weights into them:
a wider network that goes on from a trained one, rather than one that starts afresh. Nothing is learned from another
network: a widened run is learned from scratch if its source was.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from friday13_training.actor_critic import ActorCritic


def widening_problem(source: Sequence[int], fork: Sequence[int]) -> str | None:
    """Why a fork of hidden widths ``fork`` cannot start from networks of widths ``source``, or None: it has as many
    hidden layers, each at least as wide (no unit of the source is dropped)."""
    if len(fork) != len(source):
        return f"a fork has its source's {len(source)} hidden layers, not {len(fork)}"
    for layer, (theirs, mine) in enumerate(zip(source, fork, strict=True), start=1):
        if mine < theirs:
            return (
                f"a fork's hidden layers are its source's or wider: layer {layer} is {mine} wide, its source's {theirs}"
            )
    return None


def input_axes(model: nn.Module) -> dict[str, int]:
    """The axis along which each weight matrix of ``model`` reads the layer below: a ``Linear``'s weights are
    ``(outputs, inputs)``, the type-shared actor's ``(inputs, outputs)``."""
    linear = {f"{name}.weight" for name, module in model.named_modules() if isinstance(module, nn.Linear)}
    return {name: 1 if name in linear else 0 for name, parameter in model.named_parameters() if parameter.dim() == 2}


def widen_into(narrow: ActorCritic, wide: ActorCritic) -> None:
    """Load ``narrow``'s networks into ``wide``, a network of the same inputs, actions, kinds and depth whose hidden
    layers are as wide or wider (``widening_problem``): every tensor of ``narrow`` is copied into the leading block
    of ``wide``'s, and every weight that reads one of ``wide``'s new units is zeroed; the new units' weights from the
    source's units below and their biases keep ``wide``'s initialisation."""
    axes = input_axes(wide)
    state = {key: value.clone() for key, value in wide.state_dict().items()}
    with torch.no_grad():
        for key, old in narrow.state_dict().items():
            new = state[key]
            if key in axes:
                beyond = [slice(None)] * new.dim()
                beyond[axes[key]] = slice(old.shape[axes[key]], None)
                new[tuple(beyond)] = 0
            new[tuple(slice(0, size) for size in old.shape)] = old
    wide.load_state_dict(state)
