"""Defects a hostile review of the training scripts found (0.24.0), each pinned here: a second ``--resume`` that
deleted a running job's checkpoint files before it found the folder locked, an ``--export`` onto the run that
``--init-run`` reads, checkpoints whose optimizer or PPO settings silently replaced the run's, a resume that needed
a file it never reads, a fork whose record lost the return its source learned, a resume's seed that was another
run's fresh seed, a clock that forgot earlier sessions, settings that do nothing, and a lock file followed as a
link."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.scripts import load_training_script, refused

pytest.importorskip("torch", reason="the training extra is not installed")

import torch
from friday13_training import runs

from tests.training.test_train_ppo import RUN, copy_of, finished_run, progress_of  # noqa: F401

fcntl = pytest.importorskip("fcntl")


def train_ppo() -> ModuleType:
    return load_training_script("train_ppo")


def test_a_resume_refused_because_the_folder_is_in_use_deletes_nothing(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The kill's leftovers (a pending ``next.pt``, a temporary file) were deleted before the lock was tried: the
    job running there then lost the checkpoint it was writing."""
    run_dir = copy_of(finished_run, tmp_path)
    pending, temporary = run_dir / "next.pt", run_dir / ".abcd1234.tmp"
    pending.write_bytes(b"the running job's next checkpoint")
    temporary.write_bytes(b"half a write")
    with (run_dir / runs.LOCK_FILE).open("a+b") as other:  # as another process holds it
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(SystemExit, match="is in use by another process"):
            train_ppo().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    assert pending.read_bytes() == b"the running job's next checkpoint" and temporary.read_bytes() == b"half a write"


def test_a_lock_file_that_is_a_link_is_refused_and_its_target_left_alone(tmp_path: Path) -> None:
    run_dir, target = tmp_path / "run", tmp_path / "elsewhere" / "created"
    run_dir.mkdir()
    target.parent.mkdir()
    (run_dir / runs.LOCK_FILE).symlink_to(target)
    with pytest.raises(runs.RunError, match=r"\.run\.lock is a link"):
        runs.open_run(run_dir, False, {"timesteps": 0})
    assert not target.exists()


@pytest.mark.parametrize("name", ["last.pt", "progress.json", "policy.npz"])
def test_an_export_onto_the_files_of_the_run_it_starts_from_is_refused(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
) -> None:
    source = copy_of(finished_run, tmp_path, "source")
    before = (source / name).read_bytes()
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source), "--export", str(source / name), *RUN]
    refused(capsys, train_ppo().parse_args, argv, f"--export {source / name} is inside the run --init-run")
    assert (source / name).read_bytes() == before


def resave(run_dir: Path, change: Any) -> None:
    state = torch.load(run_dir / "last.pt", weights_only=True)
    change(state)
    torch.save(state, run_dir / "last.pt")


@pytest.mark.parametrize(
    ("key", "value"), [("maximize", True), ("weight_decay", 0.5), ("eps", 1.0), ("capturable", True)]
)
def test_a_checkpoint_with_other_adam_settings_is_refused(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
    key: str,
    value: object,
) -> None:
    """``maximize`` climbed the loss, and was written back into every later checkpoint; ``capturable`` crashed in the
    first update, after the folder was locked."""
    run_dir = copy_of(finished_run, tmp_path)
    resave(run_dir, lambda state: state["optimizer"]["param_groups"][0].__setitem__(key, value))
    before = (run_dir / "progress.json").read_bytes()
    with pytest.raises(SystemExit) as stopped:
        train_ppo().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    message = str(stopped.value)
    assert "last.pt" in message and f"group 0 holds {key} {value!r}, the run's Adam " in message, message
    assert (run_dir / "progress.json").read_bytes() == before


def test_a_resume_reads_no_start_policy(finished_run: Path, tmp_path: Path) -> None:  # noqa: F811
    """``--init-policy`` starts a run; a resume loads its own networks, yet refused to start when the start's file had
    moved."""
    start = tmp_path / "start.npz"
    shutil.copy(finished_run / "policy.npz", start)
    run_dir = tmp_path / "run"
    flags = [*RUN, "--actor", "mlp"]
    train_ppo().main(["--run-dir", str(run_dir), "--total-timesteps", "256", "--init-policy", str(start), *flags])
    start.unlink()
    train_ppo().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])
    assert progress_of(run_dir)["timesteps"] == 384


def test_a_fork_records_the_return_its_source_learned_and_says_when_it_differs(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A fork may train another return than its source's critic learned (``--reward win --horizon game``); its record
    said nothing of the source's, nor which checkpoint it started from."""
    source = copy_of(finished_run, tmp_path, "source")
    fork = tmp_path / "fork"
    flags = ["--run-dir", str(fork), "--init-run", str(source), "--total-timesteps", "128", *RUN]
    train_ppo().main([*flags, "--reward", "win", "--horizon", "game", "--gamma", "1", "--eval-every", "0"])
    started = progress_of(fork)["started_from"]
    assert started["return"] == {"reward": "relative", "horizon": "round", "gamma": 0.9}
    assert started["checkpoint_sha256"] == hashlib.sha256((source / "last.pt").read_bytes()).hexdigest()
    assert "its critic learned another return" in capsys.readouterr().err
    train_ppo().main(["--run-dir", str(fork), "--resume", "--total-timesteps", "256"])  # the record reads back
    assert progress_of(fork)["started_from"] == started


def test_a_fork_resumes_with_its_source_written_another_way(finished_run: Path, tmp_path: Path) -> None:  # noqa: F811
    source = copy_of(finished_run, tmp_path, "source")
    fork = tmp_path / "fork"
    train_ppo().main(["--run-dir", str(fork), "--init-run", str(source), "--total-timesteps", "128", *RUN])
    train_ppo().main(["--run-dir", str(fork), "--resume", "--init-run", f"{source}/", "--total-timesteps", "256"])
    assert progress_of(fork)["timesteps"] == 256


def test_a_resumed_run_records_where_it_was_resumed_and_keeps_every_sessions_clock(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The record's ``clock`` covered only the last session while its ``seconds`` covered all; and nothing said a
    run had been resumed, which changes its deals (a best response's result claimed its command reproduced it)."""
    run_dir = copy_of(finished_run, tmp_path)
    before = progress_of(run_dir)
    assert before["resumed_at"] == []
    train_ppo().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    after = progress_of(run_dir)
    assert after["resumed_at"] == [512]
    assert set(after["clock"]) == set(before["clock"])
    assert all(after["clock"][part] >= before["clock"][part] for part in before["clock"])
    assert after["clock"]["collect"] > before["clock"]["collect"]


def test_a_resumed_runs_streams_are_not_those_of_a_fresh_run_with_another_seed() -> None:
    """A run of seed 0 resumed at T dealt and sampled as a fresh run of seed T."""
    seed_of = train_ppo().session_seed
    assert seed_of(7, 0) == 7  # a fresh run: its seed, as before
    assert seed_of(0, 512) != seed_of(512, 0) and seed_of(0, 512) != 512
    assert seed_of(0, 512) == seed_of(0, 512) and seed_of(0, 512) != seed_of(0, 640)
    assert all(0 <= seed_of(seed, 128) < 2**32 for seed in (0, 2**32 - 1))


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-snapshots", "2"], "--max-snapshots 2 bounds the snapshots of --snapshot-every"),
        (["--pool-share", "0", "--pool-draw", "seat"], "--pool-draw seat fills the pool's games"),
    ],
)
def test_settings_that_do_nothing_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    refused(capsys, train_ppo().parse_args, ["--run-dir", str(tmp_path / "run"), *flags], message)


def test_a_fork_from_a_run_a_kill_interrupted_says_that_resuming_it_repairs_it(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A source killed between writing its record and renaming its ``next.pt`` was refused with "restore them": a
    plain ``--resume`` of it ends that checkpoint."""
    source, later = copy_of(finished_run, tmp_path, "source"), copy_of(finished_run, tmp_path, "later")
    train_ppo().main(["--run-dir", str(later), "--resume", "--total-timesteps", "640"])
    shutil.copy(later / "last.pt", source / "next.pt")  # the state of the kill: next.pt and the record at 640
    shutil.copy(later / "progress.json", source / "progress.json")
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source), *RUN]
    refused(capsys, train_ppo().parse_args, argv, f"a --resume of {source} ends it")
    train_ppo().main(["--run-dir", str(source), "--resume", "--total-timesteps", "640"])  # as the message says
    train_ppo().parse_args(argv)
