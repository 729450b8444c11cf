"""training/train_ppo.py against a hostile user (issue 43): non-finite weights never resume, train on or export;
every size flag is checked against the loader's caps before anything is built; a tampered ``progress.json`` is a
one-line "damaged" error; Ctrl-C / SIGTERM save a checkpoint that ``--resume`` continues as if it were a periodic
one; and every script's export is read back with the loader before it is reported."""

from __future__ import annotations

import importlib
import json
import shutil
import signal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from friday13_env import agents
from friday13_env.core.checkpoint import MAX_LAYERS, MAX_PARAMETERS
from friday13_env.friday13.agents.policy import observation_scale, policy_metadata, read_friday13_policy
from tests.scripts import PLAIN_PPO_RECIPE, load_training_script, win_rates

torch = pytest.importorskip("torch", reason="the training extra is not installed")

TINY = [
    "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--hidden-sizes", "16", "16",
    "--eval-games", "8", "--torch-threads", "1", "--no-progress", "--players", "3", "4", *PLAIN_PPO_RECIPE,
]  # fmt: skip
"""One rollout is 16 x 8 = 128 timesteps."""


def load_script() -> ModuleType:
    return load_training_script("train_ppo")


def progress_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "progress.json").read_text())


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 256 timesteps (two rollouts) with a curve and a snapshot; tests copy it before changing it."""
    run_dir = tmp_path_factory.mktemp("ppo") / "run"
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "256", *TINY, "--eval-every", "128",
                        "--snapshot-every", "128", "--max-snapshots", "1"])  # fmt: skip
    return run_dir


def copy_of(run_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / "run"))


def resume(run_dir: Path, *flags: str, total: int = 512) -> None:
    load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", str(total), *flags])


# -- item 3: non-finite weights ----------------------------------------------------------------------
@pytest.mark.parametrize("part", ["model", "optimizer"])
def test_resume_refuses_a_checkpoint_with_non_finite_numbers(small_run: Path, tmp_path: Path, part: str) -> None:
    """A ``last.pt`` whose weights (or Adam moments) hold a NaN is refused as damaged, and nothing is written."""
    run_dir = copy_of(small_run, tmp_path)
    state = torch.load(run_dir / "last.pt", weights_only=True)
    if part == "model":
        next(iter(state["model"].values())).fill_(float("nan"))
    else:
        moments = next(iter(state["optimizer"]["state"].values()))
        moments["exp_avg"].fill_(float("inf"))
    torch.save(state, run_dir / "last.pt")
    before = (run_dir / "progress.json").read_bytes(), (run_dir / "policy.npz").read_bytes()
    with pytest.raises(SystemExit) as exit_info:
        resume(run_dir)
    message = str(exit_info.value)
    assert message.startswith("error: --resume:") and "last.pt" in message and "non-finite" in message, message
    assert ((run_dir / "progress.json").read_bytes(), (run_dir / "policy.npz").read_bytes()) == before


def test_a_run_whose_weights_go_non_finite_stops_and_keeps_its_last_checkpoint(
    small_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update that leaves a NaN in the network ends the run with an error naming the timesteps; the last checkpoint
    and its policy stay as they were (nothing non-finite is saved or exported) and still resume."""
    run_dir = copy_of(small_run, tmp_path)
    train = load_script()
    real_update = train.update

    def diverging_update(model: Any, *arguments: Any) -> dict[str, float]:
        stats = real_update(model, *arguments)
        with torch.no_grad():
            next(model.parameters()).fill_(float("nan"))
        return stats

    monkeypatch.setattr(train, "update", diverging_update)
    before = {name: (run_dir / name).read_bytes() for name in ("last.pt", "progress.json", "policy.npz")}
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512", "--checkpoint-every", "128"])
    message = str(exit_info.value)
    assert message.startswith("error: ") and "non-finite" in message and "256" in message, message
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    agents.load(str(run_dir / "policy.npz"))


def torch_policy() -> ModuleType:
    return importlib.import_module("friday13_training.torch_policy")


def test_an_export_the_loader_would_refuse_is_not_written(tmp_path: Path) -> None:
    """``save_linear_layers`` (every MaskablePPO, distillation and RLlib export goes through it) reads the file back
    with the loader: a NaN weight is refused with the loader's reason, and an earlier file at the path stays."""
    from friday13_training.runs import RunError

    size = observation_scale("standard").size
    num_actions = policy_metadata("standard", "tanh", [8], "").num_actions
    layers = [torch.nn.Linear(size, 8), torch.nn.Linear(8, num_actions)]
    metadata = policy_metadata("standard", "tanh", [8], "test")
    path = tmp_path / "policy.npz"
    torch_policy().save_linear_layers(path, layers, observation_scale("standard"), metadata)
    good = path.read_bytes()
    read_friday13_policy(path)
    with torch.no_grad():
        layers[1].bias[3] = float("nan")
    with pytest.raises(RunError, match=r"policy\.npz.*non-finite weights"):
        torch_policy().save_linear_layers(path, layers, observation_scale("standard"), metadata)
    assert path.read_bytes() == good
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.npz"]  # no temporary file left


# -- item 6: sizes checked before anything is built ----------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num-tables", "100000000"], "argument --num-tables: must be at least 1 and at most"),
        (["--num-steps", "100000000"], "argument --num-steps: must be at least 1 and at most"),
        (["--seed", str(10**30)], "argument --seed: must be at least 0 and at most"),
        (["--total-timesteps", str(10**30)], "argument --total-timesteps: must be at least 1 and at most"),
        (["--hidden-sizes", "4500", "4500"], f"at most {MAX_PARAMETERS:,} (the policy loader's cap)"),
        (["--hidden-sizes", "100000", "100000"], f"at most {MAX_PARAMETERS:,} (the policy loader's cap)"),
        (["--hidden-sizes", *["4"] * MAX_LAYERS], f"at most {MAX_LAYERS - 1} hidden layers"),
        (["--num-tables", "65536", "--num-steps", "4096", "--minibatch-size", "64"], "GiB of rollout"),
    ],
)
def test_sizes_are_checked_against_the_loaders_caps_and_memory_before_anything_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    """Each is argparse's usage error naming the flag and the bound, before any run directory exists."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(["--total-timesteps", "128", *TINY, *flags])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


# -- item 8: a tampered progress.json ---------------------------------------------------------------
def tamper(run_dir: Path, what: str) -> None:
    path = run_dir / "progress.json"
    progress = progress_of(run_dir)
    text: str | None = None
    if what == "huge timesteps":
        progress["timesteps"] = 10**30
    elif what == "deep nesting":
        text = json.dumps(progress)[:-1] + ', "extra": ' + "[" * 100_000 + "]" * 100_000 + "}"
    elif what == "huge num_tables":
        progress["args"]["num_tables"] = 10**9
    elif what == "curve entry not an object":
        progress["curve"].append("junk")
    elif what == "curve rate a text":
        progress["curve"][-1]["cautious"] = "high"
    elif what == "curve without timesteps":
        del progress["curve"][-1]["timesteps"]
    elif what == "curve with another baseline":
        progress["curve"][-1]["search"] = 0.5
    elif what == "curve rate above one":
        progress["curve"][-1]["majority"] = 7.0
    elif what == "curve seconds going back":
        progress["curve"][-1]["seconds"] = progress["curve"][-2]["seconds"] - 1.0
    elif what == "curve seconds past the record's":
        progress["curve"][-1]["seconds"] = progress["seconds"] + 1.0
    elif what == "curve seconds negative":
        progress["curve"][0]["seconds"] = -1.0
    elif what == "snapshot path traversal":
        progress["snapshots"] = ["../../etc/passwd"]
    elif what == "seconds NaN":
        text = json.dumps(progress).replace('"seconds": ', '"seconds": NaN, "x": ')
    elif what == "clock junk":
        progress["clock"] = {"collect": "slow"}
    elif what == "oversized":
        progress["padding"] = "x" * (80 << 20)
    else:
        raise AssertionError(what)
    path.write_text(text if text is not None else json.dumps(progress))


TAMPERINGS = [
    "huge timesteps", "deep nesting", "huge num_tables", "curve entry not an object", "curve rate a text",
    "curve without timesteps", "curve with another baseline", "curve rate above one", "curve seconds going back",
    "curve seconds past the record's", "curve seconds negative", "snapshot path traversal", "seconds NaN",
    "clock junk", "oversized",
]  # fmt: skip


@pytest.mark.parametrize("what", TAMPERINGS)
def test_a_tampered_progress_record_is_named_damaged_in_one_line(small_run: Path, tmp_path: Path, what: str) -> None:
    """``error: --resume: ... progress.json is damaged: ...``, one line, exit status 1, and nothing written."""
    run_dir = copy_of(small_run, tmp_path)
    tamper(run_dir, what)
    before = {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}
    with pytest.raises(SystemExit) as exit_info:
        resume(run_dir, "--no-progress")
    message = str(exit_info.value)
    assert message.startswith("error: --resume: ") and "progress.json is damaged" in message, message[:500]
    assert "\n" not in message and len(message) < 1000, message[:500]
    assert {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()} == before


# -- item 13: no rate over zero seconds ----------------------------------------------------------------
def test_the_closing_line_gives_this_sessions_rate_and_never_nan(
    small_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a clock that does not move, the closing line says no time was measured instead of a rate over 0 s."""
    run_dir = copy_of(small_run, tmp_path)
    train = load_script()
    monkeypatch.setattr(train.time, "perf_counter", lambda: 5.0)
    record = progress_of(run_dir)
    record["seconds"] = 0.0  # (with its curve's points: none is past the record's clock)
    record["curve"] = [{**point, "seconds": 0.0} for point in record["curve"]]
    (run_dir / "progress.json").write_text(json.dumps(record))
    resume(run_dir, "--eval-every", "0", total=384)
    out = capsys.readouterr().out
    done = [line for line in out.splitlines() if line.startswith("done:")]
    assert len(done) == 1 and done[0].startswith("done: 384 timesteps (128 in this session in 0 s, no rate measured;")
    assert done[0].endswith(f"); {run_dir}")
    assert "nan" not in out and "inf" not in out


# -- item 9: Ctrl-C and SIGTERM save the run -----------------------------------------------------------
def interrupting(train: ModuleType, monkeypatch: pytest.MonkeyPatch, name: str, call: int, error: Exception) -> None:
    """Make the ``call``-th call of ``train.<name>`` raise ``error`` once it has done its work (an update that ran to
    its end, as far as it got, is what a rollback has to undo)."""
    real, calls = getattr(train, name), []

    def wrapped(*arguments: Any) -> Any:
        calls.append(None)
        result = real(*arguments)
        if len(calls) == call:
            raise error
        return result

    monkeypatch.setattr(train, name, wrapped)


def checkpoint_state(run_dir: Path) -> dict[str, Any]:
    return torch.load(run_dir / "last.pt", weights_only=True)


def same_state(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_state(a[key], b[key]) for key in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same_state(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


RESUMABLE = [
    "--total-timesteps", "512", *TINY, "--eval-every", "256", "--snapshot-every", "128", "--max-snapshots", "2",
]  # fmt: skip


def test_an_interrupt_saves_the_run_at_its_rollouts_start_and_resumes_as_a_checkpoint_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C after the fourth update: the run is saved as it was at 384 timesteps (that update undone), exit status
    130 with one line saying so. It is the same checkpoint as a run that checkpointed at 384 and died after it, and
    both resume to the same policy."""
    from friday13_training.runs import Interrupted

    train = load_script()
    interrupting(train, monkeypatch, "update", 4, Interrupted(signal.SIGINT))
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--run-dir", str(tmp_path / "a"), *RESUMABLE, "--checkpoint-every", "256"])
    assert exit_info.value.code == 128 + signal.SIGINT
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        err[-1]
        == f"stopped by SIGINT: the checkpoint at 384 timesteps is in {tmp_path / 'a'}: --resume goes on from it"
    )
    assert not any("Traceback" in line for line in err)

    train = load_script()
    interrupting(train, monkeypatch, "collect", 4, RuntimeError("the machine went down"))
    with pytest.raises(RuntimeError):
        train.main(["--run-dir", str(tmp_path / "b"), *RESUMABLE, "--checkpoint-every", "128"])
    a, b = progress_of(tmp_path / "a"), progress_of(tmp_path / "b")
    assert a["timesteps"] == b["timesteps"] == 384 and checkpoint_state(tmp_path / "a")["timesteps"] == 384
    assert (win_rates(a["curve"]), a["snapshots"]) == (win_rates(b["curve"]), b["snapshots"]) and a["snapshots"] == [
        "snapshot_256", "snapshot_384"
    ]  # fmt: skip
    assert same_state(checkpoint_state(tmp_path / "a"), checkpoint_state(tmp_path / "b"))
    assert sorted(p.name for p in (tmp_path / "a" / "snapshots").iterdir()) == ["snapshot_256.npz", "snapshot_384.npz"]

    monkeypatch.undo()
    for name in "ab":
        load_script().main(["--run-dir", str(tmp_path / name), "--resume"])
    assert win_rates(progress_of(tmp_path / "a")["curve"]) == win_rates(progress_of(tmp_path / "b")["curve"])
    policies = [read_friday13_policy(tmp_path / name / "policy.npz") for name in "ab"]
    assert policies[0].fingerprint() == policies[1].fingerprint()


def test_a_run_interrupted_in_its_first_rollout_resumes_as_if_never_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM in the first rollout of a new run saves it at 0 timesteps (with the first evaluation, made once);
    resumed, it ends with the very weights and curve of an uninterrupted run."""
    from friday13_training.runs import Interrupted

    flags = ["--total-timesteps", "256", *TINY, "--eval-every", "128"]
    train = load_script()
    interrupting(train, monkeypatch, "collect", 1, Interrupted(signal.SIGTERM))
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--run-dir", str(tmp_path / "a"), *flags])
    assert exit_info.value.code == 128 + signal.SIGTERM
    assert progress_of(tmp_path / "a")["timesteps"] == 0 and len(progress_of(tmp_path / "a")["curve"]) == 1
    monkeypatch.undo()
    load_script().main(["--run-dir", str(tmp_path / "a"), "--resume"])
    load_script().main(["--run-dir", str(tmp_path / "b"), *flags])
    a, b = progress_of(tmp_path / "a"), progress_of(tmp_path / "b")
    assert win_rates(a["curve"]) == win_rates(b["curve"])
    assert [point["timesteps"] for point in a["curve"]] == [0, 128, 256]
    assert same_state(checkpoint_state(tmp_path / "a"), checkpoint_state(tmp_path / "b"))


def test_a_kill_between_the_checkpoint_and_the_record_resumes_from_a_consistent_pair(
    small_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed after the new checkpoint is written but before the record: the run resumes from the previous
    checkpoint and record; killed after the record but before the new checkpoint took ``last.pt``'s place: it resumes
    from the new pair. ``last.pt``'s timesteps always match the record's."""
    from friday13_training import ppo_checkpoint

    train = load_script()
    for kill_before, expected in (("atomic_write_text", 256), ("os.replace", 384)):
        run_dir = tmp_path / kill_before
        shutil.copytree(small_run, run_dir)
        target, attribute = (
            (ppo_checkpoint, "atomic_write_text")
            if kill_before == "atomic_write_text"
            else (ppo_checkpoint.os, "replace")
        )
        real = getattr(target, attribute)

        def killed(*arguments: Any, real: Any = real) -> Any:
            if str(arguments[0]).endswith(("progress.json", "next.pt")):
                raise KeyboardInterrupt  # stands for SIGKILL: no handler runs
            return real(*arguments)

        with monkeypatch.context() as patch:
            patch.setattr(target, attribute, killed)
            with pytest.raises(KeyboardInterrupt):
                train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512",
                            "--checkpoint-every", "128", "--eval-every", "0"])  # fmt: skip
        assert (run_dir / "next.pt").is_file()
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", str(expected), "--eval-every", "0"])
        assert progress_of(run_dir)["timesteps"] == expected
        assert checkpoint_state(run_dir)["timesteps"] == expected and not (run_dir / "next.pt").exists()
