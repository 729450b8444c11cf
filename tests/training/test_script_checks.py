"""Flags of the training scripts that used to pass the parser and fail late (or never be noticed): each is refused
before any work with a message naming the flag and what is allowed. The critic warm-up must leave the actor
something to learn; seeds are bounded; ``--init-temperature`` is bounded as ``--init-sharpness`` is; the SB3
example's opponents need a batched form; ``plot_curve.py --out`` needs a format matplotlib writes; train_rllib's
network is capped as every other script's."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from friday13_training.runs import MAX_SEED

from tests.scripts import TRAINING, load_training_script, refused

pytest.importorskip("torch", reason="the training extra is not installed")

SEED_ERROR = f"--seed: must be at least 0 and at most {MAX_SEED:,}, got {MAX_SEED + 1:,}"


def best_response() -> ModuleType:
    load_training_script("train_ppo")
    return load_training_script("best_response")


# -- the critic warm-up ------------------------------------------------------------------------------
def test_the_warmup_check_names_both_flags() -> None:
    from friday13_training.runs import warmup_problem

    assert warmup_problem(0, 1) is None and warmup_problem(99, 100) is None
    assert warmup_problem(100, 100) == (
        "--critic-warmup 100 is not below --total-timesteps 100: the actor would never learn (only the critic "
        "learns in the warm-up); give a shorter --critic-warmup or a longer --total-timesteps"
    )


def test_finetune_refuses_a_warmup_covering_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    script = load_training_script("finetune_ppo")
    run = ["--run-dir", str(tmp_path / "run")]
    refused(
        capsys,
        script.parse_args,
        [*run, "--total-timesteps", "30000"],
        "--critic-warmup 30,000 is not below --total-timesteps 30,000",
    )
    refused(
        capsys,
        script.parse_args,
        [*run, "--total-timesteps", "128", "--critic-warmup", "500", "--init-policy", ""],
        "--critic-warmup 500 is not below --total-timesteps 128",
    )
    assert script.parse_args([*run, "--total-timesteps", "30001"]).critic_warmup == 30_000


def test_best_response_refuses_a_warmup_covering_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = best_response()
    run = ["--run-dir", str(tmp_path / "run")]
    refused(
        capsys,
        script.parse_args,
        [*run, "--target", "ppo-v4", "--start", "target", "--total-timesteps", "1000000"],
        "--critic-warmup 1,000,000 is not below --total-timesteps 1,000,000",
    )
    scratch = script.parse_args([*run, "--target", "random", "--total-timesteps", "1000"])
    assert scratch.critic_warmup == 0  # a learner from scratch has none


# -- bounds --------------------------------------------------------------------------------------------
def test_train_friday_and_distill_bound_the_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train_friday = load_training_script("train_friday")
    refused(
        capsys, train_friday.parse_args, ["--run-dir", str(tmp_path / "a"), "--seed", str(MAX_SEED + 1)], SEED_ERROR
    )
    distill = load_training_script("distill")
    for teacher in ("search", "ensemble"):
        refused(capsys, distill.parse_args, ["--teacher", teacher, "--seed", str(MAX_SEED + 1)], SEED_ERROR)
    assert distill.parse_args(["--teacher", "search", "--seed", str(MAX_SEED)]).seed == MAX_SEED


def test_the_sb3_example_bounds_the_seed_and_needs_batched_opponents(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    script = load_training_script("sb3_vector_env")
    refused(capsys, script.parse_args, ["--seed", str(MAX_SEED + 1)], SEED_ERROR)
    assert script.parse_args(["--seed", str(MAX_SEED)]).seed == MAX_SEED
    batched = "--opponents: agent 'search' has no batched version; batched agents: ['cautious', 'majority', 'random']"
    refused(capsys, script.parse_args, ["--opponents", "cautious", "search"], batched)
    assert script.parse_args(["--opponents", "ppo-v4", "majority"]).opponents == ["ppo-v4", "majority"]


def test_finetune_bounds_the_init_temperature_as_train_ppo_bounds_the_sharpness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The temperature divides the logits: 1/1024 to 1024, the reciprocals of ``--init-sharpness``'s bounds."""
    pytest.importorskip("sb3_contrib")
    script = load_training_script("finetune_ppo")
    run = ["--run-dir", str(tmp_path / "run")]
    for value in ("1e-300", "0", "2048"):
        refused(
            capsys,
            script.parse_args,
            [*run, "--init-temperature", value],
            "--init-temperature: must be at least 0.000976562 and at most 1024, got",
        )
    for value in (2.0**-10, 2.0**10):
        assert script.parse_args([*run, "--init-temperature", str(value)]).init_temperature == value


def test_train_rllib_caps_its_network_and_bounds_its_seed(tmp_path: Path) -> None:
    """Its checks live where they can run without Ray (``friday13_training.rllib_args``); the script uses them."""
    from friday13_training import rllib_args
    from friday13_training.script_args import dataclass_parser

    run = {"run_dir": str(tmp_path / "run")}
    with pytest.raises(ValueError, match=r"--hidden-sizes 4096 4096 4096: the policy would have .* parameters"):
        rllib_args.checked_args(rllib_args.Args(**run, hidden_sizes=[4096, 4096, 4096]))
    with pytest.raises(ValueError, match="hidden layers; the policy loader reads at most"):
        rllib_args.checked_args(rllib_args.Args(**run, hidden_sizes=[8] * 64))
    assert rllib_args.checked_args(rllib_args.Args(**run)).hidden_sizes == [128, 128]
    parser = dataclass_parser(rllib_args.Args, None)
    with pytest.raises(SystemExit):
        parser.parse_args(["--seed", str(MAX_SEED + 1)])
    assert parser.parse_args(["--seed", str(MAX_SEED)]).seed == MAX_SEED
    source = (TRAINING / "train_rllib.py").read_text()
    assert "from friday13_training.rllib_args import" in source  # the script parses with these checks


# -- plot_curve.py --out ------------------------------------------------------------------------------
def test_plot_curve_refuses_a_format_matplotlib_cannot_write_before_reading_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    plot = load_training_script("plot_curve")
    refused(
        capsys,
        plot.main,
        [str(tmp_path / "no-run"), "--out", str(tmp_path / "c.txt")],
        "--out: matplotlib cannot write '.txt' files; use one of",
        ".png",
    )
    refused(
        capsys,
        plot.main,
        [str(tmp_path / "no-run"), "--out", str(tmp_path / "curve")],
        "--out: matplotlib cannot write 'extension-less' files",
    )
    refused(capsys, plot.main, [str(tmp_path / "no-run"), "--out", str(tmp_path)], f"--out: {tmp_path} is a folder")
    refused(capsys, plot.main, [str(tmp_path / "no-run"), "--out", str(tmp_path / "c.svg")], "does not exist")


# -- best_response.py's final evaluation and its --resume ------------------------------------------------
def test_best_response_needs_two_deals_in_its_final_evaluation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One deal gives no interval (NaN in the result, a ``--record`` refused only after the training)."""
    script = best_response()
    run = ["--run-dir", str(tmp_path / "run"), "--target", "random"]
    refused(
        capsys,
        script.parse_args,
        [*run, "--final-games", "4"],
        "--final-games 4: the final evaluation needs at least two deals (more than --players 4 games)",
    )
    refused(capsys, script.parse_args, [*run, "--players", "6", "--final-games", "6"], "more than --players 6 games")
    assert script.parse_args([*run, "--final-games", "5"]).final_games == 5


# -- --players lists each table size once ---------------------------------------------------------------
def test_the_scripts_that_seat_tables_refuse_a_repeated_table_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Their environments draw a table size uniformly from the sizes listed and refuse a repeated one; the flag is
    refused before any work, naming it."""
    from friday13_training import rllib_args

    run = ["--run-dir", str(tmp_path / "run")]
    message = "--players: 3 4 4 repeats a value; list each one once"
    refused(capsys, load_training_script("train_ppo").parse_args, [*run, "--players", "3", "4", "4"], message)
    with pytest.raises(ValueError, match=message):
        rllib_args.checked_args(rllib_args.Args(run_dir=str(tmp_path / "run"), players=[3, 4, 4]))
    pytest.importorskip("sb3_contrib")  # finetune_ppo's, last: the checks above ran without it
    refused(capsys, load_training_script("finetune_ppo").parse_args, [*run, "--players", "3", "4", "4"], message)
