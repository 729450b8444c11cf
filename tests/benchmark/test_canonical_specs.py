"""One agent, one result: a spec's canonical form names its agent in result files, the leaderboard and ratings.

A hostile review found that options in another order (``search:budget=600,objective=rank`` and
``search:objective=rank,budget=600``), or a default spelled out (``search:budget=22000``, ``search``'s default),
gave one agent a second result file and a second leaderboard row. ``Registry.canonical`` sorts the options and
leaves out those equal to the agent's own defaults (same value and type); the benchmark files and records a result
under it, and the leaderboard and ratings refuse two files, or two entries, that name one agent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.benchmark import command, exploitability, leaderboard, ratings, runner
from friday13_env.benchmark.suite import Suite, get_suite
from friday13_env.core.registry import Registry
from friday13_env.core.specs import AgentSpec, parse_spec, recorded_spec, spec_problem
from friday13_env.friday.agents import REGISTRY as FRIDAY
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.evaluation.duplicate import seatings
from tests.benchmark.helpers import friday13, made_identity, made_result, small_suite, write
from tests.benchmark.test_review_0_16 import ratings_data as ratings_file

SHIPPED = Path(__file__).resolve().parents[2] / "results" / "benchmark"


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
        ("endgame:margin=1,cards=3", "endgame:margin=1.0"),  # the int 1 is the float 1.0 to it, not its default 0.5
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
    """A ``module:factory`` spec takes no options, so one built by hand with the policy loader's ``greedy=True`` keeps
    it (it is no checkpoint's default), and its module is not imported to find any defaults."""
    spec = AgentSpec("no_such_module_anywhere:Factory", (("greedy", True),))
    assert REGISTRY.canonical(spec) == spec
    assert "no_such_module_anywhere" not in sys.modules


def test_the_canonical_form_leaves_the_label_as_typed() -> None:
    """``AgentSpec.label`` names agents in evaluation tables as typed; only results use the canonical form."""
    assert parse_spec("search:objective=mean,budget=600").label == "search:objective=mean,budget=600"


def test_an_unknown_name_or_option_is_only_sorted() -> None:
    """What a recorded spec of an earlier release may hold: nothing is refused here (``check`` refuses it)."""
    assert canonical("search:zzz=1,budget=22000,aaa=2") == "search:aaa=2,zzz=1"
    assert canonical("someone_elses:zzz=1,greedy=true,aaa=2") == "someone_elses:aaa=2,greedy=true,zzz=1"


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


# -- the leaderboard ----------------------------------------------------------------------------------------------


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
    """A ratings file of ``agents`` (one table of the first three, one game per seating)."""
    lineup = agents[:3]
    return ratings_file(
        [{"lineup": lineup, "points": [[seat * 3 for seat in range(3)] for _ in seatings(lineup)]}], agents
    )


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


# -- review: the exploitability table names its targets as the results do ---------------------------------------


def gap_entry(target: str, players: int = 4, start: str = "scratch", mean: float = 0.3) -> dict[str, Any]:
    """One exploitability entry as ``best_response.py`` records it, winning ``mean`` of its deals."""
    equal = 1 / players
    return {
        "target": target,
        "players": players,
        "start": start,
        "card_plays": 1000,
        "training_seconds": 10.0,
        "win_share": {"mean": mean, "low": mean - 0.05, "high": mean + 0.05},
        "gap": {"mean": mean - equal, "low": mean - 0.05 - equal, "high": mean + 0.05 - equal},
        "final_games": 100,
        "command": f"python training/best_response.py --target {target}",
    }


def write_gaps(path: Path, *entries: dict[str, Any]) -> Path:
    data = {"format": exploitability.EXPLOITABILITY_FORMAT, "format_version": 1, "entries": list(entries)}
    path.write_text(json.dumps(data))
    return path


def test_a_gap_recorded_under_a_non_canonical_target_is_its_agents_row(tmp_path: Path) -> None:
    """An earlier ``best_response.py`` recorded the target as typed: its gap is the canonical agent's, as the
    leaderboard's rows name it."""
    gaps = exploitability.read_table(write_gaps(tmp_path / "gaps.json", gap_entry("majority:open_min=4,keep_min=2")))
    assert list(exploitability.largest_gaps(gaps)) == ["majority:open_min=4"]


def test_two_gaps_of_one_canonical_target_players_and_start_are_refused_naming_both(tmp_path: Path) -> None:
    path = write_gaps(tmp_path / "gaps.json", gap_entry("majority"), gap_entry("majority:keep_min=2", mean=0.4))
    with pytest.raises(ValueError, match="two entries for one target, table size and start") as refusal:
        exploitability.read_table(path)
    message = str(refusal.value)
    assert "'majority'" in message and "'majority:keep_min=2'" in message and "entry 0" in message
    assert "entry 1" in message and "delete" in message
    other = write_gaps(tmp_path / "other.json", gap_entry("majority"), gap_entry("majority:keep_min=2", start="target"))
    assert len(exploitability.read_table(other)) == 2  # another start: another measurement


def test_record_replaces_an_entry_of_the_same_canonical_target(tmp_path: Path) -> None:
    path = write_gaps(tmp_path / "gaps.json", gap_entry("majority:keep_min=2"))
    exploitability.record(path, gap_entry("majority", mean=0.4))
    assert [gap.target for gap in exploitability.read_table(path)] == ["majority"]


def test_the_shipped_exploitability_targets_are_canonical() -> None:
    gaps = exploitability.read_table(SHIPPED / exploitability.EXPLOITABILITY_FILE)
    assert gaps and all(runner.canonical_label("friday13", gap.target) == gap.target for gap in gaps)


# -- review: the policy loader's greedy default is only a policy's ----------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("ensemble-v1:greedy=true", "ensemble-v1"),
        ("mine.npz:greedy=true", "mine.npz"),
        ("runs/x/policy:greedy=true", "runs/x/policy"),
        ("someone_elses:greedy=true", "someone_elses:greedy=true"),  # an agent registered in another process
        ("mine_object:greedy=true,a=1", "mine_object:a=1,greedy=true"),
    ],
)
def test_greedy_is_a_default_only_of_zoo_names_and_checkpoint_paths(spec: str, expected: str) -> None:
    assert canonical(spec) == expected


def test_the_canonical_form_does_not_depend_on_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file named ``mypol`` here or not, ``mypol:greedy=true`` reads the same: no file is looked up."""
    before = canonical("mypol:greedy=true")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mypol").write_bytes(b"")
    assert canonical("mypol:greedy=true") == before == "mypol:greedy=true"


# -- review: a label the runner records must read back as itself ------------------------------------------------


class Named:
    """An agent object of a given name that plays the lowest legal action."""

    def __init__(self, name: str) -> None:
        self.name = name

    def act(self, observation: dict[str, Any]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_an_agent_object_whose_name_reads_back_as_another_label_is_refused(suite: Suite) -> None:
    """Filed under ``mcts:sims=100,c=1.4`` but shown as ``mcts:c=1.4,sims=100``: refused, saying how to rename it."""
    with pytest.raises(ValueError, match=r"'mcts:sims=100,c=1.4'.*'mcts:c=1.4,sims=100'.*rename") as refusal:
        runner.check_agent(suite, Named("mcts:sims=100,c=1.4"), 1)
    assert "agent object" in str(refusal.value)
    runner.check_agent(suite, Named("mcts:c=1.4,sims=100"), 1)  # its canonical form is taken


def test_a_checkpoint_whose_name_reads_back_as_another_spec_is_refused(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file ``sub/pol:greedy=true`` is taken whole here, but a result's reader takes it as ``sub/pol`` with
    ``greedy=true``, its default: recorded one way, shown another. Refused before the file is read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pol:greedy=true").write_bytes(b"")
    with pytest.raises(ValueError, match=r"'sub/pol:greedy=true'.*'sub/pol'.*rename"):
        runner.check_agent(suite, "sub/pol:greedy=true", 1)
    with pytest.raises(ValueError, match=r"'sub/pol:greedy=true'.*'sub/pol'.*rename"):
        ratings.check_ratings(["random", "cautious", "sub/pol:greedy=true"])


# -- review: an int for a float default is that float --------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("search:margin=1", "search"),  # number_option takes it as 1.0, the default
        ("search:margin=1.0", "search"),
        ("search:margin=2", "search:margin=2.0"),
        ("search:margin=0", "search:margin=0.0"),
        ("search:margin=-0.0", "search:margin=0.0"),  # compared only: the agent plays -0.0 as 0.0
        ("search:margin=true", "search:margin=true"),  # a bool is no number (make refuses it)
        ("search:budget=8.0", "search:budget=8.0"),  # an int option is strict (make refuses it)
    ],
)
def test_an_int_for_a_float_default_is_that_float_in_the_solo_game(spec: str, expected: str) -> None:
    assert canonical(spec, FRIDAY) == expected
    assert canonical(expected, FRIDAY) == expected
    assert spec_problem(expected) is None


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("endgame:first_margin=0", "endgame:first_margin=0.0"),
        ("endgame:margin=-0.0,first_margin=-0", "endgame:first_margin=0.0,margin=0.0"),
        ("majority:keep_min=true", "majority:keep_min=true"),  # True is not the int 2, nor any int
        ("search:budget=22000.0", "search:budget=22000.0"),
    ],
)
def test_an_int_for_a_float_default_is_that_float_in_the_card_game(spec: str, expected: str) -> None:
    assert canonical(spec) == expected


def test_equal_floats_make_one_agent() -> None:
    """``margin=1`` and ``margin=1.0`` build the same agent, so they must be one label; ``-0.0`` plays as ``0.0``."""
    for one, other in [("search:margin=2", "search:margin=2.0"), ("search:margin=-0.0", "search:margin=0")]:
        assert canonical(one, FRIDAY) == canonical(other, FRIDAY)
        first, second = (FRIDAY.make(spec, seed=0) for spec in (one, other))
        assert first.options == second.options  # type: ignore[attr-defined]
    assert command.default_out(get_suite("friday-levels"), "search:margin=1", "test").name == "search.json"


def test_a_users_float_option_keeps_its_negative_zero() -> None:
    """An int for a float default is that float, and ``-0.0`` is ``0.0``, only to this package's agents, whose float
    options are compared, never divided by or printed: a user's factory gets what was typed."""

    def factory(seed: int | None = None, *, scale: float = 0.5) -> Any:
        raise AssertionError("not built")

    registry = Registry("test", REGISTRY.zoo_package, lambda *args, **kwargs: None)
    registry.register("mine", factory)
    assert canonical("mine:scale=1", registry) == "mine:scale=1"
    assert canonical("mine:scale=-0.0", registry) == "mine:scale=-0.0"


# -- review: the leaderboard's refusal names the file a run writes, for the split it is of ------------------------


def test_two_dev_results_of_one_agent_name_the_dev_file(quick_results: Path) -> None:
    quick = get_suite("card-4p-quick")
    for index, spec in enumerate(["majority", "majority:keep_min=2"]):
        data = made_result(quick, spec, split="dev", seed=3 + index)
        data["agent"] = {**made_identity(quick, "majority"), "spec": spec}
        path = quick_results / quick.id / leaderboard.result_name(spec).replace(".json", ".dev.json")
        path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="one agent") as refusal:
        leaderboard.generate(quick_results)
    message = str(refusal.value)
    assert "majority.dev.json" in message and "dev split" in message
    assert "want shown" not in message  # the page shows no dev result
    assert "writes majority.json" in leaderboard.one_agent_twice(Path("a"), Path("b"), "majority", "test")


# -- review: a run refuses up front to give its agent a second result file --------------------------------------


def header(suite_id: str, split: str, spec: str) -> str:
    return json.dumps(
        {
            "format": runner.RESULT_FORMAT,
            "format_version": runner.RESULT_FORMAT_VERSION,
            "suite": {"id": suite_id, "split": split},
            "agent": {"spec": spec},
        }
    )


@pytest.fixture
def no_run(suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The suite folder a run in ``tmp_path`` writes to; preparing a run raises ``ValueError('prepared')``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})

    def prepared(*args: object, **kwargs: object) -> None:
        raise ValueError("prepared")

    monkeypatch.setattr(command, "prepare", prepared)
    folder = tmp_path / "results" / "benchmark" / suite.id
    folder.mkdir(parents=True)
    return folder


def test_a_run_refuses_an_earlier_releases_file_of_its_agent(
    suite: Suite, no_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``majority_keep_min_2.json`` of an earlier release is ``majority``'s: the run would write ``majority.json``, and
    the leaderboard then refuse both. Refused before any game, naming the file and what to do."""
    old = no_run / "majority_keep_min_2.json"
    old.write_text(header(suite.id, "test", "majority:keep_min=2"))
    code, _ = friday13(["benchmark", "--agent", "majority:keep_min=2", "--suite", "tiny", "--no-progress"])
    error = capsys.readouterr().err
    assert code == 2 and "prepared" not in error
    assert f"results/benchmark/{suite.id}/majority_keep_min_2.json holds a result of agent 'majority'" in error
    assert "majority.json" in error and "delete one" in error.lower()
    assert old.exists() and not (no_run / "majority.json").exists()


def test_a_run_is_not_refused_for_another_split_a_damaged_file_or_with_out(
    suite: Suite, no_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (no_run / "majority_keep_min_2.dev.json").write_text(header(suite.id, "dev", "majority:keep_min=2"))
    (no_run / "broken.json").write_text("{damaged")
    (no_run / "odd.json").write_text(json.dumps({"format": runner.RESULT_FORMAT, "agent": 3}))
    code, _ = friday13(["benchmark", "--agent", "majority", "--suite", "tiny", "--no-progress"])
    assert code == 2 and "prepared" in capsys.readouterr().err  # it went on to play
    (no_run / "majority_keep_min_2.json").write_text(header(suite.id, "test", "majority:keep_min=2"))
    argv = ["benchmark", "--agent", "majority", "--suite", "tiny", "--no-progress", "--out", "elsewhere/m.json"]
    code, _ = friday13(argv)
    assert code == 2 and "prepared" in capsys.readouterr().err  # --out: not the leaderboard's folder
