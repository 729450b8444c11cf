"""Versioned entry point: ``from friday13_env import friday13_v0; env = friday13_v0.env()``.

The version changes whenever observations, actions, rewards or rules change in a way that would
make results incomparable, so that papers can cite an exact environment.
"""

from friday13_env.friday13.aec import env, raw_env

__all__ = ["env", "raw_env"]
