"""``train_ppo.py --magnet-coef`` / ``--magnet-every`` (``friday13_training.magnet``): the KL divergence from the
magnet over legal actions only, a magnet that starts as the run's first actor and moves when told, saved in the
checkpoint and read back by ``--resume`` (checked like the networks), kept across an interrupt, ignored by a fork, and
a record made before the flags resuming without one."""

from __future__ import annotations

import json
import re
import shutil
import signal
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.scripts import TINY_PPO, load_training_script
from tests.training.test_train_ppo_hardening import interrupting

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training.magnet import frozen_copy, magnet_kl, move_magnet  # noqa: E402
from friday13_training.ppo_checkpoint import Boundary, read_state  # noqa: E402
from friday13_training.runs import Interrupted  # noqa: E402

MAGNET = ["--magnet-coef", "0.5"]


def load_script() -> Any:
    return load_training_script("train_ppo")


def checkpoint(run_dir: Path) -> dict[str, Any]:
    state: dict[str, Any] = read_state(run_dir / "last.pt", "cpu")
    return state


def actor_of(state: dict[str, Any]) -> dict[str, Any]:
    """The actor's weights in a checkpoint's networks, keyed as the magnet's are."""
    return {key.removeprefix("actor."): value for key, value in state["model"].items() if key.startswith("actor.")}


def same_weights(first: dict[str, Any], second: dict[str, Any]) -> bool:
    return first.keys() == second.keys() and all(torch.equal(first[key], second[key]) for key in first)


def train(run_dir: Path, *flags: str) -> dict[str, Any]:
    load_script().main(["--run-dir", str(run_dir), *TINY_PPO, *flags])
    return checkpoint(run_dir)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run without a magnet, 256 timesteps: the start of the forks below."""
    run_dir = tmp_path_factory.mktemp("magnet") / "source"
    train(run_dir, "--total-timesteps", "256")
    return run_dir


# -- the divergence --------------------------------------------------------------------------------
def test_the_divergence_is_kl_over_the_legal_actions_only() -> None:
    masks = torch.tensor([[True, True, False], [True, True, True]])
    policy = torch.tensor([[1.0, 0.0, 0.0], [0.5, -1.0, 2.0]]).masked_fill(~masks, -1e9)
    magnet = torch.tensor([[0.0, 2.0, 0.0], [0.5, -1.0, 2.0]]).masked_fill(~masks, -1e9)
    log_p, log_q = torch.log_softmax(policy, dim=1), torch.log_softmax(magnet, dim=1)
    p, q = np.exp([1.0, 0.0]) / np.exp([1.0, 0.0]).sum(), np.exp([0.0, 2.0]) / np.exp([0.0, 2.0]).sum()
    expected = float((p * np.log(p / q)).sum()) / 2  # the second sample's policy is its magnet: 0
    assert magnet_kl(log_p, log_q, masks).item() == pytest.approx(expected, rel=1e-6)
    assert magnet_kl(log_p, log_p, masks).item() == 0.0


def test_an_illegal_action_adds_nothing_even_where_the_masked_logits_round_apart() -> None:
    """-1e9 minus a log-sum-exp rounds to different floats in the two log-softmaxes; the term is left out, not
    multiplied by a probability of 0 (which a NaN or an infinity there would not survive)."""
    masks = torch.tensor([[True, False]])
    log_p = torch.tensor([[0.0, -1e9]])
    log_q = torch.tensor([[0.0, float("-inf")]])
    divergence = magnet_kl(log_p.requires_grad_(), log_q, masks)
    divergence.backward()
    assert divergence.item() == 0.0
    assert log_p.grad is not None and torch.isfinite(log_p.grad).all()


def test_the_magnet_is_a_frozen_copy_that_moves_only_when_told() -> None:
    actor = torch.nn.Linear(3, 2)
    magnet = frozen_copy(actor)
    assert not any(parameter.requires_grad for parameter in magnet.parameters())
    with torch.no_grad():
        actor.weight.add_(1.0)
    assert not torch.equal(magnet.weight, actor.weight)
    move_magnet(magnet, actor)
    assert torch.equal(magnet.weight, actor.weight) and magnet.weight.data_ptr() != actor.weight.data_ptr()


# -- runs ------------------------------------------------------------------------------------------
def test_a_fixed_magnet_stays_the_forks_start_and_a_moving_one_follows_the_actor(source: Path, tmp_path: Path) -> None:
    """From ``--init-run`` the magnet is the source's actor; without ``--magnet-every`` it stays that after the run
    learned, with ``--magnet-every`` one rollout it is the actor as the run ended."""
    start = actor_of(checkpoint(source))
    fixed = train(tmp_path / "fixed", "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    assert same_weights(fixed["magnet"], start) and not same_weights(actor_of(fixed), start)
    moving = train(tmp_path / "moving", "--init-run", str(source), "--total-timesteps", "256", *MAGNET,
                   "--magnet-every", "128")  # fmt: skip
    assert same_weights(moving["magnet"], actor_of(moving))


def test_the_magnet_moves_at_the_first_rollout_end_at_or_past_each_multiple(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--magnet-every 200`` with rollouts of 128: it moves at 256, 512 and 640 (past 200, 400 and 600), not at 128
    or 384, in a run that goes straight through and in one resumed at 384 alike."""
    script = load_script()
    saved: dict[int, dict[str, Any]] = {}
    real = script.save_run

    def saving(run_dir: Path, *rest: Any, **keywords: Any) -> None:
        real(run_dir, *rest, **keywords)
        saved[rest[-1]["timesteps"]] = checkpoint(run_dir)

    monkeypatch.setattr(script, "save_run", saving)
    flags = ["--init-run", str(source), *TINY_PPO, *MAGNET, "--magnet-every", "200", "--checkpoint-every", "128"]
    script.main(["--run-dir", str(tmp_path / "straight"), *flags, "--total-timesteps", "640"])
    assert sorted(saved) == [128, 256, 384, 512, 640]
    start = actor_of(checkpoint(source))
    moved_at = {128: start, 256: actor_of(saved[256]), 384: actor_of(saved[256]), 512: actor_of(saved[512])}
    moved_at[640] = actor_of(saved[640])
    for timesteps, magnet in moved_at.items():
        assert same_weights(saved[timesteps]["magnet"], magnet), timesteps
    assert not same_weights(actor_of(saved[256]), actor_of(saved[384]))
    saved.clear()
    resumed = tmp_path / "resumed"
    script.main(["--run-dir", str(resumed), *flags, "--total-timesteps", "384"])
    script.main(["--run-dir", str(resumed), "--resume", "--total-timesteps", "640"])
    assert same_weights(saved[384]["magnet"], actor_of(saved[256]))
    assert same_weights(saved[512]["magnet"], actor_of(saved[512]))
    assert same_weights(saved[640]["magnet"], actor_of(saved[640]))


def test_an_interrupt_right_after_a_move_saves_the_magnet_of_the_rollouts_start(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SIGTERM as the magnet moves at 256: the run is saved as it was at 128, the magnet still the source's actor."""
    script = load_script()
    interrupting(script, monkeypatch, "move_magnet", 1, Interrupted(signal.SIGTERM))
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit):
        script.main(["--run-dir", str(run_dir), "--init-run", str(source), *TINY_PPO, *MAGNET, "--magnet-every",
                     "256", "--total-timesteps", "512", "--checkpoint-every", "1024"])  # fmt: skip
    assert "the checkpoint at 128 timesteps" in capsys.readouterr().err
    state = checkpoint(run_dir)
    assert state["timesteps"] == 128
    assert same_weights(state["magnet"], actor_of(checkpoint(source)))
    assert not same_weights(state["magnet"], actor_of(state))


def test_the_magnet_changes_what_is_learned_and_reproduces(source: Path, tmp_path: Path) -> None:
    plain = train(tmp_path / "plain", "--init-run", str(source), "--total-timesteps", "256")
    first = train(tmp_path / "a", "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    again = train(tmp_path / "b", "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    assert "magnet" not in plain
    assert not same_weights(actor_of(first), actor_of(plain))
    assert same_weights(first["model"], again["model"]) and same_weights(first["magnet"], again["magnet"])


def test_resume_reads_the_runs_magnet_not_a_copy_of_the_resumed_actor(source: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train(run_dir, "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])
    resumed = checkpoint(run_dir)
    assert same_weights(resumed["magnet"], actor_of(checkpoint(source)))
    assert json.loads((run_dir / "progress.json").read_text())["args"]["magnet_coef"] == 0.5


def test_resume_without_a_magnet_refuses_a_checkpoint_that_holds_one(source: Path, tmp_path: Path) -> None:
    """A record whose --magnet-coef was set to 0 over a magnet run's checkpoint would drop the magnet unsaid."""
    run_dir = tmp_path / "run"
    train(run_dir, "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    record = json.loads((run_dir / "progress.json").read_text())
    record["args"]["magnet_coef"] = 0.0
    (run_dir / "progress.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit, match="it holds a magnet, which only a run of --magnet-coef saves"):
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])


def test_resume_refuses_a_checkpoint_without_its_magnet_or_with_a_damaged_one(source: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    state = train(run_dir, "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    resume = ["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"]
    kept = (run_dir / "last.pt").read_bytes()
    torch.save({key: value for key, value in state.items() if key != "magnet"}, run_dir / "last.pt")
    with pytest.raises(SystemExit, match="it holds no magnet, which a run of --magnet-coef saves"):
        load_script().main(resume)
    name = next(iter(state["magnet"]))
    torch.save({**state, "magnet": {**state["magnet"], name: torch.zeros(3)}}, run_dir / "last.pt")
    damaged = re.escape(f"the magnet's weight '{name}' is a tensor of torch.float32 and shape (3,)")
    with pytest.raises(SystemExit, match=damaged):
        load_script().main(resume)
    torch.save({**state, "magnet": {**state["magnet"], name: state["magnet"][name] * np.nan}}, run_dir / "last.pt")
    with pytest.raises(SystemExit, match=r"non-finite numbers \(NaN or inf\) in its magnet"):
        load_script().main(resume)
    (run_dir / "last.pt").write_bytes(kept)
    load_script().main(resume)
    assert same_weights(checkpoint(run_dir)["magnet"], state["magnet"])


def test_the_magnet_is_a_hyperparameter_of_the_run(source: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    train(run_dir, "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    with pytest.raises(SystemExit, match=re.escape("--magnet-coef: the run has 0.5, the command line 0.25")):
        load_script().main(["--run-dir", str(run_dir), "--resume", "--magnet-coef", "0.25"])


def test_a_record_made_before_the_magnet_resumes_without_one(source: Path, tmp_path: Path) -> None:
    run_dir = Path(shutil.copytree(source, tmp_path / "run"))
    record = json.loads((run_dir / "progress.json").read_text())
    del record["args"]["magnet_coef"], record["args"]["magnet_every"]
    (run_dir / "progress.json").write_text(json.dumps(record))
    load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])
    assert "magnet" not in checkpoint(run_dir)


def test_a_fork_of_a_magnet_run_starts_from_its_networks_alone(source: Path, tmp_path: Path) -> None:
    magnet_run = tmp_path / "magnet"
    state = train(magnet_run, "--init-run", str(source), "--total-timesteps", "256", *MAGNET)
    assert not same_weights(state["magnet"], actor_of(state))  # (so a fork from the magnet would be told apart)
    fork = train(tmp_path / "fork", "--init-run", str(magnet_run), "--total-timesteps", "128", "--learning-rate",
                 "1e-9")  # fmt: skip
    assert "magnet" not in fork
    np.testing.assert_allclose(actor_of(fork)["0.weight"], actor_of(state)["0.weight"], atol=1e-6)


def test_magnet_every_without_a_magnet_is_refused_before_anything_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(SystemExit):
        load_script().main(["--run-dir", str(run_dir), *TINY_PPO, "--magnet-every", "128"])
    assert "--magnet-every 128 moves the magnet of --magnet-coef, which is 0 (no magnet)" in capsys.readouterr().err
    assert not run_dir.exists()


def test_an_interrupt_saves_the_magnet_of_the_rollouts_start() -> None:
    """``Boundary`` holds the magnet with the networks, so that Ctrl-C saves the run as one of its checkpoints."""
    model = torch.nn.Module()
    model.actor = torch.nn.Linear(2, 2)
    magnet = frozen_copy(model.actor)
    optimizer = torch.optim.Adam(model.parameters())
    boundary = Boundary.of(0, model, optimizer, {}, magnet)  # type: ignore[arg-type]
    before = {key: value.clone() for key, value in magnet.state_dict().items()}
    with torch.no_grad():
        model.actor.weight.add_(1.0)
    move_magnet(magnet, model.actor)
    boundary.restore(model, optimizer, magnet)  # type: ignore[arg-type]
    assert same_weights(magnet.state_dict(), before)
