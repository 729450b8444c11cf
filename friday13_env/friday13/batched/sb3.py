"""Stable-Baselines3 on the native vector environment: ``to_sb3(vector_env)`` is an SB3 ``VecEnv``.

SB3 has its own vector interface (``step_async``/``step_wait``, a list of infos, the final observation
in ``info["terminal_observation"]``, autoreset in the same step); this adapter gives it that over a
:class:`~friday13_env.friday13.batched.vector_env.Friday13VectorEnv` made with
``autoreset_mode="SameStep"``, and answers sb3-contrib's ``env_method("action_masks")`` with the N
masks, so ``MaskablePPO("MlpPolicy", to_sb3(env))`` trains unchanged::

    env = gymnasium.make_vec("friday13_env/Friday13-v0", num_envs=256, vectorization_mode="vector_entry_point",
                             opponent_pool=["cautious", "majority"], autoreset_mode="SameStep")
    model = MaskablePPO("MlpPolicy", to_sb3(env), seed=0).learn(100_000)

Each finished game's info carries SB3's episode statistics, ``info["episode"] = {"r": return, "l": length,
"t": seconds since the adapter was made}``, as ``VecMonitor`` records them (the same float32 sums), so
``MaskablePPO`` logs ``rollout/ep_rew_mean`` without a wrapper; a ``VecMonitor`` around the adapter replaces
them with its own identical figures, so nothing is counted twice. Actions are checked as
``Friday13VectorEnv.step`` checks them (``check_actions``): floats and NaN are refused, never truncated.

Stable-Baselines3 is imported when ``to_sb3`` is first called (the ``train`` extra), so the package
itself never needs it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from friday13_env.core.checks import as_action
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv, check_actions

MASKS_METHOD = "action_masks"
"""The method sb3-contrib's ``get_action_masks`` calls on every sub-environment."""


def to_sb3(env: VectorEnv) -> Any:
    """An SB3 ``VecEnv`` over ``env`` (a ``Friday13VectorEnv``, as ``gymnasium.make_vec`` returns it, made with
    ``autoreset_mode="SameStep"``), itself: a Gymnasium wrapper around it is refused, as SB3 would step past it."""
    vector_env = env.unwrapped
    if not isinstance(vector_env, Friday13VectorEnv):
        raise ValueError(f"to_sb3 takes a Friday13VectorEnv (gymnasium.make_vec(..., vectorization_mode="
                         f"'vector_entry_point')), got {type(vector_env).__name__}")  # fmt: skip
    if env is not vector_env:
        raise ValueError(
            f"to_sb3 takes the vector environment itself, not one wrapped in {type(env).__name__}: SB3 would step the "
            "environment under the wrapper, which would never run; wrap the adapter with SB3's VecEnv wrappers instead"
        )
    if vector_env.autoreset_mode != AutoresetMode.SAME_STEP:
        raise ValueError(
            "SB3 resets finished environments in the same step: make the vector environment with "
            f"autoreset_mode='SameStep', not {vector_env.autoreset_mode.value!r}"
        )
    return _adapter_class()(vector_env)


@cache
def _adapter_class() -> type:
    """The adapter class, defined on first use so that importing this module does not import SB3."""
    from stable_baselines3.common.vec_env import VecEnv

    class Friday13SB3VecEnv(VecEnv):
        """SB3's view of a ``Friday13VectorEnv`` (see the module docstring)."""

        def __init__(self, env: Friday13VectorEnv) -> None:
            self.env = env
            self._actions = np.zeros(env.num_envs, dtype=np.int64)
            self._returns = np.zeros(env.num_envs, dtype=np.float32)  # VecMonitor's dtypes: the same sums
            self._lengths = np.zeros(env.num_envs, dtype=np.int64)
            self._start_time = time.time()
            super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

        def reset(self) -> np.ndarray:
            seed = self._seeds[0]
            observations, infos = self.env.reset(seed=seed)
            self._seeds = [None] * self.num_envs
            self.reset_infos = _info_list(infos, self.num_envs)
            self._returns[:] = 0.0
            self._lengths[:] = 0
            return observations

        def step_async(self, actions: np.ndarray) -> None:
            """Take the actions (a ``ValueError`` for what ``Friday13VectorEnv.step`` refuses; nothing played)."""
            self._actions = check_actions(actions, self.num_envs, self.env.deck.num_actions)

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            observations, rewards, terminated, truncated, infos = self.env.step(self._actions)
            done = terminated | truncated
            rewards = rewards.astype(np.float32)
            self._returns += rewards
            self._lengths += 1
            listed = _info_list(infos, self.num_envs)
            elapsed = round(time.time() - self._start_time, 6)
            for game in np.flatnonzero(done).tolist():  # SB3's convention: the finished game's info, the new one's
                self.reset_infos[game] = listed[game]  # in reset_infos
                listed[game] = _final_info(infos["final_info"], game)
                listed[game]["terminal_observation"] = infos["final_obs"][game]
                listed[game]["TimeLimit.truncated"] = bool(truncated[game] and not terminated[game])
                listed[game]["episode"] = {"r": self._returns[game], "l": self._lengths[game], "t": elapsed}
            self._returns[done] = 0.0
            self._lengths[done] = 0
            return observations, rewards, done, listed

        def close(self) -> None:
            self.env.close()

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self.env, attr_name)] * len(self._indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            raise AttributeError(f"the tables of a Friday13VectorEnv share their attributes; cannot set {attr_name!r}")

        def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
            """``action_masks`` of the tables ``indices``; any other method acts on every table at once (the
            tables are one environment), so ``indices`` must name them all (or be None): a method called for some
            tables would change the others too."""
            games = self._indices(indices)
            if method_name == MASKS_METHOD:
                return list(self.env.action_masks()[games])
            if sorted(set(games)) != list(range(self.num_envs)):
                raise ValueError(
                    f"{method_name} acts on every table at once: call it with indices=None (the tables are one "
                    f"environment), got indices for {len(set(games))} of the {self.num_envs} tables"
                )
            result = getattr(self.env, method_name)(*args, **kwargs)
            return [result] * len(games)

        def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
            """SB3's reset options, of which this adapter passes none (a reset starts every table, with no
            ``reset_mask``): any but empty ones are refused, never stored and dropped."""
            listed = [options] if options is None or isinstance(options, dict) else list(options)
            if any(option for option in listed):
                raise ValueError(
                    f"the Friday13 vector environment's SB3 adapter takes no reset options (got {options!r}): its "
                    "reset starts a game at every table"
                )
            super().set_options(options)

        def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
            return [False] * len(self._indices(indices))

        def _indices(self, indices: Any) -> Sequence[int]:
            return table_indices(indices, self.num_envs)

    return Friday13SB3VecEnv


INDICES = "indices must be table indices (ints in 0..{last}) or an iterable of them, got {action!r}"
OUTSIDE = "table index {action} is outside 0..{last}"


def table_indices(indices: object, num_envs: int) -> Sequence[int]:
    """SB3's ``indices`` argument (``None`` for every table, one index, or an iterable of them) as a list of ints, or
    a ``ValueError`` naming the allowed values before anything is read: Python and numpy integers only (no bool, no
    float), each in ``0..num_envs - 1`` (``-1`` is not the last table, and an index past the last one names no
    table). Each index is read as ``checks.as_action`` reads an action."""
    if indices is None:
        return range(num_envs)
    if isinstance(indices, int | np.integer) or (isinstance(indices, np.ndarray) and indices.ndim == 0):
        given: Iterable[object] = [indices]
    elif isinstance(indices, Iterable) and not isinstance(indices, str | bytes):
        given = indices
    else:
        raise ValueError(INDICES.format(last=num_envs - 1, action=indices))
    return [as_action(index, num_envs, INDICES, OUTSIDE) for index in given]


def _info_list(infos: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    """Gymnasium's dict of arrays as SB3's list of per-environment dicts: the new games' infos (masks, and what
    belongs to the games that just ended, ``final_*``, left out)."""
    keys = [key for key in infos if not key.startswith("_") and not key.startswith("final_")]
    return [{key: infos[key][game] for key in keys} for game in range(num_envs)]


def _final_info(final: dict[str, Any], game: int) -> dict[str, Any]:
    """The info of table ``game``'s finished game, from the vector env's ``final_info`` (its ``final_scores``
    included): every key its mask gives for that table."""
    return {
        key: values[game]
        for key, values in final.items()
        if not key.startswith("_") and (f"_{key}" not in final or final[f"_{key}"][game])
    }
