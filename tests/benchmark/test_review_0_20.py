"""Defects a hostile review of the benchmark and the leaderboard found (0.20.0), each pinned here.

A result is cited by its numbers and its agent's name: a file whose interval its rows do not give, an agent object
filed under a registered agent's name, a count no run makes, text that drives the terminal, a ``--out`` that would
replace another kind of file, a boolean or a float where a count goes. Each is refused with a message naming the
problem, before any game is played where a run is involved.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.benchmark import leaderboard, runner
from friday13_env.benchmark.suite import get_suite
from friday13_env.friday13.agents import REGISTRY
from tests.benchmark.helpers import friday13, made_result, small_suite
from tests.benchmark.test_leaderboard import ratings_edited, write

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CARD_4P = get_suite("card-4p")
QUICK = get_suite("card-4p-quick")
REPO = Path(__file__).resolve().parents[2]
REGISTERED_NAME = r"has the name of (an anchor|an agent this package builds).*give it another name"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    write(folder, made_result(QUICK, "random", seed=1))
    return folder


def refused(results: Path, data: dict[str, Any], message: str, name: str | None = None) -> str:
    path = write(results, data, folder=QUICK.id if data["suite"]["id"] != CARD_4P.id else None, name=name)
    with pytest.raises(ValueError, match=message) as error:
        leaderboard.load_results(results)
    assert str(path) in str(error.value) or repr(str(path)) in str(error.value)
    return str(error.value)


def with_interval(data: dict[str, Any], name: str, **ends: Any) -> dict[str, Any]:
    normalised = data["normalised"]
    return {**data, "normalised": {**normalised, name: {**normalised[name], **ends}}}


@pytest.mark.parametrize("name", ["iqm", "mean"])
def test_an_aggregate_interval_its_rows_do_not_give_is_refused(results: Path, name: str) -> None:
    """The aggregate's interval is the seeded bootstrap of the file's rows: one narrowed around the value, widened,
    or dropped (printed as a bare value) is refused; the file as the run wrote it is read."""
    data = made_result(CARD_4P, "x", seed=4)
    value = data["normalised"][name]["value"]
    write(results, data)
    leaderboard.load_results(results)
    for ends in ({"low": value - 1e-4, "high": value + 1e-4}, {"low": -5.0, "high": 1e300}):
        refused(results, with_interval(data, name, **ends), rf"its normalised {name}'s interval is not what its rows")
    refused(results, with_interval(data, name, low=None, high=None), rf"its normalised {name}'s interval is not")


class FirstLegal:
    """The docs' first user agent: the lowest legal action."""

    def __init__(self, name: str) -> None:
        self.name = name

    def act(self, observation: dict[str, Any]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ppo-v4", REGISTERED_NAME),
        ("search:budget=5", REGISTERED_NAME),
        ("cautious", REGISTERED_NAME),
        ("a|b", r"must be 1-200 characters without"),
        ("", r"must be 1-200 characters without"),
    ],
)
def test_an_agent_object_is_not_filed_under_a_name_the_page_cannot_give_it(
    tmp_path: Path, name: str, message: str
) -> None:
    """An object named like a registered agent or zoo policy would be published as that agent, with a command that
    plays another; a name the page refuses would be found out only after every game. Both fail before the first."""
    out = tmp_path / "result.json"
    with pytest.raises(ValueError, match=message):
        runner.run_benchmark(FirstLegal(name), small_suite(deals=2), workers=1, out=out)
    assert not out.exists() and not runner.partial_path(out).exists()


def test_an_agent_objects_row_names_no_command_that_plays_another_agent(results: Path) -> None:
    """A result of an agent object (no registered name, no factory, no checkpoint) cannot be reproduced with
    ``friday13 benchmark --agent NAME``: the row says so instead of printing a command that fails."""
    write(results, made_result(QUICK, "my-agent", seed=5))
    page = leaderboard.generate(results)
    row = next(line for line in page.splitlines() if line.startswith("| `my-agent` |"))
    assert "friday13 benchmark --agent my-agent" not in row and "an agent object" in row
    assert "`friday13 benchmark --agent random --suite card-4p-quick`" in page


def test_a_registered_agents_result_must_be_that_agent_as_this_package_plays_it(results: Path) -> None:
    """A file that names a registered agent or a zoo policy must carry its fingerprint here (and the zoo file's hash):
    another agent's games filed under ``ppo-v4`` are refused, the real ones read."""
    data = made_result(QUICK, "ppo-v4", seed=6)
    write(results, data)
    leaderboard.load_results(results)
    agent = data["agent"]
    refused(results, {**data, "agent": {**agent, "fingerprint": "0123456789abcdef"}}, r"fingerprint .* not how ppo-v4")
    refused(results, {**data, "agent": {**agent, "checkpoint_sha256": "0" * 64}}, r"not the checkpoint .*ppo-v4")
    refused(results, {**data, "agent": {**agent, "checkpoint_sha256": None}}, r"not the checkpoint .*ppo-v4")
    endgame = made_result(QUICK, "endgame", seed=7)
    refused(results, {**endgame, "agent": {**endgame["agent"], "fingerprint": "0" * 16}}, r"not how endgame plays")


@pytest.mark.parametrize(
    ("cost", "provenance", "message"),
    [
        ({"decisions": 10**39}, {}, r"its cost's decisions must be a count"),
        ({"ms_per_move": 1e308}, {}, r"its cost per move must be a number of milliseconds"),
        ({}, {"elapsed_s": 1e308}, r"its provenance's elapsed seconds"),
        ({}, {"workers": 10**39}, r"its provenance's workers must be a count of 1"),
    ],
)
def test_counts_and_durations_no_run_makes_are_refused(
    results: Path, cost: dict[str, Any], provenance: dict[str, Any], message: str
) -> None:
    """The page prints these: a 40-digit worker count or a 309-digit duration is no run's, and is refused."""
    data = made_result(QUICK, "x", seed=8)
    data = {**data, "cost": {**data["cost"], **cost}, "provenance": {**data["provenance"], **provenance}}
    refused(results, data, message)


def test_control_characters_from_a_file_never_reach_the_terminal(results: Path) -> None:
    """A suite id or a file name holding escape sequences is shown escaped in the error, never raw."""
    data = made_result(QUICK, "x", seed=9)
    data = {**data, "suite": {**data["suite"], "id": "\x1b]0;pwned\x07\x1b[2J"}}
    message = refused(results, data, r"is not one this package ships", name="zz.json")
    assert "\x1b" not in message and "\x07" not in message
    (results / QUICK.id / "zz.json").unlink()
    write(results, made_result(QUICK, "x", seed=9), name="\x1b[2Jx.json")
    named = r"result file 'card-4p-quick-v1/\\x1b\[2Jx.json''s name holds control characters"
    with pytest.raises(ValueError, match=named) as error:
        leaderboard.load_results(results)
    assert "\x1b" not in str(error.value)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: {**d, "format_version": True}, r"has format version True"),
        (lambda d: {**d, "suite": {**d["suite"], "version": True}}, r"its suite name and version disagree"),
        (
            lambda d: {**d, "cells": [{**d["cells"][0], "deals": float(d["cells"][0]["deals"])}, *d["cells"][1:]]},
            r"its cells are not what its rows give",
        ),
    ],
)
def test_a_boolean_or_a_float_is_not_a_count(results: Path, edit: Any, message: str) -> None:
    """``True == 1`` and ``40.0 == 40`` in Python, not in a result: a header or cell count must be an int."""
    refused(results, edit(made_result(QUICK, "x", seed=10)), message)


def test_a_ratings_file_with_a_negative_seed_is_refused(results: Path) -> None:
    """``friday13 ratings --seed`` takes no negative seed, so no ratings file holds one."""
    (results / leaderboard.RATINGS_FILE).write_text(json.dumps(ratings_edited(lambda d: d.update(seed=-1))))
    with pytest.raises(ValueError, match=r"its table count and seed must be those of its games"):
        leaderboard.generate(results)


def test_benchmark_out_never_replaces_a_file_that_is_no_result(tmp_path: Path) -> None:
    """``--out`` naming the ratings file (or any file that is not a benchmark result) is refused with or without
    ``--overwrite``, and the file is left as it was; the message does not call it a result."""
    ratings = tmp_path / "ratings.json"
    shutil.copy(REPO / "results" / "benchmark" / "ratings.json", ratings)
    before = ratings.read_bytes()
    for extra in ([], ["--overwrite"]):
        argv = ["benchmark", "--agent", "random", "--suite", "friday-levels", "--out", str(ratings), *extra]
        code, _ = friday13(argv)
        assert code == 2
        assert ratings.read_bytes() == before


def test_benchmark_out_error_names_what_the_file_is(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ratings = tmp_path / "ratings.json"
    shutil.copy(REPO / "results" / "benchmark" / "ratings.json", ratings)
    friday13(["benchmark", "--agent", "random", "--suite", "friday-levels", "--out", str(ratings), "--overwrite"])
    error = capsys.readouterr().err
    assert "is not a benchmark result" in error and "holds a complete result" not in error


def test_benchmark_replays_are_not_written_into_a_suites_results_folder(tmp_path: Path) -> None:
    """Replays in ``results/benchmark/SUITE/`` would be read as result files by the leaderboard: refused."""
    folder = tmp_path / "results" / "benchmark" / "friday-levels-v2"
    folder.mkdir(parents=True)
    code, _ = friday13(
        [
            "benchmark", "--agent", "random", "--suite", "friday-levels",
            "--out", str(tmp_path / "r.json"), "--replays", str(folder),
        ]
    )  # fmt: skip
    assert code == 2
    assert not list(folder.iterdir()) and not (tmp_path / "r.json").exists()


def test_registered_names_are_what_the_check_refuses() -> None:
    """The refusal follows the registry: every registered name and zoo policy is one an object may not take."""
    for name in REGISTRY.names():
        with pytest.raises(ValueError, match=REGISTERED_NAME):
            runner.check_agent(small_suite(deals=2), FirstLegal(name), 1)


def test_an_interval_made_with_this_scipy_must_be_its_bootstrap_exactly(results: Path) -> None:
    """Moved inwards by a twentieth of its width (within the tolerance kept for another scipy's resampling), an
    interval that names this scipy in its provenance is refused; naming another scipy, it is read."""
    data = made_result(CARD_4P, "x", seed=4)
    interval = data["normalised"]["iqm"]
    step = (interval["high"] - interval["low"]) / 20
    narrowed = with_interval(data, "iqm", low=interval["low"] + step, high=interval["high"] - step)
    assert narrowed["provenance"]["scipy"] is not None  # made_result records the installed one
    refused(results, narrowed, r"its normalised iqm's interval is not what its rows give")
    write(results, {**narrowed, "provenance": {**narrowed["provenance"], "scipy": "0.0.1"}})
    leaderboard.load_results(results)
