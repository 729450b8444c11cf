"""train_ppo.py's league levers: ``--pool-weighting pfsp`` draws the pool's members by how much they still beat the
learner (``friday13_training.pool_results``), and ``--init-run`` starts a new run from another run's networks
(``friday13_training.run_fork``). The results are checked against hand-made games, the draws against the weights,
the fork's start against its source's checkpoint, and every refusal before anything is built."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env.friday13.agents.policy import read_friday13_policy
from friday13_env.friday13.batched.seating import seat_learners
from tests.scripts import TINY_PPO, load_training_script

torch = pytest.importorskip("torch", reason="the training extra is not installed")

from friday13_training import pool_results  # noqa: E402  (needs torch's extra installed: its package does)
from friday13_training.pool_results import PoolResults, learner_shares, record_games, state_problem  # noqa: E402

PFSP = ["--pool-weighting", "pfsp", "--opponents", "random", "cautious"]


def load_script() -> ModuleType:
    return load_training_script("train_ppo")


def progress_of(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "progress.json").read_text())


@pytest.fixture(scope="module")
def source_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PFSP run of 1,024 timesteps with snapshots (its games end, so its record holds results)."""
    run_dir = tmp_path_factory.mktemp("pfsp") / "source"
    flags = ["--num-steps", "128", "--snapshot-every", "2048", "--max-snapshots", "1"]
    load_script().main(["--run-dir", str(run_dir), "--total-timesteps", "4096", *TINY_PPO, *PFSP, *flags])
    return run_dir


# -- the learner's results ---------------------------------------------------------------------------
def test_the_learners_share_is_its_part_of_the_lowest_total_among_the_seats_of_the_game() -> None:
    """The lowest total wins, ties share it, and the seats past a game's size (their padding zeros) take no part."""
    scores = np.array([
        [5, 3, 9, 0, 0, 0],  # 3 players: seat 1 wins alone
        [4, 4, 7, 4, 0, 0],  # 4 players: seats 0, 1 and 3 share
        [2, 6, 6, 6, 6, 2],  # 6 players: seats 0 and 5 share
    ])  # fmt: skip
    sizes = np.array([3, 4, 6])
    learner = np.zeros((3, 6), dtype=bool)
    learner[0, 1] = learner[1, 3] = learner[2, 2] = True
    np.testing.assert_allclose(learner_shares(scores, sizes, learner), [1.0, 1 / 3, 0.0])


def test_every_member_at_a_table_gets_the_game_once_and_a_name_listed_twice_one_record() -> None:
    results = PoolResults([4])
    members = ["cautious", "majority", "cautious"]
    seated = np.array([[0, 1, 2, 1, 0, 0], [1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 1, 1]])
    learner = np.zeros((3, 6), dtype=bool)
    learner[:, 0] = True
    sizes = np.array([4, 4, 4])
    record_games(results, members, seated, learner, np.array([0.5, 1.0, 0.0]), sizes)
    # table 0: cautious (seat 2, entry 2) and majority; table 1: majority; table 2: cautious (seat 4's 1 is past 4)
    assert results.state() == {"cautious": [0.5, 2.0], "majority": [1.5, 2.0]}


def test_members_the_learner_loses_to_are_drawn_most_and_a_new_one_starts_as_an_equal() -> None:
    results = PoolResults([3, 6], {"weak": [80.0, 100.0], "strong": [10.0, 100.0]})
    equal = (1 / 3 + 1 / 6) / 2
    assert results.win_share("new") == pytest.approx(equal)
    assert results.win_share("weak") == pytest.approx((80 + 20 * equal) / 120)
    weights = results.weights(["weak", "strong", "new", "strong"], power=2)
    shares = [results.win_share(name) for name in ("weak", "strong", "new", "strong")]
    raw = np.array([(1 - share) ** 2 for share in shares])
    np.testing.assert_allclose(weights, raw / raw.sum())
    assert weights[1] > weights[2] > weights[0] and weights.sum() == pytest.approx(1)
    np.testing.assert_allclose(results.weights(["weak", "strong"], power=0), [0.5, 0.5])


def test_the_sums_age_each_rollout_and_members_that_left_lose_their_record() -> None:
    results = PoolResults([4], {"a": [1.0, 4.0], "b": [2.0, 2.0]})
    results.age(["a"])
    assert results.state() == {"a": [pytest.approx(pool_results.DECAY), pytest.approx(4 * pool_results.DECAY)]}


def test_a_member_the_learner_always_beats_drifts_back_to_an_equal_once_it_is_not_drawn() -> None:
    results = PoolResults([4], {"beaten": [1000.0, 1000.0]})
    first = results.weights(["beaten", "new"], power=1)[0]
    for _ in range(100):
        results.age(["beaten", "new"])
    assert first < 0.03 and results.weights(["beaten", "new"], power=1)[0] == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize(
    ("state", "problem"),
    [
        ([1, 2], "pool_results is list"),
        ({"a": [1.0]}, "pool_results['a'] is [1.0]"),
        ({"a": [2.0, 1.0]}, "0 <= won <= games"),
        ({"a": [-1.0, 1.0]}, "0 <= won <= games"),
        ({"a": [True, 1.0]}, "pool_results['a']"),
        ({"a": ["1", 2]}, "pool_results['a']"),
        ({"a": [float("nan"), 1.0]}, "finite"),
    ],
)
def test_a_record_of_results_that_no_run_writes_is_named(state: object, problem: str) -> None:
    assert problem in str(state_problem(state))


def test_a_record_a_run_writes_passes() -> None:
    assert state_problem({"a": [0.0, 0.0], "b": [1.5, 3]}) is None


# -- the draws -----------------------------------------------------------------------------------------
def test_weighted_draws_follow_the_weights_and_unweighted_ones_are_unchanged() -> None:
    games, sizes = np.arange(4000), np.full(4000, 4)
    plain = seat_learners(np.random.default_rng(1), games, sizes, pool_size=3, per_seat=False)
    again = seat_learners(np.random.default_rng(1), games, sizes, pool_size=3, per_seat=False, weights=None)
    np.testing.assert_array_equal(plain.opponents, again.opponents)
    weighted = seat_learners(
        np.random.default_rng(1), games, sizes, pool_size=3, per_seat=False, weights=np.array([0.7, 0.0, 0.3])
    )
    assert weighted.opponents is not None
    drawn = np.bincount(weighted.opponents[:, 0], minlength=3) / games.size
    np.testing.assert_allclose(drawn, [0.7, 0.0, 0.3], atol=0.03)


def test_weights_that_are_not_one_per_member_are_refused() -> None:
    with pytest.raises(ValueError, match=r"weights of shape \(2,\) for a pool of 3 members"):
        seat_learners(np.random.default_rng(0), np.arange(3), np.full(3, 4), pool_size=3, weights=np.ones(2) / 2)


def test_a_pfsp_table_seats_the_members_the_learner_loses_to(tmp_path: Path) -> None:
    """With results in which the learner always beats ``random`` and never ``cautious``, new pool games draw
    ``cautious`` by the weights (power 2: 1 to about 0.002), and a uniform run draws both alike."""
    train = load_script()
    games = np.arange(16)
    drawn = {}
    for weighting in ("pfsp", "uniform"):
        args = train.parse_args(
            ["--run-dir", str(tmp_path / "unused"), *TINY_PPO, *PFSP[2:], "--pool-weighting", weighting]
        )
        tables = train.Tables(args, seed=0, results={"random": [1000.0, 1000.0], "cautious": [0.0, 1000.0]})
        picks = []
        for _ in range(50):
            tables.seat_games(games)
            pooled = tables.learner.sum(axis=1) == 1
            picks.append(tables.opponent[pooled, 0])
        drawn[weighting] = np.bincount(np.concatenate(picks), minlength=2) / np.concatenate(picks).size
    assert drawn["pfsp"][1] > 0.99
    assert abs(drawn["uniform"][1] - 0.5) < 0.05


def test_a_pfsp_rollout_records_every_finished_pool_game_once(tmp_path: Path) -> None:
    """After a rollout the games recorded are the pool games that ended in it, each against its one member
    (``--pool-draw game``); pure self-play games are not counted."""
    train = load_script()
    flags = [*TINY_PPO, *PFSP, "--num-steps", "256", "--pool-draw", "game"]
    args = train.parse_args(["--run-dir", str(tmp_path / "unused"), *flags])
    tables = train.Tables(args, seed=0)
    ended: list[int] = []
    real_record = tables.record_results

    def record(games: np.ndarray, sizes: np.ndarray, scores: np.ndarray) -> None:
        ended.append(int((tables.learner[games].sum(axis=1) == 1).sum()))
        real_record(games, sizes, scores)

    tables.record_results = record
    torch.manual_seed(0)
    train.collect(tables, make_model(train, args), args, torch.Generator().manual_seed(0))
    recorded = sum(sums[1] for sums in tables.results.state().values())
    assert sum(ended) > 0 and recorded == sum(ended)


def make_model(train: ModuleType, args: Any) -> Any:
    from friday13_training.actor_critic import ActorCritic

    from friday13_env.friday13.agents.policy import observation_scale
    from friday13_env.friday13.cards import get_deck

    deck = get_deck(args.deck)
    return ActorCritic(
        observation_scale(args.deck), train.hidden_scale(args), deck.num_actions, args.hidden_sizes, args.activation
    )


# -- a run's record ------------------------------------------------------------------------------------
def test_a_pfsp_run_records_its_results_by_member_and_its_snapshots_join_them(source_run: Path) -> None:
    record = progress_of(source_run)
    assert record["args"]["pool_weighting"] == "pfsp"
    assert set(record["pool_results"]) <= {"random", "cautious", *record["snapshots"]}
    assert {"random", "cautious"} <= set(record["pool_results"])
    assert state_problem(record["pool_results"]) is None


def test_a_resumed_pfsp_run_starts_from_its_recorded_results(
    source_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = Path(shutil.copytree(source_run, tmp_path / "run"))
    recorded = progress_of(run_dir)["pool_results"]
    train = load_script()
    seen: list[dict[str, list[float]]] = []
    real_collect = train.collect

    def collect(tables: Any, *rest: Any) -> Any:
        seen.append(tables.results.state())
        return real_collect(tables, *rest)

    monkeypatch.setattr(train, "collect", collect)
    train.main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "4224"])
    assert seen[0] == recorded


def test_a_damaged_record_of_results_is_refused_on_resume_naming_it(source_run: Path, tmp_path: Path) -> None:
    run_dir = Path(shutil.copytree(source_run, tmp_path / "run"))
    record = progress_of(run_dir)
    record["pool_results"] = {"random": [5.0, 1.0]}
    (run_dir / "progress.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit, match=r"--resume: .*progress.json is damaged: pool_results\['random'\]"):
        load_script().main(["--run-dir", str(run_dir), "--resume", "--total-timesteps", "8192"])


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([*PFSP, "--pool-share", "0"], "--pool-weighting pfsp weights the pool's draws, which --pool-share 0 never"),
        (["--pfsp-power", "3"], "--pfsp-power 3 weights the draws of --pool-weighting pfsp: give it"),
        (["--pool-weighting", "elo"], "argument --pool-weighting: invalid choice: 'elo'"),
        ([*PFSP, "--pfsp-power", "-1"], "--pfsp-power"),
    ],
)
def test_pool_weighting_flags_are_checked_before_anything_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert message in refusal(capsys, ["--run-dir", str(tmp_path / "run"), *TINY_PPO, *flags])
    assert not (tmp_path / "run").exists()


def refusal(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """The usage error of a refused command line (exit status 2)."""
    with pytest.raises(SystemExit) as exit_info:
        load_script().main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


# -- a run started from another run's networks ---------------------------------------------------------
def test_a_fork_starts_from_its_sources_networks_with_its_own_settings_and_records_where(
    source_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    train = load_script()
    started: list[dict[str, Any]] = []
    real_collect = train.collect

    def collect(tables: Any, model: Any, *rest: Any) -> Any:
        if not started:
            started.append({key: value.clone() for key, value in model.state_dict().items()})
        return real_collect(tables, model, *rest)

    monkeypatch.setattr(train, "collect", collect)
    fork = tmp_path / "fork"
    train.main(["--run-dir", str(fork), "--init-run", str(source_run), *TINY_PPO, "--total-timesteps", "256"])
    source = torch.load(source_run / "last.pt", weights_only=True)["model"]
    assert started[0].keys() == source.keys()
    assert all(torch.equal(started[0][key], source[key]) for key in source)
    record = progress_of(fork)
    assert record["started_from"] == {
        "run": str(source_run.resolve()),
        "timesteps": 4096,
        "from_scratch": True,
        "return": {"reward": "relative", "horizon": "round", "gamma": 0.995},  # the source's critic's
        "checkpoint_sha256": hashlib.sha256((source_run / "last.pt").read_bytes()).hexdigest(),
        "hidden_sizes": [16, 16],
    }
    assert record["args"]["pool_weighting"] == "uniform"  # its own settings, not its source's
    description = read_friday13_policy(fork / "policy.npz").metadata.description
    assert "going on from the networks of run" in description and "learned from scratch" in description
    shutil.rmtree(fork / "tb", ignore_errors=True)
    train.main(["--run-dir", str(fork), "--resume", "--total-timesteps", "384"])  # a resume loads its own
    assert progress_of(fork)["started_from"] == record["started_from"]


def test_a_fork_of_a_run_started_from_a_policy_is_not_from_scratch(source_run: Path, tmp_path: Path) -> None:
    source = Path(shutil.copytree(source_run, tmp_path / "source"))
    record = progress_of(source)
    record["args"]["init_policy"] = "some.npz"
    (source / "progress.json").write_text(json.dumps(record))
    fork = tmp_path / "fork"
    load_script().main(["--run-dir", str(fork), "--init-run", str(source), *TINY_PPO, "--total-timesteps", "128"])
    assert progress_of(fork)["started_from"]["from_scratch"] is False
    description = read_friday13_policy(fork / "policy.npz").metadata.description
    assert "not from scratch" in description
    again = tmp_path / "again"
    load_script().main(["--run-dir", str(again), "--init-run", str(fork), *TINY_PPO, "--total-timesteps", "128"])
    assert progress_of(again)["started_from"]["from_scratch"] is False  # the lineage carries on


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--hidden-sizes", "8", "16"], "--init-run: {source}: its --hidden-sizes is [16, 16], this run's [8, 16]"),
        (["--activation", "relu"], "its --activation is 'tanh', this run's 'relu'"),
        (["--init-policy", "ppo-v1"], "--init-run and --init-policy both start the actor: give one"),
    ],
)
def test_a_fork_of_networks_of_another_shape_is_refused_before_anything_is_built(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], change: list[str], message: str
) -> None:
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source_run), *TINY_PPO, *change]
    assert message.format(source=source_run) in refusal(capsys, argv)
    assert not (tmp_path / "fork").exists()


def test_a_fork_of_a_folder_that_holds_no_run_is_refused(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    fork = ["--run-dir", str(tmp_path / "fork"), *TINY_PPO, "--init-run"]
    assert f"--init-run: {empty} holds no last.pt" in refusal(capsys, [*fork, str(empty)])
    other = Path(shutil.copytree(source_run, tmp_path / "best"))
    record = progress_of(other)
    record["script"] = "best_response.py"
    (other / "progress.json").write_text(json.dumps(record))
    assert "best is a best_response.py run, not a train_ppo.py run" in refusal(capsys, [*fork, str(other)])
    assert not (tmp_path / "fork").exists()


@pytest.mark.parametrize(
    "damaged",
    [
        "a string",
        {"run": "x", "timesteps": 5},
        {"run": "x", "timesteps": -1, "from_scratch": True},
        {"run": "x", "timesteps": 5, "from_scratch": 1},
        {"run": 7, "timesteps": 5, "from_scratch": True},
        {"run": "x", "timesteps": 5, "from_scratch": True, "checkpoint_sha256": "not hex"},
        {"run": "x", "timesteps": 5, "from_scratch": True, "return": {"reward": "win"}},
        {"run": "x", "timesteps": 5, "from_scratch": True, "other": 1},
    ],
)
def test_a_damaged_record_of_where_a_fork_started_is_refused_on_resume_and_as_a_source(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damaged: object
) -> None:
    """The record's ``started_from`` is what the export's description is made from: one no fork writes is named
    on ``--resume`` of the fork, and when the fork is itself the source of another."""
    fork = tmp_path / "fork"
    load_script().main(["--run-dir", str(fork), "--init-run", str(source_run), *TINY_PPO, "--total-timesteps", "128"])
    record = progress_of(fork)
    record["started_from"] = damaged
    (fork / "progress.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit, match=r"--resume: .*progress.json is damaged: started_from"):
        load_script().main(["--run-dir", str(fork), "--resume", "--total-timesteps", "256"])
    argv = ["--run-dir", str(tmp_path / "next"), "--init-run", str(fork), *TINY_PPO]
    assert "progress.json is damaged: started_from" in refusal(capsys, argv)


# -- defects a review found, each pinned ----------------------------------------------------------------
def test_a_game_under_way_keeps_its_snapshot_when_the_pool_rotates_and_is_credited_to_it(tmp_path: Path) -> None:
    """Pool ``[random, A, B]`` becomes ``[random, B, C]``: a game dealt against B goes on against B (its index moves
    with it) and its result is B's; one dealt against A (gone) goes on against the newest, C."""
    train = load_script()
    args = train.parse_args(["--run-dir", str(tmp_path / "unused"), *TINY_PPO, *PFSP[:2], "--opponents", "random"])
    tables = train.Tables(args, seed=0)
    tables.set_snapshots(["A", "B"], [tables.pool[0], tables.pool[0]])
    tables.learner[:2] = False
    tables.learner[:2, 0] = True
    tables.opponent[0], tables.opponent[1] = 2, 1  # table 0 against B, table 1 against A
    tables.set_snapshots(["B", "C"], [tables.pool[0], tables.pool[0]])
    assert tables.members == ["random", "B", "C"]
    assert (tables.opponent[0, 1:4] == 1).all() and (tables.opponent[1, 1:4] == 2).all()
    scores = np.array([[0, 5, 5, 5, 0, 0], [9, 1, 5, 5, 0, 0]])
    tables.record_results(np.array([0, 1]), np.array([4, 4]), scores)
    assert tables.results.state() == {"B": [1.0, 1.0], "C": [0.0, 1.0]}


def test_a_number_too_large_for_a_float_in_the_results_is_named_not_a_traceback() -> None:
    assert "pool_results['a']" in str(state_problem({"a": [1, 10**400]}))


def test_a_fork_resumes_after_its_source_is_gone(source_run: Path, tmp_path: Path) -> None:
    """A resumed fork has its own networks: its source is not read again (it may be moved or deleted)."""
    source = Path(shutil.copytree(source_run, tmp_path / "source"))
    fork = tmp_path / "fork"
    load_script().main(["--run-dir", str(fork), "--init-run", str(source), *TINY_PPO, "--total-timesteps", "128"])
    shutil.rmtree(source)
    load_script().main(["--run-dir", str(fork), "--resume", "--total-timesteps", "256"])
    assert progress_of(fork)["timesteps"] == 256


def test_the_fork_records_its_source_as_a_resolved_path(source_run: Path, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(source_run)
    fork = tmp_path / "fork"
    load_script().main(["--run-dir", str(fork), "--init-run", str(link), *TINY_PPO, "--total-timesteps", "128"])
    assert progress_of(fork)["started_from"]["run"] == str(source_run.resolve())


def test_a_source_that_changed_since_the_flags_were_checked_is_checked_again(source_run: Path, tmp_path: Path) -> None:
    """``start_from`` reads the source again: networks of another activation (the same shapes) are refused."""
    from friday13_training import run_fork
    from friday13_training.runs import RunError

    train = load_script()
    args = train.parse_args(["--run-dir", str(tmp_path / "fork"), *TINY_PPO, "--activation", "relu"])
    model = make_model(train, args)
    with pytest.raises(RunError, match="its --activation is 'tanh', this run's 'relu'"):
        run_fork.start_from(source_run, model, "cpu", train.fresh_progress(args), train.ADDED_LATER)


def test_a_best_response_run_recorded_before_its_script_was_is_refused_as_a_source(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(shutil.copytree(source_run, tmp_path / "source"))
    record = progress_of(source)
    del record["script"]
    (source / "progress.json").write_text(json.dumps(record))
    (source / "best_response.json").write_text("{}")
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source), *TINY_PPO]
    assert "is a best_response.py run, not a train_ppo.py run" in refusal(capsys, argv)


def test_a_run_recorded_before_the_later_arguments_is_a_source_with_the_values_it_was_trained_with(
    source_run: Path, tmp_path: Path
) -> None:
    """A record without ``actor`` or ``input_features`` was trained with a plain MLP reading the observation
    (``ADDED_LATER``), as ``--resume`` reads it."""
    source = Path(shutil.copytree(source_run, tmp_path / "source"))
    record = progress_of(source)
    for name in ("actor", "input_features", "pool_weighting", "pfsp_power", "init_run"):
        del record["args"][name]
    del record["pool_results"]
    record["args"]["pool_draw"] = "seat"
    (source / "progress.json").write_text(json.dumps(record))
    fork = tmp_path / "fork"
    load_script().main(["--run-dir", str(fork), "--init-run", str(source), *TINY_PPO, "--total-timesteps", "128"])
    assert progress_of(fork)["started_from"]["timesteps"] == 4096


def test_a_damaged_source_checkpoint_is_refused_before_the_run_folder_is_made(
    source_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = Path(shutil.copytree(source_run, tmp_path / "source"))
    (source / "last.pt").write_bytes(b"junk")
    argv = ["--run-dir", str(tmp_path / "fork"), "--init-run", str(source), *TINY_PPO]
    assert "last.pt is damaged or not a train_ppo.py checkpoint" in refusal(capsys, argv)
    assert not (tmp_path / "fork").exists()
