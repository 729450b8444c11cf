"""Defects a review of the benchmark's canonical agent specs found (0.28.0), each pinned here: a checkpoint file named
like a spec with options (``majority:open_min=4``) taken as that agent, a ``--out`` into the leaderboard's folder
that gave one agent a second result file, a float label that did not read back, a partial run of an earlier release
refused as another agent's, ``--overwrite`` replacing another agent's result, a user's int option turned into a float,
an exploitability target shown as typed, and a whitespace-only spec refused without naming its file."""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from friday13_env.benchmark import command, exploitability, leaderboard, ratings, runner
from friday13_env.benchmark.suite import Suite, definition_problems, get_suite
from friday13_env.cli import main
from friday13_env.core.agent import Observation
from friday13_env.core.specs import AgentSpec
from friday13_env.friday.agents import REGISTRY as FRIDAY
from friday13_env.friday13 import agents as card_agents
from friday13_env.friday13.agents import REGISTRY
from tests.benchmark.helpers import made_identity, made_result, small_suite

QUICK = "card-4p-quick"
SPEC_NAMED_FILE = "majority:open_min=4"
"""A checkpoint file's name that reads as ``majority`` with an option."""


@pytest.fixture(scope="module")
def quick() -> Suite:
    return get_suite(QUICK)


@pytest.fixture(scope="module")
def tiny() -> Suite:
    return small_suite(deals=5)


def ppo_checkpoint(path: Path) -> Path:
    """A real policy checkpoint (``ppo-v4``'s) at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REGISTRY.policy_path("ppo-v4"), path)
    return path


# -- 1. a checkpoint file named like a spec with options ---------------------------------------------------------


def test_a_checkpoint_named_like_a_spec_with_options_is_refused_by_the_benchmark(
    quick: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file ``majority:open_min=4`` is played as a checkpoint but recorded as the label of ``majority``: refused."""
    monkeypatch.chdir(tmp_path)
    ppo_checkpoint(tmp_path / SPEC_NAMED_FILE)
    with pytest.raises(ValueError, match="rename"):
        runner.check_agent(quick, SPEC_NAMED_FILE, 1)


def test_a_checkpoint_named_like_a_spec_with_options_is_refused_by_ratings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ratings pool refuses the same file before anything is built."""
    monkeypatch.chdir(tmp_path)
    ppo_checkpoint(tmp_path / SPEC_NAMED_FILE)
    monkeypatch.setattr(runner, "entrant_fingerprint", lambda *args: "0" * 16)  # nothing built if it got that far
    monkeypatch.setattr(ratings, "_model", lambda: None)
    with pytest.raises(ValueError, match="rename"):
        ratings.check_ratings([SPEC_NAMED_FILE, "random", "cautious"])


def test_without_such_a_file_the_spec_is_the_registered_agent(
    quick: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file of that name in the working folder: ``majority:open_min=4`` is ``majority`` with the option."""
    monkeypatch.chdir(tmp_path)
    entrant, identity = runner.check_agent(quick, SPEC_NAMED_FILE, 1)
    assert identity["spec"] == SPEC_NAMED_FILE
    assert entrant == AgentSpec("majority", (("open_min", 4),))


def test_a_plainly_named_checkpoint_is_still_accepted(
    quick: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint ``mine.npz`` is played and recorded under its name, and a ratings pool takes it."""
    monkeypatch.chdir(tmp_path)
    ppo_checkpoint(tmp_path / "mine.npz")
    _, identity = runner.check_agent(quick, "mine.npz", 1)
    assert identity["spec"] == "mine.npz" and identity["checkpoint_sha256"] is not None
    monkeypatch.setattr(runner, "entrant_fingerprint", lambda *args: "0" * 16)
    monkeypatch.setattr(ratings, "_model", lambda: None)
    pool = ratings.check_ratings(["mine.npz", "random", "cautious"])
    assert [spec.label for spec in pool.fingerprints] == ["mine.npz", "random", "cautious"]


# -- the command, its play step stubbed ---------------------------------------------------------------------------


class Played(Exception):
    """Raised by the stubbed play step: the command got past every check."""


def benchmark(argv: list[str]) -> tuple[int, str, bool]:
    """``friday13 benchmark ARGV`` with its play step stubbed: exit code, output, and whether it would have played."""
    output = io.StringIO()
    try:
        code = main(["benchmark", *argv, "--no-progress"], output_stream=output)
    except Played:
        return 0, output.getvalue(), True
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, output.getvalue(), False


@pytest.fixture
def stub_play(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working folder in ``tmp_path`` where ``friday13 benchmark`` checks everything but plays nothing (the suite's
    anchors are not fingerprinted again either); returns the quick card suite's leaderboard folder there."""
    pytest.importorskip("scipy")  # the quick suite's aggregate scores: a run checks for them before it plays
    monkeypatch.chdir(tmp_path)

    def execute(plan: Any, progress: Any = None) -> dict[str, Any]:
        raise Played(str(plan.out))

    monkeypatch.setattr(command, "execute", execute)
    monkeypatch.setattr(runner, "check_suite", lambda suite, split: suite.deals_sha256[split])
    folder = tmp_path / "results" / "benchmark" / get_suite(QUICK).id
    folder.mkdir(parents=True)
    return folder


def written(folder: Path, name: str, spec: str, agent: str | None = None) -> Path:
    """A made-up result of ``spec`` (as recorded) at ``folder/name``, identified as ``agent``'s (default: ``spec``)."""
    quick = get_suite(QUICK)
    data = made_result(quick, spec, seed=3)
    data["agent"] = {**made_identity(quick, agent or spec), "spec": spec}
    path = folder / name
    path.write_text(json.dumps(data))
    return path


# -- 3. --out into the leaderboard's folder ----------------------------------------------------------------------


def test_out_into_the_leaderboard_folder_refuses_a_second_file_of_the_agent(
    stub_play: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out results/benchmark/SUITE/search.json`` beside ``search_budget_22000.json`` (``search``'s): refused before
    any game, naming the other file."""
    other = written(stub_play, "search_budget_22000.json", "search:budget=22000", "search")
    out = f"results/benchmark/{get_suite(QUICK).id}/search.json"
    code, _, played = benchmark(["--agent", "search", "--suite", QUICK, "--out", out])
    assert not played and code == 2
    assert other.name in capsys.readouterr().err
    assert other.exists() and not (stub_play / "search.json").exists()


# -- 6. --overwrite onto another agent's result ------------------------------------------------------------------


def test_overwrite_refuses_to_replace_a_result_of_another_agent(
    stub_play: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``runs_a/policy.npz`` and ``runs/a/policy.npz`` both file as ``runs_a_policy.npz.json``: ``--overwrite`` must not
    replace the other agent's result; refused, naming that agent."""
    ppo_checkpoint(tmp_path / "runs" / "a" / "policy.npz")
    ppo_checkpoint(tmp_path / "runs_a" / "policy.npz")
    other = written(stub_play, "runs_a_policy.npz.json", "runs/a/policy.npz")
    before = other.read_bytes()
    code, _, played = benchmark(["--agent", "runs_a/policy.npz", "--suite", QUICK, "--overwrite"])
    assert not played and code == 2
    assert "runs/a/policy.npz" in capsys.readouterr().err
    assert other.read_bytes() == before


def test_overwrite_still_replaces_a_result_of_the_same_agent(
    stub_play: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``majority.json`` holds ``majority``'s result: a run of ``majority:keep_min=2`` (the same agent) replaces it."""
    written(stub_play, "majority.json", "majority")
    code, _, played = benchmark(["--agent", "majority:keep_min=2", "--suite", QUICK, "--overwrite"])
    assert played, (code, capsys.readouterr().err)


def test_overwrite_replaces_a_file_recording_the_same_agent_in_another_form(
    stub_play: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file at ``--out`` that recorded ``majority:keep_min=2,open_min=4`` is ``majority:open_min=4``'s: replaced."""
    written(tmp_path, "mine.json", "majority:keep_min=2,open_min=4", "majority:open_min=4")
    argv = ["--agent", "majority:open_min=4", "--suite", QUICK, "--overwrite", "--out", "mine.json"]
    code, _, played = benchmark(argv)
    assert played, (code, capsys.readouterr().err)


# -- 4. a float option's canonical label reads back -----------------------------------------------------------------


def hard_floats() -> list[float]:
    """Floats in [1e-4, 1e-3) with 17 significant digits, the class a fuzzer found, and a few fixed ones."""
    rng = random.Random(28)
    drawn = [float(f"{rng.uniform(1e-4, 1e-3):.17g}") for _ in range(6)]
    return [1.2345678901234567e-4, 9.999999999999999e-4, 1.0000000000000002e-4, *drawn]


def spellings(value: float) -> list[str]:
    return [repr(value), f"{value:.17g}", f"{value:.16e}"]


@pytest.mark.parametrize("value", hard_floats(), ids=repr)
@pytest.mark.parametrize(
    ("registry", "option"),
    [(REGISTRY, "endgame:margin"), (REGISTRY, "endgame:first_margin"), (FRIDAY, "search:margin")],
    ids=["card-endgame-margin", "card-endgame-first_margin", "solo-search-margin"],
)
def test_a_float_options_canonical_label_reads_back_as_itself(registry: Any, option: str, value: float) -> None:
    """The canonical label of ``endgame:margin=1.2345678901234567e-4`` parses to itself again and builds."""
    for text in spellings(value):
        label = registry.checked_canonical(f"{option}={text}").label
        assert registry.checked_canonical(label).label == label, text
        assert dict(registry.checked_canonical(label).options)[option.split(":")[1]] == value
        registry.make(label, seed=0)


# -- 5. a partial run of an earlier release, its spec as typed ----------------------------------------------------


def earlier_partial(suite: Suite, out: Path, recorded: str = "majority:keep_min=2,open_min=4") -> Path:
    """``OUT.partial`` as an earlier release left it: the header of ``majority:open_min=4``'s run (same fingerprint)
    with the spec recorded as typed, no unit finished."""
    header = runner.prepare("majority:open_min=4", suite, workers=1).header
    old = {**header, "agent": {**header["agent"], "spec": recorded}, "complete": False, "units": {}}
    partial = runner.partial_path(out)
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.write_text(json.dumps(old))
    return partial


@pytest.mark.parametrize("typed", ["majority:keep_min=2,open_min=4", "majority:open_min=4"])
def test_a_partial_file_recording_the_agent_in_another_form_is_continued(
    tiny: Suite, tmp_path: Path, typed: str
) -> None:
    """The same agent in non-canonical form is not "another agent": the run goes on from the partial file."""
    out = tmp_path / "old" / "majority_keep_min_2_open_min_4.json"
    earlier_partial(tiny, out)
    plan = runner.prepare(typed, tiny, workers=1, out=out)
    assert plan.header["agent"]["spec"] == "majority:open_min=4"


def test_a_partial_file_of_another_agent_is_still_refused(tiny: Suite, tmp_path: Path) -> None:
    """A partial file of ``majority:open_min=3`` is not continued by ``majority:open_min=4``."""
    out = tmp_path / "old" / "m.json"
    earlier_partial(tiny, out, recorded="majority:keep_min=2,open_min=3")
    with pytest.raises(ValueError, match="another"):
        runner.prepare("majority:open_min=4", tiny, workers=1, out=out)


def test_the_command_continues_an_earlier_releases_partial_file(
    tiny: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``friday13 benchmark`` with the same command goes on with the partial file (its play step stubbed)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "suites", lambda: {"tiny": tiny})

    def execute(plan: Any, progress: Any = None) -> dict[str, Any]:
        raise Played(str(plan.out))

    monkeypatch.setattr(command, "execute", execute)
    out = tmp_path / "old" / "majority_keep_min_2_open_min_4.json"
    earlier_partial(tiny, out)
    argv = ["--agent", "majority:keep_min=2,open_min=4", "--suite", "tiny", "--out", str(out)]
    code, output, played = benchmark(argv)
    assert played, (code, capsys.readouterr().err)
    assert "continuing the partial run" in output


def test_an_earlier_releases_partial_file_under_the_typed_name_is_named_not_passed_over(
    tiny: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``--out`` the run's file is named after the canonical spec; a partial run an earlier release left under
    the spec as typed is not silently passed over: the command says to rename it to continue it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "suites", lambda: {"tiny": tiny})
    monkeypatch.setattr(command, "execute", lambda plan, progress=None: (_ for _ in ()).throw(Played()))
    folder = Path("results") / "benchmark" / tiny.id
    old = earlier_partial(tiny, folder / "majority_keep_min_2_open_min_4.json")
    code, _, played = benchmark(["--agent", "majority:keep_min=2,open_min=4", "--suite", "tiny"])
    assert (code, played) == (2, False)
    assert f"rename {old}" in capsys.readouterr().err and old.exists()
    old.rename(runner.partial_path(folder / "majority_open_min_4.json"))
    assert benchmark(["--agent", "majority:keep_min=2,open_min=4", "--suite", "tiny"])[2]


# -- 7. a user's agent gets the int it was given ------------------------------------------------------------------


class Lookahead:
    """A user's agent with a float default; records what it was given."""

    given: ClassVar[list[object]] = []

    def __init__(self, seed: int | None = None, *, lookahead: float = 1.0) -> None:
        Lookahead.given.append(lookahead)
        self.name = "mine"
        self.lookahead = lookahead

    def act(self, observation: Observation) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_users_int_for_a_float_default_stays_an_int(quick: Suite, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mine:lookahead=3`` keeps its int in the canonical label, and the agent built from it gets the int 3."""
    monkeypatch.setattr(REGISTRY, "_factories", dict(REGISTRY._factories))
    card_agents.register("mine", Lookahead)
    canonical = REGISTRY.checked_canonical("mine:lookahead=3")
    assert canonical.label == "mine:lookahead=3"
    Lookahead.given.clear()
    agent = REGISTRY.make(canonical, seed=0)
    assert isinstance(agent, Lookahead)
    assert type(agent.lookahead) is int and agent.lookahead == 3
    Lookahead.given.clear()
    _, identity = runner.check_agent(quick, "mine:lookahead=3", 1)
    assert identity["spec"] == "mine:lookahead=3"
    assert Lookahead.given and all(type(value) is int and value == 3 for value in Lookahead.given)


def test_the_packages_own_agents_still_take_an_int_as_the_float() -> None:
    """``endgame:margin=1`` is ``endgame:margin=1.0``: the package's own agents read an int as that float."""
    assert REGISTRY.checked_canonical("endgame:margin=1").label == "endgame:margin=1.0"


# -- 8. the exploitability section names its target canonically ----------------------------------------------------


def test_the_exploitability_section_shows_the_canonical_target(quick_results: Path) -> None:
    """An entry recorded as ``majority:open_min=3,keep_min=2`` (all defaults) is shown as ``majority``."""
    target = "majority:open_min=3,keep_min=2"
    entry = {
        "target": target,
        "players": 4,
        "start": "scratch",
        "card_plays": 20054016,
        "training_seconds": 554.8,
        "win_share": {"mean": 0.38, "low": 0.36, "high": 0.40},
        "gap": {"mean": 0.13, "low": 0.11, "high": 0.15},
        "final_games": 2000,
        "command": "python training/best_response.py --target majority",
    }
    table = {"format": exploitability.EXPLOITABILITY_FORMAT, "format_version": 1, "entries": [entry]}
    (quick_results / exploitability.EXPLOITABILITY_FILE).write_text(json.dumps(table))
    page = leaderboard.generate(quick_results)
    shown_as = runner.canonical_label("friday13", target)
    assert shown_as == "majority"
    assert f"| `{shown_as}` | 4 | scratch |" in page
    assert "open_min=3,keep_min=2" not in page


# -- 9. a whitespace-only spec names its file ----------------------------------------------------------------------


def test_a_whitespace_only_spec_is_refused_naming_its_file(quick_results: Path) -> None:
    """A result whose agent spec is ``"\\u00a0"``: the leaderboard's error names the file."""
    quick = get_suite(QUICK)
    data = made_result(quick, "random", seed=5)
    data["agent"]["spec"] = "\u00a0"
    path = quick_results / quick.id / "blank.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as refusal:
        leaderboard.load_results(quick_results)
    assert path.name in str(refusal.value)


def test_the_quick_results_fixture_reads(quick_results: Path) -> None:
    """Control: the results folder the tests above add to reads on its own."""
    assert set(leaderboard.load_results(quick_results)[get_suite(QUICK).id]) == {"random", "search"}


# -- the review of the scores: a cell's references far enough apart ------------------------------------------------


@pytest.mark.parametrize("search", [0.26, 0.2999])
def test_references_too_close_to_normalise_by_are_refused(search: float) -> None:
    """References closer than ``MIN_REFERENCE_SPAN`` (random 0.25, search 0.26) would divide a cell's scores by 0.01,
    so that one cell outweighs the rest: the suite is refused before any game, naming the cell and the span."""
    suite = small_suite(references={"random": (0.25, 0.25), "search": (0.9, search)})
    with pytest.raises(ValueError, match=r"references lie .* apart .* less than 0.05"):
        runner.prepare("random", suite, workers=1)


def test_references_just_far_enough_apart_are_taken() -> None:
    """A span of 0.05 or more (the shipped suites' smallest is 0.13) is a suite that can be scored."""
    suite = small_suite(references={"random": (0.25, 0.25), "search": (0.9, 0.30)})
    assert "references lie" not in " ".join(definition_problems(suite))
