"""Hardening of the card game's environments (issue 18): what RL libraries and hostile inputs broke.

Each test names the item of the issue it covers: ``rgb_array`` rendering (1, 5), Gymnasium's
default illegal-action convention (2), PettingZoo's public API only (3), every info key from
``reset`` on (4), a policy of the wrong deck refused when seated (8), an environment that raised
inside ``step`` refusing to go on (9), strict action types (10) and clear errors for bad options,
agents and reset options (11).
"""

from __future__ import annotations

import ast
import inspect
import logging
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env.core.bitmap import CELL_HEIGHT, CELL_WIDTH, FONT, GLYPH_HEIGHT, GLYPH_WIDTH
from friday13_env.friday13 import aec as aec_module
from friday13_env.friday13 import agents
from friday13_env.friday13.aec import env, raw_env
from friday13_env.friday13.agents import RandomAgent
from friday13_env.friday13.agents.seating import check_seated
from friday13_env.friday13.cards import GERMAN_DECK, STANDARD_DECK
from friday13_env.friday13.encoding import encode_observation
from friday13_env.friday13.engine import legal_actions
from friday13_env.friday13.render import render_state
from friday13_env.friday13.render_image import BACKGROUND, MARGIN, SCALE, TableCanvas, wrap
from friday13_env.friday13.rewards import illegal_action_reward
from friday13_env.friday13.single_agent import Friday13Env
from tests.conftest import choose

ENV_ID = "friday13_env/Friday13-v0"
AEC_INFO_KEYS = {"round", "round_over", "round_points", "total_points", "winner", "illegal_action"}
WRONG_DECK = r"agent '[^']+' plays the 'standard' deck, but this table plays the 'german' deck"
GYM_INFO_KEYS = AEC_INFO_KEYS | {"action_mask", "final_scores", "rank", "num_players", "seat", "opponents"}


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def first_illegal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(np.asarray(mask) == 0)[0])


def read_image(image: np.ndarray, canvas: TableCanvas) -> list[str]:
    """The text an image shows, read back cell by cell with the renderer's own font (right-stripped rows)."""
    glyphs = {bitmap.tobytes(): char for char, bitmap in reversed(FONT.items())}
    top, left = MARGIN, MARGIN
    height, width = canvas.rows * CELL_HEIGHT * SCALE, canvas.columns * CELL_WIDTH * SCALE
    outside = np.ones(image.shape[:2], dtype=bool)
    outside[top : top + height, left : left + width] = False
    assert np.all(image[outside] == np.array(BACKGROUND, dtype=np.uint8))
    # One pixel per font pixel, then (rows, columns, cell height, cell width, 3).
    pixels = image[top : top + height : SCALE, left : left + width : SCALE]
    cells = pixels.reshape(canvas.rows, CELL_HEIGHT, canvas.columns, CELL_WIDTH, 3).transpose(0, 2, 1, 3, 4)
    # Ink is what differs from a cell's bottom-right corner (the row of the player to move has its own background).
    ink = np.any(cells != cells[:, :, -1:, -1:], axis=4)
    assert not ink[:, :, GLYPH_HEIGHT:].any() and not ink[:, :, :, GLYPH_WIDTH:].any()
    bitmaps = ink[:, :, :GLYPH_HEIGHT, :GLYPH_WIDTH]
    rows = []
    for row in range(canvas.rows):
        chars = [glyphs.get(np.ascontiguousarray(bitmaps[row, column]).tobytes()) for column in range(canvas.columns)]
        assert None not in chars, f"unreadable cell in row {row}"
        rows.append("".join(chars).rstrip())  # type: ignore[arg-type]
    return rows


def expected_rows(text: str, canvas: TableCanvas) -> list[str]:
    rows = [row for line in text.splitlines() for row in wrap(line, canvas.columns)]
    return rows + [""] * (canvas.rows - len(rows))


# -- 1, 5: rgb_array rendering -----------------------------------------------------------------
@pytest.mark.parametrize("factory", [raw_env, env, Friday13Env])
def test_metadata_lists_every_render_mode_and_fps(factory: Any) -> None:
    metadata = factory().metadata
    assert set(metadata["render_modes"]) == {"ansi", "human", "rgb_array"}
    assert metadata["render_fps"] > 0


@pytest.mark.parametrize(("num_players", "deck"), [(3, "standard"), (6, "german")])
def test_aec_rgb_array_shows_the_ansi_text_at_a_constant_shape(num_players: int, deck: str) -> None:
    for factory in (raw_env, env):
        text_env = factory(num_players=num_players, deck=deck, render_mode="ansi")
        image_env = factory(num_players=num_players, deck=deck, render_mode="rgb_array")
        canvas = TableCanvas.for_table(text_env.unwrapped.rules.deck, num_players)
        text_env.reset(seed=5)
        image_env.reset(seed=5)
        rng = np.random.default_rng(5)
        shapes = set()
        for step in range(400):
            image = image_env.render()
            assert isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.ndim == 3
            assert image.shape[2] == 3 and image.shape == canvas.shape
            shapes.add(image.shape)
            if step % 13 == 0:
                assert read_image(image, canvas) == expected_rows(text_env.render(), canvas)
            if not image_env.agents:
                break
            observation, _, terminated, truncated, _ = image_env.last()
            action = None if terminated or truncated else choose(observation["action_mask"], rng)
            text_env.step(action)
            image_env.step(action)
        assert read_image(image_env.render(), canvas) == expected_rows(text_env.render(), canvas)
        assert "Game over" in text_env.render()
        assert len(shapes) == 1


def test_gymnasium_rgb_array_shows_the_learners_view_at_one_shape_for_every_table_size() -> None:
    image_env = gym.make(ENV_ID, num_players=[3, 4, 5, 6], deck="german", render_mode="rgb_array")
    text_env = gym.make(ENV_ID, num_players=[3, 4, 5, 6], deck="german", render_mode="ansi")
    canvas = TableCanvas.for_table(GERMAN_DECK, 6)
    shapes, sizes = set(), set()
    for seed in range(6):
        _, info = image_env.reset(seed=seed)
        text_env.reset(seed=seed)
        sizes.add(info["num_players"])
        image = image_env.render()
        shapes.add(image.shape)
        assert image.dtype == np.uint8
        rows = read_image(image, canvas)
        assert rows == expected_rows(text_env.render(), canvas)
        assert f"Hand of player_{info['seat']}:" in " ".join(rows)
    assert shapes == {canvas.shape} and len(sizes) > 1


def test_canvas_fits_the_longest_hand_and_every_winner() -> None:
    for deck in (STANDARD_DECK, GERMAN_DECK):
        canvas = TableCanvas.for_table(deck, 6)
        assert canvas.shape[0] % 16 == 0 and canvas.shape[1] % 16 == 0
        aec = raw_env(num_players=3, deck=deck.name, num_rounds=1)
        aec.reset(seed=0)
        aec.game.hands[0] = list(deck.kind_counts)  # more than any deal: the bound is generous
        lines = render_state(aec.game, show_hand_of=0).splitlines()
        assert sum(len(wrap(line, canvas.columns)) for line in lines) <= canvas.rows


def test_render_collection_stacks_frames() -> None:
    from gymnasium.wrappers import RenderCollection

    environment = RenderCollection(gym.make(ENV_ID, num_players=[3, 6], render_mode="rgb_array"))
    _, info = environment.reset(seed=0)
    for _ in range(5):
        _, _, terminated, _, info = environment.step(first_legal(info["action_mask"]))
        assert not terminated
    frames = np.stack(environment.render())
    assert frames.shape[0] == 6 and frames.dtype == np.uint8


def test_record_video_writes_a_file(tmp_path: Path) -> None:
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    recorder = RecordVideo(gym.make(ENV_ID, render_mode="rgb_array", num_rounds=1), str(tmp_path))
    _, info = recorder.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = recorder.step(first_legal(info["action_mask"]))
    recorder.close()
    assert list(tmp_path.glob("*.mp4"))


MAKE_VEC_ENV_SCRIPT = """
import numpy as np

import friday13_env  # noqa: F401
from stable_baselines3.common.env_util import make_vec_env
from stable_baselines3.common.vec_env import SubprocVecEnv

if __name__ == "__main__":
    vec_env = make_vec_env("friday13_env/Friday13-v0", n_envs=2, seed=0, vec_env_cls=SubprocVecEnv)
    vec_env.reset()
    masks = np.stack(vec_env.env_method("action_masks"))
    vec_env.step(np.array([int(np.flatnonzero(mask)[0]) for mask in masks]))
    images = vec_env.get_images()
    vec_env.close()
    print("frames", vec_env.render_mode, [(image.shape, str(image.dtype)) for image in images])
"""


@pytest.mark.slow
def test_stable_baselines3_make_vec_env_with_subprocesses(tmp_path: Path) -> None:
    """As a user's script runs it: SB3 asks for ``rgb_array``, and its default start method (forkserver)
    imports the script's ``__main__`` module, which registers the ids, in the workers."""
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    script = tmp_path / "train.py"
    script.write_text(MAKE_VEC_ENV_SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script)], cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    shape = TableCanvas.for_table(STANDARD_DECK, 4).shape
    assert result.stdout.strip().splitlines()[-1] == f"frames rgb_array {[(shape, 'uint8')] * 2}"


def test_rendering_before_reset_is_an_error() -> None:
    for environment in (raw_env(render_mode="rgb_array"), Friday13Env(render_mode="rgb_array")):
        with pytest.raises(RuntimeError, match="reset"):
            environment.render()


# -- 2: Gymnasium's conventions with the defaults ----------------------------------------------
def test_gymnasium_and_sb3_checkers_pass_with_the_defaults() -> None:
    from gymnasium.utils.env_checker import check_env

    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gym.make(ENV_ID), skip_render_check=False)
        check_env(gym.make(ENV_ID).unwrapped, skip_render_check=False)
        check_env(gym.make(ENV_ID, render_mode="rgb_array"), skip_render_check=False)
    sb3_check_env(gym.make(ENV_ID))
    sb3_check_env(gym.make(ENV_ID, render_mode="rgb_array"))


def test_an_illegal_action_ends_the_episode_with_the_aec_penalty_by_default() -> None:
    environment = gym.make(ENV_ID, num_players=4, seat=1)
    observation, info = environment.reset(seed=2)
    assert info["illegal_action"] is False
    illegal = first_illegal(info["action_mask"])
    after, reward, terminated, truncated, info = environment.step(illegal)
    penalty = illegal_action_reward("points", STANDARD_DECK, 4)
    assert (reward, terminated, truncated) == (penalty, True, False) and penalty == -232.0
    assert info["illegal_action"] is True and info["winner"] is False
    assert info["action_mask"].tolist() == [0] * 18
    assert set(info) == GYM_INFO_KEYS
    np.testing.assert_array_equal(after, observation)  # nothing was played
    with pytest.raises(RuntimeError, match="episode ended"):
        environment.step(first_legal(observation))


def test_illegal_action_raise_restores_raising_and_the_episode_goes_on() -> None:
    environment = gym.make(ENV_ID, illegal_action="raise", seat=0)
    _, info = environment.reset(seed=2)
    legal = np.flatnonzero(info["action_mask"]).tolist()
    with pytest.raises(ValueError, match=r"illegal action .*legal actions: \["):
        environment.step(first_illegal(info["action_mask"]))
    _, _, terminated, _, info = environment.step(legal[0])
    assert not terminated and info["illegal_action"] is False


def test_bad_illegal_action_option_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"illegal_action must be one of \['end', 'raise'\]"):
        Friday13Env(illegal_action="ignore")


# -- 3: PettingZoo's public API only -----------------------------------------------------------
def test_aec_module_uses_no_private_pettingzoo_attribute() -> None:
    import pettingzoo
    from pettingzoo.utils import wrappers

    private = {
        name
        for cls in (pettingzoo.AECEnv, wrappers.BaseWrapper, wrappers.OrderEnforcingWrapper)
        for name in [*vars(cls), *inspect.getsource(cls).split()]
        if name.startswith("_") and not name.startswith("__")
    }
    private |= {"_was_dead_step", "_deads_step_first", "_has_reset", "_has_updated", "_skip_agent_selection"}
    private.discard("_cumulative_rewards")  # the AEC protocol's documented attribute, read by AECEnv.last()
    tree = ast.parse(Path(aec_module.__file__).read_text())
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    used |= {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert not {name for name in used & private if re.fullmatch(r"_[a-z_]+", name)}
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert "OrderEnforcingWrapper" not in imported  # its internals differ between PettingZoo releases


def test_wrapped_env_enforces_the_call_order() -> None:
    aec = env()
    with pytest.raises(AttributeError, match="before reset"):
        _ = aec.agent_selection
    with pytest.raises(AssertionError, match="reset"):
        aec.step(0)
    with pytest.raises(AssertionError, match="reset"):
        aec.observe("player_0")
    aec.reset(seed=0)
    iterator = iter(aec.agent_iter())
    next(iterator)
    with pytest.raises(AssertionError, match="step"):
        next(iterator)
    assert aec.unwrapped.__class__ is raw_env and str(aec) == "friday13_v0"


def test_wrapped_env_plays_to_the_end_and_then_warns(caplog: pytest.LogCaptureFixture) -> None:
    aec = env(num_players=3, num_rounds=1)
    aec.reset(seed=1)
    rng = np.random.default_rng(1)
    totals = dict.fromkeys(aec.possible_agents, 0.0)
    for agent in aec.agent_iter():
        observation, reward, terminated, truncated, _ = aec.last()
        totals[agent] += reward
        aec.step(None if terminated or truncated else choose(observation["action_mask"], rng))
    assert aec.agents == [] and sum(totals.values()) < 0
    with caplog.at_level(logging.WARNING):
        aec.step(None)  # PettingZoo's convention: a logged warning, not an error
    assert "step() called after all agents are terminated or truncated" in caplog.text


# -- 4: every info key from reset on -----------------------------------------------------------
@pytest.mark.parametrize("factory", [raw_env, env])
def test_aec_infos_hold_every_key_from_reset_on(factory: Any) -> None:
    aec = factory(num_players=4, num_rounds=2)
    aec.reset(seed=3)
    neutral = {"round": 0, "round_over": False, "round_points": 0, "total_points": 0, "winner": False}
    for name in aec.possible_agents:
        assert aec.infos[name] == {**neutral, "illegal_action": False}
    rng = np.random.default_rng(3)
    types = {key: type(value) for key, value in aec.infos["player_0"].items()}
    round_ends = 0
    for agent in aec.agent_iter():
        observation, _, terminated, truncated, info = aec.last()
        assert set(info) == AEC_INFO_KEYS and {key: type(value) for key, value in info.items()} == types
        if terminated or truncated:
            aec.step(None)
            continue
        aec.step(choose(observation["action_mask"], rng))
        if aec.infos[agent]["round_over"]:
            round_ends += 1
            game = aec.unwrapped.game
            for seat, name in enumerate(aec.possible_agents):
                assert aec.infos[name]["round"] == round_ends - 1
                assert aec.infos[name]["total_points"] == game.scores[seat]
        elif aec.agents:
            assert all(info["round_points"] == 0 for info in aec.infos.values())
    assert round_ends == 2


def test_aec_illegal_move_info_is_a_flag_of_the_offender() -> None:
    aec = env(num_players=3)
    aec.reset(seed=4)
    offender = aec.agent_selection
    aec.step(first_illegal(aec.last()[0]["action_mask"]))
    assert {name: info["illegal_action"] for name, info in aec.infos.items()} == {
        name: name == offender for name in aec.possible_agents
    }
    assert all(set(info) == AEC_INFO_KEYS for info in aec.infos.values())


def test_gymnasium_infos_hold_every_key_from_reset_on() -> None:
    environment = gym.make(ENV_ID, num_players=[3, 5], num_rounds=2)
    for seed in range(2):
        _, info = environment.reset(seed=seed)
        assert set(info) == GYM_INFO_KEYS
        n = info["num_players"]
        assert (info["rank"], info["winner"], info["final_scores"], info["round_over"]) == (0, False, [0] * n, False)
        types = {key: type(value) for key, value in info.items()}
        terminated = False
        while not terminated:
            _, reward, terminated, _, info = environment.step(first_legal(info["action_mask"]))
            assert set(info) == GYM_INFO_KEYS and {key: type(value) for key, value in info.items()} == types
            if not info["round_over"]:
                assert info["round_points"] == 0 and reward == 0
        assert info["rank"] >= 1 and len(info["final_scores"]) == n


# -- 8: an agent of another deck is refused when seated ----------------------------------------
class DeckAgent(RandomAgent):
    def __init__(self, deck: Any, seed: int | None = None) -> None:
        super().__init__(seed=seed)
        self.name = "deck-agent"
        self.deck = deck


class Wrapper(RandomAgent):
    name = "wrapper"

    def __init__(self, inner: Any) -> None:
        super().__init__(seed=0)
        self.policy = inner


def test_check_seated_names_both_decks() -> None:
    check_seated(RandomAgent(seed=0), GERMAN_DECK)  # an agent without a deck plays any table
    check_seated(DeckAgent(STANDARD_DECK), STANDARD_DECK)
    check_seated(DeckAgent("german"), "german")
    for agent in (DeckAgent(STANDARD_DECK), DeckAgent("standard"), Wrapper(DeckAgent(STANDARD_DECK))):
        with pytest.raises(ValueError, match=WRONG_DECK):
            check_seated(agent, GERMAN_DECK)


@pytest.mark.parametrize(
    "options",
    [
        {"opponents": ["ensemble-v1", "random", "random"]},
        {"opponent_pool": ["random", "ensemble-v1"]},
        {"opponents": ["random", "endgame", "random"]},
        {"opponents": ["random", DeckAgent(STANDARD_DECK), "random"]},
    ],
)
def test_a_standard_deck_opponent_is_refused_at_a_german_table(options: dict) -> None:
    with pytest.raises(ValueError, match=WRONG_DECK):
        gym.make(ENV_ID, deck="german", **options)


def test_a_factory_of_the_wrong_deck_is_refused_at_reset() -> None:
    environment = Friday13Env(deck="german", opponent_pool=[lambda seed: DeckAgent(STANDARD_DECK, seed=seed)])
    with pytest.raises(ValueError, match=WRONG_DECK):
        environment.reset(seed=0)
    environment = Friday13Env(opponent_pool=["random"])
    with pytest.raises(ValueError, match=WRONG_DECK):
        Friday13Env(deck="german").set_opponent_pool(["ensemble-v1"])
    environment.set_opponent_pool(["ensemble-v1"])  # the right deck is welcome
    environment.reset(seed=0)


# -- 9: an exception inside step leaves the environment refusing to go on ----------------------
class FailingAgent(RandomAgent):
    name = "failing"

    def __init__(self, fail_at: int) -> None:
        super().__init__(seed=0)
        self.moves = 0
        self.fail_at = fail_at

    def act(self, observation: Any) -> int:
        self.moves += 1
        if self.moves == self.fail_at:
            raise RuntimeError("opponent crashed")
        return super().act(observation)


def test_after_an_opponent_raises_step_refuses_until_reset() -> None:
    failing = FailingAgent(fail_at=2)
    environment = Friday13Env(num_players=3, opponents=[failing, "random"], seat=0)
    _, info = environment.reset(seed=0)
    _, _, _, _, info = environment.step(first_legal(info["action_mask"]))
    with pytest.raises(RuntimeError, match="opponent crashed"):
        environment.step(first_legal(info["action_mask"]))
    with pytest.raises(RuntimeError, match=r"an earlier step\(\) raised .*call reset\(\)"):
        environment.step(first_legal(info["action_mask"]))
    with pytest.raises(RuntimeError, match="call reset"):
        environment.action_masks()
    _, info = environment.reset(seed=1)
    environment.step(first_legal(info["action_mask"]))  # a reset starts afresh


def test_after_an_opponent_raises_during_reset_step_refuses() -> None:
    environment = Friday13Env(num_players=3, opponents=["random", FailingAgent(fail_at=1)], seat=2)
    with pytest.raises(RuntimeError, match="opponent crashed"):
        environment.reset(seed=0)
    with pytest.raises(RuntimeError, match="call reset"):
        environment.step(0)


def test_a_rejected_action_changes_nothing_and_the_episode_goes_on() -> None:
    environment = Friday13Env(seat=0)
    observation, info = environment.reset(seed=2)
    for bad in ("1", 18, -1):
        with pytest.raises(ValueError, match="legal actions"):
            environment.step(bad)
    np.testing.assert_array_equal(encode_observation(environment.game, 0), observation)
    _, _, terminated, _, _ = environment.step(first_legal(info["action_mask"]))
    assert not terminated


# -- 10: action types --------------------------------------------------------------------------
INTEGER_FORMS = [int, np.int64, np.int8, np.uint16, np.array, lambda a: np.array(a, dtype=np.int32)]
BAD_ACTIONS = [0.99, 1.0, "1", True, False, np.bool_(True), None, np.float32(1), np.array(1.0), np.array([1]), [1]]


def gym_env() -> tuple[Friday13Env, np.ndarray]:
    environment = Friday13Env(seat=0)
    _, info = environment.reset(seed=0)
    return environment, info["action_mask"]


@pytest.mark.parametrize("form", INTEGER_FORMS)
def test_integer_actions_of_every_form_are_accepted(form: Any) -> None:
    aec = raw_env()
    aec.reset(seed=0)
    aec.step(form(first_legal(aec.observe(aec.agent_selection)["action_mask"])))
    wrapped = env()
    wrapped.reset(seed=0)
    wrapped.step(form(first_legal(wrapped.last()[0]["action_mask"])))
    environment, mask = gym_env()
    environment.step(form(first_legal(mask)))
    assert aec.game.plays_left == wrapped.unwrapped.game.plays_left


@pytest.mark.parametrize("bad", BAD_ACTIONS, ids=repr)
def test_other_actions_are_value_errors_naming_the_legal_ones(bad: object) -> None:
    aec = raw_env()
    aec.reset(seed=0)
    legal = legal_actions(aec.game)
    wrapped = env()
    wrapped.reset(seed=0)
    environment, mask = gym_env()
    gym_legal = np.flatnonzero(mask).tolist()
    for target, expected in ((aec, legal), (wrapped, legal), (environment, gym_legal)):
        with pytest.raises(ValueError, match=re.escape(f"legal actions: {expected}")):
            target.step(bad)
    assert not any(wrapped.terminations.values())
    assert aec.game.plays_left == wrapped.unwrapped.game.plays_left == environment.game.plays_left


# -- 11: options, agents and reset options -----------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deck": ["german"]}, r"unknown deck \['german'\]; allowed values: \['german', 'standard'\]"),
        ({"deck": None}, "unknown deck None"),
        (
            {"reward": ["points"]},
            r"unknown reward mode \['points'\]; allowed values: \['points', 'relative', 'rival', 'win'\]",
        ),
        ({"render_mode": ["ansi"]}, r"unknown render_mode \['ansi'\]"),
        ({"render_mode": "svg"}, r"\[None, 'ansi', 'human', 'rgb_array'\]"),
    ],
)
@pytest.mark.parametrize("factory", [raw_env, env, Friday13Env])
def test_unhashable_and_unknown_options_are_documented_value_errors(factory: Any, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        factory(**options)


@pytest.mark.parametrize("factory", [raw_env, env])
def test_observe_an_unknown_agent_names_the_agents(factory: Any) -> None:
    aec = factory(num_players=3)
    aec.reset(seed=0)
    for method in (aec.observe, aec.observation_space, aec.action_space):
        with pytest.raises(ValueError, match=r"no agent 'player_9'; agents: \['player_0', 'player_1', 'player_2'\]"):
            method("player_9")


@pytest.mark.parametrize("factory", [raw_env, env, Friday13Env])
@pytest.mark.parametrize("options", [{"seat": 1}, {"anything": None}, "seat"])
def test_unknown_reset_options_are_rejected_in_every_env(factory: Any, options: Any) -> None:
    environment = factory()
    with pytest.raises(ValueError, match=r"reset\(\) takes no options"):
        environment.reset(seed=0, options=options)
    environment.reset(seed=0, options={})
    environment.reset(seed=0, options=None)


def test_opponents_accept_specs_with_options_and_zoo_names() -> None:
    environment = gym.make(ENV_ID, num_players=4, opponents=["search:budget=600", "ensemble-v1", "random"], seat=0)
    _, info = environment.reset(seed=0)
    assert info["opponents"] == {"player_1": "search:budget=600", "player_2": "ensemble-v1", "player_3": "random"}
    opponents = environment.unwrapped._players
    assert opponents[1].budget == 600 and isinstance(opponents[2], agents.Friday13PolicyAgent)
    for _ in range(3):
        _, _, _, _, info = environment.step(first_legal(info["action_mask"]))
    with pytest.raises(ValueError, match=r"agent 'search' has no option\(s\) \['budgett'\]"):
        gym.make(ENV_ID, opponent_pool=["search:budgett=60"])
    with pytest.raises(ValueError, match=r"unknown Friday the 13th agent 'ensemble-v9'; known agents: \["):
        gym.make(ENV_ID, opponent_pool=["ensemble-v9"])


@pytest.mark.parametrize("seed", [True, -1, 1.5, "3"])
def test_the_pettingzoo_env_refuses_a_seed_as_the_gymnasium_views_do(seed: Any) -> None:
    """``raw_env.reset(seed=True)`` dealt seed 1's game; ``-1`` and ``1.5`` raised numpy's own errors."""
    table = raw_env(num_players=4)
    with pytest.raises(ValueError, match=r"seed must be None or a non-negative int"):
        table.reset(seed=seed)
    table.reset(seed=np.int64(3))
    dealt = [list(hand) for hand in table.game.hands]  # type: ignore[union-attr]
    table.reset(seed=3)
    assert [list(hand) for hand in table.game.hands] == dealt  # type: ignore[union-attr]
