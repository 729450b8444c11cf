"""Smoke tests of the training scripts: PPO (train, resume, fine-tune from a policy) and distillation of search."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.policy import save_policy
from friday13_env.friday13.agents.policy import observation_scale, policy_metadata, read_card_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout
from tests.scripts import load_training_script

pytest.importorskip("sb3_contrib", reason="the training extra is not installed")
torch = pytest.importorskip("torch")

SCRIPT = Path(__file__).resolve().parents[1] / "training" / "train_ppo.py"


def load_script():
    return load_training_script("train_ppo")


TINY = [
    "--num-envs", "2", "--no-subprocess", "--n-steps", "128", "--batch-size", "128", "--n-epochs", "1",
    "--hidden-sizes", "32", "32", "--eval-every", "512", "--eval-games", "8", "--checkpoint-every", "512",
    "--self-play", "--snapshot-every", "256", "--max-snapshots", "2", "--no-progress", "--players", "3", "5",
    "--init-policy", "", "--critic-warmup", "0",
]  # fmt: skip


def test_train_checkpoint_resume_reload_and_play(tmp_path: Path) -> None:
    train = load_script()
    run_dir = tmp_path / "run"
    started = time.time()
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "1024", *TINY])
    elapsed = time.time() - started
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["timesteps"] == 1024
    assert 0 < progress["wall_time_s"] <= elapsed + 0.1  # each checkpoint records time spent, not a running sum
    assert [point["timesteps"] for point in progress["curve"]] == [0, 512, 1024]  # 0: the initial policy
    assert progress["snapshots"] == ["snapshot_768", "snapshot_1024"]  # the pool keeps the newest two
    assert (run_dir / "last.zip").is_file() and (run_dir / "learning_curve.csv").is_file()

    with pytest.raises(SystemExit, match="already holds a run"):
        train.main(["--run-dir", str(run_dir), "--total-timesteps", "2048", *TINY])

    export = tmp_path / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "1536", "--resume", "--export", str(export), *TINY])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["timesteps"] == 1536
    assert [point["timesteps"] for point in progress["curve"]] == [0, 512, 1024, 1536]  # no second start point
    metadata = json.loads(str(np.load(export)["metadata"]))
    assert metadata["training"]["timesteps"] == 1536

    agent = agents.make(str(export), seed=0)
    env = raw_env(num_players=4)
    env.reset(seed=3)
    plays = 0
    for _ in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        action = None if terminated or truncated else agent.act(observation)
        plays += action is not None
        env.step(action)
    assert plays == 200  # four rounds of the 50-card deck


def test_bad_options_are_rejected_before_training(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train = load_script()
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "x"), "--players", "7"])
    assert "num_players must be one of" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no checkpoint"):
        train.main(["--run-dir", str(tmp_path / "missing"), "--resume"])
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "x"), "--init-temperature", "0"])
    assert "--init-temperature must be positive, got 0.0" in capsys.readouterr().err


def load_distill():
    return load_training_script("distill_search")


DISTILL_TINY = ["--players", "3", "--search-budget", "300", "--seed", "5", "--workers", "1", "--no-progress"]


def test_distillation_records_every_moves_value_in_chunks_it_reuses(tmp_path: Path) -> None:
    distill = load_distill()
    args = distill.parse_args(["--games", "2", *DISTILL_TINY])
    [job] = distill.chunk_jobs(args, tmp_path, "teacher", [11, 12])
    data = distill.play_games(job)
    masks, values, actions = data["masks"].astype(bool), data["values"], data["actions"]
    assert data["observations"].shape[0] == masks.shape[0] == actions.shape[0] == values.shape[0] > 0
    assert (masks.sum(axis=1) > 1).all()  # forced moves teach nothing and are left out
    assert np.array_equal(np.isnan(values), ~masks)  # a value for exactly the legal moves
    assert (values[np.arange(len(actions)), actions] == 0).all()  # relative to the teacher's move...
    assert (np.nanmax(values, axis=1) == 0).all()  # ...which is the best one
    assert (np.nanmin(values, axis=1) < 0).any()
    repeat = distill.play_games(job)
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
    distill = load_distill()
    nan = np.nan
    values = np.array([[0.0, -2.0, nan], [0.0, -2e-4, nan], [0.0, 0.0, 0.0]])
    masks = np.array([[1, 1, 0], [1, 1, 0], [1, 1, 1]])
    sharp = 1 / (1 + np.exp(-2.0))  # z = +1 and -1, softmax of (1, -1)
    expected = [[sharp, 1 - sharp, 0.0], [sharp, 1 - sharp, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    np.testing.assert_allclose(distill.soft_targets(values, masks, 1.0), expected, rtol=1e-6)
    sharper = 1 / (1 + np.exp(-4.0))
    np.testing.assert_allclose(distill.soft_targets(values[:1], masks[:1], 0.5), [[sharper, 1 - sharper, 0]], rtol=1e-6)


def test_the_validation_split_keeps_each_game_on_its_side_as_data_grows() -> None:
    distill = load_distill()
    games = np.repeat(np.arange(1_000, 1_400), 3)
    held_out = distill.split_by_game(games, 0.1, seed=0)
    assert 0.05 < held_out.mean() < 0.15
    assert np.array_equal(distill.split_by_game(games[:300], 0.1, seed=0), held_out[:300])
    assert distill.split_by_game(games[:3], 0.1, seed=0).all()  # one game at least is held out


def test_distillation_run_fits_exports_and_extends_its_data(tmp_path: Path) -> None:
    distill = load_distill()
    export = tmp_path / "distilled.npz"
    run = ["--players", "3", "--search-budget", "300", "--workers", "1", "--epochs", "2", "--hidden-sizes", "16",
           "--eval-games", "4", "--dagger-rounds", "0", "--no-progress",
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


def test_dagger_round_plays_the_student_and_labels_its_positions(tmp_path: Path) -> None:
    distill = load_distill()
    run = ["--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1", "--epochs", "1",
           "--hidden-sizes", "16", "--eval-games", "0", "--no-progress", "--out-dir", str(tmp_path / "run"),
           "--dagger-rounds", "1", "--dagger-games", "1", "--dagger-share", "1", "--dagger-opponents"]  # fmt: skip
    summary = distill.main(run)
    spec, data = distill.read_chunk(tmp_path / "run" / "chunks" / "dagger1_00000.npz")
    student = read_card_policy(tmp_path / "run" / "student_0.npz")
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


def test_more_dagger_rounds_keep_the_students_already_fitted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    distill = load_distill()
    fitted_rounds = []
    real_fit = distill.fit

    def counting_fit(args, data, scale):
        fitted_rounds.append(len(np.unique(data["games"])))
        return real_fit(args, data, scale)

    monkeypatch.setattr(distill, "fit", counting_fit)
    run = ["--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1", "--epochs", "1",
           "--hidden-sizes", "16", "--eval-games", "2", "--no-progress", "--out-dir", str(tmp_path / "run"),
           "--dagger-games", "1", "--dagger-opponents", "cautious"]  # fmt: skip
    first = distill.main([*run, "--dagger-rounds", "0"])
    student_0 = read_card_policy(tmp_path / "run" / "student_0.npz")
    assert student_0.metadata.training["evaluation"] == first["evaluation"]  # stored for a later run
    longer = distill.main([*run, "--dagger-rounds", "1"])
    assert fitted_rounds == [2, 3]  # round 0 kept, round 1 (2 teacher games + 1 DAgger game) fitted
    assert longer["rounds"][0] == first["rounds"][0] and longer["args"]["dagger_rounds"] == 1
    assert read_card_policy(tmp_path / "run" / "student_0.npz").fingerprint() == student_0.fingerprint()
    other_fit = ["--dagger-rounds", "1", "--learning-rate", "0.01", "--data-dir", str(tmp_path / "other")]
    distill.main([*run, *other_fit])  # another fit, so another student and DAgger data: every round again
    assert fitted_rounds == [2, 3, 2, 3]


def test_dagger_against_opponents_labels_only_the_students_seat(tmp_path: Path) -> None:
    distill = load_distill()
    run = ["--games", "2", "--players", "3", "--search-budget", "300", "--workers", "1", "--epochs", "1",
           "--hidden-sizes", "16", "--eval-games", "0", "--no-progress", "--out-dir", str(tmp_path / "run"),
           "--dagger-rounds", "1", "--dagger-games", "1", "--dagger-opponents", "cautious"]  # fmt: skip
    distill.main(run)
    spec, data = distill.read_chunk(tmp_path / "run" / "chunks" / "dagger1_00000.npz")
    assert spec["opponents"] == ["cautious"] and spec["student_share"] == 0.0
    student = read_card_policy(tmp_path / "run" / "student_0.npz")

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


def tiny_ppo_policy(path: Path, deck: str = "standard", hidden: int = 16) -> Path:
    """A random policy with the run's observation scale, as ``--init-policy`` would get it."""
    layout = observation_layout(get_deck(deck))
    actions = get_deck(deck).num_actions
    rng = np.random.default_rng(0)
    metadata = policy_metadata(deck, "relu", [hidden, hidden], "test policy")
    weights = [rng.normal(size=s) for s in [(layout.size, hidden), (hidden, hidden), (hidden, actions)]]
    biases = [rng.normal(size=hidden), rng.normal(size=hidden), rng.normal(size=actions)]
    save_policy(path, weights, biases, observation_scale(deck), metadata)
    return path


@pytest.mark.parametrize("temperature", [1.0, 0.1])
def test_init_policy_starts_the_ppo_actor_as_the_numpy_policy(tmp_path: Path, temperature: float) -> None:
    train = load_script()
    path = tiny_ppo_policy(tmp_path / "init.npz")
    args = train.parse_args(["--init-policy", str(path), "--hidden-sizes", "16", "16", "--num-envs", "1",
                             "--no-subprocess", "--batch-size", "128",
                             "--init-temperature", str(temperature)])  # fmt: skip
    init = train.initial_policy(args)
    vec_env = train.make_vec_env(args, init.input_scale)
    model = train.build_model(args, vec_env, tmp_path / "run", init)
    env = raw_env(num_players=4)
    env.reset(seed=2)
    raw = np.stack([env.observe(agent)["observation"] for agent in env.agents])
    with torch.no_grad():
        logits = model.policy.get_distribution(torch.as_tensor(raw * init.input_scale)).distribution.logits.numpy()
    expected = np.stack([init.logits(row) for row in raw]) / temperature
    expected -= expected.max(axis=1, keepdims=True)  # the distribution's normalised logits (log-softmax)
    expected -= np.log(np.exp(expected).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4)
    vec_env.close()


def test_critic_warmup_leaves_the_initial_actor_unchanged(tmp_path: Path) -> None:
    train = load_script()
    path = tiny_ppo_policy(tmp_path / "init.npz")
    export = tmp_path / "tuned.npz"
    common = ["--init-policy", str(path), "--hidden-sizes", "16", "16", "--num-envs", "2", "--no-subprocess",
              "--n-steps", "64", "--batch-size", "64", "--n-epochs", "1", "--eval-every", "0",
              "--no-progress"]  # fmt: skip
    train.main(["--run-dir", str(tmp_path / "a"), "--total-timesteps", "128", "--critic-warmup", "128",
                "--export", str(export), *common])  # fmt: skip
    initial, tuned = read_card_policy(path), read_card_policy(export)
    temperature = train.Args().init_temperature  # the default sharpens the start's logits, nothing else
    assert all(np.array_equal(a, b) for a, b in zip(initial.weights[:-1], tuned.weights[:-1], strict=True))
    np.testing.assert_allclose(tuned.weights[-1], initial.weights[-1] / temperature, rtol=1e-6)
    np.testing.assert_allclose(tuned.biases[-1], initial.biases[-1] / temperature, rtol=1e-6)
    train.main(["--run-dir", str(tmp_path / "b"), "--total-timesteps", "128", "--critic-warmup", "0",
                "--export", str(export), *common])  # fmt: skip
    tuned = read_card_policy(export)
    assert not np.array_equal(initial.weights[0], tuned.weights[0])  # without the warm-up the actor learns


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--hidden-sizes", "32", "32"], r"hidden_sizes: policy \[16, 16\] vs run \[32, 32\]"),
        (["--hidden-sizes", "16", "16", "--deck", "german"], "deck: policy 'standard' vs run 'german'"),
        (["--hidden-sizes", "16", "16", "--activation", "tanh"], "activation: policy 'relu' vs run 'tanh'"),
    ],
)
def test_init_policy_that_does_not_fit_the_run_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    train = load_script()
    path = tiny_ppo_policy(tmp_path / "init.npz")
    with pytest.raises(SystemExit):
        train.parse_args(["--init-policy", str(path), *flags])
    assert re.search(message, capsys.readouterr().err)


def test_the_default_run_starts_from_the_shipped_distilled_policy_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script()
    monkeypatch.chdir(tmp_path)
    init = train.initial_policy(train.parse_args([]))
    shipped = read_card_policy(SCRIPT.parents[1] / "checkpoints" / "search_distilled.npz")
    assert all(np.array_equal(a, b) for a, b in zip(init.weights, shipped.weights, strict=True))
    assert train.initial_policy(train.parse_args(["--init-policy", ""])) is None
    with pytest.raises(SystemExit):
        train.parse_args(["--deck", "german"])
    assert "--init-policy '' trains from scratch" in capsys.readouterr().err
