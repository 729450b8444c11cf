"""Defects a hostile review of ``ppo_checkpoint`` found (0.20.0), each pinned here: a ``last.pt`` whose tensors are
views repeating one stored number (a file of a megabyte asking for terabytes once scanned), or whose keys, shapes
or dtypes are not the networks' and the optimizer's (found only at the first update, or after part of it was
loaded), must be refused from its sizes and strides alone, before a value is read or anything loaded; a snapshot of
another deck must not join the pool."""

from __future__ import annotations

import io
import shutil
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.scripts import PLAIN_PPO_RECIPE, load_training_script

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training.actor_critic import ActorCritic  # noqa: E402
from friday13_training.ppo_checkpoint import (  # noqa: E402
    CHECKPOINT,
    load_checkpoint,
    read_snapshot,
    save_checkpoint,
)
from friday13_training.runs import RunError  # noqa: E402

from friday13_env.core.mlp import RAW_INPUT  # noqa: E402
from friday13_env.friday13.agents.policy import observation_scale  # noqa: E402
from friday13_env.friday13.cards import get_deck  # noqa: E402
from friday13_env.friday13.encoding import omen_type_groups  # noqa: E402
from tests.training.test_ppo_checkpoint import TIMESTEPS, run_with, same, states, tiny_model  # noqa: E402

HUGE = 1 << 45
"""The elements of a bomb: one stored float shown 2**45 times (a scan of it would ask for 32 TiB at least)."""
SCANNED = 10_000
"""More elements than any tensor of the tiny networks holds: a scan of more reads a view, not a stored tensor."""


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes ``torch.isfinite`` is asked to scan; one beyond ``SCANNED`` fails the test before anything is
    allocated (were the checks to miss a bomb, the test fails instead of filling the memory)."""
    sizes: list[int] = []
    isfinite = torch.isfinite

    def bounded(tensor: Any) -> Any:
        sizes.append(tensor.numel())
        assert tensor.numel() <= SCANNED, f"torch.isfinite was asked to scan {tensor.numel():,} elements"
        return isfinite(tensor)

    monkeypatch.setattr(torch, "isfinite", bounded)
    return sizes


def bomb() -> Any:
    return torch.zeros(1).expand(HUGE)


def tampered(change: Callable[[dict[str, Any], dict[str, Any]], None]) -> bytes:
    """The tiny model's checkpoint at ``TIMESTEPS`` with ``change(weights, optimizer state)`` applied."""
    model, optimizer = tiny_model()
    weights, moments = model.state_dict(), optimizer.state_dict()
    change(weights, moments)
    buffer = io.BytesIO()
    torch.save({"model": weights, "optimizer": moments, "timesteps": TIMESTEPS}, buffer)
    return buffer.getvalue()


def sparse(shape: tuple[int, ...]) -> Any:
    return torch.sparse_coo_tensor(
        torch.zeros(len(shape), 1, dtype=torch.long), torch.ones(1), shape, check_invariants=True
    )


TAMPERED: dict[str, tuple[Callable[[dict[str, Any], dict[str, Any]], None], str]] = {
    "a bomb under a key the networks lack": (
        lambda w, _: w.update(bomb=bomb()),
        r"its model state holds 'bomb', a key the networks' state does not have",
    ),
    "a bomb in place of a weight": (
        lambda w, _: w.update({"critic.0.bias": bomb()}),
        r"the weight 'critic\.0\.bias' is a tensor of torch\.float32 and shape \(35184372088832,\), not a tensor of "
        r"torch\.float32 and shape \(4,\) as the networks'",
    ),
    "a weight of its shape repeating one number": (
        lambda w, _: w.update({"critic.0.weight": torch.zeros(1, 1).expand(4, 6)}),
        r"the weight 'critic\.0\.weight' is not stored densely: 24 elements of 4 bytes over 4 bytes of storage, "
        r"strides \(0, 0\)",
    ),
    "a weight of another dtype": (
        lambda w, _: w.update({"critic.0.bias": w["critic.0.bias"].double()}),
        r"the weight 'critic\.0\.bias' is a tensor of torch\.float64 and shape \(4,\), not a tensor of "
        r"torch\.float32 and shape \(4,\)",
    ),
    "a sparse weight": (
        lambda w, _: w.update({"critic.0.bias": sparse((4,))}),
        r"the weight 'critic\.0\.bias' is a torch\.sparse_coo tensor, not a tensor of torch\.float32 and shape \(4,\)",
    ),
    "a weight that is no tensor": (
        lambda w, _: w.update({"critic.0.bias": [0.0] * 4}),
        r"the weight 'critic\.0\.bias' is a list, not a tensor of torch\.float32 and shape \(4,\)",
    ),
    "a weight missing": (
        lambda w, _: w.pop("critic.0.bias"),
        r"its model state lacks 'critic\.0\.bias', a key the networks' state has",
    ),
    "a moment of another shape": (
        lambda _, m: m["state"][0].update(exp_avg=torch.zeros(3)),
        r"the optimizer's exp_avg of 'actor\.0\.weight' \(parameter 0\) is a tensor of torch\.float32 and shape "
        r"\(3,\), not a tensor of torch\.float32 and shape \(4, 4\) as its parameter's",
    ),
    "a bomb in place of a moment": (
        lambda _, m: m["state"][1].update(exp_avg_sq=bomb()),
        r"the optimizer's exp_avg_sq of 'actor\.0\.bias' \(parameter 1\) is a tensor of torch\.float32 and shape "
        r"\(35184372088832,\)",
    ),
    "a step count that is no scalar": (
        lambda _, m: m["state"][0].update(step=torch.ones(2)),
        r"the optimizer's step of 'actor\.0\.weight' \(parameter 0\) is a tensor of torch\.float32 and shape \(2,\), "
        r"not a tensor of torch\.float32 and shape \(\) as Adam's step count",
    ),
    "a bomb under a state key Adam lacks": (
        lambda _, m: m["state"][0].update(bomb=bomb()),
        r"the optimizer's state of 'actor\.0\.weight' \(parameter 0\) holds 'bomb', a key Adam's state does not have",
    ),
    "a moment missing": (
        lambda _, m: m["state"][0].pop("exp_avg_sq"),
        r"the optimizer's state of 'actor\.0\.weight' \(parameter 0\) lacks 'exp_avg_sq', a key Adam's state has",
    ),
    "a state of a parameter the optimizer lacks": (
        lambda _, m: m["state"].update({99: m["state"][0]}),
        r"the optimizer's state holds 99, not the index of one of its 8 parameters",
    ),
    "a bomb among the hyperparameters": (
        lambda _, m: m["param_groups"][0].update(bomb=bomb()),
        r"the optimizer's parameter group 0 holds 'bomb' as a Tensor, not a plain number, flag or text",
    ),
    "a group of other parameters": (
        lambda _, m: m["param_groups"][0].update(params=[0, 1, 2]),
        r"the optimizer's parameter groups hold the parameters \[\[0, 1, 2\]\], the optimizer's \[\[0, 1, 2, 3, 4, 5, "
        r"6, 7\]\]",
    ),
    "an optimizer state without its groups": (
        lambda _, m: m.pop("param_groups"),
        r"its optimizer state lacks 'param_groups', a key Adam's state has",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_checkpoint_is_refused_before_a_value_is_scanned_or_loaded(
    tmp_path: Path, scans: list[int], case: str
) -> None:
    """A stride-0 bomb (a file of kB showing 2**45 floats) took 3.4 GB and more to scan; another shape of Adam's
    moments loaded and killed the run at its first update; a missing weight was found after the others were loaded.
    Each is refused by name from sizes, strides and keys alone, with nothing loaded."""
    change, message = TAMPERED[case]
    run_dir = run_with(tmp_path, CHECKPOINT, tampered(change))
    model, optimizer = tiny_model()
    torch.nn.init.zeros_(model.critic[0].weight)
    before = states(model, optimizer)
    with pytest.raises(RunError, match=rf"--resume: .*last\.pt is damaged or not this run's checkpoint \({message}"):
        load_checkpoint(run_dir, model, optimizer, "cpu", TIMESTEPS)
    assert scans == []
    assert same(states(model, optimizer), before)


def type_shared_model() -> tuple[ActorCritic, Any]:
    """A type-shared actor (its constant ``eye`` is a buffer no checkpoint holds) with a critic at its own learning
    rate, after one step of the critic alone (Adam holds no state for the actor's parameters, as in a critic
    warm-up)."""
    torch.manual_seed(0)
    deck = get_deck("standard")
    scale = observation_scale("standard")
    model = ActorCritic(scale, np.ones(2, np.float32), deck.num_actions, [6], "tanh", None, omen_type_groups(deck))
    optimizer = torch.optim.Adam(
        [{"params": model.actor.parameters(), "lr": 1e-3}, {"params": model.critic.parameters(), "lr": 1e-2}]
    )
    model.critic(torch.ones(1, scale.size + 2)).sum().backward()
    optimizer.step()
    return model, optimizer


@pytest.mark.parametrize("make", [tiny_model, type_shared_model], ids=["mlp", "type-shared"])
def test_a_legitimate_checkpoint_still_loads(
    tmp_path: Path, scans: list[int], make: Callable[[], tuple[ActorCritic, Any]]
) -> None:
    """The checks let through what ``save_checkpoint`` writes: without the buffers that are not persistent, with
    no optimizer state for parameters that never had a gradient, with two parameter groups."""
    model, optimizer = make()
    save_checkpoint(tmp_path / CHECKPOINT, model, optimizer, TIMESTEPS)
    fresh_model, fresh_optimizer = make()
    torch.nn.init.zeros_(fresh_model.critic[0].weight)
    fresh_optimizer.state.clear()
    load_checkpoint(tmp_path, fresh_model, fresh_optimizer, "cpu", TIMESTEPS)
    assert same(states(fresh_model, fresh_optimizer), states(model, optimizer))
    assert 0 < max(scans) <= SCANNED


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of two rollouts of 128 timesteps, without snapshots."""
    run_dir = tmp_path_factory.mktemp("ppo") / "run"
    tiny = ["--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--hidden-sizes", "8", "--eval-every",
            "0", "--snapshot-every", "0", "--torch-threads", "1", "--no-progress", *PLAIN_PPO_RECIPE]  # fmt: skip
    load_training_script("train_ppo").main(["--run-dir", str(run_dir), "--total-timesteps", "256", *tiny])
    return run_dir


@pytest.mark.parametrize("moment", ["another shape", "a bomb"])
def test_resume_refuses_a_tampered_moment_before_training(
    finished_run: Path, tmp_path: Path, scans: list[int], moment: str
) -> None:
    """The run of the review: ``exp_avg`` replaced by ``torch.zeros(3)`` passed every check and the resumed run died
    at its first update with a traceback; a bomb there asked for terabytes. Both end the command with the error."""
    run_dir = Path(shutil.copytree(finished_run, tmp_path / "run"))
    state = torch.load(run_dir / CHECKPOINT, weights_only=True)
    state["optimizer"]["state"][0]["exp_avg"] = torch.zeros(3) if moment == "another shape" else bomb()
    torch.save(state, run_dir / CHECKPOINT)
    with pytest.raises(SystemExit) as exit_info:
        load_training_script("train_ppo").main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384"])
    message = str(exit_info.value)
    assert message.startswith("error: --resume: ") and "last.pt is damaged" in message, message
    assert "the optimizer's exp_avg of 'actor.0.weight' (parameter 0) is a tensor" in message, message
    assert scans == []


def test_a_snapshot_of_another_deck_is_refused(tmp_path: Path) -> None:
    """A German-deck policy copied over a snapshot of a standard-deck run was played on ``--resume`` without a word,
    though ``--opponents`` refuses a policy of another deck."""
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    for deck in ("standard", "german"):
        network = ActorCritic(observation_scale(deck), np.ones(0, np.float32), get_deck(deck).num_actions, [4], "tanh")
        args = types.SimpleNamespace(deck=deck, activation="tanh", hidden_sizes=[4], input_features=RAW_INPUT)
        network.export(snapshots / f"snapshot_{deck}.npz", args, "a snapshot", {})
    assert read_snapshot(tmp_path, "snapshot_standard", "standard").metadata.deck == "standard"
    with pytest.raises(RunError, match=r"snapshot_german\.npz plays the 'german' deck, the run the 'standard' deck"):
        read_snapshot(tmp_path, "snapshot_german", "standard")
