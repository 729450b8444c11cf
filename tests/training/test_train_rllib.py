"""training/train_rllib.py: self-play PPO on Ray RLlib over the batched tables (the ``rllib`` extra; CI's RLlib job
runs these with ``pytest -m rllib``). The issue's command trains, checkpoints and exports a policy that plays without
Ray or torch; runs are reproducible and resume from RLlib's checkpoint; every seat is credited its own points through
RLlib's episodes; the runner's connectors send each table its own player's action and its counters match RLlib's;
the exported file is the module's actor; bad flags are refused before Ray starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env import agents
from friday13_env.friday13.agents.policy import read_friday13_policy
from friday13_env.friday13.batched import SelfPlayTables, make_batched
from friday13_env.friday13.cards import get_deck
from tests.scripts import load_training_script, play_without

pytestmark = pytest.mark.rllib
pytest.importorskip("ray.rllib", reason="the rllib extra is not installed")
torch = pytest.importorskip("torch")

from ray.rllib.core.columns import Columns  # noqa: E402  (after the skip: ray may be missing)
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner  # noqa: E402
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode  # noqa: E402

from friday13_env.friday13.batched import rllib  # noqa: E402  (the adapter the script trains on)

REPOSITORY = Path(__file__).resolve().parents[2]
TINY = [
    "--num-env-runners", "0", "--num-envs-per-env-runner", "16", "--train-batch-size", "512", "--minibatch-size",
    "128", "--hidden-sizes", "16", "16", "--eval-every", "0",
]  # fmt: skip
"""A run that samples in the test's process, 512 card plays per iteration."""


@pytest.fixture(scope="module")
def train() -> ModuleType:
    return load_training_script("train_rllib")


def weights_of(path: Path) -> list[np.ndarray]:
    policy = read_friday13_policy(path)
    return [*policy.weights, *policy.biases]


def test_the_issues_command_trains_checkpoints_and_exports_a_policy_that_plays_without_ray_or_torch(
    tmp_path: Path,
) -> None:
    """``python training/train_rllib.py --iterations 2 --num-env-runners 1 --export p.npz`` from a fresh folder:
    a local Ray with one runner, two iterations, evaluations at the start and the end, RLlib's checkpoint, and a
    numpy policy that ``agents.load`` plays through a whole game in a process where ray and torch cannot load."""
    command = [sys.executable, str(REPOSITORY / "training/train_rllib.py"), "--iterations", "2"]
    result = subprocess.run(
        [*command, "--num-env-runners", "1", "--export", "p.npz"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = tmp_path / "runs" / "rllib"
    assert (run_dir / "checkpoint" / "rllib_checkpoint.json").is_file()
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["iterations"] == 2
    assert progress["timesteps"] >= 2 * 16_384
    assert [point["timesteps"] for point in progress["curve"]] == [0, progress["timesteps"]]
    assert set(progress["curve"][0]) == {"timesteps", "cautious", "majority"}
    assert (tmp_path / "p.npz").read_bytes() == (run_dir / "policy.npz").read_bytes()
    assert "iteration 2:" in result.stdout
    played = play_without(tmp_path / "p.npz", 5, ["torch", "ray"])
    assert played.returncode == 0, played.stderr
    assert played.stdout.split() == ["200", "MLPPolicy", "False"]  # four rounds of 50 cards


def test_the_same_seed_gives_the_same_policy_and_another_seed_another(train: ModuleType, tmp_path: Path) -> None:
    runs = {}
    for name, seed in (("a", "0"), ("b", "0"), ("c", "1")):
        train.main(["--run-dir", str(tmp_path / name), "--iterations", "2", "--seed", seed, *TINY])
        runs[name] = weights_of(tmp_path / name / "policy.npz")
    assert all(np.array_equal(x, y) for x, y in zip(runs["a"], runs["b"], strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(runs["a"], runs["c"], strict=True))


def test_resume_restores_rllibs_checkpoint_and_refuses_a_changed_hyperparameter(
    train: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    train.main(["--run-dir", str(run_dir), "--iterations", "1", *TINY])
    with pytest.raises(SystemExit) as refused:
        train.main(["--run-dir", str(run_dir), "--resume", "--learning-rate", "0.5", "--gamma", "0.5"])
    assert "--learning-rate" in str(refused.value) and "--gamma" in str(refused.value)

    progress = json.loads((run_dir / "progress.json").read_text())
    args = train.Args(**{**progress["args"], "resume": True})
    train.start_ray("", num_env_runners=0)
    try:
        algo = train.build_algorithm(args, run_dir, done=1)
        restored = train.learner_module(algo).actor_layers()
        arrays = [
            *(layer.weight.detach().numpy().T for layer in restored),
            *(layer.bias.detach().numpy() for layer in restored),
        ]
        algo.stop()
    finally:
        train.ray.shutdown()
    assert all(np.allclose(x, y) for x, y in zip(arrays, weights_of(run_dir / "policy.npz"), strict=True))

    capsys.readouterr()
    train.main(["--run-dir", str(run_dir), "--resume", "--iterations", "2", "--num-envs-per-env-runner", "8"])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert progress["iterations"] == 2 and progress["timesteps"] >= 2 * 512
    assert progress["args"]["num_envs_per_env_runner"] == 8  # a run setting, changed on resume
    assert "iteration 2:" in capsys.readouterr().out
    train.main(["--run-dir", str(run_dir), "--resume", "--iterations", "2"])
    assert "is finished: 2 iterations" in capsys.readouterr().out


class RecordingBatch:
    """Wraps the tables' ``GameBatch``: each table's final scores, in the order its games end."""

    finals: dict[int, list[np.ndarray]]

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.finals = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        batch = self.cls(*args, **kwargs)
        step, finals = batch.step, self.finals

        def recorded(actions: np.ndarray, games: np.ndarray) -> Any:
            result = step(actions, games)
            for row in np.flatnonzero(result.game_over):
                finals.setdefault(int(games[row]), []).append(result.final_scores[row].copy())
            return result

        batch.step = recorded
        return batch


@pytest.mark.parametrize("share", [0.0, 0.6])
def test_every_seat_is_credited_its_own_points_in_rllibs_episodes(
    train: ModuleType, monkeypatch: pytest.MonkeyPatch, share: float
) -> None:
    """BatchedTables' outputs fed to RLlib's ``MultiAgentEpisode`` as the runner feeds them (``points`` rewards,
    table sizes 3-6, random legal moves): each agent's return over a game is minus its seat's final score, its
    rewards sit on at most one move per round, and a game seats the learner at every seat or (with opponents) at
    exactly one."""
    recording = RecordingBatch(rllib.GameBatch)
    monkeypatch.setattr(rllib, "GameBatch", recording)
    config = {"players": [3, 4, 5, 6], "deck": "standard", "reward": "points", "num_opponents": 2}
    env = rllib.BatchedTables({**config, "opponent_share": share}, num_envs=6)

    def episode() -> MultiAgentEpisode:
        return MultiAgentEpisode(
            observation_space=env.single_observation_spaces,
            action_space=env.single_action_spaces,
            agent_to_module_mapping_fn=train.module_of,
        )

    observations, infos = env.reset(seed=5)
    episodes = [episode() for _ in range(6)]
    for table, current in enumerate(episodes):
        current.add_env_reset(observations=observations[table], infos=infos[table])
    rng = np.random.default_rng(0)
    finished: dict[int, list[MultiAgentEpisode]] = {}
    while sum(map(len, finished.values())) < 18:
        actions = [
            {agent: int(rng.choice(np.flatnonzero(seen["action_mask"]))) for agent, seen in table.items()}
            for table in observations
        ]
        observations, rewards, terminateds, truncateds, infos = env.step(actions)
        for table, current in enumerate(episodes):
            if not current.is_reset:
                current.add_env_reset(observations=observations[table], infos=infos[table])
                continue
            current.add_env_step(
                observations[table], actions[table], rewards[table], infos[table],
                terminateds=terminateds[table], truncateds=truncateds[table],
            )  # fmt: skip
            if current.is_done:
                finished.setdefault(table, []).append(current)
                episodes[table] = episode()
    modules_seen = set()
    for table, games in finished.items():
        for game, final in zip(games, recording.finals[table], strict=True):
            players = len(game.agent_episodes)
            seats = {agent % 6: agent for agent in game.agent_episodes}
            assert sorted(seats) == list(range(players))
            for seat, agent in seats.items():
                returns = game.agent_episodes[agent].get_rewards()
                assert sum(returns) == pytest.approx(-final[seat])
                assert np.count_nonzero(returns) <= 4
            learners = [agent for agent in game.agent_episodes if train.module_of(agent) == train.LEARNER]
            assert len(learners) in ({players} if share == 0 else {1, players})
            modules_seen |= {train.module_of(agent) for agent in game.agent_episodes}
    expected = {"learner"} if share == 0 else {"learner", "opponent0", "opponent1"}
    assert modules_seen == expected


def test_an_exception_mid_step_locks_the_tables_until_reset(train: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception part-way through ``BatchedTables.step`` (after the cards were played: an interrupt, say) leaves
    the tables refusing ``step``, naming the failure, until ``reset``; a refused action (nothing played) does not."""
    config = {"players": [3, 4], "deck": "standard", "reward": "points", "num_opponents": 0, "opponent_share": 0.0}
    env = rllib.BatchedTables(config, num_envs=4)
    observations, _ = env.reset(seed=6)

    def first_legal(observations: list[dict[str, Any]], pick: Any = np.argmax) -> list[dict[str, int]]:
        return [{agent: int(pick(seen["action_mask"])) for agent, seen in table.items()} for table in observations]

    with pytest.raises(ValueError, match="holds no such card"):
        env.step(first_legal(observations, pick=np.argmin))  # every hand lacks some card: refused, nothing played
    observations, *_ = env.step(first_legal(observations))
    encode = rllib.encode_observations

    def interrupted(*args: Any, **kwargs: Any) -> np.ndarray:
        raise KeyboardInterrupt("interrupted mid-step")

    monkeypatch.setattr(rllib, "encode_observations", interrupted)
    with pytest.raises(KeyboardInterrupt):
        env.step(first_legal(observations))
    monkeypatch.setattr(rllib, "encode_observations", encode)
    with pytest.raises(RuntimeError, match=r"an earlier step\(\) raised KeyboardInterrupt: .*call reset\(\)"):
        env.step(first_legal(observations))
    observations, _ = env.reset()
    env.step(first_legal(observations))


def exported_policy(train: ModuleType, args: Any, path: Path) -> Any:
    """The learner module of ``args`` with random weights (not its near-uniform start), exported to ``path``."""
    module = train.module_specs(args)[train.LEARNER].build()
    torch.manual_seed(3)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.3)
    train.export_policy(module, args, path, {"iterations": 0, "timesteps": 0})
    return module


def test_the_exported_file_is_the_modules_actor(train: ModuleType, tmp_path: Path) -> None:
    """The numpy policy's logits are the module's unmasked logits, and ``agents.load`` plays its masked argmax."""
    args = train.Args(hidden_sizes=[24, 12], activation="relu")
    module = exported_policy(train, args, tmp_path / "p.npz")
    tables = SelfPlayTables(64, num_players=[3, 6], seed=2)
    turn = tables.reset()
    for _ in range(30):
        turn = tables.step(tables.batch.random_actions(np.random.default_rng(1)))
    with torch.no_grad():
        logits = module.actor(torch.from_numpy(turn.observations) * module.scale).numpy()
        masked = module.forward_inference(
            {
                Columns.OBS: {
                    "observation": torch.from_numpy(turn.observations),
                    "action_mask": torch.from_numpy(turn.masks),
                }
            }
        )[Columns.ACTION_DIST_INPUTS].numpy()
    np.testing.assert_allclose(
        read_friday13_policy(tmp_path / "p.npz").logits(turn.observations), logits, rtol=1e-5, atol=1e-5
    )
    agent = agents.load(tmp_path / "p.npz")
    moves = [
        agent.act({"observation": o, "action_mask": m.astype(np.int8)})
        for o, m in zip(turn.observations, turn.masks, strict=True)
    ]
    assert moves == masked.argmax(axis=1).tolist()


def test_the_runner_sends_each_table_its_players_action_and_counts_as_rllib_does(
    train: ModuleType, tmp_path: Path
) -> None:
    """Sampling with a heuristic and an exported policy as opponents: each opponent's stored actions are what that
    agent plays on the stored observations, the learner's stored log-probabilities are its module's on them, every
    action is legal; and the step counters equal those RLlib's own counting logs for the same (seeded) sampling."""
    exported_policy(train, train.Args(), tmp_path / "frozen.npz")
    args = train.Args(
        players=[4, 5], opponents=["cautious", str(tmp_path / "frozen.npz")], opponent_share=0.7,
        num_env_runners=0, num_envs_per_env_runner=12,
    )  # fmt: skip
    config = rllib.use_batched_tables(train.ppo_config(args, seed=4), train.table_options(args))
    runner = rllib.TablesEnvRunner(config=config)
    episodes = runner.sample(num_timesteps=3_000)
    deck = get_deck("standard")
    opponents = {"opponent0": make_batched("cautious", deck), "opponent1": make_batched(tmp_path / "frozen.npz", deck)}
    learner = runner.module[train.LEARNER]
    checked = dict.fromkeys([train.LEARNER, *opponents], 0)
    for chunk in episodes:
        for agent, steps in chunk.agent_episodes.items():
            module = train.module_of(agent)
            seen = steps.get_observations(slice(0, len(steps)))
            actions = np.asarray(steps.get_actions())
            assert seen["action_mask"][np.arange(len(actions)), actions].all()
            if module == train.LEARNER:
                batch = {Columns.OBS: {key: torch.from_numpy(value) for key, value in seen.items()}}
                with torch.no_grad():
                    logits = learner.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
                expected = torch.log_softmax(logits, dim=1).numpy()[np.arange(len(actions)), actions]
                stored = np.asarray(steps.get_extra_model_outputs(Columns.ACTION_LOGP))
                np.testing.assert_allclose(stored, expected, rtol=1e-4, atol=1e-5)
            else:
                masks = seen["action_mask"].astype(bool)
                played = opponents[module].act_batch(seen["observation"], masks, np.random.default_rng())
                assert actions.tolist() == played.tolist()
            checked[module] += len(actions)
    assert min(checked.values()) > 50

    stock_counting = {  # the same runner with RLlib's own step counting
        "sample": MultiAgentEnvRunner.sample,
        "_increase_sampled_metrics": MultiAgentEnvRunner._increase_sampled_metrics,
    }
    reference = type("StockCounting", (rllib.TablesEnvRunner,), stock_counting)(config=config)
    reference.sample(num_timesteps=3_000)
    ours, theirs = runner.get_metrics(), reference.get_metrics()
    keys = [
        key
        for key in theirs
        if key.startswith(("num_env_steps", "num_agent_steps", "num_module_steps", "num_episodes"))
    ]
    assert len(keys) >= 8
    for key in keys:
        assert peeked(ours[key]) == peeked(theirs[key]), key


def peeked(stats: Any) -> Any:
    """A metrics entry's value: a number, or a dict of numbers by agent or module."""
    return {name: value.peek() for name, value in stats.items()} if isinstance(stats, dict) else stats.peek()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--minibatch-size", "5000", "--train-batch-size", "4096"],
            "--minibatch-size 5000 exceeds --train-batch-size",
        ),
        (["--opponents", "nobody"], "--opponents:"),
        (["--opponents", "search"], "no batched version"),
        (["--opponents"], "--opponent-share needs --opponents"),
        (["--eval-opponents", "cautious", "cautious"], "must not repeat"),
        (["--num-env-runners", "-1"], "--num-env-runners"),
        (["--num-envs-per-env-runner", "1048577"], "--num-envs-per-env-runner: must be at least 1 and at most"),
        (["--num-env-runners", "1000000000"], "--num-env-runners: must be at least 0 and at most 1,024"),
    ],
)
def test_bad_flags_are_refused_before_ray_starts(
    train: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    with pytest.raises(SystemExit):
        train.main(["--run-dir", str(tmp_path / "run"), *flags])
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    assert not train.ray.is_initialized()


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_a_bad_seed_is_refused_before_the_tables_change(train: ModuleType, seed: object) -> None:
    config = {"players": [4], "deck": "standard", "reward": "points", "num_opponents": 0, "opponent_share": 0.0}
    env = rllib.BatchedTables(config, num_envs=2)
    observations, _ = env.reset(seed=6)
    with pytest.raises(ValueError, match="seed must be None or a non-negative int"):
        env.reset(seed=seed)
    again, _ = env.reset(seed=6)
    assert [sorted(table) for table in again] == [sorted(table) for table in observations]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (lambda legal, mover: {mover: float(legal) + 0.9}, "an action must be an integer card index"),
        (lambda legal, mover: {mover: True}, "an action must be an integer card index"),
        (lambda legal, mover: {mover: np.float32(legal)}, "an action must be an integer card index"),
        (lambda legal, mover: {mover + 1: legal}, "an action of agent"),
    ],
)
def test_an_action_that_is_not_the_movers_integer_is_refused_and_nothing_is_played(
    train: ModuleType, action: Any, message: str
) -> None:
    """A float (3.9 is not card 3), a bool, or an action keyed by another agent than the mover: a ``ValueError``
    before any card is played, as every other entry point refuses them; the mover's integer then plays."""
    config = {"players": [4], "deck": "standard", "reward": "points", "num_opponents": 0, "opponent_share": 0.0}
    env = rllib.BatchedTables(config, num_envs=2)
    observations, _ = env.reset(seed=3)
    movers = [next(iter(table)) for table in observations]
    legal = [
        int(np.flatnonzero(table[mover]["action_mask"])[0]) for table, mover in zip(observations, movers, strict=True)
    ]
    bad = [action(legal[0], movers[0]), {movers[1]: legal[1]}]
    with pytest.raises(ValueError, match=message):
        env.step(bad)
    played = env.step([{movers[0]: np.int64(legal[0])}, {movers[1]: np.array(legal[1])}])
    assert all(movers[table] in played[1][table] for table in range(2))  # each mover's reward: the cards were played


GOOD_TABLES = {"players": [4], "deck": "standard", "reward": "points", "num_opponents": 0, "opponent_share": 0.0}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"reward": "pointz"}, r"reward mode must be one of \['points', 'relative', 'rival', 'win'\], got 'pointz'"),
        ({"deck": "tarot"}, r"unknown deck 'tarot'; allowed values: \['german', 'standard'\]"),
        ({"players": []}, r"num_players must be one of \[3, 4, 5, 6\] or a non-empty list of them"),
        ({"players": [7]}, r"num_players must be one of \[3, 4, 5, 6\]"),
        ({"num_opponents": -1}, r"num_opponents must be a non-negative int, got -1"),
        ({"opponent_share": 7.0}, r"opponent_share must be a number in 0\.\.1, got 7\.0"),
        ({"opponent_share": True}, r"opponent_share must be a number in 0\.\.1, got True"),
        ({"rewards": "points"}, r"the tables' options lack \[\] and do not take \['rewards'\]"),
    ],
)
def test_the_tables_refuse_bad_options_before_anything_is_built(
    train: ModuleType, change: dict[str, Any], message: str
) -> None:
    """A misspelt reward mode trained on the win reward; an opponent share of 7 and reset options were taken."""
    with pytest.raises(ValueError, match=message):
        rllib.BatchedTables({**GOOD_TABLES, **change}, num_envs=2)
    env = rllib.BatchedTables(GOOD_TABLES, num_envs=2)
    with pytest.raises(ValueError, match="options"):
        env.reset(options={"junk": 1})
    with pytest.raises(ValueError, match="num_envs"):
        rllib.BatchedTables(GOOD_TABLES, num_envs=0)


def test_a_folder_that_holds_another_scripts_run_is_refused_and_left_whole(train: ModuleType, tmp_path: Path) -> None:
    """A ``train_ppo.py`` run's folder (its ``progress.json``, no RLlib checkpoint) is not written over by a new run."""
    run = tmp_path / "ppo-run"
    run.mkdir()
    (run / "progress.json").write_text('{"args": {}, "timesteps": 7}', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"already holds a run \(progress.json\)"):
        train.main(["--run-dir", str(run), *TINY, "--iterations", "1"])
    assert (run / "progress.json").read_text(encoding="utf-8") == '{"args": {}, "timesteps": 7}'
    assert sorted(path.name for path in run.iterdir()) == ["progress.json"]
    assert not train.ray.is_initialized()


def test_the_tables_refuse_a_malformed_list_of_actions_and_step_before_reset(train: ModuleType) -> None:
    """An empty dict, a second agent's entry, a list of the wrong length and a step before ``reset`` were a bare
    unpacking error, an ``IndexError``, silently ignored, or a bare ``AssertionError``; every reward is keyed by a
    Python ``int``, as the observations are."""
    env = rllib.BatchedTables(GOOD_TABLES, num_envs=2)
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        env.step([{}, {}])
    observations, _ = env.reset(seed=3)
    movers = [next(iter(table)) for table in observations]
    legal = [int(np.flatnonzero(observations[t][movers[t]]["action_mask"])[0]) for t in range(2)]
    good = [{movers[t]: legal[t]} for t in range(2)]
    for bad, message in [
        ([{}, good[1]], rf"table 0: the mover's action alone, \{{{movers[0]}: card\}}, got \{{\}}"),
        ([{**good[0], 12345: 0}, good[1]], r"table 0: the mover's action alone"),
        (good[:1], r"a list of one action dict per table \(2\), got 1 entries"),
        ([*good, {99: 0}], r"a list of one action dict per table \(2\), got 3 entries"),
    ]:
        with pytest.raises(ValueError, match=message):
            env.step(bad)
    for _ in range(60):
        observations, rewards, *_ = env.step(good)
        assert all(type(agent) is int for table in rewards for agent in table), rewards
        movers = [next(iter(table), None) for table in observations]
        good = [
            {} if mover is None else {mover: int(np.flatnonzero(table[mover]["action_mask"])[0])}
            for table, mover in zip(observations, movers, strict=True)
        ]
