"""Defects a hostile review found in train_rllib.py, its modules and train_ppo.py (0.27.0): a damaged RLlib checkpoint
crashed ``--resume`` with a traceback; a checkpoint ahead of ``progress.json`` was resumed without a word; a checkpoint
swap cut short left a run that could be neither resumed nor restarted (and the next save deleted its only checkpoint);
Ctrl-C said "nothing was saved" beside a checkpoint; the record's iterations and curve went unchecked; the batch, epoch
and table sizes of train_rllib.py and three of train_ppo.py's flags had no upper bound; and train_ppo.py's ``--resume``
took a record repeating a snapshot or holding arguments it does not know.

The tests marked ``rllib`` need Ray (``pytest -m rllib``, in an environment with the ``rllib`` extra); the others run
without it."""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
import shutil
import signal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from friday13_env.core.signals import Interrupted
from tests.scripts import load_training_script, refused

TINY_RLLIB = [
    "--num-env-runners", "0", "--num-envs-per-env-runner", "16", "--train-batch-size", "256", "--minibatch-size",
    "64", "--hidden-sizes", "16", "16", "--eval-every", "0", "--checkpoint-every", "1",
]  # fmt: skip
"""train_rllib.py sampling in the test's process, 256 card plays an iteration, a checkpoint at every one."""
RLLIB_CHECKPOINT = "checkpoint/rllib_checkpoint.json"


def record_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "progress.json").read_text())


def write_record(run_dir: Path, progress: dict[str, Any]) -> None:
    (run_dir / "progress.json").write_text(json.dumps(progress))


# -- without Ray: the records' checks (items 5 and 8) ----------------------------------------------
def rllib_record(run_dir: Path) -> dict[str, Any]:
    """A fresh train_rllib.py record (``train``'s template), for the shared checks."""
    from friday13_training import rllib_args

    args = rllib_args.Args(run_dir=str(run_dir))
    return {"args": dataclasses.asdict(args), "iterations": 0, "timesteps": 0, "curve": [], "seconds": 0.0}


def test_a_records_iterations_out_of_range_are_damage_before_anything_starts(tmp_path: Path) -> None:
    """``iterations`` of -3 (session_seed crashed after Ray started) or past MAX_TIMESTEPS is refused as damage by the
    shared record checks that ``open_run`` makes on ``--resume``, naming the file and the allowed range."""
    from friday13_training.runs import RunError, open_run

    run_dir = tmp_path / "run"
    (run_dir / "checkpoint").mkdir(parents=True)
    (run_dir / RLLIB_CHECKPOINT).write_text("{}")
    fresh = rllib_record(run_dir)
    for iterations in (-3, 10**30, 10**15 + 1):
        write_record(run_dir, {**fresh, "iterations": iterations})
        with pytest.raises(RunError) as refusal:
            open_run(run_dir, True, fresh, checkpoint=RLLIB_CHECKPOINT)
        message = str(refusal.value)
        assert f"{run_dir / 'progress.json'} is damaged: iterations {iterations}" in message, message
        assert "(allowed: 0 to 1,000,000,000,000,000)" in message, message
    write_record(run_dir, {**fresh, "iterations": 10**15})
    assert open_run(run_dir, True, fresh, checkpoint=RLLIB_CHECKPOINT)["iterations"] == 10**15


def test_a_record_repeating_a_snapshot_is_damage() -> None:
    """A snapshot listed twice would sit in the pool twice, drawn twice as often: no run writes that."""
    from friday13_training.runs import progress_problems

    assert progress_problems({"snapshots": ["snapshot_128", "snapshot_256"]}) == []
    problems = progress_problems({"snapshots": ["snapshot_128", "snapshot_256", "snapshot_128"]})
    assert len(problems) == 1 and "repeats snapshot_128" in problems[0], problems


def test_resumed_arguments_refuse_a_key_the_script_does_not_know(tmp_path: Path) -> None:
    """A recorded argument that is no field of ``Args`` (damage, or a newer release's hyperparameter) was dropped in
    silence; it is refused, named, for every script that resumes through ``resumed_run_args``."""
    from friday13_training import rllib_args
    from friday13_training.runs import RunError, resumed_run_args

    run_dir = tmp_path / "run"
    progress = rllib_record(run_dir)
    progress["args"]["bogus"] = 1
    args = rllib_args.Args(run_dir=str(run_dir), resume=True)
    with pytest.raises(RunError) as refusal:
        resumed_run_args(rllib_args.Args, args, {"resume"}, progress, run_dir, rllib_args.RUN_SETTINGS, lambda a: a)
    message = str(refusal.value)
    assert f"--resume: {run_dir / 'progress.json'} is damaged" in message and "'bogus'" in message, message


# -- without Ray: the checkpoint folder's swap (item 3) ---------------------------------------------
def checkpoint_writer(text: str) -> Any:
    def write(folder: Path) -> None:
        folder.mkdir()
        (folder / "state").write_text(text)

    return write


def test_a_checkpoint_folder_is_never_deleted_while_the_run_has_no_other(tmp_path: Path) -> None:
    """A save cut short between stepping the checkpoint aside and putting the new one in its place left only
    ``checkpoint.old``; the next save began by deleting it. Now it is put back first, and a save that fails while
    writing leaves it whole; the next save replaces it and leaves no leftovers."""
    from friday13_training.runs import save_folder_checkpoint

    run_dir = tmp_path / "run"
    (run_dir / "checkpoint.old").mkdir(parents=True)
    (run_dir / "checkpoint.old" / "state").write_text("1")

    def fails(folder: Path) -> None:
        folder.mkdir()
        raise OSError("disk full")

    with pytest.raises(OSError):
        save_folder_checkpoint(run_dir, "checkpoint", fails)
    assert (run_dir / "checkpoint" / "state").read_text() == "1"
    save_folder_checkpoint(run_dir, "checkpoint", checkpoint_writer("2"))
    assert (run_dir / "checkpoint" / "state").read_text() == "2"
    assert sorted(path.name for path in run_dir.iterdir()) == ["checkpoint"]


@pytest.mark.parametrize(
    ("left", "taken"),
    [(["old"], "1"), (["new"], "2"), (["old", "new"], "1"), (["partial"], None), (["partial", "old"], "1")],
)
def test_an_interrupted_swap_is_recovered(tmp_path: Path, left: list[str], taken: str | None) -> None:
    """What a stop mid-swap leaves, with no ``checkpoint/``: the folder stepped aside (``.old``, the one the record
    names) is put back, else a whole new one (``.new`` is whole by construction: written as ``.partial``); a partial
    write alone is no checkpoint."""
    from friday13_training.runs import recover_folder_checkpoint

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    for name, text in (("old", "1"), ("new", "2"), ("partial", "3")):
        if name in left:
            checkpoint_writer(text)(run_dir / f"checkpoint.{name}")
    recovered = recover_folder_checkpoint(run_dir, "checkpoint")
    if taken is None:
        assert recovered is None and not (run_dir / "checkpoint").exists()
    else:
        assert recovered is not None and (run_dir / "checkpoint" / "state").read_text() == taken


# -- without Ray: the flags' bounds (items 6 and 7) -------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--train-batch-size", "10" + "0" * 17], "argument --train-batch-size: must be at least 1 and at most"),
        (["--minibatch-size", "10" + "0" * 14], "argument --minibatch-size: must be at least 1 and at most"),
        (["--num-epochs", "1000000000000"], "argument --num-epochs: must be at least 1 and at most 1,000,"),
        (
            ["--num-env-runners", "1024", "--num-envs-per-env-runner", "1000000"],
            "--num-env-runners 1024 x --num-envs-per-env-runner 1000000",
        ),
        (
            ["--num-envs-per-env-runner", "1000000", "--num-env-runners", "16"],
            "GiB of rollout arrays; allowed: at most",
        ),
    ],
)
def test_train_rllib_bounds_its_batch_epochs_and_tables(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: list[str], message: str
) -> None:
    """Parsed as the script parses them: each refused with argparse's usage error, before Ray could start."""
    from friday13_training import rllib_args
    from friday13_training.runs import parse_run_args

    def parse(argv: list[str]) -> Any:
        return parse_run_args(rllib_args.Args, None, rllib_args.checked_args, argv)

    refused(capsys, parse, ["--run-dir", str(tmp_path / "run"), *flags], message)
    assert not (tmp_path / "run").exists()


def test_train_rllib_takes_its_largest_sizes_within_the_memory_cap(tmp_path: Path) -> None:
    from friday13_training import rllib_args
    from friday13_training.script_args import MAX_EPOCHS

    args = rllib_args.Args(
        run_dir=str(tmp_path / "run"),
        train_batch_size=rllib_args.MAX_TRAIN_BATCH_SIZE,
        minibatch_size=rllib_args.MAX_TRAIN_BATCH_SIZE,
        num_epochs=MAX_EPOCHS,
        num_env_runners=64,
        num_envs_per_env_runner=1024,
    )
    assert rllib_args.checked_args(args) is args


@pytest.fixture(scope="module")
def ppo() -> ModuleType:
    pytest.importorskip("torch", reason="the training extra is not installed")
    pytest.importorskip("threadpoolctl", reason="the training extra is not installed")
    return load_training_script("train_ppo")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--update-epochs", "1000000000"], "argument --update-epochs: must be at least 1 and at most 1,000,"),
        (
            ["--max-snapshots", "1000000000000", "--snapshot-every", "256"],
            "argument --max-snapshots: must be at least 1 and at most 1,000,",
        ),
        (["--max-grad-norm", "1e308"], "argument --max-grad-norm: must be above 0 and at most 1e+06,"),
    ],
)
def test_train_ppo_bounds_its_epochs_snapshots_and_gradient_clip(
    ppo: ModuleType, capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: list[str], message: str
) -> None:
    refused(capsys, ppo.parse_args, ["--run-dir", str(tmp_path / "run"), *flags], message)


def test_the_two_ppo_scripts_share_one_gradient_clip_bound(ppo: ModuleType) -> None:
    from friday13_training import rllib_args, script_args

    assert rllib_args.MAX_GRAD_NORM is script_args.MAX_GRAD_NORM
    bounds = {field.name: field.metadata["bounds"] for field in dataclasses.fields(ppo.Args)}
    assert bounds["max_grad_norm"]["maximum"] == script_args.MAX_GRAD_NORM
    assert bounds["update_epochs"]["maximum"] == script_args.MAX_EPOCHS


# -- without Ray: train_ppo.py --resume of a damaged record (item 8) --------------------------------
def ppo_run(ppo: ModuleType, tmp_path: Path, change: Any) -> Path:
    """A train_ppo.py run folder as ``--resume`` reads it (a record and ``last.pt``), its record changed by
    ``change``; everything the tests check is refused before ``last.pt`` is read."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    progress = ppo.fresh_progress(ppo.Args(run_dir=str(run_dir), snapshot_every=128))
    progress.update(script="train_ppo.py", timesteps=256, snapshots=["snapshot_128", "snapshot_256"], resumed_at=[])
    change(progress)
    write_record(run_dir, progress)
    (run_dir / "last.pt").write_bytes(b"")
    return run_dir


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda record: record["snapshots"].append("snapshot_256"), r"snapshots \[.*\] repeats snapshot_256"),
        (lambda record: record["args"].update(bogus=1), "its arguments hold 'bogus'"),
    ],
)
def test_train_ppo_resume_refuses_a_record_with_a_repeated_snapshot_or_an_unknown_argument(
    ppo: ModuleType, tmp_path: Path, change: Any, message: str
) -> None:
    run_dir = ppo_run(ppo, tmp_path, change)
    with pytest.raises(SystemExit) as stop:
        ppo.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512"])
    text = str(stop.value)
    assert text.startswith(f"error: --resume: {run_dir / 'progress.json'} is damaged: "), text
    assert re.search(message, text), text
    assert sorted(path.name for path in run_dir.iterdir()) == [".run.lock", "last.pt", "progress.json"]


# -- with Ray (items 1 to 5) -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rllib() -> ModuleType:
    pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")
    return load_training_script("train_rllib")


@pytest.fixture(scope="module")
def rllib_run(rllib: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A train_rllib.py run of 2 iterations (512 card plays), checkpointed; tests copy it before changing it."""
    run_dir = tmp_path_factory.mktemp("rllib") / "run"
    rllib.main(["--run-dir", str(run_dir), "--iterations", "2", *TINY_RLLIB])
    assert record_of(run_dir)["iterations"] == 2 and record_of(run_dir)["timesteps"] == 512
    return run_dir


def copy_of(run_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / "run", ignore=shutil.ignore_patterns(".run.lock")))


def resume_rllib(rllib: ModuleType, run_dir: Path, iterations: int) -> None:
    rllib.main(["--run-dir", str(run_dir), "--resume", "--iterations", str(iterations)])


LEARNER_STATE = "checkpoint/learner_group/learner/rl_module/learner/module_state.pkl"


def misshapen_weights(path: Path) -> bytes:
    """The learner's module state of ``path`` with its first weight of another shape."""
    import numpy as np

    state = pickle.loads(path.read_bytes())
    state["actor.mlp.0.weight"] = np.zeros((3, 3), dtype=np.float32)
    return pickle.dumps(state)


@pytest.mark.rllib
@pytest.mark.parametrize(
    ("file", "damage"),
    [
        ("checkpoint/algorithm_state.pkl", b"not a pickle"),
        ("checkpoint/algorithm_state.pkl", pickle.dumps(3)),
        (LEARNER_STATE, misshapen_weights),
    ],
)
def test_a_damaged_rllib_checkpoint_is_one_line_naming_it(
    rllib: ModuleType, rllib_run: Path, tmp_path: Path, file: str, damage: Any
) -> None:
    """RLlib's restore raised whatever its unpickling met (``TypeError: argument of type 'int' is not iterable``,
    torch's ``RuntimeError`` for weights of another shape) as a traceback; it is one ``--resume`` line naming the
    checkpoint, and nothing in the folder changes."""
    run_dir = copy_of(rllib_run, tmp_path)
    path = run_dir / file
    path.write_bytes(damage if isinstance(damage, bytes) else damage(path))
    before = record_of(run_dir)
    with pytest.raises(SystemExit) as stop:
        resume_rllib(rllib, run_dir, 3)
    text = str(stop.value)
    assert text.startswith(f"error: --resume: {run_dir / 'checkpoint'} is damaged or not this run's"), text
    assert "\n" not in text and "restore it or start a new run" in text, text
    assert record_of(run_dir) == before
    assert not rllib.ray.is_initialized()


@pytest.mark.rllib
def test_a_checkpoint_ahead_of_the_record_moves_it_up_and_one_behind_is_refused(
    rllib: ModuleType, rllib_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The state a stop between the checkpoint and the record leaves (the checkpoint one iteration ahead): the record
    goes up to the checkpoint's 2 iterations and 512 card plays, with a note, instead of counting from the record's.
    A record ahead of its checkpoint is not of it."""
    run_dir = copy_of(rllib_run, tmp_path)
    write_record(run_dir, {**record_of(run_dir), "iterations": 1, "timesteps": 256})
    capsys.readouterr()
    resume_rllib(rllib, run_dir, 3)
    out = capsys.readouterr().out
    assert "is ahead of progress.json; going on from 2 iterations (512 card plays)" in out, out
    assert "iteration 3:" in out and "iteration 2:" not in out, out
    assert (record_of(run_dir)["iterations"], record_of(run_dir)["timesteps"]) == (3, 768)

    for iterations, timesteps in ((4, 1024), (3, 512)):  # behind, and the same iterations but more card plays
        write_record(run_dir, {**record_of(run_dir), "iterations": iterations, "timesteps": timesteps})
        with pytest.raises(SystemExit) as stop:
            resume_rllib(rllib, run_dir, 5)
        assert "holds 3 iterations (768 card plays) but" in str(stop.value), stop.value
        assert f"records {iterations} ({timesteps:,} card plays)" in str(stop.value), stop.value
        assert "not of the same checkpoint" in str(stop.value), stop.value


@pytest.mark.rllib
@pytest.mark.parametrize("left", [["old"], ["old", "new"]])
def test_resume_recovers_an_interrupted_checkpoint_swap(
    rllib: ModuleType, rllib_run: Path, tmp_path: Path, left: list[str]
) -> None:
    """A stop between ``checkpoint -> checkpoint.old`` and ``checkpoint.new -> checkpoint`` left a run that neither
    ``--resume`` ("no checkpoint") nor a new run ("delete progress.json") took; ``--resume`` puts it back."""
    run_dir = copy_of(rllib_run, tmp_path)
    if "new" in left:
        shutil.copytree(run_dir / "checkpoint", run_dir / "checkpoint.new")
    (run_dir / "checkpoint").rename(run_dir / "checkpoint.old")
    resume_rllib(rllib, run_dir, 3)
    assert (record_of(run_dir)["iterations"], record_of(run_dir)["timesteps"]) == (3, 768)
    assert sorted(path.name for path in run_dir.iterdir() if path.name.startswith("checkpoint")) == ["checkpoint"]


@pytest.mark.rllib
def test_an_interrupt_names_the_checkpoint_it_leaves(
    rllib: ModuleType,
    rllib_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl-C in the third iteration of this session, a checkpoint written at each: the line names the one at 4
    iterations, not "nothing was saved"."""
    run_dir = copy_of(rllib_run, tmp_path)
    original, calls = rllib.Algorithm.train, []

    def train(self: Any) -> Any:
        calls.append(1)
        if len(calls) == 3:
            raise Interrupted(signal.SIGINT)
        return original(self)

    monkeypatch.setattr(rllib.Algorithm, "train", train)
    with pytest.raises(SystemExit) as stop:
        resume_rllib(rllib, run_dir, 10)
    assert stop.value.code == 130
    err = capsys.readouterr().err
    assert f"stopped by SIGINT: the checkpoint at 4 iterations is in {run_dir}: --resume goes on from it" in err, err
    assert record_of(run_dir)["iterations"] == 4


@pytest.mark.rllib
@pytest.mark.parametrize("damage", ["iterations", "curve"])
def test_a_damaged_record_is_refused_before_ray_starts(
    rllib: ModuleType, rllib_run: Path, tmp_path: Path, damage: str
) -> None:
    """Negative iterations crashed in ``session_seed`` after Ray started; a curve's win rate of 7 was taken."""
    run_dir = copy_of(rllib_run, tmp_path)
    progress = record_of(run_dir)
    if damage == "iterations":
        progress["iterations"] = -3
        message = "iterations -3 (allowed: 0 to"
    else:
        progress["curve"] = [{"timesteps": 0, "cautious": 7.0, "majority": 0.5}]
        message = "curve point 0"
    write_record(run_dir, progress)
    with pytest.raises(SystemExit) as stop:
        resume_rllib(rllib, run_dir, 3)
    assert str(stop.value).startswith(f"error: --resume: {run_dir / 'progress.json'} is damaged: {message}"), stop.value
    assert not rllib.ray.is_initialized()
