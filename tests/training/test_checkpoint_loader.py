"""One checkpoint loader for every flag that reads a ``train_ppo.py`` checkpoint (``ppo_checkpoint.read_checkpoint``):
its messages name the flag that read the file. A new run that starts from another run's networks (``--init-run``)
or reads back the snapshot it just froze is no ``--resume``, and no message of it may say so; a resume's messages
still do."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.scripts import TINY_PPO, load_training_script

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training import ppo_checkpoint, run_fork  # noqa: E402  (needs torch's extra installed)
from friday13_training.runs import RunError  # noqa: E402

SNAPSHOTS = ["--snapshot-every", "128", "--max-snapshots", "1"]


def load_script() -> ModuleType:
    return load_training_script("train_ppo")


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of two rollouts with a snapshot in its pool; tests copy it before changing it."""
    run_dir = tmp_path_factory.mktemp("loader") / "source"
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "256", *TINY_PPO, *SNAPSHOTS])
    return run_dir


def copy_of(run_dir: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / run_dir.name))


def rewrite_checkpoint(run_dir: Path, **changes: Any) -> None:
    """``last.pt`` with ``changes`` to its state (a key set to ``None`` is removed)."""
    path = run_dir / ppo_checkpoint.CHECKPOINT
    state = torch.load(path, weights_only=True)
    for key, value in changes.items():
        if value is None:
            del state[key]
        else:
            state[key] = value
    torch.save(state, path)


def model_for(train: ModuleType, argv: list[str]) -> tuple[Any, Any]:
    """The networks ``train_ppo.py`` builds for ``argv``, and its parsed arguments."""
    from friday13_training.actor_critic import ActorCritic

    from friday13_env.friday13.agents.policy import observation_scale
    from friday13_env.friday13.cards import get_deck

    args = train.parse_args(argv)
    deck = get_deck(args.deck)
    model = ActorCritic(
        observation_scale(args.deck), train.hidden_scale(args), deck.num_actions, args.hidden_sizes, args.activation
    )
    return model, args


def fork_refusal(train: ModuleType, source: Path, tmp_path: Path) -> str:
    """What ``--init-run source`` says of its source, at the checks of the command line and when the run loads it."""
    argv = ["--run-dir", str(tmp_path / "fork"), *TINY_PPO]
    model, args = model_for(train, argv)
    problems = run_fork.fork_problems(source, train.fresh_progress(args), train.ADDED_LATER)
    assert len(problems) == 1, problems
    before = {key: value.clone() for key, value in model.state_dict().items()}
    with pytest.raises(RunError) as refused:
        run_fork.start_from(source, model, "cpu", train.fresh_progress(args), train.ADDED_LATER)
    assert all(torch.equal(before[key], value) for key, value in model.state_dict().items())  # nothing loaded
    assert str(refused.value) == problems[0]  # one loader, one message
    return problems[0]


@pytest.mark.parametrize(("timesteps", "shown"), [(-1, "-1"), (256.0, "256.0"), (True, "True")])
def test_a_fork_sources_timesteps_that_are_no_count_are_named_for_init_run_not_resume(
    source_run: Path, tmp_path: Path, timesteps: object, shown: str
) -> None:
    """``--init-run``'s source whose ``last.pt`` holds timesteps that are not a count was refused with a message in a
    message: ``--init-run: ... (--resume: ... its timesteps are -1 ...)``, naming a flag the command never gave."""
    source = copy_of(source_run, tmp_path)
    rewrite_checkpoint(source, timesteps=timesteps)
    message = fork_refusal(load_script(), source, tmp_path)
    assert message.startswith(f"--init-run: {source / 'last.pt'} is damaged"), message
    assert f"its timesteps are {shown}, not a non-negative integer" in message, message
    assert "--resume" not in message, message


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ({"model": None}, "is damaged or not a train_ppo.py checkpoint (KeyError: 'model')"),
        ({"model": [1, 2]}, "is damaged or not a train_ppo.py checkpoint (its model state is a list, not a dict)"),
        ({"timesteps": 128}, "holds 128 timesteps but"),
    ],
)
def test_a_fork_sources_damaged_checkpoint_is_named_for_init_run(
    source_run: Path, tmp_path: Path, damage: dict[str, Any], expected: str
) -> None:
    source = copy_of(source_run, tmp_path)
    rewrite_checkpoint(source, **damage)
    message = fork_refusal(load_script(), source, tmp_path)
    assert message.startswith(f"--init-run: {source / 'last.pt'} "), message
    assert expected in message and "--resume" not in message, message


def test_a_fork_sources_damaged_record_is_named(source_run: Path, tmp_path: Path) -> None:
    """A source whose ``progress.json`` does not parse was refused without naming the file: ``--init-run:
    Unterminated string starting at: line 4 column 3 (char 36)``."""
    source = copy_of(source_run, tmp_path)
    record = source / "progress.json"
    record.write_text(record.read_text()[:40])
    message = fork_refusal(load_script(), source, tmp_path)
    assert message.startswith(f"--init-run: {record} is damaged: "), message
    assert "--resume" not in message, message


def test_a_fork_sources_non_finite_weights_are_refused_before_anything_is_loaded(
    source_run: Path, tmp_path: Path
) -> None:
    source = copy_of(source_run, tmp_path)
    weights = torch.load(source / "last.pt", weights_only=True)["model"]
    weights["critic.0.weight"] = torch.full_like(weights["critic.0.weight"], float("nan"))
    rewrite_checkpoint(source, model=weights)
    train = load_script()
    model, args = model_for(train, ["--run-dir", str(tmp_path / "fork"), *TINY_PPO])
    before = {key: value.clone() for key, value in model.state_dict().items()}
    with pytest.raises(RunError) as refused:
        run_fork.start_from(source, model, "cpu", train.fresh_progress(args), train.ADDED_LATER)
    message = str(refused.value)
    assert message.startswith(f"--init-run: {source / 'last.pt'} is damaged: it holds non-finite numbers"), message
    assert all(torch.equal(before[key], value) for key, value in model.state_dict().items())


def test_a_new_run_that_cannot_read_back_its_snapshot_names_no_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run reads back each snapshot it freezes (``add_snapshot``): a failed read said ``--resume: the snapshot
    ... is missing or damaged`` in a run started without ``--resume``."""

    def unreadable(path: Path) -> Any:
        raise ValueError(f"{path}: a disk that lost it")

    monkeypatch.setattr(ppo_checkpoint, "read_friday13_policy", unreadable)
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit) as stop:
        load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "256", *TINY_PPO, *SNAPSHOTS])
    message = str(stop.value.code)
    assert "the snapshot" in message and "a disk that lost it" in message, message
    assert "--resume" not in message, message


def test_a_resumes_damaged_snapshot_is_still_named_for_resume(source_run: Path, tmp_path: Path) -> None:
    run_dir = copy_of(source_run, tmp_path)
    [name] = json.loads((run_dir / "progress.json").read_text())["snapshots"]
    (run_dir / "snapshots" / f"{name}.npz").write_bytes(b"junk")
    with pytest.raises(SystemExit) as stop:
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])
    message = str(stop.value.code)
    assert message.startswith(f"error: --resume: the snapshot {run_dir / 'snapshots' / name}.npz is missing or damaged")


def test_a_resumes_damaged_checkpoint_is_still_named_for_resume(source_run: Path, tmp_path: Path) -> None:
    run_dir = copy_of(source_run, tmp_path)
    rewrite_checkpoint(run_dir, timesteps=-1)
    with pytest.raises(SystemExit) as stop:
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])
    message = str(stop.value.code)
    assert message.startswith(f"error: --resume: {run_dir / 'last.pt'} is damaged: its timesteps are -1"), message
    assert message.endswith("restore it or start a new run"), message
