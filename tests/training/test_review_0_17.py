"""A review of the training scripts as hostile users (0.17.0): every problem found is refused before any work (before
the run folder is made), or reported as it is.

``best_response.py --record`` in or on its run folder; a new run in another script's run folder; a learning rate or a
``--torch-threads`` past any sensible value; a damaged learning curve, or a table size other than the evaluations',
given to ``plot_curve.py``; a best response stopped in its final evaluation; a best response resumed by
``train_ppo.py`` and a ``train_ppo.py`` run by ``best_response.py``; ``finetune_ppo.py``'s learning curve after a
stop; ``finetune_ppo.py`` without tensorboard."""

from __future__ import annotations

import csv
import json
import os
import signal
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.scripts import load_training_script, refused

torch = pytest.importorskip("torch", reason="the training extra is not installed")

PPO_TINY = [
    "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--eval-games", "8", "--torch-threads", "1",
    "--no-progress",
]  # fmt: skip
"""One rollout of ``train_ppo.py`` (or ``best_response.py``) is 16 x 8 = 128 card plays."""
BEST_RESPONSE_TINY = [*PPO_TINY, "--final-games", "8", "--eval-every", "128", "--checkpoint-every", "128"]
FINETUNE_TINY = [
    "--num-envs", "2", "--no-subprocess", "--n-steps", "64", "--batch-size", "128", "--n-epochs", "1",
    "--hidden-sizes", "16", "16", "--eval-games", "8", "--no-progress", "--players", "3", "--init-policy", "",
    "--critic-warmup", "0",
]  # fmt: skip
"""One rollout of ``finetune_ppo.py`` is 2 x 64 = 128 timesteps."""


def best_response() -> ModuleType:
    load_training_script("train_ppo")  # best_response imports it as a module, as it does when run from training/
    return load_training_script("best_response")


def progress_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "progress.json").read_text())


def files_of(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run folder (TensorBoard's logs aside) by relative path, with its bytes."""
    return {
        str(path.relative_to(run_dir)): path.read_bytes()
        for path in sorted(run_dir.rglob("*"))
        if path.is_file() and "tb" not in path.relative_to(run_dir).parts
    }


# -- 1. best_response.py --record in or on the run folder -----------------------------------------------
@pytest.mark.parametrize("where", ["progress.json", "best_response.json", "tables/exploitability.json", ""])
def test_a_record_in_or_on_the_run_folder_is_refused_before_any_work(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The table would be read from (or written over) the run's own files, and the run would end, after all its
    training, with "not a friday13-exploitability file"."""
    run_dir = tmp_path / "run"
    record = run_dir / where if where else run_dir
    argv = ["--target", "cautious", "--run-dir", str(run_dir), "--record", str(record), "--no-progress"]
    refused(capsys, best_response().parse_args, argv, "--record", str(run_dir))
    assert not run_dir.exists()


def test_the_shared_check_refuses_any_output_in_a_run_folder_without_an_export(tmp_path: Path) -> None:
    from friday13_training import runs

    run_dir = tmp_path / "run"
    folders = {"--run-dir": run_dir}
    assert runs.export_problem("", folders, outputs={"--record": tmp_path / "table.json"}) is None
    assert runs.export_problem("", {"--out-dir": run_dir, "--data-dir": run_dir}) is None  # (distill.py's may be one)
    assert runs.export_problem("", folders, outputs={"--record": run_dir / "t.json"}) == (
        f"--record {run_dir / 't.json'} is inside the run directory {run_dir} (--run-dir), where the run writes its "
        "files: a file there could replace one of them or be replaced; write --record outside it"
    )
    assert runs.export_problem("", folders, outputs={"--record": run_dir}) == (
        f"--record and --run-dir both write {run_dir}; give each its own path"
    )


# -- 2. a new run in another script's run folder ---------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "second", "checkpoint"),
    [("finetune_ppo", "train_ppo", "last.pt"), ("train_ppo", "finetune_ppo", "last.zip")],
)
def test_a_new_run_refuses_another_scripts_run_folder_and_leaves_it_whole(
    first: str, second: str, checkpoint: str, tmp_path: Path
) -> None:
    pytest.importorskip("sb3_contrib")
    tiny = {"finetune_ppo": FINETUNE_TINY, "train_ppo": PPO_TINY}
    run_dir = tmp_path / "run"
    run = ["--run-dir", str(run_dir), "--total-timesteps", "128", "--eval-every", "0"]
    load_training_script(first).main([*run, *tiny[first]])
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match=rf"already holds a run \(progress.json\) but no {checkpoint}"):
        load_training_script(second).main([*run, *tiny[second]])
    assert files_of(run_dir) == before


# -- 3. and 4. a learning rate or --torch-threads past any sensible value --------------------------------
RATE, RATE_OR_0 = "must be above 0 and at most 1", "must be at least 0 and at most 1"
THREADS, THREADS_OR_0 = "must be at least 1 and at most 1,024", "must be at least 0 and at most 1,024"
TOO_LARGE = [
    ("train_ppo", ["--learning-rate", "1e300"], f"argument --learning-rate: {RATE}, got 1e+300"),
    ("train_ppo", ["--learning-rate", "2"], f"argument --learning-rate: {RATE}, got 2"),
    ("train_ppo", ["--critic-learning-rate", "1e300"], f"argument --critic-learning-rate: {RATE_OR_0}, got 1e+300"),
    (
        "best_response",
        ["--target", "cautious", "--learning-rate", "1e300"],
        f"--learning-rate: {RATE_OR_0}, got 1e+300",
    ),
    ("finetune_ppo", ["--learning-rate", "1e300"], f"argument --learning-rate: {RATE}, got 1e+300"),
    ("distill", ["--teacher", "ensemble", "--learning-rate", "1e300"], f"argument --learning-rate: {RATE}, got 1e+300"),
    ("train_ppo", ["--torch-threads", "99999999999"], f"argument --torch-threads: {THREADS_OR_0}, got 99,999,999,999"),
    ("train_ppo", ["--torch-threads", "5000"], f"argument --torch-threads: {THREADS_OR_0}, got 5,000"),
    ("best_response", ["--target", "cautious", "--torch-threads", "99999999999"], f"--torch-threads: {THREADS}"),
    ("finetune_ppo", ["--torch-threads", "99999999999"], f"argument --torch-threads: {THREADS}"),
    ("train_friday", ["--torch-threads", "99999999999"], f"argument --torch-threads: {THREADS}"),
    ("distill", ["--teacher", "ensemble", "--torch-threads", "99999999999"], f"argument --torch-threads: {THREADS}"),
]


@pytest.mark.parametrize(("script", "flags", "message"), TOO_LARGE)
def test_rates_and_threads_past_any_sensible_value_are_refused_before_the_run_folder(
    script: str, flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--learning-rate 1e300`` crashed in Adam ("value cannot be converted to type float without overflow"),
    ``--torch-threads 99999999999`` in torch ("Overflow when unpacking long"), both after the run folder was made."""
    if script == "finetune_ppo":
        pytest.importorskip("sb3_contrib")
    module = best_response() if script == "best_response" else load_training_script(script)
    folder = ["--out-dir", str(tmp_path / "run")] if script == "distill" else ["--run-dir", str(tmp_path / "run")]
    refused(capsys, module.parse_args, [*folder, *flags], message)
    assert not (tmp_path / "run").exists()


def test_rllibs_threads_have_the_same_maximum(tmp_path: Path) -> None:
    from friday13_training import rllib_args

    args = rllib_args.Args(run_dir=str(tmp_path / "run"), torch_threads=99_999_999_999)
    with pytest.raises(ValueError, match="--torch-threads: must be at least 1 and at most 1,024, got 99,999,999,999"):
        rllib_args.checked_args(args)


# -- 5. plot_curve.py: a damaged curve, another table size ------------------------------------------------
def plotted_run(tmp_path: Path, curve: list[Any], name: str = "run", **changes: Any) -> Path:
    """A run folder whose ``progress.json`` records ``curve`` (as JSON text where a point is a string), evaluated
    at 4 players against cautious and majority unless ``changes`` say otherwise."""
    run_dir = tmp_path / name
    run_dir.mkdir()
    args = {"eval_players": 4, "eval_opponents": ["cautious", "majority"], **changes.pop("args", {})}
    progress = {"args": args, "timesteps": 512, "seconds": 9.0, "snapshots": [], "curve": ["@"], **changes}
    points = ", ".join(point if isinstance(point, str) else json.dumps(point) for point in curve)
    (run_dir / "progress.json").write_text(json.dumps(progress).replace('["@"]', f"[{points}]"))
    return run_dir


GOOD = {"timesteps": 0, "seconds": 0.5, "cautious": 0.25, "majority": 0.2}


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ('{"timesteps": 256, "cautious": NaN, "majority": 0.3}', "NaN is not a number JSON allows"),
        ('{"timesteps": 256, "cautious": Infinity, "majority": 0.3}', "Infinity is not a number JSON allows"),
        ({"timesteps": 256, "cautious": "0.5", "majority": 0.3}, "curve point 1"),
        ({"timesteps": 256, "cautious": [0.5], "majority": 0.3}, "curve point 1"),
        ({"timesteps": 256, "cautious": 1.5, "majority": 0.3}, "curve point 1"),
        ({"timesteps": True, "cautious": 0.5, "majority": 0.3}, "curve point 1"),
        ({"timesteps": 256, "cautious": 0.5, "random": 0.9}, "curve point 1"),
        ({"timesteps": 128, "cautious": 0.5}, "curve point 1"),
        ({"timesteps": 1024, "cautious": 0.5, "majority": 0.3}, "curve point 1 at 1,024 timesteps"),
    ],
)
def test_plot_curve_refuses_a_damaged_curve_naming_the_file_and_the_point(
    second: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    run_dir = plotted_run(tmp_path, [GOOD, second])
    out = tmp_path / "curve.png"
    refused(capsys, load_training_script("plot_curve").main, [str(run_dir), "--out", str(out)],
            f"{run_dir / 'progress.json'} is damaged", message)  # fmt: skip
    assert not out.exists()


def test_plot_curve_draws_the_tables_size_the_run_was_evaluated_at(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The equal-share line is 1 / the evaluations' table size: the run's own, which ``--players`` must match."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    plot = load_training_script("plot_curve")
    point = {"timesteps": 256, "seconds": 1.0, "cautious": 0.4, "majority": 0.3}
    five = plotted_run(tmp_path, [GOOD, point], "five", args={"eval_players": 5})
    four = plotted_run(tmp_path, [GOOD, point], "four")
    legends: list[list[str]] = []
    save = Figure.savefig

    def save_and_record(self: Figure, *args: Any, **kwargs: Any) -> None:
        legends.append(self.axes[0].get_legend_handles_labels()[1])
        save(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", save_and_record)
        plot.main([str(five), "--out", str(tmp_path / "five.png")])
        plot.main([str(five), "--players", "5", "--out", str(tmp_path / "five-again.png")])
    assert legends == [["vs 4 x cautious", "vs 4 x majority", "equal seat (1/5)"]] * 2
    out = str(tmp_path / "refused.png")
    refused(capsys, plot.main, [str(four), "--players", "3", "--out", out],
            f"--players 3: {four} was evaluated at 4 players")  # fmt: skip
    refused(capsys, plot.main, [str(four), str(five), "--out", out], "evaluated at different table sizes",
            f"{four}: 4", f"{five}: 5")  # fmt: skip
    bad = plotted_run(tmp_path, [GOOD], "bad", args={"eval_players": 9})
    refused(capsys, plot.main, [str(bad), "--out", out], f"{bad / 'progress.json'} is damaged", "eval_players 9")
    assert not Path(out).exists()


# -- 6. best_response.py stopped in its final evaluation ------------------------------------------------
def test_a_best_response_stopped_in_its_final_evaluation_says_what_was_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = best_response()
    run_dir = tmp_path / "run"
    argv = ["--target", "random", "--run-dir", str(run_dir), "--total-timesteps", "128", *BEST_RESPONSE_TINY]
    script.main(argv)
    capsys.readouterr()

    def stopped(*_: Any, **__: Any) -> Any:
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("the signal did not stop the run")

    monkeypatch.setattr(script, "evaluate", stopped)
    with pytest.raises(SystemExit) as stop:
        script.main(["--run-dir", str(run_dir), "--resume", "--no-progress"])
    assert stop.value.code == 128 + signal.SIGTERM
    assert capsys.readouterr().err.strip() == (
        f"stopped by SIGTERM: the learner's checkpoint at 128 card plays is in {run_dir} (last.pt, policy.npz), but "
        f"its final evaluation was cut short and {run_dir / 'best_response.json'} not written: --resume evaluates it"
    )


# -- 7. and 8. a best response resumed by train_ppo.py, a train_ppo.py run by best_response.py --------------
@pytest.mark.parametrize("marked", [True, False])
def test_train_ppo_refuses_to_resume_a_best_response(marked: bool, tmp_path: Path) -> None:
    """It would train on and leave ``best_response.json`` stale. A run recorded before 0.17.0 (unmarked) is told by
    its result."""
    run_dir = tmp_path / "run"
    best_response().main(
        ["--target", "random", "--run-dir", str(run_dir), "--total-timesteps", "128", *BEST_RESPONSE_TINY]
    )
    if not marked:
        progress = progress_of(run_dir)
        progress.pop("script", None)  # (a record written before 0.17.0 has none)
        (run_dir / "progress.json").write_text(json.dumps(progress))
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match=f"--resume: {run_dir} is a best_response.py run: resume it with "
                       "best_response.py --resume"):  # fmt: skip
        load_training_script("train_ppo").main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256"])
    assert files_of(run_dir) == before


@pytest.mark.parametrize("marked", [True, False])
def test_best_response_refuses_to_resume_a_train_ppo_run_shaped_like_one(marked: bool, tmp_path: Path) -> None:
    """One seat against one opponent at one table size: the record says it is ``train_ppo.py``'s (an unmarked one, of
    an earlier release, is told by its evaluations, against other agents than its opponent)."""
    run_dir = tmp_path / "run"
    load_training_script("train_ppo").main([
        "--run-dir", str(run_dir), "--players", "4", "--opponents", "cautious", "--pool-share", "1",
        "--total-timesteps", "128", "--eval-every", "0", *PPO_TINY,
    ])  # fmt: skip
    if not marked:
        progress = progress_of(run_dir)
        progress.pop("script", None)  # (a record written before 0.17.0 has none)
        (run_dir / "progress.json").write_text(json.dumps(progress))
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match=f"--resume: {run_dir} is a train_ppo.py run, not a best response$"):
        best_response().main(["--run-dir", str(run_dir), "--resume", "--no-progress"])
    assert files_of(run_dir) == before


def stop_finetune(run_dir: Path, at: int, signum: int, checkpoint_every: int) -> None:
    """A tiny ``finetune_ppo.py`` run, evaluating every 128 steps, stopped by ``signum`` right after its evaluation
    at ``at`` steps; it exits as a signal's stop does."""
    from friday13_training.runs import Interrupted

    script = load_training_script("finetune_ppo")
    evaluate = script.TrainingCallback._evaluate

    def evaluate_then_stop(self: Any, steps: int) -> None:
        evaluate(self, steps)
        if steps == at:
            raise Interrupted(signum)

    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit) as stop:
        patch.setattr(script.TrainingCallback, "_evaluate", evaluate_then_stop)
        script.main(["--run-dir", str(run_dir), "--total-timesteps", "1024", "--eval-every", "128",
                     "--checkpoint-every", str(checkpoint_every), *FINETUNE_TINY])  # fmt: skip
    assert stop.value.code == 128 + signum


# -- 9. finetune_ppo.py's learning curve after a stop ----------------------------------------------------
def test_a_stopped_finetune_leaves_its_learning_curve_as_its_checkpoint(tmp_path: Path) -> None:
    """An evaluation after the last checkpoint is dropped with the rest of what came after it: the CSV holds the
    points of ``progress.json``, as ``train_ppo.py``'s does."""
    pytest.importorskip("sb3_contrib")
    run_dir = tmp_path / "run"
    stop_finetune(run_dir, at=384, signum=signal.SIGINT, checkpoint_every=256)
    with (run_dir / "learning_curve.csv").open() as table:
        rows = [int(row["timesteps"]) for row in csv.DictReader(table)]
    assert [point["timesteps"] for point in progress_of(run_dir)["curve"]] == rows == [0, 128, 256]


# -- 10. finetune_ppo.py without tensorboard -------------------------------------------------------------
def test_finetune_trains_and_resumes_without_tensorboard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``train_ppo.py`` does: no TensorBoard logs, the rest of the run as ever (a run started where tensorboard
    is installed resumes where it is not)."""
    pytest.importorskip("sb3_contrib")
    from stable_baselines3.common import utils

    script = load_training_script("finetune_ppo")
    run_dir = tmp_path / "run"
    flags = ["--run-dir", str(run_dir), "--eval-every", "0", "--checkpoint-every", "128", *FINETUNE_TINY]
    script.main([*flags, "--total-timesteps", "128"])
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # `import torch.utils.tensorboard` fails
    monkeypatch.setattr(utils, "SummaryWriter", None)  # as SB3 sets it where tensorboard is not installed
    script.main([*flags, "--resume", "--total-timesteps", "256"])
    assert progress_of(run_dir)["timesteps"] == 256
    fresh = tmp_path / "fresh"
    script.main(["--run-dir", str(fresh), "--eval-every", "0", "--total-timesteps", "128", *FINETUNE_TINY])
    assert progress_of(fresh)["timesteps"] == 128 and not (fresh / "tb").exists()
