"""``Registry`` carries each agent's batched form beside it: given as the factory itself or as an entry point
imported on first use, listed by ``batched_names``, and refused clearly for an agent registered without one."""

from __future__ import annotations

from typing import Any

import pytest

from friday13_env.core.registry import Registry
from friday13_env.friday13.cards import STANDARD_DECK


class Scalar:
    name = "scalar"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed


class Batched:
    name = "scalar"

    def __init__(self, deck: Any) -> None:
        self.deck = deck


def load_nothing(*args: Any, **options: Any) -> Any:
    raise AssertionError("no policy is loaded here")


def registry() -> Registry:
    return Registry("Test", "friday13_env.core", load_nothing)


def test_a_batched_form_given_as_a_factory_or_an_entry_point() -> None:
    agents = registry()
    agents.register("direct", Scalar, batched=Batched)
    agents.register("named", Scalar, batched="friday13_env.friday13.batched.agents:BatchedCautious")
    agents.register("scalar_only", Scalar)
    assert agents.batched_names() == ["direct", "named"]
    assert agents.batched_factory("direct") is Batched
    named = agents.batched_factory("named")
    assert named is not None and named(STANDARD_DECK).name == "cautious"
    assert agents.batched_factory("unregistered.npz") is None  # a zoo name or a path: the game batches its policy
    with pytest.raises(ValueError, match=r"agent 'scalar_only' has no batched version; batched agents: \['direct'"):
        agents.batched_factory("scalar_only")


@pytest.mark.parametrize("entry_point", ["BatchedCautious", "friday13_env.friday13.batched.agents", "a b:c", ""])
def test_a_malformed_entry_point_is_refused_when_registered(entry_point: str) -> None:
    agents = registry()
    with pytest.raises(ValueError, match=r"a batched entry point must read 'package\.module:name'"):
        agents.register("named", Scalar, batched=entry_point)
    assert agents.names() == []


def test_an_agent_given_as_an_entry_point_is_imported_when_first_made() -> None:
    """An agent built on code that resolves specs through the registry (``netsearch`` on the batched engine) is
    registered by name, so the registry need not import it."""
    agents = registry()
    agents.register("by_name", "friday13_env.friday13.agents.heuristics:MajorityAgent")
    assert agents.names() == ["by_name"]
    assert agents.options_of("by_name") == ["keep_min", "open_min"]
    agent = agents.make("by_name:open_min=4", seed=1)
    assert type(agent).__name__ == "MajorityAgent" and agent.open_min == 4
    with pytest.raises(ValueError, match=r"'by_name' has no option 'budget'|budget"):
        agents.make("by_name:budget=3")


@pytest.mark.parametrize("entry_point", ["MajorityAgent", "friday13_env.friday13.agents.heuristics", "a b:c", ""])
def test_a_malformed_agent_entry_point_is_refused_when_registered(entry_point: str) -> None:
    agents = registry()
    with pytest.raises(ValueError, match=r"an agent's entry point must read 'package\.module:name'"):
        agents.register("named", entry_point)
    assert agents.names() == []
