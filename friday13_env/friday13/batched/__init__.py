"""Friday the 13th for thousands of games at once, in numpy: the batched engine and what is built on it.

- :mod:`.engine`: ``GameBatch``, B games held as arrays, one card per game per ``step``.
- :mod:`.encoding`: their observations and global states, row for row the scalar encoder's.
- :mod:`.agents`: ``random``, ``cautious``, ``majority`` and network policies, deciding for a whole batch.
- :mod:`.vector_env`: ``Friday13VectorEnv``, the native ``gymnasium.make_vec`` of ``Friday13-v0``.
- :mod:`.selfplay`: ``SelfPlayTables``, where the caller plays every seat.
- :mod:`.seating`: ``seat_learners``, who sits where when new games start (a learner and its opponents).
- :mod:`.sb3`: ``to_sb3``, the vector environment as a Stable-Baselines3 ``VecEnv``.
- :mod:`.rllib`: ``BatchedTables``, the tables as a Ray RLlib environment (needs the ``rllib`` extra, so it is
  not imported here: ``training/train_rllib.py`` imports it).
"""

from friday13_env.friday13.batched.agents import BatchedAgent, make_batched
from friday13_env.friday13.batched.encoding import encode_observations, encode_states
from friday13_env.friday13.batched.engine import GameBatch, StepResult
from friday13_env.friday13.batched.sb3 import to_sb3
from friday13_env.friday13.batched.selfplay import SelfPlayTables, Turn
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv

__all__ = [
    "BatchedAgent",
    "Friday13VectorEnv",
    "GameBatch",
    "SelfPlayTables",
    "StepResult",
    "Turn",
    "encode_observations",
    "encode_states",
    "make_batched",
    "to_sb3",
]
