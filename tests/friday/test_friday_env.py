"""The Gymnasium adapter: spaces, checkers, masks, rewards, rendering, errors and the decoder."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from friday13_env.friday import actions as A
from friday13_env.friday.encoding import LAYOUT, OBS_SIZE, decode, encode
from friday13_env.friday.env import FridayEnv
from friday13_env.friday.scenario import build_state, find_card, find_cards
from friday13_env.friday.state import Phase

ENV_ID = "friday13_env/Friday-v0"


def play_out(env: FridayEnv, seed: int) -> tuple[list[float], dict]:
    """Play a whole game with uniformly random legal actions (from the action space's sample)."""
    _, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    rewards, done = [], False
    while not done:
        _, reward, done, truncated, info = env.step(env.action_space.sample())
        assert not truncated
        rewards.append(reward)
    return rewards, info


def test_gymnasium_checker_passes():
    check_env(FridayEnv(level=2, render_mode="ansi"), skip_render_check=False)


def test_sb3_checker_passes():
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(FridayEnv(level=4), warn=True)


def test_gymnasium_make():
    if ENV_ID not in gym.registry:
        gym.register(ENV_ID, entry_point="friday13_env.friday.env:FridayEnv")
    env = gym.make(ENV_ID, level=3)
    obs, info = env.reset(seed=1)
    assert obs.shape == (OBS_SIZE,) and env.unwrapped.level == 3
    assert info["action_mask"].dtype == np.int8


def test_spaces_and_metadata():
    env = FridayEnv()
    assert env.metadata == {"render_modes": ["ansi", "human"], "name": "Friday-v0"}
    assert env.action_space.n == A.NUM_ACTIONS == 129
    assert env.observation_space.shape == (OBS_SIZE,) and env.observation_space.dtype == np.float32
    assert sum(int(np.prod(shape)) for _, shape in LAYOUT) == OBS_SIZE


@pytest.mark.parametrize(
    "kwargs", [{"level": 0}, {"level": 5}, {"level": "1"}, {"render_mode": "rgb_array"}, {"reward_mode": "x"}]
)
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError, match="must be one of"):
        FridayEnv(**kwargs)


def test_reward_is_the_final_score_and_info_reports_the_result():
    env = FridayEnv(level=1)
    rewards, info = play_out(env, seed=3)
    assert all(r == 0 for r in rewards[:-1])
    assert rewards[-1] == info["score"] and isinstance(info["won"], bool)
    with pytest.raises(ValueError, match="after the game ended"):
        env.step(0)


def test_win_reward_mode():
    env = FridayEnv(level=1, reward_mode="win")
    rewards, info = play_out(env, seed=3)
    assert rewards[-1] == float(info["won"])


def test_mask_matches_action_masks_and_illegal_actions_raise():
    env = FridayEnv()
    _, info = env.reset(seed=0)
    assert np.array_equal(info["action_mask"].astype(bool), env.action_masks())
    assert np.flatnonzero(info["action_mask"]).tolist() == [A.HAZARD_A, A.HAZARD_B]
    with pytest.raises(
        ValueError, match=r"illegal action 3 in phase CHOOSE_HAZARD; legal actions: 0 \(fight hazard A\), 1"
    ):
        env.step(A.END_FIGHT)


def test_same_seed_same_trajectory():
    a, b = FridayEnv(level=3), FridayEnv(level=3)
    ra, ia = play_out(a, 11)
    rb, ib = play_out(b, 11)
    assert ra == rb and ia["score"] == ib["score"] and np.array_equal(encode(a.state), encode(b.state))


def test_render_modes(capsys):
    env = FridayEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Friday level 1" in text and "Hazard A:" in text and "Legal: 0=fight hazard A" in text
    human = FridayEnv(render_mode="human")
    human.reset(seed=0)
    assert human.render() is None and "Friday level 1" in capsys.readouterr().out
    assert FridayEnv().render() is None


def test_reset_options_change_level():
    env = FridayEnv(level=1)
    env.reset(seed=0, options={"level": 4})
    assert env.state.level == 4 and env.state.life == 18


def test_decoder_exposes_the_fight():
    genius, weak = find_card("genius"), find_cards("weak")
    wild = find_card("vision", 3)
    state = build_state(life=12, step=1, hazard=wild, robinson=[weak[0], weak[1]], discard=[weak[2]], table=[genius])
    view = decode(encode(state))
    assert view["life"][0] * 22 == pytest.approx(12)
    assert view["step"].tolist() == [0, 1, 0, 0]
    fight = view["fight"]
    assert fight[0] == 1 and fight[1] == 0
    assert fight[-5] * 200 == pytest.approx(7) and fight[-4] * 150 == pytest.approx(2), "target 7, total 2"
    assert fight[-3] == 0 and fight[-2] * 200 == pytest.approx(5), "not winning, 5 missing"
    slot = view["slots"][0]
    assert slot[0] == 1 and slot[1] * 5 == pytest.approx(2) and view["slots"][1].sum() == 0
    weak_type = 2
    assert view["robinson_counts"][weak_type] * 8 == pytest.approx(2)
    assert view["discard_counts"][weak_type] * 8 == pytest.approx(1)


def test_observation_hides_unseen_aging_cards_but_shows_their_pool():
    env = FridayEnv(level=2)
    env.reset(seed=4)
    view = decode(encode(env.state))
    assert view["robinson_counts"][2] == 1.0, "all 8 weak cards (type 2) are in the stack"
    assert (view["robinson_counts"] > 0).sum() == 5, "only the 5 starting types are known to be there"
    assert round(float(view["counts"][8] * 11)) == 1, "one unseen aging card in the stack"
    pool = view["aging_pool"]
    assert pool[2] == 0 and pool.sum() == pytest.approx(8.0), "every aging type but »very stupid« possible"


def test_observation_shows_known_top_and_bottom_cards():
    genius, weak = find_card("genius"), find_cards("weak")
    state = build_state(hazard=find_card("vision", 3), robinson=[genius, weak[0], weak[1]])
    state.known_top, state.known_bottom = 1, 1
    view = decode(encode(state))
    assert view["top"][0][1] * 5 == pytest.approx(2) and view["top"][1].sum() == 0
    assert view["bottom"][0][0] == 1 and view["bottom"][0][1] == 0 and view["bottom"][1].sum() == 0


def test_action_names():
    assert A.action_name(A.ACTIVATE + 3) == "activate slot 3"
    assert A.action_name(A.PRIMARY, Phase.FIGHT) == "draw a free card"
    with pytest.raises(ValueError, match=r"allowed 0\.\.128"):
        A.action_name(129)
