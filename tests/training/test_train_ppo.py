"""training/train_ppo.py: self-play PPO on the batched engine. A tiny run leaves its files and a numpy policy equal
to its torch actor; runs are reproducible; ``--resume`` continues, refuses changed hyperparameters and names damaged
files; every flag is checked before anything is built; the per-seat advantages, the rollout's bookkeeping (rewards,
learner samples, masks, the critic's hidden hands) and the self-play snapshot pool are checked against hand-made or
independently recorded values."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env import agents
from friday13_env.core.mlp import MLPPolicy
from friday13_env.friday13.agents.policy import input_scale, observation_scale, read_friday13_policy
from friday13_env.friday13.batched.engine import DUMMY_SLOT, MAX_SEATS
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout, omen_type_groups
from friday13_env.friday13.features import majority_preview
from tests.scripts import PLAIN_PPO_RECIPE, REPOSITORY, load_training_script, play_without, win_rates

torch = pytest.importorskip("torch", reason="the training extra is not installed")


TINY = [
    "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--hidden-sizes", "16", "16",
    "--eval-games", "8", "--torch-threads", "1", "--no-progress", *PLAIN_PPO_RECIPE,
]  # fmt: skip
"""One rollout is 16 x 8 = 128 timesteps, with the recipe of the defaults before 0.10.0 (``PLAIN_PPO_RECIPE``)."""
RUN = [
    *TINY, "--players", "3", "4", "--learning-rate", "5e-4", "--gamma", "0.9", "--eval-every", "256",
    "--checkpoint-every", "256", "--snapshot-every", "128", "--max-snapshots", "2",
]  # fmt: skip
"""The finished run's flags (non-default hyperparameters, so that the record can be told from the defaults)."""


def load_script() -> ModuleType:
    return load_training_script("train_ppo")


def files_of(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run directory (TensorBoard's logs aside) by relative path, with its bytes."""
    return {
        str(path.relative_to(run_dir)): path.read_bytes()
        for path in sorted(run_dir.rglob("*"))
        if path.is_file() and "tb" not in path.relative_to(run_dir).parts
    }


def paths_in(run_dir: Path) -> list[str]:
    return sorted(str(path.relative_to(run_dir)) for path in run_dir.rglob("*"))


def progress_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "progress.json").read_text())


def make_model(train: ModuleType, args: Any) -> Any:
    """The run's ``ActorCritic``, built as ``train`` builds it."""
    from friday13_training.actor_critic import ActorCritic

    deck = get_deck(args.deck)
    return ActorCritic(
        observation_scale(args.deck),
        train.hidden_scale(args),
        deck.num_actions,
        args.hidden_sizes,
        args.activation,
        type_groups=omen_type_groups(deck) if args.actor == "type-shared" else None,
    )


def weights_of(policy: MLPPolicy) -> list[np.ndarray]:
    return [*policy.weights, *policy.biases, policy.input_scale]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run of 512 timesteps (four rollouts); tests copy it before changing it."""
    run_dir = tmp_path_factory.mktemp("ppo") / "run"
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "512", *RUN])
    return run_dir


def copy_of(run_dir: Path, tmp_path: Path, name: str = "run") -> Path:
    return Path(shutil.copytree(run_dir, tmp_path / name))


# -- 1. a run from scratch: its files, its record, its numpy policy ----------------------------------
def record_without(run_dir: Path, name: str) -> dict[str, Any]:
    """Rewrite the run's record as a release without the argument ``name`` wrote it; return the record."""
    progress = progress_of(run_dir)
    del progress["args"][name]
    (run_dir / "progress.json").write_text(json.dumps(progress))
    return progress


def test_a_run_leaves_its_checkpoint_record_policy_and_curve(finished_run: Path) -> None:
    """``last.pt``, ``progress.json`` (args, timesteps, curve, snapshots), ``policy.npz`` and the CSV curve."""
    assert {"last.pt", "progress.json", "policy.npz", "learning_curve.csv"} <= {p.name for p in finished_run.iterdir()}
    progress = progress_of(finished_run)
    assert progress["timesteps"] == 512
    args = progress["args"]
    assert (args["learning_rate"], args["gamma"], args["players"], args["total_timesteps"]) == (5e-4, 0.9, [3, 4], 512)
    assert (args["num_tables"], args["num_steps"], args["hidden_sizes"], args["resume"]) == (16, 8, [16, 16], False)
    assert [point["timesteps"] for point in progress["curve"]] == [0, 256, 512]  # 0: the initial policy
    assert all(set(point) == {"timesteps", "seconds", "cautious", "majority"} for point in progress["curve"])
    assert all(0 <= point[name] <= 1 for point in progress["curve"] for name in ("cautious", "majority"))
    seconds = [point["seconds"] for point in progress["curve"]]  # the run's clock when each evaluation began
    assert 0 <= seconds[0] < seconds[1] < seconds[2] < progress["seconds"]
    assert progress["snapshots"] == ["snapshot_384", "snapshot_512"]  # --max-snapshots 2: the newest two
    rows = (finished_run / "learning_curve.csv").read_text().splitlines()
    assert rows[0] == "timesteps,seconds,cautious,majority"
    assert [row.split(",")[0] for row in rows[1:]] == ["0", "256", "512"]
    assert [float(row.split(",")[1]) for row in rows[1:]] == seconds
    assert [float(row.split(",")[2]) for row in rows[1:]] == [point["cautious"] for point in progress["curve"]]
    state = torch.load(finished_run / "last.pt", weights_only=True)  # tensors only
    assert set(state) == {"model", "optimizer", "timesteps"} and state["timesteps"] == 512  # of the record
    assert not (finished_run / "next.pt").exists()  # the new checkpoint took last.pt's place
    metadata = read_friday13_policy(finished_run / "policy.npz").metadata
    assert (metadata.deck, metadata.activation, metadata.hidden_sizes) == ("standard", "tanh", [16, 16])
    assert metadata.training["timesteps"] == 512 and metadata.training["args"] == args
    assert not [path for path in finished_run.rglob("*") if ".tmp" in path.name]  # every write was atomic


def test_a_finished_run_directory_is_not_started_again(finished_run: Path, tmp_path: Path) -> None:
    """A new run (no ``--resume``) into a run's directory is refused, and the run is left as it was."""
    run_dir = copy_of(finished_run, tmp_path)
    before = files_of(run_dir)
    with pytest.raises(SystemExit, match="already holds a run"):
        load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "128", *TINY])
    assert files_of(run_dir) == before


def test_the_exported_policy_plays_a_whole_game_with_numpy_alone(finished_run: Path) -> None:
    """``agents.load(policy.npz)`` plays a 4-player game of legal moves in a process where torch cannot be imported."""
    agent = agents.load(finished_run / "policy.npz")
    assert isinstance(agent.policy, MLPPolicy)
    assert all(type(array) is np.ndarray for array in weights_of(agent.policy))
    result = play_without(finished_run / "policy.npz", 4, ["torch"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", "MLPPolicy", "False"]  # four rounds of the 50-card deck


def real_observations(train: ModuleType, args: Any, plays: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of players to move, from tables played ``plays`` random legal cards in."""
    tables = train.SelfPlayTables(8, args.players, args.deck, seed=5)
    turn = tables.reset()
    rng = np.random.default_rng(0)
    observations, masks = [turn.observations], [turn.masks]
    for _ in range(plays):
        choice = rng.random(turn.masks.shape) * turn.masks
        turn = tables.step(choice.argmax(axis=1))
        observations.append(turn.observations)
        masks.append(turn.masks)
    return np.concatenate(observations), np.concatenate(masks)


def test_the_runs_policy_file_is_its_checkpointed_actor(finished_run: Path) -> None:
    """``policy.npz``'s numpy logits equal the torch actor's (restored from ``last.pt``) on the scaled observation."""
    train = load_script()
    args = train.Args(**progress_of(finished_run)["args"])
    model = make_model(train, args)
    model.load_state_dict(torch.load(finished_run / "last.pt", weights_only=True)["model"])
    policy = read_friday13_policy(finished_run / "policy.npz")
    observations, masks = real_observations(train, args)
    with torch.no_grad():
        expected = model.actor(torch.from_numpy(observations) * model.scale).numpy()
        masked = model.logits(torch.from_numpy(observations), torch.from_numpy(masks)).numpy()
    np.testing.assert_allclose(policy.logits(observations), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(policy.input_scale, observation_scale("standard"))
    assert np.array_equal(masked[masks], expected[masks]) and (masked[~masks] == -1e9).all()


@pytest.mark.parametrize("actor", [[], ["--actor", "type-shared", "--hidden-sizes", "18", "18"]], ids=["mlp", "shared"])
def test_an_updated_actor_exports_to_the_same_numpy_policy(tmp_path: Path, actor: list[str]) -> None:
    """After collect, advantages and one update, ``export`` and ``policy`` give the actor's logits in numpy (the
    type-shared actor written out as plain layers)."""
    train = load_script()
    args = train.parse_args([*TINY, *actor, "--run-dir", str(tmp_path / "unused"), "--total-timesteps", "128"])
    torch.manual_seed(0)
    model = make_model(train, args)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
    generator = torch.Generator().manual_seed(0)
    initial = [parameter.detach().clone() for parameter in model.actor.parameters()]
    rollout = train.collect(train.Tables(args, seed=0), model, args, generator)
    gains = train.advantages(rollout, args.gamma, args.gae_lambda)
    stats = train.update(model, optimizer, rollout, gains, args, generator, args.ent_coef)
    assert set(stats) == {"policy_loss", "value_loss", "entropy", "clip_fraction"}
    assert all(np.isfinite(value) for value in stats.values()) and stats["entropy"] > 0
    assert not all(torch.equal(a, b) for a, b in zip(initial, model.actor.parameters(), strict=True))  # it learned
    model.export(tmp_path / "policy.npz", args, "test export", {"timesteps": 128})
    observations = rollout.observations[rollout.valid]
    with torch.no_grad():
        expected = model.actor(torch.from_numpy(observations) * model.scale).numpy()
    for policy in (read_friday13_policy(tmp_path / "policy.npz"), model.policy(args, "in memory", {})):
        np.testing.assert_allclose(policy.logits(observations), expected, rtol=1e-5, atol=1e-5)
    loaded = agents.load(tmp_path / "policy.npz")
    np.testing.assert_allclose(loaded.policy.logits(observations), expected, rtol=1e-5, atol=1e-5)
    assert loaded.policy.metadata.training == {"timesteps": 128}


def test_the_plain_networks_draw_their_first_weights_in_the_order_of_earlier_releases() -> None:
    """The plain actor's and the critic's layers are drawn first, then the actor's orthogonal weights, as before
    ``--actor`` existed, so a seed still starts (and reproduces) the runs recorded by earlier releases."""
    from friday13_training.actor_critic import mlp

    train = load_script()
    args = train.parse_args([*TINY, "--run-dir", "unused"])
    torch.manual_seed(0)
    model = make_model(train, args)
    torch.manual_seed(0)
    sizes = [observation_layout(get_deck("standard")).size, *args.hidden_sizes]
    actor = mlp([*sizes, 18], args.activation)
    critic = mlp([sizes[0] + train.hidden_scale(args).size, *args.hidden_sizes, 1], args.activation)
    linear = [layer for layer in actor if isinstance(layer, torch.nn.Linear)]
    for layer in linear:
        torch.nn.init.orthogonal_(layer.weight, np.sqrt(2))
        torch.nn.init.zeros_(layer.bias)
    torch.nn.init.orthogonal_(linear[-1].weight, 0.01)  # drawn again, near-uniform first moves
    for built, drawn in ((model.actor, actor), (model.critic, critic)):
        for got, expected in zip(built.parameters(), drawn.parameters(), strict=True):
            torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_the_type_shared_actor_relabels_its_logits_with_the_omen_types() -> None:
    """Relabelling the omen types of an observation (their entries, ``omen_type_groups``) relabels the type-shared
    actor's logits the same way; a plain MLP's logits do not follow."""
    from friday13_training.actor_critic import TypeSharedActor, mlp

    groups = omen_type_groups(get_deck("standard"))
    torch.manual_seed(0)
    shared = TypeSharedActor(groups, [18, 18], "tanh")
    plain = mlp([observation_layout(get_deck("standard")).size, 18, 18, 18], "tanh")
    for parameter in [*shared.parameters(), *plain.parameters()]:
        torch.nn.init.normal_(parameter, std=0.5)  # away from the near-uniform first moves
    observations = torch.rand(32, observation_layout(get_deck("standard")).size)
    observations[:, groups.unused] = 0
    for order in itertools.permutations(range(3)):
        moved = observations.clone()
        for omen_type in range(3):
            moved[:, groups.own[order[omen_type]]] = observations[:, groups.own[omen_type]]
        for actor in (shared, plain):
            logits, expected = actor(observations).detach(), torch.empty(32, 18)
            for omen_type in range(3):
                expected[:, groups.actions[order[omen_type]]] = logits[:, groups.actions[omen_type]]
            follows = torch.allclose(actor(moved).detach(), expected, rtol=1e-5, atol=1e-5)
            assert follows == (actor is shared or order == (0, 1, 2))


def per_type_logits(actor: Any, inputs: torch.Tensor) -> torch.Tensor:
    """The type-shared actor's function as its docstring states it, one type's block at a time: a block reads its own
    type's entries with ``own``, the sum of the other types' with ``other``, the shared entries with
    ``shared_weights``; the reference its three dense matrix products must equal."""
    blocks = inputs[:, actor.own]  # (batch, type, entries)
    common = (inputs[:, actor.shared] @ actor.shared_weights).unsqueeze(1)
    last = len(actor.own_weights) - 1
    for index, (own, other, bias) in enumerate(zip(actor.own_weights, actor.other_weights, actor.biases, strict=True)):
        others = blocks.sum(dim=1, keepdim=True) - blocks
        blocks = blocks @ own + others @ other + bias + (common if index == 0 else 0)
        if index < last:
            blocks = torch.tanh(blocks)
    return blocks.flatten(1)[:, actor.action_order]


def test_the_type_shared_actors_dense_products_are_its_per_type_reading() -> None:
    """``forward`` (three matrix products built from the shared parameters) gives the per-type reading's logits and
    the same gradients to every parameter; the built matrices are not saved in a checkpoint (one written before
    them loads)."""
    from friday13_training.actor_critic import TypeSharedActor

    groups = omen_type_groups(get_deck("standard"))
    torch.manual_seed(0)
    actor = TypeSharedActor(groups, [24, 24], "tanh")
    for parameter in actor.parameters():
        torch.nn.init.normal_(parameter, std=0.3)
    observations = torch.rand(64, observation_layout(get_deck("standard")).size, dtype=torch.float64)
    observations[:, groups.unused] = 0
    actor = actor.double()
    fast, reference = actor(observations), per_type_logits(actor, observations)
    torch.testing.assert_close(fast, reference, rtol=1e-12, atol=1e-12)
    weights = torch.rand(64, 18, dtype=torch.float64)
    fast_grads = torch.autograd.grad((fast * weights).sum(), list(actor.parameters()))
    reference_grads = torch.autograd.grad((reference * weights).sum(), list(actor.parameters()))
    for got, expected in zip(fast_grads, reference_grads, strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-10, atol=1e-12)
    saved = actor.state_dict()
    assert "eye" not in saved
    TypeSharedActor(groups, [24, 24], "tanh").double().load_state_dict(saved)


def test_an_updates_statistics_are_its_minibatches_losses_each_under_its_own_name() -> None:
    """With one pass over one minibatch the statistics are the losses of the network before its step: the
    entropy of its masked policy, half the critic's mean squared error, no clipped ratio, and a policy
    loss of 0 (every ratio is 1 and the normalised advantages have mean 0), each under its own name."""
    train = load_script()
    args = train.parse_args([*TINY, "--run-dir", "unused", "--update-epochs", "1", "--minibatch-size", "128"])
    torch.manual_seed(0)
    model = make_model(train, args)
    generator = torch.Generator().manual_seed(0)
    rollout = train.collect(train.Tables(args, seed=0), model, args, generator)
    gains = train.advantages(rollout, args.gamma, args.gae_lambda)
    trained = rollout.trained
    assert 2 <= trained.sum() <= args.minibatch_size  # one minibatch
    with torch.no_grad():
        observations = torch.from_numpy(rollout.observations[trained])
        log_probs = torch.log_softmax(model.logits(observations, torch.from_numpy(rollout.masks[trained])), dim=1)
        entropy = float(-(log_probs.exp() * log_probs).sum(dim=1).mean())
        values = model.value(observations, torch.from_numpy(rollout.hidden[trained])).numpy()
    returns = gains[trained] + rollout.values[trained]
    value_loss = 0.5 * float(np.mean((values - returns) ** 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
    stats = train.update(model, optimizer, rollout, gains, args, generator, args.ent_coef)
    assert list(stats) == ["policy_loss", "value_loss", "entropy", "clip_fraction"]
    assert stats["entropy"] == pytest.approx(entropy, rel=1e-5)
    assert stats["value_loss"] == pytest.approx(value_loss, rel=1e-5)
    assert stats["policy_loss"] == pytest.approx(0.0, abs=1e-6) and stats["clip_fraction"] == 0.0
    assert all(type(value) is float for value in stats.values())


def test_a_german_deck_run_without_evaluation_exports_a_german_policy(tmp_path: Path) -> None:
    """``--deck german`` trains on that deck's tables and exports a policy of its layout."""
    run_dir = tmp_path / "run"
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "128", "--deck", "german",
                        "--eval-every", "0", *TINY])  # fmt: skip
    policy = read_friday13_policy(run_dir / "policy.npz")
    deck = get_deck("german")
    assert policy.metadata.deck == "german"
    assert policy.weights[0].shape[0] == observation_layout(deck).size
    assert policy.weights[-1].shape[1] == deck.num_actions
    assert not (run_dir / "learning_curve.csv").exists() and progress_of(run_dir)["curve"] == []  # never evaluated


def test_a_german_deck_run_is_evaluated_on_the_german_deck(tmp_path: Path) -> None:
    """With the default ``--eval-every``, a ``--deck german`` run evaluates itself on german tables."""
    run_dir = tmp_path / "run"
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "128", "--deck", "german",
                        "--eval-every", "128", *TINY])  # fmt: skip
    assert [point["timesteps"] for point in progress_of(run_dir)["curve"]] == [0, 128]


def test_a_run_with_derived_inputs_trains_on_them_and_exports_them(tmp_path: Path) -> None:
    """``--input-features majority_preview``: the networks read the observation and its preview (snapshots in the pool
    too), and the exported policy computes the preview itself from a plain observation."""
    from friday13_training.actor_critic import ActorCritic

    train = load_script()
    run_dir = tmp_path / "run"
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "256", "--input-features", "majority_preview",
                "--snapshot-every", "128", "--eval-every", "256", *TINY])  # fmt: skip
    policy = read_friday13_policy(run_dir / "policy.npz")
    preview = majority_preview(get_deck("standard"))
    assert policy.metadata.input_features == "majority_preview"
    assert policy.weights[0].shape[0] == observation_layout(get_deck("standard")).size + preview.size
    assert (
        read_friday13_policy(next((run_dir / "snapshots").glob("*.npz"))).metadata.input_features == "majority_preview"
    )
    args = train.Args(**progress_of(run_dir)["args"])
    model = ActorCritic(
        input_scale("standard", "majority_preview"), train.hidden_scale(args), 18, args.hidden_sizes,
        args.activation, preview,
    )  # fmt: skip
    model.load_state_dict(torch.load(run_dir / "last.pt", weights_only=True)["model"])
    observations, _ = real_observations(train, args)
    with torch.no_grad():
        expected = model.actor(torch.from_numpy(model.inputs(observations)) * model.scale).numpy()
    np.testing.assert_allclose(policy.logits(observations), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(SystemExit, match="--input-features: the run has 'majority_preview', the command line 'obs"):
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512", "--input-features",
                    "observation"])  # fmt: skip


def test_a_run_recorded_before_actor_resumes_with_a_plain_mlp(finished_run: Path, tmp_path: Path) -> None:
    """A run recorded by a release without ``--actor`` resumes with the plain MLP it was trained with;
    ``--actor type-shared`` on resuming it is refused as a changed hyperparameter."""
    run_dir = copy_of(finished_run, tmp_path)
    record_without(run_dir, "actor")
    train = load_script()
    with pytest.raises(SystemExit, match="--actor: the run has 'mlp', the command line 'type-shared'"):
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640", "--actor", "type-shared"])
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    assert progress_of(run_dir)["args"]["actor"] == "mlp" and progress_of(run_dir)["timesteps"] == 640


def test_a_run_recorded_before_input_features_resumes_reading_the_observation(
    finished_run: Path, tmp_path: Path
) -> None:
    run_dir = copy_of(finished_run, tmp_path)
    record_without(run_dir, "input_features")
    load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    assert progress_of(run_dir)["args"]["input_features"] == "observation"
    assert read_friday13_policy(run_dir / "policy.npz").metadata.input_features == "observation"


def record_updates(train: ModuleType, monkeypatch: pytest.MonkeyPatch, read: Callable[..., Any]) -> list[Any]:
    """``read(model, optimizer, rollout, advantage, args, generator, ent_coef, ...)`` at each update of a run
    (``update``'s arguments), in order."""
    records: list[Any] = []
    real_update = train.update

    def recording_update(*arguments: Any) -> dict[str, float]:
        records.append(read(*arguments))
        return real_update(*arguments)

    monkeypatch.setattr(train, "update", recording_update)
    return records


def record_entropy_weights(train: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The entropy bonus each update of a run is given, in order."""
    return record_updates(train, monkeypatch, lambda *arguments: arguments[6])


@pytest.mark.parametrize("anneal", [False, True])
def test_the_entropy_bonus_is_constant_or_annealed_to_zero_with_the_learning_rate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, anneal: bool
) -> None:
    """Four rollouts of 128 timesteps out of 512: the bonus stays ``--ent-coef``, or with ``--ent-anneal`` falls
    as the learning rate does, by the share of the run still to go when the rollout's update starts."""
    train = load_script()
    weights = record_entropy_weights(train, monkeypatch)
    flags = ["--ent-anneal"] if anneal else []
    train.main([*TINY, "--run-dir", str(tmp_path / "run"), "--total-timesteps", "512", "--eval-every", "0",
                "--ent-coef", "0.04", *flags])  # fmt: skip
    expected = [0.04, 0.03, 0.02, 0.01] if anneal else [0.04] * 4
    np.testing.assert_allclose(weights, expected, rtol=1e-12)
    assert progress_of(tmp_path / "run")["args"]["ent_anneal"] is anneal


def learning_rates_of_updates(train: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[list[float]]:
    """The learning rate of each of the optimizer's parameter groups at each update of a run, in order."""
    return record_updates(train, monkeypatch, lambda _, optimizer, *rest: [g["lr"] for g in optimizer.param_groups])


def test_the_critic_learns_at_its_own_rate_annealed_with_the_actors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--critic-learning-rate``: one parameter group for the actor, one for the critic, every parameter in one of
    them; both rates fall to 0 together, and the run resumes from its checkpoint. Without it, one group."""
    train = load_script()
    args = train.parse_args([*TINY, "--critic-learning-rate", "0.01", "--run-dir", str(tmp_path / "x")])
    model = make_model(train, args)
    actor_group, critic_group = train.adam(model, args).param_groups
    assert (actor_group["lr"], critic_group["lr"]) == (args.learning_rate, 0.01)  # from the start, not the loop's
    assert {id(p) for p in actor_group["params"]} == {id(p) for p in model.actor.parameters()}
    assert {id(p) for p in critic_group["params"]} == {id(p) for p in model.critic.parameters()}
    assert len(actor_group["params"]) + len(critic_group["params"]) == len(list(model.parameters()))
    rates = learning_rates_of_updates(train, monkeypatch)
    run_dir = tmp_path / "run"
    flags = [*TINY, "--run-dir", str(run_dir), "--eval-every", "0", "--learning-rate", "0.004"]
    train.main([*flags, "--total-timesteps", "256", "--critic-learning-rate", "0.01"])
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "512"])
    np.testing.assert_allclose(rates, [[0.004, 0.01], [0.002, 0.005], [0.002, 0.005], [0.001, 0.0025]], rtol=1e-12)
    assert progress_of(run_dir)["args"]["critic_learning_rate"] == 0.01
    rates.clear()
    train.main([*flags, "--run-dir", str(tmp_path / "one"), "--total-timesteps", "256"])
    np.testing.assert_allclose(rates, [[0.004], [0.002]], rtol=1e-12)


def test_init_sharpness_multiplies_the_starts_logits_and_keeps_its_moves(tmp_path: Path) -> None:
    """``--init-policy ppo-v4 --init-sharpness 4``: the actor's logits are ``ppo-v4``'s times 4 to the bit (a power
    of two scales floats without rounding), so its greedy moves are ``ppo-v4``'s."""
    from friday13_training.actor_critic import ActorCritic

    policy = agents.make("ppo-v4").policy  # type: ignore[attr-defined]
    deck = get_deck("standard")
    model = ActorCritic(observation_scale("standard"), np.zeros(0, np.float32), deck.num_actions, [192, 192], "tanh")
    model.load_actor(policy, 4.0)
    sharpened = model.policy(policy.metadata, "sharpened", {})
    np.testing.assert_array_equal(sharpened.weights[-1], policy.weights[-1] * 4)
    np.testing.assert_array_equal(sharpened.biases[-1], policy.biases[-1] * 4)
    for mine, theirs in zip(sharpened.weights[:-1] + sharpened.biases[:-1], policy.weights[:-1] + policy.biases[:-1],
                            strict=True):  # fmt: skip
        np.testing.assert_array_equal(mine, theirs)
    observations, _ = real_observations(load_script(), load_script().parse_args(TINY))
    np.testing.assert_array_equal(sharpened.logits(observations), 4 * policy.logits(observations))


def test_a_start_whose_sharpened_logits_overflow_is_refused_before_anything_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A policy file whose output layer times ``--init-sharpness`` is no longer a float32 (a finite policy, whose
    sharpened logits would be NaN) is refused with the flag named, before a run directory exists."""
    from friday13_env.core.checkpoint import save_policy

    policy = agents.make("ppo-v4").policy  # type: ignore[attr-defined]
    weights = [*policy.weights[:-1], policy.weights[-1] * np.float32(1e36)]
    path = tmp_path / "loud.npz"
    save_policy(path, weights, policy.biases, policy.input_scale, policy.metadata)
    start = ["--init-policy", str(path), "--actor", "mlp", "--hidden-sizes", "192", "192"]
    flags = [*start, "--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--no-progress"]
    with pytest.raises(SystemExit):
        load_script().main([*flags, "--init-sharpness", "1024", "--run-dir", str(tmp_path / "run")])
    assert f"--init-sharpness 1024: {path}'s logits overflow float32" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    load_script().parse_args([*flags, "--run-dir", str(tmp_path / "run")])  # at x1 they do not


def test_a_run_recorded_before_init_sharpness_resumes_as_it_was_trained(finished_run: Path, tmp_path: Path) -> None:
    """A run recorded by a release without ``--init-sharpness`` and ``--critic-learning-rate`` resumes with what it
    was trained with: no sharpening, one learning rate."""
    run_dir = copy_of(finished_run, tmp_path)
    record_without(run_dir, "init_sharpness")
    record_without(run_dir, "critic_learning_rate")
    load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    recorded = progress_of(run_dir)["args"]
    assert (recorded["init_sharpness"], recorded["critic_learning_rate"], progress_of(run_dir)["timesteps"]) == (
        1.0, 0.0, 640)  # fmt: skip


def test_a_run_recorded_before_ent_anneal_resumes_with_a_constant_bonus(
    finished_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run recorded by a release without ``--ent-anneal`` resumes with the constant bonus it was trained with;
    ``--ent-anneal`` on resuming it is refused as a changed hyperparameter."""
    run_dir = copy_of(finished_run, tmp_path)
    progress = record_without(run_dir, "ent_anneal")
    train = load_script()
    with pytest.raises(SystemExit, match="--ent-anneal: the run has False, the command line True"):
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--ent-anneal"])
    weights = record_entropy_weights(train, monkeypatch)
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024"])
    assert weights and set(weights) == {progress["args"]["ent_coef"]}
    assert progress_of(run_dir)["args"]["ent_anneal"] is False


def test_plot_curve_draws_runs_against_their_seconds_and_names_a_run_without_them(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two runs on one figure against wall-clock seconds; a run written before curve points had seconds is named
    (``--x timesteps`` still plots it), and so is a count of labels that does not match the runs."""
    pytest.importorskip("matplotlib")
    plot = load_training_script("plot_curve")
    older = copy_of(finished_run, tmp_path, "older")
    progress = progress_of(older)
    for point in progress["curve"]:
        del point["seconds"]
    (older / "progress.json").write_text(json.dumps(progress))
    out = tmp_path / "curve.png"
    plot.main([str(finished_run), str(finished_run), "--x", "seconds", "--labels", "new", "old", "--out", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot.main([str(older), "--out", str(tmp_path / "steps.png")])
    assert (tmp_path / "steps.png").exists()
    from matplotlib.figure import Figure

    legends: list[list[str]] = []  # each figure's legend entries, as it is saved
    save = Figure.savefig

    def save_and_record(self: Figure, *args: Any, **kwargs: Any) -> None:
        legends.append(self.axes[0].get_legend_handles_labels()[1])
        save(self, *args, **kwargs)

    five = copy_of(finished_run, tmp_path, "five")  # a run evaluated at 5 players: its record says so
    progress = progress_of(five)
    progress["args"]["eval_players"] = 5
    (five / "progress.json").write_text(json.dumps(progress))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "savefig", save_and_record)
        plot.main([str(five), "--out", str(tmp_path / "five.png")])
        plot.main([str(finished_run), str(older), "--labels", "new", "old", "--out", str(tmp_path / "two.png")])
    assert legends[0] == ["vs 4 x cautious", "vs 4 x majority", "equal seat (1/5)"]
    assert legends[1][:2] == ["new: vs 3 x cautious", "new: vs 3 x majority"] and legends[1][-1] == "equal seat (1/4)"
    for flags, message in [
        ([str(older), "--x", "seconds"], "the evaluations at [0, 256, 512] timesteps have no seconds"),
        ([str(finished_run), "--labels", "a", "b"], "--labels: 2 given for 1 run directories"),
        ([str(finished_run), "--players", "5"], f"--players 5: {finished_run} was evaluated at 4 players"),
    ]:
        with pytest.raises(SystemExit):
            plot.main([*flags, "--out", str(tmp_path / "refused.png")])
        assert message in capsys.readouterr().err
    assert not (tmp_path / "refused.png").exists()


# -- 2. determinism --------------------------------------------------------------------------------
def test_the_same_seed_gives_the_same_run_and_another_seed_another(tmp_path: Path) -> None:
    """Same seed and flags: equal weights (numpy export and checkpoint) and curves; ``--seed 1``: other weights."""
    train = load_script()
    flags = ["--total-timesteps", "256", *TINY, "--eval-every", "128", "--snapshot-every", "128"]
    for name, seed in (("a", "0"), ("b", "0"), ("c", "1")):
        train.main(["--run-dir", str(tmp_path / name), "--seed", seed, *flags])
    a, b, c = (read_friday13_policy(tmp_path / name / "policy.npz") for name in "abc")
    assert all(np.array_equal(x, y) for x, y in zip(weights_of(a), weights_of(b), strict=True))
    assert win_rates(progress_of(tmp_path / "a")["curve"]) == win_rates(progress_of(tmp_path / "b")["curve"])
    assert [point["timesteps"] for point in progress_of(tmp_path / "a")["curve"]] == [0, 128, 256]
    state_a, state_b = (torch.load(tmp_path / name / "last.pt", weights_only=True)["model"] for name in "ab")
    assert all(torch.equal(state_a[key], state_b[key]) for key in state_a)
    assert not np.array_equal(a.weights[0], c.weights[0])
    assert a.fingerprint() != c.fingerprint()


def test_two_processes_with_two_threads_make_the_same_run(tmp_path: Path) -> None:
    """``--torch-threads`` defaults to every core; with two threads splitting the update's matrix products, a seed
    still gives the same run in another process (the same machine and thread count: the split fixes the rounding)."""
    flags = ["--total-timesteps", "256", *TINY, "--eval-every", "0", "--torch-threads", "2",
             "--hidden-sizes", "96", "96", "--minibatch-size", "128"]  # fmt: skip
    for name in "ab":
        subprocess.run(
            [sys.executable, str(REPOSITORY / "training" / "train_ppo.py"), "--run-dir", str(tmp_path / name), *flags],
            check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    a, b = (read_friday13_policy(tmp_path / name / "policy.npz") for name in "ab")
    assert a.fingerprint() == b.fingerprint()


def test_the_default_recipe_reproduces_resumes_and_exports_a_policy_that_plays(tmp_path: Path) -> None:
    """Today's defaults (a type-shared actor, three quarters of the games against whole tables of one pool member,
    ``majority`` drawn twice as often), only smaller: a seed gives the same run in two runs, a resume to a larger total
    gives the same policy as another resume of the same run, and the export plays without torch."""
    train = load_script()
    sizes = ["--num-tables", "16", "--num-steps", "8", "--minibatch-size", "64", "--hidden-sizes", "18", "18",
             "--eval-games", "8", "--eval-every", "0", "--torch-threads", "1", "--no-progress"]  # fmt: skip
    for name in "ab":
        train.main(["--run-dir", str(tmp_path / name), "--total-timesteps", "256", *sizes])
    args = progress_of(tmp_path / "a")["args"]
    assert (args["actor"], args["pool_share"], args["pool_draw"]) == ("type-shared", 0.75, "game")
    assert args["opponents"] == ["cautious", "majority", "majority"]
    first = [read_friday13_policy(tmp_path / name / "policy.npz").fingerprint() for name in "ab"]
    assert first[0] == first[1]
    for name in "ab":
        train.main(["--run-dir", str(tmp_path / name), "--resume", "--total-timesteps", "384"])
    resumed = [read_friday13_policy(tmp_path / name / "policy.npz").fingerprint() for name in "ab"]
    assert resumed[0] == resumed[1] != first[0]
    assert progress_of(tmp_path / "a")["timesteps"] == 384
    result = play_without(tmp_path / "a" / "policy.npz", 4, ["torch"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", "MLPPolicy", "False"]


def test_torch_threads_zero_is_every_core_this_process_may_use(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    train = load_script()
    cores = len(os.sched_getaffinity(0))
    assert (train.thread_count(0), train.thread_count(3)) == (cores, 3)
    assert train.parse_args([]).torch_threads == 0
    set_to: list[int] = []
    monkeypatch.setattr(torch, "set_num_threads", set_to.append)
    train.main(["--run-dir", str(tmp_path / "run"), "--total-timesteps", "128", "--eval-every", "0", *TINY,
                "--torch-threads", "0"])  # fmt: skip
    assert set_to == [cores]
    assert progress_of(tmp_path / "run")["args"]["torch_threads"] == 0


# -- 3. --resume -----------------------------------------------------------------------------------
def test_resume_continues_to_a_larger_total_with_new_run_settings(finished_run: Path, tmp_path: Path) -> None:
    """A larger ``--total-timesteps``, another ``--eval-every`` and an ``--export`` (in a folder still to make) are
    applied and recorded; the hyperparameters stay the run's (one given again with its own value is fine)."""
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    export = tmp_path / "out" / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "768", "--eval-every", "128",
                "--export", str(export), "--gamma", "0.9", "--no-progress"])  # fmt: skip
    progress = progress_of(run_dir)
    assert progress["timesteps"] == 768
    args = progress["args"]
    assert (args["total_timesteps"], args["eval_every"], args["export"]) == (768, 128, str(export))
    assert (args["learning_rate"], args["gamma"], args["players"], args["num_tables"]) == (5e-4, 0.9, [3, 4], 16)
    assert [point["timesteps"] for point in progress["curve"]] == [0, 256, 512, 640, 768]  # no second start point
    assert export.read_bytes() == (run_dir / "policy.npz").read_bytes()
    exported = read_friday13_policy(export)
    assert exported.metadata.training["timesteps"] == 768 and exported.metadata.training["args"] == args
    assert exported.fingerprint() != read_friday13_policy(finished_run / "policy.npz").fingerprint()  # it trained on


def test_a_resumed_run_keeps_its_clock_and_an_older_curve_without_seconds(finished_run: Path, tmp_path: Path) -> None:
    """The seconds of a resumed run's new points go on from the record's; a record written before curve points had
    seconds (0.10.0) resumes, its old points as they were, the CSV's cells for their seconds empty."""
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    progress = progress_of(run_dir)
    for point in progress["curve"]:
        del point["seconds"]
    (run_dir / "progress.json").write_text(json.dumps(progress))
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640", "--eval-every", "128"])
    resumed = progress_of(run_dir)
    assert resumed["curve"][:3] == progress["curve"]
    assert set(resumed["curve"][3]) == {"timesteps", "seconds", "cautious", "majority"}
    assert progress["seconds"] < resumed["curve"][3]["seconds"] < resumed["seconds"]
    rows = (run_dir / "learning_curve.csv").read_text().splitlines()
    assert [row.split(",")[:2] for row in rows] == [["timesteps", "seconds"], ["0", ""], ["256", ""], ["512", ""],
                                                    ["640", repr(resumed["curve"][3]["seconds"])]]  # fmt: skip


def test_a_resumed_run_is_reproducible(finished_run: Path, tmp_path: Path) -> None:
    """Two identical resumes of one run end with identical weights."""
    train = load_script()
    for name in ("a", "b"):
        run_dir = copy_of(finished_run, tmp_path, name)
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640", "--eval-every", "0"])
    a, b = (read_friday13_policy(tmp_path / name / "policy.npz") for name in "ab")
    assert a.fingerprint() == b.fingerprint()


def test_resuming_a_finished_run_exits_cleanly_and_exports(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing to do: it says the run is finished, copies ``policy.npz`` to ``--export``, and changes nothing."""
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    before = files_of(run_dir)
    export = tmp_path / "exported.npz"
    train.main(["--run-dir", str(run_dir), "--resume", "--export", str(export)])
    out = capsys.readouterr().out
    assert f"{run_dir} is finished: 512 timesteps" in out and f"exported the policy to {export}" in out
    assert export.read_bytes() == before["policy.npz"]
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "100"])  # asked for less: the same
    assert "is finished: 512 timesteps" in capsys.readouterr().out
    assert files_of(run_dir) == before
    assert paths_in(run_dir) == paths_in(finished_run)  # no new file, TensorBoard's included


def test_resume_refuses_a_changed_hyperparameter_and_lists_each_one(finished_run: Path, tmp_path: Path) -> None:
    """Each changed hyperparameter is named with both values; one given with the run's own value is not; nothing in the
    run directory changes."""
    train = load_script()
    run_dir = copy_of(finished_run, tmp_path)
    before = files_of(run_dir)
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--learning-rate", "1e-3",
                    "--gamma", "0.9", "--hidden-sizes", "32", "--no-critic-sees-hands"])  # fmt: skip
    message = str(exit_info.value)
    assert message.startswith("error: --resume keeps the run's hyperparameters")
    assert "--learning-rate: the run has 0.0005, the command line 0.001" in message
    assert "--hidden-sizes: the run has [16, 16], the command line [32]" in message
    assert "--critic-sees-hands: the run has True, the command line False" in message
    assert "--gamma" not in message  # given, but with the run's own value
    assert files_of(run_dir) == before


class MakesADirectory:
    """A pickled object whose unpickling runs ``os.mkdir(marker)``: arbitrary code, were the checkpoint trusted."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.mkdir, (str(self.marker),)


def damage(run_dir: Path, what: str) -> str:
    """Damage one file of a run; returns the file's name, which the error must give."""
    progress_file = run_dir / "progress.json"
    progress = json.loads(progress_file.read_text())
    if what == "no last.pt":
        (run_dir / "last.pt").unlink()
        return "last.pt"
    if what == "last.pt garbage":
        (run_dir / "last.pt").write_bytes(b"\x00garbage, not a torch file")
        return "last.pt"
    if what == "last.pt truncated":
        (run_dir / "last.pt").write_bytes((run_dir / "last.pt").read_bytes()[:1000])
        return "last.pt"
    if what == "last.pt of another network":
        torch.save({"model": {"actor.0.weight": torch.zeros(3, 3)}, "optimizer": {}}, run_dir / "last.pt")
        return "last.pt"
    if what == "progress.json missing":
        progress_file.unlink()
    elif what == "progress.json truncated":
        progress_file.write_text(progress_file.read_text()[:40])
    elif what == "progress.json not an object":
        progress_file.write_text("[1, 2]")
    elif what == "progress.json without timesteps":
        del progress["timesteps"]
        progress_file.write_text(json.dumps(progress))
    elif what == "progress.json with negative timesteps":
        progress["timesteps"] = -5
        progress_file.write_text(json.dumps(progress))
    elif what == "progress.json with a bad argument":
        progress["args"]["num_tables"] = 0
        progress_file.write_text(json.dumps(progress))
    elif what == "progress.json with a missing argument":
        del progress["args"]["hidden_sizes"]
        progress_file.write_text(json.dumps(progress))
    elif what == "snapshot missing":
        (run_dir / "snapshots" / "snapshot_512.npz").unlink()
        return "snapshot_512.npz"
    else:
        raise AssertionError(what)
    return "progress.json"


DAMAGES = [
    "no last.pt",
    "last.pt garbage",
    "last.pt truncated",
    "last.pt of another network",
    "progress.json missing",
    "progress.json truncated",
    "progress.json not an object",
    "progress.json without timesteps",
    "progress.json with negative timesteps",
    *(pytest.param(what) for what in ("progress.json with a bad argument", "progress.json with a missing argument")),
    "snapshot missing",
]


@pytest.mark.parametrize("what", DAMAGES)
def test_a_damaged_run_file_is_a_clear_error_naming_it(finished_run: Path, tmp_path: Path, what: str) -> None:
    """``--resume`` on a damaged run exits with a message naming the file, and writes nothing."""
    run_dir = copy_of(finished_run, tmp_path)
    name = damage(run_dir, what)
    before = files_of(run_dir)
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--no-progress"])
    message = str(exit_info.value)
    assert message.startswith("error: --resume") and name in message, message
    assert "Traceback" not in message
    assert files_of(run_dir) == before


def test_a_run_recorded_before_pool_draw_resumes_with_the_draw_it_was_trained_with(
    finished_run: Path, tmp_path: Path
) -> None:
    """A run recorded by a release without ``--pool-draw`` (0.6.0 and earlier) resumes drawing per seat, as it was
    trained, and records it; ``--pool-draw game`` on resuming it is refused as a changed hyperparameter."""
    run_dir = copy_of(finished_run, tmp_path)
    record_without(run_dir, "pool_draw")
    with pytest.raises(SystemExit, match="--pool-draw: the run has 'seat', the command line 'game'"):
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--pool-draw", "game"])
    load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024"])
    resumed = progress_of(run_dir)
    assert resumed["timesteps"] >= 1024 and resumed["args"]["pool_draw"] == "seat"


def test_resume_without_a_run_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    """``--resume`` into a missing directory names the missing checkpoint and creates no directory."""
    with pytest.raises(SystemExit, match=r"error: --resume: no checkpoint at .*last\.pt"):
        load_script().main(["--run-dir", str(tmp_path / "none"), "--resume", *TINY])
    assert not (tmp_path / "none").exists()


def test_a_pickled_object_in_last_pt_is_refused_without_running_it(finished_run: Path, tmp_path: Path) -> None:
    """A ``last.pt`` holding an arbitrary pickled object is refused as damaged; its code never runs (it would, were
    the file loaded with ``weights_only=False``)."""
    run_dir = copy_of(finished_run, tmp_path)
    marker = tmp_path / "payload_ran"
    torch.save({"model": MakesADirectory(marker), "optimizer": {}}, run_dir / "last.pt")
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024", "--no-progress"])
    message = str(exit_info.value)
    assert message.startswith("error: --resume") and "last.pt" in message and "damaged" in message, message
    assert not marker.exists()
    torch.load(run_dir / "last.pt", weights_only=False)  # the payload is live: a trusting load runs it
    assert marker.is_dir()


def test_resume_blames_a_bad_export_on_the_command_line_not_on_the_run(finished_run: Path, tmp_path: Path) -> None:
    """``--resume --export <path under a file>`` names ``--export``, not the run's record."""
    run_dir = copy_of(finished_run, tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "1024",
                            "--export", str(tmp_path / "file" / "policy.npz")])  # fmt: skip
    message = str(exit_info.value)
    assert "--export" in message and "recorded arguments are damaged" not in message, message


# -- 4. every flag checked before anything is built ------------------------------------------------
@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--num-tables", "0"], "argument --num-tables: must be at least 1 and at most 1,048,576, got 0"),
        (["--num-steps", "0"], "argument --num-steps: must be at least 1 and at most 65,536, got 0"),
        (["--gamma", "2"], "argument --gamma: must be at least 0 and at most 1, got 2"),
        (["--gae-lambda", "-0.5"], "argument --gae-lambda: must be at least 0 and at most 1, got -0.5"),
        (["--pool-share", "1.5"], "argument --pool-share: must be at least 0 and at most 1, got 1.5"),
        (["--learning-rate", "0"], "argument --learning-rate: must be above 0 and at most 1, got 0"),
        (["--learning-rate", "nan"], "argument --learning-rate: must be a finite number, got nan"),
        (["--clip-coef", "0"], "argument --clip-coef: must be above 0 and at most 10, got 0"),
        (["--init-sharpness", "0"], "argument --init-sharpness: must be at least 0.000976562 and at most 1024, got 0"),
        (["--init-sharpness", "2048"], "argument --init-sharpness: must be at least 0.000976562 and at most 1024, got"),
        (["--init-sharpness", "4"], "--init-sharpness 4 sharpens the start of --init-policy: give one"),
        (["--critic-learning-rate", "-1"], "argument --critic-learning-rate: must be at least 0 and at most 1, got -1"),
        (["--max-snapshots", "0"], "argument --max-snapshots: must be at least 1 and at most 1,000, got 0"),
        (
            ["--total-timesteps", "0"],
            "argument --total-timesteps: must be at least 1 and at most 1,000,000,000,000,000, got 0",
        ),
        (["--hidden-sizes", "0"], "argument --hidden-sizes: must be at least 1, got 0"),
        (["--players", "7"], "argument --players: must be at least 3 and at most 6, got 7"),
        (["--seed", "-1"], "argument --seed: must be at least 0 and at most 4,294,967,295, got -1"),
        (["--minibatch-size", "1"], "argument --minibatch-size: must be at least 2, got 1"),
        (["--minibatch-size", "4096"], "--minibatch-size 4096 exceeds one rollout (16 x 8)"),
        (["--activation", "gelu"], "argument --activation: invalid choice: 'gelu'"),
        (["--reward", "score"], "argument --reward: invalid choice: 'score'"),
        (["--horizon", "turn"], "argument --horizon: invalid choice: 'turn'"),
        (["--reward", "win"], "--horizon round needs a reward paid every round (points, relative or rival)"),
        (["--deck", "french"], "argument --deck: invalid choice: 'french'"),
        (["--opponents", "search"], "--opponents: agent 'search' has no batched version"),
        (["--opponents", "nosuch"], "--opponents: unknown Friday the 13th agent 'nosuch'"),
        (["--opponents", "majority:open_minn=2"], "--opponents: "),
        (["--opponents", "missing/policy.npz"], "--opponents: no policy checkpoint at 'missing/policy.npz'"),
        (
            ["--opponents", "ensemble-v1", "--deck", "german"],
            "--opponents: policy 'ensemble-v1' was trained for the 'standard' deck, but this table plays the 'german'",
        ),
        (["--eval-opponents", "nobody"], "--eval-opponents: unknown Friday the 13th agent 'nobody'"),
        (["--actor", "cnn"], "argument --actor: invalid choice: 'cnn'"),
        (
            ["--actor", "type-shared", "--hidden-sizes", "18", "16"],
            "--actor type-shared splits each hidden width into 3 blocks, one per omen type: --hidden-sizes 18 16 has a "
            "width that is not a multiple of 3",
        ),
        (
            ["--actor", "type-shared", "--hidden-sizes", "18", "--input-features", "majority_preview"],
            "--actor type-shared reads the observation alone: use --input-features observation (not majority_preview)",
        ),
    ],
)
def test_every_flag_is_checked_before_anything_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    """A bad value exits with argparse's usage error naming it, before any run directory exists."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(["--total-timesteps", "128", *TINY, *flags])  # (should one get through, the run is short)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # no runs/ppo


def test_every_problem_of_a_command_line_is_listed_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Problems found after parsing are listed together, not one per attempt."""
    with pytest.raises(SystemExit):
        load_script().main(["--run-dir", str(tmp_path / "run"), *TINY, "--minibatch-size", "4096",
                            "--opponents", "nosuch", "--eval-opponents", "nobody"])  # fmt: skip
    err = capsys.readouterr().err
    assert "--minibatch-size 4096 exceeds one rollout" in err
    assert "--opponents: unknown Friday the 13th agent 'nosuch'" in err
    assert "--eval-opponents: unknown Friday the 13th agent 'nobody'" in err
    assert not (tmp_path / "run").exists()


def test_outputs_that_cannot_be_written_are_refused_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ``--export`` that is a folder or lies under a file, or a ``--run-dir`` that is a file, is refused up front."""
    train = load_script()
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "run"), *TINY, "--export", str(tmp_path)])
    assert f"{tmp_path} is a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "run"), *TINY, "--export", str(tmp_path / "file" / "policy.npz")])
    assert f"{tmp_path / 'file'} is a file, not a directory" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "file"), *TINY])
    assert f"{tmp_path / 'file'} is a file, not a directory" in capsys.readouterr().err
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file"]  # no run directory


def test_an_export_into_a_folder_still_to_make_is_written_there(tmp_path: Path) -> None:
    """A missing folder on the ``--export`` path is no error: it is created and holds the run's ``policy.npz``."""
    export = tmp_path / "new" / "folder" / "policy.npz"
    load_script().main(["--run-dir", str(tmp_path / "run"), "--total-timesteps", "128", "--eval-every", "0",
                        "--export", str(export), *TINY])  # fmt: skip
    assert export.read_bytes() == (tmp_path / "run" / "policy.npz").read_bytes()


@pytest.mark.parametrize("flag", ["--export", "--run-dir"])
def test_an_unwritable_output_is_named_by_its_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """The error for an output under a file names the flag that gave it."""
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit):
        load_script().main(["--run-dir", str(tmp_path / "run"), *TINY, flag, str(tmp_path / "file" / "out")])
    assert f"{flag}: " in capsys.readouterr().err


def test_the_evaluation_baselines_may_be_any_agent_spec(tmp_path: Path) -> None:
    """``--eval-opponents search:budget=20`` is accepted: the evaluation is the package's scalar one."""
    args = load_script().parse_args(["--run-dir", str(tmp_path / "run"), *TINY, "--eval-opponents", "search:budget=20"])
    assert args.eval_opponents == ["search:budget=20"]


def test_a_repeated_evaluation_baseline_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The curve's columns are named by the baselines, so each may be listed once."""
    with pytest.raises(SystemExit):
        load_script().main(["--run-dir", str(tmp_path / "run"), "--total-timesteps", "128", *TINY,
                            "--eval-opponents", "cautious", "cautious"])  # fmt: skip
    assert "--eval-opponents" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_an_empty_run_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--run-name ''`` (without ``--run-dir``) is refused before anything is written."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        load_script().main(["--run-name", "", "--total-timesteps", "128", "--eval-every", "0", *TINY])
    assert "--run-name" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


# -- 5. the advantages -----------------------------------------------------------------------------
def hand_built_rollout(train: ModuleType) -> Any:
    """Four tables, ``CARRIED`` carried rows then five plays (rows c..c+4). Rows that hold no learner move carry
    values 100 and rewards 50, so that any use of them would show.

    Table 0 (self-play, 3 seats): seats 0, 1, 2 each carry a waiting move (rows 0, 1, 2) and play in turn at
    c..c+4; rows 0 -> c -> c+3 and 1 -> c+1 -> c+4 and 2 -> c+2 link; c+2, c+3, c+4 are still open at the end.
    Table 1: seat 3's carried move (row 3) links to its plays c+1 and c+3; an opponent's card at c+4 ends the game.
    Table 2: seat 4's carried move (row 4) is done: an opponent ends the game at c+2; the new game's learner
    (seat 0) plays at c+4, open. Table 3: seat 5's carried move (row 5) is still waiting after the whole rollout.
    """
    c, plays, n = train.CARRIED, 5, 4
    rows = c + plays
    values = np.full((rows, n), 100.0, dtype=np.float32)
    rewards = np.full((rows, n), 50.0, dtype=np.float32)
    seats = np.zeros((rows, n), dtype=np.int64)
    valid = np.zeros((rows, n), dtype=bool)
    next_row = np.full((rows, n), -1, dtype=np.int64)
    done = np.zeros((rows, n), dtype=bool)
    waiting = np.zeros((rows, n), dtype=bool)
    moves = [  # row, table, seat, reward, value, next row, game ended, still open
        (0, 0, 0, 0.4, 0.1, c, False, False),
        (1, 0, 1, -1.0, 0.2, c + 1, False, False),
        (2, 0, 2, 0.3, -0.2, c + 2, False, False),
        (c, 0, 0, 0.0, 0.3, c + 3, False, False),
        (c + 1, 0, 1, 0.6, 0.4, c + 4, False, False),
        (c + 2, 0, 2, -3.0, 0.9, -1, False, True),
        (c + 3, 0, 0, -2.0, 0.5, -1, False, True),
        (c + 4, 0, 1, 0.5, 0.7, -1, False, True),
        (3, 1, 3, 0.5, 0.25, c + 1, False, False),
        (c + 1, 1, 3, 2.5, 0.6, c + 3, False, False),
        (c + 3, 1, 3, -1.5, -0.3, -1, True, False),
        (4, 2, 4, 0.9, 0.8, -1, True, False),
        (c + 4, 2, 0, 0.0, 1.2, -1, False, True),
        (5, 3, 5, 1.1, -0.4, -1, False, True),
    ]
    for row, table, seat, reward, value, following, ended, still_open in moves:
        rewards[row, table], values[row, table], seats[row, table] = reward, value, seat
        valid[row, table], next_row[row, table], done[row, table] = True, following, ended
        waiting[row, table] = still_open
    empty = np.zeros((rows, n, 0), dtype=np.float32)
    return train.Rollout(
        observations=empty,
        hidden=empty,
        masks=empty.astype(bool),
        actions=np.zeros((rows, n), dtype=np.int64),
        log_probs=np.zeros((rows, n), dtype=np.float32),
        values=values,
        rewards=rewards,
        seats=seats,
        valid=valid,
        next_row=next_row,
        done=done,
        open=waiting,
    )


@pytest.mark.parametrize(("gamma", "lam"), [(0.9, 0.8), (1.0, 1.0), (0.5, 0.0)])
def test_advantages_follow_each_seats_own_chain_of_moves(gamma: float, lam: float) -> None:
    """GAE by hand: a move's successor is its seat's next move (carried rows included), ``done`` stops the chain,
    a move whose successor is open bootstraps from the open move's value alone, and rows that are not trained
    (open moves, non-samples) get 0."""
    train = load_script()
    assert train.CARRIED == MAX_SEATS
    rollout = hand_built_rollout(train)
    got = train.advantages(rollout, gamma, lam)
    c = train.CARRIED
    expected = np.zeros_like(got)
    # table 0: c+2, c+3, c+4 are open (0), so c, c+1 and 2 bootstrap from their values alone
    expected[c + 1, 0] = 0.6 + gamma * 0.7 - 0.4
    expected[c, 0] = 0.0 + gamma * 0.5 - 0.3
    expected[2, 0] = 0.3 + gamma * 0.9 - (-0.2)
    expected[1, 0] = -1.0 + gamma * 0.4 - 0.2 + gamma * lam * expected[c + 1, 0]
    expected[0, 0] = 0.4 + gamma * 0.3 - 0.1 + gamma * lam * expected[c, 0]
    # table 1: 3 -> c+1 -> c+3, which ends the game (nothing after it)
    expected[c + 3, 1] = -1.5 - (-0.3)
    expected[c + 1, 1] = 2.5 + gamma * -0.3 - 0.6 + gamma * lam * expected[c + 3, 1]
    expected[3, 1] = 0.5 + gamma * 0.6 - 0.25 + gamma * lam * expected[c + 1, 1]
    # table 2: the carried move ended its game; table 3: the carried move is still open (0)
    expected[4, 2] = 0.9 - 0.8
    assert got.dtype == np.float32 and got.shape == (c + 5, 4)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    trained = np.zeros((c + 5, 4), dtype=bool)
    trained[[0, 1, 2, c, c + 1], 0] = True
    trained[[3, c + 1, c + 3], 1] = True
    trained[4, 2] = True
    np.testing.assert_array_equal(rollout.trained, trained)


# -- 6. the rollout --------------------------------------------------------------------------------
@dataclass
class Step:
    """One step of the tables, as the test saw it: before the play, the actions, and what the play returned."""

    observations: np.ndarray
    masks: np.ndarray
    seats: np.ndarray
    num_players: np.ndarray
    hands: np.ndarray
    learner: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    round_over: np.ndarray
    game_over: np.ndarray


def record_steps(tables: Any, monkeypatch: pytest.MonkeyPatch) -> list[Step]:
    """Record every ``step`` of ``tables``' self-play tables, independently of ``collect``'s own bookkeeping."""
    steps: list[Step] = []
    real_step = tables.tables.step

    def step(actions: np.ndarray) -> Any:
        turn, batch = tables.turn, tables.tables.batch
        before = {
            "observations": turn.observations.copy(),
            "masks": turn.masks.copy(),
            "seats": turn.seats.copy(),
            "num_players": batch.num_players.copy(),
            "hands": batch.hands.copy(),
            "learner": tables.learner.copy(),
            "actions": np.array(actions, copy=True),
        }
        after = real_step(actions)
        steps.append(
            Step(
                **before,
                rewards=after.rewards.copy(),
                round_over=after.round_over.copy(),
                game_over=after.game_over.copy(),
            )
        )
        return after

    monkeypatch.setattr(tables.tables, "step", step)
    return steps


def rollout_setup(
    tmp_path: Path, flags: list[str], num_tables: int = 6, num_steps: int = 220
) -> tuple[ModuleType, Any, Any, Any]:
    """The script, its args, a fresh model and fresh tables for a rollout of ``num_steps`` plays per table."""
    train = load_script()
    args = train.parse_args([
        "--run-dir", str(tmp_path / "unused"), "--num-tables", str(num_tables), "--num-steps", str(num_steps),
        "--minibatch-size", "8", "--hidden-sizes", "16", "16", "--players", "3", "4", "--reward", "points",
        *PLAIN_PPO_RECIPE, *flags,
    ])  # fmt: skip
    torch.manual_seed(0)
    return train, args, make_model(train, args), train.Tables(args, seed=3)


@pytest.mark.parametrize("horizon", ["game", "round"])
def test_rewards_are_credited_to_the_movers_latest_move_and_chains_link_its_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, horizon: str
) -> None:
    """Play ``t`` is row ``CARRIED + t``; each reward goes to the same seat's latest move in the same chain;
    ``next_row`` links a seat's consecutive moves within a chain (a game, or a round with ``--horizon round``);
    ``done`` marks a seat's last move of a chain that ended; each seat's last move of a chain still going is
    ``open`` and not trained. A first rollout carries nothing, and its credited rewards add up to the tables'
    rewards, table by table (every seat has moved before a round can end)."""
    train, args, model, tables = rollout_setup(
        tmp_path, ["--pool-share", "0", "--pool-draw", "game", "--horizon", horizon]
    )
    steps = record_steps(tables, monkeypatch)
    rollout = train.collect(tables, model, args, torch.Generator().manual_seed(0))
    n, c = args.num_tables, train.CARRIED
    rows = c + args.num_steps
    assert len(steps) == args.num_steps and rollout.rewards.shape == (rows, n)
    assert not rollout.valid[:c].any() and rollout.valid[c:].all()  # nothing carried; every play is a sample
    assert any(step.game_over.any() for step in steps)  # 220 plays end a game at every table (at most 200 plays a game)
    expected_rewards = np.zeros((rows, n))
    expected_next = np.full((rows, n), -1)
    expected_done = np.zeros((rows, n), dtype=bool)
    expected_open = np.zeros((rows, n), dtype=bool)
    for table in range(n):
        game_start = 0
        latest: dict[int, int] = {}  # seat -> the row of its latest move in the current game
        for t, step in enumerate(steps):
            seat = int(step.seats[table])
            if seat in latest:
                expected_next[latest[seat], table] = c + t
            latest[seat] = c + t
            for rewarded in np.flatnonzero(step.rewards[table]):
                expected_rewards[latest[int(rewarded)], table] += step.rewards[table, rewarded]
            assert step.round_over[table] or not step.game_over[table]  # a game ends with its last round
            if step.game_over[table] or (horizon == "round" and step.round_over[table]):
                expected_done[list(latest.values()), table] = True
                latest = {}
            if step.game_over[table]:
                game_start = t + 1
        assert game_start > 0 and latest  # a game ended, and the next one is under way
        expected_open[list(latest.values()), table] = True
    np.testing.assert_array_equal(rollout.next_row, expected_next)
    np.testing.assert_array_equal(rollout.done, expected_done)
    np.testing.assert_array_equal(rollout.open, expected_open)
    np.testing.assert_array_equal(rollout.trained, rollout.valid & ~expected_open)
    np.testing.assert_allclose(rollout.rewards, expected_rewards, rtol=1e-6, atol=1e-5)
    returned = sum(step.rewards for step in steps)
    np.testing.assert_allclose(rollout.rewards.sum(axis=0), returned.sum(axis=1), rtol=1e-6, atol=1e-4)
    assert rollout.rewards.sum() < 0  # bad-luck points were taken
    np.testing.assert_array_equal(rollout.seats[c:], np.stack([step.seats for step in steps]))
    for table, seat in zip(*np.nonzero(tables.last >= 0), strict=True):  # the open moves wait for the next rollout
        assert expected_open[tables.last[table, seat], table] and rollout.seats[tables.last[table, seat], table] == seat
    assert (tables.last >= 0).sum() == expected_open.sum() and tables.previous is rollout


def test_the_rollout_stores_the_legal_masks_legal_actions_and_the_policys_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stored observations and masks are the tables', every stored action is legal and was played, and the stored
    log-probabilities and values are the model's; rows that hold no learner move (and the first rollout's carried
    rows) stay empty."""
    train, args, model, tables = rollout_setup(tmp_path, ["--pool-share", "0.5"], num_steps=40)
    steps = record_steps(tables, monkeypatch)
    rollout = train.collect(tables, model, args, torch.Generator().manual_seed(1))
    c = train.CARRIED
    valid = rollout.valid
    plays = valid[c:]
    assert not valid[:c].any() and plays.any() and not plays.all()
    np.testing.assert_array_equal(rollout.observations[c:][plays], np.stack([s.observations for s in steps])[plays])
    np.testing.assert_array_equal(rollout.masks[c:][plays], np.stack([s.masks for s in steps])[plays])
    np.testing.assert_array_equal(rollout.actions[c:][plays], np.stack([s.actions for s in steps])[plays])
    learner_moves = np.stack([s.learner[np.arange(args.num_tables), s.seats] for s in steps])
    np.testing.assert_array_equal(plays, learner_moves)
    actions = rollout.actions[valid]
    assert rollout.masks[valid][np.arange(actions.size), actions].all()
    assert not rollout.masks[~valid].any() and not rollout.observations[~valid].any()  # non-samples stay empty
    assert not rollout.log_probs[~valid].any() and not rollout.values[~valid].any()
    observations = torch.from_numpy(rollout.observations[valid])
    with torch.no_grad():
        log_probs = torch.log_softmax(model.logits(observations, torch.from_numpy(rollout.masks[valid])), dim=1)
        values = model.value(observations, torch.from_numpy(rollout.hidden[valid]))
    np.testing.assert_allclose(rollout.log_probs[valid], log_probs[np.arange(actions.size), actions], atol=1e-6)
    np.testing.assert_allclose(rollout.values[valid], values.numpy(), atol=1e-6)


def test_with_pool_share_one_only_the_one_learner_seat_per_game_makes_samples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--pool-share 1``: each game has exactly one learner seat, and ``valid`` marks exactly its moves."""
    train, args, model, tables = rollout_setup(tmp_path, ["--pool-share", "1"])
    steps = record_steps(tables, monkeypatch)
    rollout = train.collect(tables, model, args, torch.Generator().manual_seed(0))
    c = train.CARRIED
    assert not rollout.valid[:c].any()  # the first rollout carries nothing
    for t, step in enumerate(steps):
        assert (step.learner.sum(axis=1) == 1).all()
        assert (np.flatnonzero(step.learner)[:, None] % MAX_SEATS < step.num_players[:, None]).all()
        learner_moves = step.learner[np.arange(args.num_tables), step.seats]
        np.testing.assert_array_equal(rollout.valid[c + t], learner_moves)
    for table in range(args.num_tables):  # one seat's samples per game
        seats, game = set(), 0
        for t, step in enumerate(steps):
            if rollout.valid[c + t, table]:
                seats.add((game, int(step.seats[table])))
            game += bool(step.game_over[table])
        assert len(seats) == len({game for game, _ in seats}) == game + 1  # a learner seat in each game, it alone
    assert 0 < rollout.valid[c:].mean() < 0.5  # one seat of 3 or 4
    assert (rollout.open.sum(axis=0) == 1).all()  # at each table, the one learner seat's latest move waits


@dataclass
class Expected:
    """What one rollout must hold, worked out play by play from the recorded steps alone."""

    valid: np.ndarray
    seats: np.ndarray
    rewards: np.ndarray
    next_row: np.ndarray
    done: np.ndarray
    open: np.ndarray
    last: np.ndarray
    """``Tables.last`` after the rollout: the row of each seat's move still waiting (-1: none)."""
    source: dict[tuple[int, int], int]
    """(table, seat) -> the row of the previous rollout that carried row ``seat`` continues."""


def expected_rollouts(steps: list[Step], carried: int, num_steps: int, horizon: str) -> list[Expected]:
    """The rollouts ``collect`` must have made of ``steps``: a learner move waits for its seat's next move or the
    chain's end (the game's, or the round's with ``--horizon round``); one still waiting when a rollout ends moves
    to row ``seat`` of the next one, with its rewards."""
    rows, n = carried + num_steps, steps[0].seats.size
    waiting: list[dict[int, int]] = [{} for _ in range(n)]  # per table: seat -> row of its waiting move
    result = []
    for first in range(0, len(steps), num_steps):
        previous = result[-1] if result else None
        expected = Expected(
            valid=np.zeros((rows, n), dtype=bool),
            seats=np.zeros((rows, n), dtype=np.int64),
            rewards=np.zeros((rows, n)),
            next_row=np.full((rows, n), -1),
            done=np.zeros((rows, n), dtype=bool),
            open=np.zeros((rows, n), dtype=bool),
            last=np.full((n, MAX_SEATS), -1),
            source={},
        )
        for table in range(n):
            for seat, row in waiting[table].items():
                assert previous is not None
                expected.source[table, seat] = row
                expected.valid[seat, table], expected.seats[seat, table] = True, seat
                expected.rewards[seat, table] = previous.rewards[row, table]
            waiting[table] = {seat: seat for seat in waiting[table]}
        for t, step in enumerate(steps[first : first + num_steps]):
            row = carried + t
            for table in range(n):
                seat = int(step.seats[table])
                if step.learner[table, seat]:
                    expected.valid[row, table], expected.seats[row, table] = True, seat
                    if seat in waiting[table]:
                        expected.next_row[waiting[table][seat], table] = row
                    waiting[table][seat] = row
                for rewarded in np.flatnonzero(step.rewards[table]):
                    if int(rewarded) in waiting[table]:
                        expected.rewards[waiting[table][int(rewarded)], table] += step.rewards[table, rewarded]
                if step.game_over[table] or (horizon == "round" and step.round_over[table]):
                    expected.done[list(waiting[table].values()), table] = True
                    waiting[table] = {}
        for table in range(n):
            for seat, row in waiting[table].items():
                expected.open[row, table], expected.last[table, seat] = True, row
        result.append(expected)
    return result


def consecutive_rollouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], count: int, num_tables: int, num_steps: int
) -> tuple[ModuleType, Any, Any, list[Step], list[Any], list[np.ndarray]]:
    """``count`` rollouts in a row from the same tables; also the steps, and ``Tables.last`` after each rollout."""
    train, args, model, tables = rollout_setup(tmp_path, flags, num_tables=num_tables, num_steps=num_steps)
    steps = record_steps(tables, monkeypatch)
    generator = torch.Generator().manual_seed(0)
    rollouts, lasts = [], []
    for _ in range(count):
        rollouts.append(train.collect(tables, model, args, generator))
        assert tables.previous is rollouts[-1]
        lasts.append(tables.last.copy())
    return train, args, model, steps, rollouts, lasts


@pytest.mark.parametrize("horizon", ["game", "round"])
def test_consecutive_rollouts_carry_each_open_move_into_the_next_field_by_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, horizon: str
) -> None:
    """Over rollouts of 3 plays (shorter than a seat's wait between moves, so some moves wait through a whole
    rollout) with pool games: each rollout's samples, seats, links, game ends, open moves and rewards are the
    recorded play's; a carried row is the previous rollout's open row of that seat, field by field (its rewards
    grow by those arriving in this rollout); rows no move was carried to stay empty; ``Tables.last`` keeps the
    row of each waiting move between rollouts."""
    train, args, _, steps, rollouts, lasts = consecutive_rollouts(
        tmp_path, monkeypatch, ["--pool-share", "0.5", "--horizon", horizon], count=80, num_tables=8, num_steps=3
    )
    c = train.CARRIED
    per_move = {field.name for field in dataclasses.fields(train.Rollout)} - {"next_row", "done", "open"}
    assert set(train.CARRIED_FIELDS) == per_move  # every field of a move is carried with it
    expected = expected_rollouts(steps, c, args.num_steps, args.horizon)
    carried = carried_done = carried_twice = grown = 0
    for index, (rollout, want, last) in enumerate(zip(rollouts, expected, lasts, strict=True)):
        for name in ("valid", "seats", "next_row", "done", "open"):
            np.testing.assert_array_equal(getattr(rollout, name), getattr(want, name), err_msg=f"{name} #{index}")
        np.testing.assert_allclose(rollout.rewards, want.rewards, rtol=1e-6, atol=1e-4, err_msg=f"rewards #{index}")
        np.testing.assert_array_equal(last, want.last)
        np.testing.assert_array_equal(rollout.trained, want.valid & ~want.open)
        for (table, seat), row in want.source.items():
            before = rollouts[index - 1]
            assert before.open[row, table] and not before.trained[row, table]
            for name in set(train.CARRIED_FIELDS) - {"rewards"}:
                now, then = getattr(rollout, name)[seat, table], getattr(before, name)[row, table]
                np.testing.assert_array_equal(now, then, err_msg=name)
            arrived = want.rewards[seat, table] - expected[index - 1].rewards[row, table]
            assert rollout.rewards[seat, table] == pytest.approx(before.rewards[row, table] + arrived, abs=1e-4)
            carried += 1
            carried_done += bool(rollout.done[seat, table])
            carried_twice += bool(rollout.open[seat, table])
            grown += arrived != 0
        empty = np.ones((c, args.num_tables), dtype=bool)
        for table, seat in want.source:
            empty[seat, table] = False
        for name in train.CARRIED_FIELDS:
            assert not getattr(rollout, name)[:c][empty].any(), name
    assert min(carried, carried_done, carried_twice, grown) > 0, (carried, carried_done, carried_twice, grown)


@pytest.mark.parametrize("horizon", ["game", "round"])
def test_no_reward_is_lost_at_a_rollout_boundary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, horizon: str) -> None:
    """Every reward the tables return to a learner seat is credited once: over consecutive rollouts, the rewards of
    the trained rows, plus those of the moves still open after the last rollout, add up to the learner seats'
    rewards, table by table; and every learner move is trained exactly once, in the rollout its successor (or its
    chain's end) comes in. Pool games, so the opponents' rewards must not count. With ``--horizon game`` rewards
    wait across rollout ends; with ``--horizon round`` a round's reward ends its chain, so none ever waits."""
    _, _, _, steps, rollouts, _ = consecutive_rollouts(
        tmp_path, monkeypatch, ["--pool-share", "0.5", "--horizon", horizon], count=60, num_tables=8, num_steps=5
    )
    learner_rewards = sum(step.rewards * step.learner for step in steps).sum(axis=1)
    opponent_rewards = sum(step.rewards * ~step.learner for step in steps).sum(axis=1)
    assert (learner_rewards < 0).all() and (opponent_rewards < 0).any()  # both took bad-luck points
    credited = sum(np.where(rollout.trained, rollout.rewards, 0).sum(axis=0) for rollout in rollouts)
    waiting = np.where(rollouts[-1].open, rollouts[-1].rewards, 0).sum(axis=0)
    np.testing.assert_allclose(credited + waiting, learner_rewards, rtol=1e-5, atol=1e-3)
    crossed = [(np.where(rollout.open, rollout.rewards, 0) != 0).any() for rollout in rollouts]
    assert any(crossed) == (horizon == "game")  # rewards still waiting at a rollout's end
    learner_moves = sum(step.learner[np.arange(step.seats.size), step.seats] for step in steps)
    trained = sum(rollout.trained.sum(axis=0) for rollout in rollouts)
    np.testing.assert_array_equal(trained + rollouts[-1].open.sum(axis=0), learner_moves)


def test_an_open_move_is_trained_in_the_next_rollout_not_in_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """3-seat self-play rollouts of 10 plays (longer than a seat's longest wait between its moves, 5 plays): each
    open move gets no advantage and no update in its own rollout; in the next one its carried row is trained, linked
    to the seat's next move, or ``done`` when its game ended first (a 3-seat game is 152 plays: it ends at a
    rollout's second play). ``update`` reads the trained rows alone: the same update with every other row poisoned
    (NaN) moves the networks exactly as the clean one does. ``--horizon game``, so that every rollout ends with
    open moves (with round chains, a rollout ending with a round at every table has none)."""
    train, args, model, _, rollouts, _ = consecutive_rollouts(
        tmp_path,
        monkeypatch,
        ["--pool-share", "0", "--pool-draw", "game", "--players", "3", "--horizon", "game"],
        count=20,
        num_tables=6,
        num_steps=10,
    )
    c = train.CARRIED
    linked = ended = 0
    for before, after in itertools.pairwise(rollouts):
        gains = train.advantages(before, args.gamma, args.gae_lambda)
        assert before.open.any() and not (gains[before.open]).any() and not before.trained[before.open].any()
        for row, table in zip(*np.nonzero(before.open), strict=True):
            seat = before.seats[row, table]
            assert after.trained[seat, table] and after.valid[seat, table] and not after.open[seat, table]
            assert (after.next_row[seat, table] >= c) != after.done[seat, table]
            linked += bool(after.next_row[seat, table] >= c)
            ended += bool(after.done[seat, table])
            assert after.seats[seat, table] == seat
        assert after.valid[:c].sum() == before.open.sum()  # and nothing else is carried
    assert linked > 0 and ended > 0

    rollout = rollouts[-1]
    gains = train.advantages(rollout, args.gamma, args.gae_lambda)
    untrained = ~rollout.trained
    assert (untrained & rollout.valid).any()  # open moves, which a valid-based update would read
    poisoned = dataclasses.replace(rollout)
    for name in ("observations", "hidden", "log_probs", "values"):
        array = getattr(rollout, name).copy()
        array[untrained] = np.nan
        setattr(poisoned, name, array)
    poisoned_gains = gains.copy()
    poisoned_gains[untrained] = np.nan
    results = []
    for data, advantage in ((rollout, gains), (poisoned, poisoned_gains)):
        learner = copy.deepcopy(model)
        optimizer = torch.optim.Adam(learner.parameters(), lr=args.learning_rate, eps=1e-5)
        stats = train.update(learner, optimizer, data, advantage, args, torch.Generator().manual_seed(0), args.ent_coef)
        results.append((stats, [parameter.detach().clone() for parameter in learner.parameters()]))
    (clean_stats, clean), (poisoned_stats, after_poison) = results
    assert all(np.isfinite(value) for value in poisoned_stats.values()) and clean_stats == poisoned_stats
    assert all(torch.equal(a, b) for a, b in zip(clean, after_poison, strict=True))
    assert not all(torch.equal(a, b) for a, b in zip(clean, model.parameters(), strict=True))  # it did learn


@pytest.mark.parametrize("players", [["3"], ["4"], ["3", "5", "6"]])
def test_the_critic_sees_the_other_hands_clockwise_then_the_dummy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, players: list[str]
) -> None:
    """``hidden`` is (CARRIED + steps, N, 6 K): for play ``t`` (row ``CARRIED + t``), the hands of the seats 1..5
    places clockwise from the mover (empty past the table), then the 3-player dummy hand, as the engine holds them
    before the play."""
    train, args, model, tables = rollout_setup(
        tmp_path, ["--pool-share", "0", "--pool-draw", "game", "--players", *players], num_steps=12
    )
    steps = record_steps(tables, monkeypatch)
    rollout = train.collect(tables, model, args, torch.Generator().manual_seed(0))
    kinds, c = get_deck("standard").num_kinds, train.CARRIED
    assert rollout.hidden.shape == (c + args.num_steps, args.num_tables, MAX_SEATS * kinds)
    assert model.hidden_scale.numel() == MAX_SEATS * kinds
    assert not rollout.hidden[:c].any()  # the first rollout carries nothing
    for t, step in enumerate(steps):
        for table in range(args.num_tables):
            seat, n = int(step.seats[table]), int(step.num_players[table])
            hands = step.hands[table]
            others = [hands[(seat + offset) % n] if offset < n else np.zeros(kinds) for offset in range(1, MAX_SEATS)]
            expected = np.concatenate([*others, hands[DUMMY_SLOT]])
            np.testing.assert_array_equal(rollout.hidden[c + t, table], expected)
            unseen = step.observations[table][observation_layout(get_deck("standard")).slices["unseen"]]
            assert rollout.hidden[c + t, table].sum() == unseen.sum()  # every card not in the mover's hand or played
    has_dummy = np.array([step.num_players == 3 for step in steps])
    plays = rollout.hidden[c:, :, -kinds:]
    assert plays[has_dummy].sum(axis=-1).min(initial=1) > 0
    assert not plays[~has_dummy].any()


def test_without_critic_sees_hands_the_critic_gets_no_hidden_input(tmp_path: Path) -> None:
    """``--no-critic-sees-hands``: the hidden input is (CARRIED + steps, N, 0), carried rows too, and the critic
    sees the observation alone."""
    train, args, model, tables = rollout_setup(tmp_path, ["--no-critic-sees-hands"], num_steps=8)
    generator = torch.Generator().manual_seed(0)
    first = train.collect(tables, model, args, generator)
    second = train.collect(tables, model, args, generator)
    assert first.hidden.shape == second.hidden.shape == (train.CARRIED + 8, args.num_tables, 0)
    assert second.valid[: train.CARRIED].any()  # moves were carried
    assert model.hidden_scale.numel() == 0
    assert model.critic[0].in_features == observation_layout(get_deck("standard")).size
    assert np.isfinite(second.values[second.valid]).all() and second.values[second.valid].any()


# -- 7. self-play snapshots ------------------------------------------------------------------------
def record_pools(train: ModuleType, monkeypatch: pytest.MonkeyPatch, run_dir: Path) -> list[list[tuple[str, Any]]]:
    """The opponent pool at each ``collect`` call: (name, fingerprint or None) per member; snapshots sample and play
    the file of their name in ``run_dir/snapshots`` (read when the pool is recorded)."""
    pools: list[list[tuple[str, Any]]] = []
    real_collect = train.collect

    def collect(tables: Any, model: Any, args: Any, generator: Any, clock: Any = None) -> Any:
        pool = []
        for member in tables.pool:
            policy = getattr(member, "policy", None)
            if policy is not None:
                assert member.greedy is False
                on_disk = read_friday13_policy(run_dir / "snapshots" / f"{member.name}.npz")
                assert policy.fingerprint() == on_disk.fingerprint(), member.name
            pool.append((member.name, policy.fingerprint() if policy is not None else None))
        pools.append(pool)
        return real_collect(tables, model, args, generator, clock)

    monkeypatch.setattr(train, "collect", collect)
    return pools


def test_snapshots_join_the_pool_and_a_resumed_run_reloads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ``--snapshot-every`` a snapshot is written under ``snapshots/`` and joins the pool, at most
    ``--max-snapshots`` kept (oldest out, its file deleted); ``--resume`` puts the recorded ones back into the
    pool."""
    train = load_script()
    run_dir = tmp_path / "run"
    pools = record_pools(train, monkeypatch, run_dir)
    flags = [*TINY, "--eval-every", "0", "--snapshot-every", "128", "--max-snapshots", "2", "--pool-share", "1"]
    train.main(["--run-dir", str(run_dir), "--total-timesteps", "512", *flags])

    def names(recorded: list[list[tuple[str, Any]]]) -> list[list[str]]:
        return [[name for name, _ in pool] for pool in recorded]

    def snapshot_files() -> set[str]:
        return {path.name for path in (run_dir / "snapshots").iterdir()}

    fixed = ["cautious", "majority"]
    assert names(pools) == [
        fixed,
        [*fixed, "snapshot_128"],
        [*fixed, "snapshot_128", "snapshot_256"],
        [*fixed, "snapshot_256", "snapshot_384"],
    ]
    assert all(fingerprint is None for pool in pools for name, fingerprint in pool if name in fixed)
    fingerprints = {name: fingerprint for pool in pools for name, fingerprint in pool if name not in fixed}
    assert all(fingerprints[name] == fingerprint for pool in pools for name, fingerprint in pool if name not in fixed)
    assert len(set(fingerprints.values())) == 3  # snapshot_128, _256, _384: three different actors
    assert progress_of(run_dir)["snapshots"] == ["snapshot_384", "snapshot_512"]
    assert snapshot_files() == {"snapshot_384.npz", "snapshot_512.npz"}  # the dropped ones are deleted
    last = read_friday13_policy(run_dir / "snapshots" / "snapshot_512.npz").fingerprint()
    assert last == read_friday13_policy(run_dir / "policy.npz").fingerprint()  # the last actor
    assert last not in fingerprints.values()

    pools.clear()
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "768"])
    assert names(pools) == [[*fixed, "snapshot_384", "snapshot_512"], [*fixed, "snapshot_512", "snapshot_640"]]
    assert pools[0][2] == ("snapshot_384", fingerprints["snapshot_384"]) and pools[0][3] == ("snapshot_512", last)
    assert progress_of(run_dir)["snapshots"] == ["snapshot_640", "snapshot_768"]
    assert snapshot_files() == {"snapshot_640.npz", "snapshot_768.npz"}


class Interrupted(Exception):
    """Stands for a run killed between two checkpoints (a crash, a Ctrl-C, the machine going down)."""


def test_a_run_stopped_between_a_snapshot_and_its_checkpoint_can_be_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Snapshots every rollout, checkpoints every second one, one snapshot kept: the run stops in its fourth rollout,
    after snapshot_384 replaced snapshot_256 but before a checkpoint recorded that. ``--resume`` continues from the
    last checkpoint (which names snapshot_256) and finishes the run."""
    train = load_script()
    run_dir = tmp_path / "run"
    real_collect, calls = train.collect, []

    def collect(*arguments: Any) -> Any:
        calls.append(None)
        if len(calls) == 4:
            raise Interrupted
        return real_collect(*arguments)

    monkeypatch.setattr(train, "collect", collect)
    with pytest.raises(Interrupted):
        train.main(["--run-dir", str(run_dir), "--total-timesteps", "512", *TINY, "--eval-every", "0",
                    "--snapshot-every", "128", "--checkpoint-every", "256", "--max-snapshots", "1"])  # fmt: skip
    assert progress_of(run_dir)["timesteps"] == 256 and progress_of(run_dir)["snapshots"] == ["snapshot_256"]
    monkeypatch.setattr(train, "collect", real_collect)
    train.main(["--run-dir", str(run_dir), "--resume"])  # today: SystemExit, snapshot_256.npz is gone
    assert progress_of(run_dir)["timesteps"] == 512


def test_a_run_holds_numpys_blas_to_its_thread_count(tmp_path: Path) -> None:
    """``--torch-threads`` also limits numpy's BLAS (the pool's snapshots and the evaluations multiply matrices in
    numpy): on a busy CPU a second BLAS thread stalls on every product."""
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads() -> set[int]:
        return {pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas"}

    with threadpoolctl.threadpool_limits(3, user_api="blas"):
        if blas_threads() in (set(), {1}):
            pytest.skip("numpy's BLAS here cannot run more than one thread")
        load_script().main(["--run-dir", str(tmp_path / "run"), "--total-timesteps", "128", "--eval-every", "0", *TINY])
        assert blas_threads() == {1}


@pytest.mark.parametrize("draw", ["seat", "game"])
def test_pool_draw_seats_one_member_per_seat_or_one_per_table(tmp_path: Path, draw: str) -> None:
    """``--pool-draw game`` fills every other seat of a pool game with one drawn member (as the evaluation seats
    three copies of one baseline); ``seat`` draws each seat's member on its own, so tables mix members."""
    *_, tables = rollout_setup(
        tmp_path, ["--pool-share", "1", "--pool-draw", draw, "--opponents", "cautious", "majority"], num_tables=200
    )
    occupied = np.arange(MAX_SEATS)[None, :] < tables.tables.batch.num_players[:, None]
    members = [set(tables.opponent[game][occupied[game] & ~tables.learner[game]].tolist()) for game in range(200)]
    assert set().union(*members) == {0, 1}
    mixed = sum(len(seated) > 1 for seated in members)
    if draw == "game":
        assert mixed == 0
    else:
        assert mixed > 100  # two or more drawn seats: mixed with chance 1/2 or more


# -- the device ------------------------------------------------------------------------------------
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="torch sees no CUDA device here")
without_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="torch sees a CUDA device here")


@without_cuda
def test_device_cuda_without_a_gpu_is_refused_before_anything_is_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(["--total-timesteps", "128", *TINY, "--device", "cuda"])
    assert exit_info.value.code == 2
    assert f"--device cuda: this torch ({torch.__version__}) sees no CUDA device; use --device cpu" in (
        capsys.readouterr().err
    )
    assert not list(tmp_path.iterdir())


@without_cuda
def test_a_run_recorded_on_a_gpu_resumes_on_the_cpu_only_when_told(finished_run: Path, tmp_path: Path) -> None:
    """The device is a run setting: a run recorded with ``--device cuda`` names the missing GPU on a machine without
    one, and goes on with ``--device cpu``; a run recorded before ``--device`` existed resumes on the CPU."""
    run_dir = copy_of(finished_run, tmp_path)
    progress = progress_of(run_dir)
    progress["args"]["device"] = "cuda"
    (run_dir / "progress.json").write_text(json.dumps(progress))
    train = load_script()
    with pytest.raises(SystemExit, match=r"--resume: --device cuda: this torch .* sees no CUDA device"):
        train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640"])
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "640", "--device", "cpu"])
    assert progress_of(run_dir)["args"]["device"] == "cpu" and progress_of(run_dir)["timesteps"] == 640
    record_without(run_dir, "device")
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "768"])
    assert progress_of(run_dir)["args"]["device"] == "cpu" and progress_of(run_dir)["timesteps"] == 768


@needs_cuda
def test_on_a_gpu_the_rollout_and_the_update_match_the_cpus(tmp_path: Path) -> None:
    """The same network, deals and noise on both devices: the same moves, and log-probabilities, values and one
    update's weights equal up to float rounding (the GPU's matrix products round differently)."""
    train = load_script()
    results = {}
    for device in ("cpu", "cuda"):
        args = train.parse_args([*TINY, "--run-dir", str(tmp_path / device), "--device", device])
        torch.manual_seed(0)
        model = make_model(train, args).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate, eps=1e-5)
        generator = torch.Generator().manual_seed(0)
        rollout = train.collect(train.Tables(args, seed=0), model, args, generator)
        gains = train.advantages(rollout, args.gamma, args.gae_lambda)
        train.update(model, optimizer, rollout, gains, args, generator, args.ent_coef)
        results[device] = (rollout, [parameter.detach().cpu() for parameter in model.parameters()])
    (on_cpu, cpu_weights), (on_gpu, gpu_weights) = results["cpu"], results["cuda"]
    np.testing.assert_array_equal(on_gpu.actions, on_cpu.actions)
    np.testing.assert_array_equal(on_gpu.valid, on_cpu.valid)
    np.testing.assert_allclose(on_gpu.log_probs, on_cpu.log_probs, atol=1e-5)
    np.testing.assert_allclose(on_gpu.values, on_cpu.values, atol=1e-5)
    for gpu, cpu in zip(gpu_weights, cpu_weights, strict=True):
        np.testing.assert_allclose(gpu.numpy(), cpu.numpy(), atol=1e-4)


@needs_cuda
def test_a_gpu_run_exports_its_actor_and_resumes_on_the_cpu(tmp_path: Path) -> None:
    """A ``--device cuda`` run's numpy policy is its checkpointed actor, and its checkpoint resumes with
    ``--device cpu``."""
    train = load_script()
    run_dir = tmp_path / "run"
    train.main([*TINY, "--run-dir", str(run_dir), "--total-timesteps", "256", "--eval-every", "256",
                "--device", "cuda"])  # fmt: skip
    args = train.parse_args([*TINY, "--run-dir", str(tmp_path / "unused")])
    model = make_model(train, args)
    model.load_state_dict(torch.load(run_dir / "last.pt", map_location="cpu", weights_only=True)["model"])
    observations, _ = real_observations(train, args)
    with torch.no_grad():
        expected = model.actor(torch.from_numpy(observations) * model.scale).numpy()
    np.testing.assert_allclose(read_friday13_policy(run_dir / "policy.npz").logits(observations), expected, atol=1e-5)
    assert len(progress_of(run_dir)["curve"]) == 2 and progress_of(run_dir)["args"]["device"] == "cuda"
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "384", "--device", "cpu"])
    assert progress_of(run_dir)["timesteps"] == 384 and progress_of(run_dir)["args"]["device"] == "cpu"
