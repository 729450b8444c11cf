"""``Registry`` carries each agent's batched form beside it: given as the factory itself or as an entry point
imported on first use, listed by ``batched_names``, and refused clearly for an agent registered without one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
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


def test_an_agent_given_as_an_entry_point_is_imported_when_first_made(tmp_path: Path) -> None:
    """An agent built on code that resolves specs through the registry (``netsearch`` on the batched engine) is
    registered by name, so the registry need not import it."""
    module = tmp_path / "lazily_imported.py"
    module.write_text("from friday13_env.friday13.agents.heuristics import MajorityAgent\n")
    sys.path.insert(0, str(tmp_path))
    try:
        agents = registry()
        agents.register("lazy", "lazily_imported:MajorityAgent")
        assert "lazily_imported" not in sys.modules
        assert agents.options_of("lazy") == ["keep_min", "open_min"]
        assert "lazily_imported" in sys.modules
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lazily_imported", None)
    agents.register("by_name", "friday13_env.friday13.agents.heuristics:MajorityAgent")
    assert agents.names() == ["by_name", "lazy"]
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


def test_the_package_imports_netsearch_and_the_batched_engine_only_when_netsearch_is_made() -> None:
    """Why ``netsearch`` is registered by entry point: importing the agents must not import it (nor the batched engine
    it is built on, which resolves specs through the registry)."""
    script = (
        "import sys; from friday13_env.friday13 import agents; "
        "before = sorted(m for m in sys.modules if m.endswith(('.netsearch', '.batched.engine'))); "
        "agents.make('netsearch:worlds=2', seed=0); "
        "after = sorted(m for m in sys.modules if m.endswith(('.netsearch', '.batched.engine'))); "
        "print(before, after)"
    )
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    netsearch, engine = "friday13_env.friday13.agents.netsearch", "friday13_env.friday13.batched.engine"
    assert shown == f"[] {[netsearch, engine] if netsearch < engine else [engine, netsearch]}"


@pytest.mark.parametrize(
    ("entry_point", "problem"),
    [
        ("friday13_env.friday13.agents.heuristics:NoSuchAgent", "cannot be loaded: module .* has no attribute"),
        ("no_such_package.agents:Agent", "cannot be loaded: No module named 'no_such_package'"),
        ("friday13_env.friday13.agents.search:MAX_WORLDS", "is a int, not a class or function"),
    ],
)
def test_an_entry_point_that_names_no_factory_is_a_clear_error_at_first_use(entry_point: str, problem: str) -> None:
    """The form is checked at ``register``; what it names only when it is first used (it is not imported before):
    then a module that does not import or an object that cannot be called is a ``ValueError`` naming the agent."""
    agents = registry()
    agents.register("broken", entry_point)
    agents.register("broken_batched", Scalar, batched=entry_point)
    for use in (lambda: agents.make("broken"), lambda: agents.options_of("broken"), lambda: agents.check("broken")):
        with pytest.raises(ValueError, match=f"agent 'broken''s entry point '{entry_point}' {problem}"):
            use()
    with pytest.raises(ValueError, match=f"agent 'broken_batched''s batched form '{entry_point}' {problem}"):
        agents.batched_factory("broken_batched")
