"""Defects a hostile review of the training scripts found (0.20.0), each pinned here: a run record that is a device
or a pipe, evaluation sizes and clip ranges refused only after the training, inputs the run would overwrite, an
export path a record alone names, snapshots no game draws, a best response's command that leaves out what changed
its result, and legend text matplotlib cannot parse."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.scripts import load_training_script, refused

pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training import runs

from tests.training.test_train_ppo import copy_of, finished_run, progress_of  # noqa: F401

ZOO_POLICY = Path(__file__).resolve().parents[2] / "friday13_env" / "friday13" / "zoo" / "ppo-v1.npz"


def train_ppo() -> ModuleType:
    return load_training_script("train_ppo")


def best_response() -> ModuleType:
    load_training_script("train_ppo")
    return load_training_script("best_response")


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_record_that_is_no_regular_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    """``progress.json`` linked to ``/dev/zero`` filled the memory; a named pipe hung the resume for ever."""
    record = tmp_path / "progress.json"
    if kind == "device":
        record.symlink_to("/dev/zero")
    else:
        os.mkfifo(record)
    outcome: list[BaseException] = []

    def load() -> None:
        try:
            runs.load_progress(record, {})
        except BaseException as error:
            outcome.append(error)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "load_progress is still reading"
    assert isinstance(outcome[0], ValueError) and "not a regular file" in str(outcome[0])


@pytest.mark.parametrize(
    ("script", "argv", "message"),
    [
        ("train_ppo", ["--eval-games", "1000001"], "--eval-games: must be at least 1 and at most 1,000,000"),
        ("train_ppo", ["--clip-coef", "1e39"], "--clip-coef: must be above 0 and at most 10"),
        ("best_response", ["--target", "cautious", "--final-games", "1000001"], "--final-games: must be at least"),
        ("best_response", ["--target", "cautious", "--eval-games", "1000001"], "--eval-games: must be at least 1"),
        ("train_friday", ["--clip-range", "1e39"], "--clip-range: must be above 0 and at most 10"),
        ("distill", ["--teacher", "ensemble", "--eval-games", "1000001"], "--eval-games: must be at least 0"),
    ],
)
def test_sizes_the_evaluation_or_torch_refuses_are_refused_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: str, argv: list[str], message: str
) -> None:
    """An evaluation of over a million games was refused by the evaluator after the whole training, and a clip range
    past float32's range crashed torch after the run folder was made: both are flags' errors now."""
    module = best_response() if script == "best_response" else load_training_script(script)
    directory = "--out-dir" if script == "distill" else "--run-dir"
    refused(capsys, module.parse_args, [directory, str(tmp_path / "run"), *argv], message)
    assert not (tmp_path / "run").exists()


def test_the_sb3_example_refuses_an_evaluation_over_a_million_games(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    script = load_training_script("sb3_vector_env")
    refused(capsys, script.parse_args, ["--eval-games", "1000001"], "--eval-games")


@pytest.mark.parametrize("flag", ["--target", "--eval-opponents"])
def test_an_input_inside_the_run_folder_is_refused(tmp_path: Path, flag: str) -> None:
    """A target (or any policy the run reads) in its own run folder was replaced by the run's ``policy.npz``: the
    user's file lost, and the run refused at its end."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    policy = run_dir / "policy.npz"
    policy.write_bytes(ZOO_POLICY.read_bytes())
    problem = runs.export_problem("", {"--run-dir": run_dir}, {flag: [policy]})
    assert problem is not None and f"{flag} {policy} is inside the run directory" in problem
    assert runs.export_problem("", {"--run-dir": run_dir}, {flag: [ZOO_POLICY]}) is None


def test_a_best_response_refuses_a_target_in_its_own_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "policy.npz").write_bytes(ZOO_POLICY.read_bytes())
    argv = ["--run-dir", str(run_dir), "--target", str(run_dir / "policy.npz")]
    refused(capsys, best_response().parse_args, argv, "is inside the run directory")
    assert (run_dir / "policy.npz").read_bytes() == ZOO_POLICY.read_bytes()


def test_a_resumed_run_exports_only_where_its_command_says(finished_run: Path, tmp_path: Path) -> None:  # noqa: F811
    """A record's ``export`` (a moved run's, or an altered one) was written on a plain ``--resume``: a file the
    command never named was replaced with the policy."""
    run_dir = copy_of(finished_run, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    progress = progress_of(run_dir)
    progress["args"]["export"] = str(victim)
    (run_dir / "progress.json").write_text(json.dumps(progress))
    train_ppo().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    assert victim.read_text() == "keep me"
    assert progress_of(run_dir)["args"]["export"] == ""


def test_snapshots_that_no_game_draws_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--run-dir", str(tmp_path / "run"), "--pool-share", "0", "--snapshot-every", "256"]
    refused(capsys, train_ppo().parse_args, argv, "--snapshot-every 256: snapshots join the pool")


def test_a_best_responses_command_gives_the_threads_and_the_evaluations(tmp_path: Path) -> None:
    """Two thread counts made two results with one recorded command; ``--eval-every`` changes the recorded curve."""
    script = best_response()
    args = script.parse_args(["--run-dir", str(tmp_path / "r"), "--target", "cautious", "--torch-threads", "2",
                              "--eval-every", "4096"])  # fmt: skip
    command = script.command_of(args)
    assert "--torch-threads 2" in command and "--eval-every 4096" in command


def test_a_legend_label_with_dollars_is_drawn_as_written(finished_run: Path, tmp_path: Path) -> None:  # noqa: F811
    """``--labels '$\\foo$'`` crashed matplotlib's mathtext when the figure was saved."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "curve.png"
    load_training_script("plot_curve").main([str(finished_run), "--labels", "$\\foo$", "--out", str(out)])
    assert out.stat().st_size > 0


def test_a_run_folder_in_use_by_another_process_is_refused(tmp_path: Path) -> None:
    """Two processes on one run folder wrote over each other's checkpoints: the second is refused while the first
    holds the folder's lock (here a lock taken apart from the run, as another process's is)."""
    fcntl = pytest.importorskip("fcntl")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with (run_dir / runs.LOCK_FILE).open("a+b") as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(runs.RunError, match="is in use by another process"):
            runs.open_run(run_dir, False, {"timesteps": 0})
    assert runs.open_run(run_dir, False, {"timesteps": 0}) == {"timesteps": 0}  # once it is free
    assert runs.open_run(run_dir, False, {"timesteps": 0}) == {"timesteps": 0}  # this process holds it now


def test_a_legend_label_starting_with_an_underscore_is_drawn(
    finished_run: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Matplotlib leaves out of a legend every line whose label starts with ``_``: runs labelled ``_a`` and ``_b``
    (or in folders so named) were drawn without a name."""
    matplotlib = pytest.importorskip("matplotlib")
    saved: list[Any] = []
    original = matplotlib.figure.Figure.savefig

    def keep(figure: Any, *args: Any, **kwargs: Any) -> None:
        saved.append(figure)
        original(figure, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", keep)
    out = tmp_path / "curve.png"
    runs_and_labels = [str(finished_run), str(finished_run), "--labels", "_a", "_b"]
    load_training_script("plot_curve").main([*runs_and_labels, "--out", str(out)])
    (figure,) = saved
    texts = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert any(text.startswith("_a: vs 3 x") for text in texts) and any(text.startswith("_b: vs 3 x") for text in texts)
