"""The Gymnasium adapter: ids, spaces, checkers, masks, rewards, hardening, rendering and the decoder."""

from __future__ import annotations

import sys
import types
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import friday13_env  # noqa: F401  (registers the ids)
from friday13_env.friday import actions as A
from friday13_env.friday import engine
from friday13_env.friday.encoding import OBS_SIZE, OBSERVATION_LAYOUT, decode, encode
from friday13_env.friday.engine import MIN_SCORE
from friday13_env.friday.env import ILLEGAL_ACTION_PENALTY, FridayEnv
from friday13_env.friday.scenario import build_state, find_card, find_cards
from friday13_env.friday.state import Phase

ENV_ID = "friday13_env/FridaySolo-v0"
OLD_ID = "friday13_env/Friday-v0"
FIRST_LEGAL = r"legal actions: 0 \(fight hazard A\), 1 \(fight hazard B\)"


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


# -- ids, checkers, spaces --------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*alternative render modes:UserWarning")  # needs a spec: tested via gym.make
def test_gymnasium_checker_passes_in_every_render_mode():
    for mode in (None, "ansi", "rgb_array"):
        check_env(FridayEnv(level=2, render_mode=mode), skip_render_check=False)


def test_gymnasium_checker_passes_on_the_registered_id_with_defaults():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "the environment is wrapped": checked all the same
        check_env(gym.make(ENV_ID))
    check_env(gym.make(ENV_ID).unwrapped)


def test_sb3_checker_passes_on_the_registered_id_with_defaults():
    sb3_checker = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3_checker.check_env(gym.make(ENV_ID).unwrapped, warn=True)
    sb3_checker.check_env(gym.make(ENV_ID), warn=True)
    sb3_checker.check_env(FridayEnv(level=4, render_mode="rgb_array"), warn=True, skip_render_check=False)


def test_gymnasium_make():
    env = gym.make(ENV_ID, level=3)
    obs, info = env.reset(seed=1)
    assert obs.shape == (OBS_SIZE,) and env.unwrapped.level == 3 and env.spec.id == ENV_ID
    assert info["action_mask"].dtype == np.int8


def test_the_old_id_is_a_deprecated_alias_that_still_works():
    with pytest.warns(DeprecationWarning, match="Friday-v0 is deprecated: use friday13_env/FridaySolo-v0"):
        env = gym.make(OLD_ID, level=2, reward="win")
    assert isinstance(env.unwrapped, FridayEnv) and env.unwrapped.level == 2
    _, info = env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert reward == 0.0 and not terminated


def test_spaces_and_metadata():
    env = FridayEnv()
    assert env.metadata == {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 4, "name": "FridaySolo-v0"}
    assert env.action_space.n == A.NUM_ACTIONS == 129
    assert env.observation_space.shape == (OBS_SIZE,) and env.observation_space.dtype == np.float32
    assert sum(block.size for block in OBSERVATION_LAYOUT.blocks) == OBS_SIZE


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": 0}, r"level must be one of \[1, 2, 3, 4\]"),
        ({"level": 5}, r"level must be one of"),
        ({"level": "1"}, r"level must be one of"),
        ({"render_mode": "rgb"}, r"render_mode must be one of \[None, 'ansi', 'human', 'rgb_array'\]"),
        ({"reward": "x"}, r"reward must be one of \['score', 'win'\], got 'x'"),
        ({"reward": ["score"]}, r"reward must be one of \['score', 'win'\]"),
        ({"illegal_action": "ignore"}, r"illegal_action must be one of \['end', 'raise'\], got 'ignore'"),
    ],
)
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FridayEnv(**kwargs)


# -- rewards ----------------------------------------------------------------------------------------


def test_reward_is_the_final_score_and_info_reports_the_result():
    env = FridayEnv(level=1)
    rewards, info = play_out(env, seed=3)
    assert all(r == 0 for r in rewards[:-1])
    assert rewards[-1] == info["score"] and isinstance(info["won"], bool) and info["illegal_action"] is False
    with pytest.raises(RuntimeError, match="after the episode ended"):
        env.step(0)


def test_win_reward():
    env = FridayEnv(level=1, reward="win")
    rewards, info = play_out(env, seed=3)
    assert rewards[-1] == float(info["won"])


def test_reward_mode_is_a_deprecated_alias_of_reward():
    with pytest.warns(DeprecationWarning, match="reward_mode= is deprecated: use reward="):
        env = FridayEnv(reward_mode="win")
    assert env.reward == "win"
    with pytest.raises(ValueError, match="not both"), pytest.warns(DeprecationWarning):
        FridayEnv(reward="win", reward_mode="win")


@pytest.mark.parametrize("reward", ["score", "win"])
def test_reward_and_its_deprecated_name_together_are_refused_even_with_the_default_value(reward):
    message = r"give reward= \(reward_mode= is its deprecated name\), not both"
    with pytest.raises(ValueError, match=message), pytest.warns(DeprecationWarning):
        FridayEnv(reward=reward, reward_mode="win")
    assert FridayEnv(reward=None).reward == "score"


def test_min_score_is_a_floor_of_every_final_score():
    assert MIN_SCORE == -150  # 5 distracted (-1) + 11 aging cards (-5) + 30 unbeaten hazards (-3)
    for seed in range(3):
        _, info = play_out(FridayEnv(level=4), seed)
        assert info["score"] >= MIN_SCORE


# -- actions: types, range, legality ----------------------------------------------------------------


def test_mask_matches_action_masks():
    env = FridayEnv()
    _, info = env.reset(seed=0)
    assert np.array_equal(info["action_mask"].astype(bool), env.action_masks())
    assert np.flatnonzero(info["action_mask"]).tolist() == [A.HAZARD_A, A.HAZARD_B]


@pytest.mark.parametrize(
    "action", [1, np.int64(1), np.int8(1), np.uint8(1), np.array(1), np.array(1, dtype=np.int16), np.uint64(1)]
)
def test_step_accepts_python_and_numpy_integers(action):
    env = FridayEnv()
    env.reset(seed=0)
    reference = FridayEnv()
    reference.reset(seed=0)
    assert np.array_equal(env.step(action)[0], reference.step(1)[0])


@pytest.mark.parametrize(
    "action",
    [0.99, 1.0, "1", True, False, None, np.float64(1.0), np.bool_(True), np.array(1.0), np.array([1]), [1], 1 + 0j],
)
def test_step_rejects_anything_but_an_integer_naming_the_legal_actions(action):
    env = FridayEnv()
    env.reset(seed=0)
    before = encode(env.state)
    with pytest.raises(ValueError, match=r"action must be an integer .*; " + FIRST_LEGAL):
        env.step(action)
    assert np.array_equal(encode(env.state), before), "nothing was played"


@pytest.mark.parametrize("action", [-1, 129, 10**30, np.int64(-5)])
def test_step_rejects_actions_outside_the_action_space(action):
    env = FridayEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"not in the action space Discrete\(129\); " + FIRST_LEGAL):
        env.step(action)


@pytest.mark.parametrize(("reward", "penalty"), [("score", -150.0), ("win", -1.0)])
def test_an_illegal_action_ends_the_episode_with_the_documented_penalty(reward, penalty):
    env = FridayEnv(reward=reward)
    env.reset(seed=0)
    obs, value, terminated, truncated, info = env.step(A.END_FIGHT)
    assert (value, terminated, truncated) == (penalty, True, False) and ILLEGAL_ACTION_PENALTY[reward] == penalty
    assert info["illegal_action"] is True and info["won"] is False and info["score"] == MIN_SCORE
    assert not info["action_mask"].any() and not env.action_masks().any() and obs in env.observation_space
    with pytest.raises(RuntimeError, match=r"after the episode ended; call reset\(\) first"):
        env.step(A.HAZARD_A)
    _, info = env.reset(seed=0)
    assert info["illegal_action"] is False and env.step(A.HAZARD_A)[2] is False


def test_illegal_action_raise_restores_raising():
    env = FridayEnv(illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 3 in phase CHOOSE_HAZARD; " + FIRST_LEGAL):
        env.step(A.END_FIGHT)


def test_after_an_exception_in_step_the_env_refuses_to_step_until_reset(monkeypatch):
    env = FridayEnv()
    env.reset(seed=0)

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    with monkeypatch.context() as patch:
        patch.setattr(engine, "apply_action", broken)
        with pytest.raises(RuntimeError, match="boom"):
            env.step(A.HAZARD_A)
    for action in (A.HAZARD_A, A.HAZARD_B):
        with pytest.raises(RuntimeError, match=r"an earlier step\(\) raised RuntimeError\('boom'\); call reset\(\)"):
            env.step(action)
    env.reset(seed=0)
    assert env.step(A.HAZARD_A)[2] is False


@pytest.mark.parametrize("bad", [0.99, "1", None, -1, 129, A.END_FIGHT])
def test_an_action_rejected_before_any_change_leaves_the_env_usable(bad):
    env = FridayEnv(illegal_action="raise")
    env.reset(seed=0)
    reference = FridayEnv()
    reference.reset(seed=0)
    with pytest.raises(ValueError, match=FIRST_LEGAL):
        env.step(bad)
    assert not env.action_masks()[A.END_FIGHT] and env.action_masks()[A.HAZARD_A]
    for action in (A.HAZARD_A, 0, 0):  # the game goes on exactly as if the bad action had never been given
        observation, reward, terminated, _, info = env.step(action)
        expected = reference.step(action)
        assert np.array_equal(observation, expected[0]) and (reward, terminated) == expected[1:3]
        assert np.array_equal(info["action_mask"], expected[4]["action_mask"])


@pytest.mark.parametrize("use", ["step", "action_masks", "render"])
def test_using_the_env_before_reset_is_a_runtime_error(use):
    env = FridayEnv(render_mode="ansi")
    call = {"step": lambda: env.step(0), "action_masks": env.action_masks, "render": env.render}[use]
    with pytest.raises(RuntimeError, match=r"the environment must be reset\(\) before it is used"):
        call()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"levle": 2}, r"unknown reset option\(s\) \['levle'\]; allowed: \['level'\]"),
        ({"level": 2, "seed": 3}, r"unknown reset option\(s\) \['seed'\]; allowed: \['level'\]"),
        ("level", r"reset options must be a dict such as \{'level': 2\}"),
        ({"level": 9}, r"level must be one of"),
    ],
)
def test_unknown_reset_options_are_rejected(options, message):
    with pytest.raises(ValueError, match=message):
        FridayEnv().reset(seed=0, options=options)


@pytest.mark.parametrize("seed", [True, False, -1, 1.5, "3", [3], np.float64(2.0)])
def test_reset_refuses_a_seed_that_is_not_none_or_a_non_negative_int(seed):
    env = FridayEnv()
    with pytest.raises(ValueError, match=r"seed must be None or a non-negative int, got "):
        env.reset(seed=seed)
    with pytest.raises(RuntimeError, match=r"must be reset\(\)"):
        env.step(0)  # refused before anything started


def test_reset_takes_numpy_integer_seeds_as_the_same_int():
    a, b = FridayEnv(), FridayEnv()
    assert np.array_equal(a.reset(seed=np.int64(3))[0], b.reset(seed=3)[0])
    assert np.array_equal(a.reset(seed=np.uint8(7))[0], b.reset(seed=7)[0])
    assert a.action_space.sample() == b.action_space.sample()


def sampled_rollout(env: FridayEnv, seed: int) -> list[int]:
    """A whole game of ``action_space.sample()`` moves after ``reset(seed=seed)`` only (no ``action_space.seed``)."""
    env.reset(seed=seed)
    moves, done = [], False
    while not done:
        moves.append(int(env.action_space.sample()))
        done = env.step(moves[-1])[2]
    return moves


def test_reset_seed_makes_action_space_sample_rollouts_reproducible():
    env = FridayEnv(level=2)
    assert sampled_rollout(env, 5) == sampled_rollout(FridayEnv(level=2), 5) == sampled_rollout(env, 5)
    assert sampled_rollout(env, 5) != sampled_rollout(env, 6)


def test_the_action_sampler_draws_from_its_own_stream_not_the_deals():
    env = FridayEnv()
    env.reset(seed=4)
    deal_numbers = env.np_random.integers(2**32, size=8)
    env.reset(seed=4)
    assert not np.array_equal(env.action_space.np_random.integers(2**32, size=8), deal_numbers)


def test_same_seed_same_trajectory():
    a, b = FridayEnv(level=3), FridayEnv(level=3)
    ra, ia = play_out(a, 11)
    rb, ib = play_out(b, 11)
    assert ra == rb and ia["score"] == ib["score"] and np.array_equal(encode(a.state), encode(b.state))


def test_reset_options_change_level():
    env = FridayEnv(level=1)
    env.reset(seed=0, options={"level": 4})
    assert env.state.level == 4 and env.state.life == 18


# -- rendering --------------------------------------------------------------------------------------


def test_text_render_modes(capsys):
    env = FridayEnv(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Friday level 1" in text and "Hazard A:" in text and "Legal: 0=fight hazard A" in text
    human = FridayEnv(render_mode="human")
    human.reset(seed=0)
    assert human.render() is None and "Friday level 1" in capsys.readouterr().out
    with pytest.warns(UserWarning, match="render_mode=None, so nothing is rendered"):
        assert FridayEnv().render() is None


def test_render_after_an_illegal_action_lists_no_legal_actions():
    env = FridayEnv(render_mode="ansi")
    env.reset(seed=0)
    env.step(A.END_FIGHT)  # illegal: the episode ends, the game does not
    text = env.render()
    assert "Legal: 0=" not in text
    assert text.splitlines()[-2:] == ["Legal: none", "Episode ended by an illegal action"]


def test_rgb_array_frames_show_the_game_with_one_shape():
    env = FridayEnv(level=1, render_mode="rgb_array")
    env.reset(seed=3)
    env.action_space.seed(3)
    frames, done = [env.render()], False
    while not done:
        _, _, done, _, _ = env.step(env.action_space.sample())
        frames.append(env.render())
    height, width = frames[0].shape[:2]
    assert height % 16 == 0 and width % 16 == 0, "video codecs want sizes in multiples of 16"
    for frame in frames:
        assert frame.dtype == np.uint8 and frame.shape == (height, width, 3)
    assert len(np.unique(frames[0].reshape(-1, 3), axis=0)) >= 3, "text and bars in several colours"
    assert not np.array_equal(frames[0], frames[1]) and not np.array_equal(frames[-2], frames[-1])


def test_rgb_array_draws_the_life_bar():
    from friday13_env.friday.render import render_rgb

    full, hurt = build_state(life=20), build_state(life=5)
    assert not np.array_equal(render_rgb(full), render_rgb(hurt))
    green = np.array([70, 170, 90], dtype=np.uint8)
    count = [int(np.all(render_rgb(s) == green, axis=-1).sum()) for s in (full, hurt)]
    assert count[0] == 4 * count[1], "20 life points against 5"


def test_record_video_captures_every_frame(tmp_path, monkeypatch):
    recorded: list[list[np.ndarray]] = []

    class ImageSequenceClip:  # stands in for moviepy's, which needs frames of one shape
        def __init__(self, frames, fps):
            assert len({frame.shape for frame in frames}) == 1 and fps == 4
            recorded.append(list(frames))

        def write_videofile(self, path, logger=None):
            pass

    module = types.ModuleType("moviepy.video.io.ImageSequenceClip")
    module.ImageSequenceClip = ImageSequenceClip
    for name in ("moviepy", "moviepy.video", "moviepy.video.io"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "moviepy.video.io.ImageSequenceClip", module)
    env = gym.wrappers.RecordVideo(
        gym.make(ENV_ID, render_mode="rgb_array"), str(tmp_path / "videos"), episode_trigger=lambda _: True
    )
    env.reset(seed=0)
    env.action_space.seed(0)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps, done = steps + 1, terminated or truncated
    env.close()
    assert len(recorded) == 1 and len(recorded[0]) == steps + 1


# -- the observation ----------------------------------------------------------------------------------


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
