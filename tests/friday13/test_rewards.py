"""``rewards.table_rewards``, the batched ``seat_rewards`` on one table's row, gives the PettingZoo environment the
very floats its former per-seat formulas gave (the reference below), sign of zero included."""

from __future__ import annotations

import numpy as np
import pytest

from friday13_env.friday13.rewards import REWARD_MODES, table_rewards


def former_rewards(points: list[int], totals: list[int], game_over: bool, mode: str) -> list[float]:
    """``aec.raw_env``'s rewards of a round end before the game's rewards had one home."""

    def rival_margin(scores: list[int], seat: int) -> int:
        return min(total for other, total in enumerate(scores) if other != seat) - scores[seat]

    mean, best = sum(points) / len(points), min(totals)
    before = [total - gained for total, gained in zip(totals, points, strict=True)]
    rewards = [0.0] * len(points)
    for seat in range(len(points)):
        if mode == "points":
            rewards[seat] = float(-points[seat])
        elif mode == "relative":
            rewards[seat] = mean - points[seat]
        elif mode == "rival":
            rewards[seat] = float(rival_margin(totals, seat) - rival_margin(before, seat))
        elif game_over:
            rewards[seat] = 1.0 if totals[seat] == best else 0.0
    return rewards


@pytest.mark.parametrize("mode", sorted(REWARD_MODES))
@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_one_tables_rewards_are_the_former_floats_bit_for_bit(mode: str, players: int) -> None:
    rng = np.random.default_rng(players)
    for _ in range(300):
        points = rng.integers(0, 12, size=players) * rng.integers(0, 2, size=players)  # many seats score nothing
        totals = (points + rng.integers(0, 30, size=players)).tolist()
        game_over = bool(rng.integers(2))
        ours = table_rewards(points.tolist(), totals, game_over, mode)
        theirs = former_rewards(points.tolist(), totals, game_over, mode)
        assert [(type(value), value.hex()) for value in ours] == [(float, value.hex()) for value in theirs]
