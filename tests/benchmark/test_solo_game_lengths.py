"""``benchmarks/solo_game_lengths.py``: the game lengths behind the solo environment's ``MAX_DECISIONS``."""

from __future__ import annotations

import pytest

from benchmarks import solo_game_lengths
from friday13_env.friday.agents import make
from friday13_env.friday.env import MAX_DECISIONS, FridayEnv


def test_a_game_length_counts_every_decision_to_the_end() -> None:
    env = FridayEnv(level=1)
    length = solo_game_lengths.game_length(env, make("random", seed=1), 10_000)
    assert 0 < length < MAX_DECISIONS and env.action_masks().sum() == 0, "the game is over"
    assert solo_game_lengths.game_length(FridayEnv(level=1), make("random", seed=1), 10_000) == length


def test_the_table_has_a_row_per_agent_and_level(capsys: pytest.CaptureFixture[str]) -> None:
    solo_game_lengths.main(["--agents", "random:2"])
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [row.split()[:3] for row in rows] == [["random", str(level), "2"] for level in (1, 2, 3, 4)]


@pytest.mark.parametrize("text", ["random", "random:0", "random:x", ":3"])
def test_an_entry_without_a_positive_game_count_is_refused(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        solo_game_lengths.main(["--agents", text])
    assert exited.value.code == 2 and "argument --agents" in capsys.readouterr().err
