"""A review of the training scripts as hostile users (0.18.0): a tampered file never runs code or exhausts memory, a
run never writes over another run's files or deletes files outside its folder, and every problem is refused with
an error that names it, before any work where it can be.

Each test names the defect it pins down: a ``last.zip`` whose data unpickles code; a record naming an agent factory
that a resume would import and call; a ``snapshots/`` folder that links out of the run; a distillation and a run in
one folder; a finished run exporting a damaged policy; a damaged best-response record; a target replaced between
sessions; a zip bomb as ``train_friday.py``'s checkpoint; a refused run deleting temporary files; ``distill.py``'s
workers outliving a SIGTERM; an export onto a teacher with options or onto an opponent of ``sb3_vector_env.py``; a
resume under another ``--run-name``; a best response resumed with fewer card plays than it has done; loss weights
past any sensible value; damaged data files; a checkpoint impossibly far ahead of its record; a rollout too large
for memory; a fine-tune stopped before its first checkpoint."""

from __future__ import annotations

import base64
import dataclasses
import json
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.scripts import REPOSITORY, TRAINING, load_training_script, refused
from tests.training.test_review_0_17 import (
    BEST_RESPONSE_TINY,
    FINETUNE_TINY,
    PPO_TINY,
    best_response,
    files_of,
    progress_of,
    stop_finetune,
)
from tests.training.test_train_friday_runs import TINY as FRIDAY_TINY

torch = pytest.importorskip("torch", reason="the training extra is not installed")

CHECKPOINTS = REPOSITORY / "checkpoints"
FRIDAY_FRESH = ["--distill-iterations", "0", *FRIDAY_TINY[6:]]
"""``train_friday.py``'s tiny run without stage 1: its PPO starts from a fresh actor."""


def write_progress(run_dir: Path, progress: dict[str, Any]) -> None:
    (run_dir / "progress.json").write_text(json.dumps(progress))


def tampered_args(run_dir: Path, **changes: Any) -> None:
    """Change the arguments recorded in the run's ``progress.json``."""
    progress = progress_of(run_dir)
    progress["args"].update(changes)
    write_progress(run_dir, progress)


def copy_run(run_dir: Path, tmp_path: Path, name: str = "run") -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / name))


@pytest.fixture(scope="module")
def ppo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished ``train_ppo.py`` run of one rollout (128 card plays), with a snapshot; tests copy it."""
    run_dir = tmp_path_factory.mktemp("ppo") / "run"
    load_training_script("train_ppo").main([
        "--run-dir", str(run_dir), "--total-timesteps", "128", "--eval-every", "0", "--snapshot-every", "128",
        *PPO_TINY,
    ])  # fmt: skip
    return run_dir


@pytest.fixture(scope="module")
def best_response_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished best response to ``random`` of one rollout (128 card plays); tests copy it."""
    run_dir = tmp_path_factory.mktemp("best-response") / "run"
    best_response().main(
        ["--target", "random", "--run-dir", str(run_dir), "--total-timesteps", "128", *BEST_RESPONSE_TINY]
    )
    return run_dir


@pytest.fixture(scope="module")
def finetune_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished ``finetune_ppo.py`` run of one rollout (128 timesteps); tests copy it."""
    pytest.importorskip("sb3_contrib")
    run_dir = tmp_path_factory.mktemp("finetune") / "run"
    load_training_script("finetune_ppo").main(
        ["--run-dir", str(run_dir), "--total-timesteps", "128", "--eval-every", "0", *FINETUNE_TINY]
    )
    return run_dir


# -- 1. finetune_ppo.py --resume never unpickles what last.zip serialized ---------------------------------------
class Touch:
    """A pickle that creates a file when it is loaded: what a tampered ``last.zip`` could hold."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return open, (self.path, "w")


def test_the_payload_creates_its_file_when_unpickled(tmp_path: Path) -> None:
    """So that ``not marker.exists()`` below means it never ran."""
    pickle.loads(pickle.dumps(Touch(tmp_path / "made"))).close()
    assert (tmp_path / "made").exists()


def with_serialized(path: Path, key: str, payload: object) -> None:
    """Rewrite the SB3 zip ``path`` with ``payload`` pickled under ``key`` of its ``data``, as SB3 serializes an
    entry it cannot write as JSON."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    data = json.loads(members["data"])
    data[key] = {":type:": "<class 'object'>", ":serialized:": base64.b64encode(pickle.dumps(payload)).decode()}
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)


def test_finetune_resume_refuses_a_serialized_entry_it_does_not_know_and_unpickles_none(
    finetune_run: Path, tmp_path: Path
) -> None:
    """SB3's ``load`` cloudpickle-loads every ``:serialized:`` entry of the zip's data: a tampered ``last.zip`` ran its
    code on ``--resume``. An unknown entry is refused; a known one is rebuilt from the run's arguments, unread."""
    script = load_training_script("finetune_ppo")
    marker = tmp_path / "pwned"
    unknown = copy_run(finetune_run, tmp_path, "unknown")
    with_serialized(unknown / "last.zip", "evil", Touch(marker))
    with pytest.raises(SystemExit, match=r"last\.zip .*pickled.*'evil'"):
        script.main(["--run-dir", str(unknown), "--resume", "--total-timesteps", "256"])
    assert not marker.exists()
    known = copy_run(finetune_run, tmp_path, "known")
    for key in ("policy_class", "policy_kwargs", "observation_space", "lr_schedule", "clip_range", "ep_info_buffer"):
        with_serialized(known / "last.zip", key, Touch(marker))
    script.main(["--run-dir", str(known), "--resume", "--total-timesteps", "256"])
    assert not marker.exists() and progress_of(known)["timesteps"] == 256


# -- 2. an agent factory named only by a run's record is never imported ------------------------------------------
PLANTED = """
from pathlib import Path
Path({folder!r}, "imported").touch()


def agent(seed=None):
    Path({folder!r}, "called").touch()
    from friday13_env.friday13.agents import make
    return make("cautious", seed=seed)
"""


def planted_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """A module of the working folder whose import and whose factory each leave a file in the folder returned; the
    factory's spec ``module:agent``."""
    name = "planted_" + re.sub(r"\W", "_", tmp_path.name)
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / f"{name}.py").write_text(PLANTED.format(folder=str(folder)))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return f"{name}:agent", folder


def untouched(folder: Path) -> bool:
    return not (folder / "imported").exists() and not (folder / "called").exists()


@pytest.mark.parametrize(
    ("script", "run", "field"),
    [
        ("train_ppo", "ppo_run", "eval_opponents"),
        ("train_ppo", "ppo_run", "opponents"),
        ("train_ppo", "ppo_run", "init_policy"),
        ("finetune_ppo", "finetune_run", "opponents"),
    ],
)
def test_a_resume_imports_no_factory_that_only_its_record_names(
    script: str, run: str, field: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if script == "finetune_ppo":
        pytest.importorskip("sb3_contrib")
    factory, folder = planted_factory(tmp_path, monkeypatch)
    run_dir = copy_run(request.getfixturevalue(run), tmp_path)
    value = factory if field == "init_policy" else ["cautious", factory]
    tampered_args(run_dir, **{field: value})
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match=rf"--resume: .*progress\.json names agent factor.*{factory}"):
        load_training_script(script).main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256"])
    assert untouched(folder) and files_of(run_dir) == before


def test_a_factory_given_again_on_the_command_line_is_run(
    ppo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory, folder = planted_factory(tmp_path, monkeypatch)
    run_dir = copy_run(ppo_run, tmp_path)
    tampered_args(run_dir, eval_opponents=["cautious", factory])
    load_training_script("train_ppo").main(
        ["--run-dir", str(run_dir), "--resume", "--eval-opponents", "cautious", factory]
    )
    assert (folder / "called").exists()


def test_best_response_resume_imports_no_target_factory_that_only_its_record_names(
    best_response_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory, folder = planted_factory(tmp_path, monkeypatch)
    run_dir = copy_run(best_response_run, tmp_path)
    tampered_args(run_dir, opponents=[factory], eval_opponents=[factory])
    with pytest.raises(SystemExit, match=rf"--resume: .*progress\.json names agent factor.*--target {factory}"):
        best_response().main(["--run-dir", str(run_dir), "--resume", "--no-progress"])
    assert untouched(folder)


def test_train_friday_resume_imports_no_teacher_factory_that_only_its_record_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    factory, folder = planted_factory(tmp_path, monkeypatch)
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    friday_record(script, run_dir, ["--total-timesteps", "1024", *FRIDAY_TINY], distill=1)
    tampered_args(run_dir, teacher=factory)
    with pytest.raises(SystemExit, match=rf"--resume: .*progress\.json names agent factor.*--teacher {factory}"):
        script.main(["--run-dir", str(run_dir), "--resume"])
    assert untouched(folder)


def friday_record(script: ModuleType, run_dir: Path, flags: list[str], timesteps: int = 0, distill: int = 0) -> Any:
    """A ``train_friday.py`` run folder as ``flags`` leave it after ``distill`` rounds and ``timesteps`` PPO samples
    (its record only: each test adds the files it needs); returns the run's arguments."""
    args = script.parse_args(["--run-dir", str(run_dir), *flags])
    run_dir.mkdir()
    point = {"iteration": 0, "games": 2, "decisions": 10}
    rounds = [{**point, "iteration": index} for index in range(distill)]
    write_progress(run_dir, {"args": dataclasses.asdict(args), "timesteps": timesteps, "wall_time_s": 1.0,
                             "distill": rounds, "curve": []})  # fmt: skip
    return args


# -- 3. a snapshots/ folder that links out of the run ------------------------------------------------------------
def test_a_linked_snapshots_folder_is_refused_and_nothing_outside_the_run_is_deleted(
    ppo_run: Path, tmp_path: Path
) -> None:
    run_dir = copy_run(ppo_run, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.move(run_dir / "snapshots", elsewhere)
    (elsewhere / "precious.npz").write_bytes(b"a file of someone else's")
    (elsewhere / ".precious.tmp").write_bytes(b"another")
    (run_dir / "snapshots").symlink_to(elsewhere, target_is_directory=True)
    before = sorted(path.name for path in elsewhere.iterdir())
    with pytest.raises(SystemExit, match=rf"{run_dir / 'snapshots'} is a link"):
        load_training_script("train_ppo").main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256"])
    assert sorted(path.name for path in elsewhere.iterdir()) == before


def test_a_run_deletes_only_its_own_dropped_snapshots(ppo_run: Path, tmp_path: Path) -> None:
    """What left the pool is deleted: ``snapshot_<timesteps>.npz`` files of the run's own folder, nothing else (a file
    of another name, a link's target outside the run)."""
    run_dir = copy_run(ppo_run, tmp_path)
    outside = tmp_path / "outside.npz"
    outside.write_bytes(b"not the run's")
    (run_dir / "snapshots" / "notes.npz").write_bytes(b"not a snapshot")
    (run_dir / "snapshots" / "snapshot_1.npz").symlink_to(outside)
    load_training_script("train_ppo").main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256"])
    assert (run_dir / "snapshots" / "notes.npz").exists() and outside.read_bytes() == b"not the run's"
    assert progress_of(run_dir)["snapshots"] == ["snapshot_128", "snapshot_256"]


# -- 4. a distillation and a training run in one folder -----------------------------------------------------------
@pytest.mark.parametrize("name", ["progress.json", "last.pt", "last.zip"])
def test_distill_refuses_an_out_dir_holding_a_training_run(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its ``policy.npz`` would replace the run's."""
    out = tmp_path / "run"
    out.mkdir()
    (out / name).write_bytes(b"a run's file")
    (out / "policy.npz").write_bytes(b"the run's policy")
    argv = ["--teacher", "ensemble", "--out-dir", str(out), "--eval-games", "0"]
    refused(capsys, load_training_script("distill").parse_args, argv, f"--out-dir {out}", name)
    assert (out / "policy.npz").read_bytes() == b"the run's policy"


DISTILLED = {"summary.json": b"{}", "positions.npz": b"the cached games", "student_0.npz": b"a student"}


@pytest.mark.parametrize(
    ("script", "flags"),
    [
        ("train_ppo", ["--total-timesteps", "128", "--eval-every", "0", *PPO_TINY]),
        ("finetune_ppo", ["--total-timesteps", "128", "--eval-every", "0", *FINETUNE_TINY]),
        ("train_friday", ["--total-timesteps", "256", *FRIDAY_FRESH]),
    ],
)
@pytest.mark.parametrize("name", sorted(DISTILLED))
def test_a_training_run_refuses_a_distillations_out_dir(
    script: str, flags: list[str], name: str, tmp_path: Path
) -> None:
    """Its ``policy.npz`` would replace the distilled one."""
    if script == "finetune_ppo":
        pytest.importorskip("sb3_contrib")
    out = tmp_path / "distilled"
    out.mkdir()
    (out / name).write_bytes(DISTILLED[name])
    (out / "policy.npz").write_bytes(b"the distilled policy")
    before = files_of(out)
    with pytest.raises(SystemExit, match=rf"{out} already holds .*{re.escape(name)}"):
        load_training_script(script).main(["--run-dir", str(out), *flags])
    assert files_of(out) == before


# -- 5. a finished run exports only a policy it read back -----------------------------------------------------------
def test_train_ppo_refuses_to_export_a_damaged_policy_of_a_finished_run(ppo_run: Path, tmp_path: Path) -> None:
    run_dir = copy_run(ppo_run, tmp_path)
    (run_dir / "policy.npz").write_bytes(b"junk\n")
    export = tmp_path / "exported.npz"
    with pytest.raises(SystemExit, match=rf"--export: {run_dir / 'policy.npz'} .*not a readable policy"):
        load_training_script("train_ppo").main(["--run-dir", str(run_dir), "--resume", "--export", str(export)])
    assert not export.exists()


def test_best_response_names_a_damaged_policy_of_a_finished_run(best_response_run: Path, tmp_path: Path) -> None:
    """It was a ``CheckpointError`` traceback."""
    run_dir = copy_run(best_response_run, tmp_path)
    (run_dir / "policy.npz").write_bytes(b"junk\n")
    with pytest.raises(SystemExit, match=rf"^error: .*{run_dir / 'policy.npz'} .*not a readable policy"):
        best_response().main(["--run-dir", str(run_dir), "--resume", "--no-progress"])


def test_train_friday_refuses_to_export_a_damaged_student_of_a_finished_run(tmp_path: Path) -> None:
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    script.main(["--run-dir", str(run_dir), *FRIDAY_TINY])
    before = (run_dir / "policy.npz").read_bytes()
    (run_dir / "distill" / "final.npz").write_bytes(b"junk\n")
    export = tmp_path / "exported.npz"
    with pytest.raises(SystemExit, match=rf"{run_dir / 'distill' / 'final.npz'} .*not a readable policy"):
        script.main(["--run-dir", str(run_dir), "--resume", "--export", str(export)])
    assert not export.exists() and (run_dir / "policy.npz").read_bytes() == before


# -- 6. a damaged best-response record ---------------------------------------------------------------------------------
def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"opponents": [5]}, "--opponents: expected str, got 5"),
        ({"players": ["4"]}, "--players: expected int, got '4'"),
        ({"players": "4"}, "--players: expected a list"),
        ({"seed": None}, "--seed: expected int, got None"),
        ({"opponents": "@"}, "nested deeper than"),
    ],
)
def test_best_response_names_a_damaged_record(
    change: dict[str, Any], message: str, best_response_run: Path, tmp_path: Path
) -> None:
    """They were an ``AttributeError``, a ``TypeError`` and a ``RecursionError``, or a run on wrong arguments."""
    run_dir = copy_run(best_response_run, tmp_path)
    tampered_args(run_dir, **change)
    record = run_dir / "progress.json"
    record.write_text(record.read_text().replace('"@"', nested(100_000)))
    with pytest.raises(SystemExit) as stop:
        best_response().main(["--run-dir", str(run_dir), "--resume", "--no-progress"])
    assert str(stop.value.code).startswith(f"error: --resume: {record} is damaged: ")
    assert message in str(stop.value.code)


# -- 7. the target stays the same across sessions ----------------------------------------------------------------------
def test_a_target_replaced_between_sessions_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "target.npz"
    shutil.copyfile(CHECKPOINTS / "search_distilled.npz", target)
    run_dir = tmp_path / "run"
    script = best_response()
    script.main(["--target", str(target), "--run-dir", str(run_dir), "--total-timesteps", "128", *BEST_RESPONSE_TINY])
    fingerprint = json.loads((run_dir / "best_response.json").read_text())["target_fingerprint"]
    assert progress_of(run_dir)["target_fingerprint"] == fingerprint
    shutil.copyfile(CHECKPOINTS / "ppo_finetuned.npz", target)
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match=rf"--target {target} is not the target the run started with"):
        script.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "256", "--no-progress"])
    assert files_of(run_dir) == before


# -- 8. train_friday.py's checkpoints are read as train_ppo.py's are ---------------------------------------------------
def bomb_bytes() -> bytes:
    """A torch file of a few kB whose one member inflates to 4 MiB (``test_ppo_checkpoint``'s bomb)."""
    from tests.training.test_ppo_checkpoint import bomb

    return bomb()


@pytest.mark.parametrize("checkpoint", ["last.pt", "distill/round.pt"])
def test_train_friday_refuses_a_zip_bomb_checkpoint_unread(
    checkpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    if checkpoint == "last.pt":
        friday_record(script, run_dir, ["--total-timesteps", "1024", *FRIDAY_FRESH], timesteps=256)
    else:
        friday_record(script, run_dir, ["--total-timesteps", "0", *FRIDAY_TINY], distill=1)
        (run_dir / "distill").mkdir()
    (run_dir / checkpoint).write_bytes(bomb_bytes())
    loads: list[Any] = []
    monkeypatch.setattr(torch, "load", lambda source, *_, **__: loads.append(source))
    with pytest.raises(SystemExit, match=rf"{run_dir / checkpoint} .*compressed \(ZIP_DEFLATED\)"):
        script.main(["--run-dir", str(run_dir), "--resume"])
    assert loads == []


# -- 9. a refused run deletes nothing ----------------------------------------------------------------------------------
@pytest.mark.parametrize("resume", [False, True])
def test_a_refused_run_leaves_the_temporary_files_of_the_folder_it_was_given(resume: bool, tmp_path: Path) -> None:
    folder = tmp_path / "someone's"
    (folder / "snapshots").mkdir(parents=True)
    (folder / "progress.json").write_text("{}")  # another run's record (no last.pt: not this script's)
    (folder / ".draft.tmp").write_bytes(b"a file being written")
    (folder / "snapshots" / ".part.unchecked").write_bytes(b"another")
    (folder / "next.pt").write_bytes(b"not a checkpoint")
    before = files_of(folder)
    flags = ["--resume"] if resume else PPO_TINY
    with pytest.raises(SystemExit, match=r"last\.pt"):
        load_training_script("train_ppo").main(["--run-dir", str(folder), "--total-timesteps", "128", *flags])
    assert files_of(folder) == before


# -- 10. distill.py's workers end with it ------------------------------------------------------------------------------
def children_of(pid: int) -> set[int]:
    """The running (not zombie) processes whose parent is ``pid``, from ``/proc``."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            state, parent = stat.read_text().rsplit(")", 1)[1].split()[:2]
        except (OSError, IndexError, ValueError):
            continue
        if int(parent) == pid and state != "Z":
            found.add(int(stat.parent.name))
    return found


def running(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.add(pid)
    return alive


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
def test_sigterm_stops_distill_and_its_workers(tmp_path: Path) -> None:
    command = [
        sys.executable, str(TRAINING / "distill.py"), "--teacher", "ensemble", "--members",
        str(CHECKPOINTS / "search_distilled.npz"), str(CHECKPOINTS / "ppo_finetuned.npz"), "--games", "5000",
        "--calibration-games", "2", "--players", "3", "--workers", "2", "--eval-games", "0", "--no-progress",
        "--out-dir", str(tmp_path / "out"),
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=REPOSITORY, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: set[int] = set()
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the calibration's workers come and go; then the ensemble's games begin
            if line.startswith("playing"):
                break
        deadline = time.monotonic() + 120
        while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
            workers |= children_of(process.pid)
            time.sleep(0.2)
        assert len(workers) >= 2, "the workers never started"
        time.sleep(1)  # (into their games)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)  # (the workers hold its pipes too)
        assert process.returncode == 128 + signal.SIGTERM, err
        assert "stopped by SIGTERM" in err
        deadline = time.monotonic() + 20
        while running(workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert running(workers) == set()
    finally:
        if process.poll() is None:
            process.kill()
        for pid in running(workers):  # (only the test's own processes)
            subprocess.run(["kill", "-9", str(pid)], check=False)
        process.communicate()


# -- 11. and 12. an export onto a teacher with options, a --save onto an opponent --------------------------------------
def test_train_friday_refuses_an_export_onto_a_teacher_given_with_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from friday13_env.friday.agents import REGISTRY

    teacher = tmp_path / "teacher.npz"
    shutil.copyfile(next(iter(REGISTRY.zoo().values())), teacher)
    argv = ["--run-dir", str(tmp_path / "run"), "--teacher", f"{teacher}:greedy=false", "--export", str(teacher),
            *FRIDAY_TINY[2:]]  # fmt: skip
    refused(capsys, load_training_script("train_friday").parse_args, argv, f"--export {teacher} is {teacher}")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("options", ["", ":greedy=false"])
def test_sb3_vector_env_refuses_to_save_over_an_opponent(
    options: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    opponent = tmp_path / "opponent.npz"
    shutil.copyfile(CHECKPOINTS / "search_distilled.npz", opponent)
    before = opponent.read_bytes()
    argv = ["--opponents", "cautious", f"{opponent}{options}", "--save", str(opponent)]
    refused(capsys, load_training_script("sb3_vector_env").parse_args, argv, "--save", str(opponent))
    assert opponent.read_bytes() == before


# -- 13. a resume under another --run-name -----------------------------------------------------------------------------
def test_a_resume_under_another_run_name_checks_and_records_the_folder_it_uses(
    ppo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record's ``run_dir`` was kept, so the export check looked at the old folder and the run trained before
    ``export_copy`` refused the export in its new one."""
    monkeypatch.chdir(tmp_path)
    run_dir = copy_run(ppo_run, tmp_path / "runs", "moved")
    script = load_training_script("train_ppo")
    before = files_of(run_dir)
    export = Path("runs") / "moved" / "mine.npz"
    with pytest.raises(SystemExit, match=rf"--export {export} is inside the run directory runs/moved"):
        script.main(["--run-name", "moved", "--resume", "--total-timesteps", "256", "--export", str(export)])
    assert files_of(run_dir) == before
    script.main(["--run-name", "moved", "--resume", "--total-timesteps", "256"])
    assert progress_of(run_dir)["args"]["run_dir"] == str(Path("runs") / "moved")


# -- 14. a best response resumed with fewer card plays than it has done ----------------------------------------------
def test_best_response_refuses_fewer_card_plays_than_it_has_done(best_response_run: Path, tmp_path: Path) -> None:
    """Its result would record a command (``--total-timesteps 64``) that does not make it (128 card plays)."""
    run_dir = copy_run(best_response_run, tmp_path)
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match=r"--total-timesteps 64 is fewer than the 128 card plays the run has done"):
        best_response().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "64", "--no-progress"])
    assert files_of(run_dir) == before
    best_response().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "128", "--no-progress"])
    assert "--total-timesteps 128" in json.loads((run_dir / "best_response.json").read_text())["command"]


# -- 15. loss weights past any sensible value --------------------------------------------------------------------------
WEIGHT = "must be at least 0 and at most 100"
TOO_HEAVY = [
    ("train_ppo", ["--ent-coef", "1e300"], f"argument --ent-coef: {WEIGHT}, got 1e+300"),
    ("train_ppo", ["--vf-coef", "1e300"], f"argument --vf-coef: {WEIGHT}, got 1e+300"),
    (
        "best_response",
        ["--target", "cautious", "--ent-coef", "1e300"],
        "--ent-coef must be at most 100 (or -1, the start's), got 1e+300",
    ),
    ("finetune_ppo", ["--ent-coef", "1e300"], f"argument --ent-coef: {WEIGHT}, got 1e+300"),
    ("finetune_ppo", ["--vf-coef", "101"], f"argument --vf-coef: {WEIGHT}, got 101"),
    ("train_friday", ["--ent-coef", "1e300"], f"argument --ent-coef: {WEIGHT}, got 1e+300"),
]


@pytest.mark.parametrize(("script", "flags", "message"), TOO_HEAVY)
def test_loss_weights_past_any_sensible_value_are_refused_before_the_run_folder(
    script: str, flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if script == "finetune_ppo":
        pytest.importorskip("sb3_contrib")
    module = best_response() if script == "best_response" else load_training_script(script)
    refused(capsys, module.parse_args, ["--run-dir", str(tmp_path / "run"), *flags], message)
    assert not (tmp_path / "run").exists()


# -- 16. damaged data files --------------------------------------------------------------------------------------------
def labelled_games(**changes: Any) -> Any:
    """Two labelled decisions of one Friday game, with arrays replaced by ``changes``."""
    from friday13_training.friday_dagger import LabelledGames

    from friday13_env.friday.actions import NUM_ACTIONS

    legal = np.zeros(NUM_ACTIONS, dtype=bool)
    legal[[0, 1]] = True
    games = LabelledGames(
        columns=np.array([3, 7, 5], dtype=np.uint16), values=np.array([1, 2, 1], dtype=np.float32),
        lengths=np.array([2, 1], dtype=np.int32), masks=np.array([np.packbits(legal)] * 2, dtype=np.uint8),
        actions=np.array([0, 1], dtype=np.int16), games=np.zeros(2, dtype=np.int32),
        levels=np.array([1], dtype=np.int8), won=np.array([True]), scores=np.array([5], dtype=np.int32),
        student_share=np.array([0.0], dtype=np.float32),
    )  # fmt: skip
    return dataclasses.replace(games, **changes)


def friday_damage() -> dict[str, dict[str, Any]]:
    from friday13_env.friday import encoding

    good = labelled_games()
    return {
        "shifted columns": {"columns": good.columns + encoding.OBS_SIZE},
        "truncated actions": {"actions": good.actions[:1]},
        "lengths past the entries": {"lengths": np.array([2, 5], dtype=np.int32)},
        "a negative length": {"lengths": np.array([4, -1], dtype=np.int32)},
        "an action out of range": {"actions": np.array([0, 999], dtype=np.int16)},
        "an illegal action": {"actions": np.array([0, 2], dtype=np.int16)},
        "masks of another width": {"masks": good.masks[:, :1]},
        "a game out of range": {"games": np.array([0, 3], dtype=np.int32)},
        "a level out of range": {"levels": np.array([9], dtype=np.int8)},
        "results of two games": {"won": np.array([True, False])},
        "non-finite values": {"values": np.array([1, np.nan, 1], dtype=np.float32)},
        "a 2-d array": {"scores": np.array([[5]], dtype=np.int32)},
    }


@pytest.mark.parametrize("case", sorted(friday_damage()))
def test_train_friday_names_a_damaged_round_of_labelled_games(case: str, tmp_path: Path) -> None:
    """A shifted ``columns`` array was a ``RuntimeError`` in ``embedding_bag`` after the run had started."""
    script = load_training_script("train_friday")
    path = tmp_path / "games_00.npz"
    script.save_games(path, labelled_games())
    assert len(script.read_games(path)) == 2
    script.save_games(path, labelled_games(**friday_damage()[case]))
    with pytest.raises(script.RunError, match=rf"--resume: {path} is missing or damaged"):
        script.read_games(path)


def chunk_arrays(**changes: Any) -> dict[str, np.ndarray]:
    """Two decisions of a search chunk of the standard deck, with arrays replaced by ``changes``."""
    from friday13_env.friday13.cards import get_deck
    from friday13_env.friday13.encoding import observation_layout

    deck = get_deck("standard")
    masks = np.zeros((2, deck.num_actions), dtype=np.int8)
    masks[:, :2] = 1
    values = np.full((2, deck.num_actions), np.nan, dtype=np.float32)
    values[:, :2] = [[0.0, -0.5], [-1.0, 0.0]]
    arrays = {
        "observations": np.zeros((2, observation_layout(deck).size), dtype=np.int16), "masks": masks,
        "actions": np.array([0, 1], dtype=np.int64), "values": values, "games": np.array([11, 11], dtype=np.int64),
    }  # fmt: skip
    return {**arrays, **changes}


def chunk_damage() -> dict[str, dict[str, Any]]:
    good = chunk_arrays()
    return {
        "truncated actions": {"actions": good["actions"][:1]},
        "an action out of range": {"actions": np.array([0, 99_999], dtype=np.int64)},
        "an illegal action": {"actions": np.array([0, 5], dtype=np.int64)},
        "observations of another width": {"observations": good["observations"][:, :7]},
        "masks that are not 0 or 1": {"masks": good["masks"] * 3},
        "values of another width": {"values": good["values"][:, :2]},
        "a missing array": {"games": None},
    }


@pytest.mark.parametrize("case", sorted(chunk_damage()))
def test_distill_names_a_damaged_data_chunk_before_fitting(case: str, tmp_path: Path) -> None:
    """A truncated ``actions`` array was a traceback in the fit, after the games were played."""
    distill = load_training_script("distill")
    path = tmp_path / "teacher_00000.npz"
    spec = {"format": distill.CHUNK_FORMAT, "deck": "standard", "seeds": [11]}
    distill.write_dataset(path, spec, chunk_arrays())
    assert len(distill.load_chunks([path])["actions"]) == 2
    damaged = {name: array for name, array in chunk_arrays(**chunk_damage()[case]).items() if array is not None}
    distill.write_dataset(path, spec, damaged)
    with pytest.raises(distill.DataError, match=rf"{path} is damaged .*delete it to record that chunk again"):
        distill.load_chunks([path])


def test_a_cached_ensemble_data_set_of_uneven_arrays_is_recorded_again(tmp_path: Path) -> None:
    from friday13_training import imitation

    path, spec = tmp_path / "positions.npz", {"games": 1}
    data = {"observations": np.zeros((3, 4), dtype=np.int16), "games": np.zeros(2, dtype=np.int64)}
    imitation.write_dataset(path, spec, data)
    assert imitation.read_dataset(path, spec) is None


# -- 17. a checkpoint impossibly far ahead of its record ---------------------------------------------------------------
@pytest.mark.parametrize("ahead", [2**70, 10**9])
def test_train_friday_refuses_a_checkpoint_too_far_ahead_of_its_record(ahead: int, tmp_path: Path) -> None:
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    args = friday_record(script, run_dir, ["--total-timesteps", "1024", *FRIDAY_FRESH], timesteps=256)
    state = {**script.Networks.new(args, None).state(), "timesteps": 256 + ahead}
    torch.save(state, run_dir / "last.pt")
    with pytest.raises(SystemExit, match=rf"{run_dir / 'last.pt'} holds {256 + ahead:,} timesteps"):
        script.main(["--run-dir", str(run_dir), "--resume"])
    assert progress_of(run_dir)["timesteps"] == 256


def test_train_friday_goes_on_from_a_checkpoint_one_rollout_ahead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stop between writing ``last.pt`` and ``progress.json`` leaves the checkpoint ahead: it is taken."""
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    args = friday_record(script, run_dir, ["--total-timesteps", "512", *FRIDAY_FRESH], timesteps=256)
    torch.save({**script.Networks.new(args, None).state(), "timesteps": 512}, run_dir / "last.pt")
    script.main(["--run-dir", str(run_dir), "--resume"])
    assert f"{run_dir} is finished: 512 timesteps" in capsys.readouterr().out


# -- 18. a fine-tune's rollout too large for memory --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--n-steps", "1000000000000", "--num-envs", "2"], "GiB of rollout arrays; allowed: at most 16 GiB"),
        (["--num-envs", "1000000"], "argument --num-envs: must be at least 1 and at most 1,024"),
    ],
)
def test_finetune_refuses_a_rollout_too_large_before_the_run_folder(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    argv = ["--run-dir", str(tmp_path / "run"), "--init-policy", "", "--critic-warmup", "0", *flags]
    refused(capsys, load_training_script("finetune_ppo").parse_args, argv, message)
    assert not (tmp_path / "run").exists()


# -- 19. a fine-tune stopped before its first checkpoint ---------------------------------------------------------------
def test_a_finetune_stopped_before_its_first_checkpoint_leaves_no_learning_curve(tmp_path: Path) -> None:
    """Its points would have no ``progress.json`` to go with (docs/training.md: the CSV is as the last checkpoint's
    record has it, and there is none)."""
    pytest.importorskip("sb3_contrib")
    run_dir = tmp_path / "run"
    stop_finetune(run_dir, at=128, signum=signal.SIGTERM, checkpoint_every=512)
    assert not (run_dir / "last.zip").exists() and not (run_dir / "progress.json").exists()
    assert not (run_dir / "learning_curve.csv").exists()
