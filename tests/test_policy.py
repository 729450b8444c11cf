"""Policy checkpoints: safe loading, clear errors for corrupt or mismatched files, numpy inference."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from common.torch_policy import load_linear_layers, read_matching_policy, save_linear_layers

from friday13_env import agents, raw_env
from friday13_env.core.policy import CheckpointError, PolicyMetadata, save_policy
from friday13_env.friday13.agents.policy import read_card_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout

CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"


def tiny_policy(path: Path, deck: str = "standard", **overrides: object) -> Path:
    """A random 2-layer policy with correct metadata (fields overridable to build broken files)."""
    layout = observation_layout(get_deck(deck))
    num_actions = get_deck(deck).num_actions
    rng = np.random.default_rng(0)
    fields = {
        "deck": deck,
        "observation_size": layout.size,
        "observation_blocks": [block.name for block in layout.blocks],
        "num_actions": num_actions,
        "activation": "relu",
        "hidden_sizes": [8],
    }
    fields.update(overrides)
    weights = [rng.normal(size=(layout.size, 8)), rng.normal(size=(8, num_actions))]
    biases = [np.zeros(8), np.zeros(num_actions)]
    save_policy(path, weights, biases, np.ones(layout.size), PolicyMetadata(**fields))  # type: ignore[arg-type]
    return path


def test_a_saved_policy_plays_legal_moves_through_the_registry(tmp_path: Path) -> None:
    agent = agents.make(str(tiny_policy(tmp_path / "tiny.npz")), seed=0)
    env = raw_env(num_players=5)
    env.reset(seed=1)
    for _name in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agent.act(observation)
        if action is not None:
            assert observation["action_mask"][action] == 1
        env.step(action)


def test_numpy_forward_pass_is_the_mlp(tmp_path: Path) -> None:
    policy = read_card_policy(tiny_policy(tmp_path / "tiny.npz"))
    x = np.arange(policy.metadata.observation_size, dtype=np.float32) / 100
    expected = np.maximum(x @ policy.weights[0] + policy.biases[0], 0) @ policy.weights[1] + policy.biases[1]
    np.testing.assert_allclose(policy.logits(x), expected, rtol=1e-6)


def test_fingerprint_names_the_network_not_the_file(tmp_path: Path) -> None:
    policy = read_card_policy(tiny_policy(tmp_path / "a.npz"))
    relabelled = read_card_policy(tiny_policy(tmp_path / "b.npz", description="same weights, other notes"))
    assert (tmp_path / "a.npz").read_bytes() != (tmp_path / "b.npz").read_bytes()
    assert relabelled.fingerprint() == policy.fingerprint()
    policy.weights[1][0, 0] += 1e-3
    assert policy.fingerprint() != relabelled.fingerprint()
    assert (
        read_card_policy(tiny_policy(tmp_path / "c.npz", activation="tanh")).fingerprint() != relabelled.fingerprint()
    )


def test_torch_layers_loaded_from_a_policy_compute_its_logits_and_save_back_unchanged(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    policy = read_card_policy(tiny_policy(tmp_path / "tiny.npz"))
    size, actions = policy.metadata.observation_size, policy.metadata.num_actions
    layers = [torch.nn.Linear(size, 8), torch.nn.Linear(8, actions)]
    load_linear_layers(layers, policy)
    x = np.arange(size, dtype=np.float32) / 100
    with torch.no_grad():
        logits = layers[1](torch.relu(layers[0](torch.as_tensor(x)))).numpy()
    np.testing.assert_allclose(logits, policy.logits(x), rtol=1e-5, atol=1e-5)
    save_linear_layers(tmp_path / "again.npz", layers, policy.input_scale, policy.metadata)
    again = read_card_policy(tmp_path / "again.npz")
    assert all(np.array_equal(a, b) for a, b in zip(policy.weights, again.weights, strict=True))
    with pytest.raises(ValueError, match=r"layer 1: the network's weight is \(5, 8\), the policy's \(18, 8\)"):
        load_linear_layers([layers[0], torch.nn.Linear(8, 5)], policy)
    with pytest.raises(ValueError, match="the policy has 2 layers, the network 1"):
        load_linear_layers(layers[:1], policy)


def test_a_policy_to_start_training_from_must_match_the_runs_network(tmp_path: Path) -> None:
    path = tiny_policy(tmp_path / "tiny.npz")
    assert read_matching_policy(path, deck="standard", activation="relu", hidden_sizes=[8]).metadata.hidden_sizes == [8]
    with pytest.raises(
        CheckpointError, match=r"activation: policy 'relu' vs run 'tanh'; hidden_sizes: policy \[8\] vs run \[8, 8\]\)"
    ):
        read_matching_policy(path, deck="standard", activation="tanh", hidden_sizes=[8, 8])
    with pytest.raises(CheckpointError, match="env_version: policy 'friday13_v0' vs run 'Friday-v0'"):
        read_matching_policy(path, deck="standard", activation="relu", hidden_sizes=[8], env_version="Friday-v0")


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointError, match="no policy checkpoint"):
        agents.load(tmp_path / "nope.npz")


def test_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.npz"
    path.write_bytes(b"definitely not a zip archive")
    with pytest.raises(CheckpointError, match="not a readable policy checkpoint"):
        agents.load(path)


def test_truncated_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tiny_policy(tmp_path / "tiny.npz")
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(CheckpointError, match="not a readable policy checkpoint"):
        agents.load(path)


def test_pickled_objects_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "pickle.npz"
    np.savez(path, metadata=np.array([{"evil": "object"}], dtype=object))
    with pytest.raises(CheckpointError):
        agents.load(path)


def test_file_without_metadata_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bare.npz"
    np.savez(path, w0=np.zeros((2, 2)))
    with pytest.raises(CheckpointError, match="no metadata"):
        agents.load(path)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"observation_size": 128}, "another observation/action layout"),
        ({"observation_blocks": ["hand"]}, "another observation/action layout"),
        ({"num_actions": 21}, "another observation/action layout"),
        ({"env_version": "friday13_v9"}, "trained for environment 'friday13_v9'"),
        ({"format_version": 99}, "this version reads"),
        ({"deck": "italian"}, "unknown deck"),
        ({"activation": "gelu"}, "unknown activation"),
    ],
)
def test_mismatched_metadata_is_refused_with_what_differs(tmp_path: Path, override: dict, message: str) -> None:
    path = tiny_policy(tmp_path / "tiny.npz")
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    metadata = json.loads(str(arrays["metadata"]))
    metadata.update(override)
    arrays["metadata"] = np.array(json.dumps(metadata))
    np.savez(path, **arrays)
    with pytest.raises(CheckpointError, match=message):
        agents.load(path)


def test_wrong_layer_shapes_are_refused(tmp_path: Path) -> None:
    path = tiny_policy(tmp_path / "tiny.npz", hidden_sizes=[16])
    with pytest.raises(CheckpointError, match="layer shapes"):
        agents.load(path)


def test_a_policy_for_one_deck_refuses_the_other_deck(tmp_path: Path) -> None:
    agent = agents.load(tiny_policy(tmp_path / "tiny.npz", deck="standard"))
    env = raw_env(deck="german")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="trained for the 'standard' deck"):
        agent.act(env.observe(env.agent_selection))


@pytest.mark.parametrize(
    "name",
    [
        "ensemble_distilled.npz",
        "ppo_finetuned.npz",
        "ppo_general.npz",
        "search_distilled.npz",
        "members/ppo_majority4_seed0.npz",
        "members/ppo_majority4_seed1.npz",
    ],
)
def test_shipped_checkpoint_beats_random_in_a_quick_seeded_evaluation(name: str) -> None:
    from friday13_env.friday13.evaluation import evaluate_agent

    agent = agents.load(CHECKPOINTS / name)
    rates = evaluate_agent(agent, ["random"], num_games=40, num_players=4, seed=7)
    assert rates["random"].low > 0.25  # an equal seat wins 25%
