"""The endgame distillation script: what it searches, its targets, a run end to end, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.cards import get_deck
from friday13_env.encoding import observation_layout
from friday13_env.imitation import split_by_game
from friday13_env.policy import read_policy
from tests.scripts import TRAINING, load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")

POLICY = TRAINING.parent / "checkpoints" / "ensemble_distilled.npz"
SMALL_BUDGET = 600
HAND_SIZES = observation_layout(get_deck("standard")).slices["hand_sizes"]


@pytest.fixture(scope="module")
def script():
    return load_training_script("distill_endgame")


@pytest.fixture(scope="module")
def recorded(script):
    job = script.GamesJob(
        policy=str(POLICY), cards=2, budget=SMALL_BUDGET, search_opponents=True, seeds=(11, 12),
        players=(4,), opponents=("cautious",), deck="standard",
    )  # fmt: skip
    return job, script.play_games(job)


def test_search_labels_exactly_the_decisions_from_cards_in_hand(recorded) -> None:
    job, data = recorded
    hand = data["observations"][:, HAND_SIZES][:, 0]
    searched = ~np.isnan(data["values"]).all(axis=1)
    np.testing.assert_array_equal(searched, hand <= job.cards)
    assert (data["masks"].sum(axis=1) > 1).all()  # forced moves are not recorded
    # the opponents' decisions appear only where they are searched; the teacher's at every hand size
    assert searched[~data["own"]].all() and not searched[data["own"]].all()
    assert set(hand[data["own"]]) >= {job.cards, job.cards + 1, 12}
    # the teacher's move: the policy's greedy move early, search's best (value 0) late
    legal = data["masks"].astype(bool)
    early = data["own"] & ~searched
    greedy = [
        np.flatnonzero(row)[np.argmax(logits[row])]
        for row, logits in zip(legal[early], data["logits"][early], strict=True)
    ]
    np.testing.assert_array_equal(data["actions"][early], greedy)
    late_values = data["values"][searched]
    assert np.all(late_values[np.arange(late_values.shape[0]), data["actions"][searched]] == 0)
    assert np.all(np.isnan(late_values) == ~legal[searched])
    assert np.nanmax(late_values) <= 0


def test_the_recorded_logits_are_the_policys_on_the_recorded_observation(recorded) -> None:
    _, data = recorded
    policy = read_policy(POLICY)
    for row in (0, len(data["games"]) - 1):
        observation = data["observations"][row].astype(np.float32)
        np.testing.assert_allclose(data["logits"][row], policy.logits(observation), rtol=1e-5, atol=1e-5)


def test_targets_are_searchs_standardised_values_where_searched_else_the_policys_softmax(script) -> None:
    masks = np.array([[1, 1, 0], [1, 1, 0]], dtype=np.int8)
    logits = np.array([[0.0, np.log(3.0), 5.0], [1.0, 2.0, 3.0]], dtype=np.float32)
    values = np.array([[np.nan] * 3, [0.0, -2.0, np.nan]], dtype=np.float32)
    target = script.targets({"masks": masks, "logits": logits, "values": values})
    np.testing.assert_allclose(target[0], [0.25, 0.75, 0.0], rtol=1e-6)
    # values 0 and -2 standardise to +1 and -1: softmax gives e / (e + 1/e) to the better move
    better = np.e / (np.e + 1 / np.e)
    np.testing.assert_allclose(target[1], [better, 1 - better, 0.0], rtol=1e-6)


def test_a_run_records_fits_exports_and_reuses_its_data(
    script, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "student.npz"
    run = ["--games", "3", "--players", "4", "--cards", "2", "--search-budget", str(SMALL_BUDGET), "--epochs", "2",
           "--workers", "1", "--eval-games", "0", "--no-progress", "--out-dir", str(tmp_path / "run")]  # fmt: skip
    summary = script.main([*run, "--export", str(export)])
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == json.loads(json.dumps(summary))
    with np.load(tmp_path / "run" / "positions.npz") as data:
        games, values = data["games"], data["values"]
    assert set(games) == set(np.random.SeedSequence(0).generate_state(3).tolist())
    searched = ~np.isnan(values).all(axis=1)
    held_out = split_by_game(games, 0.08, 0)
    # held-out games count only their searched decisions; the others train
    assert summary["decisions"] == {
        "train": int((~held_out).sum()),
        "validation": int((held_out & searched).sum()),
    }
    assert summary["searched_decisions"] == int(searched.sum()) > 0
    assert summary["policy"]["weights_sha256"] == read_policy(POLICY).fingerprint()
    agent = agents.load(export)
    env = raw_env(num_players=6)
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent.act(observation)] == 1
    capsys.readouterr()
    script.main(run)
    assert "reusing" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--cards", "0"], "--cards must be at least 1, got 0"),
        (["--search-budget", "0"], "--search-budget must be at least 1, got 0"),
        (["--soft-weight", "1.5"], "--soft-weight must lie in [0, 1], got 1.5"),
        (["--validation", "1"], "--validation must lie in [0, 1), got 1.0"),
        (["--players", "7"], "num_players must be one of"),
        (["--opponents", "nobody"], "nobody"),
        (["--policy", "no/such/policy.npz"], "no/such/policy.npz"),
        (["--policy", "checkpoints/friday_level1.npz"], "env_version"),
        (["--hidden-sizes", "64"], "hidden_sizes"),
    ],
)
def test_bad_options_are_refused_before_any_game(
    script, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        script.parse_args(options)
    assert message in capsys.readouterr().err
