"""Versioned entry point: ``from friday13_env import friday13_v0; env = friday13_v0.env()``.

The version changes whenever the rules, the observations, the actions or the rewards of legal play change in a
way that would make results of agents that play legal moves incomparable, so that papers can cite an exact
environment. What a release changes beyond that (an illegal action's penalty, the random stream of
``action_space.sample()``, which inputs are refused) is listed in the environment's version history
(docs/friday13.md); a result names the package release it was measured on too.
"""

from friday13_env.friday13.aec import env, raw_env

__all__ = ["env", "raw_env"]
