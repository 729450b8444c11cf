"""Golden playthroughs: seeded games must replay step for step exactly as recorded.

Catches any unintended change to dealing, rules, observations, masks or rewards. If a change is
intended, regenerate with ``python -m tests.friday13.make_golden`` and bump the environment version.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.friday13.make_golden import GAMES, GOLDEN_PATH, record_game

HOW_TO_UPDATE = (
    "friday13_v0 no longer replays its golden game. If this behaviour change is intended, regenerate "
    "tests/friday13/golden_friday13_v0.json with `python -m tests.friday13.make_golden` AND bump the environment "
    "version (friday13_v0 -> friday13_v1) so that published results stay comparable; otherwise it is a bug."
)


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return json.loads(GOLDEN_PATH.read_text())


def test_golden_file_is_small_and_complete(golden: dict[str, Any]) -> None:
    assert GOLDEN_PATH.stat().st_size < 300_000
    assert golden["env"] == "friday13_v0"
    assert sorted(golden["games"]) == sorted(GAMES)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_seeded_game_replays_exactly(golden: dict[str, Any], name: str) -> None:
    expected = golden["games"][name]
    actual = record_game(**GAMES[name])
    assert actual["options"] == expected["options"], HOW_TO_UPDATE
    for index, (step, recorded) in enumerate(zip(actual["steps"], expected["steps"], strict=False)):
        assert step == recorded, f"{name}: first difference at step {index}.\n{HOW_TO_UPDATE}"
    assert len(actual["steps"]) == len(expected["steps"]), f"{name}: different game length.\n{HOW_TO_UPDATE}"
    assert actual["final_scores"] == expected["final_scores"], HOW_TO_UPDATE
