"""Friday (solo) policies: the layout a checkpoint must match to play ``FridaySolo-v0``.

The format itself (arrays, metadata, safe reading) is game-agnostic, in :mod:`friday13_env.core.checkpoint`;
a solo policy leaves ``deck`` empty. ``ENV_VERSION`` (``"Friday-v0"``) tags the observation and action
layout a checkpoint was trained for; it kept the environment's first id when the id became
``FridaySolo-v0`` (same layout), so existing checkpoints stay readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from friday13_env.core.checkpoint import read_policy
from friday13_env.core.mlp import MLPPolicy, PolicyMetadata
from friday13_env.core.specs import shown
from friday13_env.friday import actions, encoding

ENV_VERSION = "Friday-v0"
"""The layout tag of solo policies (the environment's first id; the layout is unchanged under ``FridaySolo-v0``)."""


def layout_fields() -> dict[str, Any]:
    return {
        "observation_size": encoding.OBS_SIZE,
        "observation_blocks": [block.name for block in encoding.OBSERVATION_LAYOUT.blocks],
        "num_actions": actions.NUM_ACTIONS,
        "deck": "",
    }


def expected_layout(metadata: PolicyMetadata) -> dict[str, Any]:
    """The fields a Friday policy must carry (a ``ValueError`` for a policy of another game)."""
    if metadata.env_version != ENV_VERSION:
        raise ValueError(
            f"it is a {shown(metadata.env_version)} policy (the Friday the 13th card game?); Friday plays "
            f"{ENV_VERSION!r}"
            " policies"
        )
    return layout_fields()


def read_friday_policy(path: str | Path) -> MLPPolicy:
    """A Friday policy from a checkpoint, or a ``CheckpointError`` naming the problem."""
    return read_policy(path, expected_layout)


def policy_metadata(
    activation: str, hidden_sizes: Sequence[int], description: str, training: dict[str, Any] | None = None
) -> PolicyMetadata:
    """Metadata of a Friday policy, with the layout fields taken from this version."""
    return PolicyMetadata(
        activation=activation,
        hidden_sizes=list(hidden_sizes),
        env_version=ENV_VERSION,
        description=description,
        training=training,
        **layout_fields(),
    )
