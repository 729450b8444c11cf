"""Policy checkpoints: safe loading, clear errors for corrupt or mismatched files, numpy inference."""

from __future__ import annotations

import importlib
import itertools
import json
import os
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.checkpoint import CACHE_ENTRIES, CheckpointError, clear_policy_cache, save_policy
from friday13_env.core.mlp import SPARSE_INPUTS, MLPPolicy, PolicyMetadata
from friday13_env.friday import encoding
from friday13_env.friday import policy as friday_policy
from friday13_env.friday.agents import make as make_solo_agent
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday13.agents.policy import ENV_VERSION, Friday13PolicyAgent, read_friday13_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout

CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"
TEACHERS = sorted(str(path.relative_to(CHECKPOINTS)) for path in CHECKPOINTS.glob("**/*.npz"))
"""The checkpoints behind the zoo's ensemble (its teachers), relative to checkpoints/."""


def torch_policy() -> ModuleType:
    """``training/friday13_training/torch_policy.py`` (it needs torch: the ``train`` extra)."""
    pytest.importorskip("torch")
    return importlib.import_module("friday13_training.torch_policy")


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
        "env_version": ENV_VERSION,
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
    policy = read_friday13_policy(tiny_policy(tmp_path / "tiny.npz"))
    x = np.arange(policy.metadata.observation_size, dtype=np.float32) / 100
    expected = np.maximum(x @ policy.weights[0] + policy.biases[0], 0) @ policy.weights[1] + policy.biases[1]
    np.testing.assert_allclose(policy.logits(x), expected, rtol=1e-6)


def test_fingerprint_names_the_network_not_the_file(tmp_path: Path) -> None:
    policy = read_friday13_policy(tiny_policy(tmp_path / "a.npz"))
    relabelled = read_friday13_policy(tiny_policy(tmp_path / "b.npz", description="same weights, other notes"))
    assert (tmp_path / "a.npz").read_bytes() != (tmp_path / "b.npz").read_bytes()
    assert relabelled.fingerprint() == policy.fingerprint()
    nudged = policy.weights[1].copy()
    nudged[0, 0] += 1e-3
    changed = MLPPolicy([policy.weights[0], nudged], policy.biases, policy.input_scale, policy.metadata)
    assert changed.fingerprint() != relabelled.fingerprint()
    assert (
        read_friday13_policy(tiny_policy(tmp_path / "c.npz", activation="tanh")).fingerprint()
        != relabelled.fingerprint()
    )


def test_torch_layers_loaded_from_a_policy_compute_its_logits_and_save_back_unchanged(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    load_linear_layers, save_linear_layers = torch_policy().load_linear_layers, torch_policy().save_linear_layers
    policy = read_friday13_policy(tiny_policy(tmp_path / "tiny.npz"))
    size, actions = policy.metadata.observation_size, policy.metadata.num_actions
    layers = [torch.nn.Linear(size, 8), torch.nn.Linear(8, actions)]
    load_linear_layers(layers, policy)
    x = np.arange(size, dtype=np.float32) / 100
    with torch.no_grad():
        logits = layers[1](torch.relu(layers[0](torch.as_tensor(x)))).numpy()
    np.testing.assert_allclose(logits, policy.logits(x), rtol=1e-5, atol=1e-5)
    save_linear_layers(tmp_path / "again.npz", layers, policy.input_scale, policy.metadata)
    again = read_friday13_policy(tmp_path / "again.npz")
    assert all(np.array_equal(a, b) for a, b in zip(policy.weights, again.weights, strict=True))
    with pytest.raises(ValueError, match=r"layer 1: the network's weight is \(5, 8\), the policy's \(18, 8\)"):
        load_linear_layers([layers[0], torch.nn.Linear(8, 5)], policy)
    with pytest.raises(ValueError, match="the policy has 2 layers, the network 1"):
        load_linear_layers(layers[:1], policy)


def test_a_policy_to_start_training_from_must_match_the_runs_network(tmp_path: Path) -> None:
    read_matching_policy = torch_policy().read_matching_policy
    path = tiny_policy(tmp_path / "tiny.npz")
    assert read_matching_policy(path, deck="standard", activation="relu", hidden_sizes=[8]).metadata.hidden_sizes == [8]
    with pytest.raises(
        CheckpointError, match=r"activation: policy 'relu' vs run 'tanh'; hidden_sizes: policy \[8\] vs run \[8, 8\]\)"
    ):
        read_matching_policy(path, deck="standard", activation="tanh", hidden_sizes=[8, 8])
    with pytest.raises(CheckpointError, match=r"it is a 'friday13_v0' policy .*; Friday plays 'Friday-v0' policies"):
        read_matching_policy(path, deck="standard", activation="relu", hidden_sizes=[8], env_version="Friday-v0")


UNKNOWN_ENVIRONMENTS = {"unknown": "friday13_v9", "not a text": ["friday13_v0"], "missing": None}


@pytest.mark.parametrize("case", sorted(UNKNOWN_ENVIRONMENTS))
def test_an_export_for_an_unknown_environment_is_refused_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    module = torch_policy()
    policy = read_friday13_policy(tiny_policy(tmp_path / "tiny.npz"))
    metadata = PolicyMetadata(**{**vars(policy.metadata), "env_version": UNKNOWN_ENVIRONMENTS[case]})

    def never(*_arguments: Any) -> None:
        raise AssertionError("the policy was written before its environment was checked")

    monkeypatch.setattr(module, "save_policy", never)
    with pytest.raises(ValueError, match=r"unknown environment version .*; allowed: \['Friday-v0', 'friday13_v0'\]"):
        module.save_checked_policy(tmp_path / "out.npz", policy.weights, policy.biases, policy.input_scale, metadata)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tiny.npz"]


@pytest.mark.parametrize("case", sorted(UNKNOWN_ENVIRONMENTS))
def test_a_policy_to_start_from_for_an_unknown_environment_is_refused(tmp_path: Path, case: str) -> None:
    path = tiny_policy(tmp_path / "tiny.npz")
    with pytest.raises(ValueError, match=r"unknown environment version .*; allowed: \['Friday-v0', 'friday13_v0'\]"):
        torch_policy().read_matching_policy(
            path, deck="standard", activation="relu", hidden_sizes=[8], env_version=UNKNOWN_ENVIRONMENTS[case]
        )


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
    with pytest.raises(CheckpointError, match=r"array 'metadata' holds Python objects \(pickled data\)"):
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
        (
            {"env_version": "friday13_v9"},
            "it is a 'friday13_v9' policy; Friday the 13th plays 'friday13_v0' policies",
        ),
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
    with pytest.raises(
        CheckpointError,
        match=r"array 'w0' is float32 \(146, 8\); the declared network \[146, 16, 18\] needs float32 \(146, 16\)",
    ):
        agents.load(path)


def test_a_policy_for_one_deck_refuses_the_other_deck(tmp_path: Path) -> None:
    agent = agents.load(tiny_policy(tmp_path / "tiny.npz", deck="standard"))
    env = raw_env(deck="german")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="trained for the 'standard' deck"):
        agent.act(env.observe(env.agent_selection))


def test_the_zoo_and_the_ensembles_teachers_are_all_checked_below() -> None:
    assert "ensemble-v1" in agents.REGISTRY.zoo()
    assert {"search_distilled.npz", "ppo_finetuned.npz"} <= set(TEACHERS)
    assert sum(name.startswith("members/") for name in TEACHERS) >= 2


@pytest.mark.parametrize(
    "spec",
    [
        *(pytest.param(name, id=f"zoo:{name}") for name in sorted(agents.REGISTRY.zoo())),
        *(pytest.param(str(CHECKPOINTS / name), id=f"checkpoints/{name}") for name in TEACHERS),
    ],
)
def test_shipped_checkpoint_beats_random_in_a_quick_seeded_evaluation(spec: str) -> None:
    from friday13_env.friday13.evaluation import evaluate_agent

    agent = agents.make(spec)
    rates = evaluate_agent(agent, ["random"], num_games=40, num_players=4, seed=7)
    assert rates["random"].low > 0.25  # an equal seat wins 25%


class ZipOpens:
    """Counts the archives opened for reading (``zipfile.ZipFile``), to see which reads the cache answers."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = zipfile.ZipFile

        def counting(*args: Any, **kwargs: Any) -> zipfile.ZipFile:
            if (args[1] if len(args) > 1 else kwargs.get("mode", "r")) == "r":
                self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(zipfile, "ZipFile", counting)


def test_a_checkpoint_made_twice_is_read_once_and_its_policy_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_policy_cache()
    path = tiny_policy(tmp_path / "tiny.npz")
    (tmp_path / "link.npz").symlink_to(path)
    opens = ZipOpens(monkeypatch)
    first = agents.make(str(path), seed=0)
    assert opens.count == 1
    second = agents.make(str(path), seed=1)
    linked = agents.load(tmp_path / "link.npz")  # another spelling of the same file
    assert opens.count == 1
    assert isinstance(first, Friday13PolicyAgent) and isinstance(second, Friday13PolicyAgent)
    assert isinstance(linked, Friday13PolicyAgent)
    assert first is not second and first.policy is second.policy is linked.policy
    assert not any(array.flags.writeable for array in (first.policy.input_scale, *first.policy.weights))


def test_a_rewritten_checkpoint_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clear_policy_cache()
    path = tiny_policy(tmp_path / "tiny.npz")
    same_size = tiny_policy(tmp_path / "tanh.npz", activation="tanh")  # "tanh" and "relu": equal lengths
    assert same_size.stat().st_size == path.stat().st_size
    opens = ZipOpens(monkeypatch)
    assert read_friday13_policy(path).metadata.activation == "relu"
    before = path.stat()
    with path.open("r+b") as handle:  # in place: same file, same size, only the time tells
        handle.write(same_size.read_bytes())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert path.stat().st_ino == before.st_ino and path.stat().st_size == before.st_size
    assert read_friday13_policy(path).metadata.activation == "tanh"
    assert opens.count == 2
    tiny_policy(path, hidden_sizes=[8])  # replaced by rename, as save_policy writes
    assert read_friday13_policy(path).metadata.activation == "relu"
    assert opens.count == 3


def test_a_failed_read_is_not_cached_and_the_cache_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clear_policy_cache()
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"not a zip")
    with pytest.raises(CheckpointError, match="not a readable policy checkpoint"):
        read_friday13_policy(broken)
    tiny_policy(broken)
    assert read_friday13_policy(broken).metadata.hidden_sizes == [8]
    paths = [tiny_policy(tmp_path / f"p{index}.npz") for index in range(CACHE_ENTRIES + 1)]
    opens = ZipOpens(monkeypatch)
    for path in paths:
        read_friday13_policy(path)
    assert opens.count == CACHE_ENTRIES + 1
    read_friday13_policy(paths[-1])
    assert opens.count == CACHE_ENTRIES + 1  # the newest is still cached
    read_friday13_policy(paths[0])
    assert opens.count == CACHE_ENTRIES + 2  # the oldest was evicted


def test_reading_keeps_the_stored_layout_so_logits_match_numpys_own_loader_bit_for_bit() -> None:
    """Numpy sums a matrix product in an order that depends on memory layout: a re-laid-out copy of the
    weights moves logits in their last bits and can flip a near-tie, so published results would not replay."""
    path = agents.REGISTRY.zoo()["ensemble-v1"]
    policy = read_friday13_policy(path)
    with np.load(path, allow_pickle=False) as archive:
        stored = [archive[f"w{index}"] for index in range(len(policy.weights))]
        biases = [archive[f"b{index}"] for index in range(len(policy.biases))]
        scale = archive["input_scale"]
    assert any(weight.flags.f_contiguous and not weight.flags.c_contiguous for weight in stored)
    for mine, theirs in zip(policy.weights, stored, strict=True):
        assert mine.flags.f_contiguous == theirs.flags.f_contiguous and np.array_equal(mine, theirs)
    observations = np.random.default_rng(0).integers(0, 4, size=(64, policy.weights[0].shape[0])).astype(np.float32)
    for observation in observations:
        hidden = observation * scale
        for weight, bias in zip(stored[:-1], biases[:-1], strict=True):
            hidden = np.maximum(hidden @ weight + bias, 0.0)
        expected = hidden @ stored[-1] + biases[-1]
        assert np.array_equal(policy.logits(observation), expected)


def dense_reference_logits(policy: MLPPolicy, observation: np.ndarray) -> np.ndarray:
    """The MLP computed the plain way, every input row of every weight read (float64, for a tight reference)."""
    hidden = observation.astype(np.float64) * policy.input_scale
    for weight, bias in zip(policy.weights[:-1], policy.biases[:-1], strict=True):
        hidden = np.maximum(hidden @ weight + bias, 0.0)
    return hidden @ policy.weights[-1] + policy.biases[-1]


@pytest.mark.parametrize("hidden_sizes", [[64, 32], []], ids=["two hidden layers", "no hidden layer"])
def test_a_wide_sparse_input_takes_the_gather_path_and_computes_the_same_logits(hidden_sizes: list[int]) -> None:
    """Friday's 2,175 inputs take the gather path (only the rows of W1 that meet a non-zero input); its logits
    are the plain product's up to float rounding, on real observations (about 75 non-zero entries) and on a
    dense vector."""
    rng = np.random.default_rng(3)
    sizes = [encoding.OBS_SIZE, *hidden_sizes, 129]
    weights = [rng.normal(size=(a, b)).astype(np.float32) / np.sqrt(a) for a, b in itertools.pairwise(sizes)]
    biases = [rng.normal(size=b).astype(np.float32) for b in sizes[1:]]
    metadata = friday_policy.policy_metadata("relu", hidden_sizes, "test")
    policy = MLPPolicy(weights, biases, rng.uniform(0.5, 2.0, encoding.OBS_SIZE).astype(np.float32), metadata)
    assert encoding.OBS_SIZE >= SPARSE_INPUTS and policy._gather_first_layer
    env, heuristic = FridayEnv(level=2), make_solo_agent("heuristic", seed=0)
    observation, info = env.reset(seed=0)
    observations = [rng.uniform(-1, 1, encoding.OBS_SIZE).astype(np.float32)]
    for _ in range(40):
        observations.append(observation)
        observation, _, done, _, info = env.step(heuristic.act(observation_dict(observation, info)))
        if done:
            break
    assert np.mean([np.count_nonzero(o) for o in observations[1:]]) < SPARSE_INPUTS / 4
    unit = MLPPolicy(weights, biases, np.ones(encoding.OBS_SIZE, dtype=np.float32), metadata)  # scale skipped
    for observation in observations:
        np.testing.assert_allclose(policy.logits(observation), dense_reference_logits(policy, observation), atol=2e-4)
        np.testing.assert_allclose(unit.logits(observation), dense_reference_logits(unit, observation), atol=2e-4)
    batch = np.array(observations)  # a batch takes the dense product, row by row the same
    np.testing.assert_allclose(policy.logits(batch), [policy.logits(o) for o in observations], atol=2e-4)
