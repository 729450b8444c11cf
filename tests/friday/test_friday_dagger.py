"""DAgger's labelled games (friday13_training/friday_dagger.py) and the sparse actor of training/train_friday.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from friday13_env.friday.actions import ACTIVATE
from friday13_env.friday.agents import load, make
from friday13_env.friday.encoding import encode
from friday13_env.friday.engine import action_mask
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday.evaluation import agent_seed
from tests.scripts import load_training_script as load_script

pytest.importorskip("torch", reason="the training extra is not installed")
from friday13_training.friday_dagger import GameTask, LabelledGames, play_labelled_game

TEACHER = "heuristic:samples=2"


def recorded_game(
    level: int, seed: int, mover: str
) -> tuple[list[np.ndarray], list[np.ndarray], list[int], tuple[bool, int]]:
    """The observations, masks and teacher's moves at every decision with more than one legal move, and the result
    (won, score), of the game that ``mover`` (an agent spec) plays, the teacher (``TEACHER``, seeded as a task seeds it:
    from its own key of the game's seed, never with the deal's) asked at each of those decisions (and only there: forced
    moves do not draw from its generator)."""
    env = FridayEnv(level=level)
    teacher, player = make(TEACHER, seed=agent_seed(seed)), make(mover, seed=seed)
    observation, info = env.reset(seed=seed)
    observations, masks, labels = [], [], []
    done = False
    while not done:
        view = observation_dict(observation, info)
        move = int(np.flatnonzero(info["action_mask"])[0])
        if info["action_mask"].sum() > 1:
            observations.append(observation)
            masks.append(info["action_mask"].astype(bool))
            labels.append(teacher.act(view))
            move = labels[-1] if mover == TEACHER else player.act(view)
        observation, _, done, _, info = env.step(move)
    return observations, masks, labels, (bool(info["won"]), int(info["score"]))


def test_a_teacher_game_stores_every_real_decision_and_its_observation_exactly() -> None:
    game = play_labelled_game(GameTask(level=2, seed=11, teacher=TEACHER, student="", beta=1.0))
    observations, masks, labels, result = recorded_game(2, 11, TEACHER)
    rows = np.arange(len(game))
    assert len(game) == len(labels) > 20
    np.testing.assert_array_equal(game.dense(rows), np.array(observations))
    np.testing.assert_array_equal(game.legal(rows), np.array(masks))
    assert game.actions.tolist() == labels
    assert game.student_share.tolist() == [0.0] and game.levels.tolist() == [2]
    assert (bool(game.won[0]), int(game.scores[0])) == result


def test_a_student_game_is_the_students_moves_with_the_teachers_labels(tmp_path: Path) -> None:
    student = tmp_path / "student.npz"
    train = load_script("train_friday")
    actor = train.SparseMLP([16], "relu")
    train.save_sparse_mlp(actor, student, "test", {})
    game = play_labelled_game(GameTask(level=1, seed=5, teacher=TEACHER, student=str(student), beta=0.0))
    observations, _, labels, result = recorded_game(1, 5, str(student))
    assert game.student_share.tolist() == [1.0] and (bool(game.won[0]), int(game.scores[0])) == result
    np.testing.assert_array_equal(game.dense(np.arange(len(game))), np.array(observations))
    assert game.actions.tolist() == labels
    mixed = play_labelled_game(GameTask(level=1, seed=5, teacher=TEACHER, student=str(student), beta=0.5))
    assert 0.3 < mixed.student_share[0] < 0.7


def test_games_concatenate_with_distinct_game_numbers_and_the_same_rows() -> None:
    parts = [play_labelled_game(GameTask(level, 20 + level, TEACHER, "", 1.0)) for level in (1, 3)]
    both = LabelledGames.concatenate(parts)
    assert len(both) == len(parts[0]) + len(parts[1])
    assert both.levels.tolist() == [1, 3] and both.won.dtype == bool
    assert set(both.games[: len(parts[0])]) == {0} and set(both.games[len(parts[0]) :]) == {1}
    rows = np.arange(len(parts[0]), len(both))
    np.testing.assert_array_equal(both.dense(rows), parts[1].dense(np.arange(len(parts[1]))))
    np.testing.assert_array_equal(both.legal(rows), parts[1].legal(np.arange(len(parts[1]))))


def test_the_sparse_actor_and_its_numpy_export_compute_the_same_logits(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    train = load_script("train_friday")
    torch.manual_seed(0)
    actor = train.SparseMLP([32, 16], "tanh")
    path = tmp_path / "student.npz"
    train.save_sparse_mlp(actor, path, "test", {})
    game = play_labelled_game(GameTask(level=4, seed=2, teacher=TEACHER, student="", beta=1.0))
    rows = np.arange(len(game))
    with torch.no_grad():
        logits = actor(*train.sparse_batch(game, rows, game.starts)[:3]).numpy()
    policy = load(path).policy
    expected = np.array([policy.logits(observation) for observation in game.dense(rows)])
    np.testing.assert_allclose(logits, expected, atol=1e-5)


def test_fitting_raises_the_agreement_with_the_teacher() -> None:
    torch = pytest.importorskip("torch")
    train = load_script("train_friday")
    torch.manual_seed(0)
    data = LabelledGames.concatenate([play_labelled_game(GameTask(1, seed, TEACHER, "", 1.0)) for seed in range(3)])
    actor = train.SparseMLP([64], "relu")
    optimizer = torch.optim.Adam(actor.parameters(), lr=1e-2)
    before = train.agreement(actor, data)
    args = train.Args(distill_batch_size=128, distill_augment=False)  # fit the games as played
    train.fit_actor(actor, optimizer, data, args, np.random.default_rng(0), epochs=30, learning_rate=3e-3)
    assert optimizer.param_groups[0]["lr"] == 3e-3
    assert train.agreement(actor, data) > max(0.9, before + 0.3)


def test_a_reordered_table_is_the_observation_and_mask_of_the_reordered_position() -> None:
    """Augmentation is sound: reordering the slot rows of an observation, the legal mask and the teacher's move
    gives exactly what the engine encodes for the same position with its table cards in that order."""
    train = load_script("train_friday")
    env, player = FridayEnv(level=1), make(TEACHER, seed=0)
    observation, info = env.reset(seed=4)
    checked = 0
    rng = np.random.default_rng(0)
    while checked < 25:
        state = env.state
        assert state is not None
        view = observation_dict(observation, info)
        move = player.act(view)
        if state.fight is not None and len(state.fight.table) >= 3 and info["action_mask"].sum() > 1:
            size = len(state.fight.table)
            new = train.random_slot_orders(np.array([size]), rng)
            assert sorted(new[0, :size]) == list(range(size)) and new[0, size:].tolist() == list(range(size, 59))
            moved = state.copy()
            assert moved.fight is not None
            for old, slot in enumerate(state.fight.table):
                moved.fight.table[new[0, old]] = slot.copy()
            if moved.pending is not None:
                moved.pending.source = int(new[0, moved.pending.source])
            columns = np.flatnonzero(observation)
            got_columns, got_masks, got_actions = train.reorder_slots(
                columns, np.zeros(len(columns), dtype=np.int64), info["action_mask"][None].astype(bool),
                np.array([move]), new,
            )  # fmt: skip
            got = np.zeros_like(observation)
            got[got_columns] = observation[columns]
            np.testing.assert_array_equal(got, encode(moved))
            np.testing.assert_array_equal(got_masks[0], action_mask(moved).astype(bool))
            assert action_mask(moved)[got_actions[0]]
            assert (got_actions[0] == move) == (
                move < ACTIVATE or new[0, (move - ACTIVATE) % 59] == (move - ACTIVATE) % 59
            )
            checked += 1
        observation, _, done, _, info = env.step(move)
        if done:
            observation, info = env.reset(seed=int(rng.integers(1000)))


def small_run_flags(run_dir: Path) -> list[str]:
    """A run of stage 1 only, small enough for a test: two level-1 games per round, a tiny network."""
    return [
        "--run-dir", str(run_dir), "--teacher", TEACHER, "--distill-games", "2", "--workers", "1",
        "--hidden-sizes", "16", "--eval-every", "0", "--no-progress", "--levels", "1",
    ]  # fmt: skip


def test_resuming_with_more_rounds_keeps_the_games_and_fits_again_at_the_end(tmp_path: Path) -> None:
    train = load_script("train_friday")
    run_dir = tmp_path / "run"
    flags = small_run_flags(run_dir)
    train.main([*flags, "--distill-iterations", "1"])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert len(progress["distill"]) == 1 and progress["distill_final"]["after_rounds"] == 1
    first_games = (run_dir / "distill" / "games_00.npz").read_bytes()
    train.main([*flags, "--distill-iterations", "1", "--resume"])  # finished: nothing is redone
    assert json.loads((run_dir / "progress.json").read_text()) == progress
    train.main([*flags, "--distill-iterations", "2", "--resume"])
    progress = json.loads((run_dir / "progress.json").read_text())
    assert [point["iteration"] for point in progress["distill"]] == [0, 1]
    assert progress["distill"][1]["student_share"] > 0 and progress["distill_final"]["after_rounds"] == 2
    assert (run_dir / "distill" / "games_00.npz").read_bytes() == first_games
    assert (run_dir / "policy.npz").read_bytes() == (run_dir / "distill" / "final.npz").read_bytes()
    straight = tmp_path / "straight"  # the same two rounds in one go: the same games and the same student
    train.main([*flags, "--run-dir", str(straight), "--distill-iterations", "2"])
    for name in ("games_00.npz", "games_01.npz"):
        assert (straight / "distill" / name).read_bytes() == (run_dir / "distill" / name).read_bytes()
    assert load(straight / "policy.npz").policy.fingerprint() == load(run_dir / "policy.npz").policy.fingerprint()


def test_a_training_batch_with_shuffled_tables_is_the_reordered_observations_masks_and_moves() -> None:
    """``sparse_batch`` with a generator counts each table from the observation and reorders it as
    ``reorder_slots`` does: densified, its batch equals the dense observations with their slot rows moved."""
    torch = pytest.importorskip("torch")
    train = load_script("train_friday")
    data = LabelledGames.concatenate(
        [play_labelled_game(GameTask(level, 30 + level, TEACHER, "", 1.0)) for level in (1, 4)]
    )
    rows = np.arange(len(data))
    dense, legal = data.dense(rows), data.legal(rows)
    slots = dense[:, train.SLOTS_START : train.SLOTS_START + train.NUM_SLOTS * train.SLOT_FEATURES]
    present = slots.reshape(len(rows), train.NUM_SLOTS, train.SLOT_FEATURES)[:, :, 0].sum(axis=1).astype(int)
    assert present.max() >= 4
    new = train.random_slot_orders(present, np.random.default_rng(7))
    columns, values, offsets, masks, actions = train.sparse_batch(data, rows, data.starts, np.random.default_rng(7))
    got = np.zeros_like(dense)
    owners = np.repeat(rows, np.diff(np.append(offsets.numpy(), len(columns))))
    got[owners, columns.numpy()] = values.numpy()
    expected = dense.copy()
    block = expected[:, train.SLOTS_START : train.SLOTS_START + train.NUM_SLOTS * train.SLOT_FEATURES]
    moved = np.zeros_like(block.reshape(len(rows), train.NUM_SLOTS, train.SLOT_FEATURES))
    moved[rows[:, None], new] = block.reshape(moved.shape)
    block[:] = moved.reshape(block.shape)
    np.testing.assert_array_equal(got, expected)
    for first in train.SLOT_ACTIONS:
        np.testing.assert_array_equal(masks.numpy()[rows[:, None], first + new], legal[:, first : first + 59])
    assert torch.all(masks[torch.arange(len(rows)), actions])


def test_a_resume_completes_a_half_saved_round_and_refuses_changed_hyperparameters_or_rounds(tmp_path: Path) -> None:
    import torch

    train = load_script("train_friday")
    run_dir = tmp_path / "run"
    flags = small_run_flags(run_dir)
    train.main([*flags, "--distill-iterations", "2"])
    with pytest.raises(SystemExit, match=r"hyperparameters; these differ: --distill-games: the run has 2"):
        train.main([*flags, "--distill-iterations", "3", "--resume", "--distill-games", "3"])
    with pytest.raises(SystemExit, match="has played 2 rounds; --distill-iterations cannot be fewer"):
        train.main([*flags, "--distill-iterations", "1", "--resume"])
    progress_file = run_dir / "progress.json"
    whole = json.loads(progress_file.read_text())
    progress = {**whole, "distill": whole["distill"][:1]}  # as if it stopped after round.pt, before progress.json
    progress_file.write_text(json.dumps(progress))
    train.main([*flags, "--distill-iterations", "2", "--resume"])  # round.pt brings round 2's record back
    assert json.loads(progress_file.read_text())["distill"] == whole["distill"]
    round_file = run_dir / "distill" / "round.pt"
    state = torch.load(round_file, weights_only=True)
    torch.save({**state, "rounds": 1}, round_file)  # a round behind progress.json: not of the same run
    with pytest.raises(SystemExit, match=r"round.pt holds the student after round 1, progress.json records 2"):
        train.main([*flags, "--distill-iterations", "3", "--resume"])
    round_file.write_bytes(b"not torch")
    with pytest.raises(SystemExit, match=r"round.pt is missing, damaged or of another network"):
        train.main([*flags, "--distill-iterations", "3", "--resume"])


def test_a_run_can_start_from_a_policy_whose_agreement_round_zero_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--distill-init``: the student of round 0 is the given policy (its agreement with the round's labels is
    recorded before the fit), and a policy of another network or no policy at all is refused before any game."""
    train = load_script("train_friday")
    first = tmp_path / "first"
    train.main([*small_run_flags(first), "--distill-iterations", "1"])
    started = tmp_path / "started"
    train.main([*small_run_flags(started), "--distill-iterations", "1", "--distill-init", str(first / "policy.npz")])
    round_zero = json.loads((started / "progress.json").read_text())["distill"][0]
    games = train.read_games(started / "distill" / "games_00.npz")
    student = load(first / "policy.npz")
    rows = np.arange(len(games))
    moves = [
        student.act({"observation": obs, "action_mask": mask})
        for obs, mask in zip(games.dense(rows), games.legal(rows), strict=True)
    ]
    assert round_zero["student_share"] == 0.0  # round 0 is the teacher's games
    assert round_zero["agreement_before_fit"] == round(float(np.mean(np.array(moves) == games.actions)), 4)
    fresh = json.loads((first / "progress.json").read_text())["distill"][0]
    assert fresh["agreement_before_fit"] is None
    capsys.readouterr()
    with pytest.raises(SystemExit):
        train.main(
            [*small_run_flags(tmp_path / "x"), "--hidden-sizes", "8", "--distill-init", str(first / "policy.npz")]
        )
    assert "does not fit this run's network (hidden_sizes: policy [16] vs run [8])" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        train.main([*small_run_flags(tmp_path / "y"), "--distill-init", "nowhere.npz"])
    error = capsys.readouterr().err
    assert "--distill-init nowhere.npz: 'nowhere.npz' is neither a zoo policy ['dagger-ppo-v1', 'dagger-v1']" in error
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
