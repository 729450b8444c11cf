"""Defects a hostile review found in distill.py and its shared fit (0.27.0): a data file of kilobytes whose headers
claim terabytes ended in a MemoryError traceback, ``--games 1`` exported an untrained network and wrote NaN into
``summary.json``, a chunk whose spec is not an object crashed, the ensemble's cache was not checked as the docs say,
``--search-budget`` and the count flags had no upper bound, ``--weight-decay`` and ``--soft-temperature`` could turn
the fit into NaN, and a rerun under another ``--seed`` silently replaced the data recorded under the old one."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from friday13_env.core.options import MAX_GAMES
from friday13_env.friday13.agents.search import MAX_BUDGET
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout
from tests.scripts import load_training_script, refused

torch = pytest.importorskip("torch", reason="the training extra is not installed")
from friday13_training import imitation  # noqa: E402
from friday13_training.runs import RunError  # noqa: E402
from friday13_training.script_args import MAX_TORCH_THREADS  # noqa: E402

DECK = get_deck("standard")
TINY = [
    "--teacher", "search", "--games", "2", "--players", "3", "--search-budget", "50", "--workers", "1", "--epochs", "1",
    "--hidden-sizes", "8", "--eval-games", "0", "--dagger-rounds", "0", "--no-progress",
]  # fmt: skip
"""A search run at its smallest: its two games fit one chunk, which the tests write themselves (no game is played)."""


@pytest.fixture(scope="module")
def distill() -> ModuleType:
    return load_training_script("distill")


def decisions(games: list[int], scores: str = "values") -> dict[str, np.ndarray]:
    """Two decisions of each of ``games`` of the standard deck, the first two moves legal, the teacher's ``scores``
    (a chunk's values, the ensemble's logits) finite on them; a chunk's also has the teacher's moves."""
    rows = 2 * len(games)
    masks = np.zeros((rows, DECK.num_actions), dtype=np.int8)
    masks[:, :2] = 1
    filler = np.nan if scores == "values" else 0.0
    values = np.full((rows, DECK.num_actions), filler, dtype=np.float32)
    values[:, :2] = [0.0, -0.5]
    arrays = {
        "observations": np.zeros((rows, observation_layout(DECK).size), dtype=np.int16),
        "masks": masks,
        scores: values,
        "games": np.repeat(np.array(games, dtype=np.int64), 2),
    }
    if scores == "values":
        arrays["actions"] = np.zeros(rows, dtype=np.int64)
    return arrays


def npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def claiming(shape: tuple[int, ...], descr: str = "<i8") -> bytes:
    """A ``.npy`` member whose header claims ``shape`` and that holds 64 bytes of data."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": descr, "fortran_order": False, "shape": shape})
    return buffer.getvalue() + bytes(64)


def write_npz(path: Path, spec: Any, members: dict[str, bytes | np.ndarray]) -> None:
    """An ``.npz`` as ``np.savez_compressed`` writes one, with members given as arrays or as raw ``.npy`` bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, member in {"spec": np.array(json.dumps(spec)), **members}.items():
            archive.writestr(f"{name}.npy", member if isinstance(member, bytes) else npy(member))


def run_chunk(distill: ModuleType, tmp_path: Path, argv: list[str]) -> tuple[Any, Path]:
    """The run's first (here its only) teacher chunk job, and its ``--out-dir``."""
    out_dir = tmp_path / "run"
    args = distill.parse_args([*argv, "--out-dir", str(out_dir)])
    seeds = np.random.SeedSequence(args.seed).generate_state(args.games).tolist()
    [job] = distill.chunk_jobs(args, out_dir / "chunks", "teacher", seeds)
    return job, out_dir


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- 1. a data file whose headers claim terabytes, a zip bomb ---------------------------------------------------------
def test_a_chunk_claiming_terabytes_is_named_before_it_is_loaded(distill: ModuleType, tmp_path: Path) -> None:
    """A chunk of kilobytes whose ``games`` header claims 10**13 rows was a MemoryError traceback after np.load."""
    job, out_dir = run_chunk(distill, tmp_path, TINY)
    arrays: dict[str, bytes | np.ndarray] = dict(decisions(list(job.seeds)))
    arrays["games"] = claiming((10**13,))
    path = Path(job.path)
    write_npz(path, job.spec, arrays)
    with pytest.raises(distill.DataError, match=r"is damaged .*'games'.*delete it to record that chunk again"):
        distill.read_chunk(path)
    with pytest.raises(SystemExit, match=rf"error: {path} is damaged"):
        distill.main([*TINY, "--out-dir", str(out_dir)])
    assert not (out_dir / "policy.npz").exists() and not (out_dir / "student_0.npz").exists()


def test_a_chunk_inflating_past_what_its_games_can_hold_is_refused_uninflated(
    distill: ModuleType, tmp_path: Path
) -> None:
    """A few kilobytes of deflated zeros claiming 29 MB of observations, more than 10 games' decisions take."""
    job, _ = run_chunk(distill, tmp_path, TINY)
    arrays: dict[str, bytes | np.ndarray] = dict(decisions(list(job.seeds)))
    arrays["observations"] = np.zeros((100_000, observation_layout(DECK).size), dtype=np.int16)
    path = Path(job.path)
    write_npz(path, job.spec, arrays)
    assert path.stat().st_size < 200_000
    with pytest.raises(distill.DataError, match=r"is damaged \(.*bytes.*at most [\d,]+.*delete it to record"):
        distill.read_chunk(path)


def test_a_positions_cache_claiming_terabytes_is_recorded_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, spec = tmp_path / "positions.npz", {"seeds": [5, 6], "deck": "standard"}
    arrays: dict[str, bytes | np.ndarray] = dict(decisions([5, 6], "logits"))
    arrays["games"] = claiming((10**13,))
    write_npz(path, spec, arrays)
    assert imitation.read_dataset(path, spec) is None
    assert f"note: {path} is damaged (" in capsys.readouterr().out


# -- 2. no game to train on ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("teacher", ["search", "ensemble"])
def test_one_game_is_refused_before_any_game(
    distill: ModuleType, teacher: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--games 1``: its one game is held out, and the fit trained on nothing."""
    refused(capsys, distill.parse_args, ["--teacher", teacher, "--games", "1"], "argument --games: must be at least 2")


def test_the_split_keeps_a_game_to_train_on() -> None:
    games = np.repeat(np.array([7, 8]), 3)
    held_out = imitation.split_by_game(games, 0.99, seed=0)
    assert held_out.any() and not held_out.all()


def test_data_of_one_game_is_refused_before_the_fit_and_nothing_is_exported(
    distill: ModuleType, tmp_path: Path
) -> None:
    """Every row of one game (whatever the number of games played): nothing to train on, so no policy."""
    export = tmp_path / "export.npz"
    job, out_dir = run_chunk(distill, tmp_path, TINY)
    write_npz(Path(job.path), job.spec, dict(decisions([job.seeds[0]])))
    with pytest.raises(SystemExit, match=r"error: no game is left to train on.*--validation.*--games"):
        distill.main([*TINY, "--out-dir", str(out_dir), "--export", str(export)])
    assert not export.exists() and not (out_dir / "policy.npz").exists()
    assert not (out_dir / "student_0.npz").exists() and not (out_dir / "summary.json").exists()


def test_a_summary_with_a_nan_is_refused_and_nothing_is_written(distill: ModuleType, tmp_path: Path) -> None:
    args = distill.parse_args([*TINY, "--out-dir", str(tmp_path / "run")])
    (tmp_path / "run").mkdir()
    network = imitation.build_network([8], observation_layout(DECK).size, DECK.num_actions)
    scale = np.ones(observation_layout(DECK).size, dtype=np.float32)
    with pytest.raises(RunError, match=r"summary.*not a finite number"):
        imitation.write_outputs(network, {"agreement": float("nan")}, "a test", scale, args)
    assert not (tmp_path / "run" / "summary.json").exists() and not (tmp_path / "run" / "policy.npz").exists()


# -- 6. a spec that is not an object ---------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["a list", "no seeds", "seeds that are not ints", "no budget"])
def test_a_chunk_spec_that_is_not_a_chunks_is_named(distill: ModuleType, case: str, tmp_path: Path) -> None:
    job, _ = run_chunk(distill, tmp_path, TINY)
    spec = {
        "a list": [1, 2],
        "no seeds": {key: value for key, value in job.spec.items() if key != "seeds"},
        "seeds that are not ints": {**job.spec, "seeds": ["a", "b"]},
        "no budget": {key: value for key, value in job.spec.items() if key != "budget"},
    }[case]
    write_npz(Path(job.path), spec, dict(decisions(list(job.seeds))))
    with pytest.raises(distill.DataError, match=rf"{job.path} is damaged \(its spec.*delete it to record"):
        distill.is_recorded(job)


# -- 7. the ensemble's cache, checked as the docs say ----------------------------------------------------------------
def ensemble_damage() -> dict[str, dict[str, np.ndarray]]:
    good = decisions([5, 6], "logits")
    masks, logits = good["masks"].copy(), good["logits"].copy()
    no_move = masks.copy()
    no_move[1] = 0
    twos = masks * 2
    logits[0, 1] = np.nan
    return {
        "observations of another width": {"observations": good["observations"][:, :10]},
        "masks that are not 0 or 1": {"masks": twos},
        "a NaN logit of a legal move": {"logits": logits},
        "a row without a legal move": {"masks": no_move},
        "logits of another width": {"logits": good["logits"][:, :5]},
    }


@pytest.mark.parametrize("case", sorted(ensemble_damage()))
def test_a_damaged_positions_cache_is_recorded_again(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, spec = tmp_path / "positions.npz", {"seeds": [5, 6], "deck": "standard"}
    imitation.write_dataset(path, spec, decisions([5, 6], "logits"))
    assert imitation.read_dataset(path, spec) is not None
    imitation.write_dataset(path, spec, {**decisions([5, 6], "logits"), **ensemble_damage()[case]})
    assert imitation.read_dataset(path, spec) is None
    assert f"note: {path} is damaged (" in capsys.readouterr().out


# -- 9, 10, 11. bounds of the flags ----------------------------------------------------------------------------------
THREADS, COUNT = f"{MAX_TORCH_THREADS:,}", f"must be at least 1 and at most {MAX_GAMES:,}"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--teacher", "search", "--workers", "3000000000"], f"--workers: must be at least 1 and at most {THREADS}"),
        (["--teacher", "ensemble", "--workers", str(MAX_TORCH_THREADS + 1)], f"at most {MAX_TORCH_THREADS:,}"),
        (["--teacher", "search", "--games", str(10**12)], f"--games: must be at least 2 and at most {MAX_GAMES:,}"),
        (["--teacher", "ensemble", "--games", str(MAX_GAMES + 1)], f"at most {MAX_GAMES:,}"),
        (["--teacher", "search", "--dagger-games", str(MAX_GAMES + 1)], f"--dagger-games: {COUNT}"),
        (["--teacher", "ensemble", "--calibration-games", str(10**12)], f"--calibration-games: {COUNT}"),
        (["--teacher", "search", "--weight-decay", "1e300"], "--weight-decay: must be at least 0 and at most 1, got"),
    ],
)
def test_out_of_range_counts_and_rates_are_refused_before_any_game(
    distill: ModuleType, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    refused(capsys, distill.parse_args, argv, message)


def test_the_search_budget_is_the_one_the_agent_takes(
    distill: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A budget past the agent's was a traceback in the first game, after the data folder was made."""
    out_dir = tmp_path / "run"
    too_much = ["--teacher", "search", "--search-budget", str(MAX_BUDGET + 1), "--out-dir", str(out_dir)]
    refused(capsys, distill.main, too_much, f"argument --search-budget: must be at least 1 and at most {MAX_BUDGET:,}")
    assert not out_dir.exists()
    assert distill.parse_args(["--teacher", "search", "--search-budget", str(MAX_BUDGET)]).search_budget == MAX_BUDGET


def test_a_tiny_soft_temperature_gives_the_best_move_not_nan() -> None:
    """``--soft-temperature 1e-320``: z / temperature overflowed to inf, and inf - inf is NaN (after every game)."""
    values = np.array([[0.0, -0.5, -1.0, np.nan], [-0.25, 0.0, -0.25, np.nan], [0.0, 0.0, 0.0, np.nan]])
    masks = np.array([[1, 1, 1, 0], [1, 1, 1, 0], [1, 1, 1, 0]])
    for temperature in (1e-320, 1e-300, 1e-6):
        with np.errstate(invalid="raise"):
            soft = imitation.soft_targets(values, masks, temperature)
        np.testing.assert_allclose(soft, [[1, 0, 0, 0], [0, 1, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]], atol=1e-6)


# -- 12. a data directory of another --seed --------------------------------------------------------------------------
def test_a_data_directory_of_another_seed_is_refused_and_kept(distill: ModuleType, tmp_path: Path) -> None:
    job, out_dir = run_chunk(distill, tmp_path, TINY)  # --seed 0's games
    path = Path(job.path)
    write_npz(path, job.spec, dict(decisions(list(job.seeds))))
    before = digest(path)
    with pytest.raises(SystemExit, match=rf"error: {path} was recorded with the games of seeds .*another --seed"):
        distill.main([*TINY, "--out-dir", str(out_dir), "--seed", "1"])
    assert digest(path) == before and not (out_dir / "policy.npz").exists()


def test_a_part_full_last_chunk_is_still_played_again_whole(distill: ModuleType, tmp_path: Path) -> None:
    """The case the seeds may differ in: one run's games are the first of the other's (another ``--games``)."""
    args = distill.parse_args(TINY)
    write = distill.chunk_jobs(args, tmp_path, "teacher", [11, 12])[0]
    write_npz(Path(write.path), write.spec, dict(decisions([11, 12])))
    assert distill.is_recorded(write)
    assert not distill.is_recorded(distill.chunk_jobs(args, tmp_path, "teacher", [11, 12, 13])[0])
    assert not distill.is_recorded(distill.chunk_jobs(args, tmp_path, "teacher", [11])[0])
    with pytest.raises(distill.DataError, match=r"recorded with the games of seeds \[11, 12\], this run asks for"):
        distill.is_recorded(distill.chunk_jobs(args, tmp_path, "teacher", [21, 22])[0])
