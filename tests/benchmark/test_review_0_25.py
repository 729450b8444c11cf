"""Review of 0.25.0's benchmark. A user's agent that raises in ``act``, or calls ``sys.exit``, at the fingerprint
positions or in a game: a clear error naming the agent and what it raised, exit status 2 from the command, never a
traceback or a run that ends with status 0 and no result. A ratings file records how each of its agents played (its
fingerprint), and the leaderboard shows a rating only beside results of the same build."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from friday13_env.benchmark import leaderboard, ratings, runner
from friday13_env.benchmark.suite import get_suite
from tests.benchmark.helpers import friday13, small_suite, user_module

RESULTS = Path(__file__).resolve().parents[2] / "results" / "benchmark"

AGENTS = '''\
import sys

import numpy as np

answered = []


class RaisingAct:
    name = "raising-act"

    def act(self, observation):
        raise RuntimeError("lost its weights")


class ExitingAct:
    name = "exiting-act"

    def act(self, observation):
        sys.exit(0)


class UnshowableError(Exception):
    def __str__(self):
        raise RuntimeError("no text")


class RaisingUnshowable:
    name = "raising-unshowable"

    def act(self, observation):
        raise UnshowableError()


def exiting_factory(seed=None):
    sys.exit(0)


class RaisingInGame:
    """Plays legally at the fingerprint positions (its first 240 answers in this process: a factory is
    fingerprinted twice), then raises."""

    name = "raising-in-game"

    def act(self, observation):
        answered.append(1)
        if len(answered) > 240:
            raise KeyError("no such card")
        return int(np.flatnonzero(observation["action_mask"])[0])


class ExitingInGame(RaisingInGame):
    """Plays legally at the fingerprint positions, then calls ``sys.exit()`` (no status: the run's would be 0)."""

    name = "exiting-in-game"

    def act(self, observation):
        try:
            return super().act(observation)
        except KeyError:
            sys.exit()
'''


@pytest.fixture
def benchmark_extra() -> None:
    """Skips where scipy and openskill (the benchmark extra: scores and ratings) are not installed."""
    pytest.importorskip("scipy")
    pytest.importorskip("openskill")


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module of user agents in a folder on ``sys.path``, forgotten afterwards; yields its name."""
    yield from user_module("bench_raising_agents", AGENTS, tmp_path, monkeypatch)


REFUSALS = {
    "RaisingAct": "agent 'raising-act' raised RuntimeError: lost its weights at a fingerprint position",
    "ExitingAct": "agent 'exiting-act' raised SystemExit: 0 at a fingerprint position",
    "RaisingUnshowable": "agent 'raising-unshowable' raised UnshowableError (whose message cannot be shown) at",
    "exiting_factory": "agent factory 'bench_raising_agents:exiting_factory' raised SystemExit: 0",
}
"""Each failing agent of ``AGENTS`` and the error that names it."""


@pytest.mark.parametrize(("agent", "message"), REFUSALS.items())
def test_an_agent_that_raises_at_the_fingerprint_positions_is_refused_with_its_error(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, message: str
) -> None:
    out = tmp_path / "out.json"
    argv = ["benchmark", "--agent", f"{agents}:{agent}", "--suite", "card-4p-quick", "--out", str(out)]
    code, printed = friday13([*argv, "--no-progress"])
    assert code == 2
    assert message in capsys.readouterr().err
    assert printed == "" and list(tmp_path.glob("out*")) == []
    with pytest.raises(ValueError, match=re.escape(message)):  # the Python API: a ValueError, before any game
        runner.prepare(f"{agents}:{agent}", small_suite(), workers=1)


def test_an_agent_that_raises_in_a_game_stops_the_run_with_its_error(
    benchmark_extra: None, agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    argv = ["benchmark", "--agent", f"{agents}:RaisingInGame", "--suite", "card-4p-quick", "--out", str(out)]
    code, _ = friday13([*argv, "--no-progress", "--workers", "1"])
    assert code == 2
    error = capsys.readouterr().err
    assert "agent 'raising-in-game' raised KeyError: 'no such card'" in error, error
    assert not out.exists()


# -- a rating belongs to the build of the agent that played its games --------------------------------------------
THREE = ["random", "cautious", "majority"]


def test_a_ratings_run_records_how_each_of_its_agents_plays(benchmark_extra: None) -> None:
    """Each agent's behaviour fingerprint (the benchmark's, at the standard deck), so a rating can be matched to the
    build of the agent whose results it sits beside."""
    rated = ratings.run_ratings(THREE, 2, seed=1, workers=1)
    anchors = get_suite("card-4p").anchors
    assert rated["fingerprints"] == {name: anchors[name] for name in THREE}


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("fingerprints"), r"it records no fingerprints \(how each agent played\): run"),
        (lambda d: d["fingerprints"].pop("random"), r"its fingerprints must name exactly its agents"),
        (lambda d: d["fingerprints"].update(random="not-hex"), r"its fingerprint of random must be 16 hex digits"),
    ],
)
def test_a_ratings_file_without_its_agents_fingerprints_is_refused(
    benchmark_extra: None, tmp_path: Path, edit: Any, message: str
) -> None:
    data = ratings.run_ratings(THREE, 2, seed=1, workers=1)
    edit(data)
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=message):
        ratings.read_ratings(path)


def test_the_leaderboard_shows_no_rating_beside_a_result_of_another_build(
    benchmark_extra: None, tmp_path: Path
) -> None:
    """A rating whose games were played by another build of the agent (its fingerprint in the ratings file is not
    its result's) is a dash in the agent's row, and a note names the agent; the others are shown."""
    results = Path(shutil.copytree(RESULTS, tmp_path / "results"))
    data = json.loads((results / leaderboard.RATINGS_FILE).read_text())
    data["fingerprints"]["ppo-v4"] = "0" * 16
    (results / leaderboard.RATINGS_FILE).write_text(json.dumps(data))
    page = leaderboard.generate(results)
    rows: dict[str, str] = {}
    for line in page.splitlines():  # the main table's rows: the first of each agent's on the page
        if line.startswith("| `"):
            rows.setdefault(line.split(" | ")[0], line)
    rating = data["ratings"]["ppo-v4"]
    assert f"{rating['mu']:.1f} ± {rating['sigma']:.1f}" not in rows["| `ppo-v4`"]
    other = data["ratings"]["ppo-v3"]
    assert f"{other['mu']:.1f} ± {other['sigma']:.1f}" in rows["| `ppo-v3`"]
    assert "rated as another build than the one in its results: `ppo-v4`" in page
    assert "| `ppo-v4` (another build than its results') |" in page  # the ratings run's own table says so too
    assert "| `ppo-v3` |" in page


@pytest.mark.parametrize("agent", ["RaisingAct", "exiting_factory"])
def test_ratings_refuse_an_agent_that_raises_before_any_game(
    agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str
) -> None:
    out = tmp_path / "ratings.json"
    argv = ["ratings", "--agents", "random", "cautious", f"{agents}:{agent}", "--tables", "1", "--out", str(out)]
    code, _ = friday13([*argv, "--workers", "1"])
    assert code == 2
    assert REFUSALS[agent] in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("RaisingInGame", "agent 'raising-in-game' raised KeyError: 'no such card' in a game"),
        ("ExitingInGame", "agent 'exiting-in-game' raised SystemExit in a game"),
    ],
)
def test_ratings_stop_with_the_error_of_an_agent_that_raises_in_a_game(
    benchmark_extra: None, agents: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, message: str
) -> None:
    out = tmp_path / "ratings.json"
    argv = ["ratings", "--agents", "random", "cautious", f"{agents}:{agent}", "--tables", "1", "--out", str(out)]
    code, _ = friday13([*argv, "--workers", "1"])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
