"""Defects a hostile review found in the SB3 and RLlib scripts (0.27.0): finetune_ppo.py's adjacent seeds shared
their environments and ``--resume`` dealt the first session's games again, ``--resume`` took a damaged learning
curve and crashed after training, sb3_vector_env.py took a ``--num-envs`` whose rollout buffer could not be
allocated, and train_rllib.py's loss weights, clip ranges and evaluation games were unbounded."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.scripts import load_training_script, policy_arrays, refused

pytest.importorskip("sb3_contrib", reason="the training extra is not installed")
torch = pytest.importorskip("torch")

TINY = [
    "--num-envs", "4", "--no-subprocess", "--n-steps", "32", "--batch-size", "64", "--n-epochs", "1",
    "--hidden-sizes", "16", "16", "--no-progress", "--init-policy", "", "--critic-warmup", "0", "--eval-every", "0",
    "--checkpoint-every", "0",
]  # fmt: skip
"""finetune_ppo.py at its smallest: one rollout is 4 x 32 = 128 timesteps, no evaluation."""

Deal = tuple[int, str, int]
"""What an environment's seeded reset dealt: its seed, a hash of its first observation, torch's seed then."""


def traced_run(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> list[Deal]:
    """Run ``finetune_ppo.py argv``, returning every seeded reset of its environments (``Deal``) in order."""
    script = load_training_script("finetune_ppo")
    deals: list[Deal] = []
    reset = script.ScaledObservation.reset

    def traced(self: Any, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        observation, info = reset(self, seed=seed, options=options)
        if seed is not None:
            deals.append((seed, hashlib.sha1(observation.tobytes()).hexdigest(), torch.initial_seed()))
        return observation, info

    monkeypatch.setattr(script.ScaledObservation, "reset", traced)
    script.main(argv)
    return deals


def observations(deals: list[Deal]) -> set[str]:
    return {observation for _, observation, _ in deals}


# -- item 3: finetune_ppo.py's seeds --------------------------------------------------------------------------------
def test_adjacent_seeds_deal_other_games_in_every_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SB3 reseeded environment k with seed + k, so seed 1's environments were seed 0's shifted by one: 3 of 4 the
    same. Distinct seeds now deal from seeds no other run's environment has."""
    runs = [
        traced_run(
            monkeypatch,
            ["--run-dir", str(tmp_path / f"seed{seed}"), "--seed", str(seed), "--total-timesteps", "128", *TINY],
        )
        for seed in (0, 1)
    ]
    assert [len(deals) for deals in runs] == [4, 4]  # each environment dealt once, with a seed
    seeds = [{seed for seed, _, _ in deals} for deals in runs]
    assert len(seeds[0]) == len(seeds[1]) == 4 and not seeds[0] & seeds[1]
    assert len(observations(runs[0])) == 4 and not observations(runs[0]) & observations(runs[1])


def test_a_resumed_session_deals_and_samples_from_its_own_seed_reproducibly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--resume`` set SB3 up with the run's seed again, so the second session dealt the first one's games and drew
    its sampling noise. It now deals from ``session_seed(seed, timesteps)``, records where it resumed, and the same
    commands make the same run."""
    from friday13_training.runs import session_seed

    def run(run_dir: Path) -> tuple[list[Deal], list[Deal], dict[str, Any]]:
        first = traced_run(monkeypatch, ["--run-dir", str(run_dir), "--total-timesteps", "128", *TINY])
        second = traced_run(monkeypatch, ["--run-dir", str(run_dir), "--total-timesteps", "256", "--resume", *TINY])
        return first, second, json.loads((run_dir / "progress.json").read_text())

    first, second, progress = run(tmp_path / "a")
    assert progress["timesteps"] == 256 and progress["resumed_at"] == [128]
    assert {torch_seed for _, _, torch_seed in first} == {0}
    assert {torch_seed for _, _, torch_seed in second} == {session_seed(0, 128)}  # its own sampling noise
    assert not {seed for seed, _, _ in first} & {seed for seed, _, _ in second}
    assert len(observations(second)) == 4 and not observations(first) & observations(second)

    again = run(tmp_path / "b")
    assert again[:2] == (first, second)
    assert again[2]["resumed_at"] == [128]
    weights, weights_again = (policy_arrays(tmp_path / name / "policy.npz") for name in ("a", "b"))
    assert weights.keys() == weights_again.keys()
    assert all(np.array_equal(weights[key], weights_again[key]) for key in weights)


def test_the_dead_reset_is_gone() -> None:
    """The environments' own ``reset(seed=seed * 1000 + rank)`` had no effect (SB3 reseeds them at its first reset)."""
    script = load_training_script("finetune_ppo")
    args = script.parse_args(["--run-dir", "unused", *TINY])
    env = script.make_env(args, 0, np.ones(1, dtype=np.float32))
    made = env()
    try:
        with pytest.raises(RuntimeError):  # never reset: the environment refuses a step
            made.unwrapped.step(0)
    finally:
        made.close()


# -- item 5: finetune_ppo.py --resume checks the learning curve -----------------------------------------------------
@pytest.mark.parametrize(
    "point",
    [
        {"timesteps": 99, "bogus": 1},
        {"timesteps": 64, "cautious": 7.5, "majority": 0.5},
        {"timesteps": 999, "cautious": 0.5, "majority": 0.5},
    ],
)
def test_resume_refuses_a_damaged_learning_curve_before_building_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: dict[str, Any]
) -> None:
    """A point with an unknown key passed, trained, and ended in a ``DictWriter`` traceback; out-of-range points were
    carried forward silently. Now ``--resume`` names the record and the point, before any environment is made."""
    script = load_training_script("finetune_ppo")
    run_dir = tmp_path / "run"
    script.main(["--run-dir", str(run_dir), "--total-timesteps", "128", *TINY])
    record = run_dir / "progress.json"
    progress = json.loads(record.read_text())
    progress["curve"].append(point)
    record.write_text(json.dumps(progress))

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("something was built before the record was checked")

    monkeypatch.setattr(script, "make_vec_env", built)
    with pytest.raises(SystemExit) as stopped:
        script.main(["--run-dir", str(run_dir), "--total-timesteps", "256", "--resume", *TINY])
    message = str(stopped.value.code)
    assert message.startswith(f"error: --resume: {record} is damaged: curve point 0"), message
    assert json.loads(record.read_text())["timesteps"] == 128


def test_resume_refuses_a_damaged_resumed_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The record's ``resumed_at`` is checked as ``train_ppo.py`` checks it."""
    script = load_training_script("finetune_ppo")
    run_dir = tmp_path / "run"
    script.main(["--run-dir", str(run_dir), "--total-timesteps", "128", *TINY])
    record = run_dir / "progress.json"
    progress = json.loads(record.read_text())
    assert progress["resumed_at"] == []
    progress["resumed_at"] = [512]
    record.write_text(json.dumps(progress))
    with pytest.raises(SystemExit, match=r"is damaged: resumed_at is \[512\], not a list of timesteps from 0 to"):
        script.main(["--run-dir", str(run_dir), "--total-timesteps", "256", "--resume", *TINY])


# -- item 8: sb3_vector_env.py --num-envs against the rollout memory cap ----------------------------------------------
def sb3_example(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``sb3_vector_env.py``, whose environments and model may not be built."""
    example = load_training_script("sb3_vector_env")

    def built(*args: object, **kwargs: object) -> None:
        raise AssertionError("something was built before the flags were checked")

    monkeypatch.setattr(example, "MaskablePPO", built)
    monkeypatch.setattr(example.gym, "make_vec", built)
    return example


def test_sb3_vector_env_refuses_a_rollout_buffer_over_the_memory_cap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--num-envs 1048576`` passed argparse and died allocating 36.5 GiB of observations; now argparse refuses any
    ``--num-envs`` whose rollout (64 steps each) is over 16 GiB, as finetune_ppo.py sizes the same buffer."""
    from friday13_training.script_args import MAX_ROLLOUT_BYTES, sb3_rollout_bytes

    example = sb3_example(monkeypatch)
    save = ["--save", str(tmp_path / "model.zip")]
    refused(
        capsys,
        example.main,
        [*save, "--num-envs", "1048576"],
        "--num-envs 1048576 x 64 steps: ",
        " GiB of rollout arrays; allowed: at most 16 GiB (use fewer environments)",
    )
    per_environment = sb3_rollout_bytes("standard", 64, 1)
    largest = MAX_ROLLOUT_BYTES // per_environment
    assert 1_000 < largest < 1 << 20
    assert sb3_rollout_bytes("standard", 64, largest) == largest * per_environment <= MAX_ROLLOUT_BYTES
    assert example.parse_args([*save, "--num-envs", str(largest)]).num_envs == largest
    refused(capsys, example.main, [*save, "--num-envs", str(largest + 1)], f"--num-envs {largest + 1} x 64 steps")


def test_finetune_ppo_sizes_its_rollout_with_the_same_helper(capsys: pytest.CaptureFixture[str]) -> None:
    """One computation of SB3's rollout buffer for both scripts: finetune_ppo.py's refusal names the same bytes."""
    from friday13_training.script_args import sb3_rollout_bytes

    script = load_training_script("finetune_ppo")
    gib = sb3_rollout_bytes("standard", 1 << 20, 1024) / (1 << 30)
    refused(
        capsys,
        script.parse_args,
        ["--run-dir", "unused", "--n-steps", str(1 << 20), "--num-envs", "1024", "--batch-size", "64"],
        f"--n-steps {1 << 20} x --num-envs 1024: {gib:,.1f} GiB of rollout arrays",
    )


# -- item 13: train_rllib.py's bounds -------------------------------------------------------------------------------
RLLIB_BOUNDS = [
    ("--clip-coef", "1e300", "must be above 0 and at most 10, got 1e+300"),
    ("--ent-coef", "1e300", "must be at least 0 and at most 100, got 1e+300"),
    ("--vf-coef", "101", "must be at least 0 and at most 100, got 101"),
    ("--max-grad-norm", "1e300", "must be above 0 and at most 1e+06, got 1e+300"),
    ("--eval-games", "100000000", "must be at least 1 and at most 1,000,000, got 100,000,000"),
    ("--iterations", "999999999999999999999", "must be at least 1 and at most 1,000,000,000,000,000, got"),
]
"""Each flag of ``train_rllib.py`` the review found unbounded, a value past its bound, and the refusal."""


@pytest.mark.parametrize(("flag", "value", "message"), RLLIB_BOUNDS)
def test_train_rllib_bounds_its_loss_weights_clips_evaluations_and_iterations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    """Refused by the parser and by ``checked_args`` (a configuration built in Python), naming the flag, before Ray
    starts; the bounds are those of the other scripts (``script_args``)."""
    from friday13_training import rllib_args
    from friday13_training.script_args import dataclass_parser

    parser = dataclass_parser(rllib_args.Args, None)
    refused(capsys, parser.parse_args, [flag, value], f"argument {flag}: {message}")
    field = flag[2:].replace("-", "_")
    number = type(getattr(rllib_args.Args(), field))(float(value) if "e" in value else int(value))
    with pytest.raises(ValueError, match=re.escape(f"{flag}: {message}")):
        rllib_args.checked_args(rllib_args.Args(run_dir=str(tmp_path / "run"), **{field: number}))


def test_train_rllib_takes_values_at_its_bounds(tmp_path: Path) -> None:
    from friday13_training import rllib_args
    from friday13_training.script_args import MAX_CLIP, MAX_EVAL_GAMES, MAX_LOSS_WEIGHT

    args = rllib_args.Args(
        run_dir=str(tmp_path / "run"),
        clip_coef=MAX_CLIP,
        ent_coef=MAX_LOSS_WEIGHT,
        vf_coef=MAX_LOSS_WEIGHT,
        max_grad_norm=rllib_args.MAX_GRAD_NORM,
        eval_games=MAX_EVAL_GAMES,
    )
    assert rllib_args.checked_args(args) is args
