"""Policies with derived inputs (``input_features``): saved, read, played, and refused where they do not fit."""

from __future__ import annotations

import importlib
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.checkpoint import CheckpointError, save_policy
from friday13_env.core.mlp import MLPPolicy
from friday13_env.friday import policy as friday_policy
from friday13_env.friday13.agents.policy import input_scale, policy_metadata, read_friday13_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.features import majority_preview
from tests.core.test_policy import tiny_policy

HIDDEN = 8


def preview_policy(path: Path, deck: str = "standard", features: str = "majority_preview", rows: int = 0) -> Path:
    """A random policy reading the observation and ``features`` of it (its first layer ``rows`` tall if given)."""
    scale = input_scale(deck, features)
    rng = np.random.default_rng(1)
    num_actions = get_deck(deck).num_actions
    weights = [rng.normal(size=(rows or scale.size, HIDDEN)), rng.normal(size=(HIDDEN, num_actions))]
    biases = [rng.normal(size=HIDDEN), rng.normal(size=num_actions)]
    metadata = policy_metadata(deck, "tanh", [HIDDEN], "a policy with derived inputs", input_features=features)
    save_policy(path, weights, biases, np.resize(scale, rows or scale.size), metadata)
    return path


def stored_metadata(path: Path) -> dict[str, object]:
    with zipfile.ZipFile(path) as archive, archive.open("metadata.npy") as handle:
        return json.loads(str(np.lib.format.read_array(handle)))


@pytest.mark.parametrize("deck", ["standard", "german"])
def test_the_network_reads_the_observation_then_its_preview(tmp_path: Path, deck: str) -> None:
    policy = read_friday13_policy(preview_policy(tmp_path / "p.npz", deck))
    preview = majority_preview(get_deck(deck))
    assert policy.metadata.input_features == "majority_preview"
    assert policy.weights[0].shape == (policy.metadata.observation_size + preview.size, HIDDEN)
    env = raw_env(num_players=4, deck=deck)
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)["observation"]
    inputs = np.concatenate([observation, preview(observation)]) * policy.input_scale
    expected = np.tanh(inputs @ policy.weights[0] + policy.biases[0]) @ policy.weights[1] + policy.biases[1]
    np.testing.assert_allclose(policy.logits(observation), expected, rtol=1e-5, atol=1e-5)
    batch = np.stack([observation, np.zeros_like(observation)])
    np.testing.assert_allclose(policy.logits(batch)[0], policy.logits(observation), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_a_policy_with_derived_inputs_plays_whole_games_through_the_registry(tmp_path: Path, num_players: int) -> None:
    path = preview_policy(tmp_path / "p.npz")
    env = raw_env(num_players=num_players)
    env.reset(seed=num_players)
    players = {name: agents.load(path, seed=0) for name in env.agents}
    for name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = players[name].act(observation)
        assert observation["action_mask"][action] == 1
        env.step(action)
    assert not env.agents


def test_a_file_without_derived_inputs_does_not_store_the_field(tmp_path: Path) -> None:
    """So that versions predating ``input_features`` (which refuse unknown fields) still read it."""
    assert "input_features" not in stored_metadata(tiny_policy(tmp_path / "raw.npz"))
    assert stored_metadata(preview_policy(tmp_path / "p.npz"))["input_features"] == "majority_preview"
    assert read_friday13_policy(tmp_path / "raw.npz").metadata.input_features == "observation"


def test_unknown_derived_inputs_are_refused_naming_the_allowed_ones(tmp_path: Path) -> None:
    path = tiny_policy(tmp_path / "odd.npz", input_features="opponent_hands")
    allowed = r"allowed: \['observation', 'majority_preview'\]"
    with pytest.raises(CheckpointError, match=r"unknown input features 'opponent_hands'; " + allowed):
        read_friday13_policy(path)
    with pytest.raises(CheckpointError, match="bad field"):
        read_friday13_policy(tiny_policy(tmp_path / "number.npz", input_features=7))


def test_the_solo_game_refuses_the_card_games_derived_inputs(tmp_path: Path) -> None:
    path = preview_policy(tmp_path / "p.npz")
    with pytest.raises(CheckpointError):
        friday_policy.read_friday_policy(path)


def test_a_first_layer_without_room_for_the_derived_inputs_is_refused(tmp_path: Path) -> None:
    path = preview_policy(tmp_path / "short.npz", rows=146)
    needs = r"the declared network \[260, 8, 18\] needs float32 \(260,\)"
    with pytest.raises(CheckpointError, match=r"is float32 \(146,\); " + needs):
        read_friday13_policy(path)


def test_the_parameter_cap_counts_the_derived_inputs(tmp_path: Path) -> None:
    """One hidden layer of 100,000: 16.5M parameters over the observation alone (under the cap), 27.9M with the
    preview's 114 inputs, refused before any array is read."""
    path = tiny_policy(tmp_path / "wide.npz", input_features="majority_preview", hidden_sizes=[100_000])
    with pytest.raises(CheckpointError, match=r"declares a network of 27,900,018 parameters \(at most 20,000,000\)"):
        read_friday13_policy(path)


def test_derived_inputs_must_match_the_metadata(tmp_path: Path) -> None:
    policy = read_friday13_policy(preview_policy(tmp_path / "p.npz"))
    with pytest.raises(ValueError, match=r"declares input features 'majority_preview', given 'observation'"):
        MLPPolicy(policy.weights, policy.biases, policy.input_scale, policy.metadata)
    raw = read_friday13_policy(tiny_policy(tmp_path / "raw.npz"))
    with pytest.raises(ValueError, match=r"the first layer reads 146 inputs; the observation \(146\) and its "):
        MLPPolicy(raw.weights, raw.biases, raw.input_scale, policy.metadata, policy.features)


def test_the_fingerprint_names_the_derived_inputs(tmp_path: Path) -> None:
    """Same arrays, read as another network: the fingerprint must tell them apart."""
    policy = read_friday13_policy(preview_policy(tmp_path / "p.npz"))
    fake = type("Other", (), {"name": "other_preview", "size": policy.features.size})()  # type: ignore[union-attr]
    metadata = policy.metadata.__class__(**{**policy.metadata.__dict__, "input_features": "other_preview"})
    other = MLPPolicy(policy.weights, policy.biases, policy.input_scale, metadata, fake)
    assert other.fingerprint() != policy.fingerprint()


def test_runs_that_read_the_observation_alone_refuse_to_start_from_such_a_policy(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    read_matching_policy = importlib.import_module("friday13_training.torch_policy").read_matching_policy
    path = preview_policy(tmp_path / "p.npz")
    with pytest.raises(CheckpointError, match="input_features: policy 'majority_preview' vs run 'observation'"):
        read_matching_policy(path, deck="standard", activation="tanh", hidden_sizes=[HIDDEN])
