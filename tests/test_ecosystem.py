"""Every registered id with its defaults, as Gymnasium's and Stable-Baselines3's tools use it."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
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


@pytest.mark.parametrize("env_id", ["friday13_env/Friday13-v0", "friday13_env/FridaySolo-v0"])
def test_make_vec_env_and_maskable_ppo_train_on_both_games(env_id: str) -> None:
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    vec_env = make_vec_env(env_id, n_envs=2, seed=0)
    vec_env.reset()
    masks = get_action_masks(vec_env)
    assert masks.shape == (2, vec_env.action_space.n) and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    assert model.num_timesteps >= 128
    observation = vec_env.reset()
    actions, _ = model.predict(observation, action_masks=get_action_masks(vec_env))
    assert all(mask[action] for mask, action in zip(get_action_masks(vec_env), np.asarray(actions), strict=True))
    vec_env.close()
