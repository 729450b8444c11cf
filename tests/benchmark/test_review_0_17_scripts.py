"""The review of 0.17 of the measurement scripts in ``benchmarks/``.

Each script refuses a bad setting (a zero, negative or non-finite time or count, a list naming one thing twice, an
unknown agent, table size or deck, an output it could not write) before it measures, starts or writes anything, as
argparse's error (exit 2) naming the flag and what it takes; the measuring functions are replaced here by ones that
fail the test if they are reached. ``freeze_suites`` freezes a suite only from its own anchors' complete test-split
runs, into a suite file that loads, and otherwise writes nothing; it runs here on copies of the shipped suite and
results, never on the shipped files.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks import (
    bench_agents,
    bench_batched,
    bench_env,
    bench_rollouts,
    freeze_suites,
    policy_confidence,
    web_load,
)
from friday13_env.benchmark import leaderboard
from friday13_env.benchmark.suite import get_suite

REPOSITORY = Path(__file__).resolve().parents[2]
SHIPPED_SUITES = REPOSITORY / "friday13_env" / "benchmark" / "suites"
SHIPPED_RESULTS = REPOSITORY / "results" / "benchmark"
SUITE = "card-4p-quick"
SUITE_ID = f"{SUITE}-v1"


def run_main(module: ModuleType, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``module.main()`` as ``python -m benchmarks.MODULE ARGV`` runs it."""
    monkeypatch.setattr(sys, "argv", [f"{module.__name__}.py", *argv])
    return module.main()


def refused(
    module: ModuleType, argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    """argparse's error (exit 2) of ``module`` for ``argv``, as its stderr."""
    with pytest.raises(SystemExit) as stopped:
        run_main(module, argv, monkeypatch)
    assert stopped.value.code == 2
    return capsys.readouterr().err


def never(*args: object, **kwargs: object) -> Any:
    raise AssertionError("measured, started or wrote before the settings were checked")


# -- freeze_suites ----------------------------------------------------------------------------------------------


@pytest.fixture
def copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Copies of the shipped ``card-4p-quick`` suite file and its result folder, which ``freeze_suites`` reads and
    writes instead of the shipped ones: (the suite file, the result folder)."""
    suites = tmp_path / "suites"
    suites.mkdir()
    shutil.copy(SHIPPED_SUITES / f"{SUITE}.json", suites)
    results = tmp_path / "results"
    shutil.copytree(SHIPPED_RESULTS / SUITE_ID, results / SUITE_ID)
    monkeypatch.setattr(freeze_suites, "SUITES", suites)
    monkeypatch.setattr(freeze_suites, "RESULTS", results)
    return suites / f"{SUITE}.json", results / SUITE_ID


@pytest.fixture
def frozen(copies: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """``copies``, with the anchors' fingerprints taken as pinned (computing them takes seconds; one test does)."""
    pinned = get_suite(SUITE).anchors
    monkeypatch.setattr(freeze_suites, "behaviour_fingerprint", lambda agent, game, deck="standard": pinned[agent.name])
    return copies


def snapshot(*folders: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for folder in folders for path in sorted(folder.rglob("*")) if path.is_file()}


def edit(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=1) + "\n")


def test_freezing_from_the_suites_own_results_rewrites_it_as_it_is(
    copies: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped suite is frozen: freezing it again from its own files (fingerprints computed) changes nothing."""
    pytest.importorskip("scipy")  # the rescored results' aggregates (the benchmark extra)
    suite_file, results = copies
    before = snapshot(suite_file.parent, results)
    run_main(freeze_suites, [SUITE], monkeypatch)
    assert snapshot(suite_file.parent, results) == before


def foreign(results: Path) -> None:
    """search.json replaced by card-4p-v1's (same cells, another suite)."""
    shutil.copy(SHIPPED_RESULTS / "card-4p-v1" / "search.json", results / "search.json")


def swapped(results: Path) -> None:
    random, search = (results / "random.json").read_bytes(), (results / "search.json").read_bytes()
    (results / "random.json").write_bytes(search)
    (results / "search.json").write_bytes(random)


def other_deals(results: Path) -> None:
    edit(results / "search.json", lambda data: data["suite"].update(deals_sha256="0" * 64))


def dev_split(results: Path) -> None:
    edit(results / "search.json", lambda data: data["suite"].update(split="dev"))


def unfinished(results: Path) -> None:
    edit(results / "search.json", lambda data: data.update(complete=False))


def other_fingerprint(results: Path) -> None:
    edit(results / "search.json", lambda data: data["agent"].update(fingerprint="0" * 16))


def three_cells(results: Path) -> None:
    edit(results / "search.json", lambda data: data.update(cells=data["cells"][:3]))


def missing(results: Path) -> None:
    (results / "search.json").unlink()


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (foreign, "search.json: a run of suite 'card-4p-v1', not card-4p-quick-v1"),
        (swapped, "random.json: the run of agent 'search', not random"),
        (other_deals, "search.json: its deals are not suite card-4p-quick-v1's test deals"),
        (dev_split, "search.json: a run of the 'dev' split, not the test split"),
        (unfinished, "search.json: not a complete run"),
        (other_fingerprint, "search.json: anchor search played with fingerprint '0000000000000000'"),
        (three_cells, "search.json: its cells are not the suite's"),
        (missing, "search.json: no result file of reference agent search"),
    ],
)
def test_freezing_from_wrong_or_missing_reference_files_writes_nothing(
    frozen: tuple[Path, Path],
    damage: Callable[[Path], None],
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suite_file, results = frozen
    damage(results)
    before = snapshot(suite_file.parent, results)
    assert said in refused(freeze_suites, [SUITE], monkeypatch, capsys)
    assert snapshot(suite_file.parent, results) == before


def test_freezing_into_a_suite_that_does_not_load_writes_nothing(
    frozen: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reference file whose header is right but whose search wins less than random: the suite it would make is
    refused by ``suite_from_dict``, so no suite file is written that would break ``get_suite`` for every suite."""
    suite_file, results = frozen

    def lose(data: dict[str, Any]) -> None:
        for cell in data["cells"]:
            cell["win_share"]["value"] = 0.0

    edit(results / "search.json", lose)
    before = snapshot(suite_file.parent, results)
    error = refused(freeze_suites, [SUITE], monkeypatch, capsys)
    assert "lower win share than random" in error
    assert snapshot(suite_file.parent, results) == before


def test_freezing_an_unknown_or_repeated_suite_is_refused(
    frozen: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert f"unknown suite 'nope'; suites: ['{SUITE}']" in refused(freeze_suites, ["nope"], monkeypatch, capsys)
    assert f"{SUITE} is listed twice" in refused(freeze_suites, [SUITE, SUITE], monkeypatch, capsys)


def test_a_new_suite_version_is_pinned_without_references_only_on_request(
    frozen: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--no-references`` (the first freeze of a new version, before its anchors ran) writes no references, and is
    refused while a reference file exists, so that it cannot drop a suite's measured references."""
    suite_file, results = frozen
    before = snapshot(suite_file.parent, results)
    error = refused(freeze_suites, ["--no-references", SUITE], monkeypatch, capsys)
    assert f"--no-references, but {results / 'random.json'}, {results / 'search.json'} exist" in error
    assert snapshot(suite_file.parent, results) == before
    (results / "random.json").unlink()
    (results / "search.json").unlink()
    run_main(freeze_suites, ["--no-references", SUITE], monkeypatch)
    written = json.loads(suite_file.read_text())
    assert written["references"] == {}
    assert written["deals_sha256"] == dict(get_suite(SUITE).deals_sha256)
    assert json.loads((results / "ppo-v4.json").read_text())["normalised"] is None


def test_the_leaderboards_references_stay_empty_without_files_but_the_freeze_requires_them(tmp_path: Path) -> None:
    suite = get_suite(SUITE)
    shutil.copytree(SHIPPED_RESULTS / SUITE_ID, tmp_path / SUITE_ID)
    (tmp_path / SUITE_ID / "search.json").unlink()
    assert leaderboard.reference_scores(suite, tmp_path) == {}
    with pytest.raises(ValueError, match="no result file of reference agent search"):
        leaderboard.reference_scores(suite, tmp_path, required=True)


# -- the timing scripts -----------------------------------------------------------------------------------------

NOT_FINITE = "must be a finite number, got nan"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--seconds", "0"], "argument --seconds: must be above 0, got 0"),
        (["--seconds", "-1"], "argument --seconds: must be above 0, got -1"),
        (["--seconds", "nan"], f"argument --seconds: {NOT_FINITE}"),
        (["--repeats", "0"], "argument --repeats: must be at least 1, got 0"),
        (["--repeats", "-3"], "argument --repeats: must be at least 1, got -3"),
        (["--players", "0"], "argument --players: invalid choice: 0 (choose from 3, 4, 5, 6)"),
        (["--deck", "bogus"], "argument --deck: invalid choice: 'bogus' (choose from 'german', 'standard')"),
    ],
)
def test_bench_env_refuses_bad_settings_before_measuring(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_env, "engine_steps", never)
    monkeypatch.setattr(bench_env, "aec_steps", never)
    assert said in refused(bench_env, argv, monkeypatch, capsys)


SMALL_BATCHED = ["--batch-sizes", "1", "--num-envs", "1"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--batch-sizes", "2", "2"], "argument --batch-sizes: 2 is listed twice; list each value once"),
        (["--num-envs", "1", "2", "1"], "argument --num-envs: 1 is listed twice; list each value once"),
        (["--batch-sizes", "0"], "argument --batch-sizes: must be at least 1 and at most 1,048,576, got 0"),
        (["--num-envs", "-1"], "argument --num-envs: must be at least 1 and at most 1,048,576, got -1"),
        (["--repeats", "0"], "argument --repeats: must be at least 1, got 0"),
        (["--seconds", "0"], "argument --seconds: must be above 0, got 0"),
        (["--seconds", "nan"], f"argument --seconds: {NOT_FINITE}"),
        (["--players", "0"], "argument --players: invalid choice: 0 (choose from 3, 4, 5, 6)"),
        (["--deck", "bogus"], "argument --deck: invalid choice: 'bogus'"),
        (["--opponents", "cautious", "bogus"], "argument --opponents: unknown Friday the 13th agent 'bogus'"),
        (["--opponents", "search"], "argument --opponents: agent 'search' has no batched version"),
    ],
)
def test_bench_batched_refuses_bad_settings_before_measuring(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_batched, "interleaved", never)
    monkeypatch.setattr(bench_batched, "engine_steps", never)
    assert said in refused(bench_batched, [*SMALL_BATCHED, *argv], monkeypatch, capsys)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--agents", "random", "random", "cautious"], "argument --agents: 'random' and 'random' are one agent"),
        (["--agents", "search:budget=16", "search:budget=016"], "are one agent (search:budget=16)"),
        (["--agents", "search", "bogus"], "argument --agents: bogus: unknown Friday the 13th agent 'bogus'"),
        (["--game", "friday", "--agents", "heuristic", "heuristic"], "'heuristic' and 'heuristic' are one agent"),
        (["--game", "friday", "--agents", "search", "bogus"], "argument --agents: bogus: unknown Friday agent"),
        (["--positions", "0"], "argument --positions: must be at least 1, got 0"),
        (["--positions", "-5"], "argument --positions: must be at least 1, got -5"),
    ],
)
def test_bench_agents_refuses_bad_settings_before_collecting_positions(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for game, (_, *rest) in list(bench_agents.GAMES.items()):
        monkeypatch.setitem(bench_agents.GAMES, game, (never, *rest))
    assert said in refused(bench_agents, argv, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--positions", "0"], "argument --positions: must be at least 1, got 0"),
        (["--slices", "0"], "argument --slices: must be at least 1, got 0"),
        (["--budget", "-5"], "argument --budget: must be at least 1, got -5"),
        (["--budget", "0"], "argument --budget: must be at least 1, got 0"),
    ],
)
def test_bench_rollouts_refuses_bad_settings_before_measuring(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(bench_rollouts, "positions", never)
    assert said in refused(bench_rollouts, argv, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--temperatures", "nan"], f"argument --temperatures: {NOT_FINITE}"),
        (["--temperatures", "1", "inf"], "argument --temperatures: must be a finite number, got inf"),
        (["--temperatures", "0"], "argument --temperatures: must be above 0, got 0"),
        (["--positions", "0"], "argument --positions: must be at least 1, got 0"),
    ],
)
def test_policy_confidence_refuses_bad_settings_before_measuring(
    argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(policy_confidence, "read_friday13_policy", never)
    monkeypatch.setattr(policy_confidence, "positions", never)
    assert said in refused(policy_confidence, ["checkpoints/search_distilled.npz", *argv], monkeypatch, capsys)


def test_the_timing_scripts_still_measure_with_the_smallest_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_main(bench_env, ["--seconds", "0.02", "--repeats", "1"], monkeypatch)
    assert "engine (friday13)" in capsys.readouterr().out
    small = ["--seconds", "0.02", "--repeats", "1", "--batch-sizes", "1", "2", "--num-envs", "1", "2"]
    run_main(bench_batched, small, monkeypatch)
    out = capsys.readouterr().out
    assert "GameBatch B=2" in out and "make_vec num_envs=2" in out
    run_main(bench_agents, ["--positions", "2", "--agents", "random", "cautious"], monkeypatch)
    out = capsys.readouterr().out
    assert "| random" in out and "| cautious" in out


# -- web_load -----------------------------------------------------------------------------------------------------


@pytest.fixture
def no_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``web_load`` with a server start that fails the test; SIGTERM's handler (which the script sets) restored."""
    monkeypatch.setattr(web_load, "running", never)
    handler = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, handler)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--seconds", "nan"], f"argument --seconds: {NOT_FINITE}"),
        (["--seconds", "inf"], "argument --seconds: must be a finite number, got inf"),
        (["--seconds", "0"], "argument --seconds: must be above 0, got 0"),
        (["--think", "nan"], f"argument --think: {NOT_FINITE}"),
        (["--think", "-1"], "argument --think: must be at least 0, got -1"),
        (["--timeout", "inf"], "argument --timeout: must be a finite number, got inf"),
        (["--timeout", "0"], "argument --timeout: must be above 0, got 0"),
        (["--startup-timeout", "-1"], "argument --startup-timeout: must be above 0, got -1"),
    ],
)
def test_web_load_refuses_bad_times_before_starting_the_server(
    no_server: None, argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert said in refused(web_load, argv, monkeypatch, capsys)


def test_web_load_refuses_a_json_it_cannot_write_before_starting_the_server(
    no_server: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    error = refused(web_load, ["--json", str(blocker / "out.json")], monkeypatch, capsys)
    assert f"argument --json: cannot create the folder {blocker}: {blocker} is a file" in error
    error = refused(web_load, ["--json", str(tmp_path)], monkeypatch, capsys)
    assert f"argument --json: {tmp_path} is a folder; give a file name" in error


def test_web_load_writes_its_json_into_a_new_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The figures of a run (here a run that played nothing, the server and the players replaced) are written to
    a ``--json`` in a folder that does not exist yet, as every other output of the package is."""

    @contextmanager
    def no_process(command: list[str], log: object) -> Iterator[None]:
        yield None

    async def nothing_played(settings: Any, server: object, port: int) -> dict[str, Any]:
        return {**web_load.report(settings, web_load.Tally(), 1.0, None, 0.0), "interrupted": None}

    monkeypatch.setattr(web_load, "running", no_process)
    monkeypatch.setattr(web_load, "load", nothing_played)
    handler = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "new" / "folder" / "load.json"
    try:
        assert run_main(web_load, ["--seconds", "1", "--json", str(out)], monkeypatch) == 0
    finally:
        signal.signal(signal.SIGTERM, handler)
    assert json.loads(out.read_text())["settings"]["seconds"] == 1.0


@pytest.mark.parametrize("seed", ["-1", "4294967296", "1.5"])
@pytest.mark.parametrize(
    "module", [bench_env, bench_batched, bench_agents, bench_rollouts, policy_confidence, web_load]
)
def test_every_script_refuses_a_seed_numpy_would_refuse_before_measuring(
    module: ModuleType, seed: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A negative seed passed the checks and crashed inside numpy once the measuring had started."""
    argv = ["ppo-v4"] if module is policy_confidence else []
    assert "error: argument --seed: " in refused(module, [*argv, "--seed", seed], monkeypatch, capsys)


def test_web_load_refuses_an_opponent_the_page_cannot_seat_before_starting_the_server(
    no_server: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    error = refused(web_load, ["--opponents", "nope"], monkeypatch, capsys)
    assert "argument --opponents: 'nope' cannot sit at a standard table; choose from [" in error
