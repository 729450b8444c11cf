"""A trained Friday policy as an agent; the checkpoint layout it must match is :mod:`friday13_env.friday.policy`."""

from __future__ import annotations

import os
from pathlib import Path

from friday13_env.core.mlp import PolicyAgent
from friday13_env.core.registry import check_seed
from friday13_env.core.specs import shown
from friday13_env.friday.policy import read_friday_policy


def load_policy_agent(
    path: str | Path, seed: int | None = None, greedy: bool = True, name: str | None = None
) -> PolicyAgent:
    """A Friday policy as an agent (numpy only). A missing, corrupt or foreign checkpoint (a Friday the 13th
    policy, another observation layout) is a ``CheckpointError`` saying what is wrong. The weights come from
    ``read_policy``'s cache: building agents again from the same file version reuses them.

    A ``path`` that is not a str or an ``os.PathLike`` and a ``seed`` that is not ``None`` or a non-negative int
    are ``ValueError``s before the file is read."""
    if not isinstance(path, str | os.PathLike):
        raise ValueError(f"a checkpoint path must be a str or an os.PathLike (a Path), got {shown(path)}")
    check_seed(seed)
    policy = read_friday_policy(path)
    return PolicyAgent(policy, name=name or Path(path).stem, seed=seed, greedy=greedy)
