"""training/distill.py, both teachers: search (chunks, soft targets, DAgger) and an ensemble (member weights,
its logits), tiny runs end to end, every flag checked before any game, and defaults that are the recipes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.bench_agents import positions
from friday13_env import agents, raw_env
from friday13_env.core.checkpoint import save_policy
from friday13_env.friday import agents as friday_agents
from friday13_env.friday13.agents.policy import read_friday13_policy
from tests.scripts import TRAINING, load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")
from friday13_training import imitation

CHECKPOINTS = TRAINING.parent / "checkpoints"
SOLO_POLICY = str(next(iter(friday_agents.REGISTRY.zoo().values())))
"""A policy of the other game (the solo game's zoo)."""


@pytest.fixture(scope="module")
def distill():
    return load_training_script("distill")


# -- --teacher search -----------------------------------------------------------------------------
DISTILL_TINY = [
    "--teacher", "search", "--players", "3", "--search-budget", "300", "--seed", "5", "--workers", "1", "--no-progress",
]  # fmt: skip


def test_search_records_every_moves_value_in_chunks_it_reuses(distill, tmp_path: Path) -> None:
    args = distill.parse_args(["--games", "2", *DISTILL_TINY])
    [job] = distill.chunk_jobs(args, tmp_path, "teacher", [11, 12])
    data = distill.play_search_games(job)
    masks, values, actions = data["masks"].astype(bool), data["values"], data["actions"]
    assert data["observations"].shape[0] == masks.shape[0] == actions.shape[0] == values.shape[0] > 0
    assert (masks.sum(axis=1) > 1).all()  # forced moves teach nothing and are left out
    assert np.array_equal(np.isnan(values), ~masks)  # a value for exactly the legal moves
    assert (values[np.arange(len(actions)), actions] == 0).all()  # relative to the teacher's move...
    assert (np.nanmax(values, axis=1) == 0).all()  # ...which is the best one
    assert (np.nanmin(values, axis=1) < 0).any()
    repeat = distill.play_search_games(job)
    assert all(np.array_equal(data[key], repeat[key], equal_nan=True) for key in data)  # seeded teacher

    assert not distill.is_recorded(job)
    distill.write_chunk(job, data)
    assert distill.is_recorded(job)
    _, stored = distill.read_chunk(Path(job.path))
    assert np.array_equal(stored["values"], values, equal_nan=True)
    longer = distill.chunk_jobs(args, tmp_path, "teacher", [11, 12, 13])[0]
    assert not distill.is_recorded(longer)  # a part-full chunk is played again, whole
    other_budget = distill.chunk_jobs(distill.parse_args([*DISTILL_TINY, "--search-budget", "400"]), tmp_path,
                                      "teacher", [11, 12])[0]  # fmt: skip
    with pytest.raises(ValueError, match=r"recorded with \{'budget': 300\}, this run asks for \{'budget': 400\}"):
        distill.is_recorded(other_budget)


def test_soft_targets_standardise_each_decisions_values() -> None:
    nan = np.nan
    values = np.array([[0.0, -2.0, nan], [0.0, -2e-4, nan], [0.0, 0.0, 0.0]])
    masks = np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1]])
    sharp = 1 / (1 + np.exp(-2.0))  # z = +1 and -1, softmax of (1, -1)
    expected = [[sharp, 1 - sharp, 0.0], [sharp, 1 - sharp, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    np.testing.assert_allclose(imitation.soft_targets(values, masks, 1.0), expected, rtol=1e-6)
    sharper = 1 / (1 + np.exp(-4.0))
    soft = imitation.soft_targets(values[:1], masks[:1], 0.5)
    np.testing.assert_allclose(soft, [[sharper, 1 - sharper, 0]], rtol=1e-6)


def test_the_validation_split_keeps_each_game_on_its_side_as_data_grows() -> None:
    games = np.repeat(np.arange(1_000, 1_400), 3)
    held_out = imitation.split_by_game(games, 0.1, seed=0)
    assert 0.05 < held_out.mean() < 0.15
    assert np.array_equal(imitation.split_by_game(games[:300], 0.1, seed=0), held_out[:300])
    assert imitation.split_by_game(games[:3], 0.1, seed=0).all()  # one game at least is held out


def test_a_search_run_fits_exports_and_extends_its_data(distill, tmp_path: Path) -> None:
    export = tmp_path / "distilled.npz"
    run = ["--teacher", "search", "--players", "3", "--search-budget", "300", "--workers", "1", "--epochs", "2",
           "--hidden-sizes", "16", "--eval-games", "4", "--dagger-rounds", "0", "--no-progress",
           "--out-dir", str(tmp_path / "run")]  # fmt: skip
    summary = distill.main(["--games", "2", *run, "--export", str(export)])
    chunk = tmp_path / "run" / "chunks" / "teacher_00000.npz"
    assert distill.read_chunk(chunk)[0]["seeds"] == np.random.SeedSequence(0).generate_state(2).tolist()
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == json.loads(json.dumps(summary))
    assert summary["best_epoch"] in (0, 1, 2) and len(summary["history"]) == 2
    assert set(summary["evaluation"]) == {"cautious", "majority"}
    agent = agents.load(export)
    env = raw_env(num_players=3)
    env.reset(seed=0)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent.act(observation)] == 1

    before = chunk.stat().st_mtime_ns
    summary = distill.main(["--games", "3", *run, "--eval-games", "0"])  # one more game: the chunk is replayed
    assert distill.read_chunk(chunk)[0]["seeds"] == np.random.SeedSequence(0).generate_state(3).tolist()
    decisions = sum(summary["decisions"].values())
    mtime = chunk.stat().st_mtime_ns
    assert mtime != before
    summary = distill.main(["--games", "3", *run, "--eval-games", "0"])  # nothing new: reused as it is
    assert chunk.stat().st_mtime_ns == mtime and sum(summary["decisions"].values()) == decisions


def test_dagger_round_plays_the_student_and_labels_its_positions(distill, tmp_path: Path) -> None:
    run = ["--teacher", "search", "--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1",
           "--epochs", "1", "--hidden-sizes", "16", "--eval-games", "0", "--no-progress",
           "--out-dir", str(tmp_path / "run"), "--dagger-rounds", "1", "--dagger-games", "1", "--dagger-share", "1",
           "--dagger-opponents"]  # fmt: skip
    summary = distill.main(run)
    spec, data = distill.read_chunk(tmp_path / "run" / "chunks" / "dagger1_00000.npz")
    student = read_friday13_policy(tmp_path / "run" / "student_0.npz")
    assert spec["student_share"] == 1.0 and spec["student_weights_sha256"] == student.fingerprint()
    assert len(summary["rounds"]) == 2 and len(spec["seeds"]) == 1
    # every seat is the student: replaying its greedy moves from the deal meets exactly the recorded positions
    env = raw_env(num_players=3)
    env.reset(seed=spec["seeds"][0])
    positions = []
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        legal = np.flatnonzero(observation["action_mask"])
        if not (terminated or truncated) and legal.size > 1:
            positions.append(observation["observation"])
        env.step(None if terminated or truncated else student.choose(observation["observation"], legal))
    assert np.array_equal(data["observations"], np.array(positions))
    assert (data["values"][np.arange(len(positions)), data["actions"]] == 0).all()  # labelled by the teacher


def test_more_dagger_rounds_keep_the_students_already_fitted(
    distill, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fitted_rounds = []
    real_fit = distill.fit_search

    def counting_fit(args, data, scale):
        fitted_rounds.append(len(np.unique(data["games"])))
        return real_fit(args, data, scale)

    monkeypatch.setattr(distill, "fit_search", counting_fit)
    run = ["--teacher", "search", "--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1",
           "--epochs", "1", "--hidden-sizes", "16", "--eval-games", "2", "--no-progress",
           "--out-dir", str(tmp_path / "run"), "--dagger-games", "1", "--dagger-opponents", "cautious"]  # fmt: skip
    first = distill.main([*run, "--dagger-rounds", "0"])
    student_0 = read_friday13_policy(tmp_path / "run" / "student_0.npz")
    assert student_0.metadata.training["evaluation"] == first["evaluation"]  # stored for a later run
    longer = distill.main([*run, "--dagger-rounds", "1"])
    assert fitted_rounds == [2, 3]  # round 0 kept, round 1 (2 teacher games + 1 DAgger game) fitted
    assert longer["rounds"][0] == first["rounds"][0] and longer["args"]["dagger_rounds"] == 1
    assert read_friday13_policy(tmp_path / "run" / "student_0.npz").fingerprint() == student_0.fingerprint()
    other_fit = ["--dagger-rounds", "1", "--learning-rate", "0.01", "--data-dir", str(tmp_path / "other")]
    distill.main([*run, *other_fit])  # another fit, so another student and DAgger data: every round again
    assert fitted_rounds == [2, 3, 2, 3]


def test_dagger_against_opponents_labels_only_the_students_seat(distill, tmp_path: Path) -> None:
    run = ["--teacher", "search", "--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1",
           "--epochs", "1", "--hidden-sizes", "16", "--eval-games", "0", "--no-progress",
           "--out-dir", str(tmp_path / "run"), "--dagger-rounds", "1", "--dagger-games", "1",
           "--dagger-opponents", "cautious"]  # fmt: skip
    distill.main(run)
    spec, data = distill.read_chunk(tmp_path / "run" / "chunks" / "dagger1_00000.npz")
    assert spec["opponents"] == ["cautious"] and spec["student_share"] == 0.0
    student = read_friday13_policy(tmp_path / "run" / "student_0.npz")

    def student_positions(student_seat: int) -> list[np.ndarray]:
        """Replay the deal with the student at one seat and ``cautious`` (deterministic) at the others."""
        env = raw_env(num_players=3)
        env.reset(seed=spec["seeds"][0])
        cautious, positions = agents.make("cautious"), []
        for agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            legal = np.flatnonzero(observation["action_mask"])
            if terminated or truncated:
                env.step(None)
            elif env.possible_agents.index(agent) != student_seat:
                env.step(cautious.act(observation))
            else:
                if legal.size > 1:
                    positions.append(observation["observation"])
                env.step(student.choose(observation["observation"], legal))
        return positions

    replays = [np.array(student_positions(seat)) for seat in range(3)]
    matches = [seat for seat, positions in enumerate(replays) if np.array_equal(data["observations"], positions)]
    assert len(matches) == 1  # one seat's positions, all of them, and only those
    assert (data["values"][np.arange(len(data["actions"])), data["actions"]] == 0).all()  # labelled by the teacher


# -- --teacher ensemble ----------------------------------------------------------------------------
def sharpened_copy(path: Path, factor: float, out: Path) -> Path:
    """The policy with its logits multiplied by ``factor``: same moves, ``factor`` times the spread."""
    policy = read_friday13_policy(path)
    weights = [*policy.weights[:-1], policy.weights[-1] * factor]
    biases = [*policy.biases[:-1], policy.biases[-1] * factor]
    save_policy(out, weights, biases, policy.input_scale, policy.metadata)
    return out


def test_member_weights_undo_a_members_scale_and_the_ensemble_averages_them(distill, tmp_path: Path) -> None:
    base = CHECKPOINTS / "search_distilled.npz"
    sharp = read_friday13_policy(sharpened_copy(base, 8.0, tmp_path / "sharp.npz"))
    plain = read_friday13_policy(base)
    found = positions(300, seed=0)
    observations = np.array([row["observation"] for row in found])
    masks = np.array([row["action_mask"] for row in found])
    weights = distill.member_weights([plain, sharp], observations, masks)
    np.testing.assert_allclose(weights, [1.0, 0.125], rtol=1e-4)
    ensemble = distill.Ensemble([plain, sharp], weights)
    for row in observations[:20]:  # two copies of one policy at equal voice: the policy itself
        np.testing.assert_allclose(ensemble.logits(row), plain.logits(row), rtol=1e-4, atol=1e-4)
    flat = read_friday13_policy(sharpened_copy(base, 0.0, tmp_path / "flat.npz"))
    with pytest.raises(ValueError, match=r"members \[1\] give every legal move the same logit"):
        distill.member_weights([plain, flat], observations, masks)
    other = read_friday13_policy(CHECKPOINTS / "ppo_finetuned.npz")
    mixed = distill.Ensemble([plain, other], [1.0, 0.5])
    np.testing.assert_allclose(
        mixed.logits(observations[0]),
        (plain.logits(observations[0]) + 0.5 * other.logits(observations[0])) / 2,
        rtol=1e-5,
    )


def test_a_run_records_the_ensembles_moves_fits_exports_and_reuses_its_data(
    distill, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = tmp_path / "student.npz"
    run = ["--teacher", "ensemble", "--members", str(CHECKPOINTS / "search_distilled.npz"),
           str(CHECKPOINTS / "ppo_finetuned.npz"),
           "--games", "3", "--calibration-games", "1", "--players", "3", "--epochs", "2", "--workers", "1",
           "--eval-games", "0", "--no-progress", "--out-dir", str(tmp_path / "run")]  # fmt: skip
    summary = distill.main([*run, "--export", str(export)])
    assert json.loads((tmp_path / "run" / "summary.json").read_text()) == json.loads(json.dumps(summary))
    assert summary["members"][0]["weight"] == 1.0
    assert summary["best_epoch"] in (0, 1, 2) and len(summary["history"]) == 2
    with np.load(tmp_path / "run" / "positions.npz") as data:
        games, logits = data["games"], data["logits"]
    assert set(games) == set(np.random.SeedSequence(0).generate_state(3).tolist())
    assert sum(summary["decisions"].values()) == games.size
    # the recorded logits are the ensemble's on the recorded observation
    members = [read_friday13_policy(CHECKPOINTS / name) for name in ("search_distilled.npz", "ppo_finetuned.npz")]
    weights = [member["weight"] for member in summary["members"]]
    with np.load(tmp_path / "run" / "positions.npz") as data:
        first = data["observations"][0]
    np.testing.assert_allclose(logits[0], distill.Ensemble(members, weights).logits(first), rtol=1e-5, atol=1e-5)

    agent = agents.load(export)
    env = raw_env(num_players=5)
    env.reset(seed=1)
    observation = env.observe(env.agent_selection)
    assert observation["action_mask"][agent.act(observation)] == 1
    capsys.readouterr()
    distill.main(run)
    assert "reusing" in capsys.readouterr().out


# -- the command line -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ([], "the following arguments are required: --teacher"),
        (["--games", "3"], "the following arguments are required: --teacher"),
        (["--teacher", "endgame"], "argument --teacher: invalid choice: 'endgame'"),
        (["--teacher", "search", "--members", "x.npz"], "--members is a flag of --teacher ensemble"),
        (["--teacher", "ensemble", "--search-budget", "5"], "--search-budget is a flag of --teacher search"),
        (["--teacher", "ensemble", "--members"], "argument --members: expected at least one argument"),
        (["--teacher", "ensemble", "--members", SOLO_POLICY], "Friday the 13th plays 'friday13_v0' policies"),
        (["--teacher", "ensemble", "--members", "no/such/policy.npz"], "no/such/policy.npz"),
        (["--teacher", "ensemble", "--players", "7"], "argument --players: must be at least 3 and at most 6, got 7"),
        (["--teacher", "ensemble", "--opponents", "nobody"], "--opponents: unknown Friday the 13th agent 'nobody'"),
        (
            ["--teacher", "ensemble", "--games", "0"],
            "argument --games: must be at least 2 and at most 1,000,000, got 0",
        ),
        (["--teacher", "ensemble", "--validation", "0"], "argument --validation: must be above 0 and below 1, got 0"),
        (["--teacher", "search", "--validation", "1"], "argument --validation: must be above 0 and below 1, got 1"),
        (["--teacher", "search", "--soft-weight", "2"], "argument --soft-weight: must be at least 0 and at most 1"),
        (["--teacher", "search", "--soft-temperature", "0"], "argument --soft-temperature: must be above 0, got 0"),
        (
            ["--teacher", "search", "--learning-rate", "-1"],
            "argument --learning-rate: must be above 0 and at most 1, got -1",
        ),
        (["--teacher", "search", "--hidden-sizes", "0"], "argument --hidden-sizes: must be at least 1, got 0"),
        (["--teacher", "search", "--dagger-opponents", "search:budget=x"], "--dagger-opponents: search option budget"),
        (["--teacher", "search", "--eval-opponents", "cautious", "cautious"], "cautious is listed twice"),
        (
            ["--teacher", "search", "--eval-games", "-1"],
            "argument --eval-games: must be at least 0 and at most 1,000,000, got -1",
        ),
        (["--teacher", "search", "--export", "/"], "--export: / is a directory"),
    ],
)
def test_bad_options_are_refused_before_any_game(
    distill, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        distill.parse_args(options)
    assert message in capsys.readouterr().err


def test_the_students_start_must_fit_its_network(distill, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        distill.parse_args(["--teacher", "ensemble", "--hidden-sizes", "64"])
    assert "--init-policy: " in capsys.readouterr().err


def test_members_of_another_deck_are_refused(distill, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        distill.parse_args(["--teacher", "ensemble", "--deck", "german", "--init-policy", ""])
    assert (
        "--members: checkpoints/search_distilled.npz is a friday13_v0 policy for the 'standard' deck, this run needs"
        " the 'german' deck"
    ) in capsys.readouterr().err


def test_policies_and_agents_may_be_zoo_names_and_specs_with_options(distill) -> None:
    args = distill.parse_args(["--teacher", "ensemble", "--members", "ensemble-v1", "--init-policy", "ensemble-v1",
                               "--opponents", "search: budget=50", "--eval-opponents", "ensemble-v1"])  # fmt: skip
    assert args.opponents == ["search:budget=50"] and args.eval_opponents == ["ensemble-v1"]
    args = distill.parse_args(["--teacher", "search", "--dagger-opponents", "endgame:budget=100", "ensemble-v1"])
    assert args.dagger_opponents == ["endgame:budget=100", "ensemble-v1"]
    assert distill.parse_args(["--teacher", "search", "--dagger-opponents"]).dagger_opponents == []


def test_a_teachers_flags_are_its_own_in_the_help(distill, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        distill.parse_args(["--teacher", "ensemble", "--help"])
    help_text = capsys.readouterr().out
    assert "--members" in help_text and "--search-budget" not in help_text
    with pytest.raises(SystemExit):
        distill.parse_args(["--help"])
    assert "--teacher NAME --help" in " ".join(capsys.readouterr().out.split())


RUN_SETTINGS = {"workers", "out_dir", "data_dir", "export", "progress", "torch_threads", "teacher"}


def test_the_search_teachers_defaults_are_the_recipe_of_its_shipped_policy(distill) -> None:
    recorded = read_friday13_policy(CHECKPOINTS / "search_distilled.npz").metadata.training["args"]
    defaults = vars(distill.SearchArgs())
    assert {key: defaults[key] for key in recorded if key not in RUN_SETTINGS} == {
        key: value for key, value in recorded.items() if key not in RUN_SETTINGS
    }
    assert set(defaults) - set(recorded) == {"teacher"}


def test_the_ensemble_teachers_defaults_are_the_recipe_of_ensemble_v1(distill) -> None:
    """``python training/distill.py --teacher ensemble`` trains the zoo's ensemble-v1 (same data, same fit)."""
    recorded = dict(read_friday13_policy(agents.REGISTRY.zoo()["ensemble-v1"]).metadata.training["args"])
    recorded["members"] = recorded.pop("teachers")  # the flag's name before the two scripts became one
    defaults = vars(distill.EnsembleArgs())
    assert {key: defaults[key] for key in recorded if key not in RUN_SETTINGS} == {
        key: value for key, value in recorded.items() if key not in RUN_SETTINGS
    }
    assert set(defaults) - set(recorded) == {"teacher"}
    fingerprints = [member["weights_sha256"] for member in read_friday13_policy(
        agents.REGISTRY.zoo()["ensemble-v1"]).metadata.training["members"]]  # fmt: skip
    assert [read_friday13_policy(TRAINING.parent / name).fingerprint() for name in defaults["members"]] == fingerprints


def test_a_damaged_data_chunk_is_named(distill, tmp_path: Path) -> None:
    run = ["--teacher", "search", "--games", "2", "--players", "3", "--search-budget", "50", "--workers", "1",
           "--epochs", "1", "--hidden-sizes", "8", "--eval-games", "0", "--dagger-rounds", "0", "--no-progress",
           "--out-dir", str(tmp_path / "run")]  # fmt: skip
    chunk = tmp_path / "run" / "chunks" / "teacher_00000.npz"
    chunk.parent.mkdir(parents=True)
    chunk.write_bytes(b"half a file")
    with pytest.raises(SystemExit, match=f"error: {chunk} is damaged"):
        distill.main(run)
