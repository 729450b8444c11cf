"""Every shipped agent makes the decisions it made when ``tests/data/decision_hashes.json`` was recorded.

The hashes were made with ``python -m tests.decision_hashes`` on release 0.6.0's code after ``ppo-v4``
(commit bc8ff11): a refactor that changes any agent's move on any of the fixed positions fails here.
A change meant to alter an agent's play records the file anew and says so in the CHANGELOG.
"""

from __future__ import annotations

import json

import pytest

from tests import decision_hashes
from tests.scripts import REPOSITORY

RECORDED = json.loads((REPOSITORY / "tests" / "data" / "decision_hashes.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("section", sorted(decision_hashes.SECTIONS))
def test_every_agent_decides_as_recorded(section: str) -> None:
    assert decision_hashes.SECTIONS[section]() == RECORDED[section]


def test_the_record_covers_every_shipped_agent() -> None:
    from friday13_env import agents
    from friday13_env.friday import agents as solo_agents

    assert sorted(RECORDED["card"]) == sorted(agents.names())
    assert set(agents.REGISTRY.zoo()) <= set(RECORDED["batched"])
    assert sorted(RECORDED["solo"]) == sorted(solo_agents.names())
