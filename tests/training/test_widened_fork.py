"""``train_ppo.py --init-run`` onto wider networks (``friday13_training.widening``): the fork starts playing and
valuing exactly as its source, its new units learn, its record says from which widths it grew, and a fork that
would lose units (narrower, or another depth) is refused before anything is built."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env.friday13.agents.policy import input_scale, read_friday13_policy
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import omen_type_groups
from tests.scripts import PLAIN_PPO_RECIPE, TINY_PPO_ROLLOUTS, load_training_script

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training.actor_critic import ActorCritic  # noqa: E402  (needs torch's extra installed)
from friday13_training.widening import widen_into, widening_problem  # noqa: E402


def load_script() -> ModuleType:
    return load_training_script("train_ppo")


def network(hidden: list[int], actor: str, seed: int) -> ActorCritic:
    """A network as ``train_ppo.py`` builds one (the standard deck, the critic seeing the other hands)."""
    torch.manual_seed(seed)
    deck = get_deck("standard")
    groups = omen_type_groups(deck) if actor == "type-shared" else None
    return ActorCritic(input_scale("standard", "observation"), np.ones(30, np.float32), deck.num_actions, hidden,
                       "tanh", None, groups)  # fmt: skip


def outputs(model: ActorCritic, observations: Any, hidden: Any, masks: Any) -> tuple[Any, Any]:
    with torch.no_grad():
        return model.logits(observations, masks), model.value(observations, hidden)


@pytest.mark.parametrize("actor", ["mlp", "type-shared"])
def test_a_widened_network_plays_and_values_as_its_source_and_keeps_every_source_weight(actor: str) -> None:
    narrow, wide = network([6, 9], actor, seed=1), network([12, 15], actor, seed=2)
    before = {key: value.clone() for key, value in wide.state_dict().items()}
    widen_into(narrow, wide)
    generator = torch.Generator().manual_seed(3)
    observations = torch.rand((64, narrow.scale.numel()), generator=generator) * 4
    hidden = torch.rand((64, 30), generator=generator)
    masks = torch.rand((64, get_deck("standard").num_actions), generator=generator) < 0.7
    masks[:, 0] = True
    for got, expected in zip(outputs(wide, observations, hidden, masks), outputs(narrow, observations, hidden, masks),
                             strict=True):  # fmt: skip
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-5)
    widened = wide.state_dict()
    for key, old in narrow.state_dict().items():
        assert torch.equal(widened[key][tuple(slice(0, size) for size in old.shape)], old), key
    # the new units read the layer below through the wide network's own fresh weights, not zeros
    first = "critic.0.weight"
    assert torch.equal(widened[first][6:], before[first][6:]) and widened[first][6:].abs().sum() > 0


def test_the_new_units_learn() -> None:
    """Their outgoing weights start at zero, and a gradient step moves them (a unit that never moved would be dead
    weight, and a widened run no wider than its source)."""
    narrow, wide = network([6, 9], "mlp", seed=1), network([12, 15], "mlp", seed=2)
    widen_into(narrow, wide)
    observations = torch.rand((32, narrow.scale.numel()), generator=torch.Generator().manual_seed(4)) * 4
    masks = torch.ones((32, get_deck("standard").num_actions), dtype=torch.bool)
    optimizer = torch.optim.Adam(wide.parameters(), lr=1e-2)
    last = wide.linear_layers()[-1]
    assert last.weight[:, 9:].abs().sum() == 0
    incoming = wide.linear_layers()[1].weight[9:].clone()  # the second layer's new units read the first layer
    for _ in range(2):
        optimizer.zero_grad()
        torch.log_softmax(wide.logits(observations, masks), dim=1)[:, 0].mean().neg().backward()
        optimizer.step()
    assert last.weight[:, 9:].abs().sum() > 0
    assert not torch.equal(wide.linear_layers()[1].weight[9:], incoming)


@pytest.mark.parametrize(
    ("source", "fork", "problem"),
    [
        ([16, 16], [32, 32], None),
        ([16, 16], [16, 16], None),
        ([16, 16], [32, 8], "a fork's hidden layers are its source's or wider: layer 2 is 8 wide, its source's 16"),
        ([16, 16], [32], "a fork has its source's 2 hidden layers, not 1"),
        ([16], [16, 16], "a fork has its source's 1 hidden layers, not 2"),
    ],
)
def test_widening_problem_names_the_layer_that_would_lose_units(
    source: list[int], fork: list[int], problem: str | None
) -> None:
    assert widening_problem(source, fork) == problem


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plain-actor run of 256 timesteps, 16 units a layer."""
    run_dir = tmp_path_factory.mktemp("narrow") / "source"
    argv = ["--run-dir", str(run_dir), "--total-timesteps", "256", "--hidden-sizes", "16", "16"]
    load_script().main([*argv, *TINY_PPO_ROLLOUTS, *PLAIN_PPO_RECIPE])
    return run_dir


def test_a_wider_fork_starts_as_its_source_plays_and_records_the_widths_it_grew_from(
    source_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script()
    first: list[ActorCritic] = []
    real_collect = train.collect

    def collect(tables: Any, model: Any, *rest: Any) -> Any:
        if not first:
            first.append(copy.deepcopy(model))
        return real_collect(tables, model, *rest)

    monkeypatch.setattr(train, "collect", collect)
    fork = tmp_path / "fork"
    wider = ["--hidden-sizes", "24", "32", *PLAIN_PPO_RECIPE]
    train.main(
        ["--run-dir", str(fork), "--init-run", str(source_run), *TINY_PPO_ROLLOUTS, *wider, "--total-timesteps", "128"]
    )
    assert f"note: --init-run {source_run}: its networks' hidden layers [16, 16] are widened to [24, 32]" in (
        capsys.readouterr().err
    )
    source = read_friday13_policy(source_run / "policy.npz")
    observations = np.random.default_rng(5).integers(0, 4, (64, source.input_scale.size)).astype(np.float32)
    with torch.no_grad():
        logits = first[0].actor(torch.as_tensor(observations * source.input_scale)).numpy()
    np.testing.assert_allclose(logits, source.logits(observations), rtol=0, atol=1e-4)
    record = json.loads((fork / "progress.json").read_text())
    assert record["started_from"]["hidden_sizes"] == [16, 16]
    assert record["args"]["hidden_sizes"] == [24, 32]
    assert [w.shape for w in read_friday13_policy(fork / "policy.npz").weights][:2] == [(146, 24), (24, 32)]
    shutil.rmtree(fork / "tb", ignore_errors=True)
    train.main(["--run-dir", str(fork), "--resume", "--total-timesteps", "256"])  # a resume loads its own
    assert json.loads((fork / "progress.json").read_text())["started_from"]["hidden_sizes"] == [16, 16]


@pytest.mark.parametrize(
    ("widths", "message"),
    [
        (["16", "8"], "its --hidden-sizes is [16, 16], this run's [16, 8]: a fork's hidden layers are its source's"),
        (["16"], "its --hidden-sizes is [16, 16], this run's [16]: a fork has its source's 2 hidden layers, not 1"),
    ],
)
def test_a_fork_that_would_lose_units_is_refused_before_anything_is_built(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], widths: list[str], message: str
) -> None:
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source_run), *TINY_PPO_ROLLOUTS, *PLAIN_PPO_RECIPE]
    with pytest.raises(SystemExit) as exit_info:
        load_script().main([*argv, "--hidden-sizes", *widths])
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "fork").exists()


@pytest.mark.parametrize("widths", [["16", "16"], None, [16, True], [16, -1], [16, 16.0], "no key"])
def test_a_source_whose_record_holds_no_widths_is_refused_before_anything_is_built(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], widths: Any
) -> None:
    """A damaged record's ``hidden_sizes`` (texts, null, a bool, a negative or a float width) is named, exit 2."""
    source = Path(shutil.copytree(source_run, tmp_path / "source"))
    record = json.loads((source / "progress.json").read_text())
    record["args"]["hidden_sizes"] = widths
    if widths == "no key":
        del record["args"]["hidden_sizes"]
    (source / "progress.json").write_text(json.dumps(record))
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source), *TINY_PPO_ROLLOUTS, *PLAIN_PPO_RECIPE]
    with pytest.raises(SystemExit) as exit_info:
        load_script().main([*argv, "--hidden-sizes", "16", "16"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert "--init-run" in error and "not a list of positive widths" in error, error
    assert not (tmp_path / "fork").exists()
