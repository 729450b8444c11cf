"""Stage 2 of training/train_friday.py: the games played in lockstep (friday13_training/lockstep_games.py), the sparse
networks, the advantages, the rewards, the start from a policy, the critic's warm-up, determinism and the checks of a
resumed run's ``last.pt``."""

from __future__ import annotations

import json
import os
import pickle
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.friday import encoding
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.agents import REGISTRY, load
from friday13_env.friday.env import FridayEnv
from friday13_env.friday.policy import read_friday_policy
from tests.scripts import load_training_script as load_script
from tests.scripts import policy_arrays

pytest.importorskip("torch", reason="the training extra is not installed")
import torch
from friday13_training.lockstep_games import SEED_LIMIT, LockstepGames, SparseRows

LEVELS = [1, 2, 4]


def dense(rows: SparseRows) -> np.ndarray:
    """Sparse rows back as dense float32 observations."""
    out = np.zeros((len(rows), encoding.OBS_SIZE), dtype=np.float32)
    out[np.repeat(np.arange(len(rows)), rows.lengths), rows.columns] = rows.values
    return out


class PlainGames:
    """What ``LockstepGames`` must be, written the plain way: one ``FridayEnv`` per game, dealt from the same draws
    (a level, then a seed, per deal, game by game), forced moves auto-played, a finished game dealt anew at once and
    reported if a move of the caller's ended it."""

    def __init__(self, count: int, levels: list[int], rng: np.random.Generator) -> None:
        self.levels, self.rng = levels, rng
        self.envs = [FridayEnv(level=1, illegal_action="raise") for _ in range(count)]
        self.current: list[tuple[np.ndarray, np.ndarray, int]] = []
        for env in self.envs:
            self.current.append(self.play_forced(env, *self.deal(env), reported=[]))

    def deal(self, env: FridayEnv) -> tuple[np.ndarray, np.ndarray, int]:
        level = int(self.rng.choice(self.levels))
        seed = int(self.rng.integers(SEED_LIMIT))
        observation, info = env.reset(seed=seed, options={"level": level})
        return observation, info["action_mask"].astype(bool), level

    def play_forced(
        self, env: FridayEnv, observation: np.ndarray, mask: np.ndarray, level: int, reported: list[Any]
    ) -> tuple[np.ndarray, np.ndarray, int]:
        while mask.sum() == 1:
            observation, mask, level = self.move(env, int(np.flatnonzero(mask)[0]), level, reported, forced=True)
        return observation, mask, level

    def move(
        self, env: FridayEnv, action: int, level: int, reported: list[Any], forced: bool
    ) -> tuple[np.ndarray, np.ndarray, int]:
        observation, _, terminated, _, info = env.step(action)
        if terminated:
            if not reported:  # only the ending the caller's move led to: later ones had no sample
                reported.append((level, bool(info["won"]), int(info["score"])))
            return self.deal(env)
        return observation, info["action_mask"].astype(bool), level

    def step(self, actions: np.ndarray) -> list[tuple[int, int, bool, int]]:
        ended = []
        for game, (env, action) in enumerate(zip(self.envs, actions.tolist(), strict=True)):
            reported: list[Any] = []
            _, _, level = self.current[game]
            after = self.move(env, action, level, reported, forced=False)
            self.current[game] = self.play_forced(env, *after, reported=reported)
            ended += [(game, *result) for result in reported]
        return ended


def test_lockstep_games_are_the_games_friday_env_plays_with_the_same_draws_and_moves() -> None:
    games = LockstepGames(3, LEVELS, np.random.default_rng(7))
    plain = PlainGames(3, LEVELS, np.random.default_rng(7))
    chooser = np.random.default_rng(1)
    finished = []
    for _ in range(400):
        masks = games.masks()
        np.testing.assert_array_equal(masks, np.array([mask for _, mask, _ in plain.current]))
        np.testing.assert_array_equal(dense(games.observations()), np.array([obs for obs, _, _ in plain.current]))
        assert np.all(masks.sum(axis=1) > 1)  # every sample is a real choice
        assert games.level.tolist() == [level for _, _, level in plain.current]
        actions = np.array([chooser.choice(np.flatnonzero(mask)) for mask in masks])
        ended = games.step(actions)
        want = plain.step(actions)
        got = list(
            zip(ended.games.tolist(), ended.levels.tolist(), ended.won.tolist(), ended.scores.tolist(), strict=True)
        )
        assert got == want
        finished += got
    assert len(finished) >= 5 and {level for _, level, _, _ in finished} == set(LEVELS)


def test_an_illegal_move_is_refused_naming_the_legal_ones() -> None:
    games = LockstepGames(2, [1], np.random.default_rng(0))
    mask = games.masks()[0]
    illegal = int(np.flatnonzero(~mask)[0])
    before = dense(games.observations())
    with pytest.raises(ValueError, match=rf"game 0: action {illegal} is not legal") as refused:
        games.step(np.array([illegal, int(np.flatnonzero(games.masks()[1])[0])]))
    named = [int(number) for number in re.findall(r"\d+", str(refused.value).split("legal:")[1])]
    assert named == np.flatnonzero(mask).tolist()
    np.testing.assert_array_equal(dense(games.observations())[0], before[0])  # game 0 was not played


def some_observations() -> list[np.ndarray]:
    """Observations of a few games at every level, and an all-zero one (a row with no entries)."""
    observations = []
    for level in (1, 2, 3, 4):
        env = FridayEnv(level=level)
        observation, info = env.reset(seed=level)
        for _ in range(15):
            observations.append(observation)
            observation, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
            if done:
                break
    observations.insert(5, np.zeros(encoding.OBS_SIZE, dtype=np.float32))
    return observations


def test_sparse_rows_take_and_concatenate_give_back_the_dense_observations() -> None:
    observations = np.array(some_observations())
    rows = SparseRows.of(list(observations))
    assert rows.lengths[5] == 0 and len(rows) == len(observations)
    np.testing.assert_array_equal(dense(rows), observations)
    order = np.random.default_rng(3).permutation(len(rows))[:20]
    order = np.concatenate([order, [5, 0, 5]])  # the empty row, and rows taken twice
    np.testing.assert_array_equal(dense(rows.take(order)), observations[order])
    starts = np.concatenate([[0], np.cumsum(rows.lengths)[:-1]])
    np.testing.assert_array_equal(dense(rows.take(order, starts)), observations[order])
    both = SparseRows.concatenate([rows.take(order), rows])
    np.testing.assert_array_equal(dense(both), np.concatenate([observations[order], observations]))


@pytest.mark.parametrize(("hidden", "activation"), [([32, 16], "tanh"), ([24], "relu")])
def test_the_sparse_networks_compute_what_the_dense_numpy_network_computes(
    tmp_path: Path, hidden: list[int], activation: str
) -> None:
    train = load_script("train_friday")
    torch.manual_seed(0)
    actor = train.SparseMLP(hidden, activation)
    critic = train.SparseMLP(hidden, activation, outputs=1)
    observations = np.array(some_observations())
    order = np.random.default_rng(0).permutation(len(observations))
    rows = SparseRows.of(list(observations)).take(order)
    with torch.no_grad():
        logits = actor(*train.embedding_inputs(rows)).numpy()
        values = critic(*train.embedding_inputs(rows)).numpy()
    path = tmp_path / "actor.npz"
    train.save_sparse_mlp(actor, path, "test", {})
    policy = load(path).policy
    expected = np.array([policy.logits(observation) for observation in observations[order]])
    np.testing.assert_allclose(logits, expected, atol=1e-5)

    weights, biases = critic.weights()  # the dense product, by hand
    hidden_values = observations[order]
    for weight, bias in zip(weights[:-1], biases[:-1], strict=True):
        hidden_values = hidden_values @ weight + bias
        hidden_values = np.tanh(hidden_values) if activation == "tanh" else np.maximum(hidden_values, 0)
    assert values.shape == (len(order), 1)
    np.testing.assert_allclose(values, hidden_values @ weights[-1] + biases[-1], atol=1e-5)


def tiny_rollout(train: Any, values: list[list[float]], next_values: list[float]) -> Any:
    """Three samples of two games: game 0 ends after its sample 1 (reward 2.0) and a new game follows; game 1 ends
    after its sample 2, the rollout's last (reward -1.0). Only what ``advantages`` reads is filled in."""
    return train.Rollout(
        observations=None,
        masks=None,
        actions=None,
        log_probs=None,
        values=torch.tensor(values),
        rewards=torch.tensor([[0.0, 0.0], [2.0, 0.0], [0.0, -1.0]]),
        dones=torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
        next_values=torch.tensor(next_values),
        finished=[],
    )


def test_advantages_are_the_hand_computed_gae_and_nothing_flows_across_a_games_end() -> None:
    train = load_script("train_friday")
    gamma, lam = 0.9, 0.8
    v = [[0.5, 0.1], [0.7, -0.2], [0.3, 0.4]]
    n = [0.6, 9.0]  # game 1's next value follows its end: it must not count
    gains, targets = train.advantages(tiny_rollout(train, v, n), gamma, lam)
    # game 0: samples 0, 1 are one game (ended with 2.0), sample 2 starts the next, continued by next_values[0]
    a20 = 0.0 + gamma * n[0] - v[2][0]
    a10 = 2.0 - v[1][0]
    a00 = (0.0 + gamma * v[1][0] - v[0][0]) + gamma * lam * a10
    # game 1: one game over the three samples, ended with -1.0 after the last
    a21 = -1.0 - v[2][1]
    a11 = (gamma * v[2][1] - v[1][1]) + gamma * lam * a21
    a01 = (gamma * v[1][1] - v[0][1]) + gamma * lam * a11
    expected = np.array([[a00, a01], [a10, a11], [a20, a21]], dtype=np.float32)
    assert gains.shape == targets.shape == (3, 2)
    np.testing.assert_allclose(gains.numpy(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(targets.numpy(), expected + np.array(v, dtype=np.float32), rtol=1e-6, atol=1e-7)

    # the game after an end does not reach back: other values there change nothing before it
    changed, _ = train.advantages(tiny_rollout(train, [*v[:2], [5.0, v[2][1]]], [-3.0, -7.0]), gamma, lam)
    np.testing.assert_array_equal(changed.numpy()[:2, 0], gains.numpy()[:2, 0])
    np.testing.assert_array_equal(changed.numpy()[:, 1], gains.numpy()[:, 1])
    # gamma = lambda = 1: each advantage is the game's final reward minus the value (Monte Carlo)
    monte_carlo, _ = train.advantages(tiny_rollout(train, v, n), 1.0, 1.0)
    np.testing.assert_allclose(
        monte_carlo.numpy(),
        [[2.0 - v[0][0], -1.0 - v[0][1]], [2.0 - v[1][0], -1.0 - v[1][1]], [n[0] - v[2][0], -1.0 - v[2][1]]],
        rtol=1e-6,
    )


def test_the_reward_is_the_score_plus_the_win_bonus_scaled() -> None:
    train = load_script("train_friday")
    won, scores = np.array([True, False]), np.array([40, -30])
    reward = train.final_reward(won, scores, train.Args())
    assert reward.dtype == np.float32
    np.testing.assert_allclose(reward, [1.2, -0.15], rtol=1e-6)  # (40 + 200) x 0.005, -30 x 0.005
    other = train.final_reward(won, scores, train.Args(win_bonus=0.0, reward_scale=0.01))
    np.testing.assert_allclose(other, [0.4, -0.3], rtol=1e-6)


def test_a_started_actor_is_the_start_policy_with_its_logits_sharpened() -> None:
    train = load_script("train_friday")
    start = read_friday_policy(REGISTRY.policy_path("dagger-v1"))
    args = train.Args(init_sharpness=2.5)
    networks = train.Networks.new(args, start)
    weights, biases = networks.actor.weights()
    for index in range(len(start.weights) - 1):  # the hidden layers are the start's
        np.testing.assert_array_equal(weights[index], start.weights[index])
        np.testing.assert_array_equal(biases[index], start.biases[index])
    np.testing.assert_array_equal(weights[-1], start.weights[-1] * np.float32(2.5))
    np.testing.assert_array_equal(biases[-1], start.biases[-1] * np.float32(2.5))

    games = LockstepGames(8, [1, 2, 3, 4], np.random.default_rng(0))
    observations, masks = [], []
    for _ in range(10):
        observations.append(dense(games.observations()))
        masks.append(games.masks())
        games.step(np.array([np.flatnonzero(mask)[0] for mask in masks[-1]]))
    observations_array, masks_array = np.concatenate(observations), np.concatenate(masks)
    with torch.no_grad():
        logits = networks.actor(*train.embedding_inputs(SparseRows.of(list(observations_array)))).numpy()
    expected = np.array([start.logits(observation) for observation in observations_array])
    np.testing.assert_allclose(logits, 2.5 * expected, rtol=1e-4, atol=1e-4)
    greedy = np.where(masks_array, logits, -np.inf).argmax(axis=1)
    start_greedy = [
        start.choose(observation, np.flatnonzero(mask))
        for observation, mask in zip(observations_array, masks_array, strict=True)
    ]
    assert greedy.tolist() == start_greedy
    fresh = train.Networks.new(args, None)  # no start: a fresh actor, not the start's
    assert not np.array_equal(fresh.actor.weights()[0][0], start.weights[0])


def test_collect_records_each_choice_its_move_log_probability_value_and_final_reward() -> None:
    train = load_script("train_friday")
    args = train.Args(hidden_sizes=[16], num_envs=3, n_steps=60, levels=[1])
    networks = train.Networks.new(args, None)
    games = LockstepGames(args.num_envs, args.levels, np.random.default_rng(0))
    rollout = train.collect(games, networks, args, torch.Generator().manual_seed(0))
    rows = args.n_steps * args.num_envs
    assert len(rollout.observations) == rows and rollout.masks.shape == (rows, NUM_ACTIONS)
    assert rollout.actions.shape == rollout.log_probs.shape == rollout.values.shape == (args.n_steps, args.num_envs)
    actions = rollout.actions.reshape(-1)
    assert bool(rollout.masks[torch.arange(rows), actions].all()) and bool((rollout.masks.sum(dim=1) > 1).all())
    with torch.no_grad():
        inputs = train.embedding_inputs(rollout.observations)
        logits = networks.actor(*inputs).masked_fill(~rollout.masks, train.MASKED)
        values = networks.critic(*inputs).squeeze(1)
        next_values = networks.critic(*train.embedding_inputs(games.observations())).squeeze(1)
    log_probs = torch.log_softmax(logits, dim=1)[torch.arange(rows), actions]
    torch.testing.assert_close(rollout.log_probs.reshape(-1), log_probs)
    torch.testing.assert_close(rollout.values.reshape(-1), values)
    torch.testing.assert_close(rollout.next_values, next_values)
    assert not bool((rollout.actions == logits.argmax(dim=1).reshape(args.n_steps, -1)).all())  # sampled
    ended = 0
    for t, finished in enumerate(rollout.finished):
        expected = np.zeros(args.num_envs, dtype=np.float32)
        expected[finished.games] = train.final_reward(finished.won, finished.scores, args)
        np.testing.assert_array_equal(rollout.rewards[t].numpy(), expected)
        assert set(np.flatnonzero(rollout.dones[t].numpy())) == set(finished.games.tolist())
        ended += len(finished.games)
    assert ended >= 1


def stage_2_flags(run_dir: Path, *more: str) -> list[str]:
    """A tiny stage-2 run: no distillation, four level-1 games x 32 samples a rollout, a 16-wide network."""
    return [
        "--run-dir", str(run_dir), "--distill-iterations", "0", "--hidden-sizes", "16", "--num-envs", "4",
        "--n-steps", "32", "--batch-size", "64", "--eval-every", "0", "--levels", "1", "--no-progress",
        "--workers", "1", *more,
    ]  # fmt: skip


def test_the_actor_stays_the_sharpened_start_while_the_critic_warms_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train = load_script("train_friday")
    start = read_friday_policy(REGISTRY.policy_path("dagger-v1"))
    common = [
        "--run-dir", str(tmp_path / "warm"), "--distill-iterations", "0", "--distill-init", "dagger-v1",
        "--num-envs", "4", "--n-steps", "32", "--batch-size", "64", "--eval-every", "0", "--levels", "1", "2",
        "--no-progress", "--workers", "1", "--total-timesteps", "256",
    ]  # fmt: skip
    saved: dict[int, tuple[Any, Any]] = {}  # what each checkpoint wrote: the policy and last.pt
    save_run = train.save_run

    def saving(run_dir: Path, *rest: Any) -> None:
        save_run(run_dir, *rest)
        checkpoint = torch.load(run_dir / "last.pt", weights_only=True)
        saved[checkpoint["timesteps"]] = (read_friday_policy(run_dir / "policy.npz"), checkpoint)

    with monkeypatch.context() as patch:  # a warm-up covering the whole run is refused: the one of 384 samples
        patch.setattr(train, "save_run", saving)
        train.main([*common, "--total-timesteps", "384", "--critic-warmup", "256", "--checkpoint-every", "128"])
    exported, state = saved[256]  # after two updates of the critic alone
    for index in range(len(start.weights) - 1):
        np.testing.assert_array_equal(exported.weights[index], start.weights[index])
        np.testing.assert_array_equal(exported.biases[index], start.biases[index])
    np.testing.assert_array_equal(exported.weights[-1], start.weights[-1] * np.float32(3.0))
    np.testing.assert_array_equal(exported.biases[-1], start.biases[-1] * np.float32(3.0))
    assert state["timesteps"] == 256 and state["actor_optimizer"]["state"] == {}  # no actor step at all
    fresh = train.Networks.new(train.Args(), start).critic.state_dict()
    assert state["critic"].keys() == fresh.keys()
    assert all(not torch.equal(state["critic"][name], fresh[name]) for name in fresh)  # every critic layer learnt

    # the same run with the warm-up over after its first rollout (128 samples): the actor learns from then on
    actors: list[list[np.ndarray]] = []
    collect = train.collect

    def recording(games: Any, networks: Any, *rest: Any) -> Any:
        actors.append(networks.actor.weights()[0])
        return collect(games, networks, *rest)

    with monkeypatch.context() as patch:
        patch.setattr(train, "collect", recording)
        train.main([*common, "--run-dir", str(tmp_path / "learns"), "--critic-warmup", "128"])
    assert len(actors) == 2
    for weight, sharpened in zip(actors[1], exported.weights, strict=True):  # the first rollout left it alone
        np.testing.assert_array_equal(weight, sharpened)
    learnt = read_friday_policy(tmp_path / "learns" / "policy.npz")
    assert not np.array_equal(learnt.weights[-1], exported.weights[-1])


def test_a_stage_2_run_is_reproducible_from_its_seed(tmp_path: Path) -> None:
    train = load_script("train_friday")
    flags = ["--total-timesteps", "256", "--critic-warmup", "0"]
    for name in ("one", "two"):
        train.main(stage_2_flags(tmp_path / name, *flags))
    one, two = policy_arrays(tmp_path / "one" / "policy.npz"), policy_arrays(tmp_path / "two" / "policy.npz")
    assert one.keys() == two.keys() and len(one) == 5  # input scale, two weights, two biases
    for key in one:
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)
    first = torch.load(tmp_path / "one" / "last.pt", weights_only=True)["critic"]
    second = torch.load(tmp_path / "two" / "last.pt", weights_only=True)["critic"]
    assert all(torch.equal(first[name], second[name]) for name in first)

    # the actor did learn: it is not the fresh one of its seed; another seed learns another one
    untrained = train.Networks.new(train.Args(hidden_sizes=[16]), None).actor.weights()[0][-1]
    assert not np.array_equal(one["w1"], untrained)
    train.main(stage_2_flags(tmp_path / "other", *flags, "--seed", "1"))
    assert not np.array_equal(policy_arrays(tmp_path / "other" / "policy.npz")["w1"], one["w1"])


class RunsCode:
    """A pickle that runs a shell command when it is loaded."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (self.command,))


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    """A finished tiny stage-2 run of 256 timesteps, checkpointed every rollout (128)."""
    run_dir = tmp_path / "run"
    load_script("train_friday").main(stage_2_flags(run_dir, "--total-timesteps", "256", "--checkpoint-every", "128"))
    return run_dir


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")
@pytest.mark.parametrize("kind", ["torch.save", "pickle", "garbage"])
def test_a_hostile_or_damaged_last_pt_is_refused_without_running_its_code(
    finished_run: Path, tmp_path: Path, kind: str
) -> None:
    marker = tmp_path / "marker"
    payload = RunsCode(f"touch {shlex.quote(str(marker))}")
    checkpoint = finished_run / "last.pt"
    if kind == "torch.save":
        torch.save({"actor": payload, "timesteps": 256}, checkpoint)
    elif kind == "pickle":
        checkpoint.write_bytes(pickle.dumps(payload))
    else:
        checkpoint.write_bytes(b"not a checkpoint")
    train = load_script("train_friday")
    with pytest.raises(SystemExit) as refused:
        train.main(stage_2_flags(finished_run, "--total-timesteps", "384", "--resume"))
    message = str(refused.value.code)
    assert message.startswith(f"error: --resume: {checkpoint} is damaged or not this run's checkpoint")
    assert not marker.exists()
    assert json.loads((finished_run / "progress.json").read_text())["timesteps"] == 256  # nothing went on


def test_a_last_pt_behind_progress_is_refused_and_one_ahead_moves_progress_up(
    finished_run: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script("train_friday")
    checkpoint, progress_file = finished_run / "last.pt", finished_run / "progress.json"
    state = torch.load(checkpoint, weights_only=True)
    torch.save({**state, "timesteps": 128}, checkpoint)
    with pytest.raises(SystemExit, match=r"last.pt holds 128 timesteps but .*progress.json records 256"):
        train.main(stage_2_flags(finished_run, "--total-timesteps", "384", "--resume"))

    torch.save(state, checkpoint)  # back to 256, with progress.json as if the stop came before it was written
    progress = json.loads(progress_file.read_text())
    progress_file.write_text(json.dumps({**progress, "timesteps": 128}))
    rollouts = [0]
    collect = train.collect

    def counted(*args: Any) -> Any:
        rollouts[0] += 1
        return collect(*args)

    monkeypatch.setattr(train, "collect", counted)
    capsys.readouterr()
    train.main(stage_2_flags(finished_run, "--total-timesteps", "384", "--resume"))
    out = capsys.readouterr().out
    assert f"note: {checkpoint} is ahead of progress.json; going on from 256 timesteps" in out
    assert f"resuming {finished_run} at 256 timesteps" in out
    assert rollouts[0] == 1  # 256 -> 384, not 128 -> 384
    assert json.loads(progress_file.read_text())["timesteps"] == 384
    assert torch.load(checkpoint, weights_only=True)["timesteps"] == 384


def test_a_run_stopped_after_its_final_checkpoint_but_before_its_record_is_completed_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kill between writing ``last.pt`` at the run's end and writing ``policy.npz`` and ``progress.json`` leaves the
    two of the checkpoint before. ``--resume`` to the same end trains nothing, and writes the policy and the record
    of the checkpoint it took (a finished run must not keep a policy behind its checkpoint)."""
    train = load_script("train_friday")
    run_dir = tmp_path / "run"
    train.main(stage_2_flags(run_dir, "--total-timesteps", "128", "--checkpoint-every", "128"))
    earlier = {name: (run_dir / name).read_bytes() for name in ("policy.npz", "progress.json")}
    train.main(stage_2_flags(run_dir, "--total-timesteps", "256", "--resume"))
    final = policy_arrays(run_dir / "policy.npz")
    assert any(not np.array_equal(final[key], value) for key, value in policy_arrays(earlier["policy.npz"]).items())
    for name, data in earlier.items():  # as the kill left them: last.pt at 256, the other two at 128
        (run_dir / name).write_bytes(data)

    def no_rollout(*args: Any) -> Any:
        raise AssertionError("a finished run collected a rollout")

    monkeypatch.setattr(train, "collect", no_rollout)
    capsys.readouterr()
    train.main(stage_2_flags(run_dir, "--total-timesteps", "256", "--resume"))
    assert f"{run_dir} is finished: 256 timesteps" in capsys.readouterr().out
    assert json.loads((run_dir / "progress.json").read_text())["timesteps"] == 256
    written = policy_arrays(run_dir / "policy.npz")
    assert written.keys() == final.keys() and all(np.array_equal(written[key], final[key]) for key in final)


def test_a_batch_larger_than_a_rollout_is_refused_before_the_run_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train = load_script("train_friday")
    flags = ["--run-dir", str(tmp_path / "run"), "--distill-iterations", "0", "--num-envs", "2", "--n-steps", "8"]
    with pytest.raises(SystemExit):
        train.parse_args([*flags, "--batch-size", "4096", "--total-timesteps", "16"])
    assert "--batch-size 4096 exceeds one rollout (--num-envs 2 x --n-steps 8)" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    assert train.parse_args([*flags, "--batch-size", "16", "--total-timesteps", "16"]).batch_size == 16


def test_a_rollout_that_leaves_a_minibatch_of_one_sample_trains(tmp_path: Path) -> None:
    train = load_script("train_friday")
    flags = ["--num-envs", "3", "--n-steps", "3", "--batch-size", "8", "--critic-warmup", "0"]
    train.main(stage_2_flags(tmp_path / "run", *flags, "--total-timesteps", "9"))  # 9 = 8 + 1
    assert json.loads((tmp_path / "run" / "progress.json").read_text())["timesteps"] == 9
