"""One agent, one result: a spec's canonical form names its agent in result files, the leaderboard and ratings.

A hostile review found that options in another order (``search:budget=600,objective=rank`` and
``search:objective=rank,budget=600``), or a default spelled out (``search:budget=22000``, ``search``'s default),
gave one agent a second result file and a second leaderboard row. ``Registry.canonical`` sorts the options and
leaves out those equal to the agent's own defaults (same value and type); the benchmark files and records a result
under it, and the leaderboard and ratings refuse two files, or two entries, that name one agent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from friday13_env.benchmark import command, leaderboard, ratings, runner
from friday13_env.benchmark.suite import Suite, get_suite
from friday13_env.core.registry import Registry
from friday13_env.core.specs import AgentSpec, parse_spec, recorded_spec, spec_problem
from friday13_env.friday.agents import REGISTRY as FRIDAY
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.evaluation.duplicate import seatings
from tests.benchmark.helpers import friday13, made_identity, made_result, small_suite


def canonical(spec: str, registry: Registry = REGISTRY) -> str:
    return registry.canonical(parse_spec(spec, files=False)).label


# -- the canonical form ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("search:objective=mean,budget=600", "search:budget=600,objective=mean"),
        ("search:budget=600,objective=mean", "search:budget=600,objective=mean"),
        ("search:budget=22000", "search"),  # the default, spelled out
        ("search:objective=rank,budget=600", "search:budget=600"),
        ("search:budget=22000.0", "search:budget=22000.0"),  # a float is not the int default
        ("majority:open_min=4,keep_min=2", "majority:open_min=4"),
        ("majority:keep_min=2,open_min=3", "majority"),
        ("endgame:margin=0.5,first_margin=0.2,policy=ensemble-v1", "endgame"),
        ("endgame:margin=1,cards=3", "endgame:margin=1"),  # the int 1 is not the float default 0.5, nor 1.0
        ("random", "random"),
        ("ppo-v4:greedy=true", "ppo-v4"),  # the loader's default
        ("ppo-v4:greedy=false", "ppo-v4:greedy=false"),
        ("some/where/mine.npz:greedy=true", "some/where/mine.npz"),  # no file needed
        ("some/where/mine.npz:greedy=false", "some/where/mine.npz:greedy=false"),
    ],
)
def test_options_are_sorted_and_defaults_left_out(spec: str, expected: str) -> None:
    assert canonical(spec) == expected
    assert canonical(expected) == expected  # canonical already
    assert spec_problem(expected) is None  # a label a result can record


def test_the_solo_games_defaults_are_its_own() -> None:
    assert canonical("search:horizon=1,budget=8", FRIDAY) == "search"
    assert canonical("search:horizon=2,budget=8", FRIDAY) == "search:horizon=2"
    assert canonical("heuristic:samples=8", FRIDAY) == "heuristic"


def test_a_value_of_another_type_than_the_default_is_kept() -> None:
    """``True == 1`` and ``1 == 1.0`` in Python, but an agent may treat them differently: only the same type and
    value is the default."""

    def factory(seed: int | None = None, *, flag: bool = True, count: int = 1, text: str = "a") -> Any:
        raise AssertionError("not built")

    registry = Registry("test", REGISTRY.zoo_package, lambda *args, **kwargs: None)
    registry.register("mine", factory)
    assert canonical("mine:flag=1,count=true,text=a", registry) == "mine:count=true,flag=1"
    assert canonical("mine:count=1.0", registry) == "mine:count=1.0"
    assert canonical("mine:flag=true,count=1", registry) == "mine"


def test_a_factory_spec_is_left_as_it_is_and_not_imported() -> None:
    """A ``module:factory`` spec takes no options; its module is not imported to find any defaults."""
    spec = AgentSpec("no_such_module_anywhere:Factory")
    assert REGISTRY.canonical(spec) == spec


def test_the_canonical_form_leaves_the_label_as_typed() -> None:
    """``AgentSpec.label`` names agents in evaluation tables as typed; only results use the canonical form."""
    assert parse_spec("search:objective=mean,budget=600").label == "search:objective=mean,budget=600"


def test_an_unknown_name_or_option_is_only_sorted() -> None:
    """What a recorded spec of an earlier release may hold: nothing is refused here (``check`` refuses it)."""
    assert canonical("search:zzz=1,budget=22000,aaa=2") == "search:aaa=2,zzz=1"


# -- friday13 benchmark -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def suite() -> Suite:
    return small_suite(deals=5)


@pytest.mark.parametrize(
    ("specs", "name"),
    [
        (["search:objective=mean,budget=600", "search:budget=600,objective=mean"], "search_budget_600_objective_mean"),
        (["search", "search:budget=22000", "search: objective=rank"], "search"),
        (["majority:keep_min=2", "majority: open_min=3,keep_min=2"], "majority"),
        (["ppo-v4:greedy=true", "ppo-v4"], "ppo-v4"),
    ],
)
def test_one_agent_has_one_default_result_file(suite: Suite, specs: list[str], name: str) -> None:
    for spec in specs:
        assert command.default_out(suite, spec, "test").name == f"{name}.json"
        assert command.default_out(suite, spec, "dev").name == f"{name}.dev.json"


def test_the_result_records_the_canonical_spec(suite: Suite) -> None:
    plan = runner.prepare("majority:open_min=4,keep_min=2", suite, workers=1)
    assert plan.header["agent"]["spec"] == "majority:open_min=4"
    assert runner.prepare("majority:keep_min=2", suite, workers=1).header["agent"]["spec"] == "majority"


def test_a_result_of_the_same_agent_is_kept_without_overwrite(
    suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--agent "majority:keep_min=2"`` finds ``majority.json``, its agent's result, and keeps it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    monkeypatch.setattr(command, "prepare", lambda *args, **kwargs: pytest.fail("a run was prepared"))
    existing = tmp_path / "results" / "benchmark" / "tiny-v1" / "majority.json"
    existing.parent.mkdir(parents=True)
    kept = json.dumps({"format": runner.RESULT_FORMAT, "format_version": runner.RESULT_FORMAT_VERSION})
    existing.write_text(kept)
    code, _ = friday13(["benchmark", "--agent", "majority:open_min=3,keep_min=2", "--suite", "tiny", "--no-progress"])
    assert code == 2
    assert "majority.json holds a complete result; --overwrite replaces it" in capsys.readouterr().err
    assert existing.read_text() == kept


# -- the leaderboard ----------------------------------------------------------------------------------------------


def write(results: Path, data: dict[str, Any]) -> Path:
    path = results / data["suite"]["id"] / leaderboard.result_name(data["agent"]["spec"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.fixture
def quick_results(tmp_path: Path) -> Path:
    pytest.importorskip("scipy")
    results = tmp_path / "results"
    for index, spec in enumerate(["random", "search"]):
        write(results, made_result(get_suite("card-4p-quick"), spec, seed=index))
    return results


def test_a_result_of_an_earlier_release_under_a_non_canonical_spec_still_reads(quick_results: Path) -> None:
    """Recorded as typed before this release: read, and shown under its agent's canonical name."""
    write(quick_results, made_result(get_suite("card-4p-quick"), "majority:open_min=4,keep_min=1", seed=3))
    page = leaderboard.generate(quick_results)
    assert "`friday13 benchmark --agent majority:keep_min=1,open_min=4 --suite card-4p-quick`" in page
    assert "open_min=4,keep_min=1" not in page


def test_a_result_of_an_earlier_release_with_a_default_spelled_out_reads_as_its_agent(quick_results: Path) -> None:
    """``majority:keep_min=2`` is ``majority``: its fingerprint is checked as that agent's, and its row is its."""
    quick = get_suite("card-4p-quick")
    data = made_result(quick, "majority:keep_min=2", seed=3)
    data["agent"] = {**made_identity(quick, "majority"), "spec": "majority:keep_min=2"}
    write(quick_results, data)
    page = leaderboard.generate(quick_results)
    assert "`friday13 benchmark --agent majority --suite card-4p-quick`" in page
    assert "keep_min" not in page


@pytest.mark.parametrize(
    ("first", "second", "agent"),
    [
        ("majority:open_min=4,keep_min=1", "majority:keep_min=1,open_min=4", "majority:keep_min=1,open_min=4"),
        ("majority", "majority:keep_min=2", "majority"),
    ],
)
def test_two_result_files_of_one_agent_are_refused_naming_both(
    quick_results: Path, first: str, second: str, agent: str
) -> None:
    """Each file alone reads (its agent's fingerprint is that agent's); the two together are one agent twice."""
    quick = get_suite("card-4p-quick")
    files = []
    for index, spec in enumerate([first, second]):
        data = made_result(quick, spec, seed=3 + index)
        data["agent"] = {**made_identity(quick, agent), "spec": spec}
        files.append(write(quick_results, data))
    one, other = files
    with pytest.raises(ValueError, match="one agent") as refusal:
        leaderboard.generate(quick_results)
    message = str(refusal.value)
    assert str(one) in message and str(other) in message and repr(agent) in message
    assert "delete" in message


def test_a_result_that_names_an_anchor_with_its_defaults_is_checked_as_that_anchor(quick_results: Path) -> None:
    """``random:``-style options that are all defaults make the anchor itself: its fingerprint is checked."""
    data = made_result(get_suite("card-4p-quick"), "majority:keep_min=2", seed=3)
    data["agent"]["fingerprint"] = "0123456789abcdef"
    write(quick_results, data)
    with pytest.raises(ValueError, match="fingerprint"):
        leaderboard.generate(quick_results)


# -- ratings ------------------------------------------------------------------------------------------------------


def test_a_ratings_pool_naming_one_agent_twice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"agent 'majority' is listed twice.*'majority:keep_min=2'"):
        ratings.check_ratings(["random", "majority", "majority:keep_min=2"])


def test_a_ratings_pool_is_recorded_under_canonical_specs() -> None:
    pytest.importorskip("openskill")
    pool = ratings.check_ratings(["random", "cautious", "majority:open_min=3,keep_min=1"])
    assert [spec.label for spec in pool.fingerprints] == ["random", "cautious", "majority:keep_min=1"]


def ratings_data(agents: list[str]) -> dict[str, Any]:
    lineup = agents[:3]
    tables = [{"lineup": lineup, "points": [[seat * 3 for seat in range(3)] for _ in seatings(lineup)]}]
    return {
        "format": ratings.RATINGS_FORMAT,
        "format_version": 1,
        "agents": agents,
        "fingerprints": dict.fromkeys(agents, "0" * 16),
        "tables": len(tables),
        "seed": 0,
        "model": "openskill PlackettLuce, tau=0, games in table order",
        "ratings": ratings.fit(tables, agents),
        "provenance": {"command": None},
        "games": tables,
    }


def test_a_ratings_file_naming_one_agent_twice_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("openskill")
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(ratings_data(["random", "cautious", "majority", "majority:keep_min=2"])))
    with pytest.raises(ValueError, match=r"'majority' and 'majority:keep_min=2' are one agent"):
        ratings.read_ratings(path)


def test_a_ratings_file_of_non_canonical_specs_still_reads(tmp_path: Path) -> None:
    """An earlier release recorded the specs as typed; the file still reads, and as it was."""
    pytest.importorskip("openskill")
    data = ratings_data(["random", "cautious", "majority:open_min=4,keep_min=1"])
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(data))
    assert ratings.read_ratings(path) == data
    assert recorded_spec("majority:open_min=4,keep_min=1").label == "majority:open_min=4,keep_min=1"
