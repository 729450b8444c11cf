"""training/train_friday.py stopped from outside: Ctrl-C / SIGTERM save a checkpoint and end with one line, and
``--resume`` goes on from it; the worker processes never outlive the script (SIGTERM or SIGKILL of the parent)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.scripts import REPOSITORY, TRAINING
from tests.scripts import load_training_script as load_script

pytest.importorskip("torch", reason="the training extra is not installed")
from friday13_training.runs import Interrupted

TEACHER = "heuristic:samples=2"
TIMING = {"play_s", "wall_s"}


def stage_1_flags(run_dir: Path, *more: str) -> list[str]:
    """A stage-1 run small enough for a test: two level-1 games per round, a tiny network."""
    return [
        "--run-dir", str(run_dir), "--teacher", TEACHER, "--distill-games", "2", "--workers", "1",
        "--hidden-sizes", "16", "--eval-every", "0", "--no-progress", "--levels", "1", *more,
    ]  # fmt: skip


def stage_2_flags(run_dir: Path, *more: str) -> list[str]:
    """A stage-2 run (PPO, no distillation) small enough for a test: two level-1 games, a tiny network, one thread."""
    return [
        "--run-dir", str(run_dir), "--distill-iterations", "0", "--workers", "1", "--num-envs", "2", "--n-steps", "128",
        "--batch-size", "128", "--n-epochs", "1", "--hidden-sizes", "16", "--eval-every", "0", "--no-progress",
        "--levels", "1", *more,
    ]  # fmt: skip


def rounds_without_timing(run_dir: Path) -> list[dict[str, Any]]:
    progress = json.loads((run_dir / "progress.json").read_text())
    return [{key: value for key, value in point.items() if key not in TIMING} for point in progress["distill"]]


def raise_on_call(function: Callable[..., Any], call: int) -> Callable[..., Any]:
    """``function``, except that its ``call``-th call raises ``Interrupted`` (SIGTERM), as the signal would."""
    calls = [0]

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == call:
            raise Interrupted(signal.SIGTERM)
        return function(*args, **kwargs)

    return wrapped


def test_sigterm_in_stage_1_keeps_the_finished_rounds_and_resume_ends_as_an_uninterrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script("train_friday")
    train.main(stage_1_flags(tmp_path / "whole", "--distill-iterations", "3"))
    run_dir = tmp_path / "stopped"
    with monkeypatch.context() as patch:
        patch.setattr(train, "fit_actor", raise_on_call(train.fit_actor, 2))  # while fitting round 2
        with pytest.raises(SystemExit) as stopped:
            train.main(stage_1_flags(run_dir, "--distill-iterations", "3"))
    assert stopped.value.code == 128 + signal.SIGTERM
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message == (
        f"stopped by SIGTERM: the run after round 1 of 3 is saved in {run_dir} (distill/round.pt, progress.json);"
        " continue it with --resume"
    )
    assert len(rounds_without_timing(run_dir)) == 1
    train.main(stage_1_flags(run_dir, "--distill-iterations", "3", "--resume"))
    assert rounds_without_timing(run_dir) == rounds_without_timing(tmp_path / "whole")
    for name in ("round.npz", "final.npz"):
        with np.load(run_dir / "distill" / name) as got, np.load(tmp_path / "whole" / "distill" / name) as want:
            for key in want.files:
                if key != "metadata":
                    np.testing.assert_array_equal(got[key], want[key])


def network_state(state: dict[str, Any]) -> dict[str, Any]:
    """What decides stage 2's next step in a ``Networks.state()`` (or ``last.pt``): both networks' weights and both
    optimisers' moments and step counts (not their learning rates, which the loop sets before each rollout)."""
    return {
        **{name: state[name] for name in ("actor", "critic")},
        **{name: state[name]["state"] for name in ("actor_optimizer", "critic_optimizer")},
    }


def assert_same_state(got: Any, want: Any) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == set(want)
        for key in want:
            assert_same_state(got[key], want[key])
    else:
        import torch

        assert torch.equal(torch.as_tensor(got), torch.as_tensor(want)), (got, want)


@pytest.mark.parametrize(
    ("call", "saved"),
    [
        (15, 768),  # in rollout 4 (768..1024), after its first minibatch changed the networks: rolled back to 768
        (11, 512),  # in rollout 3 (512..768), which started at the periodic checkpoint on disk: that one stays
    ],
)
def test_sigterm_in_stage_2_saves_the_networks_of_the_rollouts_start_and_resume_finishes_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], call: int, saved: int
) -> None:
    """Two level-1 games x 128 samples = 256 timesteps a rollout, two minibatches each, the actor learning from the
    start: each rollout takes four optimiser steps (critic, actor, critic, actor). SIGTERM during the ``call``-th
    step saves the run as it was when the rollout under way began, exactly (the same networks and optimiser moments
    as an uninterrupted run had then), and says so in one line; ``--resume`` ends the run."""
    import torch

    train = load_script("train_friday")
    flags = ["--total-timesteps", "1024", "--checkpoint-every", "512", "--critic-warmup", "0"]
    starts: list[dict[str, Any]] = []  # the uninterrupted run's networks as each rollout starts
    original_collect = train.collect

    def recording_collect(games: Any, networks: Any, *rest: Any) -> Any:
        starts.append(networks.state())
        return original_collect(games, networks, *rest)

    with monkeypatch.context() as patch:
        patch.setattr(train, "collect", recording_collect)
        train.main(stage_2_flags(tmp_path / "whole", *flags))
    assert len(starts) == 4

    run_dir = tmp_path / "run"
    saves: list[int] = []  # the timesteps of each save of the stopped run
    original_save = train.save_run

    def recording_save(run: Path, networks: Any, args: Any, progress: dict[str, Any]) -> None:
        saves.append(progress["timesteps"])
        original_save(run, networks, args, progress)

    with monkeypatch.context() as patch:
        patch.setattr(train, "step", raise_on_call(train.step, call))
        patch.setattr(train, "save_run", recording_save)
        with pytest.raises(SystemExit) as stopped:
            train.main(stage_2_flags(run_dir, *flags))
    assert stopped.value.code == 128 + signal.SIGTERM
    message = capsys.readouterr().err.strip().splitlines()[-1]
    assert message == (
        f"stopped by SIGTERM: the PPO model at {saved} timesteps is saved in {run_dir} (last.pt, progress.json);"
        " continue it with --resume"
    )
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == saved
    assert saves == sorted({512, saved})  # the checkpoint at the rollout's start is not written again
    state = torch.load(run_dir / "last.pt", weights_only=True)
    assert state["timesteps"] == saved
    assert_same_state(network_state(state), network_state(starts[saved // 256]))
    with np.load(run_dir / "policy.npz") as policy:  # the export is of the same actor
        np.testing.assert_array_equal(policy["w0"], state["actor"]["first.weight"].numpy())

    train.main(stage_2_flags(run_dir, *flags, "--resume"))
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == 1024
    assert torch.load(run_dir / "last.pt", weights_only=True)["timesteps"] == 1024
    assert f"resuming {run_dir} at {saved:,} timesteps" in capsys.readouterr().out


def test_sigterm_before_any_round_finished_says_nothing_was_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script("train_friday")
    run_dir = tmp_path / "run"
    monkeypatch.setattr(train, "fit_actor", raise_on_call(train.fit_actor, 1))
    with pytest.raises(SystemExit) as stopped:
        train.main(stage_1_flags(run_dir, "--distill-iterations", "2"))
    assert stopped.value.code == 128 + signal.SIGTERM
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "stopped by SIGTERM: nothing was saved (no round had finished); start the run again, without --resume"
    )
    train.main(stage_1_flags(run_dir, "--distill-iterations", "1"))  # a fresh start is not refused


# -- the worker processes ------------------------------------------------------------------------------


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (read from /proc, no psutil)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody has reaped yet counts as gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def start_run_with_workers(run_dir: Path) -> tuple[subprocess.Popen[str], set[int]]:
    """``train_friday.py`` with two workers on a round long enough to be stopped in, once both workers play."""
    command = [
        sys.executable, str(TRAINING / "train_friday.py"), *stage_1_flags(run_dir, "--distill-iterations", "1"),
        "--workers", "2", "--distill-games", "5000",
    ]  # fmt: skip
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    process = subprocess.Popen(command, cwd=REPOSITORY, env=environment, stderr=subprocess.PIPE, text=True)
    # the two workers and multiprocessing's resource tracker
    assert wait_until(lambda: len(children(process.pid)) >= 3 or process.poll() is not None, 120)
    time.sleep(1.0)  # the workers are playing
    workers = children(process.pid)
    assert process.poll() is None and len(workers) >= 3
    return process, workers


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_workers_exit_with_the_script_on_sigterm_and_sigint(tmp_path: Path, signum: int) -> None:
    process, workers = start_run_with_workers(tmp_path / "run")
    process.send_signal(signum)
    try:
        process.wait(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signum
    assert process.stderr is not None and process.stderr.read().strip().splitlines()[-1].startswith(
        f"stopped by {signal.Signals(signum).name}: nothing was saved"
    )
    assert wait_until(lambda: not any(alive(pid) for pid in workers), 30), [pid for pid in workers if alive(pid)]


def test_the_workers_exit_when_the_script_is_killed(tmp_path: Path) -> None:
    process, workers = start_run_with_workers(tmp_path / "run")
    process.kill()  # SIGKILL: no handler runs, the workers must notice on their own
    process.wait(timeout=60)
    assert wait_until(lambda: not any(alive(pid) for pid in workers), 30), [pid for pid in workers if alive(pid)]


# -- crash consistency: SIGKILL at any moment, then --resume ---------------------------------------------------


def readable(path: Path) -> bool:
    """Whether a file of the run directory reads back whole (a temporary file of a write cut short is skipped)."""
    import torch

    try:
        if path.suffix == ".json":
            json.loads(path.read_text())
        elif path.suffix == ".npz":
            with np.load(path, allow_pickle=False) as stored:
                for key in stored.files:
                    stored[key]
        elif path.suffix == ".pt":
            torch.load(path, weights_only=True)
        elif path.suffix == ".csv":
            path.read_text()
    except Exception:
        return False
    return True


def on_disk(run_dir: Path) -> tuple[int, int]:
    """The rounds and PPO timesteps the run directory holds (what ``--resume`` goes on from)."""
    try:
        progress = json.loads((run_dir / "progress.json").read_text())
    except OSError:
        return 0, 0
    return len(progress["distill"]), progress["timesteps"]


def writing(run_dir: Path) -> bool:
    """Whether a checkpoint file is being written (a temporary file of ``atomic_write`` exists)."""
    return any(
        ".tmp" in entry.name
        for folder in (run_dir, run_dir / "distill")
        if folder.is_dir()
        for entry in os.scandir(folder)
    )


@pytest.mark.slow
def test_sigkill_at_random_moments_and_during_checkpoint_writes_then_resume_loses_at_most_a_checkpoint(
    tmp_path: Path,
) -> None:
    """A small two-stage run killed (SIGKILL) six times (more if stage 2 has not begun by then), at seeded random
    moments and the moment a checkpoint file is being written: every ``--resume`` starts, every file left reads back,
    nothing saved is lost (so at most what came after the last checkpoint is), and the finished run's policy plays."""
    from friday13_env.friday.agents import load
    from friday13_env.friday.env import FridayEnv
    from friday13_env.friday.evaluation import play_game

    run_dir = tmp_path / "run"
    flags = [
        *stage_1_flags(run_dir, "--distill-iterations", "4", "--hidden-sizes", "256", "256"),
        "--checkpoint-every", "256", "--num-envs", "2",
        "--n-steps", "64", "--batch-size", "64", "--n-epochs", "1", "--critic-warmup", "0",
    ]  # fmt: skip
    # The killed attempts aim far past the end (a fast machine must not finish the run between two kills, or no
    # later kill can meet a write); the last resume sets the real end, as --total-timesteps may change on resume.
    unending = ["--total-timesteps", "100000000"]
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    rng = np.random.default_rng(43)
    saved = (0, 0)
    caught_writing = 0
    attempt = 0
    while attempt < 6 or (saved[1] == 0 and attempt < 9):  # a slow machine gets up to 3 more, to reach stage 2
        resume = ["--resume"] if (run_dir / "progress.json").exists() else []
        log = (tmp_path / f"attempt{attempt}.log").open("w")
        process = subprocess.Popen(
            [sys.executable, str(TRAINING / "train_friday.py"), *flags, *unending, *resume],
            cwd=REPOSITORY, env=environment, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        # after the imports, somewhere in the run; every other attempt at the next checkpoint write after that
        moment = time.monotonic() + 8.0 + rng.uniform(0, 8.0)
        at_a_write = attempt % 2 == 1
        deadline = moment + (60.0 if at_a_write else 0.0)
        while process.poll() is None and time.monotonic() < deadline:
            if at_a_write and time.monotonic() >= moment and writing(run_dir):
                caught_writing += 1
                break
        process.kill()
        process.wait(timeout=60)
        log.close()
        output = (tmp_path / f"attempt{attempt}.log").read_text()
        assert process.returncode == -signal.SIGKILL, output  # still running when killed: a failed resume exits 1
        unreadable = [path for path in run_dir.rglob("*") if path.is_file() and ".tmp" not in path.name]
        assert [path for path in unreadable if not readable(path)] == []
        now = on_disk(run_dir)
        assert now >= saved, f"attempt {attempt}: the run went back from {saved} to {now}"
        saved = now
        attempt += 1
    assert caught_writing >= 2, (caught_writing, saved)
    assert saved[0] == 4 and saved[1] > 0, saved  # stage 2 began and was killed too
    resume = ["--resume"] if (run_dir / "progress.json").exists() else []
    end = ["--total-timesteps", str(max(1536, saved[1] + 256))]
    done = subprocess.run(
        [sys.executable, str(TRAINING / "train_friday.py"), *flags, *end, *resume],
        cwd=REPOSITORY, env=environment, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rounds, timesteps = on_disk(run_dir)
    assert rounds == 4 and timesteps >= max(1536, saved[1] + 256)
    assert play_game(FridayEnv(level=1), load(run_dir / "policy.npz"), seed=3)[2] > 0  # legal moves to the end
