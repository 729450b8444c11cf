"""friday13-env: Friday the 13th (Reiner Knizia) and Friday (Friedemann Friese) for RL research.

- ``friday13_env.env()`` / ``raw_env`` / ``friday13_v0``: the PettingZoo AEC environment.
- ``gymnasium.make("friday13_env/Friday13-v0")``: a single-agent view against scripted opponents.
- ``gymnasium.make("friday13_env/Friday-v0")``: the solo deck-builder Friday.
"""

from gymnasium.envs.registration import register, registry

from friday13_env import friday13_v0
from friday13_env.aec import env, raw_env

__version__ = "0.1.0"
__all__ = ["__version__", "env", "friday13_v0", "raw_env"]

_GYM_ENVS = {
    "friday13_env/Friday13-v0": "friday13_env.single_agent:Friday13Env",
    "friday13_env/Friday-v0": "friday13_env.friday.env:FridayEnv",
}
for _env_id, _entry_point in _GYM_ENVS.items():
    if _env_id not in registry:
        register(id=_env_id, entry_point=_entry_point)
