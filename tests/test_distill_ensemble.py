"""The ensemble distillation script: member weights, the ensemble's logits, a run end to end, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bench_agents import positions
from friday13_env import agents, raw_env
from friday13_env.core.policy import save_policy
from friday13_env.friday13.agents.policy import read_card_policy
from tests.scripts import TRAINING, load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")

CHECKPOINTS = TRAINING.parent / "checkpoints"


@pytest.fixture(scope="module")
def script():
    return load_training_script("distill_ensemble")


def sharpened_copy(path: Path, factor: float, out: Path) -> Path:
    """The policy with its logits multiplied by ``factor``: same moves, ``factor`` times the spread."""
    policy = read_card_policy(path)
    weights = [*policy.weights[:-1], policy.weights[-1] * factor]
    biases = [*policy.biases[:-1], policy.biases[-1] * factor]
    save_policy(out, weights, biases, policy.input_scale, policy.metadata)
    return out


def test_member_weights_undo_a_members_scale_and_the_ensemble_averages_them(script, tmp_path: Path) -> None:
    base = CHECKPOINTS / "search_distilled.npz"
    sharp = read_card_policy(sharpened_copy(base, 8.0, tmp_path / "sharp.npz"))
    plain = read_card_policy(base)
    found = positions(300, seed=0)
    observations = np.array([row["observation"] for row in found])
    masks = np.array([row["action_mask"] for row in found])
    weights = script.member_weights([plain, sharp], observations, masks)
    np.testing.assert_allclose(weights, [1.0, 0.125], rtol=1e-4)
    ensemble = script.Ensemble([plain, sharp], weights)
    for row in observations[:20]:  # two copies of one policy at equal voice: the policy itself
        np.testing.assert_allclose(ensemble.logits(row), plain.logits(row), rtol=1e-4, atol=1e-4)
    flat = read_card_policy(sharpened_copy(base, 0.0, tmp_path / "flat.npz"))
    with pytest.raises(ValueError, match=r"members \[1\] give every legal move the same logit"):
        script.member_weights([plain, flat], observations, masks)
    other = read_card_policy(CHECKPOINTS / "ppo_finetuned.npz")
    mixed = script.Ensemble([plain, other], [1.0, 0.5])
    np.testing.assert_allclose(
        mixed.logits(observations[0]),
        (plain.logits(observations[0]) + 0.5 * other.logits(observations[0])) / 2,
        rtol=1e-5,
    )


def test_a_run_records_the_ensembles_moves_fits_exports_and_reuses_its_data(
    script, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "student.npz"
    run = ["--teachers", str(CHECKPOINTS / "search_distilled.npz"), str(CHECKPOINTS / "ppo_finetuned.npz"),
           "--games", "3", "--calibration-games", "1", "--players", "3", "--epochs", "2", "--workers", "1",
           "--eval-games", "0", "--no-progress", "--out-dir", str(tmp_path / "run")]  # fmt: skip
    summary = script.main([*run, "--export", str(export)])
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == json.loads(json.dumps(summary))
    assert summary["members"][0]["weight"] == 1.0
    assert summary["best_epoch"] in (0, 1, 2) and len(summary["history"]) == 2
    with np.load(tmp_path / "run" / "positions.npz") as data:
        games, logits = data["games"], data["logits"]
    assert set(games) == set(np.random.SeedSequence(0).generate_state(3).tolist())
    assert sum(summary["decisions"].values()) == games.size
    # the recorded logits are the ensemble's on the recorded observation
    members = [read_card_policy(CHECKPOINTS / name) for name in ("search_distilled.npz", "ppo_finetuned.npz")]
    weights = [member["weight"] for member in summary["members"]]
    with np.load(tmp_path / "run" / "positions.npz") as data:
        first = data["observations"][0]
    np.testing.assert_allclose(logits[0], script.Ensemble(members, weights).logits(first), rtol=1e-5, atol=1e-5)

    agent = agents.load(export)
    env = raw_env(num_players=5)
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent.act(observation)] == 1
    capsys.readouterr()
    script.main(run)
    assert "reusing" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--teachers"], "--teachers: expected at least one argument"),
        (["--teachers", "checkpoints/friday_level1.npz"], "this run needs friday13_v0"),
        (["--teachers", "no/such/policy.npz"], "no/such/policy.npz"),
        (["--players", "7"], "num_players must be one of"),
        (["--opponents", "nobody"], "nobody"),
        (["--games", "0"], "--games must be at least 1, got 0"),
    ],
)
def test_bad_options_are_refused_before_any_game(
    script, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        script.parse_args(options)
    assert message in capsys.readouterr().err


def test_the_students_start_must_fit_its_network(script, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        script.parse_args(["--hidden-sizes", "64"])
    assert "hidden" in capsys.readouterr().err


def test_members_of_another_deck_are_refused(script, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        script.parse_args(["--deck", "german", "--init-policy", ""])
    assert (
        "checkpoints/search_distilled.npz is a friday13_v0 policy for the 'standard' deck, this run needs"
        " friday13_v0 with the 'german' deck"
    ) in capsys.readouterr().err
