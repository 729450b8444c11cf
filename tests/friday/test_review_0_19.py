"""A review of the solo game (release 0.19.0): each test here failed before its fix.

Two »1x exchange« cards with nothing else to draw could trade each other for ever (the episode never ended); a
``KeyboardInterrupt`` inside ``step`` left a half-played move that the environment went on stepping from; after an
illegal action the observation and ``info`` still showed the phase before it; ``build_state`` accepted positions no
game reaches (which crashed later); ``RandomAgent`` took any observation; a mask that contradicts the observation
made ``heuristic`` and ``search`` raise a ``RuntimeError`` about their own move; ``WinModel.load`` read strings and
booleans as coefficients; ``evaluate`` refused numpy integers; the text table had no time per decision.
``train_friday.py``'s part is test_review_0_19_training.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.core.stats import wilson_interval
from friday13_env.friday import actions as A
from friday13_env.friday import engine, zones
from friday13_env.friday import env as env_module
from friday13_env.friday.agents import RandomAgent, make
from friday13_env.friday.agents.value import FEATURE_NAMES, NUM_FEATURES, WinModel
from friday13_env.friday.cards import VERY_STUPID_ID, Ability, card_type
from friday13_env.friday.encoding import CARD_FEATURES, OBS_SIZE, decode, encode
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.evaluation import LevelResult, evaluate, format_table
from friday13_env.friday.scenario import build_state, find_cards
from friday13_env.friday.state import Phase, Slot, State
from tests.friday.helpers import WILD
from tests.scripts import load_training_script as load_script

EXCHANGERS = [c for c in find_cards("strategy") if card_type(c).ability is Ability.EXCHANGE_1]
CANNIBALS = find_cards("weapon", 4)[0]


def two_exchangers_alone() -> State:
    """The reviewer's position: a red fight with the two »1x exchange« cards on the table, every other card destroyed
    or boxed, the aging stack empty, so an exchanged card is always drawn straight back."""
    assert len(EXCHANGERS) == 2
    kept = {*EXCHANGERS, CANNIBALS, VERY_STUPID_ID}
    return build_state(
        level=1,
        step=2,
        hazard=CANNIBALS,
        table=EXCHANGERS,
        destroyed=[c for c in range(59) if c not in kept],
        aging_taken=10,
    )


def used_flags(observation: np.ndarray) -> list[bool]:
    """The per-slot »used« flags of an observation's present table slots."""
    slots = decode(observation)["slots"]
    return [bool(row[CARD_FEATURES + 1] > 0.5) for row in slots if row[0] > 0.5]


# -- 1: a game that never ends --------------------------------------------------------------------------------
def test_a_card_exchanged_away_and_drawn_again_comes_back_unused() -> None:
    """Interpretation 6 (docs/CONVENTIONS.md): flags do not pass to the replacement, even when the replacement is the
    card just exchanged away, drawn straight back."""
    state = two_exchangers_alone()
    rng = np.random.default_rng(0)
    first, second = EXCHANGERS
    for move in (A.ACTIVATE + 0, A.TARGET + 1):  # the first exchanges the second, which is drawn straight back
        engine.apply_action(state, move, rng)
    assert [s.card for s in state.fight.table] == [first, second] and state.phase is Phase.FIGHT
    assert used_flags(encode(state)) == [True, False] and A.ACTIVATE + 1 in engine.legal_actions(state)
    for move in (A.ACTIVATE + 1, A.TARGET + 0):  # the second exchanges the first, which comes back unused
        engine.apply_action(state, move, rng)
    assert [s.used for s in state.fight.table] == [False, True] and A.ACTIVATE + 0 in engine.legal_actions(state)


def endless_env() -> FridayEnv:
    env = FridayEnv(level=1)
    env.reset(seed=0)
    env.state = two_exchangers_alone()
    env._update_mask(env.state)
    return env


def test_the_endless_exchange_is_truncated_at_max_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two exchange cards traded each other for ever: ``step`` never ended the episode, against the docs."""
    monkeypatch.setattr(env_module, "MAX_DECISIONS", 40)
    env = endless_env()
    for step in range(40):
        move = (A.ACTIVATE + 0, A.TARGET + 1, A.ACTIVATE + 1, A.TARGET + 0)[step % 4]
        _, reward, terminated, truncated, info = env.step(move)
        assert not terminated and truncated == (step == 39) and reward == 0.0
    assert not info["action_mask"].any() and "won" not in info and "score" not in info
    with pytest.raises(RuntimeError, match="after the episode ended; call reset"):
        env.step(A.ACTIVATE + 0)
    env.reset(seed=0)
    assert env.step(int(np.flatnonzero(env.action_masks())[0]))[3] is False, "reset starts a fresh count"


def test_a_truncated_episode_keeps_its_phase_and_its_views_list_no_legal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """The observation at a truncation is the game's own (a learner bootstraps from it), but the text still listed
    legal moves that ``step`` refuses."""
    monkeypatch.setattr(env_module, "MAX_DECISIONS", 3)
    env = FridayEnv(level=1, render_mode="ansi")
    env.reset(seed=0)
    for _ in range(3):
        _, _, _, truncated, info = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert truncated and info["phase"] == env.unwrapped.state.phase.name != "GAME_OVER"
    text = env.render()
    assert text.endswith("Legal: none\nEpisode truncated after 3 decisions") and "GAME_OVER" not in text
    assert env_module.render_rgb(env.state, "x").shape == (720, 960, 3)


def test_every_episode_is_truncated_no_later_than_max_decisions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(env_module, "MAX_DECISIONS", 3)
    env = FridayEnv()
    env.reset(seed=1)
    endings = [env.step(env.action_space.sample())[2:4] for _ in range(3)]
    assert endings == [(False, False), (False, False), (False, True)]


def test_the_evaluation_refuses_a_game_that_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(env_module, "MAX_DECISIONS", 5)
    with pytest.raises(ValueError, match=r"agent 'random' kept the game going for 5 decisions without an end"):
        evaluate("random", 1, games=1, seed=0)


# -- 2: an interrupted step --------------------------------------------------------------------------------------
def test_a_keyboard_interrupt_inside_step_makes_the_env_refuse_steps_until_reset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env = FridayEnv()
    env.reset(seed=0)
    env.step(A.HAZARD_A)  # a fight: the next move draws a card
    original = zones.draw

    def interrupted(state: State, rng: np.random.Generator) -> int | None:
        original(state, rng)  # the card leaves the stack ...
        raise KeyboardInterrupt  # ... and Ctrl-C arrives before it reaches the table

    with monkeypatch.context() as patch:
        patch.setattr(zones, "draw", interrupted)
        with pytest.raises(KeyboardInterrupt):
            env.step(A.DRAW_FREE)
    with pytest.raises(RuntimeError, match=r"an earlier step\(\) raised KeyboardInterrupt\(\); call reset\(\) first"):
        env.step(A.DRAW_FREE)
    env.reset(seed=0)
    assert env.step(A.HAZARD_A)[2] is False


# -- 13: the end of an episode by an illegal action --------------------------------------------------------------
@pytest.mark.parametrize("render_mode", [None, "ansi"])
def test_an_illegal_action_shows_game_over_in_the_observation_info_and_text(render_mode: str | None) -> None:
    env = FridayEnv(render_mode=render_mode)
    env.reset(seed=0)
    observation, _, terminated, _, info = env.step(A.END_FIGHT)  # illegal while choosing a hazard
    assert terminated and info["illegal_action"] and info["phase"] == "GAME_OVER"
    assert int(np.argmax(decode(observation)["phase"])) == Phase.GAME_OVER
    assert decode(observation)["phase"].sum() == 1 and observation in env.observation_space
    assert env.state.phase is Phase.CHOOSE_HAZARD, "nothing was played: the game itself is as it was"
    if render_mode == "ansi":
        text = env.render()
        assert "phase GAME_OVER" in text.splitlines()[0] and text.endswith("Episode ended by an illegal action")


# -- 6: build_state refuses what no game reaches ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"step": 3, "hazard": WILD}, r"a hazard fight needs step 0, 1 or 2 \(green, yellow, red\), got step 3"),
        ({"step": 3, "hazard_stack": [WILD]}, r"hazard_stack must be empty at step 3 \(the pirates: .*\), got 1 card$"),
        ({"step": 0, "pirate": 0}, r"a pirate fight needs step=3 \(the pirates\), got step 0"),
        ({"step": 2, "pirate": 1}, r"a pirate fight needs step=3 \(the pirates\), got step 2"),
        (
            {"step": 3, "pirate": 0, "pirates_defeated": (True, False)},
            r"pirate 0 is already defeated \(pirates_defeated\); a fight needs an undefeated pirate",
        ),
        ({"robinson": [0, 1, 2], "hidden": [0]}, r"hidden cards must be aging cards: 0 \(.+\) is not"),
        ({"hazard": WILD, "table": [Slot(0, paid="no")]}, r"table slot 0: paid must be a bool, got 'no'"),  # type: ignore[arg-type]
        ({"hazard": WILD, "table": [1, Slot(0, paid=False, used=1)]}, r"table slot 1: used must be a bool, got 1"),  # type: ignore[arg-type]
        ({"hazard": WILD, "table": [Slot(0, False, face_down=None)]}, r"face_down must be a bool, got None"),  # type: ignore[arg-type]
        ({"hazard": WILD, "table": [Slot(0, False, doubled="yes")]}, r"doubled must be a bool, got 'yes'"),  # type: ignore[arg-type]
        (
            {"level": 1, "aging": [VERY_STUPID_ID]},
            r"is boxed at level 1 \(levels 1-2 play without it\); it was in aging",
        ),
        ({"level": 2, "robinson": [VERY_STUPID_ID]}, r"is boxed at level 2 \(levels 1-2 play without it\); it was in"),
    ],
)
def test_build_state_refuses_positions_no_game_reaches(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build_state(**options)


def test_positions_games_do_reach_are_still_built() -> None:
    assert encode(build_state(step=3, pirate=1, pirates_defeated=(True, False))).shape == (OBS_SIZE,)
    assert encode(build_state(level=3, aging=[VERY_STUPID_ID])).shape == (OBS_SIZE,)
    aging = find_cards("hungry")[0]
    assert build_state(level=2, robinson=[aging, 0], hidden=[aging]).hidden == {aging}
    assert build_state(hazard=WILD, table=[Slot(0, np.bool_(True))]).fight.table[0].paid is True


# -- 5: the agents' checks ----------------------------------------------------------------------------------------
def a_position() -> dict[str, np.ndarray]:
    env = FridayEnv()
    return observation_dict(*env.reset(seed=0))


@pytest.mark.parametrize(
    ("observation", "message"),
    [
        (None, r"random: an agent needs the observation dict"),
        ({"observation": np.zeros(OBS_SIZE - 1, np.float32)}, r"random: the observation dict has no 'action_mask'"),
        ("short", r"random: expected an observation vector of shape \(2175,\), got \(2174,\)"),
        ("nan", r"random: the observation vector holds non-finite values"),
        ("none-vector", r"random: expected an observation vector of shape \(2175,\), got \(\)"),
    ],
)
def test_the_random_agent_checks_its_observation_as_the_other_agents_do(observation: Any, message: str) -> None:
    position = a_position()
    if observation == "short":
        observation = {**position, "observation": position["observation"][:-1]}
    elif observation == "nan":
        observation = {**position, "observation": np.full(OBS_SIZE, np.nan, np.float32)}
    elif observation == "none-vector":
        observation = {**position, "observation": None}
    with pytest.raises(ValueError, match=message):
        RandomAgent(0).act(observation)


def test_the_random_agent_still_plays_the_same_moves() -> None:
    position = a_position()  # choosing a hazard: actions 0 and 1
    agent, reference = RandomAgent(3), np.random.default_rng(3)
    assert [agent.act(position) for _ in range(8)] == [int(reference.choice([0, 1])) for _ in range(8)]


@pytest.mark.parametrize("spec", ["heuristic:samples=1", "search:budget=1,rollout_samples=1"])
def test_a_mask_that_contradicts_the_observation_is_a_value_error_naming_both(spec: str) -> None:
    position = a_position()  # choosing a hazard: actions 0 and 1
    mask = np.zeros_like(position["action_mask"])
    mask[A.END_FIGHT] = 1
    name = spec.split(":")[0]
    with pytest.raises(ValueError, match=rf"{name}: the action mask \(legal \[3\]\) does not match the observation"):
        make(spec, seed=0).act({**position, "action_mask": mask})


# -- 8: the win model's coefficients ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("1.5", r"coefficients must be numbers \(ints or floats\): coefficients\[0\]\[3\] is '1.5'$"),
        (True, r"coefficients must be numbers \(ints or floats\): coefficients\[0\]\[3\] is True$"),
        (None, r"coefficients must be numbers \(ints or floats\): coefficients\[0\]\[3\] is None$"),
        ([1.0], r"coefficients must be numbers \(ints or floats\): coefficients\[0\]\[3\] is \[1.0\]$"),
    ],
)
def test_win_model_coefficients_must_be_numbers(tmp_path: Path, bad: Any, message: str) -> None:
    rows: list[list[Any]] = [[0.0] * NUM_FEATURES for _ in range(4)]
    rows[0][3] = bad
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"features": list(FEATURE_NAMES), "coefficients": rows}))
    with pytest.raises(ValueError, match=message):
        WinModel.load(path)


def test_win_model_coefficients_may_be_ints(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"features": list(FEATURE_NAMES), "coefficients": [[0] * NUM_FEATURES] * 4}))
    assert WinModel.load(path).coefficients.dtype == np.float64


# -- 12: numpy integers in the evaluation --------------------------------------------------------------------------
def test_evaluate_takes_numpy_integers_as_the_rest_of_the_api_does() -> None:
    plain = evaluate("random", 1, 2, seed=5)
    numpy = evaluate("random", np.int64(1), np.int64(2), seed=np.uint32(5))
    assert (numpy.games, numpy.wins, numpy.mean_score, numpy.mean_steps) == (
        plain.games,
        plain.wins,
        plain.mean_score,
        plain.mean_steps,
    )
    assert type(numpy.games) is int


@pytest.mark.parametrize(
    ("games", "seed", "message"),
    [
        (np.bool_(True), 0, r"games must be a positive int, at most 1,000,000, got "),
        (2, np.bool_(False), r"seed must be a non-negative int, got "),
        (np.int64(0), 0, r"games must be a positive int, at most 1,000,000, got "),
        (2, np.int64(-1), r"seed must be a non-negative int, got "),
        (2.0, 0, r"games must be a positive int, at most 1,000,000, got 2.0"),
        (1_000_001, 0, r"games must be a positive int, at most 1,000,000, got 1000001"),
    ],
)
def test_evaluate_still_refuses_bools_floats_and_negatives(games: Any, seed: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate("random", 1, games, seed=seed)


# -- 9: the text table's time per decision -------------------------------------------------------------------------
def test_the_text_table_shows_the_time_per_decision() -> None:
    interval = wilson_interval(1, 2)
    result = LevelResult("random", 1, 2, 1, interval, interval, 40.0, 0.1234)
    header, _, row = format_table([result]).splitlines()
    assert header.endswith("ms / decision") and row.endswith("0.12")


def test_the_evaluation_script_prints_the_time_per_decision(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_script("evaluate_friday").main(["--agents", "random", "--levels", "1", "--games", "1"]) == 0
    assert "ms / decision" in capsys.readouterr().out
