"""``rewards.table_rewards``, the batched ``seat_rewards`` on one table's row, gives the PettingZoo environment the
very floats its former per-seat formulas gave (the reference below), sign of zero included; and the reward of an
illegal action is below everything legal play can reach, the same in every environment."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from friday13_env.friday13.aec import env as aec_env
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.cards import STANDARD_DECK, get_deck
from friday13_env.friday13.rewards import REWARD_MODES, illegal_action_reward, table_rewards
from friday13_env.friday13.single_agent import Friday13Env


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


# -- the reward of an illegal action -------------------------------------------------------------------------------
def returns_to_go(mode: str, deck: str, num_rounds: int, seed: int) -> list[float]:
    """Every return-to-go a learner saw in its finished games of random legal play against random opponents at
    tables of 3-6 (the sum of its rewards from each of its moves to the end of its game), 64 tables at a time."""
    env = Friday13VectorEnv(num_envs=64, num_players=[3, 4, 5, 6], opponent_pool=["random"], deck=deck,
                            num_rounds=num_rounds, reward=mode)  # fmt: skip
    rng = np.random.default_rng(seed)
    _, infos = env.reset(seed=seed)
    rewards, ended = [], []
    for _ in range(30 * num_rounds):
        masks = infos["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(mask)) if mask.any() else 0 for mask in masks])
        _, reward, terminated, truncated, infos = env.step(actions)
        rewards.append(reward)
        ended.append(terminated | truncated)
    seen: list[float] = []
    for table in range(env.num_envs):
        to_go: float | None = None  # None until the table's last finished game is reached, going backwards
        for step in reversed(range(len(rewards))):
            if ended[step][table]:
                to_go = float(rewards[step][table])
            elif step > 0 and ended[step - 1][table]:
                to_go = None  # the step that restarted the table: no move of the learner's
                continue
            elif to_go is not None:
                to_go += float(rewards[step][table])
            if to_go is not None:
                seen.append(to_go)
    return seen


@pytest.mark.parametrize("mode", sorted(REWARD_MODES))
@pytest.mark.parametrize(("deck", "num_rounds"), [("standard", 4), ("german", 4), ("standard", 1), ("german", 7)])
def test_an_illegal_action_is_worse_than_any_legal_play(mode: str, deck: str, num_rounds: int) -> None:
    """An illegal action ends the game with a reward below every return legal play reaches from any point of any
    game, so a learner that ignores the mask never profits from one (a -1 did, under every mode but win)."""
    penalty = illegal_action_reward(mode, get_deck(deck), num_rounds)
    seen = returns_to_go(mode, deck, num_rounds, seed=num_rounds)
    assert len(seen) > 1000 and penalty < min(seen)
    bound = num_rounds * (get_deck(deck).size - get_deck(deck).friday_count + 2 * get_deck(deck).friday_count)
    assert penalty == {"win": -1.0, "points": -bound, "relative": -bound, "rival": -2 * bound}[mode]


@pytest.mark.parametrize("mode", sorted(REWARD_MODES))
def test_every_environment_gives_the_same_illegal_action_reward(mode: str) -> None:
    """PettingZoo's ``env()``, ``Friday13-v0`` and its native vector environment agree, for the chosen deck and
    number of rounds."""
    options: dict[str, Any] = {"deck": "german", "num_rounds": 3, "reward": mode}
    expected = illegal_action_reward(mode, get_deck("german"), 3)
    table = aec_env(num_players=4, **options)
    table.reset(seed=1)
    mover = table.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table.step(int(np.flatnonzero(table.observe(mover)["action_mask"] == 0)[0]))
    assert table.rewards[mover] == expected and table.infos[mover]["illegal_action"] is True
    single = Friday13Env(num_players=4, **options)
    _, info = single.reset(seed=1)
    _, reward, terminated, _, info = single.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert (reward, terminated, info["illegal_action"]) == (expected, True, True)
    assert single.illegal_action_reward == table.unwrapped.illegal_action_reward == expected
    vector = Friday13VectorEnv(num_envs=2, num_players=4, **options)
    _, infos = vector.reset(seed=1)
    _, rewards, terminated_tables, _, infos = vector.step((infos["action_mask"] == 0).argmax(axis=1))
    assert rewards.tolist() == [expected, expected] and terminated_tables.all() and infos["illegal_action"].all()
    assert vector.illegal_action_reward == expected


@pytest.mark.parametrize(
    ("mode", "deck", "num_rounds", "message"),
    [
        ("score", STANDARD_DECK, 4, r"reward mode must be one of \['points', 'relative', 'rival', 'win'\], got 'sc"),
        ("win", STANDARD_DECK, 0, r"num_rounds must be a positive int in 1\.\.\d+, got 0"),
        ("win", STANDARD_DECK, True, r"num_rounds must be a positive int in 1\.\.\d+, got True"),
        ("win", "french", 4, r"unknown deck 'french'; allowed values: \['german', 'standard'\]"),
    ],
)
def test_the_illegal_action_reward_refuses_bad_arguments(mode: str, deck: Any, num_rounds: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        illegal_action_reward(mode, deck, num_rounds)


def test_an_unknown_reward_mode_is_refused_not_played_as_win() -> None:
    with pytest.raises(
        ValueError, match=r"reward mode must be one of \['points', 'relative', 'rival', 'win'\], got 'pointz'"
    ):
        table_rewards([1, 2, 3], [1, 2, 3], True, "pointz")
