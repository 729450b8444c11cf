"""Defects a hostile review of the benchmark found (0.27.0), each pinned here: an agent that writes to the
observation it is shown at a fingerprint position, a user's factory whose play its seed does not set, ``ratings
--out`` onto a result or into a suite's folder, margins and training times too large to be any game's, files that
give a key twice, and a result of an agent that cannot sit at its suite's deck, which the leaderboard did not name."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from friday13_env.benchmark import exploitability, fingerprints, results, runner
from friday13_env.benchmark.suite import Split, get_suite
from friday13_env.friday13 import agents as card_agents
from tests.benchmark.helpers import friday13, made_result, small_suite, user_module

RESULTS = Path(__file__).resolve().parents[2] / "results" / "benchmark"

AGENTS = '''\
import numpy as np


class WritesItsInput:
    """Plays the lowest legal action, then zeroes the arrays it was shown."""

    name = "writes-its-input"

    def act(self, observation):
        action = int(np.flatnonzero(observation["action_mask"])[0])
        observation["action_mask"][...] = 0
        observation["observation"][...] = 0
        return action


class Lowest:
    name = "lowest"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def unseeded(seed=None):
    rng = np.random.default_rng()

    class Unseeded:
        name = "unseeded"

        def act(self, observation):
            return int(rng.choice(np.flatnonzero(observation["action_mask"])))

    return Unseeded()
'''


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from user_module("bench_review_27_agents", AGENTS, tmp_path, monkeypatch)


@pytest.mark.parametrize("game", ["friday13", "friday"])
def test_an_agent_writing_to_its_observation_is_judged_on_what_it_was_shown(agents: str, game: str) -> None:
    import importlib

    module = importlib.import_module(agents)
    writing = fingerprints.behaviour_fingerprint(module.WritesItsInput(), game)
    assert writing == fingerprints.behaviour_fingerprint(module.Lowest(), game)


def test_a_factory_whose_play_its_seed_does_not_set_is_refused(agents: str) -> None:
    with pytest.raises(ValueError, match=r"plays differently when built twice with seed 0"):
        runner.check_agent(small_suite(), f"{agents}:unseeded", workers=1)


def test_ratings_never_replace_a_result_or_write_into_a_suites_folder(tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(RESULTS / "card-4p-quick-v1", copy / "card-4p-quick-v1")
    result = next((copy / "card-4p-quick-v1").glob("*.json"))
    before = result.read_bytes()
    page = tmp_path / "page.md"
    page.write_text("# a page\n")
    flags = ["--agents", "random", "cautious", "--tables", "2", "--workers", "1"]
    assert friday13(["ratings", *flags, "--out", str(result), "--overwrite"])[0] == 2
    assert friday13(["ratings", *flags, "--out", str(page), "--overwrite"])[0] == 2
    assert friday13(["ratings", *flags, "--out", str(copy / "card-4p-quick-v1" / "mine.json")])[0] == 2
    assert result.read_bytes() == before and page.read_text() == "# a page\n"
    assert not (copy / "card-4p-quick-v1" / "mine.json").exists()


def test_a_margin_too_large_for_any_game_is_refused() -> None:
    suite = small_suite()
    data = made_result(suite)
    data["rows"][0][0][1] = 1e200
    _, problem = results._rows(data["rows"], suite, "test")
    assert problem is not None and problem.endswith("has a margin or score of 1e+200 in size (allowed: at most 10,000)")


def test_a_partial_file_with_a_margin_too_large_is_refused_before_any_game(tmp_path: Path) -> None:
    suite = small_suite()
    planned = runner.planned_units(suite, "test", card_agents.REGISTRY.check("random"))
    header = {"suite": "s", "agent": "a"}
    key = next(iter(planned))
    rows = [[0.5, 1e200]] * planned[key]
    partial = {
        "format": runner.RESULT_FORMAT,
        "format_version": runner.RESULT_FORMAT_VERSION,
        **header,
        "units": {f"{key[0]}:{key[1]}": {"rows": rows, "act_seconds": 1.0, "decisions": 10}},
    }
    path = tmp_path / "out.json.partial"
    path.write_text(json.dumps(partial))
    with pytest.raises(ValueError, match=r"damaged partial benchmark file.*margin or score of 1e\+200"):
        runner._resume(path, header, planned, "friday13")


def test_a_file_that_gives_a_key_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text('{"format": "friday13-benchmark-result", "format": "friday13-benchmark-result", "x": 1}')
    with pytest.raises(ValueError, match=r"repeats the key\(s\) \['format'\]"):
        runner.read_json(path, "benchmark result")


def test_an_exploitability_entry_trained_for_ages_is_refused(tmp_path: Path) -> None:
    data = json.loads((RESULTS / "exploitability.json").read_text())
    data["entries"][0]["training_seconds"] = 1e300
    path = tmp_path / "exploitability.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"training_seconds is 1e\+300; allowed: seconds, 0 to 1,000,000,000"):
        exploitability.read_table(path)


def test_a_result_of_an_agent_that_cannot_sit_at_its_suites_deck_is_named(tmp_path: Path) -> None:
    suite = get_suite("card-german")
    source = RESULTS / "card-german-v1" / "search.json"
    data = json.loads(source.read_text())
    data["agent"]["spec"] = "ppo-v4"
    data["agent"]["checkpoint_sha256"] = runner.file_sha256(card_agents.REGISTRY.zoo()["ppo-v4"])
    folder = tmp_path / "card-german-v1"
    folder.mkdir()
    (folder / "ppo-v4.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"ppo-v4\.json: its agent ppo-v4 cannot play this suite"):
        results.read_result(folder / "ppo-v4.json", {suite.id: suite})


def test_an_interval_of_no_spread_is_shown_as_such() -> None:
    """0 wins in 100 games is not a win share of exactly 0: a width of 0 is not printed as an interval."""
    from friday13_env.benchmark.leaderboard import format_interval

    assert format_interval({"value": 0.0, "low": 0.0, "high": 0.0}, 3) == "0.000 (no spread)"
    assert format_interval({"value": 0.5, "low": 0.4, "high": 0.6}, 3) == "0.500 [0.400, 0.600]"
    assert format_interval({"value": 0.5, "low": None, "high": None}, 2) == "0.50"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"splits": {"test": Split(1, "3"), "dev": Split(2, 3)}}, "split test's deals must be a non-negative int"),
        ({"splits": {"test": Split(1.5, 3), "dev": Split(2, 3)}}, "split test's seed must be a non-negative int"),
        ({"splits": {"test": Split(-1, 3), "dev": Split(2, 3)}}, "split test's seed must be a non-negative int"),
        ({"cells": None}, "cells must be a tuple of Cell"),
        ({"version": True}, "version must be an int"),
    ],
)
def test_a_hand_built_suite_of_the_wrong_kinds_is_named(change: dict[str, object], message: str) -> None:
    suite = dataclasses.replace(small_suite(), **change)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        runner.prepare("random", suite, workers=1)


def test_a_split_named_by_anything_but_a_text_is_refused() -> None:
    with pytest.raises(ValueError, match=r"has no split \['test'\]"):
        small_suite().split(["test"])  # type: ignore[arg-type]
