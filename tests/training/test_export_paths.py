"""``--export`` never overwrites what a run writes or reads: a path in (or on) the run's folder, or a file the run
reads (its starting policy, an ensemble member, a best response's target), is refused before any work, by one shared
check (``runs.export_problem``) that every training script calls; ``export_copy`` refuses the run's folder too."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from friday13_training import runs

from friday13_env.friday.agents import REGISTRY as FRIDAY_REGISTRY
from friday13_env.friday13.agents import REGISTRY
from tests.scripts import TRAINING, load_training_script, refused

pytest.importorskip("torch", reason="the training extra is not installed")

CHECKPOINTS = TRAINING.parent / "checkpoints"


# -- the shared check --------------------------------------------------------------------------------
def test_an_export_outside_the_run_and_its_inputs_is_fine(tmp_path: Path) -> None:
    member = tmp_path / "member.npz"
    member.write_bytes(b"policy")
    assert runs.export_problem(tmp_path / "out.npz", {"--run-dir": tmp_path / "run"}, {"--members": [member]}) is None
    assert runs.export_problem("", {"--run-dir": tmp_path / "run"}, {"--members": [member]}) is None  # no export
    assert runs.export_problem(tmp_path / "runs.npz", {"--run-dir": tmp_path / "run"}) is None  # a prefix is not in


@pytest.mark.parametrize("name", ["last.zip", "progress.json", "policy.npz", "snapshots/snapshot_5.npz", "x/y.npz"])
def test_an_export_in_the_run_directory_is_refused(capsys, tmp_path: Path, name: str) -> None:
    run_dir = tmp_path / "run"
    problem = runs.export_problem(run_dir / name, {"--run-dir": run_dir})
    assert problem == (
        f"--export {run_dir / name} is inside the run directory {run_dir} (--run-dir), where the run writes its "
        "files: a file there could replace one of them or be replaced; write --export outside it"
    )
    relative = os.path.relpath(run_dir / name)  # however the two are written
    assert runs.export_problem(relative, {"--run-dir": run_dir}) is not None


def test_an_export_on_the_run_directory_or_holding_it_is_refused(capsys, tmp_path: Path) -> None:
    assert runs.export_problem(tmp_path / "run", {"--run-dir": tmp_path / "run"}) == (
        f"--export and --run-dir both write {tmp_path / 'run'}; give each its own path"
    )
    problem = runs.export_problem(tmp_path / "p.npz", {"--run-dir": tmp_path / "p.npz" / "run"})
    assert problem == f"--run-dir is inside {tmp_path / 'p.npz'}, the file --export writes; give them paths apart"


def test_an_export_onto_an_input_is_refused_however_it_is_named(tmp_path: Path) -> None:
    member = tmp_path / "member.npz"
    member.write_bytes(b"policy")
    (tmp_path / "link.npz").symlink_to(member)
    os.link(member, tmp_path / "hard.npz")
    folders = {"--run-dir": tmp_path / "run"}
    for export in (member, tmp_path / "link.npz", tmp_path / "hard.npz", os.path.relpath(member)):
        problem = runs.export_problem(export, folders, {"--init-policy": [], "--members": ["cautious", member]})
        assert problem == (
            f"--export {export} is {member}, which --members names and the run reads: export to another path"
        )


def test_export_copy_refuses_the_run_directory_itself(tmp_path: Path) -> None:
    """The last line for a script that did not check up front: the run's checkpoint is never replaced."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "policy.npz").write_bytes(b"policy")
    (run_dir / "last.pt").write_bytes(b"checkpoint")
    with pytest.raises(runs.RunError, match="inside the run directory"):
        runs.export_copy(run_dir, str(run_dir / "last.pt"))
    assert (run_dir / "last.pt").read_bytes() == b"checkpoint"


# -- every script calls it before any work -----------------------------------------------------------
def test_finetune_refuses_an_export_into_its_run_or_onto_its_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sb3_contrib")
    script = load_training_script("finetune_ppo")
    run_dir = tmp_path / "run"
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--export", str(run_dir / "last.zip")],
        "--export",
        "inside the run directory",
    )
    start = str(shutil.copy(CHECKPOINTS / "search_distilled.npz", tmp_path / "start.npz"))
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--init-policy", str(start), "--export", start],
        "which --init-policy names",
    )
    opponent = str(shutil.copy(CHECKPOINTS / "ppo_finetuned.npz", tmp_path / "opponent.npz"))
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--opponents", opponent, "--export", opponent],
        "which --opponents names",
    )
    assert not run_dir.exists()


def test_a_resumed_finetune_refuses_an_export_onto_its_checkpoint(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    script = load_training_script("finetune_ppo")
    run_dir = tmp_path / "run"
    args = script.parse_args(["--run-dir", str(run_dir), "--init-policy", ""])
    run_dir.mkdir()
    (run_dir / "last.zip").write_bytes(b"the run's checkpoint")
    (run_dir / "progress.json").write_text(json.dumps(script.fresh_progress(args)))
    with pytest.raises(SystemExit, match=r"--export .* is inside the run directory"):
        script.main(["--run-dir", str(run_dir), "--resume", "--export", str(run_dir / "last.zip")])
    assert (run_dir / "last.zip").read_bytes() == b"the run's checkpoint"


def test_train_friday_refuses_an_export_into_its_run_or_onto_its_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--export", str(run_dir / "progress.json")],
        "--export",
        "inside the run directory",
    )
    start = str(shutil.copy(FRIDAY_REGISTRY.policy_path("dagger-v1"), tmp_path / "start.npz"))
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--distill-init", start, "--export", start],
        "which --distill-init names",
    )
    assert not run_dir.exists()


def test_distill_refuses_an_export_onto_a_member_or_into_its_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_training_script("distill")
    member = str(shutil.copy(CHECKPOINTS / "ppo_finetuned.npz", tmp_path / "member.npz"))
    ensemble = ["--teacher", "ensemble", "--out-dir", str(tmp_path / "out")]
    refused(capsys, script.parse_args, [*ensemble, "--members", member, "--export", member], "which --members names")
    start = str(shutil.copy(CHECKPOINTS / "search_distilled.npz", tmp_path / "start.npz"))
    refused(
        capsys, script.parse_args, [*ensemble, "--init-policy", start, "--export", start], "which --init-policy names"
    )
    refused(
        capsys,
        script.parse_args,
        [*ensemble, "--export", str(tmp_path / "out" / "positions.npz")],
        "inside the run directory",
        "(--out-dir)",
    )
    search = ["--teacher", "search", "--out-dir", str(tmp_path / "out"), "--data-dir", str(tmp_path / "data")]
    refused(
        capsys, script.parse_args, [*search, "--export", str(tmp_path / "data" / "teacher_00000.npz")], "(--data-dir)"
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "data").exists()


def test_best_response_refuses_an_export_onto_its_target_or_into_its_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    load_training_script("train_ppo")
    script = load_training_script("best_response")
    target = str(shutil.copy(REGISTRY.policy_path("ppo-v4"), tmp_path / "target.npz"))
    run_dir = tmp_path / "run"
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--target", target, "--export", target],
        "which --target names",
    )
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--target", "random", "--export", str(run_dir / "last.pt")],
        "inside the run directory",
    )
    table = tmp_path / "table.json"
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--target", "random", "--export", str(table), "--record", str(table)],
        "--export and --record both write",
    )
    assert not run_dir.exists()


def test_train_rllibs_checks_refuse_an_export_into_its_run(tmp_path: Path) -> None:
    from friday13_training import rllib_args

    run_dir = tmp_path / "run"
    args = rllib_args.Args(run_dir=str(run_dir), export=str(run_dir / "policy.npz"))
    with pytest.raises(ValueError, match="inside the run directory"):
        rllib_args.checked_args(args)


def test_train_ppo_refuses_an_export_into_its_run_or_onto_a_policy_it_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before any work, as the other scripts: ``train_ppo.py`` refused only a path in its run folder, and only at the
    end of the run, when it exported; a policy among its opponents or its start was overwritten."""
    script = load_training_script("train_ppo")
    run_dir = tmp_path / "run"
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--export", str(run_dir / "policy.npz")],
        "inside the run directory",
    )
    opponent = str(shutil.copy(REGISTRY.policy_path("ppo-v4"), tmp_path / "opponent.npz"))
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--opponents", "cautious", opponent, "--export", opponent],
        "which --opponents names",
    )
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", str(run_dir), "--eval-opponents", f"{opponent}:greedy=false", "--export", opponent],
        "which --eval-opponents names",
    )
    warmup = ["--run-dir", str(run_dir), "--critic-warmup", "5000", "--total-timesteps", "5000"]
    refused(capsys, script.parse_args, warmup, "--critic-warmup 5,000 is not below --total-timesteps 5,000")
    assert not run_dir.exists()


def test_a_policy_named_with_options_is_an_input_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--opponents X.npz:greedy=false`` reads ``X.npz``: an export onto it is refused, as for the bare path."""
    pytest.importorskip("sb3_contrib")
    script = load_training_script("finetune_ppo")
    opponent = str(shutil.copy(CHECKPOINTS / "ppo_finetuned.npz", tmp_path / "opponent.npz"))
    argv = ["--run-dir", str(tmp_path / "run"), "--opponents", f"{opponent}:greedy=false", "--export", opponent]
    refused(capsys, script.parse_args, argv, "which --opponents names")


@pytest.mark.parametrize(("script_name", "flag"), [("train_ppo", "--eval-opponents"), ("finetune_ppo", "--opponents")])
def test_a_policy_named_in_an_option_is_an_input_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script_name: str, flag: str
) -> None:
    """``endgame:policy=X.npz`` reads ``X.npz``: an export onto it would replace the policy the run plays against."""
    if script_name == "finetune_ppo":
        pytest.importorskip("sb3_contrib")
    script = load_training_script(script_name)
    policy = str(shutil.copy(REGISTRY.policy_path("ppo-v4"), tmp_path / "policy.npz"))
    argv = ["--run-dir", str(tmp_path / "run"), flag, f"endgame:policy={policy}", "--export", policy]
    refused(capsys, script.parse_args, argv, f"which {flag} names")
    assert not (tmp_path / "run").exists()


def test_spec_files_reads_the_files_of_options_too(tmp_path: Path) -> None:
    from friday13_training.friday13_agents import spec_files

    policy = tmp_path / "p.npz"
    files = spec_files(["cautious", f"endgame:policy={policy},budget=100", "ppo-v4"])
    assert files[2:] == [policy, REGISTRY.policy_path("ppo-v4")]  # the option's file, in the spec's place
    assert [file.name for file in files[:2]] == ["cautious", "endgame"]  # names that stand for no file
