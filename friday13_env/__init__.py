"""friday13-env: Friday the 13th (Reiner Knizia) and Friday (Friedemann Friese) for RL research.

- ``friday13_env.env()`` / ``raw_env`` / ``friday13_v0``: the card game as a PettingZoo AEC environment.
- ``gymnasium.make("friday13_env/Friday13-v0")``: the card game's single-agent view against scripted opponents.
- ``gymnasium.make("friday13_env/FridaySolo-v0")``: the solo deck-builder Friday (``Friday-v0`` is a
  deprecated alias).

The card game lives in :mod:`friday13_env.friday13`, the solo game in :mod:`friday13_env.friday`, both
over the game-agnostic :mod:`friday13_env.core`. Importing this package registers the Gymnasium ids
and nothing else: PettingZoo is imported only when the AEC environment is first used.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from gymnasium.envs.registration import register, registry

__version__ = "0.29.0"
__all__ = ["__version__", "env", "friday13_v0", "raw_env"]

_GYM_ENVS = {
    "friday13_env/Friday13-v0": "friday13_env.friday13.single_agent:Friday13Env",
    "friday13_env/FridaySolo-v0": "friday13_env.friday.env:FridayEnv",
    "friday13_env/Friday-v0": "friday13_env.friday.env:deprecated_friday_v0",  # the old id of FridaySolo-v0
}
_VECTOR_ENVS = {"friday13_env/Friday13-v0": "friday13_env.friday13.batched.vector_env:Friday13VectorEnv"}
"""Native vector environments (``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``)."""
for _env_id, _entry_point in _GYM_ENVS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point, vector_entry_point=_VECTOR_ENVS.get(_env_id))

_LAZY = {"env": "friday13_env.friday13.aec", "raw_env": "friday13_env.friday13.aec", "friday13_v0": None}


def __getattr__(name: str) -> Any:
    """``env``, ``raw_env`` and ``friday13_v0`` on first use, so that the solo game never imports PettingZoo."""
    if name not in _LAZY:
        raise AttributeError(f"module 'friday13_env' has no attribute {name!r}")
    module = import_module("friday13_env.friday13_v0")
    value = module if name == "friday13_v0" else getattr(module, name)
    globals()[name] = value
    return value
