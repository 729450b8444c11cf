"""The rule-based expert, the search agent, the rebuilt states they reason on and the win model."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from friday13_env.friday import actions as A
from friday13_env.friday import engine
from friday13_env.friday.agents import HeuristicAgent, SearchAgent, make, value_fit
from friday13_env.friday.agents.belief import redeal, sample_state
from friday13_env.friday.agents.expert import ExpertPolicy
from friday13_env.friday.agents.value import FEATURE_NAMES, NUM_FEATURES, WinModel, features, shipped_model
from friday13_env.friday.agents.value_fit import fit_logistic
from friday13_env.friday.agents.value_fit import main as value_fit_main
from friday13_env.friday.encoding import encode
from friday13_env.friday.scenario import build_state, find_card
from friday13_env.friday.state import Phase
from tests.friday.helpers import DISTRACTED, FOCUSED, GENIUS, STUPID, WEAK, WILD, assert_plays_only_legal_moves, play

REALIZATION = find_card("realization", 1)  # 1x destroy
REPEAT = find_card("repeat", 1)  # 1x double
VISION = find_card("vision", 2)  # sort 3 cards
WEAPON = find_card("weapon", 4)
RAFT = find_card("food", 0)  # a raft hazard: 1 free card, values 0/1/3


def expert() -> ExpertPolicy:
    return ExpertPolicy(np.random.default_rng(0), samples=2, model=shipped_model())


def game_states(level: int, seed: int) -> list:
    """Every decision state of a random game."""
    rng = np.random.default_rng(seed)
    state, states = engine.new_game(level, rng), []
    while not state.done:
        states.append(state.copy())
        legal = engine.legal_actions(state)
        engine.apply_action(state, legal[int(rng.integers(len(legal)))], rng)
    return states


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_rebuilt_states_show_exactly_the_observation(level):
    rng = np.random.default_rng(level)
    for state in game_states(level, seed=10 + level):
        obs = encode(state)
        rebuilt = sample_state(obs, rng)
        assert np.array_equal(encode(rebuilt), obs)
        assert sorted(c for zone in rebuilt.all_zones().values() for c in zone) == list(range(59))
        assert np.array_equal(engine.action_mask(rebuilt), engine.action_mask(state))
        redeal(rebuilt, rng)
        assert np.array_equal(encode(rebuilt), obs), "a redeal changes only what the player cannot see"


def test_rebuilt_states_sample_the_hidden_order():
    state = game_states(1, seed=3)[0]
    orders = {tuple(sample_state(encode(state), np.random.default_rng(s)).robinson) for s in range(5)}
    assert len(orders) == 5 and state.known_top == 0


def test_expert_destroys_the_worst_card_with_realization_then_targets_it():
    state = build_state(life=10, hazard=WILD, robinson=[WEAK[0]], table=[REALIZATION, FOCUSED[0], DISTRACTED[0]])
    policy = expert()
    assert policy.choose(state) == A.ACTIVATE + 0
    play(state, A.ACTIVATE + 0)
    assert policy.choose(state) == A.TARGET + 2


def test_expert_ends_a_won_fight_and_draws_while_short():
    won = build_state(life=10, hazard=RAFT, robinson=[WEAK[0]], table=[FOCUSED[0]])
    assert expert().choose(won) == A.END_FIGHT
    short = build_state(life=10, hazard=WILD, robinson=[GENIUS, WEAK[0]], table=[FOCUSED[0]])
    assert expert().choose(short) == A.DRAW_FREE


def test_expert_doubles_the_best_card_when_the_free_cards_are_spent():
    # yellow wild animals: 7 to reach, 1 + 1 + 4 + 0 = 6 on the table, all 4 free cards drawn
    state = build_state(life=10, step=1, hazard=WILD, robinson=[WEAK[0]], table=[REPEAT, FOCUSED[0], WEAPON, WEAK[1]])
    policy = expert()
    assert policy.choose(state) == A.ACTIVATE + 0
    play(state, A.ACTIVATE + 0)
    assert policy.choose(state) == A.TARGET + 2  # the 4-point weapon


def test_expert_doubles_before_buying_against_a_pirate():
    state = build_state(life=5, step=3, pirate=0, robinson=[GENIUS, WEAK[0]], table=[REPEAT, WEAPON])
    state.fight.free_used = state.fight.free_total  # 5 points against 20, no free card left
    policy = expert()
    assert engine.legal_actions(state) == [A.BUY, A.ACTIVATE + 0]
    assert policy.choose(state) == A.ACTIVATE + 0  # a free double before paying 1 life per card


def test_expert_destroys_liabilities_after_a_lost_fight_and_keeps_good_cards():
    state = build_state(life=10, hazard=WILD, robinson=[WEAK[1]], table=[DISTRACTED[0], WEAK[0], FOCUSED[0], GENIUS])
    state.fight.free_used = 4
    policy = expert()
    play(state, A.END_FIGHT)  # 2 points against 4: lose, 2 life to spend on destroying
    assert state.phase is Phase.LOSS_DESTROY and state.loss_budget == 2
    assert policy.choose(state) == A.TARGET + 0  # the -1 card first
    play(state, A.TARGET + 0)
    assert policy.choose(state) == A.TARGET + 0  # then the weak 0 (now slot 0)
    play(state, A.TARGET + 0)
    assert state.phase is Phase.CHOOSE_HAZARD or state.fight is None
    assert {DISTRACTED[0], WEAK[0]} <= set(state.destroyed) and GENIUS in state.discard


def test_expert_sorts_the_worst_card_away_and_the_best_on_top():
    state = build_state(life=10, hazard=WILD, robinson=[STUPID[0], WEAPON, WEAK[0], GENIUS], table=[VISION])
    policy = expert()
    assert policy.choose(state) == A.ACTIVATE + 0
    play(state, A.ACTIVATE + 0)
    while state.phase is Phase.SORT_LOOK and A.CONTINUE in engine.legal_actions(state):
        assert policy.choose(state) == A.CONTINUE
        play(state, A.CONTINUE)
    assert state.looked == [STUPID[0], WEAPON, WEAK[0]]
    assert policy.choose(state) == A.SORT_DISCARD + 0
    play(state, A.SORT_DISCARD + 0)
    assert policy.choose(state) == A.SORT_TOP + 0  # the weapon first
    play(state, A.SORT_TOP + 0)
    assert state.robinson[:2] == [WEAPON, WEAK[0]] and STUPID[0] in state.discard


@pytest.mark.parametrize("agent", [HeuristicAgent(1, samples=2), SearchAgent(1, budget=2)])
def test_expert_agents_only_choose_legal_actions(agent):
    assert_plays_only_legal_moves(agent, level=3, seed=4)


def test_search_and_heuristic_options_are_checked():
    with pytest.raises(ValueError, match="search option budget must be an integer from 1 to 10,000, got 0"):
        make("search", seed=0, budget=0)
    with pytest.raises(ValueError, match="heuristic option samples must be an integer from 1 to 10,000, got 0"):
        make("heuristic", seed=0, samples=0)


def test_win_model_reads_its_file_and_rejects_other_features(tmp_path):
    model = shipped_model()
    assert model.coefficients.shape == (4, NUM_FEATURES)
    state = game_states(1, seed=2)[0]
    assert features(state).shape == (NUM_FEATURES,) and 0.0 < model.probability(state) < 1.0
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"features": ["bias"], "coefficients": [[0.0]] * 4}))
    with pytest.raises(ValueError, match="fitted for features"):
        WinModel.load(bad)
    with pytest.raises(ValueError, match=r"coefficients must have shape \(4, "):
        WinModel(np.zeros((3, len(FEATURE_NAMES))))


def test_logistic_fit_recovers_known_coefficients():
    rng = np.random.default_rng(0)
    x = np.column_stack([np.ones(20_000), rng.normal(size=(20_000, 2))])
    truth = np.array([-0.5, 1.5, -2.0])
    y = (rng.random(20_000) < 1 / (1 + np.exp(-x @ truth))).astype(float)
    assert fit_logistic(x, y, l2=0.0) == pytest.approx(truth, abs=0.1)


def test_value_fit_writes_a_loadable_model(tmp_path, capsys):
    out = tmp_path / "weights.json"
    assert value_fit_main(["--games", "4", "--samples", "1", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["features"] == list(FEATURE_NAMES) and data["fitted_on"]["games"] == 4
    assert data["fitted_on"]["played_with"] is None
    assert WinModel.load(out).coefficients.shape == (4, NUM_FEATURES)
    assert '"positions"' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "0"], r"argument --games: must be a positive integer, got '0'"),
        (["--samples", "0"], r"argument --samples: must be a positive integer, got '0'"),
        (["--seed", "-1"], r"argument --seed: must be a non-negative integer, got '-1'"),
        (["--l2", "nan"], r"argument --l2: must be a finite number >= 0, got 'nan'"),
        (["--l2", "inf"], r"argument --l2: must be a finite number >= 0, got 'inf'"),
        (["--l2", "-1"], r"argument --l2: must be a finite number >= 0, got '-1'"),
        (["--l2", "x"], r"argument --l2: must be a finite number >= 0, got 'x'"),
    ],
)
def test_value_fit_refuses_bad_arguments_before_playing(argv, message, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(engine, "new_game", lambda *args: pytest.fail("played"))
    out = tmp_path / "weights.json"
    with pytest.raises(SystemExit) as exit_info:
        value_fit_main([*argv, "--out", str(out)])
    assert exit_info.value.code == 2 and re.search(message, capsys.readouterr().err) and not out.exists()


def test_value_fit_refuses_a_step_it_saw_no_position_of_and_leaves_the_old_file(tmp_path, capsys):
    out = tmp_path / "weights.json"
    out.write_text("old")
    with pytest.raises(SystemExit) as exit_info:
        value_fit_main(["--games", "1", "--samples", "1", "--out", str(out)])  # a lost game never reaches the pirates
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and "no position of step 3 (pirates) in 1 games; play more games" in error
    assert out.read_text() == "old"


def test_value_fit_refuses_an_unwritable_output_a_bad_model_and_a_diverged_fit(tmp_path, capsys, monkeypatch):
    with pytest.raises(SystemExit) as exit_info:
        value_fit_main(["--games", "1", "--out", str(tmp_path)])  # a folder
    assert exit_info.value.code == 2 and f"argument --out: cannot write {tmp_path}" in capsys.readouterr().err
    out = tmp_path / "weights.json"
    (tmp_path / "model.json").write_text("[]")
    with pytest.raises(SystemExit) as exit_info:
        value_fit_main(["--games", "1", "--model", str(tmp_path / "model.json"), "--out", str(out)])
    assert exit_info.value.code == 2 and "argument --model: " in capsys.readouterr().err
    monkeypatch.setattr(value_fit, "fit_logistic", lambda x, y, l2: np.full(x.shape[1], np.nan))
    with pytest.raises(SystemExit) as exit_info:
        value_fit_main(["--games", "4", "--samples", "1", "--l2", "0", "--out", str(out)])
    assert exit_info.value.code == 2 and "the fit of step 0 (green) diverged" in capsys.readouterr().err
    assert not out.exists()


def write_model(path, data) -> None:
    path.write_text(data if isinstance(data, str) else json.dumps(data))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("[1, 2]", r"expected a JSON object with 'features' and 'coefficients', got list"),
        ("{nope", r"not a JSON file: "),
        ({"features": list(FEATURE_NAMES)}, r"has no 'coefficients'"),
        ({"coefficients": [[0.0] * NUM_FEATURES] * 4}, r"has no 'features'"),
        ({"features": list(FEATURE_NAMES), "coefficients": [["a"] * NUM_FEATURES] * 4}, r"coefficients must be"),
        ({"features": list(FEATURE_NAMES), "coefficients": [[0.0], [0.0, 1.0]]}, r"coefficients must be"),
        ({"features": list(FEATURE_NAMES), "coefficients": [[0.0] * NUM_FEATURES] * 3}, r"shape \(4, "),
        (
            json.dumps({"features": list(FEATURE_NAMES), "coefficients": [[float("nan")] * NUM_FEATURES] * 4}),
            r"coefficients must be finite numbers",
        ),
    ],
)
def test_win_model_load_refuses_malformed_files_with_value_errors(tmp_path, data, message):
    path = tmp_path / "model.json"
    write_model(path, data)
    with pytest.raises(ValueError, match=message):
        WinModel.load(path)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_win_model_refuses_non_finite_coefficients(tmp_path, bad):
    coefficients = np.zeros((4, NUM_FEATURES))
    coefficients[2, 5] = bad
    with pytest.raises(ValueError, match=r"coefficients must be finite numbers"):
        WinModel(coefficients)
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"features": list(FEATURE_NAMES), "coefficients": coefficients.tolist()}))
    with pytest.raises(ValueError, match=r"coefficients must be finite numbers"):
        WinModel.load(path)
