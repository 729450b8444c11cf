"""training/finetune_ppo.py: train, checkpoint, resume, fine-tune from a policy; every flag and every run file
checked (bad values refused up front, a changed hyperparameter refused on resume, a finished run resumed
cleanly, damaged files named, every output written atomically)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents, raw_env
from friday13_env.core.checkpoint import save_policy
from friday13_env.friday13.agents.policy import observation_scale, policy_metadata, read_friday13_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout
from tests.scripts import load_training_script, policy_arrays

pytest.importorskip("sb3_contrib", reason="the training extra is not installed")
torch = pytest.importorskip("torch")
pytestmark = pytest.mark.slow  # PPO runs: CI runs them with `pytest -m slow`

REPOSITORY = Path(__file__).resolve().parents[2]


def load_script():
    return load_training_script("finetune_ppo")


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
    assert "argument --players: must be at least 3 and at most 6, got 7" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no checkpoint"):
        train.main(["--run-dir", str(tmp_path / "missing"), "--resume"])
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "x"), "--init-temperature", "0"])
    bounds = "at least 0.000976562 and at most 1024"  # 1 / train_ppo.py's bounds on --init-sharpness
    assert f"argument --init-temperature: must be {bounds}, got 0" in capsys.readouterr().err


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


def test_critic_warmup_leaves_the_initial_actor_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--critic-warmup 128`` of a 256-step run (rollouts of 128): the checkpoint written after the first update
    (the critic's alone) holds the start, sharpened and nothing else; the second update moves the actor. (A warm-up
    covering the whole run is refused: the actor would never learn.)"""
    train = load_script()
    path = tiny_ppo_policy(tmp_path / "init.npz")
    export = tmp_path / "tuned.npz"
    common = ["--init-policy", str(path), "--hidden-sizes", "16", "16", "--num-envs", "2", "--no-subprocess",
              "--n-steps", "64", "--batch-size", "64", "--n-epochs", "1", "--eval-every", "0",
              "--checkpoint-every", "128", "--no-progress"]  # fmt: skip
    saved = []
    save = train.TrainingCallback.save

    def saving(callback: object, steps: int) -> None:
        save(callback, steps)
        saved.append(read_friday13_policy(tmp_path / "a" / "policy.npz"))

    monkeypatch.setattr(train.TrainingCallback, "save", saving)
    train.main(["--run-dir", str(tmp_path / "a"), "--total-timesteps", "256", "--critic-warmup", "128",
                "--export", str(export), *common])  # fmt: skip
    assert len(saved) == 3  # 128 (no update yet), 256 (after the first update, the last rollout's steps), the end
    initial, warm, tuned = read_friday13_policy(path), saved[1], read_friday13_policy(export)
    temperature = train.Args().init_temperature  # the default sharpens the start's logits, nothing else
    assert all(np.array_equal(a, b) for a, b in zip(initial.weights[:-1], warm.weights[:-1], strict=True))
    np.testing.assert_allclose(warm.weights[-1], initial.weights[-1] / temperature, rtol=1e-6)
    np.testing.assert_allclose(warm.biases[-1], initial.biases[-1] / temperature, rtol=1e-6)
    assert not np.array_equal(initial.weights[0], tuned.weights[0])  # after the warm-up the actor learns


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
    shipped = read_friday13_policy(REPOSITORY / "checkpoints" / "search_distilled.npz")
    assert all(np.array_equal(a, b) for a, b in zip(init.weights, shipped.weights, strict=True))
    assert train.initial_policy(train.parse_args(["--init-policy", ""])) is None
    with pytest.raises(SystemExit):
        train.parse_args(["--deck", "german"])
    assert "--init-policy '' trains from scratch" in capsys.readouterr().err


def test_an_init_policy_may_be_a_zoo_name(tmp_path: Path) -> None:
    train = load_script()
    args = train.parse_args(["--init-policy", "ensemble-v1", "--run-dir", str(tmp_path / "run")])
    zoo = read_friday13_policy(agents.REGISTRY.zoo()["ensemble-v1"])
    assert train.initial_policy(args).fingerprint() == zoo.fingerprint()


# -- issue 18, item 15: every flag checked up front ------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--n-steps", "0"], "argument --n-steps: must be at least 1, got 0"),
        (["--hidden-sizes", "0"], "argument --hidden-sizes: must be at least 1, got 0"),
        (["--gamma", "5"], "argument --gamma: must be at least 0 and at most 1, got 5"),
        (["--learning-rate", "-1"], "argument --learning-rate: must be above 0 and at most 1, got -1"),
        (["--learning-rate", "nan"], "argument --learning-rate: must be a finite number, got nan"),
        (["--max-snapshots", "0"], "argument --max-snapshots: must be at least 1, got 0"),
        (["--num-envs", "0"], "argument --num-envs: must be at least 1 and at most 1,024, got 0"),
        (
            ["--total-timesteps", "0"],
            "argument --total-timesteps: must be at least 1 and at most 1,000,000,000,000,000, got 0",
        ),
        (["--batch-size", "1"], "argument --batch-size: must be at least 2, got 1"),
        (["--batch-size", "4096"], "--batch-size 4096 exceeds one rollout (2 x 1 steps)"),
        (["--seed", "-1"], "argument --seed: must be at least 0 and at most 4,294,967,295, got -1"),
        (["--clip-range", "0"], "argument --clip-range: must be above 0 and at most 10, got 0"),
        (["--activation", "gelu"], "argument --activation: invalid choice: 'gelu'"),
        (["--reward", "score"], "argument --reward: invalid choice: 'score'"),
        (["--deck", "french"], "argument --deck: invalid choice: 'french'"),
        (["--eval-opponents", "nobody"], "--eval-opponents: unknown Friday the 13th agent 'nobody'"),
        (["--eval-opponents", "search:budgett=5"], "--eval-opponents: agent 'search' has no option(s) ['budgett']"),
        (["--eval-opponents", "cautious", "cautious"], "--eval-opponents: cautious is listed twice"),
        (["--opponents", "missing/policy.npz"], "--opponents: no policy checkpoint at 'missing/policy.npz'"),
        (
            ["--opponents", "ensemble-v1", "--deck", "german", "--init-policy", ""],
            "--opponents: ensemble-v1 plays the 'standard' deck, this run the 'german' deck",
        ),
        (["--init-policy", "ensemble-v9"], "--init-policy: no policy checkpoint at 'ensemble-v9'"),
        (["--run-name", ""], "--run-name must not be empty"),
    ],
)
def test_every_flag_is_checked_before_anything_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    train = load_script()
    monkeypatch.chdir(tmp_path)
    tiny = [
        "--total-timesteps",
        "2",
        "--num-envs",
        "1",
        "--no-subprocess",
        "--n-steps",
        "2",
        "--batch-size",
        "2",
        "--eval-every",
        "0",
        "--critic-warmup",
        "0",
        "--no-progress",
    ]  # fmt: skip  (should a bad flag get through, the run is short)
    with pytest.raises(SystemExit):
        train.main([*tiny, *flags])
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # no run directory


def test_outputs_that_cannot_be_written_are_refused_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script()
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "run"), "--export", str(tmp_path)])
    assert f"--export: {tmp_path} is a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "run"), "--export", str(tmp_path / "file" / "policy.npz")])
    assert "--export: " in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "file")])
    assert "is a file, not a directory" in capsys.readouterr().err


def test_opponent_flags_take_agent_specs_with_options_and_zoo_names(tmp_path: Path) -> None:
    train = load_script()
    args = train.parse_args(["--run-dir", str(tmp_path / "run"), "--opponents", "cautious", "search: budget = 50",
                             "--eval-opponents", "ensemble-v1", "search:budget=20,objective=rank"])  # fmt: skip
    assert args.opponents == ["cautious", "search:budget=50"]  # canonical: they name the run's curve columns
    assert args.eval_opponents == ["ensemble-v1", "search:budget=20,objective=rank"]


# -- a finished tiny run to resume, damage and inspect ---------------------------------------------
RUN = [
    "--num-envs", "2", "--no-subprocess", "--n-steps", "64", "--batch-size", "64", "--n-epochs", "1",
    "--hidden-sizes", "16", "--eval-every", "128", "--eval-games", "4", "--checkpoint-every", "128",
    "--self-play", "--snapshot-every", "128", "--max-snapshots", "1", "--no-progress", "--players", "3",
    "--init-policy", "", "--critic-warmup", "0", "--learning-rate", "1e-4", "--gamma", "0.9",
    "--opponents", "cautious", "search:budget=20", "--eval-opponents", "search:budget=20", "ensemble-v1",
]  # fmt: skip


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 256 timesteps; tests copy it before changing it."""
    run_dir = tmp_path_factory.mktemp("ppo") / "run"
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "256", *RUN])
    return run_dir


def copy_of(run_dir: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(run_dir, tmp_path / "run"))


def test_a_run_records_its_arguments_and_names_its_curve_by_the_agent_specs(finished_run: Path) -> None:
    progress = json.loads((finished_run / "progress.json").read_text())
    assert progress["timesteps"] == 256 and progress["snapshots"] == ["snapshot_256"]
    assert progress["args"]["learning_rate"] == 1e-4
    assert progress["args"]["opponents"] == ["cautious", "search:budget=20"]
    header = (finished_run / "learning_curve.csv").read_text().splitlines()[0]
    assert header == "timesteps,search:budget=20,ensemble-v1"
    assert [point["timesteps"] for point in progress["curve"]] == [0, 128, 256]
    assert not [path for path in finished_run.rglob("*") if ".tmp" in path.name]  # no temporary file left


def test_resume_refuses_a_changed_hyperparameter_and_lists_each_one(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    before = {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512", "--learning-rate", "1e-3",
                    "--gamma", "0.9", "--hidden-sizes", "32", "--no-progress"])  # fmt: skip
    message = str(exit_info.value)
    assert "--learning-rate: the run has 0.0001, the command line 0.001" in message
    assert "--hidden-sizes: the run has [16], the command line [32]" in message
    assert "--gamma" not in message  # given, but the run's own value
    assert {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()} == before


def test_resume_goes_on_with_the_runs_hyperparameters_and_records_those(finished_run: Path, tmp_path: Path) -> None:
    """Only the run settings come from the command line; the export records what was trained."""
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    export = tmp_path / "out" / "policy.npz"
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384", "--export", str(export),
                "--n-steps", "64", "--eval-opponents", "search: budget=20", "ensemble-v1"])  # fmt: skip
    # (the run's own values, given again: the default --batch-size 512 would not fit --n-steps 64 x 8 envs, and the
    # spec is the run's in other spelling)
    recorded = read_friday13_policy(export).metadata.training
    assert recorded["timesteps"] == 384
    args = recorded["args"]
    assert (args["learning_rate"], args["gamma"], args["hidden_sizes"], args["n_steps"]) == (1e-4, 0.9, [16], 64)
    assert args["total_timesteps"] == 384 and args["subprocess"] is False and args["progress"] is False
    model = train.MaskablePPO.load(run_dir / "last.zip", device="cpu")
    assert (model.learning_rate, model.gamma, model.n_steps) == (1e-4, 0.9, 64)  # what SB3 trained with
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["args"] == args and [point["timesteps"] for point in progress["curve"]] == [0, 128, 256, 384]


def test_resuming_a_finished_run_exits_cleanly(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    before = {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}
    export = tmp_path / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--resume", "--export", str(export), "--total-timesteps", "256"])
    assert "is finished: 256 timesteps done" in capsys.readouterr().out
    assert {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()} == before
    assert export.read_bytes() == before["policy.npz"]
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "100"])  # asked for less: the same


def test_a_run_stopped_after_its_final_checkpoint_but_before_its_record_is_completed_on_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kill between writing ``last.zip`` at the run's end and writing ``policy.npz`` and ``progress.json`` leaves the
    two of the checkpoint before. ``--resume`` to the same end trains nothing, writes the policy and the record of
    the checkpoint it took, and exports that policy (not the one behind it)."""
    train = load_script()
    run_dir = tmp_path / "run"
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "128", *RUN])
    earlier = {name: (run_dir / name).read_bytes() for name in ("policy.npz", "progress.json")}
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256"])
    final = policy_arrays(run_dir / "policy.npz")
    for name, data in earlier.items():  # as the kill left them: last.zip at 256, the other two at 128
        (run_dir / name).write_bytes(data)
    capsys.readouterr()
    export = tmp_path / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256", "--export", str(export)])
    out = capsys.readouterr().out
    assert "ahead of progress.json; going on from 256 timesteps" in out
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == 256
    for path in (run_dir / "policy.npz", export):
        written = policy_arrays(path)
        assert written.keys() == final.keys() and all(np.array_equal(written[key], final[key]) for key in final)


def damage(run_dir: Path, what: str) -> str:
    """Damage one file of a run; returns the file's name, which the error must give."""
    if what == "last.zip garbage":
        (run_dir / "last.zip").write_bytes(b"not a zip file")
        return "last.zip"
    if what == "last.zip truncated":
        (run_dir / "last.zip").write_bytes((run_dir / "last.zip").read_bytes()[:4000])
        return "last.zip"
    progress_file = run_dir / "progress.json"
    progress = json.loads(progress_file.read_text())
    if what == "progress.json truncated":
        progress_file.write_text(progress_file.read_text()[:40])
    elif what == "progress.json without timesteps":
        del progress["timesteps"]
        progress_file.write_text(json.dumps(progress))
    elif what == "progress.json with a bad argument":
        progress["args"]["n_steps"] = 0
        progress_file.write_text(json.dumps(progress))
    elif what == "progress.json ahead of last.zip":
        progress["timesteps"] = 10_000
        progress_file.write_text(json.dumps(progress))
    elif what == "snapshot missing":
        (run_dir / "snapshots" / "snapshot_256.npz").unlink()
        return "snapshot_256.npz"
    elif what == "policy.npz missing":
        (run_dir / "policy.npz").unlink()
        return "policy.npz"
    return "progress.json"


@pytest.mark.parametrize(
    "what",
    [
        "last.zip garbage",
        "last.zip truncated",
        "progress.json truncated",
        "progress.json without timesteps",
        "progress.json with a bad argument",
        "progress.json ahead of last.zip",
        "snapshot missing",
        "policy.npz missing",
    ],
)
def test_a_damaged_run_file_is_a_clear_error_naming_it(finished_run: Path, tmp_path: Path, what: str) -> None:
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    name = damage(run_dir, what)
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512", "--no-progress"])
    message = str(exit_info.value)
    assert message.startswith("error: --resume") and name in message, message
    assert "Traceback" not in message


def test_the_run_machinery_raises_instead_of_exiting(tmp_path: Path) -> None:
    """``friday13_training.maskable_ppo`` is a library: it raises; the scripts' main turns its errors into exits."""
    load_script()
    from friday13_training.maskable_ppo import RunError, open_run

    with pytest.raises(RunError, match="no checkpoint at"):
        open_run(tmp_path / "none", True, {"timesteps": 0})
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "last.zip").write_bytes(b"")
    with pytest.raises(RunError, match="already holds a run"):
        open_run(tmp_path / "run", False, {"timesteps": 0})


def test_every_output_of_a_run_is_written_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file a run leaves (TensorBoard's logs and the empty file whose lock it held aside) goes through a
    temporary file and a rename."""
    import os

    from friday13_training.runs import LOCK_FILE

    train = load_script()
    renamed: list[Path] = []
    real_replace = os.replace

    def recording_replace(source: str | Path, target: str | Path) -> None:
        renamed.append(Path(target).resolve())
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", recording_replace)
    run_dir = tmp_path / "run"
    export = tmp_path / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "128", "--export", str(export), *RUN])
    written = {
        path.resolve()
        for path in run_dir.rglob("*")
        if path.is_file() and "tb" not in path.parts and path.name != LOCK_FILE
    }
    assert written and written <= set(renamed)
    assert export.resolve() in renamed


def test_plot_curve_draws_a_run_and_names_a_damaged_progress_file(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    plot = load_training_script("plot_curve")
    out = tmp_path / "plots" / "curve.png"
    plot.main([str(finished_run), "--out", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [path.name for path in out.parent.iterdir()] == ["curve.png"]  # no temporary file left
    run_dir = copy_of(finished_run, tmp_path)
    (run_dir / "progress.json").write_text('{"curve": [')
    with pytest.raises(SystemExit):
        plot.main([str(run_dir), "--out", str(out)])
    assert f"{run_dir / 'progress.json'} is damaged" in capsys.readouterr().err


def test_a_stop_in_the_middle_of_a_subprocess_step_saves_and_ends_instead_of_waiting_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGTERM (or Ctrl-C) can land while the run reads its worker processes' results (``--subprocess``), after
    some were read: SB3's ``SubprocVecEnv.close`` would then wait forever for the results already read. The run
    must end with its one line and the shells' status, keep the checkpoint it wrote, and its workers must end."""
    import signal
    import threading
    from typing import Any

    from stable_baselines3.common.vec_env import SubprocVecEnv

    train = load_script()
    from friday13_training.runs import Interrupted

    run_dir = tmp_path / "run"
    flags = [
        "--run-dir", str(run_dir), "--total-timesteps", "1024", "--num-envs", "2", "--subprocess",
        "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1", "--hidden-sizes", "16", "16",
        "--init-policy", str(tiny_ppo_policy(tmp_path / "init.npz")), "--critic-warmup", "0",
        "--eval-every", "0", "--checkpoint-every", "64", "--no-progress", "--players", "3",
    ]  # fmt: skip
    environments: list[SubprocVecEnv] = []
    original = SubprocVecEnv.step_wait

    def stop_after_one_result(self: SubprocVecEnv) -> Any:
        environments.append(self)
        if len(environments) == 40:  # 39 steps of 2 environments done: the checkpoint at 64 timesteps is on disk
            self.remotes[0].recv()  # the first worker's result is read, the second's not, then the signal lands
            raise Interrupted(signal.SIGTERM)
        return original(self)

    outcome: list[BaseException] = []

    def run() -> None:
        try:
            train.main(flags)
        except BaseException as error:  # SystemExit included
            outcome.append(error)

    with monkeypatch.context() as patch:
        patch.setattr(SubprocVecEnv, "step_wait", stop_after_one_result)
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(60)
    workers = environments[0].processes if environments else []
    hung = thread.is_alive()
    left_running = [process.pid for process in workers if process.is_alive()]
    for process in workers:  # a run that hangs must not leave its workers behind either
        if process.is_alive():
            process.terminate()
    assert not hung, "the stopped run waited forever for its workers"
    assert len(environments) == 40 and len(workers) == 2
    assert isinstance(outcome[0], SystemExit) and outcome[0].code == 128 + signal.SIGTERM
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        f"stopped by SIGTERM: the checkpoint at 64 timesteps is in {run_dir} (last.zip, progress.json): --resume goes"
        " on from it"
    )
    assert "Traceback" not in "\n".join(err)
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == 64
    assert (run_dir / "last.zip").is_file()
    assert read_friday13_policy(run_dir / "policy.npz").metadata.training["timesteps"] == 64
    assert left_running == [], "the worker processes outlived the run"
