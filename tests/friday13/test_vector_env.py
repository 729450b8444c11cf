"""``Friday13VectorEnv``, the native ``gymnasium.make_vec`` of ``Friday13-v0``, and its Stable-Baselines3 adapter.

The reference throughout is the scalar ``Friday13Env`` playing the *same deals*: every deal a
``GameBatch`` makes is recorded (a spy on ``GameBatch._deal``), and ``engine.deal`` is replaced so
that the scalar environment of table ``t`` is dealt exactly table ``t``'s cards. With fixed
heuristic opponents (deterministic, and their scalar and batched versions promise the same moves)
the two environments must then agree on every observation, mask, reward, termination and info.
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.friday13 import agents, engine
from friday13_env.friday13.batched.encoding import encode_states
from friday13_env.friday13.batched.engine import MAX_SEATS
from friday13_env.friday13.batched.vector_env import NO_OPPONENT, Friday13VectorEnv
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import encode_state, observation_layout
from friday13_env.friday13.single_agent import Friday13Env
from tests.friday13.batch_deals import DealLog, FailingOpponent, ScalarDeals, assert_same_arrays, batch_snapshot

ENV_ID = "friday13_env/Friday13-v0"
SCALAR_OPTIONS = ("deck", "num_rounds", "reward", "illegal_action")
"""Options passed on unchanged to the scalar reference environment."""
COMPARED_INFO_KEYS = (
    "round", "round_over", "round_points", "total_points", "winner", "illegal_action", "rank", "num_players",
)  # fmt: skip


def make(num_envs: int = 4, **options: Any) -> Friday13VectorEnv:
    """``gymnasium.make_vec`` of the native vector environment (asserting that it is one)."""
    env = gym.make_vec(ENV_ID, num_envs=num_envs, vectorization_mode="vector_entry_point", **options)
    assert isinstance(env, Friday13VectorEnv)
    return env


def legal_actions(masks: np.ndarray, rng: np.random.Generator, num_actions: int) -> np.ndarray:
    """A uniformly drawn legal action per row (any action for a row without one)."""
    actions = rng.integers(num_actions, size=len(masks))
    for row, mask in enumerate(masks):
        if mask.any():
            actions[row] = rng.choice(np.flatnonzero(mask))
    return actions


def assert_infos_match(
    env: Friday13VectorEnv,
    infos: dict[str, Any],
    table: int,
    expected: dict[str, Any],
    opponents: list[str],
) -> None:
    """The vector env's infos of ``table`` say what the scalar env's ``expected`` info says."""
    keys = {key for key in infos if not key.startswith("_") and key not in ("final_obs", "final_info")}
    assert keys == set(expected)
    assert all(infos[f"_{key}"][table] for key in keys)
    np.testing.assert_array_equal(infos["action_mask"][table], expected["action_mask"])
    for key in COMPARED_INFO_KEYS:
        assert infos[key][table] == expected[key], key
    n, seat = expected["num_players"], expected["seat"]
    assert infos["seat"][table] == seat
    assert infos["final_scores"][table].tolist() == [*expected["final_scores"], *[0] * (MAX_SEATS - n)]
    for other in range(MAX_SEATS):
        index = int(infos["opponents"][table, other])
        if other == seat or other >= n:
            assert index == NO_OPPONENT
        else:
            spec = opponents[(other - seat - 1) % n]  # clockwise from the learner
            assert expected["opponents"][f"player_{other}"] == spec
            assert env.opponent_names[index] == agents.make(spec).name


def replay_against_scalar(
    log: DealLog,
    monkeypatch: pytest.MonkeyPatch,
    *,
    num_envs: int,
    seed: int,
    num_steps: int,
    opponents: list[str],
    autoreset_mode: str = "NextStep",
    illegal_rate: float = 0.0,
    **options: Any,
) -> int:
    """Play the vector env with random learner moves and the scalar env of every table on the same deals, and
    compare everything at every step; returns the number of games that ended."""
    deals = ScalarDeals(log)
    monkeypatch.setattr(engine, "deal", deals)
    env = make(num_envs, opponents=opponents, autoreset_mode=autoreset_mode, **options)
    scalar_options = {key: value for key, value in options.items() if key in SCALAR_OPTIONS}
    num_actions = env.single_action_space.n
    rng = np.random.default_rng(seed)
    observations, infos = env.reset(seed=seed)
    batch = env.batch
    deals.batch = batch
    log.keep_latest(batch)

    def start(table: int, n: int, seat: int) -> tuple[Friday13Env, np.ndarray, dict[str, Any]]:
        assert 0 <= seat < n
        scalar = Friday13Env(num_players=n, opponents=opponents[: n - 1], seat=seat, **scalar_options)
        deals.table = table
        observation, info = scalar.reset(seed=0)
        return scalar, observation, info

    def check(table: int, scalar: Friday13Env, observation: np.ndarray, info: dict[str, Any]) -> None:
        np.testing.assert_array_equal(observations[table], observation)
        assert_infos_match(env, infos, table, info, opponents)
        # Every hand, pile and stack: the opponents played the scalar agents' cards.
        np.testing.assert_array_equal(encode_states(batch, np.array([table]))[0], encode_state(scalar.game))

    scalars: list[Friday13Env] = []
    for table in range(num_envs):
        scalar, observation, info = start(table, int(infos["num_players"][table]), int(infos["seat"][table]))
        check(table, scalar, observation, info)
        scalars.append(scalar)
    assert log.pending(batch) == {}
    restarting = np.zeros(num_envs, dtype=bool)
    games_ended = 0
    for _ in range(num_steps):
        actions = legal_actions(infos["action_mask"], rng, num_actions)
        for table in np.flatnonzero(rng.random(num_envs) < illegal_rate):
            illegal = np.flatnonzero(infos["action_mask"][table] == 0)
            if illegal.size and not restarting[table]:
                actions[table] = rng.choice(illegal)
        observations, rewards, terminated, truncated, infos = env.step(actions)
        assert not truncated.any()
        assert ("final_obs" in infos) == (autoreset_mode == "SameStep" and terminated.any())
        for table in range(num_envs):
            if restarting[table]:  # NextStep: this step started a new game and ignored the action
                scalar, observation, info = start(table, int(infos["num_players"][table]), int(infos["seat"][table]))
                scalars[table] = scalar
                reward, done = 0.0, False
            else:
                deals.table = table
                observation, reward, done, _, info = scalars[table].step(int(actions[table]))
                if options.get("reward", "points") == "points" and not info["illegal_action"]:
                    assert reward == -info["round_points"]  # at most one round ends between two learner moves
            assert rewards[table] == reward
            assert terminated[table] == done
            if done:
                games_ended += 1
            if done and autoreset_mode == "SameStep":
                assert infos["_final_obs"][table] and infos["_final_info"][table]
                np.testing.assert_array_equal(infos["final_obs"][table], observation)
                assert_infos_match(env, infos["final_info"], table, info, opponents)
                scalar, observation, info = start(table, int(infos["num_players"][table]), int(infos["seat"][table]))
                scalars[table] = scalar
            check(table, scalars[table], observation, info)
        assert log.pending(batch) == {}
        np.testing.assert_array_equal(env.action_masks(), infos["action_mask"].astype(bool))
        restarting = terminated.copy() if autoreset_mode == "NextStep" else np.zeros(num_envs, dtype=bool)
    return games_ended


# -- options and spaces -----------------------------------------------------------------------------
OPTION_CASES: list[dict[str, Any]] = [
    {},
    {"num_players": 3},
    {"num_players": [3, 5]},
    {"opponents": ["cautious", "majority", "random"]},
    {"num_players": [3, 4], "opponents": ["majority", "cautious", "random"]},
    {"opponent_pool": ["cautious", "majority"]},
    {"seat": 2},
    {"deck": "german"},
    {"deck": "german", "num_players": [4, 6]},
    {"num_rounds": 2},
    {"reward": "win"},
    {"reward": "relative"},
    {"illegal_action": "raise"},
    {"autoreset_mode": "SameStep"},
    {"autoreset_mode": "Disabled"},
    {"autoreset_mode": AutoresetMode.SAME_STEP},
]


@pytest.mark.parametrize("options", OPTION_CASES, ids=lambda options: ",".join(map(str, options.items())) or "default")
def test_make_vec_builds_the_native_vector_env_with_the_scalar_spaces(options: dict[str, Any]) -> None:
    """Every scalar option is taken; the spaces are the scalar env's, batched; metadata names the autoreset mode."""
    env = make(5, **options)
    assert isinstance(env, VectorEnv)
    scalar = gym.make(ENV_ID, **{key: value for key, value in options.items() if key != "autoreset_mode"})
    num_actions = scalar.action_space.n
    assert env.single_observation_space == scalar.observation_space
    assert env.single_action_space == spaces.Discrete(num_actions)
    assert env.action_space == spaces.MultiDiscrete(np.full(5, num_actions))
    assert env.observation_space.shape == (5, *scalar.observation_space.shape)
    assert env.metadata["autoreset_mode"] == AutoresetMode(options.get("autoreset_mode", "NextStep"))
    observations, infos = env.reset(seed=0)
    assert observations.dtype == np.float32
    assert env.observation_space.contains(observations)
    assert infos["action_mask"].shape == (5, num_actions)
    assert infos["action_mask"].any(axis=1).all()  # every learner is to move after reset


def test_the_german_deck_changes_the_observation_size_and_action_count() -> None:
    """``deck="german"`` gives its own layout's observations and 21 actions instead of 18."""
    standard, german = make(3), make(3, deck="german")
    assert standard.single_observation_space.shape == (observation_layout(get_deck("standard")).size,)
    assert german.single_observation_space.shape == (observation_layout(get_deck("german")).size,)
    assert german.single_observation_space.shape[0] > standard.single_observation_space.shape[0]
    assert (standard.single_action_space.n, german.single_action_space.n) == (18, 21)
    observations, infos = german.reset(seed=0)
    assert observations.shape == (3, german.single_observation_space.shape[0])
    assert infos["action_mask"].shape == (3, 21)


def test_table_sizes_and_seats_are_drawn_per_game_unless_fixed() -> None:
    """``num_players`` lists are drawn from per table, seats are drawn in range, ``seat`` fixes them."""
    env = make(64, num_players=[3, 5])
    _, infos = env.reset(seed=1)
    assert set(infos["num_players"].tolist()) == {3, 5}
    assert (infos["seat"] < infos["num_players"]).all()
    assert len(set(infos["seat"].tolist())) == 5
    np.testing.assert_array_equal(env.seats, infos["seat"])
    fixed = make(64, num_players=[3, 5], seat=2)
    _, infos = fixed.reset(seed=1)
    assert (infos["seat"] == 2).all()


def test_fixed_opponents_sit_clockwise_from_the_learner() -> None:
    """The k-th opponent sits k + 1 seats after the learner; smaller tables seat the first n - 1."""
    opponents = ["majority", "random", "cautious", "random", "majority"]
    env = make(64, num_players=[3, 6], opponents=opponents)
    _, infos = env.reset(seed=2)
    assert env.opponent_names == opponents
    for table in range(64):
        n, seat = int(infos["num_players"][table]), int(infos["seat"][table])
        names = [env.opponent_names[infos["opponents"][table, (seat + 1 + k) % n]] for k in range(n - 1)]
        assert names == opponents[: n - 1]
        assert infos["opponents"][table, seat] == NO_OPPONENT
        assert (infos["opponents"][table, n:] == NO_OPPONENT).all()


def test_an_opponent_pool_fills_every_other_seat_by_drawing() -> None:
    """Each opponent seat draws from the pool, every member of which shows up."""
    env = make(64, num_players=6, opponent_pool=["cautious", "majority", "random"])
    _, infos = env.reset(seed=3)
    assert env.opponent_names == ["cautious", "majority", "random"]
    opponents = infos["opponents"]
    learner = np.arange(MAX_SEATS)[None, :] == infos["seat"][:, None]
    assert (opponents[learner] == NO_OPPONENT).all()
    assert set(opponents[~learner].tolist()) == {0, 1, 2}
    default = make(8)
    default.reset(seed=0)
    assert default.opponent_names == ["random"]  # the scalar env's default pool


# -- faithfulness to the scalar environment ------------------------------------------------------------
FAITHFUL_CASES = [
    # (num_players, deck, opponents, num_rounds, seed)
    (3, "standard", ["cautious", "majority"], 4, 0),
    (4, "german", ["majority", "cautious", "majority"], 4, 1),
    (5, "standard", ["cautious", "cautious", "majority", "majority"], 2, 2),
    (6, "german", ["majority", "cautious", "majority", "cautious", "cautious"], 2, 3),
    ([3, 4, 5, 6], "standard", ["majority", "cautious", "majority", "cautious", "majority"], 1, 4),
    ([3, 6], "german", ["cautious", "majority", "majority", "cautious", "majority"], 1, 5),
]


@pytest.mark.parametrize(("num_players", "deck", "opponents", "num_rounds", "seed"), FAITHFUL_CASES)
def test_every_table_plays_as_the_scalar_env_on_the_same_deals(
    deal_log: DealLog,
    monkeypatch: pytest.MonkeyPatch,
    num_players: int | list[int],
    deck: str,
    opponents: list[str],
    num_rounds: int,
    seed: int,
) -> None:
    """Observations, masks, points rewards, terminations and infos equal the scalar env's, table by table."""
    ended = replay_against_scalar(
        deal_log, monkeypatch, num_envs=8, seed=seed, num_steps=120, opponents=opponents,
        num_players=num_players, deck=deck, num_rounds=num_rounds,
    )  # fmt: skip
    assert ended >= 12


@pytest.mark.parametrize(
    ("reward", "num_players", "deck", "num_rounds", "seed"),
    [
        ("win", [3, 4, 5, 6], "standard", 1, 6),
        ("relative", [3, 5, 6], "german", 1, 7),
        ("rival", [3, 4, 5, 6], "german", 2, 8),
    ],
)
def test_win_relative_and_rival_rewards_are_the_scalar_aec_rewards(
    deal_log: DealLog, monkeypatch: pytest.MonkeyPatch, reward: str, num_players: list[int], deck: str,
    num_rounds: int, seed: int,
) -> None:  # fmt: skip
    """``reward="win"``, ``"relative"`` and ``"rival"`` give what the scalar env (the AEC reward rules) gives on the
    same deals."""
    ended = replay_against_scalar(
        deal_log, monkeypatch, num_envs=8, seed=seed, num_steps=120, reward=reward, num_players=num_players,
        deck=deck, num_rounds=num_rounds, opponents=["majority", "cautious", "cautious", "majority", "majority"],
    )  # fmt: skip
    assert ended >= 40 // num_rounds


@pytest.mark.parametrize(("num_players", "deck", "seed"), [([3, 4, 5, 6], "standard", 8), ([4, 5], "german", 9)])
def test_same_step_autoreset_plays_as_the_scalar_env(
    deal_log: DealLog, monkeypatch: pytest.MonkeyPatch, num_players: list[int], deck: str, seed: int
) -> None:
    """SameStep: the final observation and info of each game are the scalar env's last ones, and the new game's
    first observation its reset's."""
    opponents = ["cautious", "majority", "cautious", "majority", "cautious"][: max(num_players) - 1]
    ended = replay_against_scalar(
        deal_log, monkeypatch, num_envs=8, seed=seed, num_steps=120, autoreset_mode="SameStep",
        num_players=num_players, deck=deck, num_rounds=1, opponents=opponents,
    )  # fmt: skip
    assert ended >= 40


def test_illegal_actions_end_games_as_in_the_scalar_env(deal_log: DealLog, monkeypatch: pytest.MonkeyPatch) -> None:
    """``illegal_action="end"``: an illegal card ends only its table, with the scalar env's reward, observation
    and info."""
    ended = replay_against_scalar(
        deal_log, monkeypatch, num_envs=8, seed=10, num_steps=120, illegal_rate=0.03, num_players=[3, 4, 6],
        num_rounds=2, opponents=["majority", "cautious", "majority", "cautious", "majority"],
    )  # fmt: skip
    assert ended >= 30


def test_policy_opponents_play_as_the_scalar_policy_agent(deal_log: DealLog, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zoo policy opponent (``ensemble-v1``) makes the scalar ``Friday13PolicyAgent``'s moves."""
    ended = replay_against_scalar(
        deal_log, monkeypatch, num_envs=4, seed=11, num_steps=50, num_players=[3, 5], num_rounds=1,
        opponents=["ensemble-v1", "cautious", "ensemble-v1", "majority"],
    )  # fmt: skip
    assert ended >= 8


# -- autoreset -------------------------------------------------------------------------------------
def play_until_a_game_ends(
    env: Friday13VectorEnv, rng: np.random.Generator, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Reset, then play random legal moves until some table's game ends: that step's results."""
    observations, infos = env.reset(seed=seed)
    for _ in range(200):
        actions = legal_actions(infos["action_mask"], rng, env.single_action_space.n)
        observations, rewards, terminated, _, infos = env.step(actions)
        if terminated.any():
            return observations, rewards, terminated, infos
    raise AssertionError("no game ended")


def test_next_step_autoreset_starts_a_new_game_and_ignores_the_action(deal_log: DealLog) -> None:
    """NextStep: a finished table shows its final position; the next step deals a new game there, ignores the
    action (even an illegal one under ``illegal_action="raise"``) and gives reward 0, not terminated."""
    env = make(
        6, num_players=[3, 4], num_rounds=1, opponents=["cautious", "majority", "cautious"], illegal_action="raise"
    )
    rng = np.random.default_rng(0)
    observations, _, terminated, infos = play_until_a_game_ends(env, rng, seed=12)
    batch = env.batch
    done = np.flatnonzero(terminated)
    assert batch.game_over[done].all()
    assert not infos["action_mask"][done].any()
    assert (infos["rank"][done] >= 1).all()
    np.testing.assert_array_equal(infos["final_scores"][done], batch.scores[done])
    hand = observation_layout(batch.deck).slices["hand"]
    assert not observations[done, hand].any()  # every card of the last round is played
    deal_log.queues.clear()
    actions = legal_actions(infos["action_mask"], rng, env.single_action_space.n)
    actions[done] = 0  # no legal action there: it would raise if it were played
    observations, rewards, terminated, _, infos = env.step(actions)
    assert (rewards[done] == 0).all()
    assert not terminated[done].any()
    assert not batch.game_over[done].any()
    assert (infos["round"][done] == 0).all() and (infos["total_points"][done] == 0).all()
    assert infos["action_mask"][done].any(axis=1).all()
    for table in done.tolist():
        deal = deal_log.pop(batch, table)
        assert deal.round == 0 and not deal_log.pending(batch).get(table)  # one new deal, made in this step
        np.testing.assert_array_equal(observations[table, hand], deal.hands[infos["seat"][table]])  # no card played yet
    assert "final_obs" not in infos


def test_same_step_autoreset_returns_the_new_game_and_the_final_one_in_infos(deal_log: DealLog) -> None:
    """SameStep: the step that ends a game returns the new game's first observation, and the final observation and
    info under ``final_obs`` / ``final_info`` (flagged by ``_final_obs`` / ``_final_info``); other tables get None."""
    env = make(
        6, num_players=[3, 4], num_rounds=1, opponents=["cautious", "majority", "cautious"], autoreset_mode="SameStep"
    )
    rng = np.random.default_rng(1)
    env.reset(seed=13)
    for _ in range(200):
        deal_log.queues.clear()
        actions = legal_actions(env.action_masks(), rng, env.single_action_space.n)
        observations, _, terminated, _, infos = env.step(actions)
        if terminated.any():
            break
        assert "final_obs" not in infos and "final_info" not in infos
    done = np.flatnonzero(terminated)
    assert done.size
    layout = observation_layout(env.batch.deck)
    np.testing.assert_array_equal(infos["_final_obs"], terminated)
    np.testing.assert_array_equal(infos["_final_info"], terminated)
    assert all(infos["final_obs"][table] is None for table in np.flatnonzero(~terminated))
    final = infos["final_info"]
    for table in done.tolist():
        last = layout.views(infos["final_obs"][table])
        assert not last["hand"].any()
        assert last["round"].tolist() == [0, 1]  # the last (only) round
        assert not final["action_mask"][table].any() and final["rank"][table] >= 1
        n = final["num_players"][table]
        assert final["total_points"][table] == last["scores"][0]  # seat 0 of the observation is the learner
        assert final["final_scores"][table].sum() == last["scores"][:n].sum()
        deal = deal_log.pop(env.batch, table)
        assert deal.round == 0 and not deal_log.pending(env.batch).get(table)
        new = layout.views(observations[table])
        np.testing.assert_array_equal(new["hand"], deal.hands[infos["seat"][table]])
        assert not new["scores"].any()
        assert infos["action_mask"][table].any() and infos["rank"][table] == 0
        assert not env.batch.game_over[table]


def test_disabled_autoreset_waits_for_a_masked_reset() -> None:
    """Disabled: stepping while a game is over raises and changes nothing; ``reset(options={"reset_mask": m})``
    restarts the masked tables only, the others keep their game, observation and infos."""
    env = make(
        6, num_players=4, num_rounds=1, opponents=["cautious", "majority", "cautious"], autoreset_mode="Disabled"
    )
    rng = np.random.default_rng(2)
    observations, _, terminated, infos = play_until_a_game_ends(env, rng, seed=14)
    assert not terminated.all()
    before = batch_snapshot(env)
    actions = legal_actions(infos["action_mask"], rng, env.single_action_space.n)
    with pytest.raises(RuntimeError, match=re.escape("reset(options={'reset_mask': mask})")):
        env.step(actions)
    assert_same_arrays(before, batch_snapshot(env))
    restarted, infos_after = env.reset(options={"reset_mask": terminated})
    kept = ~terminated
    np.testing.assert_array_equal(restarted[kept], observations[kept])
    for key in ("action_mask", "round", "total_points", "seat", "num_players", "opponents", "final_scores", "rank"):
        np.testing.assert_array_equal(infos_after[key][kept], infos[key][kept], err_msg=key)
    assert_same_arrays(before, batch_snapshot(env), rows=kept)
    assert not env.batch.game_over.any()
    assert (infos_after["total_points"][terminated] == 0).all()
    assert infos_after["action_mask"].any(axis=1).all()
    env.step(legal_actions(infos_after["action_mask"], rng, env.single_action_space.n))  # every table plays again


def test_reset_mask_is_checked() -> None:
    """A reset mask must be a boolean (N,) array, and the first reset must start every table."""
    env = make(4, autoreset_mode="Disabled")
    with pytest.raises(RuntimeError, match="first reset"):
        env.reset(options={"reset_mask": np.ones(4, dtype=bool)})
    env.reset(seed=0)
    for mask in (np.ones(3, dtype=bool), np.ones(4, dtype=np.int64), [[True] * 4]):
        with pytest.raises(ValueError, match=r"reset_mask must be a boolean array of shape \(4,\)"):
            env.reset(options={"reset_mask": mask})


@pytest.mark.parametrize(
    "how", ["same-step game end", "same-step illegal end", "reset after a round end", "reset_mask"]
)
def test_a_restarted_table_carries_nothing_over_from_its_last_game(how: str) -> None:
    """A freshly started game reports no round end, no round points and no illegal action (as the scalar reset)."""
    mode = {"same-step game end": "SameStep", "same-step illegal end": "SameStep", "reset_mask": "Disabled"}
    env = make(
        2, num_players=3, num_rounds=1, opponents=["cautious", "cautious"], autoreset_mode=mode.get(how, "NextStep")
    )
    _, infos = env.reset(seed=0)
    if how == "same-step illegal end":
        actions = np.array([np.flatnonzero(infos["action_mask"][0] == 0)[0], infos["action_mask"][1].argmax()])
        _, _, terminated, _, infos = env.step(actions)
        assert terminated[0] and infos["final_info"]["illegal_action"][0]
    else:
        while not (infos["round_over"].any() or "final_info" in infos):  # SameStep: the new game's infos come back
            _, _, _, _, infos = env.step(infos["action_mask"].argmax(axis=1))
        if how == "reset after a round end":
            _, infos = env.reset()
        elif how == "reset_mask":
            _, infos = env.reset(options={"reset_mask": np.ones(2, dtype=bool)})
        else:
            assert infos["_final_info"].all() and infos["final_info"]["round_over"].all()
    assert (infos["round"] == 0).all() and (infos["total_points"] == 0).all()
    assert not infos["round_over"].any()
    assert not infos["round_points"].any()
    assert not infos["illegal_action"].any()


@pytest.mark.parametrize("autoreset_mode", ["NextStep", "Disabled"])
def test_a_masked_reset_shows_no_moves_at_finished_tables_it_does_not_restart(autoreset_mode: str) -> None:
    """A table whose game ended on an illegal action, left out of a masked reset, still offers no action (as the
    step that ended it said), in the reset's infos and in ``action_masks()``; its infos are kept."""
    env = make(3, num_players=4, opponents=["cautious", "majority", "cautious"], autoreset_mode=autoreset_mode)
    _, infos = env.reset(seed=32)
    actions = infos["action_mask"].argmax(axis=1)
    actions[1] = np.flatnonzero(infos["action_mask"][1] == 0)[0]
    _, _, terminated, _, infos = env.step(actions)
    assert terminated.tolist() == [False, True, False] and not infos["action_mask"][1].any()
    _, after = env.reset(options={"reset_mask": np.array([True, False, False])})
    assert not after["action_mask"][1].any() and not env.action_masks()[1].any()
    for key in ("illegal_action", "total_points", "seat", "round"):
        assert after[key][1] == infos[key][1], key


def test_a_seeded_reset_with_a_mask_is_refused_and_changes_nothing() -> None:
    """A seed re-deals every table, so ``reset(seed=s, options={"reset_mask": m})`` is a ``ValueError`` and the
    tables play on unchanged."""
    env = make(4, num_players=4, opponents=["cautious", "majority", "cautious"], autoreset_mode="Disabled")
    env.reset(seed=0)
    before = batch_snapshot(env)
    mask = np.array([True, False, False, False])
    with pytest.raises(ValueError, match="a seed or a reset_mask, not both"):
        env.reset(seed=1, options={"reset_mask": mask})
    assert_same_arrays(before, batch_snapshot(env), rows=np.ones(4, dtype=bool))


# -- illegal actions ---------------------------------------------------------------------------------
def test_an_illegal_action_ends_only_its_table() -> None:
    """``illegal_action="end"``: the points mode's penalty (-232), terminated and ``illegal_action`` at that table,
    nothing played there; every other table's step is exactly what it would have been."""
    options: dict[str, Any] = {"num_players": 4, "opponents": ["cautious", "majority", "cautious"]}
    env, twin = make(4, **options), make(4, **options)
    observations, infos = env.reset(seed=15)
    twin.reset(seed=15)
    before = batch_snapshot(env)
    legal = infos["action_mask"].argmax(axis=1)
    actions = legal.copy()
    actions[1] = np.flatnonzero(infos["action_mask"][1] == 0)[0]
    after, rewards, terminated, _, infos_after = env.step(actions)
    expected, twin_rewards, twin_terminated, _, twin_infos = twin.step(legal)
    assert (rewards[1], terminated[1], infos_after["illegal_action"][1]) == (-232.0, True, True)
    np.testing.assert_array_equal(after[1], observations[1])
    assert not infos_after["action_mask"][1].any()
    assert_same_arrays(before, batch_snapshot(env), rows=1)
    others = [0, 2, 3]
    np.testing.assert_array_equal(after[others], expected[others])
    np.testing.assert_array_equal(rewards[others], twin_rewards[others])
    np.testing.assert_array_equal(terminated[others], twin_terminated[others])
    for key, value in twin_infos.items():
        np.testing.assert_array_equal(infos_after[key][others], value[others], err_msg=key)


def test_illegal_action_raise_names_the_legal_actions_and_changes_nothing() -> None:
    """``illegal_action="raise"``: a ValueError naming the table and its legal actions, nothing played anywhere,
    and the env then plays on exactly as one that never saw the illegal action."""
    options: dict[str, Any] = {
        "num_players": [3, 5],
        "opponent_pool": ["random", "cautious"],
        "illegal_action": "raise",
    }
    env, twin = make(5, **options), make(5, **options)
    rng = np.random.default_rng(3)
    _, infos = env.reset(seed=16)
    twin.reset(seed=16)
    for step in range(40):
        actions = legal_actions(infos["action_mask"], rng, env.single_action_space.n)
        if step % 10 == 5:
            before = batch_snapshot(env)
            bad = actions.copy()
            bad[2] = np.flatnonzero(infos["action_mask"][2] == 0)[0]
            legal = np.flatnonzero(infos["action_mask"][2]).tolist()
            with pytest.raises(ValueError, match=rf"at table 2; legal actions: {re.escape(str(legal))}"):
                env.step(bad)
            assert_same_arrays(before, batch_snapshot(env))
        results = env.step(actions)
        expected = twin.step(actions)
        for got, want in zip(results[:4], expected[:4], strict=True):
            np.testing.assert_array_equal(got, want)
        infos = results[4]
        for key, value in expected[4].items():
            np.testing.assert_array_equal(infos[key], value, err_msg=key)


# -- an exception part-way through a step -----------------------------------------------------------
LOCKED = r"an earlier {}\(\) raised RuntimeError: opponent crashed on call {}; .*call reset\(\)"


def test_after_an_opponent_raises_step_refuses_until_a_full_reset() -> None:
    """An opponent raising part-way through ``step`` (learners' cards already played) leaves the env refusing
    ``step``, ``action_masks`` and a masked reset, naming the failure, until a full ``reset()``; the engine stays
    readable, and a reset starts every table afresh."""
    failing = FailingOpponent(fail_at={5})
    env = make(8, num_players=4, seat=0, opponents=[failing, "cautious", "majority"])
    _, infos = env.reset(seed=24)
    with pytest.raises(RuntimeError, match="opponent crashed on call 5"):
        for _ in range(10):
            _, _, _, _, infos = env.step(infos["action_mask"].argmax(axis=1))
    assert failing.calls == 5
    actions = infos["action_mask"].argmax(axis=1)
    before = batch_snapshot(env)
    locked = LOCKED.format("step", 5)
    with pytest.raises(RuntimeError, match=locked):
        env.step(actions)
    with pytest.raises(RuntimeError, match=locked):
        env.action_masks()
    with pytest.raises(RuntimeError, match=locked + re.escape(" without a reset_mask")):
        env.reset(options={"reset_mask": np.ones(8, dtype=bool)})
    assert_same_arrays(before, batch_snapshot(env))
    assert env.seats.tolist() == [0] * 8
    _, infos = env.reset()
    assert (infos["total_points"] == 0).all() and (infos["round"] == 0).all() and infos["action_mask"].any(axis=1).all()
    np.testing.assert_array_equal(env.action_masks(), infos["action_mask"].astype(bool))
    env.step(infos["action_mask"].argmax(axis=1))


def test_after_an_opponent_raises_during_reset_step_refuses() -> None:
    """An opponent raising while ``reset`` plays up to the learners' first move locks the env the same way."""
    env = make(4, num_players=4, seat=3, opponents=[FailingOpponent(fail_at={1}), "cautious", "majority"])
    with pytest.raises(RuntimeError, match="opponent crashed on call 1"):
        env.reset(seed=25)
    with pytest.raises(RuntimeError, match=LOCKED.format("reset", 1)):
        env.step(np.zeros(4, dtype=np.int64))
    _, infos = env.reset(seed=25)  # the opponent fails on its first call only
    env.step(infos["action_mask"].argmax(axis=1))


def test_a_refused_step_leaves_the_env_usable() -> None:
    """Errors raised before anything is played (bad actions, an illegal one under ``illegal_action="raise"``) do not
    lock the env: the next good step plays as in a twin that never saw them."""
    options: dict[str, Any] = {"num_players": 4, "opponents": ["cautious", "majority", "cautious"]}
    env, twin = make(3, illegal_action="raise", **options), make(3, illegal_action="raise", **options)
    _, infos = env.reset(seed=26)
    twin.reset(seed=26)
    legal = infos["action_mask"].argmax(axis=1)
    illegal = legal.copy()
    illegal[1] = np.flatnonzero(infos["action_mask"][1] == 0)[0]
    for bad in (illegal, legal + 0.99, legal[:2], np.full(3, -1)):
        with pytest.raises(ValueError):
            env.step(bad)
    for got, want in zip(env.step(legal)[:4], twin.step(legal)[:4], strict=True):
        np.testing.assert_array_equal(got, want)


def test_messages_count_one_table_in_the_singular() -> None:
    """One table is "1 table", one action "1 integer" (not "1 tables' games are", "1 integers")."""
    env = make(1, num_players=3, num_rounds=1, opponents=["cautious", "cautious"], autoreset_mode="Disabled")
    play_until_a_game_ends(env, np.random.default_rng(7), seed=27)
    with pytest.raises(RuntimeError, match=r"the game is over at 1 table: ") as refused:
        env.step(np.zeros(1, dtype=np.int64))
    assert "1 tables" not in str(refused.value)
    with pytest.raises(ValueError, match=r"actions must be 1 integer \(one per table\)"):
        env.step(np.zeros(2, dtype=np.int64))
    two = make(2, num_players=3, num_rounds=1, seat=0, opponents=["cautious", "cautious"], autoreset_mode="Disabled")
    _, infos = two.reset(seed=28)
    while True:
        _, _, terminated, _, infos = two.step(infos["action_mask"].argmax(axis=1))
        if terminated.all():
            break
    with pytest.raises(RuntimeError, match=r"the games are over at 2 tables: "):
        two.step(np.zeros(2, dtype=np.int64))


# -- determinism and self-play pools -----------------------------------------------------------------
def rollout(env: Friday13VectorEnv, seed: int, steps: int) -> list[np.ndarray]:
    """Everything the env returns over ``steps`` random legal moves (the moves drawn from a fixed Generator)."""
    rng = np.random.default_rng(0)
    observations, infos = env.reset(seed=seed)
    seen = [observations, *infos.values()]
    for _ in range(steps):
        results = env.step(legal_actions(infos["action_mask"], rng, env.single_action_space.n))
        infos = results[4]
        seen += [*results[:4], *infos.values()]
    return seen


def test_the_same_seed_gives_the_same_games() -> None:
    """Two envs (or one env reset again) with the same seed return identical observations, rewards and infos,
    random opponents, drawn sizes and seats included; another seed gives other games."""
    options: dict[str, Any] = {"num_players": [3, 4, 5, 6], "opponent_pool": ["random", "cautious", "majority"]}
    env = make(8, **options)
    first = rollout(env, seed=17, steps=100)
    for second in (rollout(make(8, **options), seed=17, steps=100), rollout(env, seed=17, steps=100)):
        assert len(second) == len(first)
        for a, b in zip(first, second, strict=True):
            np.testing.assert_array_equal(a, b)
    other = rollout(env, seed=18, steps=100)
    assert not np.array_equal(first[0], other[0])


def opponent_labels(env: Friday13VectorEnv, infos: dict[str, Any], table: int) -> list[str | None]:
    return [None if index == NO_OPPONENT else env.opponent_names[index] for index in infos["opponents"][table]]


def test_set_opponent_pool_seats_snapshots_in_new_games_only() -> None:
    """``set_opponent_pool([MLPPolicy, heuristic, zoo agent])``: games under way keep their opponents, every game
    started afterwards draws from the new pool only, and ``infos["opponents"]`` indexes ``opponent_names``."""
    snapshot = agents.make("ensemble-v1").policy
    env = make(8, num_players=[4, 6], num_rounds=1, opponent_pool=["cautious", "random"])
    rng = np.random.default_rng(4)
    _, infos = env.reset(seed=19)
    for _ in range(3):
        _, _, _, _, infos = env.step(legal_actions(infos["action_mask"], rng, env.single_action_space.n))
    old = [opponent_labels(env, infos, table) for table in range(8)]
    env.set_opponent_pool([snapshot, "majority", agents.make("ensemble-v1")])
    assert env.opponent_names == ["cautious", "random", "policy", "majority", "ensemble-v1"]
    restarted = np.zeros(8, dtype=bool)
    terminated = np.zeros(8, dtype=bool)
    drawn: set[str | None] = set()
    for _ in range(200):
        _, _, now_terminated, _, infos = env.step(legal_actions(infos["action_mask"], rng, env.single_action_space.n))
        restarted |= terminated  # NextStep: those tables started a game in this step
        terminated = now_terminated
        for table in range(8):
            labels = opponent_labels(env, infos, table)
            if restarted[table]:
                drawn.update(labels)
            else:
                assert labels == old[table]
        if restarted.all():
            break
    assert restarted.all()
    assert drawn == {None, "policy", "majority", "ensemble-v1"}
    # No game uses the first pool any more: its agents are dropped, and the games under way keep theirs.
    current = [opponent_labels(env, infos, table) for table in range(8)]
    env.set_opponent_pool(["random"])
    assert set(env.opponent_names[:-1]) <= {"policy", "majority", "ensemble-v1"}
    assert env.opponent_names[-1] == "random"
    _, _, _, _, infos = env.step(legal_actions(infos["action_mask"], rng, env.single_action_space.n))
    for table in np.flatnonzero(~terminated):
        assert opponent_labels(env, infos, table) == current[table]


def test_set_opponent_pool_refuses_bad_specs_and_keeps_the_old_pool() -> None:
    """A bad spec anywhere in a new pool (unknown, ``search``, a policy of the other deck, empty) is a ValueError
    that names the problem, and the current pool stays."""
    env = make(4, deck="german", opponent_pool=["cautious", "majority"])
    env.reset(seed=0)
    for specs, message in [
        (["majority", "nobody"], "unknown Friday the 13th agent 'nobody'"),
        (["majority", "search"], "has no batched version; batched agents: ['cautious', 'majority', 'random']"),
        (["ensemble-v1"], "trained for the 'standard' deck, but this table plays the 'german' deck"),
        ([], "opponent_pool must be a non-empty list"),
        ("cautious", "opponent_pool must be a non-empty list"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            env.set_opponent_pool(specs)  # type: ignore[arg-type]
        assert env.opponent_names == ["cautious", "majority"]


# -- bad input ---------------------------------------------------------------------------------------
BAD_OPTIONS: list[Any] = [
    ({"num_envs": 0}, r"in 1\.\.1048576, got 0"),
    ({"num_envs": -2}, r"in 1\.\.1048576, got -2"),
    ({"num_envs": 2.0}, r"in 1\.\.1048576, got 2\.0"),
    ({"num_players": 7}, r"num_players must be one of \[3, 4, 5, 6\]"),
    ({"num_players": []}, r"num_players must be one of \[3, 4, 5, 6\]"),
    ({"num_players": "4"}, r"num_players must be one of \[3, 4, 5, 6\]"),
    ({"deck": "french"}, r"unknown deck 'french'; allowed values: \['german', 'standard'\]"),
    ({"reward": "score"}, r"unknown reward mode 'score'; allowed values: \['points', 'relative', 'rival', 'win'\]"),
    ({"illegal_action": "skip"}, r"unknown illegal_action 'skip'; allowed values: \['end', 'raise'\]"),
    ({"autoreset_mode": "Always"}, r"allowed values: \['Disabled', 'NextStep', 'SameStep'\]"),
    ({"num_rounds": 0}, r"num_rounds must be a positive int"),
    ({"num_rounds": "2"}, r"num_rounds must be a positive int"),
    ({"deck": ["standard"]}, r"unknown deck \['standard'\]; allowed values"),
    ({"autoreset_mode": ["SameStep"]}, r"allowed values: \['Disabled', 'NextStep', 'SameStep'\]"),
    ({"render_mode": "human"}, r"render_mode must be None"),
    ({"seat": 4}, r"seat must be None \(drawn per episode\) or an int in 0\.\.3, got 4"),
    ({"seat": -1}, r"seat must be None \(drawn per episode\) or an int in 0\.\.3, got -1"),
    ({"seat": True}, r"an int in 0\.\.3, got True"),
    ({"num_players": [3, 6], "seat": 3}, r"an int in 0\.\.2, got 3"),
    ({"opponents": ["cautious", "majority"]}, r"one opponent per other seat: 3 for 4 players"),
    ({"num_players": [3, 5], "opponents": ["cautious"] * 2}, r"one opponent per other seat: 4 for 5 players"),
    ({"opponents": "cautious"}, r"one opponent per other seat"),
    pytest.param({"opponents": iter(["cautious"] * 3)}, r"opponents must", id="opponents-iterator"),
    ({"opponents": ["cautious"] * 3, "opponent_pool": ["cautious"]}, r"give either opponents .* or opponent_pool"),
]


@pytest.mark.parametrize(("options", "message"), BAD_OPTIONS, ids=lambda value: str(value)[:40])
def test_bad_options_are_refused_before_any_work(
    monkeypatch: pytest.MonkeyPatch, options: dict[str, Any], message: str
) -> None:
    """A bad option value is a ValueError naming the allowed values, raised before any opponent is built."""
    built: list[Any] = []
    monkeypatch.setattr("friday13_env.friday13.batched.vector_env.make_batched", lambda *args: built.append(args))
    options = {"num_envs": 3, **options}
    with pytest.raises(ValueError, match=message):
        gym.make_vec(ENV_ID, vectorization_mode="vector_entry_point", **options)
    assert built == []


@pytest.mark.parametrize(
    ("opponents", "message"),
    [
        (["cautious", "search", "majority"], "agent 'search' has no batched version"),
        (["cautious", "majority", "search:budget=10"], "agent 'search' has no batched version"),
        (["cautious", "majority", "endgame"], "agent 'endgame' has no batched version"),
        (["cautious", "majority", "nobody"], "unknown Friday the 13th agent 'nobody'"),
        (["cautious", "majority", "majority:open_min=0"], "open_min must be an int >= 1"),
        (["cautious", "majority", 3], "int 3 has no batched form"),
    ],
)
def test_opponents_without_a_batched_version_are_refused(opponents: list[Any], message: str) -> None:
    """Search agents (no batched version), unknown names and bad agent options are ValueErrors naming what is
    allowed."""
    for option in ("opponents", "opponent_pool"):
        with pytest.raises(ValueError, match=re.escape(message)):
            make(2, **{option: opponents})


BAD_ACTIONS = {
    "too many": lambda n, a: np.zeros(n + 1, dtype=np.int64),
    "column": lambda n, a: np.zeros((n, 1), dtype=np.int64),
    "scalar": lambda n, a: np.int64(0),
    "floats": lambda n, a: np.zeros(n),
    "bools": lambda n, a: np.zeros(n, dtype=bool),
    "strings": lambda n, a: ["0"] * n,
    "negative": lambda n, a: np.full(n, -1),
    "too large": lambda n, a: np.full(n, a),
}


@pytest.mark.parametrize("name", sorted(BAD_ACTIONS))
def test_bad_actions_are_refused_and_change_nothing(name: str) -> None:
    """Actions of the wrong shape, dtype or range are a ValueError naming the action range; nothing is played."""
    env = make(4, illegal_action="raise")
    _, infos = env.reset(seed=20)
    before = batch_snapshot(env)
    num_actions = env.single_action_space.n
    with pytest.raises(ValueError, match=rf"actions must be .*in 0\.\.{num_actions - 1}"):
        env.step(BAD_ACTIONS[name](4, num_actions))
    assert_same_arrays(before, batch_snapshot(env))
    np.testing.assert_array_equal(env.action_masks(), infos["action_mask"].astype(bool))
    env.step(infos["action_mask"].argmax(axis=1).tolist())  # a list of Python ints is fine


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seed": [0, 1]}, "seed must be None or a non-negative int"),
        ({"seed": -1}, "seed must be None or a non-negative int"),
        ({"seed": 1.5}, "seed must be None or a non-negative int"),
        ({"seed": True}, "seed must be None or a non-negative int"),
        ({"options": {"seed": 1}}, "reset() takes only the option 'reset_mask', got ['seed']"),
        ({"options": {"reset_mask": np.ones(3, dtype=bool), "num_players": 3}}, "got ['num_players']"),
    ],
)
def test_bad_reset_arguments_are_refused_and_change_nothing(kwargs: dict[str, Any], message: str) -> None:
    """A seed that is not one non-negative int, or an unknown reset option, is a ValueError; the games go on."""
    env = make(3)
    observations, _ = env.reset(seed=21)
    before = batch_snapshot(env)
    with pytest.raises(ValueError, match=re.escape(message)):
        env.reset(**kwargs)
    assert_same_arrays(before, batch_snapshot(env))
    np.testing.assert_array_equal(env.reset(seed=21)[0], observations)


def test_the_env_must_be_reset_first() -> None:
    """step, action_masks, batch and seats before the first reset are RuntimeErrors saying so."""
    env = make(2)
    for use in (lambda: env.step(np.zeros(2, dtype=np.int64)), env.action_masks, lambda: env.batch, lambda: env.seats):
        with pytest.raises(RuntimeError, match=re.escape("must be reset() before it is used")):
            use()


# -- Stable-Baselines3 ------------------------------------------------------------------------------
SB3_OPTIONS: dict[str, Any] = {
    "num_players": [3, 4, 5],
    "num_rounds": 1,
    "opponent_pool": ["cautious", "majority", "random"],
    "autoreset_mode": "SameStep",
}


def test_to_sb3_is_an_sb3_vecenv_over_the_same_games() -> None:
    """``to_sb3(env)`` is a VecEnv whose reset/step give the vector env's observations, float32 rewards, dones,
    per-table info dicts (``terminal_observation`` = ``final_obs`` where done) and masks; seeds pass through."""
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import VecEnv
    from stable_baselines3.common.vec_env.util import obs_space_info

    from friday13_env.friday13.batched.sb3 import to_sb3

    env, twin = make(6, **SB3_OPTIONS), make(6, **SB3_OPTIONS)
    venv = to_sb3(env)
    assert isinstance(venv, VecEnv) and venv.num_envs == 6
    assert venv.observation_space == env.single_observation_space
    assert venv.action_space == env.single_action_space
    assert obs_space_info(venv.observation_space) == (
        [None],
        {None: env.single_observation_space.shape},
        {None: np.float32},
    )
    assert is_masking_supported(venv)
    venv.seed(22)
    observations = venv.reset()
    expected, infos = twin.reset(seed=22)
    np.testing.assert_array_equal(observations, expected)
    assert venv.reset_infos[4]["seat"] == infos["seat"][4] and "action_mask" in venv.reset_infos[4]
    rng = np.random.default_rng(5)
    dones_seen = 0
    for _ in range(40):
        masks = get_action_masks(venv)
        assert masks.shape == (6, env.single_action_space.n) and masks.dtype == bool
        np.testing.assert_array_equal(masks, env.action_masks())
        np.testing.assert_array_equal(masks, infos["action_mask"].astype(bool))
        actions = legal_actions(masks, rng, env.single_action_space.n)
        observations, rewards, dones, listed = venv.step(actions)
        expected, twin_rewards, terminated, truncated, infos = twin.step(actions)
        np.testing.assert_array_equal(observations, expected)
        assert rewards.dtype == np.float32
        np.testing.assert_array_equal(rewards, twin_rewards.astype(np.float32))
        np.testing.assert_array_equal(dones, terminated | truncated)
        assert isinstance(listed, list) and len(listed) == 6
        for table, info in enumerate(listed):
            assert not any(key.startswith("_") for key in info)
            if dones[table]:  # SB3's convention: the finished game's info; the new game's in reset_infos
                final = infos["final_info"]
                for key in ("total_points", "winner", "rank", "illegal_action", "seat", "final_scores"):
                    np.testing.assert_array_equal(info[key], final[key][table])
                assert venv.reset_infos[table]["total_points"] == infos["total_points"][table] == 0
                assert venv.reset_infos[table]["seat"] == infos["seat"][table]
                np.testing.assert_array_equal(info["terminal_observation"], infos["final_obs"][table])
                assert info["TimeLimit.truncated"] is False
                dones_seen += 1
            else:
                assert info["total_points"] == infos["total_points"][table] and info["seat"] == infos["seat"][table]
                assert "terminal_observation" not in info and "final_scores" not in info
    assert dones_seen >= 5
    np.testing.assert_array_equal(np.stack(venv.env_method("action_masks", indices=[1, 3])), env.action_masks()[[1, 3]])
    assert venv.get_attr("num_envs") == [6] * 6 and venv.get_attr("reward_mode", indices=2) == ["points"]
    assert venv.env_is_wrapped(gym.Wrapper) == [False] * 6
    with pytest.raises(AttributeError, match="share their attributes"):
        venv.set_attr("reward_mode", "win")


def test_sb3_vec_monitor_counts_the_games() -> None:
    """SB3's ``VecMonitor`` over the adapter reports each finished game's return (the sum of its rewards)."""
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from stable_baselines3.common.vec_env import VecMonitor

    from friday13_env.friday13.batched.sb3 import to_sb3

    venv = VecMonitor(to_sb3(make(4, **SB3_OPTIONS)))
    venv.seed(23)
    venv.reset()
    returns = np.zeros(4)
    lengths = np.zeros(4, dtype=np.int64)
    rng = np.random.default_rng(6)
    episodes = 0
    for _ in range(80):
        masks = np.stack(venv.env_method("action_masks"))
        _, rewards, dones, infos = venv.step(legal_actions(masks, rng, venv.action_space.n))
        returns += rewards
        lengths += 1
        for table in np.flatnonzero(dones):
            assert infos[table]["episode"]["r"] == pytest.approx(returns[table])
            assert infos[table]["episode"]["l"] == lengths[table]
            returns[table], lengths[table] = 0.0, 0
            episodes += 1
    assert episodes >= 4


def test_maskable_ppo_learns_on_the_adapter() -> None:
    """``MaskablePPO("MlpPolicy", to_sb3(env))`` trains for a few thousand steps and then plays legal moves."""
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from friday13_env.friday13.batched.sb3 import to_sb3

    venv = to_sb3(make(16, **SB3_OPTIONS))
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=512, n_epochs=1, seed=0)
    model.learn(2048)
    assert model.num_timesteps >= 2048
    assert model.ep_info_buffer and all(set(info) == {"r", "l", "t"} for info in model.ep_info_buffer)
    observations = venv.reset()
    for _ in range(20):
        masks = get_action_masks(venv)
        actions, _ = model.predict(observations, action_masks=masks, deterministic=True)
        assert masks[np.arange(16), actions].all()
        observations, _, _, _ = venv.step(actions)


ADAPTER_BAD_ACTIONS = {
    **BAD_ACTIONS,
    "legal + 0.99": lambda n, a: np.zeros(n) + 0.99,
    "nan": lambda n, a: np.full(n, np.nan),
    "list of floats": lambda n, a: [0.5] * n,
}


@pytest.mark.parametrize("name", sorted(ADAPTER_BAD_ACTIONS))
def test_the_adapter_refuses_bad_actions_as_the_vector_env_does(name: str) -> None:
    """``step_async`` refuses what ``Friday13VectorEnv.step`` refuses, with the same ValueError, before anything is
    played (no float is truncated into a card, no NaN cast); the next good step plays on."""
    pytest.importorskip("stable_baselines3", reason="the train extra is not installed")
    from friday13_env.friday13.batched.sb3 import to_sb3

    env, native = make(4, **SB3_OPTIONS), make(4, **SB3_OPTIONS)
    venv = to_sb3(env)
    venv.seed(29)
    venv.reset()
    native.reset(seed=29)
    bad = ADAPTER_BAD_ACTIONS[name](4, env.single_action_space.n)
    with pytest.raises(ValueError) as refused:
        native.step(bad)
    before = batch_snapshot(env)
    with pytest.raises(ValueError) as adapted:
        venv.step_async(bad)
    assert str(adapted.value) == str(refused.value)
    assert_same_arrays(before, batch_snapshot(env))
    venv.step(env.action_masks().argmax(axis=1))


def test_the_adapter_records_episode_statistics_as_vec_monitor_does() -> None:
    """Without ``VecMonitor`` the adapter reports each finished game as SB3 expects (``info["episode"]`` with the
    return ``r``, length ``l`` and time ``t``), with exactly VecMonitor's ``r`` and ``l``; wrapped in VecMonitor,
    the games are counted once, with the same figures."""
    pytest.importorskip("stable_baselines3", reason="the train extra is not installed")
    from stable_baselines3.common.vec_env import VecMonitor

    from friday13_env.friday13.batched.sb3 import to_sb3

    options = {**SB3_OPTIONS, "reward": "relative"}  # fractional rewards: the float32 sums must agree too
    bare, monitored = to_sb3(make(4, **options)), VecMonitor(to_sb3(make(4, **options)))
    for venv in (bare, monitored):
        venv.seed(30)
        venv.reset()
    rng = np.random.default_rng(8)
    returns = np.zeros(4, dtype=np.float32)
    lengths = np.zeros(4, dtype=np.int64)
    episodes = 0
    for _ in range(80):
        actions = legal_actions(np.stack(bare.env_method("action_masks")), rng, bare.action_space.n)
        _, rewards, dones, infos = bare.step(actions)
        _, _, monitored_dones, monitored_infos = monitored.step(actions)
        np.testing.assert_array_equal(dones, monitored_dones)
        returns += rewards
        lengths += 1
        for table, (info, monitored_info) in enumerate(zip(infos, monitored_infos, strict=True)):
            if not dones[table]:
                assert "episode" not in info and "episode" not in monitored_info
                continue
            episode, monitored_episode = info["episode"], monitored_info["episode"]
            assert set(episode) == {"r", "l", "t"} and episode["t"] >= 0.0
            assert (episode["r"], episode["l"]) == (returns[table], lengths[table])
            assert (monitored_episode["r"], monitored_episode["l"]) == (episode["r"], episode["l"])
            returns[table], lengths[table] = 0.0, 0
            episodes += 1
    assert episodes >= 4
    assert monitored.episode_count == episodes


def test_after_an_opponent_raises_the_adapter_refuses_until_reset() -> None:
    """An opponent raising inside ``step_wait`` leaves the adapter refusing ``step`` and the masks until
    ``reset()``, which also restarts the episode statistics."""
    pytest.importorskip("stable_baselines3", reason="the train extra is not installed")
    from friday13_env.friday13.batched.sb3 import to_sb3

    options = {**SB3_OPTIONS, "num_players": 4, "opponent_pool": None}
    env = make(4, **options, seat=0, opponents=[FailingOpponent(fail_at={3}), "cautious", "majority"])
    venv = to_sb3(env)
    venv.seed(31)
    venv.reset()
    with pytest.raises(RuntimeError, match="opponent crashed on call 3"):
        for _ in range(10):
            venv.step(env.action_masks().argmax(axis=1))
    with pytest.raises(RuntimeError, match=LOCKED.format("step", 3)):
        venv.step(np.zeros(4, dtype=np.int64))
    with pytest.raises(RuntimeError, match=LOCKED.format("step", 3)):
        venv.env_method("action_masks")
    venv.reset()
    lengths = np.zeros(4, dtype=np.int64)
    for _ in range(60):
        _, _, dones, infos = venv.step(env.action_masks().argmax(axis=1))
        lengths += 1
        for table in np.flatnonzero(dones):
            assert infos[table]["episode"]["l"] == lengths[table]  # counted from the reset on
            lengths[table] = 0


@pytest.mark.parametrize(
    ("make_env", "message"),
    [
        (lambda: make(2), "autoreset_mode='SameStep', not 'NextStep'"),
        (lambda: make(2, autoreset_mode="Disabled"), "autoreset_mode='SameStep', not 'Disabled'"),
        (lambda: gym.make_vec("CartPole-v1", num_envs=2, vectorization_mode="sync"), "got SyncVectorEnv"),
        (lambda: gym.make(ENV_ID), "to_sb3 takes a Friday13VectorEnv"),
    ],
)
def test_to_sb3_refuses_other_envs(make_env: Any, message: str) -> None:
    """Only a SameStep Friday13VectorEnv can become an SB3 VecEnv (SB3 resets in the same step)."""
    from friday13_env.friday13.batched.sb3 import to_sb3

    with pytest.raises(ValueError, match=re.escape(message)):
        to_sb3(make_env())


def test_action_space_sample_draws_legal_actions_as_the_scalar_env_does() -> None:
    """A plain ``action_space.sample()`` rollout, Gymnasium's random agent, drew uniformly from every action, so
    nearly every game ended at once by an illegal card; the scalar env's space draws only legal ones."""
    env = gym.make_vec(
        "friday13_env/Friday13-v0", num_envs=16, vectorization_mode="vector_entry_point", autoreset_mode="NextStep"
    )
    env.reset(seed=3)
    illegal, ended = 0, 0
    for _ in range(300):
        _, _, terminated, _, infos = env.step(env.action_space.sample())
        illegal += int(infos["illegal_action"].sum())
        ended += int(terminated.sum())
    assert ended > 0 and illegal == 0
    explicit = np.zeros((16, env.unwrapped.deck.num_actions), dtype=np.int8)
    explicit[:, 2] = 1  # an explicit mask is honoured unchanged, legal or not
    assert (env.action_space.sample(mask=tuple(explicit)) == 2).all()
    assert env.action_space == spaces.MultiDiscrete(np.full(16, env.unwrapped.deck.num_actions))


def test_action_space_samples_are_reproducible_and_uniform_where_no_action_is_legal() -> None:
    def rollout() -> list[list[int]]:
        env = Friday13VectorEnv(num_envs=8, num_players=4)
        env.reset(seed=11)
        samples = []
        for _ in range(40):
            samples.append(env.action_space.sample().tolist())
            env.step(np.array(samples[-1]))
        return samples

    first = rollout()
    assert first == rollout()
    space = Friday13VectorEnv(num_envs=4).action_space
    space.seed(0)
    space.legal_mask = np.zeros((4, 18), dtype=np.int8)  # no legal action anywhere: any action, drawn uniformly
    draws = np.array([space.sample() for _ in range(400)])
    assert draws.min() == 0 and draws.max() == 17 and space.contains(draws[0])
