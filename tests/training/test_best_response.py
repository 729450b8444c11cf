"""training/best_response.py: a learner trained against a frozen target in every other seat. It finds the easy
win against ``random``; the same seed gives the same run, result and export; ``--start target`` starts from the
target's weights (its first evaluation is the target against itself: exactly the equal share); ``--resume`` goes on
and refuses a changed target; every bad flag is refused before anything is built, naming the allowed values."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env import agents
from friday13_env.friday13.agents.policy import observation_scale, read_friday13_policy
from friday13_env.friday13.cards import get_deck
from tests.scripts import load_training_script

torch = pytest.importorskip("torch", reason="the training extra is not installed")

TINY = [
    "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--eval-games", "8", "--final-games", "8",
    "--eval-every", "128", "--checkpoint-every", "128", "--torch-threads", "1", "--no-progress",
]  # fmt: skip
"""One rollout is 16 x 8 = 128 card plays."""
TIMING = ("training_seconds", "final_seconds")


def load_script() -> ModuleType:
    load_training_script("train_ppo")  # best_response imports it as a module, as it does when run from training/
    return load_training_script("best_response")


def result_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "best_response.json").read_text())


def untimed(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key not in TIMING}


def fingerprint(run_dir: Path) -> str:
    return read_friday13_policy(run_dir / "policy.npz").fingerprint()


def run(run_dir: Path, *flags: str) -> dict[str, Any]:
    load_script().main(["--run-dir", str(run_dir), *flags])
    return result_of(run_dir)


def test_the_scratch_learner_is_the_tables_recipe_whatever_train_ppos_defaults() -> None:
    """The exploitability table's runs from scratch trained a plain 128 x 128 tanh MLP at 2.5e-3, four passes per
    rollout; ``train_ppo.py``'s defaults have moved on since, and a new run must stay comparable with the table."""
    train_ppo = load_training_script("train_ppo")
    learner = load_script().ppo_args(load_script().Args(target="cautious"))
    recipe = (learner.hidden_sizes, learner.activation, learner.actor, learner.update_epochs, learner.learning_rate)
    assert recipe == ([128, 128], "tanh", "mlp", 4, 2.5e-3)
    assert (learner.input_features, learner.minibatch_size, learner.ent_coef) == (
        train_ppo.Args().input_features,
        4096,
        0.03,
    )


def test_a_best_response_to_random_finds_the_easy_win(tmp_path: Path) -> None:
    """Against three ``random`` a learner from scratch soon wins nearly every game: a gap far above 0."""
    result = run(
        tmp_path / "run", "--target", "random", "--total-timesteps", "196608", "--num-tables", "256", "--num-steps",
        "16", "--minibatch-size", "1024", "--eval-every", "0", "--final-games", "200", "--no-progress",
    )  # fmt: skip
    assert result["win_share"]["mean"] > 0.75, result["win_share"]
    assert result["gap"]["low"] > 0.5
    assert result["gap"]["mean"] == pytest.approx(result["win_share"]["mean"] - 0.25)
    assert (result["target"], result["players"], result["start"], result["card_plays"]) == ("random", 4, "scratch",
                                                                                             196608)  # fmt: skip


def test_the_same_seed_gives_the_same_run_result_and_export(tmp_path: Path) -> None:
    """Two runs of one command: equal weights and equal results (timings aside); ``--export`` is the run's
    policy, and ``agents.load`` plays it without torch's help."""
    flags = ["--target", "cautious", "--total-timesteps", "256", "--players", "3", *TINY]
    first = run(tmp_path / "a", *flags, "--export", str(tmp_path / "br.npz"))
    second = run(tmp_path / "b", *flags)
    assert untimed(first) == untimed(second)
    assert fingerprint(tmp_path / "a") == fingerprint(tmp_path / "b")  # the weights (the records name their folders)
    assert (tmp_path / "br.npz").read_bytes() == (tmp_path / "a" / "policy.npz").read_bytes()
    assert agents.load(tmp_path / "br.npz").policy.metadata.training["args"]["init_policy"] == ""  # type: ignore[attr-defined]
    assert first["equal_share"] == pytest.approx(1 / 3) and first["players"] == 3
    assert [point["card_plays"] for point in first["curve"]] == [0, 128, 256]
    other = run(tmp_path / "c", *flags, "--seed", "1")
    assert fingerprint(tmp_path / "c") != fingerprint(tmp_path / "a")
    assert other["seed"] == 1


def test_start_target_begins_as_the_target_itself(tmp_path: Path) -> None:
    """From ``ppo-v4``'s weights, the first evaluation seats the target against three copies of itself: on
    duplicate deals every seat is everyone's once, so the share is exactly the equal one."""
    result = run(tmp_path / "run", "--target", "ppo-v4", "--start", "target", "--total-timesteps", "128",
                 "--critic-warmup", "0", *TINY)  # fmt: skip
    assert result["start"] == "target"
    assert result["command"] == (
        "python training/best_response.py --target ppo-v4 --start target --critic-warmup 0 --num-tables 16 "
        "--num-steps 8 --minibatch-size 64 --eval-games 8 --total-timesteps 128 --final-games 8 --eval-every 128"
    )
    assert result["curve"][0] == {"card_plays": 0, "win_share": 0.25}
    assert result["target_fingerprint"] == agents.make("ppo-v4").policy.fingerprint()  # type: ignore[attr-defined]
    policy = read_friday13_policy(tmp_path / "run" / "policy.npz")
    assert policy.metadata.hidden_sizes == [192, 192] and policy.metadata.training["args"]["init_policy"] == "ppo-v4"
    assert "not from scratch" in policy.metadata.description
    scratch = run(tmp_path / "scratch", "--target", "ppo-v4", "--total-timesteps", "128", *TINY)
    assert scratch["curve"][0]["win_share"] != 0.25  # a random network loses nearly every game


def test_load_actor_copies_the_policy_and_refuses_another_shape() -> None:
    from friday13_training.actor_critic import ActorCritic

    policy = agents.make("ppo-v4").policy  # type: ignore[attr-defined]
    deck = get_deck("standard")
    model = ActorCritic(observation_scale("standard"), np.zeros(0, np.float32), deck.num_actions, [192, 192], "tanh")
    model.load_actor(policy)
    copied = model.policy(policy.metadata, "copy", {})  # type: ignore[arg-type]
    for mine, theirs in zip([*copied.weights, *copied.biases], [*policy.weights, *policy.biases], strict=True):
        np.testing.assert_array_equal(mine, theirs)
    narrow = ActorCritic(observation_scale("standard"), np.zeros(0, np.float32), deck.num_actions, [128, 128], "tanh")
    with pytest.raises(ValueError, match="layers"):
        narrow.load_actor(policy)


def test_resume_goes_on_and_refuses_a_changed_target(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert run(run_dir, "--target", "majority", "--total-timesteps", "128", *TINY)["resumed_at"] == []
    resumed = run(run_dir, "--resume", "--total-timesteps", "256", "--final-games", "8", "--no-progress")
    assert (resumed["target"], resumed["card_plays"]) == ("majority", 256)
    assert resumed["resumed_at"] == [128]  # its later card plays were dealt from another seed than its command's
    assert [point["card_plays"] for point in resumed["curve"]] == [0, 128, 256]
    for flags, named in [(["--target", "cautious"], "--target"), (["--players", "5"], "--players")]:
        with pytest.raises(SystemExit, match=f"these differ: {named}: the run has"):
            run(run_dir, "--resume", "--total-timesteps", "384", *flags)
    assert result_of(run_dir)["card_plays"] == 256  # nothing was trained or written


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "--target is required"),
        (["--target", "search"], "'search' has no batched version; batched agents: ['cautious', 'majority', 'random']"),
        (["--target", "endgame"], "docs/exploitability.md says what a budget against it would cost"),
        (["--target", "friday13_env.friday13.agents:RandomAgent"], "has no batched form"),
        (["--target", "nonesuch"], "unknown Friday the 13th agent 'nonesuch'"),
        (["--target", "cautious", "--start", "target"], "'cautious' is not a network"),
        (["--target", "ppo-v4", "--deck", "german"], "'standard' deck"),
        (["--target", "random", "--players", "7"], "--players"),
        (["--target", "random", "--start", "best"], "--start"),
        (["--target", "random", "--ent-coef", "-0.5"], "--ent-coef must be -1 (the start's) or at least 0, got -0.5"),
        (["--target", "random", "--ent-coef", "-2"], "--ent-coef must be -1 (the start's) or at least 0, got -2"),
        (["--target", "random", "--ent-coef", "nan"], "--ent-coef: must be a finite number, got nan"),
    ],
)
def test_bad_flags_are_refused_before_anything_is_built(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        load_script().main(["--run-dir", str(tmp_path / "run"), *flags, "--no-progress"])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_during_the_critic_warmup_the_actor_keeps_the_targets_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--critic-warmup 256`` of a 384-card-play run: the actor exported at the checkpoint after 256 (two updates,
    the critic's alone) is still ``ppo-v4``, its output layer times the start's sharpness to the bit (a power of two
    scales floats exactly), so it makes ``ppo-v4``'s moves; the third update, after the warm-up, moves the actor. (A
    warm-up covering the whole run is refused: the actor would never learn.)"""
    target = agents.make("ppo-v4").policy  # type: ignore[attr-defined]
    script = load_script()
    sharpness = script.TARGET_SHARPNESS
    assert np.log2(sharpness).is_integer() and sharpness > 1
    exports: dict[int, Any] = {}
    save = script.train_ppo.save_run

    def saving(run_dir: Path, *rest: Any, **keywords: Any) -> None:
        save(run_dir, *rest, **keywords)
        exports[rest[-1]["timesteps"]] = read_friday13_policy(run_dir / "policy.npz")

    monkeypatch.setattr(script.train_ppo, "save_run", saving)
    flags = ["--target", "ppo-v4", "--start", "target", "--total-timesteps", "384", *TINY]
    script.main(["--run-dir", str(tmp_path / "warm"), *flags, "--critic-warmup", "256"])
    policy = exports[256]
    for layer, (mine, theirs) in enumerate(zip(policy.weights, target.weights, strict=True)):
        np.testing.assert_array_equal(mine, theirs * (sharpness if layer == len(target.weights) - 1 else 1))
    for layer, (mine, theirs) in enumerate(zip(policy.biases, target.biases, strict=True)):
        np.testing.assert_array_equal(mine, theirs * (sharpness if layer == len(target.biases) - 1 else 1))
    curve = [point["win_share"] for point in result_of(tmp_path / "warm")["curve"]]
    assert curve[:3] == [0.25, 0.25, 0.25]  # the target's moves, every game, to the end of the warm-up
    assert exports[384].fingerprint() != policy.fingerprint()


def test_the_target_start_has_its_own_recipe_and_records_it(tmp_path: Path) -> None:
    """From the target's weights: a small actor step, clip and entropy bonus, sharpened logits and the critic at its
    own rate, each recorded in the result; from scratch none of them (the table's recipe)."""
    script = load_script()
    learner = script.ppo_args(script.checked_args(script.Args(target="ppo-v4", start="target")))
    recipe = (learner.learning_rate, learner.ent_coef, learner.clip_coef, learner.init_sharpness,
              learner.critic_learning_rate, learner.critic_warmup)  # fmt: skip
    assert recipe == (1e-4, 0.001, 0.1, 4.0, 1e-3, 1_000_000)
    scratch = script.ppo_args(script.checked_args(script.Args(target="ppo-v4")))
    assert (scratch.learning_rate, scratch.ent_coef, scratch.clip_coef, scratch.init_sharpness,
            scratch.critic_learning_rate, scratch.critic_warmup) == (2.5e-3, 0.03, 0.2, 1.0, 0.0, 0)  # fmt: skip
    given = script.ppo_args(script.checked_args(script.Args(target="ppo-v4", start="target", ent_coef=0.0)))
    assert given.ent_coef == 0.0  # 0 is a bonus of its own, not the start's default
    result = run(tmp_path / "run", "--target", "ppo-v4", "--start", "target", "--total-timesteps", "128",
                 "--critic-warmup", "0", *TINY)  # fmt: skip
    assert (result["learning_rate"], result["ent_coef"], result["clip_coef"], result["init_sharpness"],
            result["critic_learning_rate"], result["device"]) == (1e-4, 0.001, 0.1, 4.0, 1e-3, "cpu")  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--init-policy", "ppo-v4", "--actor", "mlp", "--hidden-sizes", "128", "128"],
            "--init-policy ppo-v4: needs --hidden-sizes 192 192 (the run has 128 128)",
        ),
        (
            ["--init-policy", "ensemble-v1", "--actor", "mlp", "--hidden-sizes", "256", "256"],
            "needs --activation relu (the run has tanh)",
        ),
        (["--init-policy", "ppo-v4"], "needs --actor mlp"),
        (["--init-policy", "majority"], "'majority' is not a network"),
    ],
)
def test_train_ppo_refuses_an_init_policy_of_another_shape(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``train_ppo.py --init-policy`` names every difference between the network and the run, before any work."""
    with pytest.raises(SystemExit):
        load_training_script("train_ppo").parse_args(flags)
    assert message in capsys.readouterr().err


def test_resuming_a_finished_run_evaluates_and_records_it_without_training_on(tmp_path: Path) -> None:
    """``--resume`` keeps the run's budget unless it is given: a finished run is evaluated again (here into a new
    table with ``--record``), not trained on to the default budget."""
    run_dir, table = tmp_path / "run", tmp_path / "exploitability.json"
    first = run(run_dir, "--target", "cautious", "--total-timesteps", "128", *TINY)
    again = run(run_dir, "--resume", "--record", str(table), "--final-games", "8", "--no-progress")
    assert again["card_plays"] == 128 and untimed(again) == untimed(first)
    (entry,) = json.loads(table.read_text())["entries"]
    assert (entry["target"], entry["start"], entry["card_plays"]) == ("cautious", "scratch", 128)
    assert entry["command"] == (
        "python training/best_response.py --target cautious --num-tables 16 --num-steps 8 --minibatch-size 64 "
        "--eval-games 8 --total-timesteps 128 --final-games 8 --eval-every 128"
    )


def test_the_target_is_named_by_its_canonical_spec(tmp_path: Path) -> None:
    """A spec written another way (``open_min=02``) is recorded as results name it, and its curve and result work."""
    result = run(tmp_path / "run", "--target", "majority:open_min=02", "--total-timesteps", "128", *TINY)
    assert result["target"] == "majority:open_min=2"
    assert [point["card_plays"] for point in result["curve"]] == [0, 128]


def test_resume_checks_its_record_and_target_before_training(tmp_path: Path) -> None:
    """On ``--resume``, a damaged ``--record`` table is refused before any training; a resume of a missing run with
    a heuristic ``--start target`` is a one-line error, not a traceback."""
    run_dir, table = tmp_path / "run", tmp_path / "exploitability.json"
    run(run_dir, "--target", "cautious", "--total-timesteps", "128", *TINY)
    table.write_text("{damaged")
    with pytest.raises(SystemExit, match=r"--record: exploitability file .* is not JSON"):
        run(run_dir, "--resume", "--total-timesteps", "256", "--record", str(table))
    assert result_of(run_dir)["card_plays"] == 128 and table.read_text() == "{damaged"
    with pytest.raises(SystemExit, match="'cautious' is not a network"):
        run(tmp_path / "missing", "--resume", "--target", "cautious", "--start", "target")


def test_every_recorded_command_is_one_this_script_accepts() -> None:
    """The leaderboard's exploitability rows name their commands: each is a command line of this script, for the
    row's target, start and device."""
    from friday13_env.benchmark.exploitability import read_table

    table = Path(__file__).resolve().parents[2] / "results" / "benchmark" / "exploitability.json"
    gaps = read_table(table)
    assert gaps
    script = load_script()
    for gap in gaps:
        words = shlex.split(gap.command)
        assert words[:2] == ["python", "training/best_response.py"]
        device = words[words.index("--device") + 1] if "--device" in words else "cpu"
        assert device == gap.device  # a row says where it trained, and its command says so too
        if device == "cuda" and not torch.cuda.is_available():  # parsed here as on a CPU: the rest must be accepted
            words[words.index("--device") + 1] = "cpu"
        args = script.parse_args(words[2:])
        assert (args.target, args.players, args.start) == gap.key


def test_a_run_of_the_target_recipe_before_0_14_is_refused_on_resume_naming_what_differs(tmp_path: Path) -> None:
    """A best response from the target recorded by 0.13.0 (clip 0.2, no sharpening, one learning rate) cannot go on
    with today's recipe: ``--resume`` says so, with both recipes, and trains nothing."""
    run_dir = tmp_path / "run"
    run(run_dir, "--target", "ppo-v4", "--start", "target", "--total-timesteps", "128", "--critic-warmup", "0", *TINY)
    progress = json.loads((run_dir / "progress.json").read_text())
    for name in ("init_sharpness", "critic_learning_rate"):
        del progress["args"][name]
    progress["args"].update(clip_coef=0.2, learning_rate=5e-4, ent_coef=0.03)
    (run_dir / "progress.json").write_text(json.dumps(progress))
    with pytest.raises(SystemExit) as stop:
        run(run_dir, "--resume", "--total-timesteps", "256")
    message = str(stop.value)
    assert "started from the target with another recipe ({'clip_coef': 0.2, 'init_sharpness': 1.0, " in message
    assert "start a new run in another --run-dir" in message
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == 128


def test_a_run_from_the_target_resumes_with_its_recipe(tmp_path: Path) -> None:
    """A best response from the target goes on after ``--resume`` (``--ent-coef -1`` given or not: the start's), with
    the recipe it started with."""
    flags = ["--target", "ppo-v4", "--start", "target", "--critic-warmup", "0", *TINY]
    run(tmp_path / "split", *flags, "--total-timesteps", "128")
    resumed = run(tmp_path / "split", "--resume", "--total-timesteps", "256", "--ent-coef", "-1", "--no-progress")
    assert resumed["card_plays"] == 256 and resumed["ent_coef"] == 0.001 and resumed["init_sharpness"] == 4.0
    assert fingerprint(tmp_path / "split") != agents.make("ppo-v4").policy.fingerprint()  # type: ignore[attr-defined]


def test_a_finished_run_evaluated_again_elsewhere_keeps_the_device_it_trained_on(tmp_path: Path) -> None:
    """The result names the device of the run's record, and its command gives it: a run that trained on a GPU and is
    evaluated again on a CPU (``--resume --device cpu``) is still recorded as the GPU's. Without ``--device``, a
    resume goes on where the run trained (here: no GPU, so a clear error)."""
    run_dir = tmp_path / "run"
    run(run_dir, "--target", "cautious", "--total-timesteps", "128", *TINY)
    progress = json.loads((run_dir / "progress.json").read_text())
    progress["args"]["device"] = "cuda"  # as a run on a GPU machine records it
    (run_dir / "progress.json").write_text(json.dumps(progress))
    again = run(run_dir, "--resume", "--device", "cpu", "--final-games", "8", "--no-progress")
    assert again["device"] == "cuda" and " --device cuda" in again["command"]
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit, match=r"--device cuda: this torch .* sees no CUDA device; use --device cpu"):
            run(run_dir, "--resume", "--total-timesteps", "256", "--no-progress")


def test_an_unfinished_run_goes_on_on_the_device_it_trained_on(tmp_path: Path) -> None:
    """A run with card plays left to train refuses ``--resume --device`` of another device before it trains: its result
    names one device for its minutes. A finished run may be evaluated anywhere (the test above)."""
    run_dir = tmp_path / "run"
    run(run_dir, "--target", "cautious", "--total-timesteps", "128", *TINY)
    progress = json.loads((run_dir / "progress.json").read_text())
    progress["args"]["device"] = "cuda"  # a GPU run, stopped before the end of a budget of 256
    progress["args"]["total_timesteps"] = 256
    (run_dir / "progress.json").write_text(json.dumps(progress))
    with pytest.raises(SystemExit, match=r"--resume --device cpu: the run trained on cuda and has 128 card plays left"):
        run(run_dir, "--resume", "--device", "cpu", "--no-progress")
    with pytest.raises(SystemExit, match=r"the run trained on cuda and has 384 card plays left to train"):
        run(run_dir, "--resume", "--device", "cpu", "--total-timesteps", "512", "--no-progress")
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == 128


def test_the_help_gives_each_start_value_its_meaning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--help`` says what ``--learning-rate`` sets from each start, and that ``--ent-coef`` takes -1 or at least 0
    (not "at least -1", which the checks refuse between -1 and 0)."""
    monkeypatch.setenv("COLUMNS", "1000")  # one line per flag: no line breaks inside the phrases
    with pytest.raises(SystemExit):
        load_script().main(["--help"])
    text = capsys.readouterr().out
    assert "from the target's weights the actor's (the fresh critic keeps 1e-3)" in text
    assert "weights) or at least 0 (default: -1.0)" in text and "at least -1" not in text


def test_a_finished_run_evaluated_again_keeps_its_threads_in_the_results_command(tmp_path: Path) -> None:
    """The threads change a run's float rounding, so its result's command names the ones it trained with: a finished
    run evaluated again without ``--torch-threads`` keeps the record's, and one with training left is refused
    another count, as another device is."""
    run_dir = tmp_path / "run"
    flags = [flag for flag in TINY if flag not in ("--torch-threads", "1")]
    first = run(run_dir, "--target", "cautious", "--total-timesteps", "128", *flags, "--torch-threads", "2")
    assert "--torch-threads 2" in first["command"]
    again = run(run_dir, "--resume", "--final-games", "8", "--no-progress")
    assert again["command"] == first["command"]
    with pytest.raises(SystemExit, match="--torch-threads"):
        run(run_dir, "--resume", "--total-timesteps", "256", "--torch-threads", "1", "--no-progress")


def test_a_zoo_target_of_another_deck_is_not_called_one_without_a_batched_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        load_script().parse_args(["--target", "ppo-v4", "--deck", "german", "--run-dir", str(tmp_path / "run")])
    message = capsys.readouterr().err
    assert "german" in message and "what a budget against it would cost" not in message
