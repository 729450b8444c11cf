"""Specs, the registry, the zoo and ``MLPPolicy`` under hostile input: every spec names the agent it seems to, a
file is never imported as code, and a network that cannot play is refused when it is built, not at its first move.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env import agents
from friday13_env.core.mlp import MLPPolicy, PolicyMetadata
from friday13_env.core.specs import AgentSpec, parse_spec
from friday13_env.core.zoo import policy_path
from friday13_env.friday13.agents.policy import ENV_VERSION
from friday13_env.friday13.batched.agents import BatchedPolicy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout

PACKAGE = "friday13_env.friday13"


def zoo_copy(folder: Path, name: str, zoo_name: str = "ppo-v1") -> Path:
    """A copy of a zoo policy under another name in ``folder``."""
    return Path(shutil.copyfile(policy_path(PACKAGE, zoo_name), folder / name))


def test_a_path_named_like_a_zoo_policy_is_the_file_not_the_zoo(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    zoo_copy(tmp_path, "ppo-v4")
    assert policy_path(PACKAGE, Path("ppo-v4")) == Path("ppo-v4")
    assert policy_path(PACKAGE, "ppo-v4") == policy_path(PACKAGE, "ppo-v4") != Path("ppo-v4")


def test_an_existing_file_named_like_a_factory_is_read_as_a_checkpoint_never_imported(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    zoo_copy(tmp_path, "mypol:best")
    (tmp_path / "mypol.py").write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\nbest = None\n")
    agent = agents.make("mypol:best", seed=0)
    expected = agents.make(str(tmp_path / "mypol:best"), seed=0)
    assert type(agent) is type(expected) and agent.policy.fingerprint() == expected.policy.fingerprint()
    assert agents.options_of("mypol:best") == ["greedy"]
    assert not (tmp_path / "imported").exists()


def test_a_folder_named_like_a_spec_does_not_hide_the_spec(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "search:budget=16").mkdir()
    assert parse_spec("search:budget=16") == AgentSpec("search", (("budget", 16),))
    assert agents.make("search:budget=16", seed=0).budget == 16


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"path": 5}, r"a checkpoint path must be a str or a Path, got 5"),
        ({"path": None}, r"a checkpoint path must be a str or a Path, got None"),
        ({"path": "missing.npz", "seed": True}, r"seed must be None or a non-negative int, got True"),
        ({"path": "missing.npz", "seed": 1.5}, r"seed must be None or a non-negative int, got 1\.5"),
        ({"path": "missing.npz", "greedy": "x"}, r"greedy must be True or False, got 'x'"),
    ],
)
def test_load_checks_its_arguments_before_reading_a_file(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.load(**arguments)


def test_greedy_is_checked_before_a_checkpoint_is_read(tmp_path: Path) -> None:
    empty = tmp_path / "empty.npz"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match=r"greedy must be True or False, got 'x'"):
        agents.make(str(empty), greedy="x")


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("search", (("budget", 16), ("budget", 32)), r"option\(s\) \['budget'\] given more than once"),
        (5, (), r"an agent spec's name must be a non-empty string, got 5"),
        ("  ", (), r"an agent spec's name must be a non-empty string"),
        ("search", [("budget", 16)], r"options must be a tuple of \(name, value\) pairs"),
        ("search", (("budget", None),), r"options must be a tuple of \(name, value\) pairs"),
        ("search", (("not an identifier", 1),), r"options must be a tuple of \(name, value\) pairs"),
    ],
)
def test_a_hand_built_spec_holds_what_parse_spec_would_make(name: Any, options: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AgentSpec(name, options)


@pytest.mark.parametrize("budget", ["1_6", "\u0661\u0666", "16.0e", "0x10"])
def test_only_ascii_digits_make_a_number(budget: str) -> None:
    """``int()`` reads ``1_6`` and Arabic-Indic digits as 16; a spec keeps them as the text typed, which the agent
    then refuses by name."""
    assert parse_spec(f"search:budget={budget}").options == (("budget", budget),)
    with pytest.raises(ValueError, match="budget"):
        agents.make(f"search:budget={budget}")


def test_a_number_of_thousands_of_digits_is_refused_as_typed() -> None:
    with pytest.raises(ValueError, match=r"option 'budget': a number of at most 20 digits, got 5000 digits"):
        parse_spec("search:budget=" + "9" * 5000)
    with pytest.raises(ValueError, match=r"option 'a': a number of at most 20 digits, got 21 digits"):
        parse_spec("x:a=1.23456789012345678901")
    assert parse_spec("x:a=0.0000000000000000000001").options == (("a", 1e-22),)  # a float's leading zeros count not
    with pytest.raises(ValueError, match=r"option 'margin': '1e400' is beyond the range of a float"):
        parse_spec("endgame:margin=1e400")
    assert parse_spec("search:budget=16,temperature=-1.5e-3").options == (("budget", 16), ("temperature", -1.5e-3))


# -- MLPPolicy -----------------------------------------------------------------------------------------------------
def network(**changes: Any) -> dict[str, Any]:
    """The arguments of a valid 2-layer card-game ``MLPPolicy``, with ``changes`` applied."""
    layout = observation_layout(get_deck("standard"))
    rng = np.random.default_rng(0)
    metadata = PolicyMetadata(
        deck="standard", observation_size=layout.size, observation_blocks=[b.name for b in layout.blocks],
        num_actions=18, activation="relu", hidden_sizes=[8], env_version=ENV_VERSION,
    )  # fmt: skip
    arguments = {
        "weights": [rng.normal(size=(layout.size, 8)), rng.normal(size=(8, 18))],
        "biases": [np.zeros(8), np.zeros(18)],
        "input_scale": np.ones(layout.size),
        "metadata": metadata,
    }
    arguments.update(changes)
    return arguments


def with_metadata(**fields: Any) -> PolicyMetadata:
    return PolicyMetadata(**{**network()["metadata"].__dict__, **fields})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"weights": [np.full((146, 8), np.nan), np.zeros((8, 18))]}, r"non-finite values"),
        (
            {"metadata": with_metadata(activation="sigmoid")},
            r"unknown activation 'sigmoid'; allowed: \['tanh', 'relu'\]",
        ),
        ({"metadata": with_metadata(num_actions=5)}, r"arrays of shapes .* do not make the network \[146, 8, 5\]"),
        ({"weights": [np.zeros((146, 8)), np.zeros((8, 10))]}, r"do not make the network \[146, 8, 18\]"),
        ({"biases": [np.zeros(8)]}, r"has 2 weight matrices and 2 bias vectors, given 2 and 1"),
        ({"weights": [np.zeros((146, 8)), np.zeros((9, 18))]}, r"do not make the network"),
        ({"input_scale": np.ones(3)}, r"do not make the network"),
        ({"input_scale": np.array(["1"] * 146)}, r"must be float arrays"),
        ({"weights": [np.zeros((100, 8)), np.zeros((8, 18))]}, r"the first layer reads 100 inputs"),
    ],
)
def test_a_network_that_cannot_play_is_refused_when_built(changes: dict[str, Any], message: str) -> None:
    MLPPolicy(**network())  # the unchanged arguments make a network
    with pytest.raises(ValueError, match=message):
        MLPPolicy(**network(**changes))


def test_logits_that_overflow_are_an_error_not_a_move() -> None:
    """Finite weights too large for float32 give NaN logits; choosing from them would always play action 0."""
    weights = network()["weights"]
    policy = MLPPolicy(**network(weights=[weights[0], np.sign(weights[1]) * 3e38]))
    observation = np.ones(146, dtype=np.float32)
    legal = np.arange(18)
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="not all finite"):
        policy.choose(observation, legal)
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="not all finite"):
        policy.choose(observation, legal, np.random.default_rng(0))
    batched = BatchedPolicy(policy)
    with np.errstate(all="ignore"), pytest.raises(ValueError, match="not all finite"):
        batched.act_batch(np.ones((3, 146), dtype=np.float32), np.ones((3, 18), dtype=bool), np.random.default_rng(0))
