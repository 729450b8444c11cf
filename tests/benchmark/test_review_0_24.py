"""Defects a second hostile review of the benchmark and the leaderboard found (0.24.0), each pinned here: an agent
object named like a checkpoint or a factory (whose row would give a command that plays another agent), specs the
page refuses accepted by a run that then wrote them, replays in the results folder breaking the page, fields no run
writes kept, a page written over a file of another kind, and solo replays of two agents under one name."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from friday13_env.benchmark import leaderboard, ratings, runner
from friday13_env.benchmark.suite import get_suite
from friday13_env.friday13.agents import REGISTRY
from tests.benchmark.helpers import friday13, made_result, small_suite
from tests.benchmark.test_leaderboard import write
from tests.benchmark.test_review_0_20 import FirstLegal

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

QUICK = get_suite("card-4p-quick")


@pytest.mark.parametrize("name", ["friday13_env/friday/zoo/dagger-v1.npz", "mine.npz", "friday13_env.agents:make"])
def test_an_agent_object_named_like_a_checkpoint_or_a_factory_is_refused(tmp_path: Path, name: str) -> None:
    """Its row showed ``friday13 benchmark --agent NAME``, a command that plays the checkpoint or factory instead."""
    out = tmp_path / "result.json"
    with pytest.raises(ValueError, match="names an agent this package builds from a file or a factory"):
        runner.run_benchmark(FirstLegal(name), small_suite(deals=2), workers=1, out=out)
    assert not out.exists()


@pytest.mark.parametrize("where", ["a|b/policy.npz", "x" * 200 + ".npz"])
def test_a_spec_the_page_refuses_is_refused_before_any_game(tmp_path: Path, where: str) -> None:
    """A run wrote it, and that one file then made the whole leaderboard fail."""
    checkpoint = tmp_path / where
    checkpoint.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REGISTRY.policy_path("ppo-v1"), checkpoint)
    with pytest.raises(ValueError, match="must be 1-200 characters without"):
        runner.check_agent(small_suite(deals=2), str(checkpoint), 1)
    with pytest.raises(ValueError, match="must be 1-200 characters without"):
        ratings.check_ratings(["random", "cautious", str(checkpoint)])


def test_the_page_skips_folders_that_are_no_suites_results(tmp_path: Path) -> None:
    """Replays saved in ``results/benchmark/replays`` were read as result files: the page could not be made."""
    results = tmp_path / "results"
    write(results, made_result(QUICK, "random", seed=1))
    (results / "replays").mkdir()
    (results / "replays" / "level1-game0.json").write_text("{}")
    assert set(leaderboard.load_results(results)) == {QUICK.id}
    write(results, made_result(QUICK, "cautious", seed=2), folder="card-4p-quick-v0")  # another version: refused
    with pytest.raises(ValueError, match="card-4p-quick-v0"):
        leaderboard.load_results(results)


def test_evaluate_saves_no_replays_in_a_suites_results_folder(tmp_path: Path) -> None:
    folder = tmp_path / "results" / "benchmark" / QUICK.id
    folder.mkdir(parents=True)
    code, _ = friday13(["evaluate", "--focus", "random", "--vs", "cautious", "--games", "4", "--replays", str(folder)])
    assert code == 2 and not list(folder.iterdir())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda data: data.__setitem__("junk", [0] * 10), r"holds fields a result does not: \['junk'\]"),
        (lambda data: data["provenance"].__setitem__("junk", 1), r"its provenance holds fields .*\['junk'\]"),
        (lambda data: data["agent"].__setitem__("junk", 1), r"its agent holds fields .*\['junk'\]"),
        (lambda data: data["provenance"].__setitem__("command", "x" * 20_000), "its provenance's command"),
    ],
)
def test_fields_no_run_writes_are_refused(tmp_path: Path, edit: Any, message: str) -> None:
    """They were read and kept until the page was written: a folder of such files filled the memory."""
    results = tmp_path / "results"
    data = made_result(QUICK, "random", seed=1)
    edit(data)
    write(results, data)
    with pytest.raises(ValueError, match=message):
        leaderboard.load_results(results)


def test_the_page_is_written_over_a_page_only(tmp_path: Path) -> None:
    results = tmp_path / "results"
    write(results, made_result(QUICK, "random", seed=1))
    other = tmp_path / "policy.npz"
    other.write_bytes(b"PK\x03\x04 a checkpoint")
    code, _ = friday13(["leaderboard", "--results", str(results), "--out", str(other)])
    assert code == 2 and other.read_bytes() == b"PK\x03\x04 a checkpoint"
    page = tmp_path / "leaderboard.md"
    assert friday13(["leaderboard", "--results", str(results), "--out", str(page)])[0] == 0
    assert friday13(["leaderboard", "--results", str(results), "--out", str(page)])[0] == 0  # its own page: replaced


def test_solo_replays_of_two_agents_keep_both(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    for agent in ("random", "dagger-v1"):
        out = tmp_path / f"{agent}.json"
        argv = ["benchmark", "--agent", agent, "--suite", "friday-levels", "--split", "dev", "--out", str(out)]
        assert friday13([*argv, "--replays", str(replays), "--replay-deals", "1"])[0] == 0
    names = sorted(path.name for path in replays.iterdir())
    expected = [f"dev-{agent}-level{level}-game0.json" for agent in ("random", "dagger-v1") for level in range(1, 5)]
    assert names == sorted(expected)
