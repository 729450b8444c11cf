"""Every registered id with its defaults, as Gymnasium's and Stable-Baselines3's tools use it."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest

import friday13_env  # noqa: F401  (registers the ids)

IDS = sorted(env_id for env_id in gym.registry if env_id.startswith("friday13_env/"))


def make(env_id: str, **kwargs: object) -> gym.Env:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the old solo id warns by design
        return gym.make(env_id, **kwargs)


def test_every_id_is_tested() -> None:
    assert IDS == ["friday13_env/Friday-v0", "friday13_env/Friday13-v0", "friday13_env/FridaySolo-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_check_env_passes_with_the_defaults(env_id: str) -> None:
    from gymnasium.utils.env_checker import check_env

    check_env(make(env_id).unwrapped, skip_render_check=False)


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_check_env_passes_with_the_defaults(env_id: str) -> None:
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from stable_baselines3.common.env_checker import check_env

    check_env(make(env_id), warn=True)
