"""The card game's agents by name: ``friday13_env.agents.make("search:budget=600", seed=0)``.

A stable public path for :mod:`friday13_env.friday13.agents`; the solo game's agents live in
:mod:`friday13_env.friday.agents` and follow the same protocol and registry shape.
"""

from friday13_env.friday13.agents import *  # noqa: F403
from friday13_env.friday13.agents import __all__  # noqa: F401
