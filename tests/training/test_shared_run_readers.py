"""What the training scripts share instead of repeating it: ``finetune_ppo.py --resume`` merges its record with the
command line through ``runs.resumed_run_args``, as the other run scripts do, and keeps its own rules and words
(an unknown recorded argument refused, agent specs compared in canonical form, an unrecorded argument keeping the
command line's value); ``runs.load_progress`` reads a record through ``read_capped``, keeping its contract (a missing
file is a ``FileNotFoundError``, any other problem a ``ValueError`` that leaves the naming of the file to its
caller)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from friday13_env.core.files import read_capped
from tests.scripts import load_training_script

pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training import runs
from friday13_training.script_args import given_flags

RUN = [
    "--init-policy", "", "--critic-warmup", "0", "--learning-rate", "1e-4",
    "--opponents", "cautious", "search:budget=20",
]  # fmt: skip


# -- finetune_ppo.py --resume through runs.resumed_run_args ---------------------------------------------------------
@pytest.fixture(scope="module")
def finetune() -> ModuleType:
    pytest.importorskip("sb3_contrib", reason="the training extra is not installed")
    return load_training_script("finetune_ppo")


def resume(finetune: ModuleType, run_dir: Path, record: dict[str, Any], *flags: str) -> Any:
    """``finetune_ppo.py --run-dir run_dir --resume *flags`` over a run that recorded ``record``."""
    argv = ["--run-dir", str(run_dir), "--resume", *flags]
    return finetune.resumed_args(finetune.parse_args(argv), given_flags(finetune.Args, argv), run_dir, {"args": record})


def recorded(finetune: ModuleType, run_dir: Path) -> dict[str, Any]:
    """The arguments a new run of ``RUN`` records."""
    return dataclasses.asdict(finetune.parse_args(["--run-dir", str(run_dir), *RUN]))


def test_finetune_resumes_with_its_records_hyperparameters_and_the_command_lines_settings(
    finetune: ModuleType, tmp_path: Path
) -> None:
    record = recorded(finetune, tmp_path / "elsewhere")
    record["export"] = str(tmp_path / "the-records-export.npz")
    args = resume(finetune, tmp_path / "run", record, "--total-timesteps", "9000", "--opponents", "cautious",
                  "search: budget = 20")  # fmt: skip
    assert args.learning_rate == 1e-4 and args.opponents == ["cautious", "search:budget=20"]
    assert args.total_timesteps == 9000 and args.resume is True
    assert args.run_dir == str(tmp_path / "run") and args.export == ""  # where it is; the record's export is not


def test_finetune_refuses_a_changed_hyperparameter_in_its_own_words(finetune: ModuleType, tmp_path: Path) -> None:
    record = recorded(finetune, tmp_path / "run")
    with pytest.raises(runs.RunError) as refused:
        resume(finetune, tmp_path / "run", record, "--learning-rate", "1e-3", "--gamma", "0.5")
    message = str(refused.value)
    assert message.startswith(f"--resume continues {tmp_path / 'run'} with the hyperparameters it was started with")
    assert "\n  --learning-rate: the run has 0.0001, the command line 0.001\n  --gamma: the run has 0.99" in message
    assert message.endswith("or start a new run (another --run-name) to change them")


def test_finetune_keeps_the_command_lines_value_of_an_argument_its_record_lacks(
    finetune: ModuleType, tmp_path: Path
) -> None:
    """A record of an older script: an argument it lacks keeps this command line's value (its default), but one the
    command line gives as a hyperparameter is refused (the run's value is unknown)."""
    record = recorded(finetune, tmp_path / "run")
    del record["vf_coef"], record["torch_threads"]
    args = resume(finetune, tmp_path / "run", record, "--torch-threads", "2")
    assert args.vf_coef == 0.5 and args.torch_threads == 2
    with pytest.raises(runs.RunError, match=r"--vf-coef: the run has None, the command line 0\.5"):
        resume(finetune, tmp_path / "run", record, "--vf-coef", "0.5")


def test_finetune_refuses_a_recorded_argument_it_does_not_know(finetune: ModuleType, tmp_path: Path) -> None:
    record = {**recorded(finetune, tmp_path / "run"), "pool_share": 0.5}
    with pytest.raises(runs.RunError, match=r"progress\.json records arguments this script does not know: \['pool_"):
        resume(finetune, tmp_path / "run", record)


def test_finetune_names_a_bad_agent_spec_on_the_command_line(finetune: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(runs.RunError, match=r"^--eval-opponents: unknown .* agent 'nobody'"):
        resume(finetune, tmp_path / "run", recorded(finetune, tmp_path / "run"), "--eval-opponents", "nobody")


# -- runs.load_progress through read_capped ---------------------------------------------------------------------------
def test_a_missing_record_is_a_file_not_found_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        runs.load_progress(tmp_path / "progress.json", {})
    (tmp_path / "link.json").symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(FileNotFoundError):
        runs.load_progress(tmp_path / "link.json", {})


def test_a_record_over_the_cap_is_refused_before_it_is_read_and_unnamed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "progress.json"
    record.write_text(json.dumps({"timesteps": 0, "padding": "x" * 200}))
    monkeypatch.setattr(runs, "MAX_PROGRESS_BYTES", 100)
    with pytest.raises(ValueError, match=r"^\d+ bytes, over the 100-byte limit; not read$"):
        runs.load_progress(record, {})
    with pytest.raises(runs.RunError, match=rf"^--resume: {record} is damaged: \d+ bytes, over the 100-byte limit"):
        runs.read_progress(record, {})


@pytest.mark.parametrize("kind", ["folder", "unreadable"])
def test_a_record_that_cannot_be_read_is_a_value_error_without_its_path(tmp_path: Path, kind: str) -> None:
    record = tmp_path / "progress.json"
    if kind == "folder":
        record.mkdir()
        expected = "not a regular file; not read"
    else:
        if os.geteuid() == 0:
            pytest.skip("root reads any file")
        record.write_text("{}")
        record.chmod(0)
        expected = "cannot be read: Permission denied"
    with pytest.raises(ValueError) as refused:
        runs.load_progress(record, {})
    assert str(refused.value) == expected


def test_read_capped_still_names_the_file_for_its_other_callers(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_bytes(b"x" * 10)
    with pytest.raises(ValueError, match=rf"^page {path} is 10 bytes, over the 5-byte limit; not read$"):
        read_capped(path, 5, "page")
    with pytest.raises(ValueError, match=rf"^page {tmp_path} is not a regular file; not read$"):
        read_capped(tmp_path, 5, "page")
    with pytest.raises(ValueError, match=rf"^page {tmp_path / 'gone'} cannot be read: No such file or directory$"):
        read_capped(tmp_path / "gone", 5, "page")
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "gone", 5, "page", raise_missing=True)
    assert read_capped(path, 10, None) == b"x" * 10
