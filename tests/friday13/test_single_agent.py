"""The single-agent Gymnasium environment: spaces, rewards, determinism, masks, options, checkers."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env import agents
from friday13_env.friday13.agents import RandomAgent
from friday13_env.friday13.cards import GERMAN_DECK, STANDARD_DECK
from friday13_env.friday13.encoding import encode_observation, observation_layout
from friday13_env.friday13.single_agent import Friday13Env

ENV_ID = "friday13_env/Friday13-v0"
SCRIPTED = ["cautious", "majority", "search"]
needs_scripted = pytest.mark.skipif(
    not set(SCRIPTED) <= set(agents.names()), reason="the cautious/majority/search agents are not registered yet"
)


def first_legal(info: dict) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def play_episode(env: gym.Env, seed: int, choose=first_legal) -> tuple[list, list[float], list[dict]]:
    """Run one episode; return the observations, rewards and infos of every step (reset first)."""
    observation, info = env.reset(seed=seed)
    observations, rewards, infos = [observation], [], [info]
    terminated = False
    while not terminated:
        observation, reward, terminated, truncated, info = env.step(choose(info))
        assert truncated is False
        observations.append(observation)
        rewards.append(reward)
        infos.append(info)
    return observations, rewards, infos


class NamedAgent(RandomAgent):
    """A random agent with its own name, counting its moves, to see who sits where."""

    def __init__(self, name: str, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.name = name
        self.moves = 0

    def act(self, observation) -> int:
        self.moves += 1
        return super().act(observation)


class IllegalAgent:
    name = "broken"

    def act(self, observation) -> int:
        return int(np.flatnonzero(np.asarray(observation["action_mask"]) == 0)[0])


# -- spaces and observations -------------------------------------------------------------------
@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_spaces_have_the_same_size_at_every_table_size(num_players: int) -> None:
    env = gym.make(ENV_ID, num_players=num_players)
    assert env.observation_space.shape == (observation_layout(STANDARD_DECK).size,)
    assert env.observation_space.dtype == np.float32
    assert env.action_space.n == 18
    observation, info = env.reset(seed=num_players)
    assert observation in env.observation_space
    assert info["num_players"] == num_players


def test_german_deck_has_its_own_action_count() -> None:
    env = gym.make(ENV_ID, deck="german")
    assert env.action_space.n == 21
    assert env.observation_space.shape == (observation_layout(GERMAN_DECK).size,)


def test_observation_and_mask_are_the_learners() -> None:
    env = gym.make(ENV_ID, num_players=4, seat=2)
    observation, info = env.reset(seed=3)
    game = env.unwrapped.game
    assert game.current == 2
    hand = observation_layout(STANDARD_DECK).views(observation)["hand"]
    assert hand.tolist() == game.hands[2]
    expected = [*[1 if count else 0 for count in game.hands[2]], *[1 if game.hands[2][15] else 0] * 2]
    assert info["action_mask"].tolist() == expected
    assert env.unwrapped.action_masks().tolist() == [bool(x) for x in expected]
    assert info["seat"] == 2 and info["opponents"] == {"player_0": "random", "player_1": "random", "player_3": "random"}


def test_opponents_play_until_the_learner_is_to_move() -> None:
    env = gym.make(ENV_ID, num_players=5, seat=3)
    _, info = env.reset(seed=0)
    game = env.unwrapped.game
    # player_0 starts round 1, so player_0..player_2 have each played one card before the learner.
    assert game.current == 3
    assert [sum(hand) for hand in game.hands] == [9, 9, 9, 10, 10]
    env.step(first_legal(info))
    assert game.current == 3
    assert [sum(hand) for hand in game.hands] == [8, 8, 8, 9, 9]


def test_action_space_sample_draws_legal_actions() -> None:
    env = gym.make(ENV_ID)
    env.action_space.seed(0)
    _, info = env.reset(seed=0)
    for _ in range(30):
        action = env.action_space.sample()
        assert info["action_mask"][action] == 1
        _, _, _, _, info = env.step(action)


# -- episodes, rewards and infos ---------------------------------------------------------------
def test_points_reward_is_minus_the_round_points_when_a_round_ends() -> None:
    env = gym.make(ENV_ID, num_players=4, num_rounds=4)
    _, rewards, infos = play_episode(env, seed=11)
    round_ends = [(reward, info) for reward, info in zip(rewards, infos[1:], strict=True) if info["round_over"]]
    assert [info["round"] for _, info in round_ends] == [0, 1, 2, 3]
    assert all(reward == -info["round_points"] for reward, info in round_ends)
    assert sum(1 for reward in rewards if reward != 0) == sum(1 for _, info in round_ends if info["round_points"])
    final = infos[-1]
    assert sum(rewards) == -final["total_points"]
    assert final["final_scores"][final["seat"]] == final["total_points"]
    assert final["total_points"] == sum(info["round_points"] for _, info in round_ends)


def test_final_info_reports_scores_rank_and_win() -> None:
    env = gym.make(ENV_ID, num_players=[3, 4, 5, 6], opponent_pool=["random"])
    for seed in range(6):
        _, _, infos = play_episode(env, seed=seed)
        final = infos[-1]
        scores, seat = final["final_scores"], final["seat"]
        assert len(scores) == final["num_players"]
        assert final["winner"] == (scores[seat] == min(scores))
        assert final["rank"] == 1 + sum(score < scores[seat] for score in scores)
        assert sorted(final["opponents"]) == sorted(f"player_{s}" for s in range(len(scores)) if s != seat)
        assert final["action_mask"].tolist() == [0] * 18


def test_win_reward_is_paid_once_at_the_end() -> None:
    env = gym.make(ENV_ID, reward="win", num_rounds=2)
    _, rewards, infos = play_episode(env, seed=5)
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    assert rewards[-1] == (1.0 if infos[-1]["winner"] else 0.0)


def test_relative_reward_sums_to_the_table_mean_minus_own_total() -> None:
    env = gym.make(ENV_ID, reward="relative", num_players=3)
    _, rewards, infos = play_episode(env, seed=8)
    scores = infos[-1]["final_scores"]
    assert sum(rewards) == pytest.approx(np.mean(scores) - scores[infos[-1]["seat"]])


def test_episode_lengths_match_the_learners_hand_sizes() -> None:
    # 4 players, standard deck: seat 0 holds 13, 12, 12, 13 cards in rounds 1-4.
    env = gym.make(ENV_ID, num_players=4, seat=0)
    _, rewards, _ = play_episode(env, seed=1)
    assert len(rewards) == 50


def test_step_after_the_end_and_before_reset_are_errors() -> None:
    env = Friday13Env(num_rounds=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.action_masks()
    play_episode(env, seed=0)
    with pytest.raises(RuntimeError, match="episode ended"):
        env.step(0)


# -- illegal actions ---------------------------------------------------------------------------
def test_illegal_action_raises_and_changes_nothing_when_asked_to() -> None:
    env = Friday13Env(seat=0, illegal_action="raise")
    observation, info = env.reset(seed=2)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    legal = np.flatnonzero(info["action_mask"]).tolist()
    with pytest.raises(ValueError, match=r"illegal action .*legal actions: \[") as caught:
        env.step(illegal)
    assert all(f"{action} (" in str(caught.value) for action in legal)
    with pytest.raises(ValueError, match="out of range"):
        env.step(18)
    with pytest.raises(ValueError, match=r"is not in the action space Discrete\(18\).*legal actions: \["):
        env.step("cat 1")
    np.testing.assert_array_equal(encode_observation(env.game, env.seat), observation)
    env.step(np.array(legal[0]))  # a 0-d array is an action like any other


def test_an_opponents_illegal_action_names_the_opponent() -> None:
    env = Friday13Env(num_players=3, opponents=["random", IllegalAgent()], seat=0)
    _, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="opponent 'broken' at player_2 chose an illegal action"):
        env.step(first_legal(info))


# -- determinism -------------------------------------------------------------------------------
def test_same_seed_same_episode() -> None:
    env = gym.make(ENV_ID, num_players=[3, 4, 5, 6], opponent_pool=["random", RandomAgent])
    first = play_episode(env, seed=42)
    second = play_episode(env, seed=42)
    assert len(first[0]) == len(second[0])
    for a, b in zip(first[0], second[0], strict=True):
        np.testing.assert_array_equal(a, b)
    assert first[1] == second[1]
    assert first[2][-1]["final_scores"] == second[2][-1]["final_scores"]


def test_same_seed_same_episode_with_agent_objects_as_opponents() -> None:
    """An agent object is re-seeded through its ``reset(seed)`` hook each episode, so what it plays does not depend
    on the episodes before (a snapshot opponent of self-play is such an object)."""
    env = gym.make(ENV_ID, opponents=[RandomAgent(seed=0) for _ in range(3)], seat=2)
    first = play_episode(env, seed=1)
    play_episode(env, seed=5)
    second = play_episode(env, seed=1)
    assert first[1] == second[1]
    for a, b in zip(first[0], second[0], strict=True):
        np.testing.assert_array_equal(a, b)
    fresh = play_episode(gym.make(ENV_ID, opponents=[RandomAgent(seed=7) for _ in range(3)], seat=2), seed=1)
    assert fresh[1] == first[1], "the episode's seed decides, not the seed the object was built with"


def test_repeated_table_sizes_are_refused() -> None:
    """A list with a size twice would read as a weighted draw, but the draw is uniform over the sizes."""
    with pytest.raises(ValueError, match=r"lists a table size more than once.*\[4, 4, 4, 6\]"):
        Friday13Env(num_players=[4, 4, 4, 6])


def test_different_seeds_draw_different_tables() -> None:
    env = gym.make(ENV_ID, num_players=[3, 4, 5, 6])
    tables = {(info["num_players"], info["seat"]) for info in (env.reset(seed=seed)[1] for seed in range(40))}
    assert {n for n, _ in tables} == {3, 4, 5, 6}
    assert len(tables) > 8


def test_reset_without_seed_continues_the_seeded_stream() -> None:
    env = gym.make(ENV_ID, seat=None)
    env.reset(seed=9)
    after_seed = [env.reset()[0] for _ in range(3)]
    env.reset(seed=9)
    again = [env.reset()[0] for _ in range(3)]
    for a, b in zip(after_seed, again, strict=True):
        np.testing.assert_array_equal(a, b)


# -- opponents ---------------------------------------------------------------------------------
def test_opponents_sit_clockwise_after_the_learner() -> None:
    table = [NamedAgent("a"), NamedAgent("b"), NamedAgent("c")]
    env = Friday13Env(num_players=4, opponents=table, seat=2)
    _, info = env.reset(seed=0)
    assert info["opponents"] == {"player_3": "a", "player_0": "b", "player_1": "c"}
    # Round 1 is started by player_0: "b" then "c" move before the learner; "a" has not moved yet.
    assert [agent.moves for agent in table] == [0, 1, 1]


def test_drawn_table_size_seats_the_first_opponents() -> None:
    table = [NamedAgent(name) for name in "abcd"]
    env = Friday13Env(num_players=[3, 5], opponents=table, seat=0)
    sizes = set()
    for seed in range(10):
        _, info = env.reset(seed=seed)
        sizes.add(info["num_players"])
        expected = dict(zip([f"player_{s}" for s in range(1, info["num_players"])], "abcd", strict=False))
        assert info["opponents"] == expected
    assert sizes == {3, 5}


def test_opponent_pool_draws_each_seat() -> None:
    env = Friday13Env(num_players=6, opponent_pool=["random", NamedAgent("x")])
    labels = [label for seed in range(20) for label in env.reset(seed=seed)[1]["opponents"].values()]
    assert set(labels) == {"random", "x"} and len(labels) == 100


def test_set_opponent_pool_takes_factories_and_agents() -> None:
    seeds: list[int] = []

    def factory(seed: int) -> NamedAgent:
        seeds.append(seed)
        return NamedAgent("snapshot", seed=seed)

    env = gym.make(ENV_ID, num_players=3, opponents=["random", "random"])
    env.unwrapped.set_opponent_pool([factory])
    _, info = env.reset(seed=0)
    assert info["opponents"] == {f"player_{s}": "snapshot" for s in range(3) if s != info["seat"]}
    assert len(seeds) == 2 and seeds[0] != seeds[1]
    env.reset(seed=0)
    assert seeds[2:] == seeds[:2]  # factories get their seeds from the environment's Generator
    play_episode(env, seed=1)


@needs_scripted
def test_scripted_opponents_play_a_full_game() -> None:
    env = gym.make(ENV_ID, num_players=4, opponents=SCRIPTED, num_rounds=1)
    _, _, infos = play_episode(env, seed=0)
    assert sorted(infos[-1]["opponents"].values()) == sorted(SCRIPTED)


@needs_scripted
def test_scripted_opponents_in_a_pool() -> None:
    env = gym.make(ENV_ID, num_players=[3, 6], opponent_pool=SCRIPTED, num_rounds=1)
    for seed in range(2):
        play_episode(env, seed=seed)


# -- option validation -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"num_players": 7}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_players": True}, "num_players must be one of"),
        ({"num_players": []}, "non-empty"),
        ({"num_players": [3, 8]}, "num_players must be one of"),
        ({"num_players": "4"}, "num_players must be one of"),
        ({"opponents": ["nobody", "random", "random"]}, r"unknown Friday the 13th agent 'nobody'; known agents: \["),
        ({"opponent_pool": ["nobody"]}, "known agents"),
        ({"opponents": ["random", "random"]}, "one opponent per other seat: 3 for 4 players, got 2"),
        ({"num_players": [3, 5], "opponents": ["random"] * 2}, "4 for 5 players, got 2"),
        ({"opponents": "random"}, "opponents must be a list"),
        ({"opponents": ["random"] * 3, "opponent_pool": ["random"]}, "not both"),
        ({"opponent_pool": []}, "at least one"),
        ({"opponent_pool": [42]}, "Agent objects or factories"),
        ({"seat": 4}, r"seat must be None \(drawn per episode\) or an int in 0..3"),
        ({"seat": -1}, "seat must be"),
        ({"num_players": [3, 6], "seat": 3}, "0..2"),
        ({"deck": "french"}, "unknown deck"),
        ({"reward": "money"}, "unknown reward mode"),
        ({"num_rounds": 0}, "num_rounds"),
        ({"render_mode": "svg"}, "unknown render_mode"),
        ({"illegal_action": "ignore"}, "illegal_action must be one of"),
    ],
)
def test_bad_options_are_clear_value_errors(options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Friday13Env(**options)


def test_unknown_reset_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="reset\\(\\) takes no options"):
        Friday13Env().reset(options={"seat": 1})


def test_factory_that_returns_no_agent_is_an_error() -> None:
    env = Friday13Env(opponent_pool=[lambda seed: "not an agent"])
    with pytest.raises(ValueError, match="returned a str; an agent needs a `name`"):
        env.reset(seed=0)


# -- rendering ---------------------------------------------------------------------------------
def test_render_ansi_shows_the_learners_hand() -> None:
    env = gym.make(ENV_ID, render_mode="ansi", seat=1)
    env.reset(seed=0)
    text = env.render()
    assert "Round 1/4" in text and "Hand of player_1:" in text


def test_render_human_prints_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = Friday13Env(render_mode="human", seat=0, num_rounds=1)
    _, info = env.reset(seed=0)
    env.step(first_legal(info))
    assert capsys.readouterr().out.count("Hand of player_0:") == 2


# -- checkers and Stable-Baselines3 ------------------------------------------------------------
# Gymnasium's step-determinism check samples its action *before* its reset(seed=123), so the action
# may be illegal in the new deal: by default that ends the episode (with -1), as in the AEC env(), and
# the check passes with the defaults. With illegal_action="raise" it passes only where the action stays
# legal (a fixed seat, 5 or 6 players, the German deck).
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"seat": 0},
        {"num_players": 5},
        {"num_players": [3, 4, 5, 6]},
        {"deck": "german", "seat": 2},
        {"num_players": 5, "illegal_action": "raise"},
        {"render_mode": "rgb_array"},
    ],
)
def test_gymnasium_check_env(options: dict) -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gym.make(ENV_ID, **options).unwrapped, skip_render_check=False)
        check_env(gym.make(ENV_ID, **options), skip_render_check=False)


@pytest.mark.parametrize(
    "options", [{}, {"num_players": 3}, {"num_players": [3, 6], "reward": "relative"}, {"render_mode": "rgb_array"}]
)
def test_stable_baselines3_check_env(options: dict) -> None:
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from stable_baselines3.common.env_checker import check_env

    check_env(gym.make(ENV_ID, **options).unwrapped)
    check_env(gym.make(ENV_ID, **options))


def test_masks_are_found_through_wrappers_and_vec_envs() -> None:
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    env = gym.make(ENV_ID, seat=0)
    _, info = env.reset(seed=0)
    assert is_masking_supported(env)
    np.testing.assert_array_equal(get_action_masks(env), info["action_mask"].astype(bool))

    def make(seed: int):
        return lambda: gym.make(ENV_ID, seat=seed % 4)

    for vec_env in (DummyVecEnv([make(0), make(1)]), SubprocVecEnv([make(0), make(1)], start_method="fork")):
        vec_env.seed(3)
        vec_env.reset()
        assert is_masking_supported(vec_env)
        masks = get_action_masks(vec_env)
        assert masks.shape == (2, 18) and masks.dtype == bool
        hands = [game.hands for game in vec_env.get_attr("game")]
        for index, seat in enumerate((0, 1)):
            assert masks[index, :15].tolist() == [count > 0 for count in hands[index][seat][:15]]
        vec_env.env_method("set_opponent_pool", ["random"])
        vec_env.close()


def test_maskable_ppo_smoke() -> None:
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec_env = DummyVecEnv([lambda: Monitor(gym.make(ENV_ID, num_players=[3, 4, 5, 6])) for _ in range(2)])
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(128)  # an unmasked illegal action would raise inside the environment
    assert model.num_timesteps == 128
    assert len(model.ep_info_buffer) >= 2  # games last at most 52 learner moves: masks were also read after auto-resets


@pytest.mark.parametrize("seed", [True, False, -1, 1.5, "3"])
def test_reset_refuses_a_seed_that_is_not_none_or_a_non_negative_int(seed: Any) -> None:
    env = Friday13Env()
    with pytest.raises(ValueError, match=r"seed must be None or a non-negative int"):
        env.reset(seed=seed)


def test_reset_takes_a_numpy_integer_seed_as_the_same_int_and_seeds_the_sampler_from_its_own_key() -> None:
    """The same seed gives the same deal and the same ``action_space.sample()`` rollout; the sampler's numbers are
    not the deal's (a key of its own, as in the solo game)."""

    def rollout(seed: Any) -> tuple[list[float], list[int]]:
        env = Friday13Env(num_players=4)
        observation, _ = env.reset(seed=seed)
        actions = []
        done = False
        while not done:
            actions.append(int(env.action_space.sample()))
            _, _, done, _, _ = env.step(actions[-1])
        return observation.tolist(), actions

    assert rollout(5) == rollout(np.int64(5))
    assert rollout(5) != rollout(6)
