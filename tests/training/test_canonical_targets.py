"""``best_response.py`` names its target as the benchmark's results do: the spec's canonical form
(``Registry.canonical``: options sorted, defaults left out), so that the leaderboard's row of that agent shows its gap.

A review found that the target was recorded as typed (``majority:open_min=4,keep_min=2``) while the leaderboard names
the agent ``majority:open_min=4``: the gap matched no row.
"""

from __future__ import annotations

import pytest

from tests.scripts import load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")


@pytest.mark.parametrize(
    ("typed", "recorded"),
    [
        ("majority:open_min=4,keep_min=2", "majority:open_min=4"),
        ("majority: keep_min=1, open_min=4", "majority:keep_min=1,open_min=4"),
        ("majority:keep_min=2", "majority"),
        ("ppo-v4:greedy=true", "ppo-v4"),
    ],
)
def test_the_target_is_recorded_in_canonical_form(typed: str, recorded: str) -> None:
    load_training_script("train_ppo")  # best_response imports it as a module, as it does when run from training/
    script = load_training_script("best_response")
    assert script.parse_args(["--target", typed]).target == recorded
